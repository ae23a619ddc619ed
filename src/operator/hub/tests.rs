use super::*;

fn hub(leading: watch::Receiver<bool>) -> Hub {
    // Never connected: these tests make no request.
    let config = kube::Config::new("https://127.0.0.1:1".parse().unwrap());
    let client = kube::Client::try_from(config).unwrap();
    Hub::new(Api::all(client), HubConfig::default(), leading)
}

/// A replica that gains the Lease writes only once it has taken leadership
/// in (forgotten what a standby could not verify): a write made before
/// would be remembered, then forgotten, and a forgery right after it
/// restored without being told apart (`hub_truth`). A lost Lease stops
/// writes at once.
#[tokio::test]
async fn a_new_leader_writes_only_once_it_has_taken_leadership_in() {
    let (tx, rx) = watch::channel(false);
    let hub = hub(rx);
    assert!(!hub.is_leader());
    tx.send_replace(true);
    assert!(!hub.is_leader());
    hub.leadership_changed(true);
    assert!(hub.is_leader());
    tx.send_replace(false);
    assert!(!hub.is_leader());
    hub.leadership_changed(false);
    tx.send_replace(true);
    assert!(!hub.is_leader());
}

/// A replica that leads from its start (`--leader-elect=false`) has
/// nothing to forget: it writes at once.
#[tokio::test]
async fn a_hub_leading_from_its_start_writes_at_once() {
    let (_tx, rx) = watch::channel(true);
    assert!(hub(rx).is_leader());
}
