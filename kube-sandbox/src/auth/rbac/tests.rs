//! The RBAC decision table: one row per rule form.

use super::*;
