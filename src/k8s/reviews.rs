//! TokenReview and SubjectAccessReview for the hub's REST API and
//! `/metrics` (authentication.k8s.io/v1, authorization.k8s.io/v1): the
//! Kubernetes-native check kube-rbac-proxy and controller-runtime's secure
//! metrics make. The caching, coalescing, rate limiting and the HTTP
//! answers live in `operator::rest`; this module only asks the API server.

use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec, UserInfo};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};

/// What a caller asks to do, as a SubjectAccessReview states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// A verb on a cluster-scoped resource of an API group.
    Resource {
        verb: &'static str,
        group: &'static str,
        resource: &'static str,
    },
    /// A verb on a non-resource URL (RBAC `nonResourceURLs`), such as
    /// `get` on `/metrics`.
    NonResource {
        verb: &'static str,
        path: &'static str,
    },
}

impl std::fmt::Display for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Access::Resource {
                verb,
                group,
                resource,
            } => write!(f, "{verb} {resource}.{group}"),
            Access::NonResource { verb, path } => write!(f, "{verb} {path}"),
        }
    }
}

/// Whether a TokenReview's answer lets the caller in, given the audiences
/// the review asked for. With none asked, the API server checked the token
/// against its own audiences. With some asked, the answer must name one of
/// them: an authenticator that ignores audiences answers with none, and
/// such a token is good for the API server only
/// (`TokenReviewStatus.audiences`).
pub fn audience_accepted(wanted: &[String], answered: Option<&[String]>) -> bool {
    wanted.is_empty() || answered.is_some_and(|got| got.iter().any(|a| wanted.contains(a)))
}

/// Who a bearer token belongs to; `Ok(None)` when the API server says the
/// token is not valid for any of `audiences` (unknown, expired, revoked,
/// or minted for another audience). Empty `audiences`: the API server's
/// own.
pub async fn review_token(
    client: &kube::Client,
    token: &str,
    audiences: &[String],
) -> Result<Option<UserInfo>, kube::Error> {
    let review = TokenReview {
        spec: TokenReviewSpec {
            token: Some(token.to_owned()),
            audiences: (!audiences.is_empty()).then(|| audiences.to_vec()),
        },
        ..Default::default()
    };
    let api: Api<TokenReview> = Api::all(client.clone());
    let answer = api.create(&PostParams::default(), &review).await?;
    let status = answer.status.unwrap_or_default();
    if !audience_accepted(audiences, status.audiences.as_deref()) {
        return Ok(None);
    }
    Ok(match (status.authenticated, status.user) {
        (Some(true), Some(user)) => Some(user),
        _ => None,
    })
}

/// Whether `user` may do `access`.
pub async fn user_can(
    client: &kube::Client,
    user: &UserInfo,
    access: Access,
) -> Result<bool, kube::Error> {
    let (resource_attributes, non_resource_attributes) = match access {
        Access::Resource {
            verb,
            group,
            resource,
        } => (
            Some(ResourceAttributes {
                verb: Some(verb.to_owned()),
                group: Some(group.to_owned()),
                resource: Some(resource.to_owned()),
                ..Default::default()
            }),
            None,
        ),
        Access::NonResource { verb, path } => (
            None,
            Some(NonResourceAttributes {
                verb: Some(verb.to_owned()),
                path: Some(path.to_owned()),
            }),
        ),
    };
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: user.username.clone(),
            uid: user.uid.clone(),
            groups: user.groups.clone(),
            extra: user.extra.clone(),
            resource_attributes,
            non_resource_attributes,
        },
        ..Default::default()
    };
    let api: Api<SubjectAccessReview> = Api::all(client.clone());
    let answer = api.create(&PostParams::default(), &review).await?;
    Ok(answer
        .status
        .is_some_and(|s| s.allowed && s.denied != Some(true)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_dedicated_audience_must_come_back_in_the_answer() {
        // Nothing asked: the API server judged against its own audiences.
        assert!(audience_accepted(&[], None));
        assert!(audience_accepted(
            &[],
            Some(&v(&["https://kubernetes.default.svc"]))
        ));
        let wanted = v(&["fleet-operator"]);
        assert!(audience_accepted(&wanted, Some(&v(&["fleet-operator"]))));
        assert!(audience_accepted(
            &v(&["a", "fleet-operator"]),
            Some(&v(&["fleet-operator"]))
        ));
        // An audience-agnostic authenticator answers none: such a token is
        // for the API server, not for this hub.
        assert!(!audience_accepted(&wanted, None));
        assert!(!audience_accepted(&wanted, Some(&[])));
        assert!(!audience_accepted(&wanted, Some(&v(&["other"]))));
    }

    #[test]
    fn accesses_read_as_rbac_terms() {
        let list = Access::Resource {
            verb: "list",
            group: "federation.kubectl-fleet.dev",
            resource: "federatedclusters",
        };
        assert_eq!(
            list.to_string(),
            "list federatedclusters.federation.kubectl-fleet.dev"
        );
        let metrics = Access::NonResource {
            verb: "get",
            path: "/metrics",
        };
        assert_eq!(metrics.to_string(), "get /metrics");
    }
}
