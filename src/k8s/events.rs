//! Kubernetes Events of the hub, written through kube's event recorder
//! (`events.k8s.io/v1`; an object's repeats within its cache time are one
//! Event whose `series` is patched). What to record, and how often, is
//! decided in `operator::events`.

use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event, Recorder, Reporter};

/// The hub's recorder, reporting as `controller` (instance: the replica).
#[derive(Clone)]
pub struct EventRecorder(Recorder);

impl EventRecorder {
    /// A recorder writing with `client`.
    pub fn new(client: kube::Client, controller: &str, instance: &str) -> Self {
        EventRecorder(Recorder::new(
            client,
            Reporter {
                controller: controller.to_owned(),
                instance: Some(instance.to_owned()),
            },
        ))
    }

    /// Records `event` about `regarding` (an object of a cluster-scoped
    /// kind: in `default`, as Kubernetes records them).
    pub async fn publish(
        &self,
        event: &Event,
        regarding: &ObjectReference,
    ) -> Result<(), kube::Error> {
        self.0.publish(event, regarding).await
    }
}
