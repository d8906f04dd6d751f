//! `aggpay-mock`: run the mock server of the aggregator settlement API.
//!
//! Exit codes: 0 after a clean shutdown (stdin closed is not a shutdown:
//! the server runs until killed), 2 when it cannot start.

use std::path::PathBuf;
use std::process::ExitCode;

use aggpay_mock::{Fault, MockConfig, MockServer};
use clap::Parser;

/// A faithful mock server of the aggregator settlement and payments API.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port to listen on; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Dataset seed: the same seed serves the same data.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Path prefix the API is served under, such as /api.
    #[arg(long, default_value = "")]
    path_prefix: String,
    /// Worker threads answering requests.
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// Number of settlement batches.
    #[arg(long, default_value_t = 240)]
    batches: u64,
    /// Most transactions in an ordinary batch.
    #[arg(long, default_value_t = 150)]
    max_batch_transactions: u64,
    /// Transactions in the oldest completed batch (0: an ordinary size).
    #[arg(long, default_value_t = 0)]
    large_batch_transactions: u64,
    /// Number of aggregator merchants.
    #[arg(long, default_value_t = 24)]
    merchants: u64,
    /// Number of QR codes.
    #[arg(long, default_value_t = 60)]
    qr_codes: u64,
    /// Number of refunds.
    #[arg(long, default_value_t = 45)]
    refunds: u64,
    /// Number of webhook endpoints.
    #[arg(long, default_value_t = 9)]
    webhooks: u64,
    /// Break the contract in one named way (repeatable), to prove the
    /// conformance harness catches it. `--fault list` lists them.
    #[arg(long = "fault", value_name = "NAME")]
    faults: Vec<String>,
    /// Write the base URL, key and sample inputs as JSON to this file once
    /// the server listens.
    #[arg(long)]
    info_file: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.faults.iter().any(|f| f == "list") {
        for fault in Fault::ALL {
            println!("{:<34} {}", fault.name(), fault.description());
        }
        return ExitCode::SUCCESS;
    }
    let mut config = MockConfig::new()
        .host(args.host)
        .port(args.port)
        .seed(args.seed)
        .path_prefix(args.path_prefix)
        .workers(args.workers)
        .batches(args.batches)
        .max_batch_transactions(args.max_batch_transactions)
        .large_batch_transactions(args.large_batch_transactions)
        .merchants(args.merchants)
        .qr_codes(args.qr_codes)
        .refunds(args.refunds)
        .webhooks(args.webhooks);
    for name in &args.faults {
        match name.parse::<Fault>() {
            Ok(fault) => config = config.fault(fault),
            Err(err) => {
                eprintln!("aggpay-mock: failed to read --fault: {err}");
                return ExitCode::from(2);
            }
        }
    }
    let server = match MockServer::start(config) {
        Ok(server) => server,
        Err(err) => {
            eprintln!("aggpay-mock: failed to {err}");
            return ExitCode::from(2);
        }
    };
    let info = server.info();
    let json = match serde_json::to_string_pretty(&info) {
        Ok(json) => json,
        Err(err) => {
            eprintln!("aggpay-mock: failed to write the info: {err}");
            return ExitCode::from(2);
        }
    };
    if let Some(path) = &args.info_file
        && let Err(err) = std::fs::write(path, format!("{json}\n"))
    {
        eprintln!("aggpay-mock: failed to write {}: {err}", path.display());
        return ExitCode::from(2);
    }
    // The mock's key is a throwaway test credential: printing it is the point.
    println!("aggpay-mock listening on {}\n{json}", server.url());
    loop {
        std::thread::park();
    }
}
