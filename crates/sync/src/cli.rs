//! The command line.

use std::path::PathBuf;
use std::time::Duration;

use aggpay::Secret;

use crate::store::Target;
use clap::Parser;

/// Mirrors an aggregator's settlement batches, their transactions and
/// payouts, its refunds, merchants and rail merchants into a SQLite file
/// or a PostgreSQL database, incrementally and crash-safely. Without
/// --base-url it syncs from the built-in mock.
///
/// Exit codes: 0 everything synced and verified; 1 integrity errors (rows
/// that do not match the server's count, or name another aggregator) or a
/// batch set aside for a server fault (a 500, a loop, a body that does not
/// decode): reported, and taken again on the next run; 2 the run could
/// not be made or finished (bad arguments, server unreachable, key
/// refused, database refused or in use), or only transient failures
/// outlasted the retries.
#[derive(Debug, Clone, Parser)]
#[command(name = "aggpay-sync", version, about, long_about)]
pub struct Args {
    /// The mirror: a SQLite file (created when missing, readable by its
    /// owner only), or a PostgreSQL URL `postgres://user@host:port/dbname`
    /// (each aggregator in a schema of its own).
    #[arg(long, value_name = "PATH|URL", env = "AGGPAY_SYNC_DB", hide_env_values = true, value_parser = target)]
    pub db: Target,
    /// Base URL of the API, its own path prefix included. Omit it to sync
    /// from the built-in mock.
    #[arg(long, env = "AGGPAY_BASE_URL")]
    pub base_url: Option<String>,
    /// The access key secret (never printed).
    #[arg(long, env = "AGGPAY_SECRET_KEY", hide_env_values = true, value_parser = secret)]
    pub key: Option<Secret>,
    /// The aggregator id (agg_…).
    #[arg(long, env = "AGGPAY_AGGREGATOR_ID")]
    pub aggregator: Option<aggpay::AggregatorId>,
    /// A PEM file of CA certificates to trust instead of the bundled
    /// roots: for a server behind a private CA.
    #[arg(long, value_name = "PEM", env = "AGGPAY_CA_CERT")]
    pub ca_cert: Option<PathBuf>,
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

fn secret(text: &str) -> Result<Secret, String> {
    if text.is_empty() {
        return Err("the key is empty".into());
    }
    Ok(Secret::new(text))
}

impl Args {
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
        ] {
            let mut argv = vec!["aggpay-sync", "--db", "x.db"];
            argv.extend(bad);
            assert!(Args::try_parse_from(argv).is_err(), "{bad:?}");
        }
    }
}
