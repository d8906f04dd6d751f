//! The command line.

use std::path::PathBuf;
use std::time::Duration;

use aggpay::Secret;
use clap::Parser;

/// Mirrors an aggregator's settlement batches, their transactions and
/// payouts into a SQLite database, incrementally and crash-safely.
/// Without --base-url it syncs from the built-in mock.
///
/// Exit codes: 0 synced and verified; 1 integrity errors (a batch's rows
/// do not match the server's count: reported, and walked again on the
/// next run); 2 the run could not be made or finished (bad arguments,
/// server unreachable, key refused, database refused or in use).
#[derive(Debug, Clone, Parser)]
#[command(name = "aggpay-sync", version, about, long_about)]
pub struct Args {
    /// The SQLite database (created when missing).
    #[arg(long, value_name = "PATH")]
    pub db: PathBuf,
    /// Base URL of the API, its own path prefix included. Omit it to sync
    /// from the built-in mock.
    #[arg(long, env = "AGGPAY_BASE_URL")]
    pub base_url: Option<String>,
    /// The access key secret (never printed).
    #[arg(long, env = "AGGPAY_SECRET_KEY", hide_env_values = true, value_parser = secret)]
    pub key: Option<Secret>,
    /// The aggregator id (agg_…).
    #[arg(long, env = "AGGPAY_AGGREGATOR_ID")]
    pub aggregator: Option<String>,
    /// A PEM file of CA certificates to trust instead of the bundled
    /// roots: for a server behind a private CA.
    #[arg(long, value_name = "PEM", env = "AGGPAY_CA_CERT")]
    pub ca_cert: Option<PathBuf>,
    /// At most this many requests a second (retries included).
    #[arg(long, value_name = "REQ_PER_S", value_parser = aggpay::util::parse_rate)]
    pub rate_limit: Option<f64>,
    /// Seconds allowed for each request.
    #[arg(long, default_value_t = 30.0, value_parser = aggpay::util::parse_seconds)]
    pub timeout: f64,
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_never_shows_in_debug() {
        let args =
            Args::try_parse_from(["aggpay-sync", "--db", "x.db", "--key", "aggsk_supersecret"])
                .unwrap();
        assert!(!format!("{args:?}").contains("supersecret"));
    }

    #[test]
    fn values_out_of_range_are_refused() {
        for bad in [
            ["--timeout", "0"],
            ["--timeout", "1e20"],
            ["--rate-limit", "1e-300"],
            ["--rate-limit", "NaN"],
        ] {
            let mut argv = vec!["aggpay-sync", "--db", "x.db"];
            argv.extend(bad);
            assert!(Args::try_parse_from(argv).is_err(), "{bad:?}");
        }
    }
}
