//! `aggpay-conformance`: see `--help`.

use std::process::ExitCode;

use aggpay_conformance::{Args, report_refused, run};

fn main() -> ExitCode {
    let args = Args::from_command_line(std::env::args_os()).unwrap_or_else(|e| {
        // A refused command line still leaves the report a CI job reads
        // (exit 2, and why); --help and --version are not refusals.
        if e.use_stderr() {
            let argv: Vec<String> = std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let why = e.to_string();
            let why = why
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            report_refused(&argv, why, &mut std::io::stdout().lock());
        }
        e.exit()
    });
    ExitCode::from(run(
        &args,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    ))
}
