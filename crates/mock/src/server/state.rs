//! What the server knows of one connection: its scanner, whether it is
//! answering, its slot under the connection cap, how it must close, and
//! what the byte layer must do to the answers it writes.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, OwnedSemaphorePermit};

use super::byte_layer::{HeadEdit, HeadRewrite};
use super::scanner::{Scanner, Seen};

/// What the server knows of one connection.
#[derive(Debug)]
pub(crate) struct ConnState {
    /// This connection's number, unique in the process.
    pub(crate) id: u64,
    scanner: Mutex<Scanner>,
    in_flight: AtomicUsize,
    /// Milliseconds since `born` when a request began (`u64::MAX`: none).
    busy_since: AtomicU64,
    born: Instant,
    closing: AtomicBool,
    pub(super) close: Notify,
    pub(super) reset: AtomicBool,
    /// The connection's slot under the cap; an idle connection's slot can
    /// be taken by a newcomer (the idle one is then closed).
    slot: Mutex<Option<OwnedSemaphorePermit>>,
    /// Answers given so far (`request-cap` closes after the third).
    answers: AtomicU64,
    /// Nanoseconds since `born` when the last answer was written out
    /// (`u64::MAX`: none yet).
    done_at: AtomicU64,
    /// What the byte layer does to the next final answers' heads, in
    /// order (see `byte_layer`).
    edits: Mutex<VecDeque<HeadEdit>>,
}

impl ConnState {
    /// `rewrite`: a rewrite of request heads before the HTTP layer reads
    /// them (the scanner then holds each head until it ends).
    pub(super) fn new(max_head: usize, rewrite: Option<HeadRewrite>) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        Self {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            scanner: Mutex::new(Scanner::new(max_head, rewrite)),
            in_flight: AtomicUsize::new(0),
            busy_since: AtomicU64::new(u64::MAX),
            born: Instant::now(),
            closing: AtomicBool::new(false),
            close: Notify::new(),
            reset: AtomicBool::new(false),
            slot: Mutex::new(None),
            answers: AtomicU64::new(0),
            done_at: AtomicU64::new(u64::MAX),
            edits: Mutex::new(VecDeque::new()),
        }
    }

    /// Holds `slot` for the connection's life.
    pub(super) fn hold(&self, slot: OwnedSemaphorePermit) {
        *self
            .slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(slot);
    }

    /// Closes the connection, if idle, and gives its slot away.
    pub(super) fn give_up_slot(&self) -> Option<OwnedSemaphorePermit> {
        if !self.is_idle() || self.closing.load(Ordering::SeqCst) {
            return None;
        }
        let slot = self
            .slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()?;
        self.ask_to_close();
        Some(slot)
    }

    pub(super) fn scanner(&self) -> std::sync::MutexGuard<'_, Scanner> {
        // The scanner is only ever fed whole slices: never left half done.
        self.scanner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// No request is being answered (it may be sending a head).
    pub(super) fn is_idle(&self) -> bool {
        self.in_flight.load(Ordering::SeqCst) == 0
    }

    /// Asks the connection to close; false if it already was asked.
    pub(super) fn ask_to_close(&self) -> bool {
        if self.closing.swap(true, Ordering::SeqCst) {
            return false;
        }
        self.close.notify_one();
        true
    }

    /// What the scanner saw of the next request's head, in order.
    pub(super) fn next_head(&self) -> Seen {
        self.scanner().heads.pop_front().unwrap_or_default()
    }

    /// Counts an answer; its number on the connection (from 1).
    pub(super) fn count_answer(&self) -> u64 {
        self.answers.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Whether a request whose head began at `started` arrived pipelined:
    /// before the previous answer on the connection was written out.
    /// (Asked when the request is served, once the previous answer is.)
    pub(super) fn arrived_early(&self, started: Option<Instant>) -> bool {
        let done = self.done_at.load(Ordering::SeqCst);
        started.is_some_and(|s| done != u64::MAX && self.nanos(s) < done)
    }

    /// Since when the connection has been idle after an answer: no
    /// request under way, nothing of a next one received; `None` when
    /// it is not, or has answered nothing yet.
    pub(super) fn idle_since(&self) -> Option<Instant> {
        let done = self.done_at.load(Ordering::SeqCst);
        if done == u64::MAX || !self.is_idle() {
            return None;
        }
        let scanner = self.scanner();
        (scanner.head_started.is_none() && scanner.heads.is_empty())
            .then(|| self.born + Duration::from_nanos(done))
    }

    fn nanos(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.born).as_nanos()).unwrap_or(u64::MAX - 1)
    }

    /// Queues what the byte layer does to the next final answer.
    pub(super) fn push_edit(&self, edit: HeadEdit) {
        self.edits
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push_back(edit);
    }

    /// What the byte layer does to the final answer being written; `None`
    /// for an answer the service did not give (hyper's own errors).
    pub(super) fn next_edit(&self) -> Option<HeadEdit> {
        self.edits
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop_front()
    }

    /// Marks a request as being answered until the guard drops (with the
    /// response body).
    pub(super) fn begin(self: &Arc<Self>) -> Busy {
        if self.in_flight.fetch_add(1, Ordering::SeqCst) == 0 {
            let now = self.born.elapsed().as_millis() as u64;
            self.busy_since.store(now, Ordering::SeqCst);
        }
        Busy(self.clone())
    }

    /// The connection ends with a TCP reset instead of a clean close.
    pub(super) fn reset_on_close(&self) {
        self.reset.store(true, Ordering::SeqCst);
    }

    pub(super) fn head_started(&self) -> Option<Instant> {
        self.scanner().head_started
    }

    pub(super) fn busy_for(&self) -> Option<Duration> {
        let since = self.busy_since.load(Ordering::SeqCst);
        (since != u64::MAX).then(|| {
            self.born
                .elapsed()
                .saturating_sub(Duration::from_millis(since))
        })
    }
}

/// A request being answered; dropped when its response body is.
#[derive(Debug)]
pub(crate) struct Busy(Arc<ConnState>);

impl Drop for Busy {
    fn drop(&mut self) {
        let now = self.0.nanos(Instant::now());
        self.0.done_at.store(now, Ordering::SeqCst);
        if self.0.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.busy_since.store(u64::MAX, Ordering::SeqCst);
        }
    }
}
