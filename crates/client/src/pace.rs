//! Request pacing: at most so many requests a second, a client and its
//! clones together.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The least time between two requests, and when the next may leave.
#[derive(Debug)]
pub(crate) struct Pacer {
    interval: Duration,
    next: Mutex<Option<Instant>>,
}

impl Pacer {
    pub(crate) fn new(interval: Duration) -> Self {
        Self {
            interval,
            next: Mutex::new(None),
        }
    }

    /// Waits for this request's turn: turns are handed out in order, one
    /// `interval` apart, so threads sharing a client share the rate.
    pub(crate) fn wait(&self) {
        let now = Instant::now();
        let at = {
            let mut next = self
                .next
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let at = next.map_or(now, |n| n.max(now));
            *next = Some(at + self.interval);
            at
        };
        if at > now {
            std::thread::sleep(at - now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_are_an_interval_apart() {
        let pacer = Pacer::new(Duration::from_millis(20));
        let started = Instant::now();
        for _ in 0..4 {
            pacer.wait();
        }
        // Three intervals at least after the first turn.
        assert!(started.elapsed() >= Duration::from_millis(60));
    }
}
