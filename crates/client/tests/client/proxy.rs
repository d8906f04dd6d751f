//! Proxies: set explicitly, or from the environment as ureq reads it
//! (`ALL_PROXY`, `HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`). HTTPS goes
//! through a `CONNECT` tunnel: the proxy never sees the key.

use std::process::Command;

use aggpay::*;
use aggpay_testkit::{ConnectProxy, TempDir, TestCa, TlsServer};

use crate::support::{KEY, LEDGER};

#[test]
fn an_explicit_proxy_tunnels_https_without_seeing_the_key() {
    let ca = TestCa::new("aggpay staging CA");
    let server = TlsServer::start(&ca.issue(&["127.0.0.1"]), 200, LEDGER);
    let proxy = ConnectProxy::start();
    let client = Client::builder(server.url(), "agg_test".parse().unwrap(), KEY)
        .ca_certificates_pem(ca.pem())
        .proxy(ProxyConfig::Url(Secret::new(proxy.url())))
        .build()
        .unwrap();
    client.get_ledger_account().unwrap();
    assert_eq!(
        proxy.targets(),
        [format!("127.0.0.1:{}", server.addr().port())]
    );
    let carried = proxy.carried();
    assert!(!carried.is_empty());
    assert!(
        !carried.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
        "the proxy saw the key"
    );
    // Direct ignores the environment and the proxy.
    let direct = Client::builder(server.url(), "agg_test".parse().unwrap(), KEY)
        .ca_certificates_pem(ca.pem())
        .proxy(ProxyConfig::Direct)
        .build()
        .unwrap();
    direct.get_ledger_account().unwrap();
    assert_eq!(proxy.targets().len(), 1);
}

const CHILD: &str = "AGGPAY_TEST_PROXY_CHILD";

/// Run by [`the_environment_chooses_the_proxy`] in a child process with
/// the environment it sets (a test must not change its own process's
/// environment); does nothing otherwise.
#[test]
fn env_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let client = Client::from_env().unwrap();
    let ledger = client.get_ledger_account().unwrap();
    assert_eq!(ledger.currency, Currency::PKR);
}

#[test]
fn the_environment_chooses_the_proxy() {
    let ca = TestCa::new("aggpay staging CA");
    let server = TlsServer::start(&ca.issue(&["127.0.0.1"]), 200, LEDGER);
    let dir = TempDir::new("aggpay-proxy");
    let ca_file = dir.join("ca.pem");
    ca.write_pem(&ca_file);
    for (proxy_var, no_proxy, tunnelled) in [
        ("HTTPS_PROXY", None, true),
        ("https_proxy", None, true),
        ("ALL_PROXY", None, true),
        ("HTTPS_PROXY", Some("127.0.0.1"), false),
    ] {
        let proxy = ConnectProxy::start();
        let mut child = Command::new(std::env::current_exe().unwrap());
        child
            .args([
                "--exact",
                "proxy::env_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env_clear()
            .env(CHILD, "1")
            .env(ENV_BASE_URL, server.url())
            .env(ENV_AGGREGATOR_ID, "agg_test")
            .env(ENV_SECRET_KEY, KEY)
            .env(ENV_CA_CERT, &ca_file)
            .env(proxy_var, proxy.url());
        if let Some(hosts) = no_proxy {
            child.env("NO_PROXY", hosts);
        }
        let out = child.output().unwrap();
        assert!(
            out.status.success(),
            "{proxy_var} {no_proxy:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let expected: &[String] = if tunnelled {
            &[format!("127.0.0.1:{}", server.addr().port())]
        } else {
            &[]
        };
        assert_eq!(proxy.targets(), expected, "{proxy_var} {no_proxy:?}");
    }
}
