//! One request: sending, retrying, reading the body, mapping failures.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use serde::de::DeserializeOwned;
use ureq::http::{HeaderMap, Method};

use crate::client::Inner;
use crate::error::{ApiError, Error, ErrorShape};
use crate::model::{ApiErrorBody, Envelope, ErrorEnvelope};
use crate::query::Pairs;

/// The authentication header of API.md.
pub(crate) const KEY_HEADER: &str = "X-PAY-AGGREGATOR-SECRET-KEY";
/// How much of a body an error message quotes.
const SNIPPET: usize = 200;

/// What to send.
#[derive(Debug)]
pub(crate) struct Call<'a> {
    pub(crate) method: Method,
    pub(crate) path: &'a str,
    pub(crate) query: Pairs,
    pub(crate) body: Option<Vec<u8>>,
}

impl Call<'_> {
    /// GETs are idempotent; the rotate PUT and the export POST are not
    /// retried, because a lost answer must not rotate twice or export twice.
    fn idempotent(&self) -> bool {
        self.method == Method::GET
    }
}

/// A failure and how long the server asked us to wait before retrying.
struct Failure {
    error: Error,
    retry_after: Option<Duration>,
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Self {
            error,
            retry_after: None,
        }
    }
}

impl Inner {
    /// Sends `call`, retrying idempotent requests by the policy, and decodes
    /// the `data` of the success envelope.
    pub(crate) fn execute<T: DeserializeOwned>(&self, call: Call<'_>) -> Result<T, Error> {
        let policy = &self.config.retry;
        let attempts = if call.idempotent() {
            policy.get_max_attempts()
        } else {
            1
        };
        let mut retry = 0;
        loop {
            let failure = match self.attempt::<T>(&call) {
                Ok(data) => return Ok(data),
                Err(failure) => failure,
            };
            retry += 1;
            if retry >= attempts || !failure.error.is_retryable() {
                return Err(failure.error);
            }
            let backoff = policy.backoff(retry, jitter());
            let wait = match failure.retry_after {
                Some(after) if !policy.retry_after_allowed(after) => return Err(failure.error),
                Some(after) => after + backoff.min(policy_jitter_cap(after)),
                None => backoff,
            };
            std::thread::sleep(wait);
        }
    }

    fn attempt<T: DeserializeOwned>(&self, call: &Call<'_>) -> Result<T, Failure> {
        let url = format!(
            "{}/v1/aggregators/{}{}",
            self.base_url, self.aggregator_id, call.path
        );
        let secret = self.secret.expose();
        let sent = if call.method == Method::GET {
            let mut request = self.agent.get(&url);
            for (k, v) in &call.query {
                request = request.query(*k, v);
            }
            request
                .header(KEY_HEADER, secret)
                .header("Accept", "application/json")
                .call()
        } else {
            let mut request = if call.method == Method::PUT {
                self.agent.put(&url)
            } else {
                self.agent.post(&url)
            };
            for (k, v) in &call.query {
                request = request.query(*k, v);
            }
            let request = request
                .header(KEY_HEADER, secret)
                .header("Accept", "application/json");
            match &call.body {
                Some(body) => request
                    .header("Content-Type", "application/json")
                    .send(body.as_slice()),
                None => request.send_empty(),
            }
        };
        let mut response = sent.map_err(|e| self.transport(e))?;
        let status = response.status().as_u16();
        let retry_after = retry_after(response.headers());
        let body = response
            .body_mut()
            .with_config()
            .limit(self.config.max_body)
            .read_to_vec()
            .map_err(|e| self.transport(e))?;
        if (200..300).contains(&status) {
            match serde_json::from_slice::<Envelope<T>>(&body) {
                Ok(envelope) => Ok(envelope.data),
                Err(e) => Err(Error::Decode {
                    status,
                    reason: self.scrub(&e.to_string()),
                    snippet: self.snippet(&body),
                }
                .into()),
            }
        } else {
            Err(Failure {
                error: self.api_error(status, &body),
                retry_after,
            })
        }
    }

    /// Maps a ureq error to the crate's, keeping timeouts and body limits apart.
    fn transport(&self, error: ureq::Error) -> Error {
        match error {
            ureq::Error::Timeout(ureq::Timeout::Connect) => Error::Timeout {
                after: self.config.timeout_connect,
            },
            ureq::Error::Timeout(_) => Error::Timeout {
                after: self.config.timeout,
            },
            ureq::Error::BodyExceedsLimit(limit) => Error::BodyTooLarge { limit },
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => Error::Timeout {
                after: self.config.timeout,
            },
            other => Error::Transport(Box::new(other)),
        }
    }

    /// Either error form of API.md, or the raw status with a snippet.
    fn api_error(&self, status: u16, body: &[u8]) -> Error {
        let api = |b: ApiErrorBody, shape| {
            Error::Api(ApiError::new(
                status,
                self.scrub(&b.code),
                self.scrub(&b.message),
                shape,
            ))
        };
        if let Ok(envelope) = serde_json::from_slice::<ErrorEnvelope>(body) {
            return api(envelope.error, ErrorShape::Envelope);
        }
        if let Ok(bare) = serde_json::from_slice::<ApiErrorBody>(body) {
            return api(bare, ErrorShape::Bare);
        }
        Error::Status {
            status,
            snippet: self.snippet(body),
        }
    }

    /// The start of a body, printable, with the secret scrubbed out.
    fn snippet(&self, body: &[u8]) -> String {
        let text = String::from_utf8_lossy(&body[..body.len().min(SNIPPET * 4)]);
        let mut cut: String = text.chars().take(SNIPPET).collect();
        if cut.len() < text.len() {
            cut.push('…');
        }
        self.scrub(&cut)
    }

    /// Removes the secret from text the server controls (it could echo it).
    pub(crate) fn scrub(&self, text: &str) -> String {
        let secret = self.secret.expose();
        if secret.is_empty() {
            text.to_owned()
        } else {
            text.replace(secret, "<redacted>")
        }
    }
}

/// A bound on the jitter added to a server-requested wait: a little spread
/// so that many clients told the same `Retry-After` do not return at once.
fn policy_jitter_cap(after: Duration) -> Duration {
    (after / 10).max(Duration::from_millis(50))
}

/// `Retry-After` as delay-seconds or an HTTP date (RFC 9110 section 10.2.3).
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get("retry-after")?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    static PARSER: jiff::fmt::rfc2822::DateTimeParser = jiff::fmt::rfc2822::DateTimeParser::new();
    let at = PARSER.parse_timestamp(value).ok()?;
    let now = jiff::Timestamp::try_from(SystemTime::now()).ok()?;
    let wait = now.duration_until(at);
    Some(Duration::try_from(wait).unwrap_or(Duration::ZERO))
}

/// A cheap, thread-safe uniform random number for backoff jitter (not for
/// anything secret): a splitmix64 sequence seeded from the clock.
fn jitter() -> u64 {
    static STATE: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut z = STATE.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed) ^ nanos;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("retry-after", value.parse().unwrap());
        h
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(retry_after(&headers("7")), Some(Duration::from_secs(7)));
        assert_eq!(
            retry_after(&headers("Wed, 21 Oct 2015 07:28:00 GMT")),
            Some(Duration::ZERO)
        );
        let future = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(30);
        let http_date = jiff::fmt::rfc2822::DateTimePrinter::new()
            .timestamp_to_rfc9110_string(&future)
            .unwrap();
        let wait = retry_after(&headers(&http_date)).unwrap();
        assert!(
            wait > Duration::from_secs(25) && wait <= Duration::from_secs(30),
            "{wait:?}"
        );
        assert_eq!(retry_after(&headers("soon")), None);
        assert_eq!(retry_after(&HeaderMap::new()), None);
    }

    #[test]
    fn jitter_varies() {
        let a: std::collections::HashSet<u64> = (0..100).map(|_| jitter()).collect();
        assert!(a.len() > 90);
    }
}
