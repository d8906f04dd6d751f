//! Servers that misbehave on purpose: endless cursors, endless bodies,
//! silence. The run fails the rules they break and ends within its bounds.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use aggpay_conformance::{EXIT_FAILED, EXIT_UNUSABLE};
use aggpay_testkit::{RawRequest, RawServer, respond, silence};
use serde_json::Value;

use crate::support::{harness, status_of};

/// A server that misbehaves on purpose: answers the first call, then an
/// endless cursor chain on the batch list, an endless body on transactions,
/// silence on webhooks, and 404 elsewhere.
fn hostile(request: &RawRequest, out: &mut TcpStream) {
    let target = request.target.as_str();
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if path == "/v1/aggregators/agg_hostile" {
        respond(out, 200, r#"{"api_version":"v1","data":{}}"#);
    } else if path.ends_with("/settlements/batches") {
        // An endless chain: full pages of fresh, ordered ids.
        let cursor: u64 = query
            .split('&')
            .find_map(|p| p.strip_prefix("cursor="))
            .and_then(|c| c.parse().ok())
            .unwrap_or(1_000_000_000_000);
        let ascending = query.contains("direction=ASC");
        // It reads its page size: a server that does not is judged only
        // by what it reads (`wire.paging-names`).
        let limit: u64 = query
            .split('&')
            .find_map(|p| p.strip_prefix("limit="))
            .and_then(|l| l.parse().ok())
            .filter(|l| *l > 0)
            .unwrap_or(30)
            .min(100);
        let ids: Vec<u64> = (1..=limit)
            .map(|i| {
                if ascending {
                    cursor.saturating_add(i)
                } else {
                    cursor.saturating_sub(i).max(1)
                }
            })
            .collect();
        let rows: Vec<String> = ids
            .iter()
            .map(|id| {
                format!(r#"{{"id":"{id}","token":"sb_{id:036}","status":"BATCH_COMPLETED"}}"#)
            })
            .collect();
        let next = ids.last().unwrap();
        respond(
            out,
            200,
            &format!(
                r#"{{"api_version":"v1","data":{{"batches":[{}],"next_cursor":"{next}","count":{{"filtered_count":"90","total_count":"90"}}}}}}"#,
                rows.join(",")
            ),
        );
    } else if path.ends_with("/transactions") {
        let _ = out.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"api_version\":\"v1\",\"data\":{\"transactions\":[");
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(20) {
            if out.write_all(&[b' '; 8192]).is_err() {
                break;
            }
        }
    } else if path.ends_with("/webhooks") {
        silence(out);
    } else {
        respond(
            out,
            404,
            r#"{"code":"error.not_found","message":"requested resource not found"}"#,
        );
    }
}

#[test]
fn hostile_servers_fail_rules_and_the_run_ends_within_its_bounds() {
    let server = RawServer::start(hostile);
    let url = server.url();
    let started = std::time::Instant::now();
    let (code, out, err) = harness(&[
        "--base-url",
        &url,
        "--key",
        "hostile-key",
        "--aggregator",
        "agg_hostile",
        "--timeout",
        "0.5",
        "--cases",
        "3",
        "--format",
        "json",
        "--seed",
        "5",
    ]);
    let elapsed = started.elapsed();
    drop(server);
    assert_eq!(code, EXIT_FAILED, "{err}");
    assert!(
        elapsed < std::time::Duration::from_secs(90),
        "{elapsed:?} {out}"
    );
    let report: Value = serde_json::from_str(&out).unwrap();
    for rule in [
        "cursor.walk",
        "cursor.only-settlement-txns",
        "envelope.success",
    ] {
        assert_eq!(status_of(&report, rule), "failed", "{rule}");
    }
    let walk = report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "cursor.walk")
        .unwrap();
    assert!(
        walk["failures"][0]["message"]
            .as_str()
            .unwrap()
            .contains("no end"),
        "{walk}"
    );
    assert!(!out.contains("hostile-key"));

    // A server that never answers at all: the run cannot be made, quickly.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}", silent.local_addr().unwrap());
    let started = std::time::Instant::now();
    let (code, _, err) = harness(&[
        "--base-url",
        &silent_url,
        "--key",
        "k",
        "--aggregator",
        "agg_1",
        "--timeout",
        "1",
    ]);
    assert_eq!(code, EXIT_UNUSABLE, "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    drop(silent);
}
