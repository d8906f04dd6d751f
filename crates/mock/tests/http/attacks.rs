//! What one client can do to a server a whole team shares: each attack
//! that broke the tiny_http mock, against the binary in a process of its
//! own. During and after each, a normal request is answered within a
//! second, and the process's peak memory stays bounded.

use aggpay_testkit::read_until_closed;
use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::support::*;

/// Peak memory allowed to the mock after any attack (it starts at about
/// 10 MiB; tiny_http reached 130 MiB on two 64 MiB header lines).
const MEMORY_MB: f64 = 64.0;

fn assert_serving(mock: &Process, when: &str) {
    assert_eq!(
        mock.probe(),
        Some(200),
        "{when}: a normal request within 1 s"
    );
}

/// A head announcing an absurd body, then a close: tiny_http aborted
/// allocating 99,999,999,999,999 bytes.
#[test]
fn an_absurd_content_length_costs_nothing() {
    let mut mock = Process::start(&[], None);
    for _ in 0..5 {
        let mut s = open_with(
            mock.addr,
            format!(
                "POST /v1/aggregators/{}/settlements/report-exports HTTP/1.1\r\nHost: x\r\n{KEY_HEADER}: {}\r\nContent-Length: 99999999999999\r\n\r\n",
                mock.aggregator, mock.key
            )
            .as_bytes(),
        );
        let (answer, _) = read_until_closed(&mut s, Duration::from_secs(2));
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with("HTTP/1.1 400"), "{text}");
        assert!(text.contains("error.bad_request"), "{text}");
    }
    assert!(mock.alive());
    assert_serving(&mock, "after");
    assert!(mock.peak_mb() < MEMORY_MB, "{} MiB", mock.peak_mb());
}

/// Far more connections than file descriptors (`ulimit -n 256`): the cap
/// stays below the limit, idle connections make room, and the listener
/// never stops accepting.
#[test]
fn running_out_of_file_descriptors_never_stops_the_listener() {
    let mock = Process::start(&[], Some(256));
    let mut held = Vec::new();
    for _ in 0..600 {
        match TcpStream::connect_timeout(&mock.addr, Duration::from_secs(2)) {
            Ok(s) => held.push(s),
            Err(_) => break,
        }
    }
    assert!(held.len() > 300, "{} connections", held.len());
    assert_serving(&mock, "with 600 connections held");
    drop(held);
    std::thread::sleep(Duration::from_millis(200));
    for round in 0..20 {
        assert_serving(&mock, &format!("after, round {round}"));
    }
    assert!(mock.peak_mb() < MEMORY_MB, "{} MiB", mock.peak_mb());
}

/// Connections that announce a body (a large length, chunked, an upgrade)
/// and send nothing: the rest is served meanwhile, and they are closed
/// once the body timeout passes.
#[test]
fn stalled_bodies_never_freeze_the_server() {
    let mock = Process::start(&["--body-timeout", "1"], None);
    let post = |extra: &str| {
        format!(
            "POST /v1/aggregators/{}/settlements/report-exports HTTP/1.1\r\nHost: x\r\n{KEY_HEADER}: {}\r\n{extra}\r\n",
            mock.aggregator, mock.key
        )
    };
    let heads = [
        post("Content-Length: 5000\r\n"),
        post("Transfer-Encoding: chunked\r\n"),
        post("Connection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 100\r\n"),
    ];
    let mut stalled: Vec<TcpStream> = (0..12)
        .map(|i| open_with(mock.addr, heads[i % heads.len()].as_bytes()))
        .collect();
    for round in 0..5 {
        assert_serving(&mock, &format!("during, round {round}"));
    }
    let started = Instant::now();
    for s in &mut stalled {
        let (answer, end) = read_until_closed(s, Duration::from_secs(5));
        let closed = end.closed();
        assert!(closed, "a stalled connection stayed open");
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with("HTTP/1.1 400"), "{text}");
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_serving(&mock, "after");
}

/// Huge header lines: refused at the head limit, memory flat.
#[test]
fn huge_headers_are_cut_off_at_the_limit() {
    let mock = Process::start(&[], None);
    let attackers: Vec<_> = (0..2)
        .map(|_| {
            let addr = mock.addr;
            std::thread::spawn(move || {
                let mut s = open_with(addr, b"GET / HTTP/1.1\r\nHost: x\r\nX-Huge: ");
                let chunk = vec![b'a'; 1024 * 1024];
                // 64 MiB, or until the server closes the connection.
                let mut sent = 0;
                while sent < 64 && s.write_all(&chunk).is_ok() {
                    sent += 1;
                }
                let (answer, _) = read_until_closed(&mut s, Duration::from_secs(2));
                (sent, answer)
            })
        })
        .collect();
    assert_serving(&mock, "during");
    for a in attackers {
        let (sent, answer) = a.join().unwrap();
        assert!(sent < 64, "the server read {sent} MiB of one header");
        let text = String::from_utf8_lossy(&answer);
        assert!(
            text.is_empty() || text.starts_with("HTTP/1.1 431"),
            "{text}"
        );
    }
    assert_serving(&mock, "after");
    assert!(mock.peak_mb() < MEMORY_MB, "{} MiB", mock.peak_mb());
}

/// An idle keep-alive connection, and a head sent a byte at a time
/// (slowloris), are closed at their timeouts.
#[test]
fn idle_and_slow_heads_are_closed_at_their_timeouts() {
    let mock = Process::start(&["--idle-timeout", "1", "--header-timeout", "1"], None);
    let mut idle = open_with(mock.addr, b"");
    let started = Instant::now();
    let closed = read_until_closed(&mut idle, Duration::from_secs(5))
        .1
        .closed();
    assert!(closed, "the idle connection stayed open");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );

    let mut slow = open_with(mock.addr, b"G");
    let started = Instant::now();
    let mut closed = false;
    for b in b"ET /v1/aggregators HTTP/1.1\r\nHost: x\r\nX-Slow: "
        .iter()
        .cycle()
        .take(200)
    {
        std::thread::sleep(Duration::from_millis(100));
        if slow.write_all(&[*b]).is_err() {
            closed = true;
            break;
        }
        if started.elapsed() > Duration::from_secs(5) {
            break;
        }
    }
    if !closed {
        closed = read_until_closed(&mut slow, Duration::from_secs(2))
            .1
            .closed();
    }
    assert!(closed, "the slow head was never cut");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_serving(&mock, "after");
}

/// `Content-Length` with `Transfer-Encoding` (request smuggling) is
/// refused with the documented 400, and the connection closed.
#[test]
fn a_length_with_a_transfer_encoding_is_refused() {
    let mock = Process::start(&[], None);
    for order in [
        "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked\r\nContent-Length: 4\r\n",
    ] {
        let mut s = open_with(
            mock.addr,
            format!(
                "POST /v1/aggregators/{}/settlements/report-exports HTTP/1.1\r\nHost: x\r\n{KEY_HEADER}: {}\r\n{order}\r\n0\r\n\r\n",
                mock.aggregator, mock.key
            )
            .as_bytes(),
        );
        let (answer, end) = read_until_closed(&mut s, Duration::from_secs(3));
        let closed = end.closed();
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with("HTTP/1.1 400"), "{text}");
        assert!(text.contains(r#""code":"error.bad_request""#), "{text}");
        assert!(text.contains("Transfer-Encoding"), "{text}");
        assert!(closed);
    }
    assert_serving(&mock, "after");
}

/// A body over 1 MiB is refused before it is read: the answer comes at
/// once, though the body never does.
#[test]
fn an_oversized_body_is_refused_unread() {
    let mock = Process::start(&[], None);
    let mut s = open_with(
        mock.addr,
        format!(
            "POST /v1/aggregators/{}/settlements/report-exports HTTP/1.1\r\nHost: x\r\n{KEY_HEADER}: {}\r\nContent-Length: {}\r\n\r\n",
            mock.aggregator,
            mock.key,
            2 * 1024 * 1024
        )
        .as_bytes(),
    );
    let started = Instant::now();
    let (answer, _) = read_until_closed(&mut s, Duration::from_secs(3));
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 400"), "{text}");
    assert!(text.contains("larger than 1048576 bytes"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

/// At the connection cap: idle connections are closed to make room for a
/// newcomer; when every connection is busy, the newcomer gets 503 with
/// `Retry-After` in the envelope form, cleanly.
#[test]
fn the_connection_cap_sheds_idle_connections_and_refuses_cleanly() {
    let mock = Process::start(&["--max-connections", "20", "--body-timeout", "5"], None);
    let idle: Vec<TcpStream> = (0..60)
        .filter_map(|_| TcpStream::connect_timeout(&mock.addr, Duration::from_secs(2)).ok())
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    for round in 0..5 {
        assert_serving(&mock, &format!("with 60 idle connections, round {round}"));
    }
    drop(idle);
    std::thread::sleep(Duration::from_millis(300));
    // Twenty busy connections: each is in the middle of a request.
    let busy_head = format!(
        "POST /v1/aggregators/{}/settlements/report-exports HTTP/1.1\r\nHost: x\r\n{KEY_HEADER}: {}\r\nContent-Length: 100\r\n\r\n",
        mock.aggregator, mock.key
    );
    let busy: Vec<TcpStream> = (0..20)
        .map(|_| open_with(mock.addr, busy_head.as_bytes()))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let mut newcomer = open_with(
        mock.addr,
        format!(
            "GET /v1/aggregators/{}/ledger/accounts HTTP/1.1\r\nHost: x\r\n{KEY_HEADER}: {}\r\n\r\n",
            mock.aggregator, mock.key
        )
        .as_bytes(),
    );
    let (answer, end) = read_until_closed(&mut newcomer, Duration::from_secs(3));
    let closed = end.closed();
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 503"), "{text}");
    assert!(
        text.to_ascii_lowercase().contains("retry-after: 1"),
        "{text}"
    );
    assert!(text.contains("error.internal_server_error"), "{text}");
    assert!(closed);
    drop(busy);
    std::thread::sleep(Duration::from_millis(300));
    assert_serving(&mock, "after");
}
