//! Handing a minted token to the edge (`register`, `rotate`): the hub
//! kubeconfig or Secret manifest, written 0600 or printed, its expiry said;
//! and the checks of the private files and directories it goes to.

use super::*;

/// Who renews a minted token before it expires, as `register` can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Renewal {
    /// The edge, by itself (auto-rotation on).
    Edge,
    /// Perhaps the edge (an existing site whose auto-rotation is unknown).
    MaybeEdge,
    /// The hub operator (a Pull site's member token it minted).
    Hub,
    /// Nobody: the user must run the command.
    Nobody,
}

/// Prints when the token expires and warns if the server capped it, saying
/// what the edge does about it (`auto_rotate`: None when not known here)
/// or the command that mints a new one (`renew`).
pub(crate) fn report_expiry(
    token: &IssuedToken,
    what: &str,
    renewal: Renewal,
    renew: &str,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    writeln!(
        io.err,
        "{what} expires at {} (in {}, requested {})",
        token.expiration,
        format_duration(token.granted()),
        format_duration(token.requested)
    )?;
    if token.capped() {
        let then = match renewal {
            Renewal::Edge => {
                "the edge renews it by itself when half of its lifetime is left".to_owned()
            }
            Renewal::Hub => format!(
                "the hub operator renews it when half of its lifetime is left (or run `{renew}` to store a fresh one)"
            ),
            Renewal::Nobody => {
                format!("run `{renew}` before then (nothing renews it automatically)")
            }
            Renewal::MaybeEdge => {
                format!("run `{renew}` before then unless the edge renews it by itself")
            }
        };
        writeln!(
            io.err,
            "warning: the API server capped the token lifetime to {} (requested {}, limited by its --service-account-max-token-expiration): it expires at {}; {then}",
            format_duration(token.granted()),
            format_duration(token.requested),
            token.expiration
        )?;
    }
    Ok(())
}

/// What `register` or `rotate` did for a site, to hand out.
pub(crate) struct Issued<'a> {
    /// Objects applied.
    pub objects: Vec<ObjectRef>,
    /// Objects removed.
    pub removed: Vec<ObjectRef>,
    /// The minted token.
    pub token: &'a IssuedToken,
    /// Whether the edge may renew it by itself (None: not known here).
    pub auto_rotate: Option<bool>,
}

/// Renders the edge configuration for a freshly minted token and writes it
/// to stdout or `--output-file`; shared with `rotate`.
pub(crate) fn hand_out(
    hub: &Cluster,
    site: &str,
    issued: Issued<'_>,
    edge: &EdgeOutputArgs,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    let Issued {
        objects,
        removed,
        token,
        auto_rotate,
    } = issued;
    let server = edge.hub_server.as_deref().unwrap_or(hub.server());
    if !edge.insecure_skip_tls_verify && hub.ca_pem().is_none() {
        writeln!(
            io.err,
            "warning: your kubeconfig has no CA for {server}; the edge will verify the hub against its system roots"
        )?;
    }
    let user = rbac::edge_identity_name(site);
    let kubeconfig = TokenKubeconfig {
        cluster_name: "fleet-hub",
        user_name: &user,
        server,
        ca_pem: hub.ca_pem(),
        insecure_skip_tls_verify: edge.insecure_skip_tls_verify,
        token: &token.token,
    }
    .to_yaml();
    let config = match edge.emit {
        Emit::Kubeconfig => kubeconfig,
        Emit::Secret => edge_secret_manifest(site, &kubeconfig),
    };
    let hub_kubeconfig_path = match (edge.emit, &edge.output_file) {
        (Emit::Secret, _) => HUB_KUBECONFIG_MOUNT.to_owned(),
        (Emit::Kubeconfig, Some(path)) => path.display().to_string(),
        (Emit::Kubeconfig, None) => "FILE".to_owned(),
    };
    // The edge reads its member cluster through --kubeconfig: without it, a
    // shell pointed at the hub would report the hub as the site.
    let no_rotate = if auto_rotate == Some(false) {
        " --no-auto-rotate"
    } else {
        ""
    };
    let edge_command = format!(
        "fleet-operator --federation-role=edge --site {site} --kubeconfig MEMBER_KUBECONFIG --hub-kubeconfig {hub_kubeconfig_path}{no_rotate}"
    );

    if let Some(path) = &edge.output_file {
        write_private_file(path, config.as_bytes())?;
        writeln!(
            io.err,
            "wrote the edge configuration to {} (mode 0600)",
            path.display()
        )?;
    }
    let renew = format!("kubectl fleet rotate {site}");
    let renewal = match auto_rotate {
        Some(true) => Renewal::Edge,
        Some(false) => Renewal::Nobody,
        None => Renewal::MaybeEdge,
    };
    report_expiry(token, "token", renewal, &renew, io)?;
    match edge.emit {
        Emit::Kubeconfig if edge.output_file.is_some() => writeln!(
            io.err,
            "copy it to the edge and run: {edge_command} (MEMBER_KUBECONFIG: a kubeconfig for the site's own cluster)"
        )?,
        Emit::Kubeconfig => writeln!(
            io.err,
            "save this kubeconfig (0600) as FILE on the edge and run: {edge_command} (MEMBER_KUBECONFIG: a kubeconfig for the site's own cluster)"
        )?,
        Emit::Secret => writeln!(
            io.err,
            "apply the manifest on the edge cluster (`kubectl apply -f -`), then `kubectl fleet install --role edge --site {site} | kubectl apply -f -` there"
        )?,
    }

    match edge.output {
        RegisterOutput::Config => {
            if edge.output_file.is_none() {
                io.before_secret()?;
                io.out.write_all(config.as_bytes())?;
            }
        }
        RegisterOutput::Json => {
            if edge.output_file.is_none() {
                io.before_secret()?;
            }
            let summary = Summary {
                site: site.to_owned(),
                mode: Mode::Push,
                objects,
                removed,
                token_expiration_timestamp: token.expiration.to_string(),
                requested_ttl: format_duration(token.requested),
                granted_ttl: format_duration(token.granted()),
                capped: token.capped(),
                edge_command,
                output_file: edge.output_file.clone(),
                config: edge.output_file.is_none().then_some(config),
            };
            writeln!(
                io.out,
                "{}",
                serde_json::to_string_pretty(&summary).expect("summary serialises")
            )?;
        }
    }
    Ok(())
}

/// The Namespace and Secret `fleet-system/fleet-hub-kubeconfig` to apply on
/// the edge cluster, holding the hub kubeconfig under key `kubeconfig`.
pub(super) fn edge_secret_manifest(site: &str, kubeconfig: &str) -> String {
    let namespace = json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": { "name": NAMESPACE },
    });
    let secret = json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": HUB_KUBECONFIG_SECRET,
            "namespace": NAMESPACE,
            "labels": rbac::site_labels(site),
        },
        "type": "Opaque",
        "data": {
            DEFAULT_KUBECONFIG_KEY: base64::engine::general_purpose::STANDARD.encode(kubeconfig),
        },
    });
    plain_yaml_stream(&[namespace, secret])
}

/// The token of the edge configuration `hand_out` wrote to `path` (a hub
/// kubeconfig, or the Secret manifest of `--emit secret`), if the file is
/// there and holds one.
pub(super) fn handed_out_token(path: &Path, emit: Emit) -> Option<String> {
    let raw = std::fs::read_to_string(path).ok()?;
    let kubeconfig = match emit {
        Emit::Kubeconfig => raw,
        Emit::Secret => {
            let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&raw).ok()?;
            let encoded = docs
                .iter()
                .find(|d| d["kind"] == "Secret")?
                .pointer(&format!("/data/{DEFAULT_KUBECONFIG_KEY}"))?
                .as_str()?
                .to_owned();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .ok()?;
            String::from_utf8(bytes).ok()?
        }
    };
    let config: serde_json::Value = serde_saphyr::from_str(&kubeconfig).ok()?;
    Some(config.pointer("/users/0/user/token")?.as_str()?.to_owned())
}

/// Writes a file holding a secret with mode 0600, atomically.
pub(super) fn write_private_file(path: &Path, contents: &[u8]) -> Result<(), Error> {
    crate::k8s::write_private_file(path, contents).map_err(|source| Error::WriteFile {
        path: path.to_owned(),
        source,
    })
}

/// Checks that [`write_private_file`] can write `path`, before anything is
/// created that the file would be the only record of.
pub(crate) fn check_private_file(path: &Path) -> Result<(), Error> {
    crate::k8s::check_private_file(path).map_err(|source| Error::WriteFile {
        path: path.to_owned(),
        source,
    })
}

/// Makes `--output-dir` ready for credentials: created (mode 0700) when
/// missing; refused when every user may write to it (a /tmp-like
/// directory, sticky or not), where another user could read or replace a
/// credential before the edge gets it — as ssh refuses such a key file.
pub(crate) fn check_private_dir(dir: &Path, io: &mut Io<'_>) -> Result<(), Error> {
    use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
    let write_err = |source| Error::WriteFile {
        path: dir.to_owned(),
        source,
    };
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(write_err)?;
        return Ok(());
    }
    let meta = std::fs::metadata(dir).map_err(write_err)?;
    if !meta.is_dir() {
        return Err(Error::Invalid {
            what: format!("--output-dir {} is not a directory", dir.display()),
            hint: "name a directory (it is created when missing)".into(),
        });
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o002 != 0 {
        return Err(Error::Invalid {
            what: format!(
                "--output-dir {} is writable by every user (mode {mode:04o}): another user could replace or read the credentials written there",
                dir.display()
            ),
            hint: "use a directory only you can write, e.g. `--output-dir ./creds` (created with mode 0700)".into(),
        });
    }
    if mode & 0o020 != 0 {
        writeln!(
            io.err,
            "warning: --output-dir {} is writable by its group (mode {mode:04o}): its members could replace a credential before the edge reads it",
            dir.display()
        )?;
    }
    Ok(())
}
