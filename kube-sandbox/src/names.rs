//! The name rules of Kubernetes objects (RFC 1123 labels and subdomains)
//! and the messages the real server gives: a leaf that objects and
//! admission share.

use crate::resources::NameRule;

pub(crate) const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Messages of the name rule violated by `name` (empty = valid).
pub fn name_errors(rule: NameRule, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    match rule {
        NameRule::Label => {
            if name.len() > 63 {
                out.push("must be no more than 63 characters".to_string());
            }
            if !is_label(name) {
                out.push(LABEL_MSG.to_string());
            }
        }
        NameRule::Subdomain => {
            if name.len() > 253 {
                out.push("must be no more than 253 characters".to_string());
            }
            if !name.split('.').all(is_label) {
                out.push(SUBDOMAIN_MSG.to_string());
            }
        }
        NameRule::PathSegment => {
            if name == "." || name == ".." {
                out.push(format!("may not be '{name}'"));
            }
            for bad in ["/", "%"] {
                if name.contains(bad) {
                    out.push(format!("may not contain '{bad}'"));
                }
            }
        }
    }
    out
}
