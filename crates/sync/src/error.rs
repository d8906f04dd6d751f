//! The one error type of the library.

/// Why a run could not be made or finished. Integrity errors, and batches
/// set aside, are not here: they are findings of a finished run
/// ([`crate::Summary`]).
///
/// `Display` says what failed; the cause (the database's or the client's
/// own error) is the `source()`, for a reporter that walks the chain.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SyncError {
    /// The command line or configuration is unusable.
    #[error("{0}")]
    Config(String),
    /// The database refuses this run: not an aggpay-sync database, a
    /// newer schema, another aggregator's, or in use by another run. It
    /// was left unchanged.
    #[error("database {0}")]
    Refused(String),
    /// A database operation failed.
    #[error("database: {context}")]
    Database {
        /// What the run was doing.
        context: String,
        /// The database's error.
        #[source]
        source: DbError,
    },
    /// The client could not be built, or a request failed for good where
    /// the run cannot go on without it. What was committed stays: the
    /// next run resumes from it.
    #[error("{context}")]
    Client {
        /// What the run was doing.
        context: String,
        /// The client's error.
        #[source]
        source: aggpay::Error,
    },
}

/// A database driver's error, kept whole as a source (which driver is
/// not part of the API).
#[derive(Debug)]
pub struct DbError(Box<dyn std::error::Error + Send + Sync>);

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for DbError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl SyncError {
    pub(crate) fn client(context: impl Into<String>) -> impl FnOnce(aggpay::Error) -> Self {
        let context = context.into();
        move |source| SyncError::Client { context, source }
    }

    /// A database failure while doing `context`.
    pub(crate) fn db<E>(context: impl Into<String>) -> impl FnOnce(E) -> Self
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        let context = context.into();
        move |e| SyncError::Database {
            context,
            source: DbError(Box::new(e)),
        }
    }

    /// The error and its causes on one line, each once (`a: b: c`).
    pub fn chain(&self) -> String {
        let mut out = self.to_string();
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            let text = cause.to_string();
            if !out.ends_with(&text) {
                out.push_str(": ");
                out.push_str(&text);
            }
            source = cause.source();
        }
        aggpay_internal::text::escape_control(&out).into_owned()
    }
}
