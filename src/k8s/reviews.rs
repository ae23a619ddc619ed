//! TokenReview and SubjectAccessReview for the hub's REST API and
//! `/metrics` (authentication.k8s.io/v1, authorization.k8s.io/v1): the
//! Kubernetes-native check kube-rbac-proxy and controller-runtime's secure
//! metrics make. The caching and the HTTP answers live in
//! `operator::api`; this module only asks the API server.

use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec, UserInfo};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};

/// Who a bearer token belongs to; `Ok(None)` when the API server says the
/// token is not valid (unknown, expired or revoked).
pub async fn review_token(
    client: &kube::Client,
    token: &str,
) -> Result<Option<UserInfo>, kube::Error> {
    let review = TokenReview {
        spec: TokenReviewSpec {
            token: Some(token.to_owned()),
            audiences: None,
        },
        ..Default::default()
    };
    let api: Api<TokenReview> = Api::all(client.clone());
    let answer = api.create(&PostParams::default(), &review).await?;
    let status = answer.status.unwrap_or_default();
    Ok(match (status.authenticated, status.user) {
        (Some(true), Some(user)) => Some(user),
        _ => None,
    })
}

/// Whether `user` may `verb` the cluster-scoped `resource` of `group`.
pub async fn user_can(
    client: &kube::Client,
    user: &UserInfo,
    verb: &str,
    group: &str,
    resource: &str,
) -> Result<bool, kube::Error> {
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: user.username.clone(),
            uid: user.uid.clone(),
            groups: user.groups.clone(),
            extra: user.extra.clone(),
            resource_attributes: Some(ResourceAttributes {
                verb: Some(verb.to_owned()),
                group: Some(group.to_owned()),
                resource: Some(resource.to_owned()),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let api: Api<SubjectAccessReview> = Api::all(client.clone());
    let answer = api.create(&PostParams::default(), &review).await?;
    Ok(answer
        .status
        .is_some_and(|s| s.allowed && s.denied != Some(true)))
}
