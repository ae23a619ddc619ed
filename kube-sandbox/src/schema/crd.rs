//! Validation of a CustomResourceDefinition object itself: names, scope,
//! versions, schemas and printer columns.

use super::*;

/// Validates a CustomResourceDefinition object itself (names, scope,
/// versions, exactly one storage version, schemas). Empty = valid.
pub fn validate_crd(crd: &Value) -> Vec<Cause> {
    let mut errs = Vec::new();
    let spec = &crd["spec"];
    let group = spec["group"].as_str().unwrap_or_default();
    let names = &spec["names"];
    let plural = names["plural"].as_str().unwrap_or_default();
    let kind = names["kind"].as_str().unwrap_or_default();
    let name = crd["metadata"]["name"].as_str().unwrap_or_default();

    if name.is_empty() {
        errs.push(Cause::new(
            "FieldValueRequired",
            "metadata.name",
            "Required value: name or generateName is required",
        ));
    } else {
        for e in crate::selector::dns1123_subdomain_errors(name) {
            errs.push(Cause::new(
                "FieldValueInvalid",
                "metadata.name",
                format!(
                    "Invalid value: {}: {}",
                    quote(name),
                    e.replace("bytes", "characters")
                ),
            ));
        }
        if name != format!("{plural}.{group}") {
            errs.push(Cause::new(
                "FieldValueInvalid",
                "metadata.name",
                format!(
                    "Invalid value: {}: must be spec.names.plural+\".\"+spec.group",
                    quote(name)
                ),
            ));
        }
    }

    if group.is_empty() {
        errs.push(Cause::new(
            "FieldValueRequired",
            "spec.group",
            "Required value",
        ));
    } else {
        let e = crate::selector::dns1123_subdomain_errors(group);
        if !e.is_empty() {
            errs.push(Cause::new(
                "FieldValueInvalid",
                "spec.group",
                format!(
                    "Invalid value: {}: {}",
                    quote(group),
                    e.join(",").replace("bytes", "characters")
                ),
            ));
        } else if !group.contains('.') {
            errs.push(Cause::new(
                "FieldValueInvalid",
                "spec.group",
                format!(
                    "Invalid value: {}: should be a domain with at least one dot",
                    quote(group)
                ),
            ));
        }
    }

    match spec["scope"].as_str().unwrap_or_default() {
        "" => errs.push(Cause::new(
            "FieldValueRequired",
            "spec.scope",
            "Required value",
        )),
        "Cluster" | "Namespaced" => {}
        other => errs.push(Cause::new(
            "FieldValueNotSupported",
            "spec.scope",
            format!(
                "Unsupported value: {}: supported values: \"Cluster\", \"Namespaced\"",
                quote(other)
            ),
        )),
    }

    let empty = Vec::new();
    let versions = spec["versions"].as_array().unwrap_or(&empty);
    let mut storage = 0;
    let mut seen = std::collections::HashSet::new();
    let mut unique = true;
    for (i, v) in versions.iter().enumerate() {
        let vname = v["name"].as_str().unwrap_or_default();
        if v["storage"].as_bool() == Some(true) {
            storage += 1;
        }
        if !seen.insert(vname) {
            unique = false;
        }
        let e = dns1035_errors(vname);
        if !e.is_empty() {
            errs.push(Cause::new(
                "FieldValueInvalid",
                format!("spec.versions[{i}].name"),
                format!("Invalid value: {}: {}", quote(vname), e.join(",")),
            ));
        }
        match v.get("schema").and_then(|s| s.get("openAPIV3Schema")) {
            None => errs.push(Cause::new(
                "FieldValueRequired",
                format!("spec.versions[{i}].schema.openAPIV3Schema"),
                "Required value",
            )),
            Some(s) => {
                if let Err(causes) = Schema::new(s) {
                    errs.extend(causes.into_iter().map(|c| Cause {
                        field: format!("spec.versions[{i}].schema.{}", c.field),
                        ..c
                    }));
                }
            }
        }
        if let Some(cols) = v["additionalPrinterColumns"].as_array() {
            for (j, c) in cols.iter().enumerate() {
                errs.extend(validate_column(
                    c,
                    &format!("spec.versions[{i}].additionalPrinterColumns[{j}]"),
                ));
            }
        }
    }
    if !unique {
        errs.push(Cause::new(
            "FieldValueInvalid",
            "spec.versions",
            format!(
                "Invalid value: {}: must contain unique version names",
                Value::Array(versions.clone())
            ),
        ));
    }
    if storage != 1 {
        errs.push(Cause::new(
            "FieldValueInvalid",
            "spec.versions",
            format!(
                "Invalid value: {}: must have exactly one version marked as storage version",
                Value::Array(versions.clone())
            ),
        ));
    }

    if plural.is_empty() {
        errs.push(Cause::new(
            "FieldValueRequired",
            "spec.names.plural",
            "Required value",
        ));
    }
    if kind.is_empty() {
        // singular and listKind default from kind, so they go missing with it.
        if names["singular"].as_str().unwrap_or_default().is_empty() {
            errs.push(Cause::new(
                "FieldValueRequired",
                "spec.names.singular",
                "Required value",
            ));
        }
        errs.push(Cause::new(
            "FieldValueRequired",
            "spec.names.kind",
            "Required value",
        ));
        if names["listKind"].as_str().unwrap_or_default().is_empty() {
            errs.push(Cause::new(
                "FieldValueRequired",
                "spec.names.listKind",
                "Required value",
            ));
        }
    }
    let check = |field: &str, v: &str, lower: bool, errs: &mut Vec<Cause>| {
        if v.is_empty() {
            return;
        }
        let e = dns1035_errors(&if lower {
            v.to_lowercase()
        } else {
            v.to_string()
        });
        if !e.is_empty() {
            let prefix = if lower {
                "may have mixed case, but should otherwise match: "
            } else {
                ""
            };
            errs.push(Cause::new(
                "FieldValueInvalid",
                field,
                format!("Invalid value: {}: {prefix}{}", quote(v), e.join(",")),
            ));
        }
    };
    check("spec.names.plural", plural, false, &mut errs);
    check(
        "spec.names.singular",
        names["singular"].as_str().unwrap_or_default(),
        false,
        &mut errs,
    );
    check("spec.names.kind", kind, true, &mut errs);
    let list_kind = names["listKind"].as_str().unwrap_or_default();
    check("spec.names.listKind", list_kind, true, &mut errs);
    for (field, list) in [
        ("shortNames", &names["shortNames"]),
        ("categories", &names["categories"]),
    ] {
        for (i, s) in list.as_array().unwrap_or(&empty).iter().enumerate() {
            check(
                &format!("spec.names.{field}[{i}]"),
                s.as_str().unwrap_or_default(),
                false,
                &mut errs,
            );
        }
    }
    if !kind.is_empty() && kind == list_kind {
        errs.push(Cause::new(
            "FieldValueInvalid",
            "spec.names.listKind",
            format!(
                "Invalid value: {}: kind and listKind may not be the same",
                quote(list_kind)
            ),
        ));
    }
    errs
}

pub(super) fn dns1035_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    let b = v.as_bytes();
    let ok = !b.is_empty()
        && b[0].is_ascii_lowercase()
        && (b[b.len() - 1].is_ascii_lowercase() || b[b.len() - 1].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-');
    if !ok {
        errs.push("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".to_string());
    }
    errs
}

pub(super) fn validate_column(c: &Value, path: &str) -> Vec<Cause> {
    let mut errs = Vec::new();
    let types = "array,boolean,date,integer,number,object,string";
    if c["name"].as_str().unwrap_or_default().is_empty() {
        errs.push(Cause::new(
            "FieldValueRequired",
            format!("{path}.name"),
            "Required value",
        ));
    }
    match c["type"].as_str().unwrap_or_default() {
        "" => errs.push(Cause::new(
            "FieldValueRequired",
            format!("{path}.type"),
            format!("Required value: must be one of {types}"),
        )),
        "array" | "boolean" | "date" | "integer" | "number" | "object" | "string" => {}
        t => errs.push(Cause::new(
            "FieldValueInvalid",
            format!("{path}.type"),
            format!("Invalid value: {}: must be one of {types}", quote(t)),
        )),
    }
    let fmt = c["format"].as_str().unwrap_or_default();
    let formats = "byte,date,date-time,double,float,int32,int64,password";
    if !fmt.is_empty() && !formats.split(',').any(|f| f == fmt) {
        errs.push(Cause::new(
            "FieldValueInvalid",
            format!("{path}.format"),
            format!("Invalid value: {}: must be one of {formats}", quote(fmt)),
        ));
    }
    if c["jsonPath"].as_str().unwrap_or_default().is_empty() {
        errs.push(Cause::new(
            "FieldValueRequired",
            format!("{path}.jsonPath"),
            "Required value",
        ));
    }
    errs
}
