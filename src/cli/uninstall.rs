//! `kubectl fleet uninstall [--role hub|edge]`: remove what `install`
//! created for the operator (one role's, or both) — its Deployments, RBAC, NetworkPolicies, the hub's
//! status-ownership admission policy and binding, the hub's serving
//! certificate Secret (and the cert-manager objects of
//! `--with-cert-manager`), hub and edge role alike, and the
//! `--with-monitoring` objects — and, only with `--crds`, the
//! CustomResourceDefinitions (which deletes every FederatedCluster with
//! them). Namespaces `fleet-system` and `fleet-sites` stay: they hold the
//! Pull Secrets and the site identities of `register` (`unregister`
//! removes those) and an edge's hub kubeconfig Secret. A Secret given with
//! `install --tls-secret` is the user's and stays. Removing the hub role
//! from a fleet with registered sites asks first, naming how many
//! (`--yes` off a terminal). Idempotent: whatever is already gone is
//! skipped.

use super::install::{Role, SERVING_SECRET, crd_manifests, monitoring_manifests, operator_objects};
use super::{Error, GlobalArgs, Io};

/// Arguments of `kubectl fleet uninstall`.
#[derive(Debug, clap::Args)]
pub struct UninstallArgs {
    /// Remove only this role's operator (default: both, hub and edge)
    #[arg(long, value_enum, value_name = "ROLE")]
    pub role: Option<Role>,
    /// Also delete the CRDs, and with them every registered site
    #[arg(long, conflicts_with = "role")]
    pub crds: bool,
    /// Do not ask before removing the hub role from a fleet with sites, or deleting the CRDs (required then when stdin is not a terminal)
    #[arg(short, long)]
    pub yes: bool,
}

/// Runs `kubectl fleet uninstall`.
pub async fn run(global: &GlobalArgs, args: UninstallArgs, io: &mut Io<'_>) -> Result<(), Error> {
    let cluster = global.hub().await?;
    let roles: &[Role] = match args.role {
        Some(Role::Hub) => &[Role::Hub],
        Some(Role::Edge) => &[Role::Edge],
        None => &[Role::Hub, Role::Edge],
    };
    let hub = roles.contains(&Role::Hub);
    // Removing the hub role from a fleet with sites stops every site's
    // judgement, alerts and the REST API: asked, naming the count.
    if (hub || args.crds) && !args.yes {
        let sites = match cluster.list_site_names().await {
            Ok(names) => names.len(),
            Err(crate::k8s::Error::CrdMissing { .. }) => 0,
            Err(e) => return Err(e.into()),
        };
        let plural = if sites == 1 { "" } else { "s" };
        let question = if args.crds {
            Some(format!(
                "delete the fleet CRDs and with them all {sites} registered site{plural}"
            ))
        } else if sites > 0 {
            Some(format!(
                "remove the hub operator, its RBAC and admission policy from {} with {sites} registered site{plural} (no site is judged, alerted on or served by the REST API until it is installed again; `--role edge` removes only an edge operator)",
                cluster.server()
            ))
        } else {
            None
        };
        if let Some(question) = question {
            super::confirm(
                false,
                &format!("{}?", capitalise(&question)),
                &format!("refusing to {question} without confirmation"),
                io,
            )?;
        }
    }
    let mut docs = Vec::new();
    if args.crds {
        docs.extend(crd_manifests());
    }
    for role in roles {
        docs.extend(operator_objects(*role));
    }
    // `install --with-monitoring`'s objects (the hub's); kinds the cluster
    // does not serve (no Prometheus Operator) are skipped.
    if hub {
        docs.extend(monitoring_manifests(SERVING_SECRET));
    }
    // Reverse order: the monitoring objects and the Deployments go before
    // the operator's RBAC, the CRDs last.
    let deleted = cluster.delete_manifests(&docs).await?;
    if deleted.is_empty() {
        let which = match args.role {
            Some(role) => format!("no {} operator", role_name(role)),
            None => "no fleet operator".to_owned(),
        };
        writeln!(io.err, "{which} installed: nothing to remove")?;
    }
    for obj in &deleted {
        writeln!(io.err, "{obj} deleted")?;
    }
    Ok(())
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Hub => "hub",
        Role::Edge => "edge",
    }
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
