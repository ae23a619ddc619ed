//! Kubeconfigs this tool hands out: a single cluster, user and context
//! authenticating with a bearer token, the CA embedded so the file works on
//! another machine.

use base64::Engine as _;
use serde_json::json;

/// What goes into a token kubeconfig.
#[derive(Debug, Clone)]
pub struct TokenKubeconfig<'a> {
    /// Name used for the cluster and the context.
    pub cluster_name: &'a str,
    /// Name used for the user entry.
    pub user_name: &'a str,
    /// API server URL the holder will dial.
    pub server: &'a str,
    /// PEM CA bundle to embed; None leaves verification to system roots.
    pub ca_pem: Option<&'a [u8]>,
    /// Skip TLS verification (only when the user asked for it).
    pub insecure_skip_tls_verify: bool,
    /// The bearer token.
    pub token: &'a str,
}

impl TokenKubeconfig<'_> {
    /// Renders the kubeconfig as YAML.
    pub fn to_yaml(&self) -> String {
        let mut cluster = json!({ "server": self.server });
        if self.insecure_skip_tls_verify {
            cluster["insecure-skip-tls-verify"] = json!(true);
        } else if let Some(ca) = self.ca_pem {
            cluster["certificate-authority-data"] =
                json!(base64::engine::general_purpose::STANDARD.encode(ca));
        }
        let doc = json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{ "name": self.cluster_name, "cluster": cluster }],
            "users": [{ "name": self.user_name, "user": { "token": self.token } }],
            "contexts": [{
                "name": self.cluster_name,
                "context": { "cluster": self.cluster_name, "user": self.user_name },
            }],
            "current-context": self.cluster_name,
        });
        plain_yaml_stream(std::slice::from_ref(&doc))
    }
}

/// YAML documents with plain (unfolded) scalars, as kubectl writes them:
/// long base64 values stay on one line so they can be copied and grepped.
pub fn plain_yaml_stream<T: serde::Serialize>(docs: &[T]) -> String {
    let mut options = serde_saphyr::SerializerOptions::default();
    options.prefer_block_scalars = false;
    let result = if let [doc] = docs {
        serde_saphyr::to_string_with_options(doc, options)
    } else {
        serde_saphyr::to_string_multiple_with_options(docs, options)
    };
    result.expect("JSON-shaped values always serialise to YAML")
}

/// Writes a file that holds a secret (a kubeconfig, a token) atomically:
/// a temporary file in the same folder, created with mode 0600 from the
/// start (never widened afterwards), synced, then renamed into place. On
/// failure the temporary file is removed and `path` is left as it was.
/// On Windows, which has no mode bits, the file takes the ACL of its
/// folder (a user's profile folder is readable by that user and
/// administrators only; docs/platforms.md).
pub fn write_private_file(path: &std::path::Path, contents: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let file_name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path"))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        file_name.to_string_lossy(),
        std::process::id()
    ));
    // A leftover from a crashed run with the same pid; `create_new` below
    // then refuses to follow anything planted at the temporary path.
    let _ = std::fs::remove_file(&tmp);
    let result = (|| {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&tmp)?;
        file.write_all(contents)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(insecure: bool) -> TokenKubeconfig<'static> {
        TokenKubeconfig {
            cluster_name: "fleet-hub",
            user_name: "fleet-edge-site-a",
            server: "https://hub.example:6443",
            ca_pem: Some(b"PEM"),
            insecure_skip_tls_verify: insecure,
            token: "tok",
        }
    }

    #[test]
    fn embeds_ca_and_token_and_parses_back() {
        let yaml = sample(false).to_yaml();
        let kc = kube::config::Kubeconfig::from_yaml(&yaml).unwrap();
        let cluster = kc.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.server.as_deref(), Some("https://hub.example:6443"));
        assert_eq!(cluster.certificate_authority_data.as_deref(), Some("UEVN"));
        assert_eq!(cluster.insecure_skip_tls_verify, None);
        assert_eq!(kc.current_context.as_deref(), Some("fleet-hub"));
        let user = kc.auth_infos[0].auth_info.as_ref().unwrap();
        assert!(user.token.is_some());
    }

    #[test]
    fn long_values_stay_on_one_line() {
        let long = "x".repeat(300);
        let yaml = TokenKubeconfig {
            token: &long,
            ..sample(false)
        }
        .to_yaml();
        assert!(yaml.contains(&format!("token: {long}")), "{yaml}");
    }

    #[test]
    fn insecure_only_when_asked_and_then_without_ca() {
        let kc = kube::config::Kubeconfig::from_yaml(&sample(true).to_yaml()).unwrap();
        let cluster = kc.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.insecure_skip_tls_verify, Some(true));
        assert_eq!(cluster.certificate_authority_data, None);
    }
}
