//! k8s (filled in by its issue).
