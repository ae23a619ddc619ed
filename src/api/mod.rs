//! api (filled in by its issue).
