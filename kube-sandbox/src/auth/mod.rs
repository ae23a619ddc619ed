//! Authentication (bearer tokens, ServiceAccount JWTs, impersonation),
//! RBAC authorization with the real server's semantics, and the review APIs
//! (TokenReview, SubjectAccessReview, SelfSubjectAccessReview,
//! SelfSubjectRulesReview, SelfSubjectReview) answered by the same code.

pub mod authn;
pub mod rbac;
pub mod reviews;

pub use authn::{
    AuthnError, Impersonation, ServiceAccountClaims, TokenIssuer, UserInfo, VerifiedToken,
    impersonation_checks,
};
pub use rbac::{
    Attributes, Decision, Evaluation, RbacSnapshot, authorize, evaluate, forbidden_error,
};
