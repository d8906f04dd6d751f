//! What the client makes of every kind of answer: API errors of both
//! forms, other statuses, broken bodies, stalls and oversized bodies.

use std::time::{Duration, Instant};

use aggpay::*;

use crate::support::{Act, KEY, LEDGER, Scripted, ScriptedClient, json, mock};

#[test]
fn api_errors_become_typed_values() {
    let (server, client) = mock();
    let unknown = PaymentId::parse("pm_0000000000000000").unwrap();
    let err = client.get_payment_charges(&unknown).unwrap_err();
    let api = err.api_error().expect("api error");
    assert_eq!(
        (api.status(), api.code(), api.shape()),
        (404, "error.not_found", ErrorShape::Bare)
    );
    assert!(!err.is_retryable());
    let wrong = Client::builder(server.url(), server.aggregator_id().clone(), "not-the-key")
        .build()
        .unwrap();
    let err = wrong.get_ledger_account().unwrap_err();
    let api = err.api_error().unwrap();
    assert_eq!(
        (api.status(), api.code(), api.shape()),
        (401, "error.unauthorized_access", ErrorShape::Envelope)
    );
    let err = client
        .get_account_info(&AccountQuery::iban("PK00"))
        .unwrap_err();
    assert_eq!(err.status(), Some(404));
}

#[test]
fn error_shapes_map_to_variants() {
    type Check = fn(&Error) -> bool;
    let cases: Vec<(Act, Check)> = vec![
        (
            json(
                404,
                r#"{"code":"error.not_found","message":"requested resource not found"}"#,
            ),
            |e| {
                e.api_error()
                    .is_some_and(|a| a.shape() == ErrorShape::Bare && a.status() == 404)
            },
        ),
        (
            json(
                500,
                r#"{"api_version":"v1","error":{"code":"error.internal_server_error","message":"boom"}}"#,
            ),
            |e| {
                e.api_error().is_some_and(|a| {
                    a.shape() == ErrorShape::Envelope && a.code() == "error.internal_server_error"
                })
            },
        ),
        (
            Act::Reply(
                502,
                vec![("Content-Type", "text/html".into())],
                b"<html>bad gateway</html>".to_vec(),
            ),
            |e| matches!(e.kind(), ErrorKind::Status { status: 502, snippet, .. } if snippet.contains("bad gateway")),
        ),
        (
            json(200, "this is not json"),
            |e| matches!(e.kind(), ErrorKind::Decode { status: 200, snippet, .. } if snippet.contains("not json")),
        ),
        (
            json(200, r#"{"api_version":"v1","data":{"id":"x"}}"#),
            |e| matches!(e.kind(), ErrorKind::Decode { .. }),
        ),
        (
            Act::Truncate(200, br#"{"api_version":"v1","da"#.to_vec(), 500),
            |e| matches!(e.kind(), ErrorKind::Transport(_) | ErrorKind::Decode { .. }),
        ),
        (Act::Reset, |e| matches!(e.kind(), ErrorKind::Transport(_))),
    ];
    for (act, check) in cases {
        let server = Scripted::start(vec![act]);
        let err = server
            .client(|b| b.retry(RetryPolicy::builder().max_attempts(1).build()))
            .get_ledger_account()
            .unwrap_err();
        assert!(check(&err), "{err:?}");
        assert!(!err.to_string().contains(KEY));
    }
}

/// The transport error is the crate's own; ureq's detail stays reachable
/// through `source()` only, once.
#[test]
fn transport_errors_keep_their_cause_as_a_source() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let err = Client::builder(url, "agg_1".parse().unwrap(), KEY)
        .retry(RetryPolicy::builder().max_attempts(1).build())
        .build()
        .unwrap()
        .get_ledger_account()
        .unwrap_err();
    let ErrorKind::Transport(transport) = err.kind() else {
        panic!("{err:?}");
    };
    assert_eq!(
        transport.io_kind(),
        Some(std::io::ErrorKind::ConnectionRefused)
    );
    assert_eq!(
        err.to_string(),
        "get_ledger_account: could not reach the server"
    );
    // The cause is the source, its words shown once down the chain, as
    // anyhow's `{:#}` prints it.
    let cause = std::error::Error::source(&err).unwrap().to_string();
    assert!(cause.to_ascii_lowercase().contains("refused"), "{cause}");
    let mut chain = err.to_string();
    let mut next = std::error::Error::source(&err);
    while let Some(e) = next {
        chain.push_str(&format!(": {e}"));
        next = e.source();
    }
    assert_eq!(
        chain,
        format!("get_ledger_account: could not reach the server: {cause}")
    );
    assert_eq!(chain.matches(&cause).count(), 1, "{chain}");
    assert!(err.is_retryable() && err.is_network());
}

#[test]
fn a_stalled_server_hits_the_timeout_and_a_huge_body_the_limit() {
    let server = Scripted::start(vec![Act::Stall(Duration::from_secs(3))]);
    let started = Instant::now();
    let err = server
        .client(|b| {
            b.timeout(Duration::from_millis(300))
                .retry(RetryPolicy::builder().max_attempts(1).build())
        })
        .get_ledger_account()
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Timeout { .. }), "{err:?}");
    assert!(err.is_retryable());
    assert!(started.elapsed() < Duration::from_secs(3));

    let big = format!(
        r#"{{"api_version":"v1","data":{{"pad":"{}"}}}}"#,
        "x".repeat(200_000)
    );
    let server = Scripted::start(vec![json(200, &big)]);
    let err = server
        .client(|b| b.max_body_size(64 * 1024))
        .get_ledger_account()
        .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::BodyTooLarge { limit: 65536, .. }),
        "{err:?}"
    );
}

/// One case per chaos fault: each ends in the right typed error, or in a
/// successful retry, within a bound; never a panic or a hang.
#[test]
fn chaos_faults_end_in_typed_errors_within_bounds() {
    let ledger_len = LEDGER.len();
    type Check = fn(&Result<LedgerAccount, Error>) -> bool;
    let cases: Vec<(&str, Vec<Act>, Check)> = vec![
        ("reset before the answer", vec![Act::Reset], |r| {
            matches!(
                r.as_ref().map_err(aggpay::Error::kind),
                Err(ErrorKind::Transport(_))
            )
        }),
        (
            "reset during the body",
            vec![Act::Truncate(
                200,
                LEDGER.as_bytes()[..40].to_vec(),
                LEDGER.len(),
            )],
            |r| {
                matches!(
                    r.as_ref().map_err(aggpay::Error::kind),
                    Err(ErrorKind::Transport(_) | ErrorKind::Decode { .. })
                )
            },
        ),
        (
            "stall past the timeout",
            vec![Act::Stall(Duration::from_secs(2))],
            |r| {
                matches!(
                    r.as_ref().map_err(aggpay::Error::kind),
                    Err(ErrorKind::Timeout { .. })
                )
            },
        ),
        (
            "truncated body",
            vec![Act::Truncate(
                200,
                LEDGER.as_bytes()[..ledger_len - 10].to_vec(),
                ledger_len,
            )],
            |r| {
                matches!(
                    r.as_ref().map_err(aggpay::Error::kind),
                    Err(ErrorKind::Transport(_) | ErrorKind::Decode { .. })
                )
            },
        ),
        (
            "Content-Length shorter than the body",
            vec![Act::Raw(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: 20\r\nConnection: close\r\n\r\n{LEDGER}"
                )
                .into_bytes(),
            )],
            |r| {
                matches!(
                    r.as_ref().map_err(aggpay::Error::kind),
                    Err(ErrorKind::Decode { status: 200, .. })
                )
            },
        ),
        ("non-JSON 200", vec![json(200, "<html>ok</html>")], |r| {
            matches!(
                r.as_ref().map_err(aggpay::Error::kind),
                Err(ErrorKind::Decode { status: 200, .. })
            )
        }),
        (
            "HTML 502",
            vec![Act::Reply(
                502,
                vec![],
                b"<html>bad gateway</html>".to_vec(),
            )],
            |r| {
                matches!(
                    r.as_ref().map_err(aggpay::Error::kind),
                    Err(ErrorKind::Status { status: 502, .. })
                )
            },
        ),
        (
            "503 then 200",
            vec![json(503, "{}"), json(200, LEDGER)],
            |r| r.is_ok(),
        ),
        (
            "429 with Retry-After seconds",
            vec![
                Act::Reply(429, vec![("Retry-After", "1".into())], b"{}".to_vec()),
                json(200, LEDGER),
            ],
            |r| r.is_ok(),
        ),
        (
            "oversized body",
            vec![json(
                200,
                &format!("{{\"pad\":\"{}\"}}", "x".repeat(100_000)),
            )],
            |r| {
                matches!(
                    r.as_ref().map_err(aggpay::Error::kind),
                    Err(ErrorKind::BodyTooLarge { .. })
                )
            },
        ),
    ];
    for (name, script, check) in cases {
        let server = Scripted::start(script);
        let client = server.client(|b| {
            b.timeout(Duration::from_millis(500))
                .max_body_size(32 * 1024)
                .retry(
                    RetryPolicy::builder()
                        .max_attempts(2)
                        .base_delay(Duration::from_millis(5))
                        .build(),
                )
        });
        let started = Instant::now();
        let result = client.get_ledger_account();
        assert!(check(&result), "{name}: {result:?}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{name}: {:?}",
            started.elapsed()
        );
    }
}
