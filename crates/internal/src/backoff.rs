//! The one retry schedule of the workspace: capped exponential backoff
//! with full jitter ("Exponential Backoff And Jitter", AWS Architecture
//! Blog), and the random numbers under it. The client and the harness
//! keep their own policies (how many attempts, what base and cap, how
//! much `Retry-After` to honour, parsed by
//! [`crate::http::parse_retry_after`]); the arithmetic is here, once.
//!
//! ```
//! use std::time::Duration;
//! use aggpay_internal::backoff::full_jitter;
//!
//! let (base, cap) = (Duration::from_millis(100), Duration::from_secs(4));
//! assert!(full_jitter(base, cap, 1, u64::MAX) <= base);
//! assert!(full_jitter(base, cap, 30, u64::MAX) <= cap);
//! assert_eq!(full_jitter(base, cap, 3, 0), Duration::ZERO);
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// The wait before retry `retry` (1 for the first): uniform in
/// `0..=min(cap, base * 2^(retry - 1))`, drawn from `random` (uniform in
/// `0..=u64::MAX`).
pub fn full_jitter(base: Duration, cap: Duration, retry: u32, random: u64) -> Duration {
    let factor = 1u32
        .checked_shl(retry.saturating_sub(1))
        .unwrap_or(u32::MAX);
    uniform(base.saturating_mul(factor).min(cap), random)
}

/// A wait uniform in `0..=ceiling`, drawn from `random`.
pub fn uniform(ceiling: Duration, random: u64) -> Duration {
    let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
    Duration::from_nanos(if nanos == 0 {
        0
    } else {
        random % nanos.saturating_add(1)
    })
}

/// A cheap, thread-safe uniform random number for jitter (not for
/// anything secret): a splitmix64 sequence seeded from the clock, so
/// that processes started together do not retry in step.
pub fn random() -> u64 {
    static STATE: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    crate::mix::splitmix64(STATE.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed) ^ nanos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn waits_stay_under_the_doubling_ceiling_and_the_cap(
            base_ms in 0u64..10_000,
            cap_ms in 0u64..100_000,
            retry in 0u32..100,
            random in any::<u64>(),
        ) {
            let (base, cap) = (Duration::from_millis(base_ms), Duration::from_millis(cap_ms));
            let wait = full_jitter(base, cap, retry, random);
            prop_assert!(wait <= cap);
            let doubled = base.saturating_mul(1u32.checked_shl(retry.saturating_sub(1)).unwrap_or(u32::MAX));
            prop_assert!(wait <= doubled);
        }
    }

    #[test]
    fn the_whole_range_is_reached() {
        let ceiling = Duration::from_millis(10);
        assert_eq!(uniform(ceiling, 0), Duration::ZERO);
        assert_eq!(uniform(ceiling, 10_000_000), ceiling);
        assert_eq!(uniform(Duration::ZERO, u64::MAX), Duration::ZERO);
        let drawn: std::collections::HashSet<u64> = (0..100).map(|_| random()).collect();
        assert!(drawn.len() > 90);
    }
}
