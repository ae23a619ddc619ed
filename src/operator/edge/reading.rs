//! A reading of the member cluster kept across reports (see [`Reading`]).

use std::time::Duration;

use crate::k8s::member::{MemberError, MemberObjects, read_member};

/// A reading of the member cluster that may outlive the report that
/// started it: a member slower than half an interval to read (a very large
/// cluster, or a far one) is still read, and reported a heartbeat later.
/// It is a future the edge polls while a report waits for it and while it
/// waits for the next report ([`Reading::finish`]): no task of its own (one
/// cost fleet-operator 296 KB).
pub(super) struct Reading {
    /// The reading itself.
    pub(super) read: futures::future::BoxFuture<'static, Result<MemberObjects, MemberError>>,
    /// What it read, once it has finished between two reports, and how
    /// long it took.
    pub(super) done: Option<(Result<MemberObjects, MemberError>, Duration)>,
    /// When it started.
    pub(super) started: std::time::Instant,
}

impl Reading {
    /// Starts reading `member`.
    pub(super) fn start(member: &kube::Client) -> Self {
        let member = member.clone();
        Reading {
            read: Box::pin(async move { read_member(&member).await }),
            done: None,
            started: std::time::Instant::now(),
        }
    }

    /// Reads on until the reading is done (between two reports).
    pub(super) async fn finish(&mut self) {
        if self.done.is_none() {
            let read = (&mut self.read).await;
            self.done = Some((read, self.started.elapsed()));
        }
    }
}
