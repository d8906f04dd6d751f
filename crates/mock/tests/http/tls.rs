//! The mock over HTTPS, as a staging server behind a private CA.

use aggpay::{Client, RetryPolicy};
use aggpay_mock::{MockConfig, MockServer, TlsIdentity};
use aggpay_testkit::TestCa;

#[test]
fn the_mock_serves_https_to_a_client_that_trusts_its_ca() {
    let ca = TestCa::new("aggpay mock CA");
    let identity = ca.issue(&["127.0.0.1", "localhost"]);
    let server = MockServer::start(
        MockConfig::new()
            .batches(4)
            .tls(TlsIdentity::from_pem(identity.cert_pem, identity.key_pem)),
    )
    .unwrap();
    assert!(
        server.url().starts_with("https://127.0.0.1:"),
        "{}",
        server.url()
    );
    let build = |trust: bool| {
        let mut b = Client::builder(
            server.url(),
            server.aggregator_id().clone(),
            server.secret_key(),
        )
        .retry(RetryPolicy::builder().max_attempts(1).build());
        if trust {
            b = b.ca_certificates_pem(ca.pem());
        }
        b.build().unwrap()
    };
    let err = build(false).get_ledger_account().unwrap_err();
    assert!(matches!(err.kind(), aggpay::ErrorKind::Tls(_)), "{err:?}");
    let client = build(true);
    client.get_ledger_account().unwrap();
    assert_eq!(
        client
            .list_settlement_batches(&Default::default())
            .unwrap()
            .items
            .len(),
        4
    );
}

#[test]
fn an_unusable_identity_is_refused_at_start() {
    let err = MockServer::start(MockConfig::new().tls(TlsIdentity::from_pem("nope", "nope")))
        .unwrap_err();
    assert!(err.to_string().contains("tls"), "{err}");
}
