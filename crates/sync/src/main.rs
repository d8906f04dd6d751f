//! `aggpay-sync`: see the library documentation and the README.

fn main() -> std::process::ExitCode {
    let args = aggpay_sync::Args::from_command_line(std::env::args_os()).unwrap_or_else(|e| {
        // A refused command line still leaves the --json record a job
        // reads (exit 2, and why); --help and --version are not refusals.
        if e.use_stderr() && std::env::args_os().any(|a| a == "--json") {
            let why = e.to_string();
            let why = why
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            let why = aggpay_internal::text::escape_control(why);
            println!("{}", aggpay_sync::Summary::of_error(why).to_json());
        }
        e.exit()
    });
    std::process::ExitCode::from(aggpay_sync::run(&args))
}
