//! Patch semantics: JSON merge patch (RFC 7386), JSON patch (RFC 6902),
//! strategic merge patch, and server-side apply with `managedFields`.
//!
//! Strategic merge patch follows `k8s.io/apimachinery/pkg/util/strategicpatch`
//! with the options the API server uses (parallel lists merged, unmatched
//! nulls ignored): `$patch: replace|delete` on maps and list items,
//! `$retainKeys`, `$deleteFromPrimitiveList/`, `$setElementOrder/`, merge of
//! lists of maps by key and union of primitive lists, and the real element
//! order (patch items not on the server come first). Where it differs from
//! the real server: the real one reads each field's `patchStrategy` and
//! `patchMergeKey` from the Go type at that exact path; here they come from
//! the field *name* alone (see [`strategic::merge_key_for`]), which is right for every
//! built-in kind the sandbox hosts (containers, volumes, env, ports,
//! conditions, ownerReferences, finalizers, ...) but would, say, treat a
//! Service's `ports` (keyed by `port` there) as keyed by `containerPort`.
//! Lists not named there are replaced, as for fields without a strategy.
//! Note that `metadata.finalizers` is a merged set there, as in `ObjectMeta`.
//!
//! JSON patch failures are the real server's generic 422 (whatever the
//! cause) and decoding failures its 400 with Go's decoder wording.
//!
//! Server-side apply and `Update` tracking follow structured-merge-diff and
//! the API server's field manager (see the section comment below for what
//! is modelled). Callers that know the CRD schema, the subresource and the
//! strategy's reset fields should use [`server_side_apply_with`] and
//! [`record_update_with`]; the plain functions assume a built-in kind.
//!
//! - [`json`]: JSON merge patch and JSON patch.
//! - [`strategic`]: strategic merge patch.
//! - [`apply`]: server-side apply and `managedFields` tracking of updates.
//! - [`fieldset`]: field sets in `fieldsV1` shape and the comparison of
//!   two objects over them, which `apply` is built on.

mod apply;
mod fieldset;
mod json;
mod strategic;

pub use apply::{FieldManagerOptions, record_update_with, server_side_apply_with};
pub use json::{json_patch, merge_patch};
pub use strategic::strategic_merge_patch;
