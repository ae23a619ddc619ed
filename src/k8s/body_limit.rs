//! A cap on what a client reads: a tower layer on kube's client stack that
//! cuts every response body at a per-answer limit and, optionally, charges
//! it against a [`ReadBudget`] shared by all answers of one unit of work
//! (one Pull probe). kube-client reads whole bodies into memory before it
//! decodes them, and a probe's timeout bounds time, not size: without a cap
//! a member that answers 100 MB costs the hub at least that much memory,
//! several times over while it is copied and decoded
//! (docs/pull-mode.md#what-a-probe-may-cost-the-hub).
//!
//! An answer that declares a larger `Content-Length` fails before a byte of
//! it is read; one that streams more fails as soon as it passes the limit,
//! and the connection is dropped with it. The error is [`TooLarge`], found
//! in the error's source chain with [`TooLarge::find`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why an answer was cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TooLarge {
    /// One answer was larger than the per-answer limit.
    #[error("an answer was larger than {limit} bytes")]
    Answer {
        /// The per-answer limit.
        limit: u64,
    },
    /// The answers of one unit of work were larger than its budget.
    #[error("the answers of one read were larger than its budget of {limit} bytes")]
    Budget {
        /// The budget.
        limit: u64,
    },
}

impl TooLarge {
    /// The [`TooLarge`] somewhere in `err`'s source chain, if any.
    pub fn find(err: &(dyn std::error::Error + 'static)) -> Option<TooLarge> {
        let mut cur = Some(err);
        while let Some(e) = cur {
            if let Some(t) = e.downcast_ref::<TooLarge>() {
                return Some(*t);
            }
            cur = e.source();
        }
        None
    }
}

/// Bytes one unit of work may read in all (every answer's body), plus what
/// the reader charges for what it keeps of them ([`ReadBudget::charge`]).
/// Reset before each unit of work.
#[derive(Debug)]
pub struct ReadBudget {
    limit: u64,
    used: AtomicU64,
}

impl ReadBudget {
    /// A budget of `limit` bytes, nothing used.
    pub fn new(limit: u64) -> Arc<Self> {
        Arc::new(Self {
            limit,
            used: AtomicU64::new(0),
        })
    }

    /// The budget.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Bytes charged since the last [`ReadBudget::reset`].
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// Starts a new unit of work.
    pub fn reset(&self) {
        self.used.store(0, Ordering::Relaxed);
    }

    /// Charges `bytes`; an error once the total passes the budget.
    pub fn charge(&self, bytes: u64) -> Result<(), TooLarge> {
        let before = self.used.fetch_add(bytes, Ordering::Relaxed);
        if before.saturating_add(bytes) > self.limit {
            Err(TooLarge::Budget { limit: self.limit })
        } else {
            Ok(())
        }
    }

    fn remaining(&self) -> u64 {
        self.limit.saturating_sub(self.used())
    }
}

/// The layer: cut each answer at `per_answer` bytes, and charge it against
/// `budget` when one is given.
#[derive(Clone, Debug)]
pub struct BodyLimitLayer {
    per_answer: u64,
    budget: Option<Arc<ReadBudget>>,
}

impl BodyLimitLayer {
    /// Cuts every answer at `per_answer` bytes.
    pub fn new(per_answer: u64) -> Self {
        Self {
            per_answer,
            budget: None,
        }
    }

    /// Also charges every answer against `budget`.
    pub fn with_budget(mut self, budget: Arc<ReadBudget>) -> Self {
        self.budget = Some(budget);
        self
    }
}

impl<S> tower_layer::Layer<S> for BodyLimitLayer {
    type Service = BodyLimit<S>;

    fn layer(&self, inner: S) -> Self::Service {
        BodyLimit {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service [`BodyLimitLayer`] makes.
#[derive(Clone, Debug)]
pub struct BodyLimit<S> {
    inner: S,
    layer: BodyLimitLayer,
}

impl<S, Req, B> tower_service::Service<http::Request<Req>> for BodyLimit<S>
where
    S: tower_service::Service<http::Request<Req>, Response = http::Response<B>>,
    S::Future: Send + 'static,
    B: HttpBody<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Response = http::Response<CappedBody<B>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Req>) -> Self::Future {
        let answer = self.inner.call(req);
        let layer = self.layer.clone();
        Box::pin(async move {
            let res = answer.await?;
            let declared = res
                .headers()
                .get(http::header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u64>().ok());
            Ok(res.map(|body| CappedBody::new(body, &layer, declared)))
        })
    }
}

/// A response body cut at the layer's limits.
pub struct CappedBody<B> {
    inner: B,
    read: u64,
    per_answer: u64,
    budget: Option<Arc<ReadBudget>>,
    /// Set when the answer is refused: returned once, then the body ends.
    refused: Option<TooLarge>,
    done: bool,
}

impl<B> CappedBody<B> {
    fn new(inner: B, layer: &BodyLimitLayer, declared: Option<u64>) -> Self {
        // An answer that says up front it is too large is not read at all.
        let refused = declared.and_then(|n| {
            if n > layer.per_answer {
                Some(TooLarge::Answer {
                    limit: layer.per_answer,
                })
            } else {
                layer
                    .budget
                    .as_ref()
                    .filter(|b| n > b.remaining())
                    .map(|b| TooLarge::Budget { limit: b.limit() })
            }
        });
        Self {
            inner,
            read: 0,
            per_answer: layer.per_answer,
            budget: layer.budget.clone(),
            refused,
            done: false,
        }
    }

    fn cut(&mut self, why: TooLarge) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        self.done = true;
        Poll::Ready(Some(Err(Box::new(why))))
    }
}

impl<B> HttpBody for CappedBody<B>
where
    B: HttpBody<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        if let Some(why) = this.refused.take() {
            return this.cut(why);
        }
        if this.done {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    let n = data.len() as u64;
                    this.read = this.read.saturating_add(n);
                    if this.read > this.per_answer {
                        return this.cut(TooLarge::Answer {
                            limit: this.per_answer,
                        });
                    }
                    if let Some(Err(why)) = this.budget.as_ref().map(|b| b.charge(n)) {
                        return this.cut(why);
                    }
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => {
                this.done = true;
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.refused.is_none() && (self.done || self.inner.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        if self.refused.is_some() {
            SizeHint::default()
        } else {
            self.inner.size_hint()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{BodyExt as _, Full, StreamBody};

    type Frames = futures::stream::Iter<std::vec::IntoIter<Result<Frame<Bytes>, BoxError>>>;

    fn chunks(n: usize, size: usize) -> StreamBody<Frames> {
        let frames: Vec<Result<Frame<Bytes>, BoxError>> = (0..n)
            .map(|_| Ok(Frame::data(Bytes::from(vec![b'x'; size]))))
            .collect();
        StreamBody::new(futures::stream::iter(frames))
    }

    async fn read<B>(body: CappedBody<B>) -> Result<usize, TooLarge>
    where
        B: HttpBody<Data = Bytes> + Unpin,
        B::Error: Into<BoxError>,
    {
        body.collect()
            .await
            .map(|c| c.to_bytes().len())
            .map_err(|e| TooLarge::find(e.as_ref()).expect("a TooLarge"))
    }

    #[tokio::test]
    async fn an_answer_within_the_limit_is_read_whole() {
        let layer = BodyLimitLayer::new(100);
        assert_eq!(
            read(CappedBody::new(chunks(10, 10), &layer, None)).await,
            Ok(100)
        );
    }

    #[tokio::test]
    async fn a_larger_answer_is_cut_as_it_streams_or_refused_by_its_length() {
        let layer = BodyLimitLayer::new(100);
        assert_eq!(
            read(CappedBody::new(chunks(11, 10), &layer, None)).await,
            Err(TooLarge::Answer { limit: 100 })
        );
        let full = Full::new(Bytes::from_static(b"never read"));
        assert_eq!(
            read(CappedBody::new(full, &layer, Some(1 << 30))).await,
            Err(TooLarge::Answer { limit: 100 })
        );
    }

    #[tokio::test]
    async fn the_budget_counts_every_answer_and_what_the_reader_charges() {
        let budget = ReadBudget::new(250);
        let layer = BodyLimitLayer::new(100).with_budget(budget.clone());
        assert_eq!(
            read(CappedBody::new(chunks(10, 10), &layer, None)).await,
            Ok(100)
        );
        assert_eq!(budget.charge(100), Ok(()));
        assert_eq!(
            read(CappedBody::new(chunks(10, 10), &layer, None)).await,
            Err(TooLarge::Budget { limit: 250 })
        );
        budget.reset();
        assert_eq!(budget.used(), 0);
        assert_eq!(
            read(CappedBody::new(Full::new(Bytes::new()), &layer, Some(300))).await,
            Err(TooLarge::Answer { limit: 100 })
        );
        budget.charge(200).unwrap();
        assert_eq!(
            read(CappedBody::new(Full::new(Bytes::new()), &layer, Some(60))).await,
            Err(TooLarge::Budget { limit: 250 }),
            "a declared length beyond what is left is refused up front"
        );
    }
}
