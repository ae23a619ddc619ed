//! Every integration test of kubectl-fleet, in one test binary (one link of
//! kube, the sandbox and the library instead of one per file): a module
//! per file beside this one, and the support module they share. Run
//! one file's tests with `bash tools/test.sh -E 'test(/^cli_status::/)'`
//! or `cargo test --test integration cli_status::`.

#[macro_use]
mod support;

mod admission_ownership;
mod alerts_live;
mod bench_smoke;
mod bucket_admission;
mod cli_bad_input;
mod cli_careless;
mod cli_connection;
mod cli_convergence;
mod cli_enrol;
mod cli_habits;
mod cli_install;
mod cli_kubectl;
mod cli_least_privilege;
mod cli_output;
mod cli_pull;
mod cli_register;
mod cli_status;
mod cli_token_cap;
mod cli_usage;
mod cli_views;
mod crd_schema;
mod decode_admitted;
mod edge_lease;
mod faults_api;
mod faults_e2e;
mod faults_hostile_site;
mod faults_poisoned_site;
mod fuzz_untrusted_input;
mod generated_drift;
mod hub_leases;
mod hub_ops;
mod hub_streaming_list;
mod hub_truth;
mod hub_write_rate;
mod incident_factors;
mod incident_trust;
mod kustomize_bases;
mod layers;
mod leader_election;
mod lease_admission;
mod migrating_alerts;
mod monitoring_rules;
mod observability_bench;
mod operator_bench;
mod operator_credentials;
mod operator_dark_period;
mod operator_e2e;
mod operator_errors;
mod operator_gitops_pull;
mod operator_hostile_clients;
mod operator_hub;
mod operator_image;
mod operator_member;
mod operator_observability;
mod operator_pull;
mod operator_pull_trust;
mod operator_signal_onset;
mod operator_two_writer;
mod platform_arm64;
mod realapi_summary;
mod release;
mod sleeping_sites;
mod soak;
mod workflows;
