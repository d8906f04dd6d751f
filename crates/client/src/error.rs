//! The crate's one error type.

use std::fmt;
use std::time::Duration;

use crate::Secret;

/// Which of the API's two error body forms the server used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorShape {
    /// `{"api_version": …, "error": {"code": …, "message": …}}` (401, 500).
    Envelope,
    /// `{"code": …, "message": …}` (400, 404).
    Bare,
}

/// An error the API answered with: HTTP status, code and message. The code
/// and message are the server's, with secrets redacted and control
/// characters escaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    status: u16,
    code: String,
    message: String,
    shape: ErrorShape,
}

impl ApiError {
    pub(crate) fn new(status: u16, code: String, message: String, shape: ErrorShape) -> Self {
        Self {
            status,
            code,
            message,
            shape,
        }
    }

    /// The HTTP status.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The error code, such as `error.not_found`.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The server's message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The body form the server used.
    pub fn shape(&self) -> ErrorShape {
        self.shape
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.status, self.code, self.message)
    }
}

/// A failure below HTTP: the connection could not be made or broke, the
/// bytes were not HTTP, or TLS failed. It says what happened (the words of
/// the system or the TLS library, secrets redacted); the transport
/// library's error itself is not part of this crate's API.
#[derive(Debug, Clone)]
pub struct TransportError {
    message: String,
    io: Option<std::io::ErrorKind>,
}

impl TransportError {
    pub(crate) fn new(message: String, io: Option<std::io::ErrorKind>) -> Self {
        Self { message, io }
    }

    /// The kind of the system's I/O error behind it, when there was one
    /// (`ConnectionRefused`, `ConnectionReset`…).
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        self.io
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

// The message is the cause's own words: nothing below it to walk.
impl std::error::Error for TransportError {}

/// What went wrong; [`Error::kind`]. Messages are lowercase and never
/// contain a secret: the key, any `secret` field and anything the server
/// echoes are redacted, and control characters from the server are
/// escaped.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The server answered with an error body of the API's forms.
    Api(ApiError),

    /// The server answered a non-2xx status whose body is not an API error
    /// (an HTML page from a proxy, say).
    #[non_exhaustive]
    Status {
        /// HTTP status.
        status: u16,
        /// The start of the body, secrets redacted, control characters
        /// escaped once (`\u{1b}`).
        snippet: String,
    },

    /// The server answered with a redirect. The API never redirects, so the
    /// client follows none: the key goes to the configured origin only.
    #[non_exhaustive]
    Redirect {
        /// HTTP status (301, 302, 303, 307, 308…).
        status: u16,
        /// The `Location` header, when there was one.
        location: Option<String>,
    },

    /// A 2xx body that is not the documented JSON.
    #[non_exhaustive]
    Decode {
        /// HTTP status.
        status: u16,
        /// What did not fit.
        reason: String,
        /// The start of the body, secrets redacted, control characters
        /// escaped once (`\u{1b}`).
        snippet: String,
        /// After a key rotation: the new secret, when the answer held
        /// `data.secret` but another field did not decode. The rotation
        /// happened; this is the only copy of the secret.
        secret: Option<Secret>,
    },

    /// The response body is larger than the configured limit.
    #[non_exhaustive]
    BodyTooLarge {
        /// The limit in bytes.
        limit: u64,
    },

    /// The connection could not be made, broke, or the bytes were not HTTP.
    Transport(TransportError),

    /// TLS failed: most often the server's certificate is not trusted.
    Tls(TransportError),

    /// The connection or the call took longer than its timeout.
    #[non_exhaustive]
    Timeout {
        /// The timeout that expired.
        after: Duration,
    },

    /// An argument was refused before any request was sent.
    #[non_exhaustive]
    InvalidInput {
        /// What was invalid.
        field: &'static str,
        /// Why.
        message: String,
    },

    /// Configuration is missing or inconsistent (an environment variable,
    /// a base URL, a CA file).
    Config(String),

    /// The server broke pagination (a repeated cursor, a record seen twice,
    /// no end in sight); iteration stops instead of looping.
    Pagination(String),
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Api(api) => write!(f, "server answered {api}"),
            ErrorKind::Status { status, snippet } => write!(
                f,
                "server answered http {status} without an api error body: \"{snippet}\""
            ),
            ErrorKind::Redirect { status, location } => write!(
                f,
                "server answered http {status}, a redirect{}: the api never redirects, so it was not followed (check the base url)",
                location
                    .as_deref()
                    .map(|l| format!(" to {l}"))
                    .unwrap_or_default()
            ),
            ErrorKind::Decode {
                status,
                reason,
                snippet,
                secret,
            } => write!(
                f,
                "undecodable http {status} response: {reason}; body starts \"{snippet}\"{}",
                if secret.is_some() {
                    "; the key was rotated: its new secret is kept in this error (Error::rotated_secret)"
                } else {
                    ""
                }
            ),
            ErrorKind::BodyTooLarge { limit } => {
                write!(f, "response body larger than the {limit} byte limit")
            }
            ErrorKind::Transport(_) => f.write_str("could not reach the server"),
            ErrorKind::Tls(_) => f.write_str(
                "tls failed; if the server's certificate comes from a private CA, trust that CA (ClientBuilder::ca_certificate_file, or the AGGPAY_CA_CERT environment variable)",
            ),
            ErrorKind::Timeout { after } => {
                write!(f, "no answer within the timeout ({}ms)", after.as_millis())
            }
            ErrorKind::InvalidInput { field, message } => write!(f, "invalid {field}: {message}"),
            ErrorKind::Config(message) => write!(f, "invalid configuration: {message}"),
            ErrorKind::Pagination(message) => write!(f, "broken pagination: {message}"),
        }
    }
}

/// Everything that can go wrong: what ([`Error::kind`]), during which
/// operation and on which identifier ([`Error::operation`],
/// [`Error::id`]), after how many attempts ([`Error::attempts`]).
///
/// `Display` says all of that in one line, and nothing of its cause: the
/// cause (the system's words for a failed connection, say) is its
/// [`source`](std::error::Error::source), so that a reporter that walks
/// the chain (`anyhow`'s `{:#}`) shows each cause once.
///
/// Branch on the predicates, or on [`Error::kind`]:
///
/// ```no_run
/// use aggpay::{BatchToken, Client, ErrorKind, TransactionQuery};
///
/// let client = Client::from_env()?;
/// let batch = BatchToken::parse("sb_0f8fad5b-d9cb-469f-a165-70867728950e")?;
/// match client.list_batch_transactions(&batch, &TransactionQuery::new()) {
///     Ok(page) => println!("{} rows", page.count),
///     Err(e) if e.is_not_found() => println!("no such batch"),
///     Err(e) if e.is_unauthorized() => println!("the key was refused: rotate it"),
///     Err(e) if e.is_network() => println!("the server is unreachable, try later: {e}"),
///     Err(e) => match e.kind() {
///         ErrorKind::Api(api) => println!("{} {}", api.code(), api.message()),
///         _ => return Err(e),
///     },
/// }
/// # Ok::<(), aggpay::Error>(())
/// ```
pub struct Error {
    inner: Box<Inner>,
}

struct Inner {
    kind: ErrorKind,
    operation: Option<&'static str>,
    id: Option<String>,
    /// The aggregator of the path: a 404 may be about it.
    aggregator: Option<String>,
    attempts: u32,
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Self {
            inner: Box::new(Inner {
                kind,
                operation: None,
                id: None,
                aggregator: None,
                attempts: 0,
            }),
        }
    }
}

impl Error {
    pub(crate) fn invalid_input(field: &'static str, message: impl Into<String>) -> Self {
        ErrorKind::InvalidInput {
            field,
            message: message.into(),
        }
        .into()
    }

    pub(crate) fn config(message: impl Into<String>) -> Self {
        ErrorKind::Config(message.into()).into()
    }

    pub(crate) fn pagination(message: impl Into<String>) -> Self {
        ErrorKind::Pagination(message.into()).into()
    }

    /// The operation and the identifier it was about; kept when already
    /// set (the innermost operation knows best).
    pub(crate) fn during(mut self, operation: &'static str, id: Option<&str>) -> Self {
        if self.inner.operation.is_none() {
            self.inner.operation = Some(operation);
            self.inner.id = id.map(str::to_owned);
        }
        self
    }

    /// The aggregator the request named.
    pub(crate) fn on_aggregator(mut self, aggregator: &str) -> Self {
        self.inner.aggregator = Some(aggregator.to_owned());
        self
    }

    /// What a 404 was about, in words: the record the operation names, or
    /// the aggregator itself (API.md leaves open whether a key used on
    /// another aggregator's path gets 401 or 404).
    fn not_found_about(&self) -> Option<String> {
        if !self.is_not_found() || self.api_error().is_none() {
            return None;
        }
        let aggregator = self.inner.aggregator.as_deref()?;
        let record = match (self.inner.operation?, self.inner.id.as_deref()) {
            ("get_aggregator", _) => return Some(format!("aggregator {aggregator} not found")),
            ("get_payment_charges", Some(id)) => format!("no payment {id}"),
            ("list_batch_transactions" | "batch_transactions", Some(id)) => {
                format!("no settlement batch {id}")
            }
            ("get_rail_merchant", Some(id)) => format!("no rail merchant {id}"),
            ("get_alias", Some(id)) => format!("no alias {id}"),
            ("rotate_access_key", Some(id)) => format!("no access key {id}"),
            (_, Some(id)) => format!("no record {id}"),
            (_, None) => {
                return Some(format!(
                    "aggregator {aggregator} not found, or not the key's (Client::check tells which)"
                ));
            }
        };
        Some(format!(
            "{record}, or aggregator {aggregator} is unknown or not the key's (Client::check tells which)"
        ))
    }

    pub(crate) fn after_attempts(mut self, attempts: u32) -> Self {
        self.inner.attempts = attempts;
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.inner.kind
    }

    /// Gives back what went wrong.
    pub fn into_kind(self) -> ErrorKind {
        self.inner.kind
    }

    /// The client method that failed (`list_batch_transactions`), when the
    /// error came from one.
    pub fn operation(&self) -> Option<&'static str> {
        self.inner.operation
    }

    /// The identifier the operation was about (a batch token, a payment
    /// id…), when it took one.
    pub fn id(&self) -> Option<&str> {
        self.inner.id.as_deref()
    }

    /// Requests sent before giving up: more than 1 when retries were made;
    /// 0 when the error came before any request (a refused argument).
    pub fn attempts(&self) -> u32 {
        self.inner.attempts
    }

    /// The HTTP status of the response behind the error, when there was one.
    ///
    /// ```
    /// # fn check(e: &aggpay::Error) {
    /// if e.status() == Some(429) {
    ///     // throttled, and the client's retries ran out
    /// }
    /// # }
    /// ```
    pub fn status(&self) -> Option<u16> {
        match self.kind() {
            ErrorKind::Api(api) => Some(api.status()),
            ErrorKind::Status { status, .. }
            | ErrorKind::Decode { status, .. }
            | ErrorKind::Redirect { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The API error body, when the server answered with one.
    pub fn api_error(&self) -> Option<&ApiError> {
        match self.kind() {
            ErrorKind::Api(api) => Some(api),
            _ => None,
        }
    }

    /// The key was refused (HTTP 401): no retry will help; the key must
    /// change.
    ///
    /// ```no_run
    /// let client = aggpay::Client::from_env()?;
    /// if let Err(e) = client.get_aggregator() {
    ///     if e.is_unauthorized() {
    ///         eprintln!("the key was refused: check AGGPAY_SECRET_KEY");
    ///     }
    /// }
    /// # Ok::<(), aggpay::Error>(())
    /// ```
    pub fn is_unauthorized(&self) -> bool {
        self.status() == Some(401)
    }

    /// The record asked for does not exist (HTTP 404).
    ///
    /// ```no_run
    /// use aggpay::{Client, PaymentId};
    ///
    /// let client = Client::from_env()?;
    /// let charges = match client.get_payment_charges(&PaymentId::parse("pm_1")?) {
    ///     Ok(charges) => Some(charges),
    ///     Err(e) if e.is_not_found() => None,
    ///     Err(e) => return Err(e),
    /// };
    /// # Ok::<(), aggpay::Error>(())
    /// ```
    pub fn is_not_found(&self) -> bool {
        self.status() == Some(404)
    }

    /// The server could not be talked to: the connection failed or broke,
    /// no answer came in time, or TLS failed. Nothing the server said.
    ///
    /// ```
    /// let client = aggpay::Client::builder("http://127.0.0.1:9", "agg_1".parse()?, "key")
    ///     .retry(aggpay::RetryPolicy::builder().max_attempts(1).build())
    ///     .build()?;
    /// let e = client.get_aggregator().unwrap_err();
    /// assert!(e.is_network());
    /// assert_eq!(e.operation(), Some("get_aggregator"));
    /// # Ok::<(), aggpay::Error>(())
    /// ```
    pub fn is_network(&self) -> bool {
        matches!(
            self.kind(),
            ErrorKind::Transport(_) | ErrorKind::Tls(_) | ErrorKind::Timeout { .. }
        )
    }

    /// The new secret of a key rotation whose answer did not decode in full
    /// (see [`ErrorKind::Decode`]). Store it: the rotation happened.
    pub fn rotated_secret(&self) -> Option<&Secret> {
        match self.kind() {
            ErrorKind::Decode { secret, .. } => secret.as_ref(),
            _ => None,
        }
    }

    /// True for failures that a retry of an idempotent request may cure:
    /// transport errors, timeouts, 429, and 500/502/503/504. Redirects, TLS
    /// failures, undecodable bodies and other statuses are not retried.
    pub fn is_retryable(&self) -> bool {
        match self.kind() {
            ErrorKind::Transport(_) | ErrorKind::Timeout { .. } => true,
            ErrorKind::Api(_) | ErrorKind::Status { .. } => {
                // A 500 too: the server failed this once, and an
                // idempotent request may be tried again.
                self.status()
                    .is_some_and(|s| s == 500 || aggpay_internal::http::is_transient_status(s))
            }
            _ => false,
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.inner.kind);
        if let Some(operation) = self.inner.operation {
            d.field("operation", &operation);
        }
        if let Some(id) = &self.inner.id {
            d.field("id", id);
        }
        d.field("attempts", &self.inner.attempts).finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(operation) = self.inner.operation {
            f.write_str(operation)?;
            if let Some(id) = &self.inner.id {
                write!(f, " {id}")?;
            }
            f.write_str(": ")?;
        }
        write!(f, "{}", self.inner.kind)?;
        if let Some(about) = self.not_found_about() {
            write!(f, " ({about})")?;
        }
        if self.inner.attempts > 1 {
            write!(f, " (after {} attempts)", self.inner.attempts)?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self.kind() {
            ErrorKind::Transport(cause) | ErrorKind::Tls(cause) => Some(cause),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chain as `anyhow`'s `{:#}` prints it: each error's `Display`,
    /// joined by `: `, down the `source()` chain.
    fn chain(e: &dyn std::error::Error) -> String {
        let mut out = e.to_string();
        let mut next = e.source();
        while let Some(cause) = next {
            out.push_str(": ");
            out.push_str(&cause.to_string());
            next = cause.source();
        }
        out
    }

    #[test]
    fn a_chain_shows_each_cause_once() {
        let e = Error::from(ErrorKind::Transport(TransportError::new(
            "Connection refused (os error 111)".into(),
            Some(std::io::ErrorKind::ConnectionRefused),
        )))
        .during("list_batch_transactions", Some("sb_1"))
        .after_attempts(4);
        let shown = chain(&e);
        assert_eq!(
            shown,
            "list_batch_transactions sb_1: could not reach the server (after 4 attempts): Connection refused (os error 111)"
        );
        assert_eq!(shown.matches("Connection refused").count(), 1);
        assert!(e.is_network() && e.is_retryable());
        assert!(
            matches!(e.kind(), ErrorKind::Transport(t) if t.io_kind() == Some(std::io::ErrorKind::ConnectionRefused))
        );
        assert_eq!(e.operation(), Some("list_batch_transactions"));
        assert_eq!(e.id(), Some("sb_1"));
        assert_eq!(e.attempts(), 4);
    }

    #[test]
    fn messages_are_lowercase_and_useful() {
        let api = Error::from(ErrorKind::Api(ApiError::new(
            404,
            "error.not_found".into(),
            "requested resource not found".into(),
            ErrorShape::Bare,
        )));
        assert_eq!(
            api.to_string(),
            "server answered 404 error.not_found: requested resource not found"
        );
        assert_eq!(api.status(), Some(404));
        assert!(api.is_not_found() && !api.is_unauthorized() && !api.is_network());
        assert!(!api.is_retryable());
        let busy = Error::from(ErrorKind::Status {
            status: 503,
            snippet: "<html>".into(),
        });
        assert!(busy.is_retryable());
        let limited = Error::from(ErrorKind::Api(ApiError::new(
            429,
            "x".into(),
            "y".into(),
            ErrorShape::Bare,
        )));
        assert!(limited.is_retryable());
        let timeout = Error::from(ErrorKind::Timeout {
            after: Duration::from_millis(1500),
        });
        assert_eq!(timeout.to_string(), "no answer within the timeout (1500ms)");
        let redirect = Error::from(ErrorKind::Redirect {
            status: 307,
            location: Some("http://elsewhere/".into()),
        });
        assert!(!redirect.is_retryable());
        assert!(redirect.to_string().contains("to http://elsewhere/"));
        let decode = Error::from(ErrorKind::Decode {
            status: 200,
            reason: "missing field".into(),
            snippet: "{}".into(),
            secret: Some(Secret::new("s3cr3t")),
        });
        assert_eq!(decode.rotated_secret().map(Secret::expose), Some("s3cr3t"));
        assert!(!format!("{decode} {decode:?}").contains("s3cr3t"));
        for e in [api, busy, limited, timeout, redirect, decode] {
            let first = e.to_string().chars().next().unwrap();
            assert!(first.is_lowercase(), "{e}");
        }
    }

    #[test]
    fn a_body_snippet_is_escaped_once_however_it_is_printed() {
        // A gzip body read as text: control bytes and a byte that is not
        // UTF-8.
        let snippet = aggpay_internal::text::Redactor::new().snippet(b"\x1f\x8b\x08\x00rest", 40);
        let e = Error::from(ErrorKind::Decode {
            status: 200,
            reason: "expected value at line 1 column 1".into(),
            snippet,
            secret: None,
        });
        let shown = e.to_string();
        assert!(
            shown.ends_with(r#"body starts "\u{1f}\x8b\u{8}\u{0}rest""#),
            "{shown}"
        );
        // As the tools print an error: the same text.
        assert_eq!(aggpay_internal::text::chain(&e), shown);
    }
}
