//! Which requests are retried, how often, and how long the client waits.

use std::time::{Duration, Instant};

use aggpay::*;

use crate::support::{Act, LEDGER, Scripted, ScriptedClient, json, token};

#[test]
fn retries_happen_exactly_where_they_should() {
    let busy = json(
        503,
        r#"{"api_version":"v1","error":{"code":"error.internal_server_error","message":"busy"}}"#,
    );
    let server = Scripted::start(vec![busy.clone(), busy.clone(), json(200, LEDGER)]);
    let client = server.client(|b| b);
    client.get_ledger_account().unwrap();
    assert_eq!(server.requests().len(), 3);
    assert_eq!(client.stats().retries, 2);
    assert_eq!(client.stats().requests, 3);

    let bad = Scripted::start(vec![
        json(400, r#"{"code":"error.bad_request","message":"no"}"#),
        json(200, LEDGER),
    ]);
    assert_eq!(
        bad.client(|b| b).get_ledger_account().unwrap_err().status(),
        Some(400)
    );
    assert_eq!(bad.requests().len(), 1, "400 is never retried");

    let rotate = Scripted::start(vec![busy.clone(), json(200, "{}")]);
    let id = AccessKeyId::parse("ak_1").unwrap();
    assert_eq!(
        rotate
            .client(|b| b)
            .rotate_access_key(&id)
            .unwrap_err()
            .status(),
        Some(503)
    );
    assert_eq!(rotate.requests().len(), 1, "rotate is never retried");
    assert!(rotate.requests()[0].starts_with("PUT /v1/aggregators/agg_test/keys/ak_1/rotate "));

    let export = Scripted::start(vec![Act::Reset, json(200, "{}")]);
    assert!(
        export
            .client(|b| b)
            .create_report_export(&NewReportExport::batch(token()))
            .is_err()
    );
    assert_eq!(
        export.requests().len(),
        1,
        "export creation is never retried"
    );
    let sent = &export.requests()[0];
    assert!(sent.starts_with("POST /v1/aggregators/agg_test/settlements/report-exports "));
    assert!(sent.contains(r#""kind":"REPORT_KIND_BATCH""#), "{sent}");

    let exhausted = Scripted::start(vec![busy]);
    let err = exhausted
        .client(|b| {
            b.retry(
                RetryPolicy::builder()
                    .max_attempts(3)
                    .base_delay(Duration::from_millis(1))
                    .build(),
            )
        })
        .get_ledger_account()
        .unwrap_err();
    assert!(err.is_retryable());
    assert_eq!(exhausted.requests().len(), 3);
}

#[test]
fn retry_after_is_honoured_in_seconds_and_as_a_date() {
    let limited = |after: String| {
        Act::Reply(
            429,
            vec![
                ("Retry-After", after),
                ("Content-Type", "application/json".into()),
            ],
            br#"{"code":"rate_limited","message":"slow down"}"#.to_vec(),
        )
    };
    let server = Scripted::start(vec![limited("1".into()), json(200, LEDGER)]);
    let started = Instant::now();
    server.client(|b| b).get_ledger_account().unwrap();
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.requests().len(), 2);

    let date = jiff::fmt::rfc2822::DateTimePrinter::new()
        .timestamp_to_rfc9110_string(&(jiff::Timestamp::now() + jiff::SignedDuration::from_secs(2)))
        .unwrap();
    let server = Scripted::start(vec![limited(date), json(200, LEDGER)]);
    let started = Instant::now();
    server.client(|b| b).get_ledger_account().unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );

    // A wait beyond the policy's limit returns the 429 at once.
    let server = Scripted::start(vec![limited("3600".into())]);
    let started = Instant::now();
    let err = server.client(|b| b).get_ledger_account().unwrap_err();
    assert_eq!(err.status(), Some(429));
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// A job's patience is bounded as a whole: once the retries of a client
/// and its clones have waited their budget, failures come back at once.
#[test]
fn the_total_wait_budget_is_shared_and_ends_the_retries() {
    let limited = Act::Reply(
        429,
        vec![
            ("Retry-After", "1".to_owned()),
            ("Content-Type", "application/json".into()),
        ],
        br#"{"code":"rate_limited","message":"slow down"}"#.to_vec(),
    );
    let server = Scripted::start(vec![limited; 6]);
    let client = server.client(|b| {
        b.retry(
            RetryPolicy::builder()
                .max_attempts(10)
                .max_total_wait(Duration::from_millis(1_500))
                .build(),
        )
    });
    let started = Instant::now();
    let err = client.get_ledger_account().unwrap_err();
    assert_eq!(err.status(), Some(429));
    // One wait of about a second fits; the next would overspend.
    assert_eq!(server.requests().len(), 2);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // The budget is the clone's too: spent, the next failure is final.
    let clone = client.clone();
    assert!(clone.get_ledger_account().is_err());
    assert_eq!(server.requests().len(), 3);
    assert!(client.stats().waited >= Duration::from_secs(1));
}

/// A deadline bounds a call whole: its attempts, the timeouts that end
/// them and the waits between them.
#[test]
fn a_deadline_bounds_the_whole_call_timeouts_included() {
    // A server that never answers: the per-request timeout alone (5 s a
    // try, 4 tries) would take 20 s; the deadline ends the call at 0.5 s.
    let server = Scripted::start(vec![Act::Stall(Duration::from_secs(30)); 4]);
    let client = server.client(|b| {
        b.timeout(Duration::from_secs(5)).retry(
            RetryPolicy::builder()
                .deadline(Duration::from_millis(500))
                .build(),
        )
    });
    let started = Instant::now();
    let err = client.get_ledger_account().unwrap_err();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert!(
        matches!(err.kind(), ErrorKind::Timeout { after, .. } if *after == Duration::from_millis(500)),
        "{err}"
    );

    // A server that keeps failing: no retry starts that could not end in
    // time, and the failure is the server's.
    let busy = json(
        503,
        r#"{"api_version":"v1","error":{"code":"error.internal_server_error","message":"busy"}}"#,
    );
    let server = Scripted::start(vec![busy.clone(); 50]);
    let client = server.client(|b| {
        b.retry(
            RetryPolicy::builder()
                .max_attempts(50)
                .base_delay(Duration::from_millis(100))
                .max_delay(Duration::from_millis(200))
                .deadline(Duration::from_secs(1))
                .build(),
        )
    });
    let started = Instant::now();
    let err = client.get_ledger_account().unwrap_err();
    assert_eq!(err.status(), Some(503));
    // Without the deadline, 49 waits of 100 ms on average: about 5 s.
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(server.requests().len() >= 3, "{}", server.requests().len());

    // A retry the deadline ends: the call fails with the server's failure
    // that led to it, not with a timeout of the caller's own making.
    let server = Scripted::start(vec![busy, Act::Stall(Duration::from_secs(30))]);
    let client = server.client(|b| {
        b.retry(
            RetryPolicy::builder()
                .base_delay(Duration::from_millis(10))
                .max_delay(Duration::from_millis(10))
                .deadline(Duration::from_millis(500))
                .build(),
        )
    });
    let started = Instant::now();
    let err = client.get_ledger_account().unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3), "{err}");
    assert_eq!(err.status(), Some(503), "{err}");
    assert_eq!(server.requests().len(), 2);
}

/// The batch-job preset waits out a server gone for a while.
#[test]
fn the_batch_job_preset_waits_out_a_short_outage() {
    let policy = RetryPolicy::batch_job();
    assert_eq!(policy.max_attempts(), 12);
    assert_eq!(policy.max_delay(), Duration::from_secs(60));
    let busy = json(
        503,
        r#"{"api_version":"v1","error":{"code":"error.internal_server_error","message":"busy"}}"#,
    );
    // Quicker backoff, the same shape: three failures, then the answer.
    let server = Scripted::start(vec![busy.clone(), busy.clone(), busy, json(200, LEDGER)]);
    let client = server.client(|b| {
        b.retry(
            RetryPolicy::batch_job()
                .to_builder()
                .base_delay(Duration::from_millis(10))
                .build(),
        )
    });
    client.get_ledger_account().unwrap();
    assert_eq!(server.requests().len(), 4);
}
