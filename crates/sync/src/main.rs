//! `aggpay-sync`: see the library documentation and the README.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = aggpay_sync::Args::parse();
    std::process::ExitCode::from(aggpay_sync::run(&args))
}
