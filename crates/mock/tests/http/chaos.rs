//! Transport chaos and latency, as a tool built on the client meets them.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use aggpay::{Client, Direction, RetryPolicy, TransactionQuery};
use aggpay_mock::{Chaos, Latency, MockConfig, MockServer};

use crate::support::*;

fn raw_get(server: &MockServer, path: &str) -> (Vec<u8>, aggpay_testkit::End) {
    let mut s = TcpStream::connect(server.addr()).unwrap();
    let head = format!(
        "GET /v1/aggregators/{}{path} HTTP/1.1\r\nHost: x\r\n{KEY_HEADER}: {}\r\nConnection: close\r\n\r\n",
        server.aggregator_id(),
        server.secret_key().expose()
    );
    std::io::Write::write_all(&mut s, head.as_bytes()).unwrap();
    aggpay_testkit::read_until_closed(&mut s, Duration::from_secs(30))
}

fn only(kind: &str) -> MockServer {
    let chaos: Chaos = format!("{kind}=1").parse().unwrap();
    MockServer::start(
        MockConfig::new().batches(8).chaos(
            chaos
                .retry_after(Duration::from_secs(7))
                .slow_for(Duration::from_millis(400)),
        ),
    )
    .unwrap()
}

/// Declared `Content-Length` and the body that came.
fn framing(answer: &[u8]) -> (String, usize, usize) {
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head");
    let head = String::from_utf8_lossy(&answer[..split]).to_ascii_lowercase();
    let declared = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    (head, declared, answer.len() - split - 4)
}

#[test]
fn every_mishap_looks_as_documented_on_the_wire() {
    for status in ["500", "503"] {
        let (answer, _) = raw_get(&only(status), "/settlements/batches");
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with(&format!("HTTP/1.1 {status}")), "{text}");
        assert!(
            text.contains(r#""code":"error.internal_server_error""#),
            "{text}"
        );
    }
    for status in ["502", "504"] {
        let (answer, _) = raw_get(&only(status), "/settlements/batches");
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with(&format!("HTTP/1.1 {status}")), "{text}");
        assert!(
            text.contains("text/html") && text.contains("<html>"),
            "{text}"
        );
    }
    let (answer, _) = raw_get(&only("429"), "/settlements/batches");
    let text = String::from_utf8_lossy(&answer).to_ascii_lowercase();
    assert!(
        text.starts_with("http/1.1 429") && text.contains("retry-after: 7"),
        "{text}"
    );

    let (answer, _) = raw_get(&only("truncate"), "/settlements/batches");
    let (head, declared, got) = framing(&answer);
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(got < declared && got > 0, "{got} of {declared}");

    let (answer, end) = raw_get(&only("reset"), "/settlements/batches");
    let (_, declared, got) = framing(&answer);
    assert!(got < declared, "{got} of {declared}");
    assert_eq!(
        end.error(),
        Some(std::io::ErrorKind::ConnectionReset),
        "a reset, not a clean close"
    );

    let started = Instant::now();
    let (answer, _) = raw_get(&only("slow"), "/settlements/batches");
    let (_, declared, got) = framing(&answer);
    assert_eq!(got, declared, "a slow body is whole");
    assert!(
        started.elapsed() >= Duration::from_millis(350),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn latency_is_added_to_every_answer() {
    let server = MockServer::start(
        MockConfig::new()
            .batches(4)
            .latency("120..160".parse::<Latency>().unwrap()),
    )
    .unwrap();
    for _ in 0..3 {
        let started = Instant::now();
        let (answer, error) = raw_get(&server, "/ledger/accounts");
        assert!(
            answer.starts_with(b"HTTP/1.1 200"),
            "{:?} {error:?}",
            String::from_utf8_lossy(&answer)
        );
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(120), "{took:?}");
    }
}

/// The same seed, the same fates for the same sequence of requests.
#[test]
fn chaos_is_deterministic_for_a_seed() {
    let fates = |seed: u64| -> Vec<String> {
        let server = MockServer::start(
            MockConfig::new()
                .seed(seed)
                .batches(4)
                .chaos("503=0.3,502=0.2".parse().unwrap()),
        )
        .unwrap();
        (0..40)
            .map(|_| {
                let (answer, _) = raw_get(&server, "/ledger/accounts");
                String::from_utf8_lossy(&answer[..12]).into_owned()
            })
            .collect()
    };
    let first = fates(5);
    assert_eq!(first, fates(5));
    assert!(first.iter().any(|f| f.contains("200")) && first.iter().any(|f| f.contains("503")));
    assert_ne!(first, fates(6));
}

/// The resilience promise: a large batch walked through
/// `--chaos 503=0.1,429=0.05,reset=0.02` gives exactly the rows of a
/// clean walk, no more, no fewer.
#[test]
fn a_walk_through_chaos_gets_exactly_the_rows_of_a_clean_walk() {
    let config = MockConfig::new()
        .seed(21)
        .batches(6)
        .large_batch_transactions(20_000);
    let clean = MockServer::start(config.clone()).unwrap();
    let chaotic = MockServer::start(
        config.chaos(
            "503=0.1,429=0.05,reset=0.02"
                .parse::<Chaos>()
                .unwrap()
                .retry_after(Duration::ZERO),
        ),
    )
    .unwrap();
    let client = |server: &MockServer| {
        Client::builder(
            server.url(),
            server.aggregator_id().clone(),
            server.secret_key(),
        )
        .timeout(Duration::from_secs(10))
        .retry(
            RetryPolicy::builder()
                .max_attempts(12)
                .base_delay(Duration::from_millis(1))
                .max_delay(Duration::from_millis(5))
                .build(),
        )
        .build()
        .unwrap()
    };
    // The same data on both servers: the same large batch.
    let batch = clean.info().large_batch.unwrap();
    let walk = |client: &Client| -> Vec<(u64, String)> {
        client
            .batch_transactions(&batch, &TransactionQuery::new().direction(Direction::Asc))
            .map(|t| {
                let t = t.unwrap();
                (t.id.get(), t.token.to_string())
            })
            .collect()
    };
    let expected = walk(&client(&clean));
    assert_eq!(expected.len(), 20_000);
    let through = client(&chaotic);
    let got = walk(&through);
    assert_eq!(got.len(), expected.len());
    assert!(got == expected, "the rows differ from a clean walk");
    let stats = through.stats();
    assert!(
        stats.retries > 10,
        "chaos met only {} retries",
        stats.retries
    );
}
