//! HTTP matters the client and the harness share: `Retry-After`, request
//! pacing, the CA certificates to trust, and telling a TLS failure from
//! other transport failures.

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A `Retry-After` value, delay-seconds or an HTTP date (RFC 9110
/// section 10.2.3), as a wait from now; a date in the past waits nothing.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    static PARSER: jiff::fmt::rfc2822::DateTimeParser = jiff::fmt::rfc2822::DateTimeParser::new();
    let at = PARSER.parse_timestamp(value).ok()?;
    let wait = jiff::Timestamp::now().duration_until(at);
    Some(Duration::try_from(wait).unwrap_or(Duration::ZERO))
}

/// The least time between two requests, and when the next may leave.
#[derive(Debug)]
pub struct Pacer {
    interval: Duration,
    next: Mutex<Option<Instant>>,
}

impl Pacer {
    /// One request every `interval`.
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            next: Mutex::new(None),
        }
    }

    /// Waits for this request's turn: turns are handed out in order, one
    /// `interval` apart, so threads sharing a client share the rate.
    pub fn wait(&self) {
        self.wait_before(None);
    }

    /// Waits for this request's turn if it comes before `deadline`, and
    /// says so; a turn after it is not taken (nothing waits past a run's
    /// end: `false`, at once).
    pub fn wait_before(&self, deadline: Option<Instant>) -> bool {
        let now = Instant::now();
        let at = {
            let mut next = self
                .next
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let at = next.map_or(now, |n| n.max(now));
            if deadline.is_some_and(|d| at >= d) {
                return false;
            }
            *next = Some(at + self.interval);
            at
        };
        if at > now {
            std::thread::sleep(at - now);
        }
        true
    }
}

/// Why CA certificates could not be used: the message names their origin
/// (a file's path, or "the CA PEM").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaError(String);

impl std::fmt::Display for CaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CaError {}

/// The certificates of PEM text from `origin` (named in errors): at least
/// one, every item valid.
///
/// # Errors
///
/// Invalid PEM, or no certificate in it.
pub fn ca_certificates(
    pem: &[u8],
    origin: &str,
) -> Result<Vec<ureq::tls::Certificate<'static>>, CaError> {
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(pem) {
        match item {
            Ok(ureq::tls::PemItem::Certificate(cert)) => certs.push(cert.to_owned()),
            Ok(_) => {}
            Err(e) => return Err(CaError(format!("{origin} is not valid PEM: {e}"))),
        }
    }
    if certs.is_empty() {
        return Err(CaError(format!(
            "{origin} holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        )));
    }
    Ok(certs)
}

/// The certificates of a PEM file.
///
/// # Errors
///
/// The file cannot be read, or as [`ca_certificates`].
pub fn ca_file(path: &Path) -> Result<Vec<ureq::tls::Certificate<'static>>, CaError> {
    let origin = format!("the CA file {}", path.display());
    let pem = std::fs::read(path).map_err(|e| CaError(format!("cannot read {origin}: {e}")))?;
    ca_certificates(&pem, &origin)
}

/// The statuses that say nothing of the request, only that the server
/// could not take it now: throttled (429) or a gateway's (502, 503, 504).
/// The one list of the tools: the harness retries them and never judges
/// them, the setup check waits them out.
pub const TRANSIENT_STATUSES: [u16; 4] = [429, 502, 503, 504];

/// Whether `status` is one of [`TRANSIENT_STATUSES`].
pub fn is_transient_status(status: u16) -> bool {
    TRANSIENT_STATUSES.contains(&status)
}

/// The transient statuses by which the server says it did not handle the
/// request (RFC 9110 section 15.6.4: 503, "currently unable to handle";
/// RFC 6585 section 4: 429, too many requests): a write so answered was
/// not made, and may be sent again. A gateway's 502 or 504 says nothing
/// of whether the server behind it made the write.
pub const NOT_HANDLED_STATUSES: [u16; 2] = [429, 503];

/// Whether `status` is one of [`NOT_HANDLED_STATUSES`].
pub fn is_not_handled_status(status: u16) -> bool {
    NOT_HANDLED_STATUSES.contains(&status)
}

/// What a transport failure is, for deciding whether trying again can
/// help: the one classifier of the tools (the harness's retries, the
/// preflight's waits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportFailure {
    /// No answer in time (the connection or the answer).
    Timeout,
    /// Nothing accepted the connection (nothing listens there, yet).
    Refused,
    /// The connection broke: reset, aborted, or closed before the answer
    /// ended.
    Cut,
    /// Anything else (a name that does not resolve, TLS, bytes that are
    /// not HTTP): the same request meets it again.
    Other,
}

impl TransportFailure {
    /// What `error` is.
    pub fn of(error: &ureq::Error) -> Self {
        use std::io::ErrorKind as K;
        match error {
            ureq::Error::Timeout(_) => TransportFailure::Timeout,
            ureq::Error::ConnectionFailed => TransportFailure::Refused,
            ureq::Error::Io(io) => match io.kind() {
                K::TimedOut => TransportFailure::Timeout,
                K::ConnectionRefused => TransportFailure::Refused,
                K::ConnectionReset
                | K::ConnectionAborted
                | K::BrokenPipe
                | K::UnexpectedEof
                | K::NotConnected => TransportFailure::Cut,
                _ => TransportFailure::Other,
            },
            _ => TransportFailure::Other,
        }
    }

    /// Whether the same request may meet something else a moment later.
    pub fn is_transient(self) -> bool {
        self != TransportFailure::Other
    }
}

/// True when a transport failure is TLS's: a certificate that is not
/// trusted, a name that does not match, a handshake that failed.
pub fn is_tls(error: &ureq::Error) -> bool {
    match error {
        ureq::Error::Rustls(_) | ureq::Error::Tls(_) | ureq::Error::Pem(_) => true,
        _ => rustls_error(error).is_some(),
    }
}

/// The TLS library's own error inside a transport failure, if any.
pub fn rustls_error(error: &ureq::Error) -> Option<&rustls::Error> {
    match error {
        ureq::Error::Rustls(e) => Some(e),
        ureq::Error::Io(io) => io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<rustls::Error>()),
        _ => None,
    }
}

/// What kind of TLS failure a transport failure is, for a message that
/// names the right fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsFailure {
    /// The peer's bytes are not TLS (most often a plain-HTTP server).
    NotTls,
    /// The certificate is not trusted (a private CA, a self-signed one).
    Untrusted,
    /// The certificate is for another name.
    WrongName,
    /// The certificate has expired or is not valid yet.
    Expired,
    /// Another handshake failure.
    Other,
}

/// The [`TlsFailure`] of a transport failure, `None` when it is not TLS's.
pub fn tls_failure(error: &ureq::Error) -> Option<TlsFailure> {
    use rustls::{CertificateError, Error as E};
    if !is_tls(error) {
        return None;
    }
    Some(match rustls_error(error) {
        Some(E::InvalidMessage(_) | E::InappropriateMessage { .. }) => TlsFailure::NotTls,
        Some(E::InvalidCertificate(c)) => match c {
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                TlsFailure::WrongName
            }
            CertificateError::Expired
            | CertificateError::ExpiredContext { .. }
            | CertificateError::NotValidYet
            | CertificateError::NotValidYetContext { .. } => TlsFailure::Expired,
            _ => TlsFailure::Untrusted,
        },
        _ => TlsFailure::Other,
    })
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

    #[test]
    fn no_turn_is_taken_past_a_deadline() {
        let pacer = Pacer::new(Duration::from_secs(3600));
        let deadline = Some(Instant::now() + Duration::from_secs(60));
        assert!(pacer.wait_before(deadline));
        // The next turn is an hour away: refused at once, not slept for.
        let started = Instant::now();
        assert!(!pacer.wait_before(deadline));
        assert!(started.elapsed() < Duration::from_secs(30));
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after("7"), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn ca_sources_are_checked_and_named() {
        let err = ca_file(Path::new("/nonexistent/ca.pem")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/ca.pem"), "{err}");
        let err = ca_certificates(b"not pem", "the CA PEM").unwrap_err();
        assert!(err.to_string().contains("no PEM certificate"), "{err}");
    }
}
