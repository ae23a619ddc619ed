//! `kubectl fleet uninstall`: remove what `install` created for the
//! operator — its Deployments, RBAC, NetworkPolicies, the hub's
//! status-ownership admission policy and binding, the hub's serving
//! certificate Secret (and the cert-manager objects of
//! `--with-cert-manager`), hub and edge role alike, and the
//! `--with-monitoring` objects — and, only with `--crds`, the
//! CustomResourceDefinitions (which deletes every FederatedCluster with
//! them). Namespaces `fleet-system` and `fleet-sites` stay: they hold the
//! Pull Secrets and the site identities of `register` (`unregister`
//! removes those) and an edge's hub kubeconfig Secret. A Secret given with
//! `install --tls-secret` is the user's and stays. Idempotent: whatever is
//! already gone is skipped.

use super::install::{Role, SERVING_SECRET, crd_manifests, monitoring_manifests, operator_objects};
use super::{Error, GlobalArgs, Io};

/// Arguments of `kubectl fleet uninstall`.
#[derive(Debug, clap::Args)]
pub struct UninstallArgs {
    /// Also delete the CRDs, and with them every registered site
    #[arg(long)]
    pub crds: bool,
    /// Do not ask before deleting the CRDs (required with --crds when stdin is not a terminal; accepted without it, which never asks)
    #[arg(short, long)]
    pub yes: bool,
}

/// Runs `kubectl fleet uninstall`.
pub async fn run(global: &GlobalArgs, args: UninstallArgs, io: &mut Io<'_>) -> Result<(), Error> {
    let cluster = global.hub().await?;
    if args.crds && !args.yes {
        let sites = match cluster.list_sites(None).await {
            Ok(sites) => sites.len(),
            Err(crate::k8s::Error::CrdMissing { .. }) => 0,
            Err(e) => return Err(e.into()),
        };
        let question = format!(
            "delete the fleet CRDs and with them all {sites} registered site{}",
            if sites == 1 { "" } else { "s" }
        );
        super::confirm(
            false,
            &format!("{}?", capitalise(&question)),
            &format!("refusing to {question} without confirmation"),
            io,
        )?;
    }
    let mut docs = Vec::new();
    if args.crds {
        docs.extend(crd_manifests());
    }
    for role in [Role::Hub, Role::Edge] {
        docs.extend(operator_objects(role));
    }
    // `install --with-monitoring`'s objects; kinds the cluster does not
    // serve (no Prometheus Operator) are skipped.
    docs.extend(monitoring_manifests(SERVING_SECRET));
    // Reverse order: the monitoring objects and the Deployments go before
    // the operator's RBAC, the CRDs last.
    let deleted = cluster.delete_manifests(&docs).await?;
    if deleted.is_empty() {
        writeln!(io.err, "no fleet operator installed: nothing to remove")?;
    }
    for obj in &deleted {
        writeln!(io.err, "{obj} deleted")?;
    }
    Ok(())
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
