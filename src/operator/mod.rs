//! operator (filled in by its issue).
