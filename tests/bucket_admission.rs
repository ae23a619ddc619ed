//! A site's bucket label (`federation.kubectl-fleet.dev/bucket`, the first
//! byte of SHA-256 of its name, docs/scaling.md#buckets), through the real
//! binaries and the real kubectl on both lanes: `register` and
//! `register -f` write it and a re-run keeps it, `-l` selects by it; the
//! hub operator, with exactly the RBAC `install` ships, backfills it on a
//! site registered before buckets existed and corrects a wrong one; and
//! the admission policy `fleet-site-bucket` refuses a malformed value
//! from anyone and lets the hub's identity change that label and nothing
//! else of a site.

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use kubectl_fleet::fleet::bucket::{BUCKET_LABEL, bucket_label_value};
use kubectl_fleet::manifests::admission::SITE_BUCKET_POLICY;
use kubectl_fleet::operator;
use serde_json::{Value, json};
use support::{Hub, Kubectl, Lane, Run, hub_operator_args};
use tokio::sync::watch;

const FC: &str = "federatedclusters.federation.kubectl-fleet.dev";

fn kubectl_as(kubeconfig: &Path, args: &[&str]) -> Run {
    Kubectl::new(kubeconfig).args(args).run()
}

fn site(hub: &Hub, name: &str) -> Value {
    hub.kubectl(&["get", "fc", name, "-o", "json"]).ok().json()
}

fn bucket_of(hub: &Hub, name: &str) -> Value {
    site(hub, name)["metadata"]["labels"][BUCKET_LABEL].clone()
}

/// `kubectl get federatedclusters -L BUCKET_LABEL`: each site's name and
/// the BUCKET column, as a user reads them.
fn bucket_column(hub: &Hub) -> Vec<(String, String)> {
    let out = hub
        .kubectl(&["get", "federatedclusters", "-L", BUCKET_LABEL])
        .ok()
        .stdout;
    // Columns are aligned, and cells of a site that never reported are
    // blank: the BUCKET column is read at its header's offset.
    let mut lines = out.lines();
    let col = lines.next().unwrap().find("BUCKET").expect(&out);
    lines
        .map(|l| {
            let name = l.split_whitespace().next().unwrap().to_owned();
            (name, l.get(col..).unwrap_or("").trim().to_owned())
        })
        .collect()
}

/// A hub on `lane` after `kubectl fleet install --apply`, with the bucket
/// policy in force (the real server's admission plugin learns of it a
/// moment after it is written): probed with a server-side dry run of a
/// malformed value, which admission judges and nothing stores.
fn installed_hub(lane: Lane) -> Hub {
    let hub = Hub::bare_on(lane, Default::default());
    let run = hub.fleet(&["install", "--apply"]).ok();
    for kind in [
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    ] {
        assert!(
            run.stderr
                .contains(&format!("{kind} {SITE_BUCKET_POLICY} applied")),
            "{}",
            run.stderr
        );
    }
    hub.fleet(&["register", "probe-site"]).ok();
    let deadline = Instant::now() + Duration::from_secs(20);
    while hub
        .kubectl(&[
            "label",
            "fc",
            "probe-site",
            &format!("{BUCKET_LABEL}=999"),
            "--overwrite",
            "--dry-run=server",
        ])
        .code
        == 0
    {
        assert!(
            Instant::now() < deadline,
            "the bucket policy is not in force after 20s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    hub
}

/// Asserts kubectl was refused by the bucket policy with `message`, as
/// the hub's (403 Forbidden) or as a malformed value (422 Invalid) by
/// `site`'s name.
#[track_caller]
fn assert_refused(run: &Run, site: &str, message: &str) {
    assert_eq!(run.code, 1, "{}", run.stdout);
    let (prefix, reason) = if message == HUB_ONLY {
        (
            format!("Error from server (Forbidden): {FC} \"{site}\" is forbidden: "),
            "",
        )
    } else {
        (
            format!("The federatedclusters \"{site}\" is invalid: "),
            ": ",
        )
    };
    let want = format!(
        "{prefix}{reason}ValidatingAdmissionPolicy '{SITE_BUCKET_POLICY}' with binding '{SITE_BUCKET_POLICY}' denied request: {message}\n"
    );
    assert!(
        run.stderr.ends_with(&want),
        "want …{want}got {}",
        run.stderr
    );
}

/// Waits (bounded) until `kubectl get -L` shows exactly `names`, each with
/// the bucket of its name.
async fn all_right(hub: &Hub, names: &[&str]) {
    let want: Vec<(String, String)> = names
        .iter()
        .map(|n| ((*n).to_owned(), bucket_label_value(n)))
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let buckets = tokio::task::block_in_place(|| bucket_column(hub));
        if buckets == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "not backfilled after 30s: {buckets:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

const MALFORMED: &str = "is a site's bucket, a number from 0 to 255 derived from its name: leave it out and the hub writes it (docs/scaling.md#buckets)";
const HUB_ONLY: &str = "the hub operator may change only the label federation.kubectl-fleet.dev/bucket of a site: its spec, other labels, annotations, finalizers and owners are the administrator's";

on_both_lanes! {
fn register_writes_the_bucket_label_and_a_rerun_keeps_it(lane) {
    let hub = Hub::on(lane);
    hub.fleet(&["register", "site-a", "--region", "eu-west-1"]).ok();
    // An inventory may not choose a site's bucket: its value is replaced.
    let inventory = hub.dir.path().join("sites.yaml");
    std::fs::write(
        &inventory,
        format!(
            "apiVersion: federation.kubectl-fleet.dev/v1alpha1
kind: FederatedCluster
metadata:
  name: site-b
  labels:
    {BUCKET_LABEL}: \"3\"
    team: ml
spec:
  environment: staging
---
apiVersion: federation.kubectl-fleet.dev/v1alpha1
kind: FederatedCluster
metadata:
  name: us-east-1-prod
spec:
  environment: production
"
        ),
    )
    .unwrap();
    let out = hub.dir.path().join("creds");
    hub.fleet(&[
        "register",
        "-f",
        inventory.to_str().unwrap(),
        "--output-dir",
        out.to_str().unwrap(),
    ])
    .ok();
    // The values of fleet::bucket's golden test, as `sha256sum` gives them.
    let want = vec![
        ("site-a".to_owned(), "215".to_owned()),
        ("site-b".to_owned(), "24".to_owned()),
        ("us-east-1-prod".to_owned(), "97".to_owned()),
    ];
    assert_eq!(bucket_column(&hub), want);
    assert_eq!(
        site(&hub, "site-b")["metadata"]["labels"]["team"],
        "ml",
        "the inventory's other labels are kept"
    );
    // A re-run keeps it, as does a re-run that changes the spec; one after
    // a hand edit puts it back.
    hub.fleet(&["register", "site-a", "--region", "eu-west-1"]).ok();
    hub.kubectl(&["label", "fc", "site-a", &format!("{BUCKET_LABEL}=17"), "--overwrite"])
        .ok();
    assert_eq!(bucket_of(&hub, "site-a"), "17");
    hub.fleet(&["register", "site-a", "--region", "eu-west-2"]).ok();
    assert_eq!(bucket_column(&hub), want);
    // A label like any other: `-l` selects by it.
    let run = hub
        .kubectl(&["fleet", "status", "-l", &format!("{BUCKET_LABEL}=97"), "-o", "name"])
        .ok();
    assert_eq!(run.stdout, "federatedcluster.federation.kubectl-fleet.dev/us-east-1-prod\n");
    let run = hub
        .kubectl(&[
            "fleet",
            "status",
            "-l",
            &format!("{BUCKET_LABEL} in (215,24)"),
            "-o",
            "name",
        ])
        .ok();
    assert_eq!(
        run.stdout,
        "federatedcluster.federation.kubectl-fleet.dev/site-a\nfederatedcluster.federation.kubectl-fleet.dev/site-b\n"
    );
}

fn the_hub_may_write_the_bucket_label_and_nothing_else_of_a_site(lane) {
    let hub = installed_hub(lane);
    hub.fleet(&["register", "site-a", "--tier", "critical"]).ok();
    let token = hub
        .kubectl(&["create", "token", "fleet-operator-hub", "-n", "fleet-system"])
        .ok()
        .stdout;
    let hub_kc = hub.dir.path().join("hub-operator.kubeconfig");
    std::fs::write(&hub_kc, hub.sandbox.kubeconfig_for_token(token.trim())).unwrap();
    let before = site(&hub, "site-a");

    // Its one write: the bucket label (`kubectl label` patches).
    kubectl_as(&hub_kc, &["label", "fc", "site-a", &format!("{BUCKET_LABEL}=17"), "--overwrite"]).ok();
    assert_eq!(bucket_of(&hub, "site-a"), "17");
    kubectl_as(&hub_kc, &["label", "fc", "site-a", &format!("{BUCKET_LABEL}=215"), "--overwrite"]).ok();

    // Everything else of the main resource, by every patch kubectl has:
    // refused by the policy (RBAC cannot say which fields a patch touches).
    for args in [
        vec!["patch", "fc", "site-a", "--type=merge", "-p", r#"{"spec":{"tier":"non-critical"}}"#],
        vec!["patch", "fc", "site-a", "--type=json", "-p", r#"[{"op":"replace","path":"/spec/tier","value":"standard"}]"#],
        vec!["patch", "fc", "site-a", "--type=merge", "-p", r#"{"spec":{"tier":"non-critical"},"metadata":{"labels":{"federation.kubectl-fleet.dev/bucket":"215"}}}"#],
        vec!["label", "fc", "site-a", "federation.kubectl-fleet.dev/tier=standard", "--overwrite"],
        vec!["label", "fc", "site-a", "team=hub"],
        vec!["annotate", "fc", "site-a", "note=hub"],
        vec!["patch", "fc", "site-a", "--type=merge", "-p", r#"{"metadata":{"finalizers":["hub/keep"]}}"#],
        vec!["label", "fc", "site-a", "federation.kubectl-fleet.dev/bucket-"],
    ] {
        let run = kubectl_as(&hub_kc, &args);
        assert_refused(&run, "site-a", HUB_ONLY);
    }
    // A replace or a delete is not granted at all.
    let mut replaced = site(&hub, "site-a");
    replaced["spec"]["tier"] = json!("standard");
    let run = Kubectl::new(&hub_kc)
        .args(["replace", "-f", "-"])
        .stdin(replaced.to_string())
        .run();
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr.contains(&format!(
            "{FC} \"site-a\" is forbidden: User \"system:serviceaccount:fleet-system:fleet-operator-hub\" cannot update resource \"federatedclusters\""
        )),
        "{}",
        run.stderr
    );
    let run = kubectl_as(&hub_kc, &["delete", "fc", "site-a"]);
    assert!(run.code == 1 && run.stderr.contains("cannot delete resource"), "{}", run.stderr);
    let after = site(&hub, "site-a");
    assert_eq!(
        (&after["spec"], &after["metadata"]["labels"], &after["metadata"].get("annotations")),
        (&before["spec"], &before["metadata"]["labels"], &before["metadata"].get("annotations"))
    );

    // An administrator: a malformed value is refused, on a new site too;
    // a well-formed one is taken (the hub corrects it), and the spec stays
    // the administrator's.
    for bad in ["256", "017", "x", "1.5"] {
        let run = hub.kubectl(&["label", "fc", "site-a", &format!("{BUCKET_LABEL}={bad}"), "--overwrite"]);
        assert_refused(&run, "site-a", &format!("label {BUCKET_LABEL} {MALFORMED}"));
    }
    let fresh = json!({
        "apiVersion": "federation.kubectl-fleet.dev/v1alpha1", "kind": "FederatedCluster",
        "metadata": {"name": "site-z", "labels": {BUCKET_LABEL: "1000"}},
        "spec": {"environment": "production"},
    });
    let run = Kubectl::new(&hub.kubeconfig)
        .args(["create", "-f", "-"])
        .stdin(fresh.to_string())
        .run();
    assert_refused(&run, "site-z", &format!("label {BUCKET_LABEL} {MALFORMED}"));
    hub.kubectl(&["label", "fc", "site-a", &format!("{BUCKET_LABEL}=17"), "--overwrite"]).ok();
    hub.kubectl(&["patch", "fc", "site-a", "--type=merge", "-p", r#"{"spec":{"tier":"standard"}}"#]).ok();
    assert_eq!(site(&hub, "site-a")["spec"]["tier"], "standard");
}

multi_thread async fn the_hub_backfills_an_old_site_and_corrects_a_wrong_one(lane) {
    let hub = tokio::task::block_in_place(|| installed_hub(lane));
    // Sites as an older release registered them (no bucket label), and
    // one whose label an administrator set by hand to another bucket.
    let old = |name: &str, labels: Value| json!({
        "apiVersion": "federation.kubectl-fleet.dev/v1alpha1", "kind": "FederatedCluster",
        "metadata": {"name": name, "labels": labels},
        "spec": {"environment": "staging", "tier": "critical"},
    });
    let objects = [
        old("old-site", json!({"team": "ml"})),
        old("us-east-1-prod", json!({"team": "ml", BUCKET_LABEL: "17"})),
    ];
    for o in &objects {
        tokio::task::block_in_place(|| {
            Kubectl::new(&hub.kubeconfig).args(["create", "-f", "-"]).stdin(o.to_string()).run().ok()
        });
    }
    let before = tokio::task::block_in_place(|| site(&hub, "old-site"));
    assert!(before["metadata"]["labels"].get(BUCKET_LABEL).is_none());

    // The hub operator with exactly the rights `install` gave it.
    let hub_kc = support::hub_operator_kubeconfig(&hub.sandbox, &hub.dir).await;
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(operator::run_until(hub_operator_args(&hub_kc, 0.1), stopped));
    // Those there when it starts (its first list)...
    all_right(&hub, &["old-site", "probe-site", "us-east-1-prod"]).await;
    // ...and, while it runs, a new site without the label and a label an
    // administrator sets by hand to another bucket (watch events).
    tokio::task::block_in_place(|| {
        Kubectl::new(&hub.kubeconfig)
            .args(["create", "-f", "-"])
            .stdin(old("later-site", json!({"team": "ml"})).to_string())
            .run()
            .ok();
        hub.kubectl(&["label", "fc", "old-site", &format!("{BUCKET_LABEL}=3"), "--overwrite"])
            .ok();
    });
    all_right(&hub, &["later-site", "old-site", "probe-site", "us-east-1-prod"]).await;
    stop.send_replace(true);
    task.await.unwrap().expect("hub stops cleanly");
    // Nothing else of the sites moved.
    for name in ["old-site", "later-site", "us-east-1-prod"] {
        let now = tokio::task::block_in_place(|| site(&hub, name));
        assert_eq!(now["spec"]["tier"], "critical");
        assert_eq!(now["spec"]["environment"], "staging");
        let mut labels = now["metadata"]["labels"].as_object().unwrap().clone();
        labels.remove(BUCKET_LABEL);
        assert_eq!(Value::Object(labels), json!({"team": "ml"}));
    }
}
}
