//! When and how often idempotent requests are retried.

use std::time::Duration;

/// When and how often idempotent requests are retried.
///
/// Only GET requests are retried, and only after a transport error, a
/// timeout, 429 or 500/502/503/504. The delay before retry `n` (from 1) is
/// drawn uniformly from `0..=min(max_delay, base_delay * 2^(n-1))` ("full
/// jitter"); a `Retry-After` header sets a floor under it.
///
/// ```
/// use std::time::Duration;
/// use aggpay::RetryPolicy;
///
/// let policy = RetryPolicy::builder()
///     .max_attempts(5)
///     .base_delay(Duration::from_millis(100))
///     .build();
/// assert_eq!(policy.max_attempts(), 5);
///
/// // No retries: every request made once.
/// let once = RetryPolicy::builder().max_attempts(1).build();
/// assert_eq!(once.max_attempts(), 1);
/// // The default (what a client uses unless told): 4 attempts.
/// assert_eq!(RetryPolicy::default().max_attempts(), 4);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    max_attempts: u32,
    base_delay: Duration,
    max_delay: Duration,
    max_retry_after: Duration,
    max_total_wait: Option<Duration>,
    deadline: Option<Duration>,
}

/// The default: 4 attempts, 200 ms base, 10 s cap, `Retry-After` up to 60 s.
impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(10),
            max_retry_after: Duration::from_secs(60),
            max_total_wait: None,
            deadline: None,
        }
    }
}

impl RetryPolicy {
    /// A policy built from the default: the one way to build one.
    pub fn builder() -> RetryPolicyBuilder {
        RetryPolicyBuilder(Self::default())
    }

    /// The patience of a batch job (a nightly sync, a report): a server
    /// that goes away for a few minutes (a deploy, a failover) is waited
    /// out instead of failing the night. 12 attempts, backoff from 1 s
    /// doubling up to 60 s (full jitter: about 5 minutes of waiting at
    /// most, 2.5 on average), `Retry-After` honoured up to 5 minutes, and
    /// each call ends within 15 minutes whatever happens, its timeouts
    /// included. Build on it to change a part:
    ///
    /// ```
    /// use std::time::Duration;
    /// use aggpay::RetryPolicy;
    ///
    /// let patient = RetryPolicy::batch_job();
    /// assert_eq!(patient.max_attempts(), 12);
    /// assert_eq!(patient.deadline(), Some(Duration::from_secs(900)));
    /// let shorter = patient.to_builder().deadline(Duration::from_secs(300)).build();
    /// assert_eq!(shorter.max_delay(), Duration::from_secs(60));
    /// ```
    pub fn batch_job() -> Self {
        Self {
            max_attempts: 12,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(60),
            max_retry_after: Duration::from_secs(300),
            max_total_wait: None,
            deadline: Some(Duration::from_secs(900)),
        }
    }

    /// A builder starting from this policy.
    pub fn to_builder(&self) -> RetryPolicyBuilder {
        RetryPolicyBuilder(self.clone())
    }

    /// The most time one call may take, every attempt, its timeouts and
    /// the waits between them included (`None`: no bound but the
    /// others).
    pub fn deadline(&self) -> Option<Duration> {
        self.deadline
    }

    /// Attempts in all, the first included.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The delay scale of the first retry.
    pub fn base_delay(&self) -> Duration {
        self.base_delay
    }

    /// The largest backoff delay.
    pub fn max_delay(&self) -> Duration {
        self.max_delay
    }

    /// The longest `Retry-After` honoured.
    pub fn max_retry_after(&self) -> Duration {
        self.max_retry_after
    }

    /// The most time the retries of a client and its clones may spend
    /// waiting, all requests together (`None`: no bound but the others).
    pub fn max_total_wait(&self) -> Option<Duration> {
        self.max_total_wait
    }

    /// The backoff delay before retry `retry` (1 for the first retry), given
    /// a uniform random number in `0..=u64::MAX`.
    pub(crate) fn backoff(&self, retry: u32, random: u64) -> Duration {
        aggpay_internal::backoff::full_jitter(self.base_delay, self.max_delay, retry, random)
    }
}

/// Builds a [`RetryPolicy`].
#[derive(Debug, Clone)]
pub struct RetryPolicyBuilder(RetryPolicy);

impl RetryPolicyBuilder {
    /// Attempts in all, the first included (at least 1; default 4).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.0.max_attempts = attempts.max(1);
        self
    }

    /// The delay scale of the first retry (default 200 ms).
    pub fn base_delay(mut self, delay: Duration) -> Self {
        self.0.base_delay = delay;
        self
    }

    /// The largest backoff delay (default 10 s).
    pub fn max_delay(mut self, delay: Duration) -> Self {
        self.0.max_delay = delay;
        self
    }

    /// The longest `Retry-After` honoured (default 60 s); a server asking
    /// for more gets its error returned instead of a long sleep.
    pub fn max_retry_after(mut self, delay: Duration) -> Self {
        self.0.max_retry_after = delay;
        self
    }

    /// A bound on the time the retries of a client and its clones may
    /// spend waiting, all requests together: a batch job's patience. Once
    /// it is spent, a failure is returned at once instead of retried
    /// (default: no bound beyond the others).
    ///
    /// ```
    /// use std::time::Duration;
    /// use aggpay::RetryPolicy;
    ///
    /// // A nightly job: patient with a flaky server, within half an hour.
    /// let patient = RetryPolicy::builder()
    ///     .max_attempts(10)
    ///     .max_delay(Duration::from_secs(120))
    ///     .max_total_wait(Duration::from_secs(1800))
    ///     .build();
    /// assert_eq!(patient.max_total_wait(), Some(Duration::from_secs(1800)));
    /// ```
    pub fn max_total_wait(mut self, budget: Duration) -> Self {
        self.0.max_total_wait = Some(budget);
        self
    }

    /// The most time one call may take, from its first byte sent to its
    /// answer: every attempt, the timeouts that end them and the waits
    /// between them together. An attempt is given only the time left, and
    /// no retry starts that could not end in time (its wait and an attempt
    /// as long as the last must fit): the call then fails with the last
    /// failure. So does a call whose retry the deadline ends; one whose
    /// first attempt it ends fails with the deadline's
    /// [`ErrorKind::Timeout`](crate::ErrorKind::Timeout). `max_total_wait`
    /// bounds the waits alone, across calls; this bounds a call, whole.
    ///
    /// ```
    /// use std::time::Duration;
    /// use aggpay::RetryPolicy;
    ///
    /// let policy = RetryPolicy::builder().deadline(Duration::from_secs(30)).build();
    /// assert_eq!(policy.deadline(), Some(Duration::from_secs(30)));
    /// ```
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.0.deadline = Some(deadline);
        self
    }

    /// The policy.
    pub fn build(self) -> RetryPolicy {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_full_jitter_under_a_cap() {
        let p = RetryPolicy::builder()
            .base_delay(Duration::from_millis(100))
            .max_delay(Duration::from_secs(1))
            .build();
        assert_eq!(p.backoff(1, 0), Duration::ZERO);
        assert_eq!(
            p.backoff(1, u64::MAX),
            Duration::from_nanos(u64::MAX % 100_000_001)
        );
        for retry in 1..40 {
            for r in [0, 1, 12345, u64::MAX / 3, u64::MAX] {
                assert!(p.backoff(retry, r) <= Duration::from_secs(1));
            }
        }
        assert!(p.backoff(2, u64::MAX - 1) <= Duration::from_millis(200));
    }
}
