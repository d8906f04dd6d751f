//! The crate's one error type.

use std::fmt;
use std::time::Duration;

use crate::Secret;

/// Which of API.md's two error body forms the server used.
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
/// bytes were not HTTP, or TLS failed. The message says what happened; the
/// [`source`](std::error::Error::source) chain keeps the detail of the
/// transport library, which is not part of this crate's API.
#[derive(Debug)]
pub struct TransportError {
    message: String,
    source: Box<dyn std::error::Error + Send + Sync>,
}

impl TransportError {
    pub(crate) fn new(
        message: String,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self {
            message,
            source: Box::new(source),
        }
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TransportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.source.as_ref())
    }
}

/// Everything that can go wrong. Messages are lowercase and never contain a
/// secret: the key, any `secret` field and anything the server echoes are
/// redacted, and control characters from the server are escaped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with an error body of API.md's forms.
    #[error("server answered {0}")]
    Api(ApiError),

    /// The server answered a non-2xx status whose body is not an API error
    /// (an HTML page from a proxy, say).
    #[error("server answered http {status} without an api error body: {snippet:?}")]
    #[non_exhaustive]
    Status {
        /// HTTP status.
        status: u16,
        /// The start of the body, secrets redacted.
        snippet: String,
    },

    /// The server answered with a redirect. The API never redirects, so the
    /// client follows none: the key goes to the configured origin only.
    #[error(
        "server answered http {status}, a redirect{}: the api never redirects, so it was not followed (check the base url)",
        .location.as_deref().map(|l| format!(" to {l}")).unwrap_or_default()
    )]
    #[non_exhaustive]
    Redirect {
        /// HTTP status (301, 302, 303, 307, 308…).
        status: u16,
        /// The `Location` header, when there was one.
        location: Option<String>,
    },

    /// A 2xx body that is not the documented JSON.
    #[error(
        "decode http {status} response: {reason}; body starts {snippet:?}{}",
        if .secret.is_some() {
            "; the key was rotated: its new secret is kept in this error (Error::rotated_secret)"
        } else {
            ""
        }
    )]
    #[non_exhaustive]
    Decode {
        /// HTTP status.
        status: u16,
        /// What did not fit.
        reason: String,
        /// The start of the body, secrets redacted.
        snippet: String,
        /// After a key rotation: the new secret, when the answer held
        /// `data.secret` but another field did not decode. The rotation
        /// happened; this is the only copy of the secret.
        secret: Option<Secret>,
    },

    /// The response body is larger than the configured limit.
    #[error("read response body: larger than the {limit} byte limit")]
    #[non_exhaustive]
    BodyTooLarge {
        /// The limit in bytes.
        limit: u64,
    },

    /// The connection could not be made, broke, or the bytes were not HTTP.
    #[error("reach the server: {0}")]
    Transport(#[source] TransportError),

    /// TLS failed: most often the server's certificate is not trusted.
    #[error(
        "set up tls: {0}; if the server's certificate comes from a private CA, trust that CA (ClientBuilder::ca_certificate_file, or the AGGPAY_CA_CERT environment variable)"
    )]
    Tls(#[source] TransportError),

    /// The connection or the call took longer than its timeout.
    #[error("get an answer within the timeout ({}ms)", .after.as_millis())]
    #[non_exhaustive]
    Timeout {
        /// The timeout that expired.
        after: Duration,
    },

    /// An argument was refused before any request was sent.
    #[error("accept {field}: {message}")]
    #[non_exhaustive]
    InvalidInput {
        /// What was invalid.
        field: &'static str,
        /// Why.
        message: String,
    },

    /// Configuration is missing or inconsistent (an environment variable,
    /// a base URL, a CA file).
    #[error("configure the client: {0}")]
    Config(String),

    /// The server broke pagination (a repeated cursor, a record seen twice,
    /// no end in sight); iteration stops instead of looping.
    #[error("paginate: {0}")]
    Pagination(String),
}

impl Error {
    pub(crate) fn invalid_input(field: &'static str, message: impl Into<String>) -> Self {
        Error::InvalidInput {
            field,
            message: message.into(),
        }
    }

    /// The HTTP status of the response behind the error, when there was one.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Api(api) => Some(api.status()),
            Error::Status { status, .. }
            | Error::Decode { status, .. }
            | Error::Redirect { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The API error body, when the server answered with one.
    pub fn api_error(&self) -> Option<&ApiError> {
        match self {
            Error::Api(api) => Some(api),
            _ => None,
        }
    }

    /// The new secret of a key rotation whose answer did not decode in full
    /// (see [`Error::Decode`]). Store it: the rotation happened.
    pub fn rotated_secret(&self) -> Option<&Secret> {
        match self {
            Error::Decode { secret, .. } => secret.as_ref(),
            _ => None,
        }
    }

    /// True for failures that a retry of an idempotent request may cure:
    /// transport errors, timeouts, 429, and 500/502/503/504. Redirects, TLS
    /// failures, undecodable bodies and other statuses are not retried.
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Transport(_) | Error::Timeout { .. } => true,
            Error::Api(_) | Error::Status { .. } => {
                matches!(self.status(), Some(429 | 500 | 502 | 503 | 504))
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_lowercase_and_useful() {
        let api = Error::Api(ApiError::new(
            404,
            "error.not_found".into(),
            "requested resource not found".into(),
            ErrorShape::Bare,
        ));
        assert_eq!(
            api.to_string(),
            "server answered 404 error.not_found: requested resource not found"
        );
        assert_eq!(api.status(), Some(404));
        assert!(!api.is_retryable());
        let busy = Error::Status {
            status: 503,
            snippet: "<html>".into(),
        };
        assert!(busy.is_retryable());
        let limited = Error::Api(ApiError::new(429, "x".into(), "y".into(), ErrorShape::Bare));
        assert!(limited.is_retryable());
        let timeout = Error::Timeout {
            after: Duration::from_millis(1500),
        };
        assert_eq!(
            timeout.to_string(),
            "get an answer within the timeout (1500ms)"
        );
        let redirect = Error::Redirect {
            status: 307,
            location: Some("http://elsewhere/".into()),
        };
        assert!(!redirect.is_retryable());
        assert!(redirect.to_string().contains("to http://elsewhere/"));
        let decode = Error::Decode {
            status: 200,
            reason: "missing field".into(),
            snippet: "{}".into(),
            secret: Some(Secret::new("s3cr3t")),
        };
        assert_eq!(decode.rotated_secret().map(Secret::expose), Some("s3cr3t"));
        assert!(!format!("{decode} {decode:?}").contains("s3cr3t"));
        for e in [api, busy, limited, timeout, redirect, decode] {
            let first = e.to_string().chars().next().unwrap();
            assert!(first.is_lowercase(), "{e}");
        }
    }
}
