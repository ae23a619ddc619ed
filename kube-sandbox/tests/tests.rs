//! Every integration test of kube-sandbox, in one test binary: a module per
//! file beside this one, and the support module they share. Run one file's
//! tests with `cargo test -p kube-sandbox --test integration differential::`.

mod support;

mod differential;
mod fuzz_request_parsing;
mod kube_rs;
mod kubectl_conformance;
mod rbac_decision_table;
mod realapi_crds;
mod realapi_examples;
mod realapi_front;
mod serve_binary;
mod server_semantics;
