//! fleet (filled in by its issue).
