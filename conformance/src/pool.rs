//! A bounded pool: at most `jobs` requests in flight, rules and the
//! requests inside a rule together, and ordered results whatever the
//! parallelism.
//!
//! The bound adapts: a connection that fails (refused, reset) halves the
//! requests allowed in flight, down to one, and answers win the slots
//! back one at a time. A server with a small listen backlog is then not
//! reset again and again by the harness's own load.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// Slots for requests in flight, and the parallel map the rules use.
///
/// Each turn waits on a condition variable of its own, and a freed slot
/// wakes one waiter of the first turn that has any: waking every waiter
/// on each freed slot (a thundering herd of up to hundreds of threads)
/// spent more of the run's CPU than judging the answers did.
#[derive(Debug)]
pub struct Pool {
    jobs: usize,
    state: Mutex<State>,
    /// One per [`Turn`], in its order.
    freed: [Condvar; TURNS],
}

#[derive(Debug)]
struct State {
    in_flight: usize,
    /// Requests allowed in flight now (1..=jobs).
    allowed: usize,
    /// Answers since `allowed` last changed.
    answers: usize,
    /// Requests waiting for a slot, by [`Turn`]: a request waits behind
    /// every request of an earlier turn.
    waiting: [usize; TURNS],
}

impl State {
    /// True when a request of `turn` may take a slot now.
    fn may_go(&self, turn: Turn, slots: usize) -> bool {
        self.in_flight + slots.min(self.allowed) <= self.allowed
            && self.waiting[..turn as usize].iter().all(|w| *w == 0)
    }

    /// The turn whose first waiter should take the next free slot, if a
    /// slot is free and anyone waits.
    fn next(&self) -> Option<usize> {
        if self.in_flight >= self.allowed {
            return None;
        }
        self.waiting.iter().position(|w| *w > 0)
    }
}

/// How a thread's requests queue for a slot, in the order they are
/// served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Turn {
    /// Before any other ([`urgent`]).
    Urgent = 0,
    /// In turn.
    Normal = 1,
    /// After every request that is not patient ([`patient`]).
    Patient = 2,
}

const TURNS: usize = 3;

thread_local! {
    /// How this thread's requests queue ([`urgent`], [`patient`]); the
    /// threads of [`Pool::map`] take their caller's.
    static TURN: std::cell::Cell<Turn> = const { std::cell::Cell::new(Turn::Normal) };
}

/// This thread's turn as it was, given back when dropped: a rule that
/// panics inside [`patient`] (the runner catches the panic and the thread
/// goes on to the next rule) must not leave the thread's later rules in
/// its turn.
struct TurnBack(Turn);

impl Drop for TurnBack {
    fn drop(&mut self) {
        TURN.with(|t| t.set(self.0));
    }
}

fn with_turn<R>(turn: Turn, f: impl FnOnce() -> R) -> R {
    let _back = TurnBack(TURN.with(|t| t.replace(turn)));
    f()
}

/// Runs `f` with this thread's requests urgent: each takes the next free
/// slot before any request that is not. For a chain of requests sent one
/// after another (the random sequences), whose every wait behind another
/// rule's burst adds to the run's length; a burst waits as long either
/// way.
pub fn urgent<R>(f: impl FnOnce() -> R) -> R {
    with_turn(Turn::Urgent, f)
}

/// Runs `f` with this thread's requests patient: each takes a free slot
/// only when no other request waits for one. For a burst of many
/// requests side by side (the families of properties), which then fills
/// the waits of the others' chains instead of lengthening them.
pub fn patient<R>(f: impl FnOnce() -> R) -> R {
    with_turn(Turn::Patient, f)
}

/// A request slot, given back when dropped.
#[derive(Debug)]
pub struct Slot<'p>(&'p Pool);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.in_flight -= 1;
        self.0.wake(&state);
    }
}

impl Pool {
    /// A pool of `jobs` slots (at least 1).
    pub fn new(jobs: usize) -> Self {
        let jobs = jobs.max(1);
        Self {
            jobs,
            state: Mutex::new(State {
                in_flight: 0,
                allowed: jobs,
                answers: 0,
                waiting: [0; TURNS],
            }),
            freed: std::array::from_fn(|_| Condvar::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The number of slots.
    pub fn jobs(&self) -> usize {
        self.jobs
    }

    /// Requests allowed in flight now.
    pub fn allowed(&self) -> usize {
        self.lock().allowed
    }

    /// Wakes one waiter of the first turn that has any, if a slot is free.
    /// A woken waiter that takes its slot wakes the next one the same
    /// way, so a free slot is never left while someone waits for it.
    fn wake(&self, state: &State) {
        if let Some(turn) = state.next() {
            self.freed[turn].notify_one();
        }
    }

    /// Waits for a free slot: a request may be sent while it is held.
    pub fn slot(&self) -> Slot<'_> {
        self.take(1);
        Slot(self)
    }

    /// Waits until `n` slots are free at once (as many as are allowed,
    /// if fewer), and takes them together: for requests that must be in
    /// flight at the same time. Taken one by one, two callers could each
    /// hold a part and wait for the rest forever.
    pub fn slots(&self, n: usize) -> Vec<Slot<'_>> {
        let taken = self.take(n);
        (0..taken).map(|_| Slot(self)).collect()
    }

    /// Takes `n` slots (at most as many as are allowed) when its turn
    /// comes; how many it took.
    fn take(&self, n: usize) -> usize {
        let turn = TURN.with(std::cell::Cell::get);
        let mut state = self.lock();
        state.waiting[turn as usize] += 1;
        while !state.may_go(turn, n) {
            state = self.freed[turn as usize]
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            // Woken for a slot it cannot use yet (it waits for several):
            // another waiter of its turn may use it.
            if n > 1 && !state.may_go(turn, n) && state.waiting[turn as usize] > 1 {
                self.freed[turn as usize].notify_one();
            }
        }
        let taken = n.min(state.allowed);
        state.waiting[turn as usize] -= 1;
        state.in_flight += taken;
        self.wake(&state);
        taken
    }

    /// A connection failed: halve the requests in flight.
    pub fn connection_failed(&self) {
        let mut state = self.lock();
        state.allowed = (state.allowed / 2).max(1);
        state.answers = 0;
    }

    /// An answer came: after as many answers as slots, one slot more.
    pub fn succeeded(&self) {
        let mut state = self.lock();
        if state.allowed < self.jobs {
            state.answers += 1;
            if state.answers >= state.allowed {
                state.allowed += 1;
                state.answers = 0;
                self.wake(&state);
            }
        }
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
        let turn = TURN.with(std::cell::Cell::get);
        let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        with_turn(turn, || {
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

    type Order = std::sync::Mutex<Vec<&'static str>>;

    /// The order in which `pool` serves the requests of `first` (started
    /// while its one free slot is held) and of `then` (started once
    /// `then_waits` sees it waiting), the slot given back after both.
    fn served(
        pool: &Pool,
        first: impl FnOnce(&Pool, &Order) + Send,
        then: impl FnOnce(&Pool, &Order) + Send,
        then_waits: fn(&State) -> bool,
    ) -> Vec<&'static str> {
        let order = Order::new(Vec::new());
        std::thread::scope(|scope| {
            let held = pool.slot();
            let order = &order;
            scope.spawn(move || first(pool, order));
            std::thread::sleep(std::time::Duration::from_millis(50));
            scope.spawn(move || then(pool, order));
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while !then_waits(&pool.lock()) {
                assert!(std::time::Instant::now() < deadline, "never waited");
                std::thread::yield_now();
            }
            drop(held);
        });
        order.into_inner().unwrap()
    }

    fn request(label: &'static str) -> impl Fn(&Pool, &Order) {
        move |pool, order| {
            let _slot = pool.slot();
            order.lock().unwrap().push(label);
        }
    }

    #[test]
    fn urgent_requests_take_the_next_slot_first() {
        let pool = Pool::new(1);
        // The plain request waits first; the urgent one still goes
        // before it.
        let order = served(
            &pool,
            request("plain"),
            |pool, order| urgent(|| request("urgent")(pool, order)),
            |state| state.waiting[Turn::Urgent as usize] > 0,
        );
        assert_eq!(order, ["urgent", "plain"]);
    }

    #[test]
    fn a_panic_inside_a_turn_gives_the_thread_its_turn_back() {
        let caught = std::panic::catch_unwind(|| patient(|| panic!("a rule's bug")));
        assert!(caught.is_err());
        assert_eq!(TURN.with(std::cell::Cell::get), Turn::Normal);
        let caught = std::panic::catch_unwind(|| urgent(|| patient(|| panic!("nested"))));
        assert!(caught.is_err());
        assert_eq!(TURN.with(std::cell::Cell::get), Turn::Normal);
    }

    #[test]
    fn patient_requests_wait_behind_every_other_and_a_map_keeps_its_turn() {
        // Two threads of a map, one slot allowed.
        let pool = Pool::new(2);
        pool.connection_failed();
        // The patient requests wait first, from the threads of a map;
        // the plain one still goes before them.
        let order = served(
            &pool,
            |pool, order| {
                patient(|| pool.map(&[1, 2], |_| request("patient")(pool, order)));
            },
            request("plain"),
            |state| state.waiting[Turn::Normal as usize] > 0,
        );
        assert_eq!(order, ["plain", "patient", "patient"]);
    }

    #[test]
    fn connection_failures_halve_the_load_and_answers_win_it_back() {
        let pool = Pool::new(16);
        pool.connection_failed();
        assert_eq!(pool.allowed(), 8);
        for _ in 0..5 {
            pool.connection_failed();
        }
        assert_eq!(pool.allowed(), 1);
        let mut answers = 0;
        while pool.allowed() < 16 {
            pool.succeeded();
            answers += 1;
            assert!(answers < 1_000);
        }
        // 1 + 2 + … + 15 answers to climb back.
        assert_eq!(answers, (1..16).sum::<usize>());
    }
}
