//! Authentication (bearer tokens, ServiceAccount JWTs, impersonation),
//! RBAC authorization with the real server's semantics, and the review APIs
//! (TokenReview, SubjectAccessReview, SelfSubjectAccessReview,
//! SelfSubjectRulesReview, SelfSubjectReview) answered by the same code.

pub mod authn;
pub mod rbac;
pub mod reviews;
mod types;

pub use authn::{
    AuthnError, Impersonation, ServiceAccountClaims, TokenIssuer, VerifiedToken,
    impersonation_checks,
};
pub use rbac::{Decision, Evaluation, RbacSnapshot, authorize, evaluate, forbidden_error};
pub use types::{Attributes, UserInfo};
