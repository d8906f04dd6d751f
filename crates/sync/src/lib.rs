//! `aggpay-sync`: a crash-safe SQLite mirror of an aggregator's settlement
//! batches, their transactions and their payouts, built on the public API
//! of the `aggpay` client.
//!
//! Each run is incremental: new batches, the batches still open, and the
//! rows of every batch not yet verified. Every page of rows is committed
//! with the walk position that follows it, in one SQLite transaction, so a
//! run killed at any instant resumes where it stopped, with no row lost or
//! written twice. A batch that reached a final status is verified: its
//! rows must number the server's `filtered_count`.
//!
//! Exit codes: 0 synced and verified; 1 integrity errors (reported, and
//! the batch walked again on the next run); 2 the run could not be made
//! or finished (bad arguments, server unreachable, key refused, database
//! refused or locked).
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod cli;
mod db;
mod engine;
mod error;
mod progress;
mod summary;

pub use cli::Args;
pub use db::SCHEMA_VERSION;
pub use error::SyncError;
pub use summary::Summary;

use std::io::IsTerminal;

use aggpay::{Client, RetryPolicy};
use aggpay_mock::{MockConfig, MockServer};

/// Synced, every final batch verified.
pub const EXIT_OK: u8 = 0;
/// Integrity errors: a batch's rows do not match the server's count.
pub const EXIT_INTEGRITY: u8 = 1;
/// The run could not be made or finished.
pub const EXIT_UNUSABLE: u8 = 2;

/// Runs one sync as the binary does: messages on stderr, the `--json`
/// summary on stdout. Returns the exit code.
pub fn run(args: &Args) -> u8 {
    let mut stdout = std::io::stdout();
    let mut stderr = std::io::stderr();
    let terminal = stderr.is_terminal();
    run_with(args, &mut stdout, &mut stderr, terminal)
}

/// [`run`] with its outputs given: `terminal` chooses the progress bar
/// over log lines.
pub fn run_with(
    args: &Args,
    stdout: &mut dyn std::io::Write,
    stderr: &mut dyn std::io::Write,
    terminal: bool,
) -> u8 {
    let progress = progress::Progress::new(terminal && !args.quiet, args.quiet);
    match sync(args, &progress, stderr) {
        Ok(summary) => {
            progress.finish();
            let code = summary.exit_code();
            for e in &summary.integrity_errors {
                let _ = writeln!(stderr, "aggpay-sync: integrity error: {e}");
            }
            if !args.quiet {
                let _ = writeln!(stderr, "aggpay-sync: {}", summary.line());
            }
            if args.json {
                let _ = writeln!(stdout, "{}", summary.to_json());
            }
            code
        }
        Err(e) => {
            progress.finish();
            let _ = writeln!(stderr, "aggpay-sync: {e}");
            EXIT_UNUSABLE
        }
    }
}

fn sync(
    args: &Args,
    progress: &progress::Progress,
    stderr: &mut dyn std::io::Write,
) -> Result<Summary, SyncError> {
    // The database first: a refused database costs no request.
    let mut db = db::Db::open(&args.db)?;
    let (client, _mock) = client(args, stderr)?;
    db.bind_source(client.base_url(), client.aggregator_id().as_str())?;
    engine::Engine::new(&client, &mut db, progress, args.full).run()
}

/// The client of the run, and the built-in mock it talks to when no base
/// URL is given.
fn client(
    args: &Args,
    stderr: &mut dyn std::io::Write,
) -> Result<(Client, Option<MockServer>), SyncError> {
    let (builder, mock) = match &args.base_url {
        Some(url) => {
            let key = args.key.clone().ok_or_else(|| {
                SyncError::Config("--key (or AGGPAY_SECRET_KEY) is required with --base-url".into())
            })?;
            let aggregator = args.aggregator.clone().ok_or_else(|| {
                SyncError::Config(
                    "--aggregator (or AGGPAY_AGGREGATOR_ID) is required with --base-url".into(),
                )
            })?;
            (Client::builder(url.as_str(), aggregator, key), None)
        }
        None => {
            let server = MockServer::start(MockConfig::new())
                .map_err(|e| SyncError::Config(format!("the built-in mock did not start: {e}")))?;
            if !args.quiet {
                let _ = writeln!(
                    stderr,
                    "aggpay-sync: no --base-url: syncing from an in-process aggpay-mock at {}",
                    server.url()
                );
            }
            let builder = Client::builder(
                server.url(),
                server.aggregator_id().as_str(),
                server.secret_key(),
            );
            (builder, Some(server))
        }
    };
    let mut builder = builder
        .timeout(args.timeout())
        .retry(RetryPolicy::default());
    if let Some(rate) = args.rate_limit {
        builder = builder.rate_limit(rate);
    }
    if let Some(ca) = &args.ca_cert {
        builder = builder.ca_certificate_file(ca);
    }
    let client = builder
        .build()
        .map_err(SyncError::client("the client cannot be configured"))?;
    Ok((client, mock))
}
