//! render (filled in by its issue).
