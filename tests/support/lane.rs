//! The lane a test's hub API server runs on, a parameter of the support
//! rather than a copy of the tests (docs/realapi.md, "The lanes"):
//!
//! - [`Lane::Sandbox`]: kube-sandbox alone, our own API server for
//!   everything;
//! - [`Lane::RealApi`]: kube-sandbox in front of the real Kubernetes API
//!   server of `tools/realapi/` (CRD delegate mode): every CRD and custom
//!   resource (FederatedCluster, FederationStatus) is stored, validated and
//!   admitted by Kubernetes' own code — its ValidatingAdmissionPolicy plugin
//!   judges every write with the policy `kubectl fleet install` applied —
//!   while kube-sandbox serves the core, RBAC and auth APIs in front, as
//!   kube-apiserver does with the apiextensions-apiserver inside it.
//!
//! Both give a [`Sandbox`] (its controls, tokens and kubeconfigs work the
//! same); [`on_both_lanes!`] turns one test body into a test per lane,
//! named `TEST::sandbox` and `TEST::realapi`.

use kube_sandbox::{Sandbox, SandboxOptions};

/// Where a test's hub API server runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// kube-sandbox alone.
    Sandbox,
    /// kube-sandbox in front of the real API server, which serves every
    /// custom resource.
    RealApi,
}

impl Lane {
    /// A hub API server on this lane; panics when it cannot start.
    pub fn sandbox(self) -> Sandbox {
        self.sandbox_with(SandboxOptions::default())
    }

    /// [`Lane::sandbox`] with options.
    pub fn sandbox_with(self, options: SandboxOptions) -> Sandbox {
        match self {
            Lane::Sandbox => Sandbox::start_with(options).expect("start kube-sandbox"),
            Lane::RealApi => Sandbox::start_in_front_of_realapi(options)
                .unwrap_or_else(|e| panic!("kube-sandbox in front of the real API server: {e}")),
        }
    }

    /// Whether a test runs on this lane here: always on the sandbox's; on
    /// the real API server's when it is built (else it fails saying what to
    /// run, or prints `skipped` under `FLEET_SKIP_REALAPI=1`).
    pub fn runs(self) -> bool {
        match self {
            Lane::Sandbox => true,
            Lane::RealApi => kube_sandbox::realapi::runs_or_skips(),
        }
    }
}

/// One test body, run on each [`Lane`]:
///
/// ```ignore
/// on_both_lanes! {
///     /// What it shows.
///     async fn a_site_cannot_forge_its_phase(lane) {
///         let hub = Hub::on(lane);
///         ...
///     }
/// }
/// ```
///
/// makes module `a_site_cannot_forge_its_phase` (seeing the file's items)
/// with the tests `sandbox` and `realapi`. `fn` makes `#[test]`s, `async
/// fn` `#[tokio::test]`s, `multi_thread async fn` two-worker ones.
macro_rules! on_both_lanes {
    () => {};
    ($(#[$meta:meta])* fn $name:ident($lane:ident) $body:block $($rest:tt)*) => {
        $(#[$meta])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            fn run($lane: $crate::support::Lane) $body
            #[test]
            fn sandbox() {
                run($crate::support::Lane::Sandbox)
            }
            #[test]
            fn realapi() {
                if $crate::support::Lane::RealApi.runs() {
                    run($crate::support::Lane::RealApi)
                }
            }
        }
        on_both_lanes!($($rest)*);
    };
    ($(#[$meta:meta])* async fn $name:ident($lane:ident) $body:block $($rest:tt)*) => {
        $(#[$meta])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            async fn run($lane: $crate::support::Lane) $body
            #[tokio::test]
            async fn sandbox() {
                run($crate::support::Lane::Sandbox).await
            }
            #[tokio::test]
            async fn realapi() {
                if $crate::support::Lane::RealApi.runs() {
                    run($crate::support::Lane::RealApi).await
                }
            }
        }
        on_both_lanes!($($rest)*);
    };
    ($(#[$meta:meta])* multi_thread async fn $name:ident($lane:ident) $body:block $($rest:tt)*) => {
        $(#[$meta])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            async fn run($lane: $crate::support::Lane) $body
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sandbox() {
                run($crate::support::Lane::Sandbox).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn realapi() {
                if $crate::support::Lane::RealApi.runs() {
                    run($crate::support::Lane::RealApi).await
                }
            }
        }
        on_both_lanes!($($rest)*);
    };
}
