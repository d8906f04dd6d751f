//! Telling a transient failure from an answer, and when to try again.
//!
//! Transient: 429 (its `Retry-After` honoured, capped), 502, 503, 504, a
//! connection refused or reset, a body cut short, a timeout. These say
//! nothing about the server's contract: the request is sent again with
//! capped exponential backoff and full jitter. A 500 gets one more chance:
//! a 500 that comes back is the server's answer (API.md: an internal
//! failure). Anything else is the answer.

use std::time::Duration;

use aggpay_internal::http::TransportFailure;

use super::h1::Answer;

/// Attempts in all for a read or a probe.
const MAX_ATTEMPTS: u32 = 8;
/// Attempts in all when they time out: each costs a whole timeout.
const MAX_TIMEOUTS: u32 = 3;
/// Backoff of the first retry; doubles each time.
const BASE: Duration = Duration::from_millis(100);
/// Largest backoff.
const MAX_BACKOFF: Duration = Duration::from_secs(4);
/// Longest `Retry-After` honoured as given; a longer one waits this long.
pub(super) const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);
/// Most waiting for one exchange, all retries together.
const MAX_WAITING: Duration = Duration::from_secs(60);
/// Times a 429 or 503 on a write is waited out (the server says it did
/// not handle the request).
pub(super) const THROTTLED: usize = 6;
/// The pause before a write lost without a `Retry-After` is sent again.
pub(super) const WRITE_PAUSE: Duration = Duration::from_millis(200);
/// Times a harmless write whose answer was lost (a reset, a timeout, a
/// gateway's 502 or 504) is sent again: twice, so that a write is left
/// unanswered only by three losses in a row, as a read is by its
/// retries.
pub(super) const LOST_WRITE_REPEATS: usize = 2;

/// Why an exchange proves nothing: every attempt met a transient failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transient {
    /// The last failure (`503`, `a reset`, `a timeout`).
    pub last: String,
}

impl std::fmt::Display for Transient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "transient: {}", self.last)
    }
}

/// What one attempt's result is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Verdict {
    /// The server's answer.
    Answer,
    /// A 500: worth one more attempt.
    ServerError,
    /// Not an answer: try again.
    Transient {
        what: String,
        timeout: bool,
        retry_after: Option<Duration>,
    },
}

impl Verdict {
    /// The transient failure, when it is one (for a write, sent once).
    pub(super) fn transient(&self) -> Option<Transient> {
        match self {
            Verdict::Transient { what, .. } => Some(Transient { last: what.clone() }),
            _ => None,
        }
    }
}

/// The `Retry-After` of an answer's headers.
pub(super) fn retry_after(headers: &[(String, String)]) -> Option<Duration> {
    headers
        .iter()
        .find(|(k, _)| k == "retry-after")
        .and_then(|(_, v)| aggpay_internal::http::parse_retry_after(v))
}

/// A connection refused or broken (not a timeout): the pool's signal
/// that a connection went bad.
pub(super) fn is_connection_failure(error: &ureq::Error) -> bool {
    matches!(
        TransportFailure::of(error),
        TransportFailure::Refused | TransportFailure::Cut
    )
}

/// Classifies one attempt.
pub(super) fn classify(result: &Result<Answer, ureq::Error>) -> Verdict {
    match result {
        Ok(answer) if aggpay_internal::http::is_transient_status(answer.wire.head.status) => {
            Verdict::Transient {
                what: answer.wire.head.status.to_string(),
                timeout: false,
                retry_after: retry_after(&answer.headers()),
            }
        }
        Ok(answer) if answer.wire.head.status == 500 => Verdict::ServerError,
        Ok(_) => Verdict::Answer,
        Err(e) if TransportFailure::of(e) == TransportFailure::Timeout => Verdict::Transient {
            what: "a timeout".to_owned(),
            timeout: true,
            retry_after: None,
        },
        Err(e) if is_connection_failure(e) => Verdict::Transient {
            what: format!("a connection failure ({e})"),
            timeout: false,
            retry_after: None,
        },
        Err(_) => Verdict::Answer,
    }
}

/// What to do after an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Next {
    /// Keep this result (transient when every attempt was).
    Keep { transient: Option<Transient> },
    /// Wait, then try again.
    Wait(Duration),
}

/// The attempts of one exchange.
#[derive(Debug)]
pub(super) struct Schedule {
    attempts: u32,
    timeouts: u32,
    server_errors: u32,
    waited: Duration,
}

impl Schedule {
    pub(super) fn new() -> Self {
        Self {
            attempts: 0,
            timeouts: 0,
            server_errors: 0,
            waited: Duration::ZERO,
        }
    }

    pub(super) fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Whether a wait fits in this exchange's waiting and the run budget.
    pub(super) fn allows(&mut self, wait: Duration, left: Option<Duration>) -> bool {
        let fits = self.waited + wait <= MAX_WAITING && left.is_none_or(|l| wait < l);
        if fits {
            self.waited += wait;
        }
        fits
    }

    /// The decision after an attempt with `verdict`.
    pub(super) fn next(&mut self, verdict: Verdict, left: Option<Duration>) -> Next {
        self.attempts += 1;
        match verdict {
            Verdict::Answer => Next::Keep { transient: None },
            Verdict::ServerError => {
                self.server_errors += 1;
                let wait = backoff(self.attempts);
                if self.server_errors > 1 || !self.allows(wait, left) {
                    Next::Keep { transient: None }
                } else {
                    Next::Wait(wait)
                }
            }
            Verdict::Transient {
                what,
                timeout,
                retry_after,
            } => {
                self.timeouts += u32::from(timeout);
                let wait = match retry_after.map(|a| a.min(MAX_RETRY_AFTER)) {
                    // A little spread, so that clients told the same wait do
                    // not all come back at once.
                    Some(after) => after + jitter(after / 10 + BASE / 2),
                    None => backoff(self.attempts),
                };
                let spent = self.attempts >= MAX_ATTEMPTS || self.timeouts >= MAX_TIMEOUTS;
                if spent || !self.allows(wait, left) {
                    Next::Keep {
                        transient: Some(Transient { last: what }),
                    }
                } else {
                    Next::Wait(wait)
                }
            }
        }
    }
}

/// Full jitter under `min(MAX_BACKOFF, BASE * 2^(attempt-1))`: the
/// workspace's one schedule, with the harness's base and cap.
fn backoff(attempt: u32) -> Duration {
    use aggpay_internal::backoff::{full_jitter, random};
    full_jitter(BASE, MAX_BACKOFF, attempt, random())
}

/// A uniform wait in `0..=ceiling`.
fn jitter(ceiling: Duration) -> Duration {
    use aggpay_internal::backoff::{random, uniform};
    uniform(ceiling, random())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(s: u16, retry_after: &str) -> Result<Answer, ureq::Error> {
        let head =
            format!("HTTP/1.1 {s} X\r\nRetry-After: {retry_after}\r\nContent-Length: 0\r\n\r\n");
        Ok(Answer::read_from(head.as_bytes()).unwrap())
    }

    fn status(s: u16) -> Result<Answer, ureq::Error> {
        answer(s, "0")
    }

    #[test]
    fn answers_are_kept_and_transients_retried_then_given_up() {
        let mut s = Schedule::new();
        assert_eq!(
            s.next(classify(&status(200)), None),
            Next::Keep { transient: None }
        );
        let mut s = Schedule::new();
        let mut waits = 0;
        loop {
            match s.next(classify(&status(503)), None) {
                Next::Wait(_) => waits += 1,
                Next::Keep { transient } => {
                    assert_eq!(transient.unwrap().last, "503");
                    break;
                }
            }
        }
        assert_eq!(waits, MAX_ATTEMPTS - 1);
        assert_eq!(s.attempts(), MAX_ATTEMPTS);
    }

    #[test]
    fn a_500_gets_one_more_chance_and_then_counts() {
        let mut s = Schedule::new();
        assert!(matches!(
            s.next(classify(&status(500)), None),
            Next::Wait(_)
        ));
        assert_eq!(
            s.next(classify(&status(500)), None),
            Next::Keep { transient: None }
        );
    }

    #[test]
    fn waits_stay_inside_the_budget_and_the_caps() {
        let mut s = Schedule::new();
        // Retry-After of an hour: capped, and refused when the run has
        // less time left than the wait.
        let long = answer(429, "3600");
        match s.next(classify(&long), None) {
            Next::Wait(w) => assert!(w <= MAX_RETRY_AFTER * 11 / 10 + BASE, "{w:?}"),
            other => panic!("{other:?}"),
        }
        let mut s = Schedule::new();
        assert!(matches!(
            s.next(classify(&long), Some(Duration::from_secs(5))),
            Next::Keep { transient: Some(_) }
        ));
        for attempt in 1..40 {
            assert!(backoff(attempt) <= MAX_BACKOFF);
        }
    }
}
