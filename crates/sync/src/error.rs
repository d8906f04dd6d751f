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
    /// The setup is unusable: the command line, the environment, or the
    /// server they name.
    #[error(transparent)]
    Setup(Setup),
    /// The database refuses this run. It was left unchanged.
    #[error("database {0}")]
    Refused(Refusal),
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

/// What is wrong with a run's setup, by where the fix is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Setup {
    /// The arguments or the environment: no server named, a key that
    /// cannot be read, options that do not go together.
    #[error("{0}")]
    Arguments(String),
    /// The aggregator id is not one.
    #[error("the aggregator id: {0}")]
    AggregatorId(String),
    /// The server named does not work with this setup (checked before any
    /// database is opened).
    #[error("{message}")]
    Server {
        /// The likely cause.
        cause: SetupCause,
        /// What was seen and what to do.
        message: String,
    },
    /// The built-in mock (`--mock`) did not start.
    #[error("the built-in mock did not start: {0}")]
    Mock(String),
}

/// Why a server named does not work with the setup: unreachable, TLS
/// mixed up, the key refused, the aggregator unknown, a wrong path
/// prefix, and the like (the check the harness makes too).
pub use aggpay_internal::preflight::Cause as SetupCause;

/// Why the database refuses a run; it was left unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// Not an aggpay-sync database or schema (another program's).
    #[error("{what} is not aggpay-sync's ({why}); it was left unchanged")]
    NotOurs {
        /// The file, or the schema and server.
        what: String,
        /// What it is instead.
        why: String,
    },
    /// Written by a newer aggpay-sync.
    #[error(
        "{what} has schema version {found}, newer than this aggpay-sync knows ({known}); use a newer aggpay-sync. It was left unchanged"
    )]
    Newer {
        /// The file, or the schema and server.
        what: String,
        /// Its version.
        found: i64,
        /// The newest this build knows.
        known: i64,
    },
    /// A mirror of another aggregator (one database, or one PostgreSQL
    /// schema, mirrors one).
    #[error("mirrors aggregator {bound}, not {asked}: use one database per aggregator")]
    OtherAggregator {
        /// The aggregator it mirrors.
        bound: String,
        /// The aggregator of this run.
        asked: String,
    },
    /// Another run holds it.
    #[error("{what} is in use by another aggpay-sync run")]
    InUse {
        /// The file, or the schema and server.
        what: String,
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

impl DbError {
    /// An error the store found in what the database answered.
    pub(crate) fn message(text: &str) -> Self {
        DbError(text.into())
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
        aggpay_internal::text::chain(self)
    }
}
