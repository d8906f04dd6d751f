//! `aggpay-conformance`: see `--help`.

use std::process::ExitCode;

use aggpay_conformance::{Args, run};
use clap::Parser;

fn main() -> ExitCode {
    let args = Args::parse();
    ExitCode::from(run(
        &args,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    ))
}
