//! CustomResourceDefinitions as the real server keeps them: defaults and
//! `storedVersions` on write, the controllers that accept names and
//! establish, the cleanup finalizer while a CRD terminates.

use super::*;

/// Fills in what the real server defaults on a CRD and the status its
/// storage keeps up to date on every write: `storedVersions` gains the
/// storage version. A new CRD starts with no conditions and no accepted
/// names; the controllers ([`run_crd_controllers`]) accept its names and
/// establish it in a write of their own, as the real ones do.
pub(super) fn prepare_crd(crd: &mut Value, old: Option<&Value>) {
    let kind = crd["spec"]["names"]["kind"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let names = &mut crd["spec"]["names"];
    if names.get("singular").is_none_or(Value::is_null) {
        names["singular"] = json!(kind.to_lowercase());
    }
    if names.get("listKind").is_none_or(Value::is_null) {
        names["listKind"] = json!(format!("{kind}List"));
    }
    if crd["spec"].get("conversion").is_none_or(Value::is_null) {
        crd["spec"]["conversion"] = json!({"strategy": "None"});
    }
    let stored: Vec<Value> = crd["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["storage"] == Value::Bool(true))
        .map(|v| v["name"].clone())
        .collect();
    let mut status = match old {
        Some(old) => old["status"].clone(),
        None => json!({"conditions": null, "acceptedNames": {"plural": "", "kind": ""}}),
    };
    let mut stored_versions = status["storedVersions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for v in stored {
        if !stored_versions.contains(&v) {
            stored_versions.push(v);
        }
    }
    status["storedVersions"] = json!(stored_versions);
    crd["status"] = status;
}

/// Whether the CRD of a custom resource is being deleted.
pub(super) fn crd_terminating(st: &State, def: &ResourceDef) -> bool {
    let crds = GroupResource {
        group: "apiextensions.k8s.io".into(),
        resource: "customresourcedefinitions".into(),
    };
    let key = (String::new(), format!("{}.{}", def.plural, def.group));
    st.get(&crds, &key).is_some_and(|c| is_deleting(c))
}

/// The CRD's finalizer while its objects are deleted.
pub(super) const CRD_CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// Sets condition `type_` of a CRD's status, keeping its
/// `lastTransitionTime` when the status does not change.
pub(super) fn set_crd_condition(
    crd: &mut Value,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
) {
    let mut conditions = crd["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let since = conditions
        .iter()
        .find(|c| c["type"] == type_ && c["status"] == status)
        .map(|c| c["lastTransitionTime"].clone())
        .unwrap_or_else(|| json!(now_rfc3339()));
    let condition = json!({"type": type_, "status": status, "lastTransitionTime": since,
                           "reason": reason, "message": message});
    match conditions.iter().position(|c| c["type"] == type_) {
        Some(i) => conditions[i] = condition,
        None => conditions.push(condition),
    }
    crd["status"]["conditions"] = json!(conditions);
}

/// Writes a CRD's status as its controllers do (manager `kube-apiserver`,
/// subresource `status`).
pub(super) fn put_crd_status(
    st: &mut State,
    def: &ResourceDef,
    key: &ObjKey,
    old: &Value,
    mut new: Value,
) {
    if new == *old {
        return;
    }
    patch::record_update_with(
        Some(old),
        &mut new,
        "kube-apiserver",
        field_manager_options(def, Some("status")),
    );
    st.put(&def.storage_key(), key.clone(), new);
}

/// What the apiextensions-apiserver's controllers do after a write of a
/// CRD, done at once: accept its names and establish it (the naming and
/// establishing controllers), or, once it is marked for deletion, delete
/// its objects and then let it go (the finalizer controller). Objects with
/// finalizers of their own keep it, terminating, until they are gone.
pub(super) fn run_crd_controllers(st: &mut State, key: &ObjKey) {
    let Some(def) = st
        .catalogue
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .cloned()
    else {
        return;
    };
    let gr = def.storage_key();
    let Some(old) = st.get(&gr, key).cloned() else {
        return;
    };
    let mut crd = (*old).clone();
    if !is_deleting(&crd) {
        crd["status"]["acceptedNames"] = crd["spec"]["names"].clone();
        set_crd_condition(
            &mut crd,
            "NamesAccepted",
            "True",
            "NoConflicts",
            "no conflicts found",
        );
        set_crd_condition(
            &mut crd,
            "Established",
            "True",
            "InitialNamesAccepted",
            "the initial names have been accepted",
        );
        put_crd_status(st, &def, key, &old, crd);
        return;
    }
    if !finalizers(&crd).iter().any(|f| f == CRD_CLEANUP_FINALIZER) {
        return;
    }
    let cr = GroupResource {
        group: str_of(&crd["spec"], "group").to_string(),
        resource: str_of(&crd["spec"]["names"], "plural").to_string(),
    };
    if let Some(cr_def) = st.catalogue.any_version(&cr).cloned() {
        for k in st.keys(&cr, None) {
            let _ = delete(
                st,
                &cr_def,
                &k,
                &Preconditions::default(),
                &WriteOpts::default(),
            );
        }
    }
    if !st.keys(&cr, None).is_empty() {
        set_crd_condition(
            &mut crd,
            "Terminating",
            "True",
            "InstanceDeletionInProgress",
            "CustomResource deletion is in progress",
        );
        put_crd_status(st, &def, key, &old, crd);
        return;
    }
    set_crd_condition(
        &mut crd,
        "Terminating",
        "False",
        "InstanceDeletionCompleted",
        "removed all instances",
    );
    if let Some(list) = meta_mut(&mut crd)
        .get_mut("finalizers")
        .and_then(Value::as_array_mut)
    {
        list.retain(|f| f != CRD_CLEANUP_FINALIZER);
    }
    put_crd_status(st, &def, key, &old, crd);
    finish_delete(st, &def, key);
}

/// Validates a CRD and checks its name is `plural.group`.
pub(super) fn check_crd(crd: &Value, name: &str) -> Vec<Cause> {
    let mut causes = schema::validate_crd(crd);
    let expected = format!(
        "{}.{}",
        str_of(&crd["spec"]["names"], "plural"),
        str_of(&crd["spec"], "group")
    );
    if name != expected && causes.is_empty() {
        causes.push(Cause::new(
            "FieldValueInvalid",
            "metadata.name",
            format!(
                "{}: must be spec.names.plural+\".\"+spec.group",
                invalid_value(&json!(name))
            ),
        ));
    }
    causes
}
