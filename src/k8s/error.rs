//! Errors of the Kubernetes layer, classified so the user sees what failed
//! and what to do next.
//!
//! Every API call goes through [`Error::api`], which turns a raw
//! `kube::Error` into the cause a user can act on (bad credentials, missing
//! rights, missing CRD, unreachable server) while keeping the original error
//! as the `#[source]` for `-v`.

use std::path::PathBuf;

/// An error from Kubernetes I/O; `Display` says what failed, [`Error::hint`]
/// what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The kubeconfig could not be read, parsed or resolved.
    #[error("failed to load kubeconfig{}: {reason}", path_suffix(.path))]
    Kubeconfig {
        /// The file given with `--kubeconfig` (None: `KUBECONFIG` or the default).
        path: Option<PathBuf>,
        /// The innermost cause, in one line.
        reason: String,
        /// The loader error (None: the reason is this tool's own, such as
        /// every file of `KUBECONFIG` missing).
        #[source]
        source: Option<kube::config::KubeconfigError>,
    },
    /// The context asked for is not in the kubeconfig.
    #[error(
        "{} has no context {context:?} (its contexts: {})",
        kubeconfig_name(.flags, .path),
        context_list(.available)
    )]
    ContextNotFound {
        /// The context asked for.
        context: String,
        /// The kubeconfig file (None: `KUBECONFIG` or the default).
        path: Option<PathBuf>,
        /// The contexts the kubeconfig has, sorted.
        available: Vec<String>,
        /// The flags that chose the kubeconfig and the context.
        flags: ContextFlags,
    },
    /// The API server rejected the credentials (HTTP 401).
    #[error("{what}: the API server at {server} rejected the credentials (401 Unauthorized)")]
    Unauthorized {
        /// The operation that failed.
        what: String,
        /// The API server URL.
        server: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The caller lacks the permission for the operation (HTTP 403).
    #[error("{what}: forbidden: {message}")]
    Forbidden {
        /// The operation that failed.
        what: String,
        /// The server's message (names user, verb and resource).
        message: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The fleet API types are not served (the CRDs are not installed).
    #[error("{what}: the federation.kubectl-fleet.dev CRDs are not installed on {server}")]
    CrdMissing {
        /// The operation that failed.
        what: String,
        /// The API server URL.
        server: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The named object does not exist.
    #[error("{what}: not found")]
    NotFound {
        /// The operation that failed.
        what: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The API server returned another error status.
    #[error("{what}: {message} ({code})")]
    Status {
        /// The operation that failed.
        what: String,
        /// HTTP status code.
        code: u16,
        /// The server's message.
        message: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The API server could not be reached (connection, TLS or timeout).
    #[error("{what}: cannot reach the API server at {server}: {reason}")]
    Unreachable {
        /// The operation that failed.
        what: String,
        /// The API server URL.
        server: String,
        /// The innermost cause, in one line.
        reason: String,
        /// The transport error.
        #[source]
        source: kube::Error,
    },
    /// An apply would replace values another manager set on the cluster.
    #[error("{what}: the cluster holds values set by another manager: {fields}")]
    Conflict {
        /// The operation that failed.
        what: String,
        /// The fields, their live values and managers, in one line.
        fields: String,
    },
    /// The server answered something this client could not use.
    #[error("{what}: {reason}")]
    Unexpected {
        /// The operation that failed.
        what: String,
        /// Why the answer was unusable.
        reason: String,
    },
}

/// The command-line flags that name a kubeconfig and a context, so an error
/// about a context names the flags the user actually typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextFlags {
    /// e.g. `--kubeconfig`.
    pub kubeconfig: &'static str,
    /// e.g. `--context`.
    pub context: &'static str,
}

impl ContextFlags {
    /// kubectl's own: `--kubeconfig` and `--context` (the hub of the plugin,
    /// the cluster of the operator).
    pub const KUBECTL: ContextFlags = ContextFlags {
        kubeconfig: "--kubeconfig",
        context: "--context",
    };
    /// `register --pull`'s member cluster.
    pub const MEMBER: ContextFlags = ContextFlags {
        kubeconfig: "--member-kubeconfig",
        context: "--member-context",
    };
}

/// Context names listed in an error, at most this many (a kubeconfig may
/// hold hundreds).
const MAX_LISTED_CONTEXTS: usize = 10;

fn context_list(available: &[String]) -> String {
    if available.is_empty() {
        return "none".to_owned();
    }
    let mut names: Vec<String> = available
        .iter()
        .take(MAX_LISTED_CONTEXTS)
        .map(|c| crate::fleet::bounds::cut_to(c, crate::api::MAX_LABEL_CHARS).into_owned())
        .collect();
    if available.len() > MAX_LISTED_CONTEXTS {
        names.push(format!(
            "and {} more",
            available.len() - MAX_LISTED_CONTEXTS
        ));
    }
    names.join(", ")
}

fn kubeconfig_name(flags: &ContextFlags, path: &Option<PathBuf>) -> String {
    match path {
        Some(p) => format!("{} {}", flags.kubeconfig, p.display()),
        None => "the kubeconfig (KUBECONFIG or ~/.kube/config)".to_owned(),
    }
}

fn path_suffix(path: &Option<PathBuf>) -> String {
    path.as_ref()
        .map(|p| format!(" {}", p.display()))
        .unwrap_or_default()
}

/// The HTTP status code of a failed API call; `None` when the call failed
/// before an answer (transport, TLS, decoding).
pub fn status_code(err: &kube::Error) -> Option<u16> {
    match err {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}

/// A 409: the object changed since it was read (or already exists).
pub fn is_conflict(err: &kube::Error) -> bool {
    status_code(err) == Some(409)
}

/// A 404: the object (or its resource type) is not there.
pub fn is_missing(err: &kube::Error) -> bool {
    status_code(err) == Some(404)
}

/// A 404 naming the object `name`: that object is not there. A 404 naming
/// none (`404 page not found`) says the resource is not served, which a
/// real API server also answers for a custom resource for a few seconds
/// after it starts, until it has loaded the definitions: not a deletion
/// (docs/benchmarks-100k.md#the-real-api-server-at-100000-sites).
pub fn is_missing_object(err: &kube::Error, name: &str) -> bool {
    match err {
        kube::Error::Api(s) if s.code == 404 => {
            s.details.as_ref().is_some_and(|d| d.name == name)
                || s.message.contains(&format!("\"{name}\""))
        }
        _ => false,
    }
}

/// One line for a kube error: the API's code and message, or the root
/// cause of a transport failure (never a `Debug` dump).
pub fn readable(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(s) => format!("{} {}: {}", s.code, s.reason, s.message),
        other => root_cause(other),
    }
}

/// The `source()` chain below an error, joined with ": " (for logs that
/// show the error itself next to it).
pub fn source_chain(err: &dyn std::error::Error) -> String {
    let mut parts = Vec::new();
    let mut cur = err.source();
    while let Some(e) = cur {
        parts.push(e.to_string());
        cur = e.source();
    }
    parts.join(": ")
}

/// An error and its causes in one line, `what failed: cause: cause`, for a
/// fatal error a binary prints. Many errors quote (part of) their source in
/// their own message, so a cause the line already says is skipped, and the
/// chain stops once the line holds its innermost cause. Multi-line messages
/// are folded onto the line.
pub fn with_causes(err: &(dyn std::error::Error + 'static)) -> String {
    let root = root_cause(err);
    let mut line = fold(&err.to_string());
    let mut cur = err.source();
    while let Some(e) = cur {
        if line.contains(&root) {
            break;
        }
        // The client library's error says it all in one readable part
        // (the API's code and message, or the transport's root cause);
        // its own Display is a `Debug` dump of the API's answer.
        let kube = e.downcast_ref::<kube::Error>();
        let text = fold(&kube.map_or_else(|| e.to_string(), readable));
        if !text.is_empty() && !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        if kube.is_some() {
            break;
        }
        cur = e.source();
    }
    line
}

fn fold(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The innermost message of an error chain: the part a user recognises
/// ("Connection refused", "invalid peer certificate: UnknownIssuer"),
/// cut to its first line (YAML errors append a source snippet).
pub fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = err;
    while let Some(next) = cur.source() {
        cur = next;
    }
    let text = cur.to_string();
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .to_owned()
}

impl Error {
    /// Classifies a failed API call. `what` names the operation
    /// ("apply ClusterRole fleet-edge-site-a"); `server` is the URL called.
    pub fn api(what: impl Into<String>, server: &str, source: kube::Error) -> Self {
        let what = what.into();
        let server = server.to_owned();
        match &source {
            kube::Error::Api(status) => {
                let message = status.message.clone();
                match status.code {
                    401 => Error::Unauthorized {
                        what,
                        server,
                        source,
                    },
                    403 => Error::Forbidden {
                        what,
                        message,
                        source,
                    },
                    // A 404 that names no object means the resource type
                    // itself is not served: for our group, the CRD is missing.
                    404 if status.details.as_ref().is_none_or(|d| d.name.is_empty())
                        && (what.contains("FederatedCluster")
                            || what.contains("FederationStatus")) =>
                    {
                        Error::CrdMissing {
                            what,
                            server,
                            source,
                        }
                    }
                    404 => Error::NotFound { what, source },
                    code => Error::Status {
                        what,
                        code,
                        message,
                        source,
                    },
                }
            }
            kube::Error::SerdeError(e) => Error::Unexpected {
                what,
                reason: format!("unreadable response: {e}"),
            },
            _ => Error::Unreachable {
                what,
                server,
                reason: root_cause(&source),
                source,
            },
        }
    }

    /// The same error naming `flags` (an error about a context names the
    /// flags that chose the kubeconfig and the context).
    pub fn naming_flags(self, flags: ContextFlags) -> Self {
        match self {
            Error::ContextNotFound {
                context,
                path,
                available,
                ..
            } => Error::ContextNotFound {
                context,
                path,
                available,
                flags,
            },
            other => other,
        }
    }

    /// True when the object did not exist (deletes treat this as done).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound { .. })
    }

    /// True when the server does not serve the fleet API type asked for
    /// (its CRD is not installed).
    pub fn is_crd_missing(&self) -> bool {
        matches!(self, Error::CrdMissing { .. })
    }

    /// True when a write into `namespace` failed because that namespace
    /// does not exist (404 naming the namespace, as the API server answers).
    pub fn is_namespace_missing(&self, namespace: &str) -> bool {
        match self {
            Error::NotFound {
                source: kube::Error::Api(status),
                ..
            } => status
                .details
                .as_ref()
                .is_some_and(|d| d.kind == "namespaces" && d.name == namespace),
            _ => false,
        }
    }

    /// What the user should do next, in one clause.
    pub fn hint(&self) -> String {
        match self {
            Error::Kubeconfig { .. } => {
                "pass a readable kubeconfig with --kubeconfig or KUBECONFIG, and an existing --context"
                    .into()
            }
            Error::ContextNotFound {
                flags, available, ..
            } if available.is_empty() => format!(
                "pass a {} that has contexts (`kubectl config get-contexts` lists them)",
                flags.kubeconfig
            ),
            Error::ContextNotFound { flags, .. } => format!(
                "pass {} with one of them, or a {} that has that context",
                flags.context, flags.kubeconfig
            ),
            Error::Unauthorized { .. } => {
                "refresh the credentials in your kubeconfig or choose another --context".into()
            }
            Error::Forbidden { .. } => {
                "use a kubeconfig/--context whose identity has these rights on the hub (for example cluster-admin)"
                    .into()
            }
            Error::CrdMissing { server, .. } => format!(
                "check that --kubeconfig/--context point at the hub; if {server} is the hub, run `kubectl fleet install --apply`"
            ),
            Error::NotFound { .. } => "list the registered sites with `kubectl fleet status`".into(),
            Error::Status { code, .. } if *code >= 500 => {
                "the API server failed; re-run the command, it converges".into()
            }
            Error::Conflict { .. } => {
                "keep them (drop the flag that asks to change them), or pass --force-conflicts to replace them"
                    .into()
            }
            Error::Status { .. } | Error::Unexpected { .. } => {
                "re-run with -v=1 for details".into()
            }
            Error::Unreachable { reason, .. } if reason.contains("certificate") => {
                "the server certificate is not trusted: check certificate-authority-data in your kubeconfig"
                    .into()
            }
            Error::Unreachable { .. } => {
                "check the server URL of your kubeconfig context and that the API server is running (raise --request-timeout if it is slow)"
                    .into()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api_error(code: u16, name: &str) -> kube::Error {
        kube::Error::Api(
            kube::core::Status {
                code,
                message: "boom".into(),
                details: Some(kube::core::response::StatusDetails {
                    name: name.into(),
                    group: String::new(),
                    kind: String::new(),
                    uid: String::new(),
                    causes: Vec::new(),
                    retry_after_seconds: 0,
                }),
                ..Default::default()
            }
            .boxed(),
        )
    }

    #[test]
    fn classifies_status_codes() {
        let s = "https://hub";
        assert!(matches!(
            Error::api("get x", s, api_error(401, "")),
            Error::Unauthorized { .. }
        ));
        assert!(matches!(
            Error::api("get x", s, api_error(403, "")),
            Error::Forbidden { .. }
        ));
        assert!(matches!(
            Error::api("list FederatedCluster", s, api_error(404, "")),
            Error::CrdMissing { .. }
        ));
        assert!(
            Error::api("get FederatedCluster a", s, api_error(404, "a")).is_not_found(),
            "a 404 naming the object is a missing object, not a missing CRD"
        );
        assert!(Error::api("get Secret a", s, api_error(404, "")).is_not_found());
        assert!(matches!(
            Error::api("get x", s, api_error(500, "")),
            Error::Status { code: 500, .. }
        ));
    }

    /// The hub forgets a site only for a 404 naming it: the real API
    /// server answers `404 page not found` (a body that is no Status,
    /// which kube reads as one naming nothing) for a custom resource for
    /// a few seconds after it starts.
    #[test]
    fn only_a_404_naming_the_object_says_it_is_missing() {
        assert!(is_missing_object(&api_error(404, "a"), "a"));
        assert!(!is_missing_object(&api_error(404, "b"), "a"));
        assert!(!is_missing_object(&api_error(404, ""), "a"));
        assert!(!is_missing_object(&api_error(409, "a"), "a"));
        let named = kube::core::Status::failure(
            r#"federatedclusters.federation.kubectl-fleet.dev "a" not found"#,
            "NotFound",
        )
        .with_code(404);
        assert!(is_missing_object(&kube::Error::Api(named.boxed()), "a"));
        let not_served =
            kube::core::Status::failure("404 page not found", "Failed to parse error data")
                .with_code(404);
        assert!(!is_missing_object(
            &kube::Error::Api(not_served.boxed()),
            "a"
        ));
    }

    #[test]
    fn crd_missing_hint_names_install() {
        let e = Error::api("list FederatedCluster", "https://hub", api_error(404, ""));
        assert_eq!(
            e.hint(),
            "check that --kubeconfig/--context point at the hub; if https://hub is the hub, run `kubectl fleet install --apply`"
        );
        assert_eq!(
            e.to_string(),
            "list FederatedCluster: the federation.kubectl-fleet.dev CRDs are not installed on https://hub"
        );
    }

    #[test]
    fn causes_join_on_one_line_without_repeats() {
        #[derive(Debug, thiserror::Error)]
        #[error("starting the HTTP servers")]
        struct Outer(#[source] Middle);
        #[derive(Debug, thiserror::Error)]
        #[error("binding 0.0.0.0:8443: {0}")]
        struct Middle(#[source] std::io::Error);
        let io = std::io::Error::from(std::io::ErrorKind::AddrInUse);
        let io_text = io.to_string();
        let line = with_causes(&Outer(Middle(io)));
        assert_eq!(
            line,
            format!("starting the HTTP servers: binding 0.0.0.0:8443: {io_text}")
        );
        let e = Error::Unexpected {
            what: "x".into(),
            reason: "two\nlines".into(),
        };
        assert_eq!(with_causes(&e), "x: two lines");
    }

    #[test]
    fn a_kube_error_in_the_chain_is_shown_readable_not_dumped() {
        #[derive(Debug, thiserror::Error)]
        #[error("checking that the fleet CRDs are installed")]
        struct Outer(#[source] kube::Error);
        let line = with_causes(&Outer(api_error(403, "")));
        assert_eq!(
            line,
            "checking that the fleet CRDs are installed: 403 : boom"
        );
        assert!(!line.contains("Status"), "{line}");
    }

    #[test]
    fn a_missing_context_lists_the_others_bounded_and_names_the_flags() {
        let e = Error::ContextNotFound {
            context: "nope".into(),
            path: Some("/m.kubeconfig".into()),
            available: (0..12).map(|i| format!("ctx-{i:02}")).collect(),
            flags: ContextFlags::KUBECTL,
        }
        .naming_flags(ContextFlags::MEMBER);
        assert_eq!(
            e.to_string(),
            "--member-kubeconfig /m.kubeconfig has no context \"nope\" (its contexts: ctx-00, ctx-01, ctx-02, ctx-03, ctx-04, ctx-05, ctx-06, ctx-07, ctx-08, ctx-09, and 2 more)"
        );
        assert_eq!(
            e.hint(),
            "pass --member-context with one of them, or a --member-kubeconfig that has that context"
        );
    }
}
