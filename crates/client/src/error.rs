//! The crate's one error type.

use std::fmt;
use std::time::Duration;

/// Which of API.md's two error body forms the server used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorShape {
    /// `{"api_version": …, "error": {"code": …, "message": …}}` (401, 500).
    Envelope,
    /// `{"code": …, "message": …}` (400, 404).
    Bare,
}

/// An error the API answered with: HTTP status, code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    status: u16,
    code: String,
    message: String,
    shape: ErrorShape,
}

impl ApiError {
    /// Builds an API error.
    pub fn new(
        status: u16,
        code: impl Into<String>,
        message: impl Into<String>,
        shape: ErrorShape,
    ) -> Self {
        Self {
            status,
            code: code.into(),
            message: message.into(),
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

/// Everything that can go wrong. Messages are lowercase and never contain a
/// secret: the key is scrubbed from anything the server echoes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with an error body of API.md's forms.
    #[error("server answered {0}")]
    Api(ApiError),

    /// The server answered a non-2xx status whose body is not an API error
    /// (an HTML page from a proxy, say).
    #[error("server answered http {status} without an api error body: {snippet:?}")]
    Status {
        /// HTTP status.
        status: u16,
        /// The start of the body.
        snippet: String,
    },

    /// A 2xx body that is not the documented JSON.
    #[error("decode http {status} response: {reason}; body starts {snippet:?}")]
    Decode {
        /// HTTP status.
        status: u16,
        /// What did not fit.
        reason: String,
        /// The start of the body.
        snippet: String,
    },

    /// The response body is larger than the configured limit.
    #[error("read response body: larger than the {limit} byte limit")]
    BodyTooLarge {
        /// The limit in bytes.
        limit: u64,
    },

    /// The connection could not be made, broke, or the bytes were not HTTP.
    #[error("reach the server: {0}")]
    Transport(#[source] Box<ureq::Error>),

    /// The connection or the call took longer than its timeout.
    #[error("get an answer within the timeout ({}ms)", .after.as_millis())]
    Timeout {
        /// The timeout that expired.
        after: Duration,
    },

    /// An argument was refused before any request was sent.
    #[error("accept {field}: {message}")]
    InvalidInput {
        /// What was invalid.
        field: &'static str,
        /// Why.
        message: String,
    },

    /// Configuration is missing or inconsistent (an environment variable,
    /// a base URL).
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
            Error::Status { status, .. } | Error::Decode { status, .. } => Some(*status),
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

    /// True for failures that a retry of an idempotent request may cure:
    /// transport errors, timeouts, 429, and 500/502/503/504.
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
            "error.not_found",
            "requested resource not found",
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
        let limited = Error::Api(ApiError::new(429, "x", "y", ErrorShape::Bare));
        assert!(limited.is_retryable());
        let timeout = Error::Timeout {
            after: Duration::from_millis(1500),
        };
        assert_eq!(
            timeout.to_string(),
            "get an answer within the timeout (1500ms)"
        );
        for e in [api, busy, limited, timeout] {
            let first = e.to_string().chars().next().unwrap();
            assert!(first.is_lowercase(), "{e}");
        }
    }
}
