//! Response bodies: whole, or broken on purpose (a fault or chaos).

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

use super::state::{Busy, ConnState};

/// How a body goes out.
#[derive(Debug)]
enum Shape {
    /// All of it, with its length.
    Whole(Option<Bytes>),
    /// In pieces without a length (the `chunked` fault).
    Chunked(VecDeque<Bytes>),
    /// Half of it, then the connection ends: cleanly (`truncate`) or with a
    /// reset (`reset`). The head announced the whole length.
    Cut {
        half: Option<Bytes>,
        whole: u64,
        reset: Option<Arc<ConnState>>,
        /// A pause after the half, so that it is flushed to the client
        /// before the connection ends.
        pause: Option<Pin<Box<tokio::time::Sleep>>>,
    },
    /// In pieces spread over a while (`slow`).
    Slow {
        pieces: VecDeque<Bytes>,
        whole: u64,
        gap: Duration,
        wait: Option<Pin<Box<tokio::time::Sleep>>>,
    },
}

/// A response body. It holds the request's [`Busy`] guard, so that the
/// connection counts as busy until the body is written.
#[derive(Debug)]
pub(crate) struct MockBody {
    shape: Shape,
    _busy: Option<Busy>,
}

/// The error that ends a cut body: the HTTP layer then drops the
/// connection.
#[derive(Debug, thiserror::Error)]
#[error("the body is cut short on purpose")]
pub(crate) struct Cut;

/// `bytes` in `n` pieces of about the same size.
fn pieces(bytes: Bytes, n: usize) -> VecDeque<Bytes> {
    let size = bytes.len().div_ceil(n.max(1)).max(1);
    let mut out = VecDeque::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        out.push_back(rest.split_to(size.min(rest.len())));
    }
    out
}

impl MockBody {
    pub(crate) fn whole(bytes: Vec<u8>, busy: Option<Busy>) -> Self {
        Self {
            shape: Shape::Whole(Some(Bytes::from(bytes))),
            _busy: busy,
        }
    }

    pub(crate) fn chunked(bytes: Vec<u8>, busy: Option<Busy>) -> Self {
        Self {
            shape: Shape::Chunked(pieces(Bytes::from(bytes), 3)),
            _busy: busy,
        }
    }

    /// Half the body, then a clean close (`reset` None) or a reset.
    pub(crate) fn cut(bytes: Vec<u8>, reset: Option<Arc<ConnState>>, busy: Option<Busy>) -> Self {
        let whole = bytes.len() as u64;
        let mut bytes = Bytes::from(bytes);
        let half = bytes.split_to(bytes.len() / 2);
        Self {
            shape: Shape::Cut {
                half: Some(half),
                whole,
                reset,
                pause: None,
            },
            _busy: busy,
        }
    }

    /// The body in 16 pieces over `over`.
    pub(crate) fn slow(bytes: Vec<u8>, over: Duration, busy: Option<Busy>) -> Self {
        let whole = bytes.len() as u64;
        let pieces = pieces(Bytes::from(bytes), 16);
        let gap = over / (pieces.len().max(1) as u32);
        Self {
            shape: Shape::Slow {
                pieces,
                whole,
                gap,
                wait: None,
            },
            _busy: busy,
        }
    }
}

impl Body for MockBody {
    type Data = Bytes;
    type Error = Cut;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Cut>>> {
        match &mut self.shape {
            Shape::Whole(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Shape::Chunked(pieces) => Poll::Ready(pieces.pop_front().map(|b| Ok(Frame::data(b)))),
            Shape::Cut {
                half, reset, pause, ..
            } => {
                if let Some(b) = half.take() {
                    return Poll::Ready(Some(Ok(Frame::data(b))));
                }
                let pause = pause.get_or_insert_with(|| {
                    Box::pin(tokio::time::sleep(std::time::Duration::from_millis(50)))
                });
                if pause.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                if let Some(state) = reset.take() {
                    state.reset_on_close();
                }
                Poll::Ready(Some(Err(Cut)))
            }
            Shape::Slow {
                pieces, gap, wait, ..
            } => {
                if let Some(sleep) = wait {
                    if sleep.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    *wait = None;
                    return Poll::Ready(pieces.pop_front().map(|b| Ok(Frame::data(b))));
                }
                if pieces.is_empty() {
                    return Poll::Ready(None);
                }
                *wait = Some(Box::pin(tokio::time::sleep(*gap)));
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.shape {
            Shape::Whole(bytes) => bytes.is_none(),
            Shape::Chunked(pieces) => pieces.is_empty(),
            Shape::Cut { .. } => false,
            Shape::Slow { pieces, wait, .. } => pieces.is_empty() && wait.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.shape {
            Shape::Whole(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            Shape::Chunked(_) => SizeHint::default(),
            Shape::Cut { whole, .. } | Shape::Slow { whole, .. } => SizeHint::with_exact(*whole),
        }
    }
}
