//! `register --pull`: the read-only identity minted on the member, its
//! kubeconfig stored in the hub's pull Secret, the site written `mode:
//! Pull`, and the summary printed.

use super::*;

pub(super) async fn register_pull(
    hub: &Cluster,
    args: &RegisterArgs,
    existing: Option<FederatedCluster>,
    member: Option<Cluster>,
    progress: &mut Progress,
    io: &mut Io<'_>,
) -> Result<Outcome, Error> {
    let site = args.site();
    let path = args
        .member_kubeconfig
        .as_deref()
        .expect("Plan::new requires --member-kubeconfig for a site that becomes Pull");
    let from_push = existing.as_ref().is_some_and(|s| s.spec.mode == Mode::Push);
    let mut member_objects = Vec::new();
    let mut token = None;
    let stored = match &member {
        None => {
            // --store-kubeconfig-as-is: validate that it is a kubeconfig,
            // but store the user's bytes.
            let raw = read_member_kubeconfig(path)?;
            kube::config::Kubeconfig::from_yaml(&raw).map_err(|e| Error::Invalid {
                what: format!("{} is not a kubeconfig: {e}", path.display()),
                hint: "pass the member cluster's kubeconfig file".into(),
            })?;
            raw
        }
        Some(member) => {
            let (objs, issued) =
                crate::cli::pull_identity::mint(hub, member, site, args.token_ttl, io).await?;
            progress.wrote(format!(
                "the read-only identity for site {site} exists on the member cluster, but the site is not registered in Pull mode on the hub yet"
            ));
            let kubeconfig = TokenKubeconfig {
                cluster_name: site,
                user_name: &rbac::pull_identity_name(site),
                server: member.server(),
                ca_pem: member.ca_pem(),
                insecure_skip_tls_verify: member.insecure(),
                token: &issued.token,
            }
            .to_yaml();
            member_objects = objs;
            token = Some(issued);
            kubeconfig
        }
    };

    // The site (naming the Secret) before the Secret, which it owns: a
    // pull Secret never exists without a site that references it, so a
    // later Push `register` knows from the site alone whether to remove one.
    let spec = desired_spec(args, existing.as_ref().map(|s| &s.spec), Mode::Pull);
    let applied = hub
        .apply_site(&site_object(site, spec, &args.labels))
        .await?;
    progress.wrote(format!(
        "site {site} exists on the hub in Pull mode, but the hub holds no credential for its member cluster yet"
    ));
    let mut objects = vec![applied.object];
    if from_push {
        // The edge's token expiry and report duration describe a
        // credential and a report that are gone.
        hub.clear_site_status(site, crate::api::mode_status_keys(Mode::Push))
            .await?;
    }
    objects.extend(hub.store_pull_secret(site, &applied.uid, &stored).await?);
    progress.wrote(format!(
        "site {site} is registered in Pull mode, but the edge identity of its former Push registration may remain on the hub"
    ));
    // A site switching from Push keeps no edge identity behind.
    let removed = hub.delete_site_identity(site).await?;

    for obj in &member_objects {
        writeln!(io.err, "member: {obj} applied")?;
    }
    for obj in &objects {
        writeln!(io.err, "{obj} applied")?;
    }
    for obj in &removed {
        writeln!(io.err, "{obj} removed")?;
    }
    if let Some(token) = &token {
        // The hub operator renews it; a re-run stores a fresh one too.
        let renew = shell_line(&[
            "kubectl",
            "fleet",
            "register",
            site,
            "--pull",
            "--member-kubeconfig",
            &path.display().to_string(),
        ]);
        report_expiry(
            token,
            "the member's read-only token",
            Renewal::Hub,
            &renew,
            io,
        )?;
    }
    let outcome = Outcome::of(
        existing.is_some(),
        objects.len() + member_objects.len(),
        removed.len(),
        token.is_some(),
    );
    let summary = PullSummary {
        site: site.to_owned(),
        mode: Mode::Pull,
        member_objects,
        objects,
        removed,
        token_expiration_timestamp: token.as_ref().map(|t| t.expiration.to_string()),
        requested_ttl: token.as_ref().map(|t| format_duration(t.requested)),
        granted_ttl: token.as_ref().map(|t| format_duration(t.granted())),
        capped: token.as_ref().is_some_and(IssuedToken::capped),
    };
    write_pull_summary(&summary, args, io)?;
    writeln!(
        io.err,
        "site {site} registered in Pull mode: the hub operator probes it with the kubeconfig in Secret {NAMESPACE}/{}",
        rbac::pull_secret_name(site)
    )?;
    Ok(outcome)
}

/// A re-run for a site that stays in Pull mode without a new member
/// kubeconfig: applies the spec, keeps the hub's credential for the member.
pub(super) async fn update_pull_site(
    hub: &Cluster,
    args: &RegisterArgs,
    existing: FederatedCluster,
    progress: &mut Progress,
    io: &mut Io<'_>,
) -> Result<Outcome, Error> {
    let site = args.site();
    let desired = site_object(
        site,
        desired_spec(args, Some(&existing.spec), Mode::Pull),
        &args.labels,
    );
    let mut objects = Vec::new();
    if same_site(&existing, &desired) {
        writeln!(
            io.err,
            "FederatedCluster {site} is in place: nothing to apply"
        )?;
    } else {
        let applied = hub.apply_site(&desired).await?;
        progress.wrote(format!("the spec of site {site} is applied"));
        writeln!(io.err, "{} applied", applied.object)?;
        objects.push(applied.object);
    }
    let secret = rbac::pull_secret_name(site);
    // The hub's grant of the Secret the site names, by name: a site
    // registered by an earlier version has none (its hub read every Secret
    // of the namespace), and this re-run restores a deleted one.
    let named = existing
        .spec
        .kubeconfig_secret_ref
        .as_ref()
        .filter(|r| r.namespace == NAMESPACE)
        .map_or(secret.clone(), |r| r.name.clone());
    let uid = existing.metadata.uid.clone().unwrap_or_default();
    for granted in hub.grant_pull_secret(site, &uid, &named).await? {
        writeln!(io.err, "{granted} applied")?;
        objects.push(granted);
    }
    let outcome = Outcome::of(true, objects.len(), 0, false);
    let summary = PullSummary {
        site: site.to_owned(),
        mode: Mode::Pull,
        member_objects: Vec::new(),
        objects,
        removed: Vec::new(),
        token_expiration_timestamp: None,
        requested_ttl: None,
        granted_ttl: None,
        capped: false,
    };
    write_pull_summary(&summary, args, io)?;
    if hub.secret_exists(NAMESPACE, &secret).await? {
        writeln!(
            io.err,
            "site {site} stays in Pull mode: the hub operator probes it with the kubeconfig in Secret {NAMESPACE}/{secret} (add --pull --member-kubeconfig to replace it, or --push to switch to Push)"
        )?;
    } else {
        writeln!(
            io.err,
            "warning: Secret {NAMESPACE}/{secret} is missing, so the hub cannot probe site {site}: store a new member credential with `{}`",
            shell_line(&[
                "kubectl",
                "fleet",
                "register",
                site,
                "--pull",
                "--member-kubeconfig",
                "FILE"
            ])
        )?;
    }
    Ok(outcome)
}

/// Prints the `-o json` summary of a Pull registration.
pub(super) fn write_pull_summary(
    summary: &PullSummary,
    args: &RegisterArgs,
    io: &mut Io<'_>,
) -> Result<(), Error> {
    if args.edge.output == RegisterOutput::Json {
        writeln!(
            io.out,
            "{}",
            serde_json::to_string_pretty(summary).expect("summary serialises")
        )?;
    }
    Ok(())
}

pub(super) fn read_member_kubeconfig(path: &Path) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|source| Error::ReadFile {
        path: path.to_owned(),
        source,
    })
}

/// Connects to the member cluster of `--member-kubeconfig` (no request
/// yet); errors name the member flags.
pub(super) async fn connect_member(
    global: &GlobalArgs,
    path: &Path,
    context: Option<&str>,
) -> Result<Cluster, Error> {
    let raw = read_member_kubeconfig(path)?;
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&raw).map_err(|e| Error::Invalid {
        what: format!("{} is not a kubeconfig: {e}", path.display()),
        hint: "pass the member cluster's kubeconfig file with --member-kubeconfig".into(),
    })?;
    let opts = ConnectOptions {
        kubeconfig: Some(path.to_owned()),
        context: context.map(str::to_owned),
        request_timeout: global.connect_options().request_timeout,
    };
    Cluster::from_kubeconfig(kubeconfig, &opts)
        .await
        .map_err(|e| e.naming_flags(ContextFlags::MEMBER).into())
}
