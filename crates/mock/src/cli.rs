//! The command line: flags, their checks, and the run.
//!
//! Exit codes: 0 after `--fault list`; 2 when the server cannot start
//! (a flag out of range, an address in use, an unusable TLS identity). A
//! started server runs until it is killed.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use aggpay_mock::{
    Chaos, DEFAULT_HOST, DEFAULT_SEED, Fault, Latency, Legal, Limits, MAX_ROWS, MockConfig,
    MockServer, Sizes, TlsIdentity, default_workers,
};
use clap::Parser;

/// A faithful mock server of the aggregator settlement and payments API,
/// with faults that break the contract on purpose, transport chaos and
/// live data for testing the tools built on it.
#[derive(Debug, Parser)]
#[command(name = "aggpay-mock", version, about, long_about)]
pub(crate) struct Args {
    /// Address to listen on.
    #[arg(long, default_value = DEFAULT_HOST)]
    host: String,
    /// Port to listen on; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Dataset seed: the same seed serves the same data (and the same
    /// chaos for the same sequence of requests).
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Path prefix the API is served under, such as /api.
    #[arg(long, default_value = "")]
    path_prefix: String,
    /// Threads serving requests (default: one per core, at least 2).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    workers: Option<u16>,
    /// Number of settlement batches.
    #[arg(long, default_value_t = Sizes::DEFAULT.batches, value_parser = clap::value_parser!(u64).range(1..=MAX_ROWS))]
    batches: u64,
    /// Most transactions in an ordinary batch.
    #[arg(long, default_value_t = Sizes::DEFAULT.max_batch_transactions, value_parser = clap::value_parser!(u64).range(0..=MAX_ROWS))]
    max_batch_transactions: u64,
    /// Transactions in the oldest completed batch (0: an ordinary size);
    /// 1,000,000 costs no memory.
    #[arg(long, default_value_t = Sizes::DEFAULT.large_batch_transactions, value_parser = clap::value_parser!(u64).range(0..=MAX_ROWS))]
    large_batch_transactions: u64,
    /// Number of aggregator merchants.
    #[arg(long, default_value_t = Sizes::DEFAULT.merchants, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    merchants: u64,
    /// Number of QR codes.
    #[arg(long, default_value_t = Sizes::DEFAULT.qr_codes, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    qr_codes: u64,
    /// Number of refunds.
    #[arg(long, default_value_t = Sizes::DEFAULT.refunds, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    refunds: u64,
    /// Number of webhook endpoints.
    #[arg(long, default_value_t = Sizes::DEFAULT.webhooks, value_parser = clap::value_parser!(u64).range(0..=100_000))]
    webhooks: u64,
    /// Break the contract in one named way (repeatable), to prove the
    /// conformance harness catches it. `--fault list` lists them.
    #[arg(long = "fault", value_name = "NAME")]
    faults: Vec<String>,
    /// Answer with another legal reading of API.md than the mock's own
    /// (repeatable), to prove the conformance harness passes it.
    /// `--legal list` lists them with the text that allows each.
    #[arg(long = "legal", value_name = "NAME")]
    legal: Vec<String>,
    /// Latency added to every answer, in milliseconds: `50`, or a range
    /// `20..80` drawn per request.
    #[arg(long, value_name = "MS|MIN..MAX")]
    latency: Option<Latency>,
    /// Transport chaos: the share of requests that meet each mishap,
    /// `KIND=SHARE,…` with kinds 500, 502, 503, 504, 5xx, 429, reset,
    /// truncate, slow (for example 503=0.05,429=0.05,reset=0.02).
    #[arg(long, value_name = "SPEC")]
    chaos: Option<Chaos>,
    /// Retry-After of chaos 429 answers, in whole seconds.
    #[arg(long, default_value_t = 1, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(0..=3600))]
    chaos_retry_after: u64,
    /// Time a chaos `slow` answer takes to send, in seconds.
    #[arg(long, default_value_t = 2.0, value_name = "SECONDS", value_parser = seconds)]
    chaos_slow: f64,
    /// Live data: batches arrive, complete and fill while the server runs;
    /// advance it with `POST {base}/_mock/advance`.
    #[arg(long)]
    live: bool,
    /// With live data, also advance it one step every SECONDS.
    #[arg(long, value_name = "SECONDS", value_parser = seconds)]
    live_every: Option<f64>,
    /// Serve HTTPS with this certificate chain (PEM), with --tls-key.
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Connections open at once; idle ones are closed to make room, and
    /// the excess is answered 503.
    #[arg(long, default_value_t = Limits::DEFAULT.max_connections as u64, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_connections: u64,
    /// Seconds from a request head's first byte to its last.
    #[arg(long, default_value_t = Limits::DEFAULT.header_read_timeout.as_secs_f64(), value_name = "SECONDS", value_parser = seconds)]
    header_timeout: f64,
    /// Seconds to receive a whole request body.
    #[arg(long, default_value_t = Limits::DEFAULT.body_read_timeout.as_secs_f64(), value_name = "SECONDS", value_parser = seconds)]
    body_timeout: f64,
    /// Seconds a kept-alive connection may wait for its next request.
    #[arg(long, default_value_t = Limits::DEFAULT.idle_timeout.as_secs_f64(), value_name = "SECONDS", value_parser = seconds)]
    idle_timeout: f64,
    /// Write the base URL, key and sample inputs as JSON to this file once
    /// the server listens.
    #[arg(long)]
    info_file: Option<PathBuf>,
}

/// A number of seconds from 1 ms to an hour.
fn seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if (0.001..=3600.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "`{text}` is not a number of seconds from 0.001 to 3600"
        )),
    }
}

/// Runs the server until it is killed.
pub(crate) fn run(args: Args) -> ExitCode {
    if args.faults.iter().any(|f| f == "list") {
        use std::io::Write as _;
        // A reader that goes away (`| head`) ends the listing, not the
        // process with a panic.
        let mut out = std::io::stdout().lock();
        for fault in Fault::ALL {
            let line = writeln!(
                out,
                "{:<34} {:<10} {}",
                fault.name(),
                fault.layer().as_str(),
                fault.description()
            );
            if line.is_err() {
                break;
            }
        }
        return ExitCode::SUCCESS;
    }
    if args.legal.iter().any(|l| l == "list") {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        for legal in Legal::ALL {
            let line = writeln!(
                out,
                "{:<24} {}\n{:<24} room {}: allowed by {}",
                legal.name(),
                legal.description(),
                "",
                legal.room(),
                legal.allowed_by()
            );
            if line.is_err() {
                break;
            }
        }
        return ExitCode::SUCCESS;
    }
    match start(args) {
        Ok(()) => loop {
            std::thread::park();
        },
        Err(message) => {
            eprintln!("aggpay-mock: {message}");
            ExitCode::from(2)
        }
    }
}

fn start(args: Args) -> Result<(), String> {
    let mut limits = Limits::DEFAULT;
    limits.max_connections = usize::try_from(args.max_connections).unwrap_or(usize::MAX);
    limits.header_read_timeout = Duration::from_secs_f64(args.header_timeout);
    limits.body_read_timeout = Duration::from_secs_f64(args.body_timeout);
    limits.idle_timeout = Duration::from_secs_f64(args.idle_timeout);
    let chaos = args
        .chaos
        .unwrap_or_default()
        .retry_after(Duration::from_secs(args.chaos_retry_after))
        .slow_for(Duration::from_secs_f64(args.chaos_slow));
    let mut config = MockConfig::new()
        .host(args.host)
        .port(args.port)
        .seed(args.seed)
        .path_prefix(args.path_prefix)
        .workers(args.workers.map_or_else(default_workers, usize::from))
        .batches(args.batches)
        .max_batch_transactions(args.max_batch_transactions)
        .large_batch_transactions(args.large_batch_transactions)
        .merchants(args.merchants)
        .qr_codes(args.qr_codes)
        .refunds(args.refunds)
        .webhooks(args.webhooks)
        .limits(limits)
        .chaos(chaos)
        .latency(args.latency.unwrap_or_default())
        .live(args.live);
    if let Some(every) = args.live_every {
        config = config.live_every(Duration::from_secs_f64(every));
    }
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        let read = |p: &PathBuf| {
            std::fs::read(p).map_err(|e| format!("failed to read {}: {e}", p.display()))
        };
        config = config.tls(TlsIdentity::from_pem(read(cert)?, read(key)?));
    }
    for name in &args.faults {
        let fault = name
            .parse::<Fault>()
            .map_err(|e| format!("failed to read --fault: {e}"))?;
        config = config.fault(fault);
    }
    for name in &args.legal {
        let legal = name
            .parse::<Legal>()
            .map_err(|e| format!("failed to read --legal: {e}"))?;
        config = config.legal(legal);
    }
    let server = MockServer::start(config)
        .map_err(|e| format!("failed to {}", aggpay_internal::text::chain(&e)))?;
    let info = server.info();
    let json = serde_json::to_string_pretty(&info)
        .map_err(|e| format!("failed to write the info: {e}"))?;
    if let Some(path) = &args.info_file {
        std::fs::write(path, format!("{json}\n"))
            .map_err(|e| format!("failed to write {}: {e}", path.display()))?;
    }
    // The mock's key is a throwaway test credential: printing it is the point.
    println!("aggpay-mock listening on {}\n{json}", server.url());
    // The server runs on its own threads until the process is killed.
    std::mem::forget(server);
    Ok(())
}
