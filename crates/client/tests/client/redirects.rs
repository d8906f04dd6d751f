//! The API never redirects: the client follows no redirect, so the key
//! goes to the configured origin only.

use aggpay::*;

use crate::support::{Act, KEY, LEDGER, Scripted, ScriptedClient, json, token};

/// Two loopback servers: the origin answers every request with a
/// redirect to the other one (by IP, by `localhost`, or by a relative
/// path). Whatever the method and the status, the target never receives a
/// request, the origin receives exactly one, and the error names the
/// status and the (redacted) Location.
#[test]
fn no_redirect_target_ever_receives_the_key() {
    let target = Scripted::start(vec![json(200, LEDGER)]);
    let port = target.url().rsplit(':').next().unwrap().to_owned();
    let locations = [
        format!("http://127.0.0.1:{port}/v1/aggregators/agg_test/ledger/accounts"),
        format!("http://localhost:{port}/steal?key={KEY}"),
        "/v1/aggregators/agg_test/ledger/accounts".to_owned(),
    ];
    type Call = fn(&Client) -> Result<(), Error>;
    let calls: [(&str, Call); 3] = [
        ("GET", |c| c.get_ledger_account().map(drop)),
        ("PUT", |c| {
            c.rotate_access_key(&AccessKeyId::parse("ak_1").unwrap())
                .map(drop)
        }),
        ("POST", |c| {
            c.create_report_export(&NewReportExport::batch(token()))
                .map(drop)
        }),
    ];
    for status in [301, 302, 303, 307, 308] {
        for location in &locations {
            for (method, call) in calls {
                let origin = Scripted::start(vec![Act::Reply(
                    status,
                    vec![("Location", location.clone())],
                    Vec::new(),
                )]);
                let client = origin.client(|b| b);
                let err = call(&client).unwrap_err();
                let ErrorKind::Redirect {
                    status: got,
                    location: seen,
                    ..
                } = err.kind()
                else {
                    panic!("{method} {status} {location}: {err:?}");
                };
                assert_eq!(*got, status);
                let seen = seen.as_deref().unwrap();
                assert!(!seen.contains(KEY), "{seen}");
                assert!(!err.to_string().contains(KEY), "{err}");
                assert!(!err.is_retryable());
                let sent = origin.requests();
                assert_eq!(sent.len(), 1, "{method} {status}: one request, no retry");
                assert!(sent[0].starts_with(method), "{}", sent[0]);
            }
        }
    }
    assert!(
        target.requests().is_empty(),
        "a redirect target received {:?}",
        target.requests()
    );
}
