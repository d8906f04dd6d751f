//! `aggpay-mock`: run the mock server of the aggregator settlement API.
//! See `--help`, and docs/mock.md for what every flag does on the wire.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    cli::run(cli::Args::parse())
}
