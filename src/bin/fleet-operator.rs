//! `fleet-operator`: the hub / edge companion operator binary.
fn main() {}
