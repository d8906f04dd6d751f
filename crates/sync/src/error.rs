//! The one error type of the library.

/// Why a run could not be made or finished. Integrity errors are not
/// here: they are findings of a finished run ([`crate::Summary`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SyncError {
    /// The command line or configuration is unusable.
    #[error("{0}")]
    Config(String),
    /// The database cannot be used: not ours, newer, locked, or failing.
    #[error("database {0}")]
    Database(String),
    /// The client could not be built, or a request failed for good
    /// (after its retries). What was committed stays: the next run
    /// resumes from it.
    #[error("{context}: {source}")]
    Client {
        /// What the run was doing.
        context: String,
        /// The client's error.
        #[source]
        source: aggpay::Error,
    },
}

impl SyncError {
    pub(crate) fn client(context: impl Into<String>) -> impl FnOnce(aggpay::Error) -> Self {
        let context = context.into();
        move |source| SyncError::Client { context, source }
    }

    pub(crate) fn db(context: &str, e: impl std::fmt::Display) -> Self {
        SyncError::Database(format!("{context}: {e}"))
    }
}
