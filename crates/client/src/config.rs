//! Client configuration: the builder and the retry policy.

use std::time::Duration;

use crate::client::Client;
use crate::error::Error;
use crate::{AggregatorId, Secret};

/// Default limit of a response body: ten pages of 100 transactions are well
/// under it; anything bigger is a server fault, not data.
pub const DEFAULT_MAX_BODY: u64 = 8 * 1024 * 1024;

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
/// let policy = RetryPolicy::new().max_attempts(5).base_delay(Duration::from_millis(100));
/// assert_eq!(policy.get_max_attempts(), 5);
/// assert_eq!(RetryPolicy::none().get_max_attempts(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    max_attempts: u32,
    base_delay: Duration,
    max_delay: Duration,
    max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(10),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The default: 4 attempts, 200 ms base, 10 s cap, `Retry-After` up to 60 s.
    pub fn new() -> Self {
        Self::default()
    }

    /// No retries: every request is made once.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// Attempts in all, the first included (at least 1).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The delay scale of the first retry.
    pub fn base_delay(mut self, delay: Duration) -> Self {
        self.base_delay = delay;
        self
    }

    /// The largest backoff delay.
    pub fn max_delay(mut self, delay: Duration) -> Self {
        self.max_delay = delay;
        self
    }

    /// The longest `Retry-After` honoured; a server asking for more gets
    /// its error returned instead of a long sleep.
    pub fn max_retry_after(mut self, delay: Duration) -> Self {
        self.max_retry_after = delay;
        self
    }

    /// Attempts in all.
    pub fn get_max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The backoff delay before retry `retry` (1 for the first retry), given
    /// a uniform random number in `0..=u64::MAX`.
    pub(crate) fn backoff(&self, retry: u32, random: u64) -> Duration {
        let factor = 1u32
            .checked_shl(retry.saturating_sub(1))
            .unwrap_or(u32::MAX);
        let ceiling = self.base_delay.saturating_mul(factor).min(self.max_delay);
        let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(if nanos == 0 { 0 } else { random % (nanos + 1) })
    }

    pub(crate) fn retry_after_allowed(&self, wait: Duration) -> bool {
        wait <= self.max_retry_after
    }
}

/// Builds a [`Client`].
///
/// ```no_run
/// use std::time::Duration;
/// use aggpay::{Client, RetryPolicy};
///
/// let client = Client::builder("https://api.example.com/pay", "agg_123", "secret")
///     .timeout(Duration::from_secs(20))
///     .retry(RetryPolicy::new().max_attempts(3))
///     .build()?;
/// # Ok::<(), aggpay::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    pub(crate) base_url: String,
    pub(crate) aggregator_id: String,
    pub(crate) secret: Secret,
    pub(crate) timeout_connect: Duration,
    pub(crate) timeout: Duration,
    pub(crate) max_body: u64,
    pub(crate) retry: RetryPolicy,
    pub(crate) max_pages: u64,
}

impl ClientBuilder {
    pub(crate) fn new(
        base_url: impl Into<String>,
        aggregator_id: impl Into<String>,
        secret: impl Into<Secret>,
    ) -> Self {
        Self {
            base_url: base_url.into(),
            aggregator_id: aggregator_id.into(),
            secret: secret.into(),
            timeout_connect: Duration::from_secs(10),
            timeout: Duration::from_secs(30),
            max_body: DEFAULT_MAX_BODY,
            retry: RetryPolicy::default(),
            max_pages: 1_000_000,
        }
    }

    /// Time allowed to open a connection (default 10 s).
    pub fn timeout_connect(mut self, timeout: Duration) -> Self {
        self.timeout_connect = timeout;
        self
    }

    /// Time allowed for one attempt of a call, from sending to the last
    /// body byte (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Largest response body accepted (default [`DEFAULT_MAX_BODY`]).
    pub fn max_body_size(mut self, bytes: u64) -> Self {
        self.max_body = bytes;
        self
    }

    /// Retry policy for idempotent requests (default [`RetryPolicy::new`]).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Most pages one pagination walk fetches before it reports the server
    /// as endless (default 1,000,000).
    pub fn max_pages(mut self, pages: u64) -> Self {
        self.max_pages = pages.max(1);
        self
    }

    /// Validates the configuration and builds the client.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a base URL that is not `http://` or `https://`,
    /// [`Error::InvalidInput`] for an aggregator id without `agg_`.
    pub fn build(self) -> Result<Client, Error> {
        let base = self.base_url.trim().trim_end_matches('/').to_owned();
        let valid_scheme = ["http://", "https://"]
            .iter()
            .any(|s| base.len() > s.len() && base[..s.len()].eq_ignore_ascii_case(s));
        if !valid_scheme || base.contains(['?', '#', ' ']) {
            return Err(Error::Config(format!(
                "base url `{}` must be an http:// or https:// address without query or fragment",
                crate::id::excerpt(&base)
            )));
        }
        let aggregator = AggregatorId::parse(self.aggregator_id.as_str())?;
        Ok(Client::from_parts(base, aggregator, self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_full_jitter_under_a_cap() {
        let p = RetryPolicy::new()
            .base_delay(Duration::from_millis(100))
            .max_delay(Duration::from_secs(1));
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

    #[test]
    fn base_urls_are_checked() {
        for good in [
            "http://127.0.0.1:8080",
            "https://x.example/api/",
            "HTTPS://x",
        ] {
            assert!(
                ClientBuilder::new(good, "agg_1", "k").build().is_ok(),
                "{good}"
            );
        }
        for bad in ["", "ftp://x", "127.0.0.1:80", "http://", "http://x?y=1"] {
            assert!(
                matches!(
                    ClientBuilder::new(bad, "agg_1", "k").build(),
                    Err(Error::Config(_))
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            ClientBuilder::new("http://x", "pm_1", "k").build(),
            Err(Error::InvalidInput { .. })
        ));
    }
}
