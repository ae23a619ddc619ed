//! `kubectl fleet`: the kubectl plugin binary.
fn main() {}
