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
    let tmp = private_temp_path(path)?;
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

/// The temporary file [`write_private_file`] writes before renaming it to
/// `path`: in the same folder, named after it and this process.
fn private_temp_path(path: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let file_name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path"))?;
    Ok(dir.join(format!(
        ".{}.tmp-{}",
        file_name.to_string_lossy(),
        std::process::id()
    )))
}

/// Checks that [`write_private_file`] could write `path` now, without
/// touching it: `path` is not a directory, and its temporary file can be
/// created (the folder exists and is writable) — it is removed again.
pub fn check_private_file(path: &std::path::Path) -> std::io::Result<()> {
    if path.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "it is a directory",
        ));
    }
    let tmp = private_temp_path(path)?;
    let _ = std::fs::remove_file(&tmp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(&tmp)?;
    std::fs::remove_file(&tmp)
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
    fn a_private_file_is_checked_without_being_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hub.kubeconfig");
        check_private_file(&path).unwrap();
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "nothing left"
        );
        let missing = dir.path().join("no-such-dir").join("hub.kubeconfig");
        let err = check_private_file(&missing).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
        assert!(check_private_file(dir.path()).is_err(), "a directory");
        std::fs::write(&path, "kept").unwrap();
        check_private_file(&path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "kept");
    }

    #[test]
    fn insecure_only_when_asked_and_then_without_ca() {
        let kc = kube::config::Kubeconfig::from_yaml(&sample(true).to_yaml()).unwrap();
        let cluster = kc.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.insecure_skip_tls_verify, Some(true));
        assert_eq!(cluster.certificate_authority_data, None);
    }
}
