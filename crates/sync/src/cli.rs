//! The command line.

use std::time::Duration;

use aggpay_internal::setup::ServerArgs;
use clap::Parser;
use clap::parser::ValueSource;

use crate::store::Target;

/// Batches walked at once unless `--jobs` says otherwise.
pub const DEFAULT_JOBS: u16 = 8;

/// Mirrors an aggregator's settlement batches, their transactions and
/// payouts, its refunds, merchants and rail merchants into a SQLite file
/// or a PostgreSQL database, incrementally and crash-safely. Name the
/// server with --base-url (with --key-file or AGGPAY_SECRET_KEY, and
/// --aggregator), or mirror the built-in mock's demo data with --mock.
///
/// Exit codes: 0 everything synced and verified; 1 integrity errors (rows
/// that do not match the server's count, or name another aggregator) or a
/// batch set aside for a server fault (a 500, a loop, a body that does not
/// decode): reported, and taken again on the next run; 2 the run could
/// not be made or finished (bad arguments, no server named, a setup that
/// does not work: unreachable, TLS mixed up, key refused, aggregator
/// unknown, wrong path prefix; database refused or in use), or only
/// transient failures outlasted the retries. With --json the summary is
/// printed on every exit.
#[derive(Debug, Clone, Parser)]
#[command(name = "aggpay-sync", version, about, long_about)]
pub struct Args {
    /// The mirror: a SQLite file (created when missing, readable by its
    /// owner only), or a PostgreSQL URL `postgres://user@host:port/dbname`
    /// (each aggregator in a schema of its own). Leave the password out:
    /// it is read from PGPASSWORD or the password file (~/.pgpass, or
    /// PGPASSFILE) as libpq does.
    #[arg(long, value_name = "PATH|URL", env = "AGGPAY_SYNC_DB", hide_env_values = true, value_parser = target)]
    pub db: Target,
    /// The server mirrored and its credentials.
    #[command(flatten)]
    pub server: ServerArgs,
    /// `--db` came from the environment (a password typed on the command
    /// line is warned about; unknown counts as the command line).
    #[arg(skip)]
    db_from_env: bool,
    /// At most this many requests a second (retries included).
    #[arg(long, value_name = "REQ_PER_S", value_parser = aggpay_internal::cli::parse_rate)]
    pub rate_limit: Option<f64>,
    /// Seconds allowed for each request.
    #[arg(long, default_value_t = 30.0, value_parser = aggpay_internal::cli::parse_seconds)]
    pub timeout: f64,
    /// Seconds the retries of the whole run may spend waiting (backoff and
    /// Retry-After together): past it, failures set their batch aside.
    #[arg(long, value_name = "SECONDS", default_value_t = 1800.0, value_parser = aggpay_internal::cli::parse_seconds)]
    pub max_wait: f64,
    /// Days before the newest refund mirrored whose refunds are read again
    /// each run (their status may still change; late ones arrive).
    #[arg(long, value_name = "DAYS", default_value_t = 7, value_parser = clap::value_parser!(u16).range(0..=3650))]
    pub refund_window: u16,
    /// Batches whose rows are walked at once, each with its own position
    /// and commits (one thread writes the database); 1 walks them one
    /// after another. The default keeps a far server's round trips
    /// overlapped without pressing a server hard.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_JOBS, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: u16,
    /// Walk the whole batch list, not only the batches after the newest
    /// one kept (for a server whose new batches may take lower ids).
    #[arg(long)]
    pub full: bool,
    /// Print a JSON summary on stdout.
    #[arg(long)]
    pub json: bool,
    /// No progress bar and no log lines, errors only.
    #[arg(long)]
    pub quiet: bool,
}

fn target(text: &str) -> Result<Target, String> {
    if text.is_empty() {
        return Err("the database is empty".into());
    }
    Ok(Target::parse(text))
}

impl Args {
    /// The arguments of the command line `argv` (the program's name
    /// first), noting which came from the environment: a key or a
    /// database password typed on the command line is warned about, one
    /// from the environment is not.
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
        args.db_from_env = matches.value_source("db") == Some(ValueSource::EnvVariable);
        Ok(args)
    }

    /// True when `--db` was typed on the command line (or not recorded).
    pub(crate) fn db_on_command_line(&self) -> bool {
        !self.db_from_env
    }

    /// The per-request timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout)
    }

    /// The run's patience: its retries' waiting, all together.
    pub fn max_wait(&self) -> Duration {
        Duration::from_secs_f64(self.max_wait)
    }

    /// The refund window.
    pub fn refund_window(&self) -> jiff::SignedDuration {
        jiff::SignedDuration::from_hours(24 * i64::from(self.refund_window))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_never_shows_in_debug() {
        let args = Args::try_parse_from([
            "aggpay-sync",
            "--db",
            "postgres://u:dbpassword@h/d",
            "--key",
            "aggsk_supersecret",
        ])
        .unwrap();
        let shown = format!("{args:?}");
        assert!(!shown.contains("supersecret"), "{shown}");
        assert!(!shown.contains("dbpassword"), "{shown}");
    }

    #[test]
    fn values_out_of_range_are_refused() {
        for bad in [
            ["--timeout", "0"],
            ["--timeout", "1e20"],
            ["--rate-limit", "1e-300"],
            ["--rate-limit", "NaN"],
            ["--max-wait", "0"],
            ["--refund-window", "-1"],
            ["--refund-window", "99999"],
            ["--jobs", "0"],
            ["--jobs", "65"],
            ["--jobs", "two"],
        ] {
            let mut argv = vec!["aggpay-sync", "--db", "x.db"];
            argv.extend(bad);
            assert!(Args::try_parse_from(argv).is_err(), "{bad:?}");
        }
    }
}
