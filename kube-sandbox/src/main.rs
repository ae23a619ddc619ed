//! `kube-sandbox serve --kubeconfig PATH`: the sandbox as a process.
fn main() {}
