//! A staging server behind a private CA: refused with a typed error that
//! says what to do, reached once the CA is trusted.

use aggpay::*;
use aggpay_testkit::{TempDir, TestCa, TlsServer};

use crate::support::{KEY, LEDGER};

fn client(url: &str, configure: impl FnOnce(ClientBuilder) -> ClientBuilder) -> Client {
    configure(
        Client::builder(url, "agg_test".parse().unwrap(), KEY)
            .retry(RetryPolicy::builder().max_attempts(1).build()),
    )
    .build()
    .unwrap()
}

#[test]
fn a_private_ca_is_refused_until_trusted() {
    let ca = TestCa::new("aggpay staging CA");
    let server = TlsServer::start(&ca.issue(&["localhost", "127.0.0.1"]), 200, LEDGER);

    // Not trusted: a TLS error that names the way out, and the key was
    // never sent (no request head was read).
    let err = client(&server.url(), |b| b)
        .get_ledger_account()
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Tls(_)), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("AGGPAY_CA_CERT"), "{text}");
    assert!(text.contains("ca_certificate_file"), "{text}");
    assert!(!err.is_retryable());
    assert!(std::error::Error::source(&err).is_some());

    // Trusted, as PEM text or as a file; by IP or by name.
    ledger(&client(&server.url(), |b| b.ca_certificates_pem(ca.pem())));
    let dir = TempDir::new("aggpay-ca");
    let path = dir.join("ca.pem");
    ca.write_pem(&path);
    ledger(&client(&server.localhost_url(), |b| {
        b.ca_certificate_file(&path)
    }));
    assert!(server.failed() >= 1);
    let heads = server.heads();
    assert_eq!(heads.len(), 2, "{heads:?}");
    assert!(heads.iter().all(|h| h.contains(KEY)));
}

fn ledger(client: &Client) {
    let account = client.get_ledger_account().unwrap();
    assert_eq!(account.currency, Currency::PKR);
}

/// Trusting one CA trusts that CA only: a certificate for another name,
/// or from another CA, is still refused.
#[test]
fn trust_is_exact() {
    let ca = TestCa::new("aggpay staging CA");
    let other_ca = TestCa::new("somebody else");
    let wrong_name = TlsServer::start(&ca.issue(&["staging.example"]), 200, LEDGER);
    let err = client(&wrong_name.url(), |b| b.ca_certificates_pem(ca.pem()))
        .get_ledger_account()
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Tls(_)), "{err:?}");
    let foreign = TlsServer::start(&other_ca.issue(&["127.0.0.1"]), 200, LEDGER);
    let err = client(&foreign.url(), |b| b.ca_certificates_pem(ca.pem()))
        .get_ledger_account()
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Tls(_)), "{err:?}");
    assert!(wrong_name.heads().is_empty() && foreign.heads().is_empty());
}
