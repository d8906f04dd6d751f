//! Command-line arguments. Every number is checked for its range before
//! the run starts: a value out of range exits 2 with a message.

use std::path::PathBuf;
use std::time::Duration;

use aggpay_internal::setup::ServerArgs;
use clap::{Parser, ValueEnum};

/// Exit code: every required rule passed.
pub const EXIT_OK: u8 = 0;
/// Exit code: a required rule failed (or an observation, with `--strict`).
pub const EXIT_FAILED: u8 = 1;
/// Exit code: the run could not be made, or its budget ran out.
pub const EXIT_UNUSABLE: u8 = 2;

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A summary table and the failures in detail.
    Human,
    /// One JSON object (fields documented in docs/conformance.md).
    Json,
    /// JUnit XML: one test case per rule.
    Junit,
    /// A Markdown summary for people in CI (a step summary, a pull-request
    /// comment): the verdict, the totals, each failure with the sentence it
    /// rests on and its replay.
    Markdown,
}

/// Requests in flight at once by default, near the server: few enough to
/// be a polite client.
pub const DEFAULT_JOBS: u16 = 16;

/// The most requests in flight the harness chooses by itself, for a far
/// server.
pub const MAX_AUTO_JOBS: u16 = 128;

/// The round trip up to which [`DEFAULT_JOBS`] are kept in flight; beyond
/// it, requests in flight grow with the round trip (up to
/// [`MAX_AUTO_JOBS`]), so that the requests per second, which are what
/// the server feels, stay at most those of a server this near (about a
/// thousand a second; a server on the same network sees several times
/// more from 16 in flight): more requests travel at once, none more is at
/// the server at once.
pub const NEAR_ROUND_TRIP: std::time::Duration = std::time::Duration::from_millis(16);

/// The requests in flight for a server whose round trip was measured,
/// when `--jobs` is not given.
pub fn auto_jobs(round_trip: Option<std::time::Duration>) -> u16 {
    let Some(rtt) = round_trip else {
        return DEFAULT_JOBS;
    };
    let scaled = f64::from(DEFAULT_JOBS) * rtt.as_secs_f64() / NEAR_ROUND_TRIP.as_secs_f64();
    // In range by the clamp: the cast cannot truncate.
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "clamped to 16..=128 first"
    )]
    let jobs = scaled
        .ceil()
        .clamp(f64::from(DEFAULT_JOBS), f64::from(MAX_AUTO_JOBS)) as u16;
    jobs
}

/// What the harness prints instead of a run: each takes no option of a
/// run (given one, the command line is refused, exit 2).
#[derive(Debug, Clone, clap::Subcommand)]
#[non_exhaustive]
pub enum Command {
    /// List the rules, each with its level, source and the mock faults
    /// that break it, and exit.
    Rules,
    /// Print what API.md states and the rules that judge each statement
    /// (COVERAGE.md is its output), and exit.
    Coverage,
    /// Print the contract as an OpenAPI 3.1 document (JSON), generated
    /// from the harness's contract table (openapi.json in the repository
    /// is its output), and exit.
    Openapi,
}

/// Tells, with evidence, whether a server honours the aggregator settlement
/// API. Name the server with --base-url (with --key-file or
/// AGGPAY_SECRET_KEY, and --aggregator), or run against the built-in mock
/// with --mock.
///
/// Exit codes: 0 every required rule passed (and, with --strict, every
/// observation), known failures of a --baseline aside; 1 a required rule
/// failed anew (or an observation, with --strict): the server is wrong;
/// 2 the run could not be made or finished: bad arguments, no server
/// named, a setup that does not work (unreachable, TLS mixed up, key
/// refused, aggregator unknown, wrong path prefix), --max-duration
/// reached, or only transient failures where a required rule did not
/// pass. A JSON or JUnit report is written on every exit.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "aggpay-conformance",
    version,
    about,
    long_about,
    args_conflicts_with_subcommands = true
)]
pub struct Args {
    /// Something printed instead of a run.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The server judged and its credentials.
    #[command(flatten)]
    pub server: ServerArgs,

    /// A payment with charges (discovered from batch transactions if omitted).
    #[arg(long)]
    pub payment_id: Option<String>,
    /// An alias that find-alias resolves.
    #[arg(long)]
    pub alias_id: Option<String>,
    /// A rail merchant (discovered from the rail merchant list if omitted).
    #[arg(long)]
    pub rail_merchant_id: Option<String>,
    /// The access key to rotate: never the key in use. Never discovered.
    #[arg(long)]
    pub access_key_id: Option<String>,
    /// A second access key to rotate, never the key in use nor
    /// --access-key-id's: with it, rotations of two keys at once are
    /// judged, and rotations in every request form. Never discovered.
    #[arg(long)]
    pub second_access_key_id: Option<String>,
    /// An IBAN that account-info resolves.
    #[arg(long)]
    pub iban: Option<String>,
    /// A mobile number that account-info resolves (alias_type=MOBILE).
    #[arg(long)]
    pub mobile: Option<String>,
    /// A till code that title-fetch resolves.
    #[arg(long)]
    pub till_code: Option<String>,
    /// Run the writes: one key rotation (with --access-key-id) and report
    /// export creations. Always on with --mock.
    #[arg(long)]
    pub allow_writes: bool,

    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Write the report to this file (the human summary then goes to stdout).
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Generated cases per property.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub cases: u32,
    /// Random sequences of operations `explore.sequences` runs against the
    /// model (drawn from --seed; more find rarer interleavings).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub sequences: u32,
    /// Commands per random sequence at most (a failing one is shrunk to
    /// the shortest that still fails).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=1_000))]
    pub steps: u32,
    /// Seed of the generated cases: the same seed makes the same run. A
    /// random one is drawn, and printed, when omitted.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run only rules matching these patterns (comma-separated, `*` wildcard).
    #[arg(long, value_name = "PATTERN")]
    pub rules: Option<String>,
    /// Skip rules matching these patterns (comma-separated, `*` wildcard).
    #[arg(long, value_name = "PATTERN")]
    pub skip: Option<String>,
    /// Requests in flight at once, rules and the requests inside them
    /// together (1: one at a time). The report, the seed and the cases are
    /// the same whatever it is. Default: 16, or, for a far server, as many
    /// as its round trip measured before the run needs to keep the request
    /// rate of 16 at a 16 ms round trip (up to 128).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: Option<u16>,
    /// At most this many requests per second, all jobs together.
    #[arg(long, value_name = "REQ_PER_S", value_parser = aggpay_internal::cli::parse_rate)]
    pub rate_limit: Option<f64>,
    /// Seconds allowed for each request.
    #[arg(long, default_value_t = 10.0, value_parser = aggpay_internal::cli::parse_seconds)]
    pub timeout: f64,
    /// Seconds allowed for the whole run: at the end of it the run stops
    /// cleanly, reports what did not run, and exits 2.
    #[arg(long, value_name = "SECONDS", value_parser = aggpay_internal::cli::parse_seconds)]
    pub max_duration: Option<f64>,
    /// Known failures (a file --write-baseline wrote): they are reported
    /// as known and do not fail the run; new ones do.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write this run's failures as a baseline to FILE.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// Observations count as failures.
    #[arg(long)]
    pub strict: bool,
    /// Hold the server to WIRE.md's names where API.md gives a parameter
    /// by purpose only, and to WIRE.md's form for several values of one
    /// filter (the key repeated), as clients built on the published
    /// reference send them: a name the server does not read then fails
    /// the rules that judge it, instead of being reported not judged.
    #[arg(long)]
    pub require_wire_names: bool,
    /// The server's own name for a parameter API.md gives by purpose only
    /// (repeatable): LIST an operation (`refunds`, `batches`), PURPOSE the
    /// parameter's name in WIRE.md, NAME the server's. Every request of
    /// that list carries NAME, and the parameter is judged in full.
    #[arg(long, value_name = "LIST.PURPOSE=NAME")]
    pub param_name: Vec<crate::contract::Renamed>,
}

impl Args {
    /// The arguments of the command line `argv` (the program's name
    /// first), noting which came from the environment: a key typed on the
    /// command line is warned about, one from the environment is not.
    ///
    /// # Errors
    ///
    /// clap's, to print and exit with (`--help`, `--version` included).
    pub fn from_command_line<I, T>(argv: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let (mut args, matches) = aggpay_internal::setup::parse::<Self, _, _>(argv)?;
        args.server.record_sources(&matches);
        Ok(args)
    }

    /// The per-request timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout)
    }

    /// The least time between two requests, with a rate limit.
    pub fn interval(&self) -> Option<Duration> {
        self.rate_limit.map(|r| Duration::from_secs_f64(1.0 / r))
    }

    /// The run budget.
    pub fn max_duration(&self) -> Option<Duration> {
        self.max_duration.map(Duration::from_secs_f64)
    }
}

/// The command-line arguments that point the harness at `server`, a mock
/// started elsewhere, as `--mock` points it at the built-in one: its URL,
/// key and aggregator, every input its info gives, writes allowed. Add the
/// program's name before them and any other flag after.
///
/// ```no_run
/// use aggpay_mock::{MockConfig, MockServer};
/// use clap::Parser;
///
/// let server = MockServer::start(MockConfig::new())?;
/// let mut argv = vec!["aggpay-conformance".to_owned()];
/// argv.extend(aggpay_conformance::mock_arguments(&server));
/// argv.extend(["--format".to_owned(), "json".to_owned()]);
/// let args = aggpay_conformance::Args::try_parse_from(argv)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn mock_arguments(server: &aggpay_mock::MockServer) -> Vec<String> {
    let mut argv: Vec<String> = [
        "--base-url",
        server.url(),
        "--key",
        server.secret_key().expose(),
        "--aggregator",
        server.aggregator_id().as_str(),
        "--allow-writes",
    ]
    .map(str::to_owned)
    .to_vec();
    argv.extend(crate::ctx::Inputs::of_mock(server.info()).flags());
    argv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_in_flight_grow_with_the_round_trip() {
        let ms = |n| Some(Duration::from_millis(n));
        assert_eq!(auto_jobs(None), DEFAULT_JOBS);
        assert_eq!(auto_jobs(ms(1)), DEFAULT_JOBS);
        assert_eq!(auto_jobs(ms(16)), DEFAULT_JOBS);
        assert_eq!(auto_jobs(ms(50)), 50);
        assert_eq!(auto_jobs(ms(100)), 100);
        assert_eq!(auto_jobs(ms(128)), MAX_AUTO_JOBS);
        assert_eq!(auto_jobs(ms(200)), MAX_AUTO_JOBS);
        assert_eq!(auto_jobs(Some(Duration::from_secs(30))), MAX_AUTO_JOBS);
    }
}
