//! Shared by the examples: a client from the environment, or from an
//! in-process mock server when `AGGPAY_BASE_URL` is not set.

use aggpay::Client;
use aggpay_mock::{MockConfig, MockServer};

/// The client, and the mock that serves it when no server is configured
/// (keep it alive as long as the client is used).
pub fn client() -> Result<(Client, Option<MockServer>), Box<dyn std::error::Error>> {
    if std::env::var_os(aggpay::ENV_BASE_URL).is_some() {
        return Ok((Client::from_env()?, None));
    }
    let server = MockServer::start(MockConfig::new())?;
    eprintln!(
        "{} is not set: using an in-process aggpay-mock at {}",
        aggpay::ENV_BASE_URL,
        server.url()
    );
    let client = Client::builder(
        server.url(),
        server.aggregator_id().clone(),
        server.secret_key(),
    )
    .build()?;
    Ok((client, Some(server)))
}

/// The process exit: 0 on success; on failure the error and each of its
/// causes, as an operator reads them (`error: …: …`, the way `anyhow`'s
/// `{:#}` prints a chain: each `Display`, which says what to do, never a
/// `Debug`), and 1.
pub fn exit(result: Result<(), Box<dyn std::error::Error>>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            let mut line = format!("error: {err}");
            let mut cause = err.source();
            while let Some(c) = cause {
                line.push_str(&format!(": {c}"));
                cause = c.source();
            }
            eprintln!("{line}");
            std::process::ExitCode::from(1)
        }
    }
}
