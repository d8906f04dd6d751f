//! What the server knows of one connection: its scanner, whether it is
//! answering, its slot under the connection cap, and how it must close.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, OwnedSemaphorePermit};

use super::scanner::{Framing, Scanner};

/// What the server knows of one connection.
#[derive(Debug)]
pub(crate) struct ConnState {
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
}

impl ConnState {
    pub(super) fn new(max_head: usize) -> Self {
        Self {
            scanner: Mutex::new(Scanner::new(max_head)),
            in_flight: AtomicUsize::new(0),
            busy_since: AtomicU64::new(u64::MAX),
            born: Instant::now(),
            closing: AtomicBool::new(false),
            close: Notify::new(),
            reset: AtomicBool::new(false),
            slot: Mutex::new(None),
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

    /// The framing of the next request, in order.
    pub(super) fn next_framing(&self) -> Framing {
        self.scanner()
            .verdicts
            .pop_front()
            .unwrap_or(Framing::Plain)
    }

    /// The key header's name as the next request spelled it, in order
    /// (taken with [`ConnState::next_framing`]).
    pub(super) fn next_key_name(&self) -> Option<String> {
        self.scanner().key_names.pop_front().flatten()
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
        if self.0.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.busy_since.store(u64::MAX, Ordering::SeqCst);
        }
    }
}
