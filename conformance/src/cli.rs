//! Command-line arguments.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A summary table and the failures in detail.
    Human,
    /// One JSON object (fields documented in the README).
    Json,
    /// JUnit XML: one test case per rule.
    Junit,
}

/// Tells, with evidence, whether a server honours the aggregator settlement
/// API (API.md). Without --base-url it starts the built-in mock and runs
/// against it.
///
/// Exit codes: 0 every required rule passed (and, with --strict, every
/// observation); 1 a required rule failed (or an observation, with
/// --strict); 2 the run could not be made (bad arguments, server
/// unreachable, key rejected on the first call).
#[derive(Debug, Clone, Parser)]
#[command(name = "aggpay-conformance", version, about, long_about)]
pub struct Args {
    /// Base URL of the server, its own path prefix included. Omit it to run
    /// against the built-in mock.
    #[arg(long, env = "AGGPAY_BASE_URL")]
    pub base_url: Option<String>,
    /// The access key secret (never printed).
    #[arg(long, env = "AGGPAY_SECRET_KEY", hide_env_values = true)]
    pub key: Option<String>,
    /// The aggregator id (agg_…).
    #[arg(long, env = "AGGPAY_AGGREGATOR_ID")]
    pub aggregator: Option<String>,

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
    /// export creations. Always on against the built-in mock.
    #[arg(long)]
    pub allow_writes: bool,

    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Write the report to this file (the human summary then goes to stdout).
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Generated cases per property.
    #[arg(long, default_value_t = 32)]
    pub cases: u32,
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
    /// List the rules and exit.
    #[arg(long)]
    pub list_rules: bool,
    /// At most this many requests per second.
    #[arg(long, value_name = "REQ_PER_S")]
    pub rate_limit: Option<f64>,
    /// Seconds allowed for each request.
    #[arg(long, default_value_t = 10.0)]
    pub timeout: f64,
    /// Observations count as failures.
    #[arg(long)]
    pub strict: bool,
}
