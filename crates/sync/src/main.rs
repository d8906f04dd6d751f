//! `aggpay-sync`: see the library documentation and docs/sync.md.

fn main() -> std::process::ExitCode {
    let args = aggpay_sync::Args::from_command_line(std::env::args_os()).unwrap_or_else(|e| {
        // A refused command line still leaves the --json record a job
        // reads (exit 2, and why).
        if let Some(why) = aggpay_internal::setup::refusal(&e)
            && std::env::args_os().any(|a| a == "--json")
        {
            println!("{}", aggpay_sync::Summary::of_error(why).to_json());
        }
        e.exit()
    });
    std::process::ExitCode::from(aggpay_sync::run(&args))
}
