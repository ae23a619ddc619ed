//! The fleet CRDs as a hub installed before this release still holds them,
//! installing CRDs on any API server, and a real Kubernetes API server of
//! a test's own (`tools/realapi/`, docs/realapi.md).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kubectl_fleet::api::{DATE_TIME_PATTERN, PRINTABLE_TEXT_PATTERN};
use serde_json::Value;

use super::{TempDir, wait_until};

/// The fleet CRDs as shipped before every date-time, count and string a
/// site writes had an exact `pattern` or a `maximum`: date-times with
/// `format: date-time` (which the real API server checks loosely), no
/// maximum on counts and durations, no printable-text pattern on a site's
/// strings, the GPU-name rule without it. What a hub installed then holds
/// until `kubectl fleet install` runs again — and what let one site store
/// a status no reader could decode.
pub fn crds_before_the_door_closed() -> Vec<Value> {
    fn loosen(v: &mut Value, in_status: bool) {
        let Value::Object(m) = v else {
            if let Value::Array(a) = v {
                a.iter_mut().for_each(|x| loosen(x, in_status));
            }
            return;
        };
        if m.get("pattern").and_then(Value::as_str) == Some(DATE_TIME_PATTERN) {
            m.remove("pattern");
            m.insert("format".into(), "date-time".into());
        }
        if in_status {
            if m.get("pattern").and_then(Value::as_str) == Some(PRINTABLE_TEXT_PATTERN) {
                m.remove("pattern");
            }
            if m.get("type").and_then(Value::as_str) == Some("integer") {
                m.remove("maximum");
                if m.get("minimum")
                    .and_then(Value::as_f64)
                    .is_some_and(|x| x < 0.0)
                {
                    m.remove("minimum");
                }
            }
            if let Some(rules) = m.get_mut("x-kubernetes-validations")
                && rules.to_string().contains("matches")
            {
                *rules = serde_json::json!([{
                    "rule": "self.all(k, k.size() <= 253)",
                    "message": "GPU resource names are at most 253 characters",
                }]);
            }
        }
        for (k, child) in m.iter_mut() {
            loosen(child, in_status || k == "status");
        }
    }
    kubectl_fleet::api::crds()
        .into_iter()
        .map(|crd| {
            let mut v = serde_json::to_value(crd).unwrap();
            loosen(&mut v, false);
            if let Some(m) = v
                .pointer_mut("/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/maxConcurrentRemediations")
                .and_then(Value::as_object_mut)
            {
                m.remove("maximum");
            }
            v
        })
        .collect()
}

/// Creates or replaces the CRDs `crds` on the cluster of `client` and
/// waits until the fleet's are served.
pub async fn put_crds(client: &kube::Client, crds: &[Value]) {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in crds {
        let mut crd: CustomResourceDefinition = serde_json::from_value(crd.clone()).unwrap();
        let name = crd.metadata.name.clone().unwrap();
        match api.get_opt(&name).await.unwrap() {
            None => {
                api.create(&PostParams::default(), &crd).await.unwrap();
            }
            Some(stored) => {
                crd.metadata.resource_version = stored.metadata.resource_version;
                api.replace(&name, &PostParams::default(), &crd)
                    .await
                    .unwrap();
            }
        }
    }
    wait_until(Duration::from_secs(30), "fleet CRDs served", || async {
        kubectl_fleet::k8s::site_status::crds_installed(client)
            .await
            .unwrap_or(false)
    })
    .await;
}

/// A real Kubernetes API server (apiextensions-apiserver and etcd,
/// CRDs only, no RBAC) of this test alone, started by
/// `tools/realapi/start.sh` and stopped on drop (and by its watcher when
/// the test process dies). None, with a `skipped` line, when it is not
/// built and `FLEET_SKIP_REALAPI=1`; a panic with the hint otherwise.
pub struct RealApi {
    dir: TempDir,
}

impl RealApi {
    pub fn start() -> Option<RealApi> {
        // Built for this work tree (tools/realapi keys each build; a
        // `REALAPI_BIN_DIR` given is used as it is), or skipped or a panic
        // with the hint, as every real-API test does.
        if !kube_sandbox::realapi::runs_or_skips() {
            return None;
        }
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let dir = TempDir::new("realapi");
        let out = Command::new("bash")
            .arg(root.join("tools/realapi/start.sh"))
            .arg(dir.join("server"))
            .env("REALAPI_WATCH_PID", std::process::id().to_string())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "tools/realapi/start.sh failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(RealApi { dir })
    }

    /// Its admin kubeconfig (a client certificate in `system:masters`).
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.join("server/kubeconfig")
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for RealApi {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tools/realapi/stop.sh"))
            .arg(self.root().join("server"))
            .output();
    }
}
