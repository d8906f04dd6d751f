//! One request: sending, retrying, reading the body, mapping failures.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use ureq::http::{HeaderMap, Method};

use aggpay_internal::http::Pacer;

use crate::error::{ApiError, Error, ErrorKind, ErrorShape, TransportError};
use crate::query::Pairs;
use crate::retry::RetryPolicy;
use crate::syntax::{KEY_HEADER, aggregator_url};
use crate::text::Redactor;
use crate::url::encode_component;
use crate::wire::{Envelope, ErrorBody, ErrorEnvelope, RotatedSecret};
use crate::{AggregatorId, Secret};

/// How many characters of a body an error quotes.
const SNIPPET: usize = 200;
/// How many characters of a server's error code or message are kept.
const MESSAGE: usize = 1_000;
/// The most a body's buffer is sized for before its bytes come: what the
/// server announces is believed up to a few pages of rows (a page of 100
/// transactions is about 90 kB), not up to the body limit.
const PRESIZE_MAX: u64 = 1 << 20;

/// The checked settings a client runs with.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) base_url: String,
    pub(crate) aggregator_id: AggregatorId,
    pub(crate) secret: Secret,
    pub(crate) timeout_connect: Duration,
    pub(crate) timeout: Duration,
    pub(crate) max_body: u64,
    pub(crate) retry: RetryPolicy,
    pub(crate) max_pages: u64,
    /// The `Accept-Encoding` every request sends.
    pub(crate) accept_encoding: &'static str,
    pub(crate) min_interval: Option<Duration>,
}

/// What a client and its clones share: the connection pool, the settings,
/// what to redact, what was done, the pace.
pub(crate) struct Inner {
    pub(crate) agent: ureq::Agent,
    pub(crate) settings: Settings,
    pub(crate) redactor: Redactor,
    pub(crate) stats: Counters,
    pub(crate) pacer: Option<Pacer>,
}

/// What a client (and its clones) has done so far.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) requests: AtomicU64,
    pub(crate) retries: AtomicU64,
    pub(crate) bytes: AtomicU64,
    /// Nanoseconds the retries waited, all requests together.
    pub(crate) waited: AtomicU64,
}

impl Inner {
    pub(crate) fn new(agent: ureq::Agent, settings: Settings) -> Self {
        let mut redactor = Redactor::new();
        redactor.add(settings.secret.expose());
        let pacer = settings.min_interval.map(Pacer::new);
        Self {
            agent,
            settings,
            redactor,
            stats: Counters::default(),
            pacer,
        }
    }
}

/// What to send.
#[derive(Debug)]
pub(crate) struct Call<'a> {
    /// The client method sending it, and the identifier it is about: the
    /// context of its errors.
    pub(crate) operation: &'static str,
    pub(crate) id: Option<&'a str>,
    pub(crate) method: Method,
    /// Below `/v1/aggregators/{aggregator-id}`, segments already encoded.
    pub(crate) path: &'a str,
    pub(crate) query: Pairs,
    pub(crate) body: Option<Vec<u8>>,
    /// A key rotation: when its answer does not decode, the new secret is
    /// still looked for and kept in the error.
    pub(crate) rotation: bool,
    /// Sent once, never retried (a check of the setup says what it saw).
    pub(crate) once: bool,
}

impl<'a> Call<'a> {
    pub(crate) fn get(operation: &'static str, path: &'a str, query: Pairs) -> Self {
        Self {
            operation,
            id: None,
            method: Method::GET,
            path,
            query,
            body: None,
            rotation: false,
            once: false,
        }
    }

    /// GETs are idempotent; the rotate PUT and the export POST are not
    /// retried, because a lost answer must not rotate twice or export twice.
    fn idempotent(&self) -> bool {
        self.method == Method::GET && !self.once
    }
}

/// An attempt that failed, and how long the server asked us to wait
/// before the next.
struct FailedAttempt {
    error: Error,
    retry_after: Option<Duration>,
    /// The call's deadline ended the attempt, not the server.
    cut: bool,
}

impl From<Error> for FailedAttempt {
    fn from(error: Error) -> Self {
        Self {
            error,
            retry_after: None,
            cut: false,
        }
    }
}

impl Inner {
    /// Sends `call`, retrying idempotent requests by the policy, and decodes
    /// the `data` of the success envelope. An error says the operation,
    /// its identifier and the attempts made.
    pub(crate) fn execute<T: DeserializeOwned>(&self, call: Call<'_>) -> Result<T, Error> {
        let mut attempts = 0;
        self.send(&call, &mut attempts).map_err(|e| {
            e.during(call.operation, call.id)
                .on_aggregator(self.settings.aggregator_id.as_str())
                .after_attempts(attempts)
        })
    }

    fn send<T: DeserializeOwned>(&self, call: &Call<'_>, sent: &mut u32) -> Result<T, Error> {
        let policy = &self.settings.retry;
        let attempts = if call.idempotent() {
            policy.max_attempts()
        } else {
            1
        };
        let mut retry = 0;
        let deadline = policy.deadline().map(|d| (Instant::now() + d, d));
        // The last failure the server (or the network) gave: what the call
        // fails with when the deadline ends a retry, since the deadline is
        // the caller's limit and the failure is why it was reached.
        let mut last: Option<Error> = None;
        loop {
            if let Some(pacer) = &self.pacer {
                pacer.wait();
            }
            // An attempt gets the time left of the call, at most.
            let left = match deadline {
                Some((end, whole)) => match end.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => return Err(last.unwrap_or(ErrorKind::Timeout { after: whole }.into())),
                },
                None => None,
            };
            self.stats.requests.fetch_add(1, Ordering::Relaxed);
            *sent += 1;
            let started = Instant::now();
            let failure = match self.attempt::<T>(call, left) {
                Ok(data) => return Ok(data),
                Err(failure) => failure,
            };
            if failure.cut {
                return Err(last.unwrap_or(failure.error));
            }
            // What the next attempt is expected to take: this one's time.
            let took = started.elapsed();
            retry += 1;
            if retry >= attempts || !failure.error.is_retryable() {
                return Err(failure.error);
            }
            let backoff = policy.backoff(retry, aggpay_internal::backoff::random());
            let wait = match failure.retry_after {
                Some(after) if after > policy.max_retry_after() => return Err(failure.error),
                Some(after) => after + backoff.min(jitter_cap(after)),
                None => backoff,
            };
            // No retry starts that could not end in time: its wait and an
            // attempt as long as the last must fit before the deadline.
            let too_late = deadline.is_some_and(|(end, _)| Instant::now() + wait + took >= end);
            if too_late || !self.spend(wait) {
                return Err(failure.error);
            }
            last = Some(failure.error);
            self.stats.retries.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(wait);
        }
    }

    /// Takes `wait` from the waiting budget of the client and its clones;
    /// false when it would overspend it (the failure is returned then).
    fn spend(&self, wait: Duration) -> bool {
        let nanos = u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX);
        let Some(budget) = self.settings.retry.max_total_wait() else {
            self.stats.waited.fetch_add(nanos, Ordering::Relaxed);
            return true;
        };
        let budget = u64::try_from(budget.as_nanos()).unwrap_or(u64::MAX);
        self.stats
            .waited
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |w| {
                w.checked_add(nanos).filter(|total| *total <= budget)
            })
            .is_ok()
    }

    /// The full URL of a call: base, aggregator, path and encoded query.
    fn url(&self, call: &Call<'_>) -> String {
        let mut url = aggregator_url(
            &self.settings.base_url,
            self.settings.aggregator_id.as_str(),
        ) + call.path;
        for (i, (k, v)) in call.query.iter().enumerate() {
            url.push(if i == 0 { '?' } else { '&' });
            url.push_str(&encode_component(k));
            url.push('=');
            url.push_str(&encode_component(v));
        }
        url
    }

    /// One request; `left`, the time left of the call's deadline, bounds
    /// it whole.
    fn attempt<T: DeserializeOwned>(
        &self,
        call: &Call<'_>,
        left: Option<Duration>,
    ) -> Result<T, FailedAttempt> {
        let mut request = ureq::http::Request::builder()
            .method(call.method.clone())
            .uri(self.url(call))
            .header(KEY_HEADER, self.settings.secret.expose())
            .header("Accept", "application/json")
            .header("Accept-Encoding", self.settings.accept_encoding);
        if call.body.is_some() {
            request = request.header("Content-Type", "application/json");
        }
        let body: &[u8] = call.body.as_deref().unwrap_or_default();
        let request = request.body(body).map_err(|e| {
            Error::config(format!(
                "cannot form a request: {}",
                self.redactor.text(&e.to_string(), MESSAGE)
            ))
        })?;
        // The deadline cuts an attempt shorter than its own timeout.
        let cut = left.filter(|left| *left < self.settings.timeout);
        let request = match cut {
            Some(left) => self
                .agent
                .configure_request(request)
                .timeout_global(Some(left))
                .build(),
            None => request,
        };
        // The deadline ended the attempt, in the request or in its body:
        // the call's own timeout.
        let failed = |e: ureq::Error| match e {
            ureq::Error::Timeout(ureq::Timeout::Global) if cut.is_some() => FailedAttempt {
                error: ErrorKind::Timeout {
                    after: self.settings.retry.deadline().unwrap_or_default(),
                }
                .into(),
                retry_after: None,
                cut: true,
            },
            e => self.transport(e).into(),
        };
        let mut response = self.agent.run(request).map_err(failed)?;
        let status = response.status().as_u16();
        if (300..400).contains(&status) {
            let location = response.headers().get("location").map(|v| {
                self.redactor
                    .text(&String::from_utf8_lossy(v.as_bytes()), MESSAGE)
            });
            return Err(Error::from(ErrorKind::Redirect { status, location }).into());
        }
        let retry_after = retry_after(response.headers());
        let body = self.read_body(response.body_mut()).map_err(failed)?;
        self.stats
            .bytes
            .fetch_add(body.len() as u64, Ordering::Relaxed);
        let coding = response
            .headers()
            .get("content-encoding")
            .and_then(|v| v.to_str().ok());
        let body = aggpay_internal::coding::decode(coding, body, self.settings.max_body).map_err(
            |why| {
                Error::from(ErrorKind::Decode {
                    status,
                    reason: self.redactor.text(&why, MESSAGE),
                    snippet: String::new(),
                    secret: None,
                })
            },
        )?;
        if (200..300).contains(&status) {
            aggpay_internal::json::from_body::<Envelope<T>>(&body)
                .map(|envelope| envelope.data)
                .map_err(|why| {
                    Error::from(ErrorKind::Decode {
                        status,
                        reason: self.redactor.text(&why, MESSAGE),
                        snippet: self.redactor.snippet(&body, SNIPPET),
                        secret: if call.rotation {
                            RotatedSecret::find(&body)
                        } else {
                            None
                        },
                    })
                    .into()
                })
        } else {
            Err(FailedAttempt {
                error: self.api_error(status, &body),
                retry_after,
                cut: false,
            })
        }
    }

    /// The whole body as sent (before any content coding is undone), at
    /// most `max_body` bytes. The buffer starts at the size the server
    /// announces (up to [`PRESIZE_MAX`]): a page of transactions grown
    /// from empty was copied once more by its doublings.
    fn read_body(&self, body: &mut ureq::Body) -> Result<Vec<u8>, ureq::Error> {
        use std::io::Read;
        let announced = body.content_length().unwrap_or(0);
        let capacity = announced.min(self.settings.max_body).min(PRESIZE_MAX);
        let mut buf = Vec::with_capacity(usize::try_from(capacity).unwrap_or(0));
        body.with_config()
            .limit(self.settings.max_body)
            .reader()
            .read_to_end(&mut buf)
            // ureq's own errors (a body over the limit, a timeout) come
            // back out of the `io::Error` they travel in.
            .map_err(ureq::Error::from)?;
        Ok(buf)
    }

    /// Maps a ureq error to the crate's, keeping timeouts, body limits and
    /// TLS failures apart. The ureq error itself is not kept (it is not
    /// part of this crate's API, and its words may hold a secret): its
    /// words, redacted, and its I/O error kind are, as the
    /// [`TransportError`] reachable as the source.
    fn transport(&self, error: ureq::Error) -> Error {
        let kind = match error {
            ureq::Error::Timeout(ureq::Timeout::Connect) => ErrorKind::Timeout {
                after: self.settings.timeout_connect,
            },
            ureq::Error::Timeout(_) => ErrorKind::Timeout {
                after: self.settings.timeout,
            },
            ureq::Error::BodyExceedsLimit(limit) => ErrorKind::BodyTooLarge { limit },
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                ErrorKind::Timeout {
                    after: self.settings.timeout,
                }
            }
            other => {
                let io = match &other {
                    ureq::Error::Io(io) => Some(io.kind()),
                    _ => None,
                };
                let cause = TransportError::new(self.redactor.text(&describe(&other), MESSAGE), io);
                if aggpay_internal::http::is_tls(&other) {
                    ErrorKind::Tls(cause)
                } else {
                    ErrorKind::Transport(cause)
                }
            }
        };
        kind.into()
    }

    /// Either error form of API.md, or the raw status with a snippet.
    fn api_error(&self, status: u16, body: &[u8]) -> Error {
        let api = |b: ErrorBody, shape| {
            Error::from(ErrorKind::Api(ApiError::new(
                status,
                self.redactor.text(&b.code, MESSAGE),
                self.redactor.text(&b.message, MESSAGE),
                shape,
            )))
        };
        if let Ok(envelope) = serde_json::from_slice::<ErrorEnvelope>(body) {
            return api(envelope.error, ErrorShape::Envelope);
        }
        if let Ok(bare) = serde_json::from_slice::<ErrorBody>(body) {
            return api(bare, ErrorShape::Bare);
        }
        ErrorKind::Status {
            status,
            snippet: self.redactor.snippet(body, SNIPPET),
        }
        .into()
    }
}

/// A ureq error in words, its inner I/O error included.
fn describe(error: &ureq::Error) -> String {
    match error {
        ureq::Error::Io(io) => match io.get_ref() {
            Some(inner) => inner.to_string(),
            None => io.to_string(),
        },
        ureq::Error::HostNotFound => "the host name could not be resolved".to_owned(),
        ureq::Error::ConnectionFailed => "the connection could not be made".to_owned(),
        other => other.to_string(),
    }
}

/// A bound on the jitter added to a server-requested wait: a little spread
/// so that many clients told the same `Retry-After` do not return at once.
fn jitter_cap(after: Duration) -> Duration {
    (after / 10).max(Duration::from_millis(50))
}

/// The `Retry-After` header of an answer, as a wait.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    aggpay_internal::http::parse_retry_after(headers.get("retry-after")?.to_str().ok()?)
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

    /// Every method reaches the wire as itself (a method other than GET or
    /// PUT used to be sent as POST).
    #[test]
    fn methods_are_sent_as_given() {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let methods = [
            Method::GET,
            Method::PUT,
            Method::POST,
            Method::DELETE,
            Method::PATCH,
        ];
        let server = std::thread::spawn(move || {
            let mut seen = Vec::new();
            for _ in 0..methods.len() {
                let (stream, _) = listener.accept().unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(5)))
                    .unwrap();
                let mut line = String::new();
                BufReader::new(&stream).read_line(&mut line).unwrap();
                seen.push(line.split(' ').next().unwrap_or("").to_owned());
                let body = br#"{"api_version":"v1","data":{}}"#;
                let mut s = &stream;
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = s.write_all(body);
            }
            seen
        });
        let client = crate::Client::builder(url, "agg_1".parse().unwrap(), "k")
            .retry(crate::RetryPolicy::builder().max_attempts(1).build())
            .build()
            .unwrap();
        for method in [
            Method::GET,
            Method::PUT,
            Method::POST,
            Method::DELETE,
            Method::PATCH,
        ] {
            let call = Call {
                method,
                ..Call::get("test", "/x", Vec::new())
            };
            let _: serde_json::Value = client.inner.execute(call).unwrap();
        }
        assert_eq!(
            server.join().unwrap(),
            ["GET", "PUT", "POST", "DELETE", "PATCH"]
        );
    }
}
