//! `aggpay-sync`: a crash-safe mirror of an aggregator's settlement
//! batches, their transactions and payouts, its refunds, merchants and
//! rail merchants, into a SQLite file or a PostgreSQL database, built on
//! the public API of the `aggpay` client.
//!
//! Each run is incremental: new batches, the batches still open, the rows
//! of every batch not yet verified, the refunds since the last run. Every
//! page of rows is committed with the walk position that follows it, in
//! one transaction, so a run killed at any instant resumes where it
//! stopped, with no row lost or written twice. A batch that reached a
//! final status is verified: its rows must number the server's
//! `filtered_count`. A batch whose walk fails is set aside and named; the
//! others go on.
//!
//! Exit codes: 0 everything synced and verified; 1 integrity errors, or a
//! batch set aside for a server fault (reported, and taken again on the
//! next run); 2 the run could not be made or finished, or only transient
//! failures outlasted the retries.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

// The bench's ceilings run the engine and the stores with half the work
// taken away, so they live beside them; only the bench builds them.
#[cfg(feature = "ceilings")]
pub mod ceiling;
mod cli;
mod engine;
mod error;
mod progress;
mod store;
mod summary;

pub use cli::{Args, DEFAULT_JOBS};
pub use error::{DbError, Refusal, Setup, SetupCause, SyncError};
pub use store::Target;
pub use summary::{Left, Summary};

use std::io::IsTerminal;
use std::time::Duration;

use aggpay::{AggregatorId, Client, RetryPolicy, Secret};
use aggpay_internal::setup::Server;
use aggpay_mock::{MockConfig, MockServer};

/// Everything synced, every final batch verified.
pub const EXIT_OK: u8 = 0;
/// Integrity errors, or a batch set aside for a server fault.
pub const EXIT_INTEGRITY: u8 = 1;
/// The run could not be made or finished.
pub const EXIT_UNUSABLE: u8 = 2;

/// The schema versions this build writes: SQLite, PostgreSQL.
pub const SCHEMA_VERSIONS: (i64, i64) = store::SCHEMA_VERSIONS;

/// The sync's retries: far more patient than an interactive client's. A
/// request that fails transiently (429 with `Retry-After`, 5xx, a reset,
/// a timeout) is tried up to 10 times, the backoff doubling from 100 ms to
/// two minutes with full jitter, a `Retry-After` of up to ten minutes
/// honoured; all the run's waiting together stays within `max_wait`.
pub fn retry_policy(max_wait: Duration) -> RetryPolicy {
    RetryPolicy::builder()
        .max_attempts(10)
        .base_delay(Duration::from_millis(100))
        .max_delay(Duration::from_secs(120))
        .max_retry_after(Duration::from_secs(600))
        .max_total_wait(max_wait)
        .build()
}

/// Runs one sync as the binary does: messages on stderr, the `--json`
/// summary on stdout. Returns the exit code.
pub fn run(args: &Args) -> u8 {
    let mut stdout = std::io::stdout();
    let mut stderr = std::io::stderr();
    let terminal = stderr.is_terminal();
    run_with(args, &mut stdout, &mut stderr, terminal)
}

/// [`run`] with its outputs given: `terminal` chooses the progress bar
/// over log lines. The `--json` summary is printed on every exit, with
/// the error of a run that could not be made or finished.
pub fn run_with(
    args: &Args,
    stdout: &mut dyn std::io::Write,
    stderr: &mut dyn std::io::Write,
    terminal: bool,
) -> u8 {
    let progress = progress::Progress::new(terminal && !args.quiet, args.quiet);
    let mut summary = Summary {
        database: args.db.shown(),
        ..Summary::default()
    };
    let result = sync(args, &progress, stderr, &mut summary);
    progress.finish();
    if let Err(e) = &result {
        summary.error.get_or_insert_with(|| e.chain());
    }
    let code = summary.exit_code();
    for e in &summary.integrity_errors {
        let _ = writeln!(stderr, "aggpay-sync: integrity error: {e}");
    }
    for l in &summary.left {
        let why = if l.transient { "for now" } else { "set aside" };
        let _ = writeln!(
            stderr,
            "aggpay-sync: {} ({}) {why}: {}",
            l.subject, l.kind, l.reason
        );
    }
    match &summary.error {
        Some(error) => {
            let _ = writeln!(stderr, "aggpay-sync: {error}");
        }
        None if !args.quiet => {
            let _ = writeln!(stderr, "aggpay-sync: {}", summary.line());
        }
        None => {}
    }
    if args.json {
        let _ = writeln!(stdout, "{}", summary.to_json());
    }
    code
}

/// How long the check of the setup waits out transient failures, at most
/// (less when `--max-wait` is less).
const PREFLIGHT_PATIENCE: Duration = Duration::from_secs(120);

fn sync(
    args: &Args,
    progress: &progress::Progress,
    stderr: &mut dyn std::io::Write,
    summary: &mut Summary,
) -> Result<(), SyncError> {
    let setup = args
        .server
        .resolve(&mut std::io::stdin())
        .map_err(|e| SyncError::Setup(Setup::Arguments(e)))?;
    for w in &setup.warnings {
        warning(stderr, w);
    }
    if args.db.password_in_url() && args.db_on_command_line() {
        warning(
            stderr,
            "the --db URL carries a password, visible in the process list: leave it out and use PGPASSWORD or the password file ~/.pgpass (or PGPASSFILE)",
        );
    }
    // Nothing is created or changed before the setup is known to work:
    // `client` checks it first.
    let (client, _mock) = client(args, setup.server, stderr, summary)?;
    let mut store = store::open(&args.db, client.aggregator_id(), &mut |w| {
        warning(stderr, &w);
    })?;
    store.bind_source(client.base_url(), client.aggregator_id())?;
    let plan = engine::Plan {
        full: args.full,
        refund_window: args.refund_window(),
        jobs: usize::from(args.jobs),
    };
    engine::Engine::new(&client, store.as_mut(), progress, plan).run(summary)
}

fn warning(stderr: &mut dyn std::io::Write, text: &str) {
    let _ = writeln!(stderr, "aggpay-sync: warning: {text}");
}

/// The client of the run, once the check of the setup shows that the
/// server takes the key for the aggregator; or of the built-in mock, asked
/// for with `--mock`, which lives as long as the returned server.
fn client(
    args: &Args,
    server: Server,
    stderr: &mut dyn std::io::Write,
    summary: &mut Summary,
) -> Result<(Client, Option<MockServer>), SyncError> {
    let (builder, mock) = match server {
        Server::Remote {
            base,
            key,
            aggregator,
        } => {
            summary.target = base.clone();
            let aggregator = AggregatorId::parse(aggregator)
                .map_err(|e| SyncError::Setup(Setup::AggregatorId(e.to_string())))?;
            aggpay_internal::preflight::check(&aggpay_internal::preflight::Preflight {
                base: &base,
                aggregator: aggregator.as_str(),
                key: key.expose(),
                ca_cert: args.server.ca_cert.as_deref(),
                timeout: args.timeout(),
                patience: args.max_wait().min(PREFLIGHT_PATIENCE),
                user_agent: concat!("aggpay-sync/", env!("CARGO_PKG_VERSION")),
            })
            .map(|_| ())
            .map_err(|p| {
                SyncError::Setup(Setup::Server {
                    cause: p.cause,
                    message: p.message,
                })
            })?;
            let builder = Client::builder(base, aggregator, Secret::new(key.expose()));
            (builder, None)
        }
        Server::Mock => {
            let server = MockServer::start(MockConfig::new())
                .map_err(|e| SyncError::Setup(Setup::Mock(e.to_string())))?;
            summary.target = format!("{} (built-in mock)", server.url());
            if !args.quiet {
                let _ = writeln!(
                    stderr,
                    "aggpay-sync: --mock: mirroring the built-in mock's demo data from {}",
                    server.url()
                );
            }
            let builder = Client::builder(
                server.url(),
                server.aggregator_id().clone(),
                server.secret_key(),
            );
            (builder, Some(server))
        }
    };
    let mut builder = builder
        .timeout(args.timeout())
        .retry(retry_policy(args.max_wait()));
    if let Some(rate) = args.rate_limit {
        builder = builder.rate_limit(rate);
    }
    if let Some(ca) = &args.server.ca_cert {
        builder = builder.ca_certificate_file(ca);
    }
    let client = builder
        .build()
        .map_err(SyncError::client("the client cannot be configured"))?;
    Ok((client, mock))
}
