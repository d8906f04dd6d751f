//! `aggpay-conformance`: see `--help`.

use std::process::ExitCode;

use aggpay_conformance::{Args, report_refused, run};

fn main() -> ExitCode {
    let args = Args::from_command_line(std::env::args_os()).unwrap_or_else(|e| {
        // A refused command line still leaves the report a CI job reads
        // (exit 2, and why).
        if let Some(why) = aggpay_internal::setup::refusal(&e) {
            let argv: Vec<String> = std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            report_refused(&argv, &why, &mut std::io::stdout().lock());
        }
        e.exit()
    });
    ExitCode::from(run(
        &args,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    ))
}
