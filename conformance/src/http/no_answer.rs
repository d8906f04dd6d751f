//! Why a request got no answer.

use super::BUDGET_SPENT;

/// Why a request got no answer: what a caller branches on, and the words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoAnswer {
    /// What kind of failure.
    pub kind: NoAnswerKind,
    /// What happened, fit to show (secrets redacted, controls escaped).
    pub message: String,
}

/// The kinds of [`NoAnswer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoAnswerKind {
    /// Not sent: the run budget ran out.
    Budget,
    /// TLS failed (most often a certificate the harness does not trust).
    Tls,
    /// No answer within the timeout.
    Timeout,
    /// The connection could not be made or broke.
    Transport,
}

impl NoAnswer {
    pub(super) fn budget() -> Self {
        Self {
            kind: NoAnswerKind::Budget,
            message: BUDGET_SPENT.to_owned(),
        }
    }

    /// The kind of a transport failure (the client's own classification).
    pub(super) fn kind_of(error: &ureq::Error) -> NoAnswerKind {
        match error {
            _ if aggpay_internal::http::is_tls(error) => NoAnswerKind::Tls,
            ureq::Error::Timeout(_) => NoAnswerKind::Timeout,
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                NoAnswerKind::Timeout
            }
            _ => NoAnswerKind::Transport,
        }
    }
}

impl std::fmt::Display for NoAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
