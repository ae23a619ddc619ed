//! A Pull site's own identity on its member cluster
//! ([`crate::manifests::rbac::PullIdentity`], docs/pull-mode.md#the-sites-identity-on-its-member):
//! what `register --pull` mints there, what `unregister` removes, and what
//! it says is left when it cannot reach the member.
//!
//! Each identity is labelled with the hub that made it (the UID of the
//! hub's `kube-system` namespace), so a second hub that registers a site of
//! the same name against the same member is refused instead of taking the
//! identity over, and one hub's `unregister` never deletes another's.

use std::time::Duration;

use super::{Error, Io};
use crate::fleet::rbac::{self, FLEET_NAMESPACE, HUB_LABEL, MEMBER_READER_NAME, PullIdentityOwner};
use crate::k8s::pull::MemberKubeconfig;
use crate::k8s::{Cluster, IssuedToken, ObjectRef};
use crate::render::safe::Untrusted;

/// What to pass for `FILE` in the commands this module prints.
const MEMBER_FILE: &str = "FILE: an admin kubeconfig of the member";

/// Whose the member's `fleet-pull-SITE` is, seen from `hub`: an error
/// (with what to do) unless it is absent or this hub's. Returns the hub's
/// identity and whether the member still holds the identity earlier
/// versions shared among Pull sites.
async fn check_ours(hub: &Cluster, member: &Cluster, site: &str) -> Result<(String, bool), Error> {
    let (hub_id, live, shared) = futures::try_join!(
        hub.cluster_id(),
        member.pull_service_account(site),
        member.shared_member_reader_exists(),
    )?;
    let name = rbac::pull_identity_name(site);
    let owner =
        live.map(|sa| rbac::pull_identity_owner(sa.metadata.labels.as_ref(), site, &hub_id));
    match owner {
        None | Some(PullIdentityOwner::ThisHub) => Ok((hub_id, shared)),
        Some(PullIdentityOwner::OtherHub(other)) => Err(Error::Invalid {
            what: format!(
                "the member cluster holds the Pull identity of a site named {site} that another hub registered (ServiceAccount {FLEET_NAMESPACE}/{name} has {HUB_LABEL}={}, this hub is {hub_id})",
                Untrusted(&other)
            ),
            hint: format!(
                "use another site name on this hub; to move the site here, run `kubectl fleet unregister {site} --member-kubeconfig FILE` against the other hub first"
            ),
        }),
        Some(PullIdentityOwner::Foreign) => Err(Error::Invalid {
            what: format!(
                "ServiceAccount {FLEET_NAMESPACE}/{name} on the member cluster was not created by `kubectl fleet register` for site {site}"
            ),
            hint: format!(
                "use another site name, or delete that ServiceAccount on the member if it is a leftover ({MEMBER_FILE})"
            ),
        }),
    }
}

/// `register --pull`: mints (or converges) the site's own identity on
/// `member` and a token for it. Says when the identity earlier versions
/// shared among Pull sites is still on the member, and that it is left.
pub(super) async fn mint(
    hub: &Cluster,
    member: &Cluster,
    site: &str,
    ttl: Duration,
    io: &mut Io<'_>,
) -> Result<(Vec<ObjectRef>, IssuedToken), Error> {
    let (hub_id, shared) = check_ours(hub, member, site).await?;
    let minted = member
        .ensure_pull_identity(
            &crate::manifests::rbac::PullIdentity::new(site, &hub_id),
            ttl,
        )
        .await?;
    if shared {
        writeln!(io.err, "{}", shared_reader_note(site))?;
    }
    Ok(minted)
}

fn shared_reader_note(site: &str) -> String {
    format!(
        "member: ServiceAccount {FLEET_NAMESPACE}/{MEMBER_READER_NAME}, the identity earlier versions shared among the Pull sites of a member, is left in place: site {site} uses its own now, but sites registered before (on this hub or another) may still use it; once each is registered again, remove it on the member with `kubectl delete clusterrolebinding,clusterrole {MEMBER_READER_NAME}` and `kubectl -n {FLEET_NAMESPACE} delete serviceaccount {MEMBER_READER_NAME}`"
    )
}

/// `unregister --member-kubeconfig`: before anything is deleted, checks
/// that the site's identity on `member` is absent or this hub's.
pub(super) async fn check_removable(
    hub: &Cluster,
    member: &Cluster,
    site: &str,
) -> Result<(), Error> {
    check_ours(hub, member, site).await.map(|_| ())
}

/// `unregister`: what stays on the member for a Pull site whose pull
/// Secret held `stored`, when `member_cleaned` (the site's own identity was
/// removed there) or not. None when there is nothing to say.
pub(super) fn left_on_member(
    site: &str,
    stored: Option<&[u8]>,
    member_cleaned: bool,
) -> Option<String> {
    let kubeconfig = MemberKubeconfig::parse(stored?).ok();
    let subject = kubeconfig
        .as_ref()
        .and_then(MemberKubeconfig::token_subject);
    let server = kubeconfig
        .as_ref()
        .map(|k| Untrusted(k.server()).to_string())
        .unwrap_or_else(|| "its member cluster".to_owned());
    let name = rbac::pull_identity_name(site);
    let shared = format!("system:serviceaccount:{FLEET_NAMESPACE}:{MEMBER_READER_NAME}");
    match subject {
        Some(s) if s == rbac::pull_identity_user(site) => (!member_cleaned).then(|| format!(
            "member: the Pull identity of {site} stays on {server} (ServiceAccount, Role and RoleBinding {FLEET_NAMESPACE}/{name}, ClusterRole and ClusterRoleBinding {name}) and the token the hub held works there until it expires or they are removed: run `kubectl fleet unregister {site} --member-kubeconfig FILE` ({MEMBER_FILE})"
        )),
        Some(s) if s == shared => Some(format!(
            "member: site {site} used {FLEET_NAMESPACE}/{MEMBER_READER_NAME} on {server}, the identity earlier versions shared among the Pull sites of a member; it is left in place (other sites may use it)"
        )),
        _ => Some(format!(
            "member: the credential stored for {site} was not minted by `kubectl fleet register` (stored with --store-kubeconfig-as-is): nothing was removed from {server}, and it works there until you revoke it"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;

    fn stored(sub: &str) -> Vec<u8> {
        let e = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let token = format!("h.{}.s", e.encode(format!(r#"{{"sub":"{sub}"}}"#)));
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: m\nclusters:\n- name: m\n  cluster: {{server: 'https://10.0.0.7:6443'}}\ncontexts:\n- name: m\n  context: {{cluster: m, user: u}}\nusers:\n- name: u\n  user: {{token: {token}}}\n"
        )
        .into_bytes()
    }

    #[test]
    fn unregister_says_exactly_what_stays_on_the_member() {
        let own = stored("system:serviceaccount:fleet-system:fleet-pull-a");
        let note = left_on_member("a", Some(&own), false).unwrap();
        assert!(note.contains("https://10.0.0.7:6443"), "{note}");
        assert!(
            note.contains("kubectl fleet unregister a --member-kubeconfig FILE"),
            "{note}"
        );
        assert_eq!(
            left_on_member("a", Some(&own), true),
            None,
            "removed: nothing to say"
        );
        let shared = stored("system:serviceaccount:fleet-system:fleet-member-reader");
        let note = left_on_member("a", Some(&shared), true).unwrap();
        assert!(note.contains("left in place"), "{note}");
        let as_is = stored("system:admin");
        let note = left_on_member("a", Some(&as_is), false).unwrap();
        assert!(note.contains("--store-kubeconfig-as-is"), "{note}");
        assert_eq!(left_on_member("a", None, false), None, "not a Pull site");
    }
}
