//! A bounded pool: at most `jobs` requests in flight, rules and the
//! requests inside a rule together, and ordered results whatever the
//! parallelism.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// Slots for requests in flight, and the parallel map the rules use.
#[derive(Debug)]
pub struct Pool {
    jobs: usize,
    free: Mutex<usize>,
    freed: Condvar,
}

/// A request slot, given back when dropped.
#[derive(Debug)]
pub struct Slot<'p>(&'p Pool);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut free = self
            .0
            .free
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *free += 1;
        self.0.freed.notify_one();
    }
}

impl Pool {
    /// A pool of `jobs` slots (at least 1).
    pub fn new(jobs: usize) -> Self {
        let jobs = jobs.max(1);
        Self {
            jobs,
            free: Mutex::new(jobs),
            freed: Condvar::new(),
        }
    }

    /// The number of slots.
    pub fn jobs(&self) -> usize {
        self.jobs
    }

    /// Waits for a free slot: a request may be sent while it is held.
    pub fn slot(&self) -> Slot<'_> {
        let mut free = self
            .free
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while *free == 0 {
            free = self
                .freed
                .wait(free)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *free -= 1;
        Slot(self)
    }

    /// `f` over `items` on up to `jobs` threads; the results in the order
    /// of `items`. With one job, on the calling thread.
    pub fn map<T, R, F>(&self, items: &[T], f: F) -> Vec<R>
    where
        T: Sync,
        R: Send,
        F: Fn(&T) -> R + Sync,
    {
        if self.jobs == 1 || items.len() <= 1 {
            return items.iter().map(f).collect();
        }
        let next = AtomicUsize::new(0);
        let threads = self.jobs.min(items.len());
        let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let mut out = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::SeqCst);
                            let Some(item) = items.get(i) else {
                                return out;
                            };
                            out.push((i, f(item)));
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| match h.join() {
                    Ok(out) => out,
                    // A panicking job is a harness bug: let it surface.
                    Err(panic) => std::panic::resume_unwind(panic),
                })
                .collect()
        });
        done.sort_by_key(|(i, _)| *i);
        done.into_iter().map(|(_, r)| r).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn results_keep_their_order_and_slots_bound_concurrency() {
        let pool = Pool::new(4);
        let in_flight = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let items: Vec<u32> = (0..100).collect();
        let out = pool.map(&items, |i| {
            let _slot = pool.slot();
            let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(1));
            in_flight.fetch_sub(1, Ordering::SeqCst);
            i * 2
        });
        assert_eq!(out, items.iter().map(|i| i * 2).collect::<Vec<_>>());
        assert!(most.load(Ordering::SeqCst) <= 4);
        assert_eq!(Pool::new(1).map(&items, |i| *i), items);
    }
}
