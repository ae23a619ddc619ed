//! Authentication (bearer tokens, ServiceAccount JWTs, impersonation),
//! RBAC authorization with the real server's semantics, and the review APIs
//! (TokenReview, SubjectAccessReview, SelfSubjectAccessReview,
//! SelfSubjectRulesReview) answered by the same code.

pub mod authn;
pub mod rbac;
pub mod reviews;

pub use authn::{TokenIssuer, UserInfo};
pub use rbac::{Attributes, Decision, RbacSnapshot};
