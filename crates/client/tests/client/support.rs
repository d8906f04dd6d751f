//! Servers the tests talk to: the mock, and a scripted one.

use std::time::Duration;

use aggpay::*;
use aggpay_mock::{MockConfig, MockServer};
pub use aggpay_testkit::{Act, Scripted, json};

pub const KEY: &str = "s3cr3t-key-value";

pub fn client_for(server: &MockServer) -> Client {
    Client::builder(
        server.url(),
        server.aggregator_id().clone(),
        server.secret_key(),
    )
    .timeout(Duration::from_secs(20))
    .build()
    .unwrap()
}

pub fn mock() -> (MockServer, Client) {
    let server = MockServer::start(MockConfig::new().seed(11)).unwrap();
    let client = client_for(&server);
    (server, client)
}

/// A client of a scripted server.
pub trait ScriptedClient {
    /// A client of this server with key [`KEY`], a 5 s timeout and quick
    /// retries; `configure` adjusts it.
    fn client(&self, configure: impl FnOnce(ClientBuilder) -> ClientBuilder) -> Client;
}

impl ScriptedClient for Scripted {
    fn client(&self, configure: impl FnOnce(ClientBuilder) -> ClientBuilder) -> Client {
        let builder = Client::builder(self.url(), "agg_test".parse().unwrap(), KEY)
            .timeout(Duration::from_secs(5))
            .retry(
                RetryPolicy::builder()
                    .base_delay(Duration::from_millis(5))
                    .max_delay(Duration::from_millis(20))
                    .build(),
            );
        configure(builder).build().unwrap()
    }
}

pub const LEDGER: &str = r#"{"api_version":"v1","data":{"id":"1","token":"acct_1","account_type":"ACCT_NEW_KIND","account_name":"n","normal_balance":"SIDE_CREDIT","balance":"10","running_balance":"-5","currency":"PKR","vault_token":"lock_1","bank_acct_id":"acc_1","external_partner_id":"","external_aggregator_id":"","external_merchant_id":"","created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-01T00:00:00.5Z","unknown_field":{"x":1}}}"#;

/// A batch token for scripted answers.
pub fn token() -> BatchToken {
    BatchToken::parse("sb_0f8fad5b-d9cb-469f-a165-70867728950e").unwrap()
}
