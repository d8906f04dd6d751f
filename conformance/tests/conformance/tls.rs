//! A staging server behind a private CA.

use aggpay_conformance::{EXIT_OK, EXIT_UNUSABLE};
use aggpay_mock::{MockConfig, MockServer, TlsIdentity};
use aggpay_testkit::{TempDir, TestCa};

use crate::support::{against, harness};

#[test]
fn a_private_ca_is_trusted_with_ca_cert_and_only_then() {
    let ca = TestCa::new("aggpay staging CA");
    let identity = ca.issue(&["127.0.0.1", "localhost"]);
    let server = MockServer::start(
        MockConfig::new().tls(TlsIdentity::from_pem(identity.cert_pem, identity.key_pem)),
    )
    .unwrap();
    let dir = TempDir::new("aggpay-conformance-tls");
    let pem = dir.join("ca.pem");
    ca.write_pem(&pem);

    let args = against(&server);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _, err) = harness(&refs);
    assert_eq!(code, EXIT_UNUSABLE, "{err}");
    assert!(
        err.contains("--ca-cert"),
        "the error says what to do: {err}"
    );

    let mut trusted = args.clone();
    trusted.extend(["--ca-cert".to_owned(), pem.display().to_string()]);
    let refs: Vec<&str> = trusted.iter().map(String::as_str).collect();
    let (code, out, err) = harness(&refs);
    assert_eq!(code, EXIT_OK, "{out}\n{err}");

    let mut broken = args;
    broken.extend([
        "--ca-cert".to_owned(),
        dir.join("none.pem").display().to_string(),
    ]);
    let refs: Vec<&str> = broken.iter().map(String::as_str).collect();
    let (code, _, err) = harness(&refs);
    assert_eq!(code, EXIT_UNUSABLE);
    assert!(err.contains("none.pem"), "{err}");
}
