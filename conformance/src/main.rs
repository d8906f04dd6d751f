//! `aggpay-conformance`: see `--help`.

use std::process::ExitCode;

use aggpay_conformance::{Args, run};
fn main() -> ExitCode {
    let args = Args::from_command_line(std::env::args_os()).unwrap_or_else(|e| e.exit());
    ExitCode::from(run(
        &args,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    ))
}
