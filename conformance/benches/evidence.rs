//! `just bench`: the figures of BENCHMARKS.md. Prints a table and writes
//! `target/bench.json`, a flat object of `name: number`.
//!
//! Every comparison runs both sides in this one process, interleaved, and
//! reports the median of per-round ratios, so machine noise cancels out.
//! Nothing here asserts a time: targets are printed beside the figures.

use std::io::Write;
use std::process::Command;
use std::time::{Duration, Instant};

use aggpay::{BatchQuery, Client, Direction, Transaction, TransactionQuery};
use aggpay_mock::{MockConfig, MockServer};
use aggpay_testkit::threads_cpu_seconds;
use serde_json::Value;

use aggpay_internal::json::from_body;
use aggpay_internal::syntax::KEY_HEADER;

/// The typed shape of a transaction page, as the client decodes it.
#[derive(serde::Deserialize)]
struct TransactionPage {
    data: PageData,
}

#[derive(serde::Deserialize)]
struct PageData {
    transactions: Vec<Transaction>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        f64::NAN
    } else {
        v[v.len() / 2]
    }
}

fn client(server: &MockServer) -> Client {
    Client::builder(
        server.url(),
        server.aggregator_id().clone(),
        server.secret_key(),
    )
    .build()
    .unwrap_or_else(|e| panic!("{e}"))
}

/// A raw agent; `timed` gives it the client's default timeouts (10 s
/// connect, 30 s per call), so that both sides pay for the same timers.
fn raw_agent(timed: bool) -> ureq::Agent {
    let config = ureq::Agent::config_builder().http_status_as_error(false);
    let config = if timed {
        config
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_global(Some(Duration::from_secs(30)))
    } else {
        config
    };
    config.build().into()
}

fn agent() -> ureq::Agent {
    raw_agent(false)
}

/// Typed client call vs raw ureq + `Value`, same request, keep-alive.
fn client_overhead(server: &MockServer, timed_baseline: bool) -> f64 {
    let client = client(server);
    let agent = raw_agent(timed_baseline);
    let url = format!(
        "{}/v1/aggregators/{}/settlements/batches",
        server.url(),
        server.aggregator_id()
    );
    let key = server.secret_key();
    let typed = || {
        let t = Instant::now();
        let page = client
            .list_settlement_batches(&BatchQuery::new().limit(100))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(page.items.len(), 100);
        t.elapsed()
    };
    let raw = || {
        let t = Instant::now();
        let mut r = agent
            .get(&url)
            .query("limit", "100")
            .header(KEY_HEADER, key.expose())
            .call()
            .unwrap_or_else(|e| panic!("{e}"));
        let body = r.body_mut().read_to_vec().unwrap_or_else(|e| panic!("{e}"));
        let v: Value = serde_json::from_slice(&body).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(v["data"]["batches"].as_array().map(Vec::len), Some(100));
        t.elapsed()
    };
    for _ in 0..30 {
        typed();
        raw();
    }
    let mut ratios = Vec::new();
    for round in 0..400 {
        let (a, b) = if round % 2 == 0 {
            (typed(), raw())
        } else {
            let b = raw();
            (typed(), b)
        };
        ratios.push(a.as_secs_f64() / b.as_secs_f64());
    }
    median(ratios)
}

/// Typed decode vs `Value` decode of the same 100-transaction page.
fn decode(server: &MockServer) -> Decode {
    let batch = big_batch(server);
    let agent = agent();
    let url = format!(
        "{}/v1/aggregators/{}/settlements/batches/{batch}/transactions",
        server.url(),
        server.aggregator_id()
    );
    let mut r = agent
        .get(&url)
        .query("limit", "100")
        .header(KEY_HEADER, server.secret_key().expose())
        .call()
        .unwrap_or_else(|e| panic!("{e}"));
    let bytes = r.body_mut().read_to_vec().unwrap_or_else(|e| panic!("{e}"));
    const REPS: u32 = 20;
    // The client's read of a body (`aggpay_internal::json::from_body`:
    // UTF-8 checked once, then parsed as text).
    let typed = || {
        let t = Instant::now();
        for _ in 0..REPS {
            let page: TransactionPage = from_body(&bytes).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(page.data.transactions.len(), 100);
        }
        t.elapsed()
    };
    // What a program without the client's models does with the bytes.
    let value = || {
        let t = Instant::now();
        for _ in 0..REPS {
            let v: Value = serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{e}"));
            assert!(v["data"]["transactions"].is_array());
        }
        t.elapsed()
    };
    // The same, read as the client reads: what the models alone cost.
    let value_same_read = || {
        let t = Instant::now();
        for _ in 0..REPS {
            let v: Value = from_body(&bytes).unwrap_or_else(|e| panic!("{e}"));
            assert!(v["data"]["transactions"].is_array());
        }
        t.elapsed()
    };
    let (mut ratios, mut same_read, mut typed_times) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..200 {
        let (a, b, c) = if round % 2 == 0 {
            (typed(), value(), value_same_read())
        } else {
            let c = value_same_read();
            let b = value();
            (typed(), b, c)
        };
        ratios.push(a.as_secs_f64() / b.as_secs_f64());
        same_read.push(a.as_secs_f64() / c.as_secs_f64());
        typed_times.push(a.as_secs_f64());
    }
    let mb_per_s = (bytes.len() as f64 * f64::from(REPS)) / median(typed_times) / 1e6;
    Decode {
        ratio: median(ratios),
        ratio_same_read: median(same_read),
        mb_per_s,
    }
}

/// What `decode` measures.
struct Decode {
    /// The client's typed read against `serde_json::from_slice::<Value>`.
    ratio: f64,
    /// The same against a `Value` read as the client reads a body.
    ratio_same_read: f64,
    /// The typed read's throughput.
    mb_per_s: f64,
}

/// The batch that holds `large_batch_transactions`.
fn big_batch(server: &MockServer) -> String {
    server
        .info()
        .large_batch
        .map(|t| t.to_string())
        .unwrap_or_default()
}

fn big_mock() -> MockServer {
    MockServer::start(
        MockConfig::new()
            .batches(8)
            .large_batch_transactions(1_000_000),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Latency of the last page of the big batch over the first.
fn page_cost(server: &MockServer) -> f64 {
    let client = client(server);
    let batch = aggpay::BatchToken::parse(big_batch(server)).unwrap_or_else(|e| panic!("{e}"));
    // The cursor before the last 100 rows: the 101st id from the top.
    let top = client
        .list_batch_transactions(&batch, &TransactionQuery::new().limit(100))
        .unwrap_or_else(|e| panic!("{e}"));
    let below = client
        .list_batch_transactions(
            &batch,
            &TransactionQuery::new()
                .limit(1)
                .cursor(top.next_cursor.clone().unwrap_or_default()),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let cursor = below.items[0].id.to_string();
    let fetch = |q: TransactionQuery| {
        let t = Instant::now();
        let page = client
            .list_batch_transactions(&batch, &q)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(page.items.len(), 100);
        t.elapsed()
    };
    let first = || fetch(TransactionQuery::new().limit(100).direction(Direction::Asc));
    let last = || {
        fetch(
            TransactionQuery::new()
                .limit(100)
                .direction(Direction::Asc)
                .cursor(cursor.clone()),
        )
    };
    let mut ratios = Vec::new();
    for round in 0..300 {
        let (l, f) = if round % 2 == 0 {
            (last(), first())
        } else {
            let f = first();
            (last(), f)
        };
        ratios.push(l.as_secs_f64() / f.as_secs_f64());
    }
    median(ratios)
}

/// The tiny_http mock's throughput under the same wrk command (`wrk -t2
/// -c32 -d5s`, batch list, default page), measured on this machine before
/// the move to hyper and kept in BENCHMARKS.md: the "before" of
/// `mock_requests_per_s`.
const TINY_HTTP_REQUESTS_PER_S: f64 = 22_400.0;

/// One keep-alive HTTP/1.1 connection that sends a request and reads its
/// answer (Content-Length framed).
struct Conn {
    stream: std::net::TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    fn new(addr: std::net::SocketAddr) -> Self {
        let stream = std::net::TcpStream::connect(addr).unwrap_or_else(|e| panic!("{e}"));
        stream.set_nodelay(true).unwrap_or_else(|e| panic!("{e}"));
        Self {
            stream,
            buf: Vec::with_capacity(64 * 1024),
        }
    }

    /// Reads one whole answer; its status.
    fn read_answer(&mut self) -> u16 {
        use std::io::Read;
        let mut chunk = [0u8; 64 * 1024];
        loop {
            if let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&self.buf[..end]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length: "))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                let total = end + 4 + length;
                if self.buf.len() >= total {
                    let status = head[9..12].parse().unwrap_or(0);
                    self.buf.drain(..total);
                    return status;
                }
            }
            let n = self
                .stream
                .read(&mut chunk)
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(n > 0, "the server closed a keep-alive connection");
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

/// Requests per second under wrk's load: 2 threads, 32 keep-alive
/// connections each with a request always in flight, for 5 s, on the
/// batch list (default page). Like wrk, the load runs beside the server
/// on the same cores.
fn mock_rps(server: &MockServer) -> f64 {
    use std::io::Write;
    let request = format!(
        "GET /v1/aggregators/{}/settlements/batches HTTP/1.1\r\nHost: 127.0.0.1\r\n{KEY_HEADER}: {}\r\n\r\n",
        server.aggregator_id(),
        server.secret_key().expose()
    );
    let window = Duration::from_secs(5);
    let started = Instant::now();
    let total: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let request = request.as_bytes();
                s.spawn(move || {
                    let mut conns: Vec<Conn> = (0..16).map(|_| Conn::new(server.addr())).collect();
                    for c in &mut conns {
                        c.stream
                            .write_all(request)
                            .unwrap_or_else(|e| panic!("{e}"));
                    }
                    let mut n = 0u64;
                    while started.elapsed() < window {
                        for c in &mut conns {
                            assert_eq!(c.read_answer(), 200);
                            n += 1;
                            c.stream
                                .write_all(request)
                                .unwrap_or_else(|e| panic!("{e}"));
                        }
                    }
                    for c in &mut conns {
                        c.read_answer();
                    }
                    n
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0)).sum()
    });
    total as f64 / started.elapsed().as_secs_f64()
}

/// The same with the real wrk, when it is installed (`apt install wrk`).
fn mock_rps_wrk(server: &MockServer) -> Option<f64> {
    let url = format!(
        "{}/v1/aggregators/{}/settlements/batches",
        server.url(),
        server.aggregator_id()
    );
    let out = Command::new("wrk")
        .args(["-t2", "-c32", "-d5s", "-H"])
        .arg(format!("{KEY_HEADER}: {}", server.secret_key().expose()))
        .arg(url)
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The default harness run against the embedded mock.
fn conformance_seconds() -> f64 {
    use clap::Parser;
    let args =
        aggpay_conformance::Args::try_parse_from(["aggpay-conformance", "--mock", "--seed", "1"])
            .unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let code = aggpay_conformance::run(&args, &mut std::io::sink(), &mut std::io::sink());
    assert_eq!(code, 0, "the default run must pass");
    started.elapsed().as_secs_f64()
}

/// The harness's arguments for a run against `server` with every input
/// given and writes allowed (as against the embedded mock), JSON report.
fn remote_args(server: &MockServer, seed: u64) -> aggpay_conformance::Args {
    use clap::Parser;
    let mut argv = vec!["aggpay-conformance".to_owned()];
    argv.extend(aggpay_conformance::mock_arguments(server));
    argv.extend(["--format", "json", "--seed", &seed.to_string()].map(str::to_owned));
    aggpay_conformance::Args::try_parse_from(argv).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs the harness in-process: its exit code, JSON report and time.
fn run_harness(args: &aggpay_conformance::Args) -> (u8, Value, f64) {
    let mut out = Vec::new();
    let started = Instant::now();
    let code = aggpay_conformance::run(args, &mut out, &mut std::io::sink());
    let seconds = started.elapsed().as_secs_f64();
    let report = serde_json::from_slice(&out).unwrap_or(Value::Null);
    (code, report, seconds)
}

/// The default run, every input given and writes allowed, against a
/// mock `ms` away: each answer is delayed by `ms` (50: a nearby staging's
/// round trip; 200: one on another continent).
fn conformance_remote_seconds(ms: u64) -> f64 {
    let server = MockServer::start(
        MockConfig::new().latency(aggpay_mock::Latency::fixed(Duration::from_millis(ms))),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (code, _, seconds) = run_harness(&remote_args(&server, 1));
    assert_eq!(code, 0, "the remote run must pass");
    seconds
}

/// Required-rule failures summed over 10 runs against the faithful mock
/// through a flaky network: 5% 503, 5% 429 (Retry-After 1 s), 2% resets,
/// 5 to 60 ms of latency. Every one would be a false failure. Also the
/// rules left inconclusive, and the retries.
fn conformance_chaos() -> (f64, f64, f64) {
    let (mut failures, mut inconclusive, mut retries) = (0.0, 0.0, 0.0);
    for seed in 1..=10 {
        let chaos: aggpay_mock::Chaos = "503=0.05,429=0.05,reset=0.02"
            .parse()
            .unwrap_or_else(|e| panic!("{e}"));
        let latency: aggpay_mock::Latency = "5..60".parse().unwrap_or_else(|e| panic!("{e}"));
        let server = MockServer::start(MockConfig::new().seed(seed).chaos(chaos).latency(latency))
            .unwrap_or_else(|e| panic!("{e}"));
        let (_, report, _) = run_harness(&remote_args(&server, seed));
        let summary = &report["summary"];
        failures += summary["required_failed"].as_f64().unwrap_or(f64::NAN);
        inconclusive += summary["required_inconclusive"]
            .as_f64()
            .unwrap_or(f64::NAN);
        retries += summary["retries"].as_f64().unwrap_or(f64::NAN);
    }
    (failures, inconclusive, retries)
}

/// Requests of the default run against a mock with a 1,000,000-row
/// batch, and its time: large lists are read in windows, never walked.
fn conformance_1m() -> (f64, f64) {
    let server = MockServer::start(MockConfig::new().large_batch_transactions(1_000_000))
        .unwrap_or_else(|e| panic!("{e}"));
    let (code, report, seconds) = run_harness(&remote_args(&server, 1));
    assert_eq!(code, 0, "the run against a 1M-row batch must pass");
    (
        report["summary"]["requests"].as_f64().unwrap_or(f64::NAN),
        seconds,
    )
}

/// Distinct crates in `cargo tree -p aggpay -e normal`, aggpay included.
fn client_deps() -> f64 {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "tree",
            "-p",
            "aggpay",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .unwrap_or_else(|e| panic!("cargo tree: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    let crates: std::collections::BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| !n.is_empty())
        .collect();
    crates.len() as f64
}

/// Runs in a child process so that its peak RSS is the walk's own.
fn walk_child() {
    let server = big_mock();
    let client = client(&server);
    let batch = aggpay::BatchToken::parse(big_batch(&server)).unwrap_or_else(|e| panic!("{e}"));
    let mock_cpu = threads_cpu_seconds("aggpay-mock").unwrap_or(f64::NAN);
    let started = Instant::now();
    let mut n = 0u64;
    let mut net = 0i64;
    // The walk's own page size: no limit set, as a user would write it.
    let mut walk =
        client.batch_transactions(&batch, &TransactionQuery::new().direction(Direction::Asc));
    for t in walk.by_ref() {
        let t = t.unwrap_or_else(|e| panic!("{e}"));
        net = net.wrapping_add(t.net_amount.get());
        n += 1;
    }
    let seconds = started.elapsed().as_secs_f64();
    let mock_cpu = threads_cpu_seconds("aggpay-mock").unwrap_or(f64::NAN) - mock_cpu;
    let pages = walk.pages_fetched();
    assert_eq!(n, 1_000_000, "walked {n} rows (net checksum {net})");
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm_kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN);
    println!(
        "{{\"seconds\": {seconds}, \"rss_mb\": {}, \"pages\": {pages}, \"mock_page_cpu_us\": {}}}",
        hwm_kb / 1024.0,
        mock_cpu / pages as f64 * 1e6
    );
}

fn walk() -> (f64, f64, f64, f64) {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new(exe)
        .arg("--walk-child")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "walk child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"));
    (
        v["seconds"].as_f64().unwrap_or(f64::NAN),
        v["rss_mb"].as_f64().unwrap_or(f64::NAN),
        v["pages"].as_f64().unwrap_or(f64::NAN),
        v["mock_page_cpu_us"].as_f64().unwrap_or(f64::NAN),
    )
}

fn main() {
    if std::env::args().any(|a| a == "--walk-child") {
        walk_child();
        return;
    }
    // `cargo bench --bench evidence -- NAME…` measures only the figures
    // whose names hold one of the words, and keeps the others of
    // `target/bench.json` as they were.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let mut results: Vec<(&str, f64, &str)> = Vec::new();
    let mut step = |name: &'static str, target: &'static str, f: &mut dyn FnMut() -> f64| {
        if !only.is_empty() && !only.iter().any(|w| name.contains(w.as_str())) {
            return;
        }
        eprint!("{name} … ");
        let _ = std::io::stderr().flush();
        let v = f();
        eprintln!("{v:.3}");
        results.push((name, v, target));
    };
    let small = MockServer::start(MockConfig::new()).unwrap_or_else(|e| panic!("{e}"));
    let big = big_mock();
    step("client_overhead_ratio", "<= 1.10", &mut || {
        client_overhead(&small, true)
    });
    step(
        "client_overhead_ratio_untimed_baseline",
        "(info)",
        &mut || client_overhead(&small, false),
    );
    let (mut decode_mb, mut same_read) = (0.0, 0.0);
    step("decode_ratio", "<= 0.35", &mut || {
        let d = decode(&big);
        decode_mb = d.mb_per_s;
        same_read = d.ratio_same_read;
        d.ratio
    });
    step("decode_ratio_same_read", "(info)", &mut || same_read);
    step("decode_mb_per_s", "", &mut || decode_mb);
    let (mut rss, mut pages, mut mock_page) = (0.0, 0.0, 0.0);
    step("walk_1m_seconds", "", &mut || {
        let (s, r, p, m) = walk();
        rss = r;
        pages = p;
        mock_page = m;
        s
    });
    step("walk_1m_pages", "10,000 full pages + 1", &mut || pages);
    step("walk_1m_peak_rss_mb", "< 50", &mut || rss);
    step("mock_page_cpu_us", "(info; 100 transactions)", &mut || {
        mock_page
    });
    step("page_cost_last_over_first", "<= 1.5", &mut || {
        page_cost(&big)
    });
    step("mock_requests_per_s", ">= 2x before", &mut || {
        mock_rps(&small)
    });
    step("mock_requests_per_s_wrk", ">= 2x before", &mut || {
        mock_rps_wrk(&small).unwrap_or(f64::NAN)
    });
    step(
        "mock_requests_per_s_before_tiny_http",
        "(recorded, wrk)",
        &mut || TINY_HTTP_REQUESTS_PER_S,
    );
    step("conformance_default_seconds", "<= 2", &mut || {
        conformance_seconds()
    });
    step(
        "conformance_remote_seconds",
        "<= 4 (50 ms round trip)",
        &mut || conformance_remote_seconds(50),
    );
    step(
        "conformance_remote_200ms_seconds",
        "<= 8 (200 ms round trip)",
        &mut || conformance_remote_seconds(200),
    );
    let (mut unsure, mut retried) = (0.0, 0.0);
    step(
        "conformance_chaos_false_failures",
        "0 (10 runs)",
        &mut || {
            let (failures, inconclusive, retries) = conformance_chaos();
            unsure = inconclusive;
            retried = retries;
            failures
        },
    );
    step(
        "conformance_chaos_inconclusive",
        "(info, 10 runs)",
        &mut || unsure,
    );
    step("conformance_chaos_retries", "(info, 10 runs)", &mut || {
        retried
    });
    let mut seconds_1m = 0.0;
    step("conformance_requests_1m", "bounded", &mut || {
        let (requests, seconds) = conformance_1m();
        seconds_1m = seconds;
        requests
    });
    step("conformance_1m_seconds", "<= 2", &mut || seconds_1m);
    step("client_deps", "light", &mut || client_deps());

    let figures: Vec<aggpay_testkit::bench::Figure> = results
        .into_iter()
        .map(|(name, value, target)| {
            aggpay_testkit::bench::Figure::new(name, value, target, how(name))
        })
        .collect();
    aggpay_testkit::bench::record(&figures);
}

/// How each figure of this bench is measured.
fn how(name: &str) -> &'static str {
    match name {
        "client_overhead_ratio" => {
            "typed `list_settlement_batches` (limit 100) through `aggpay` over the same request with raw `ureq` and `serde_json::Value`, keep-alive, interleaved rounds; the raw agent has the client's default timeouts"
        }
        "client_overhead_ratio_untimed_baseline" => {
            "the same against a raw agent with no timeouts at all (ureq's default)"
        }
        "decode_ratio" => {
            "decoding one 100-transaction page as the client does (UTF-8 checked once, parsed into the typed models) over `serde_json::from_slice::<Value>` on the same bytes"
        }
        "decode_ratio_same_read" => {
            "the same against a `Value` read as the client reads: what the models alone cost"
        }
        "decode_mb_per_s" => "typed decoding throughput of that page",
        "walk_1m_seconds" => {
            "1,000,000 transactions of a mock batch through `Client::batch_transactions` (10,001 pages), every row decoded and validated"
        }
        "walk_1m_pages" => {
            "pages of that walk: an exact multiple of the page ends with one empty page"
        }
        "walk_1m_peak_rss_mb" => "peak RSS (`VmHWM`) of that walk's process, mock included",
        "mock_page_cpu_us" => {
            "the mock's threads' CPU (`schedstat` of the threads named `aggpay-mock`) per 100-row page during that walk"
        }
        "page_cost_last_over_first" => "latency of the last page of that batch over the first",
        "mock_requests_per_s" => {
            "the mock: 2 client threads x 16 keep-alive connections on the batch list (limit 30), in-process"
        }
        "mock_requests_per_s_wrk" => {
            "the same with `wrk -t2 -c32 -d5s` against the release binary (when `wrk` is installed)"
        }
        "mock_requests_per_s_before_tiny_http" => {
            "the mock it replaced, the same `wrk` run: a recorded figure"
        }
        "conformance_default_seconds" => {
            "the default harness run (the model of the server's data, every rule's cases, the families of properties, 16 random sequences) against the embedded mock"
        }
        "conformance_remote_seconds" => {
            "the same run, every input given, against a mock that delays each answer by 50 ms"
        }
        "conformance_remote_200ms_seconds" => "the same at 200 ms (a staging on another continent)",
        "conformance_chaos_false_failures" => {
            "required-rule failures over 10 runs against the faithful mock through 5% 503, 5% 429, 2% resets and 5-60 ms of latency: each would be a false failure"
        }
        "conformance_chaos_inconclusive" => "required rules left inconclusive in those 10 runs",
        "conformance_chaos_retries" => "requests sent again in those 10 runs",
        "conformance_requests_1m" => {
            "requests of the default run against a mock with a 1,000,000-row batch (read in windows)"
        }
        "conformance_1m_seconds" => "that run's time",
        "client_deps" => "distinct crates in `cargo tree -p aggpay -e normal`; no async runtime",
        _ => "",
    }
}
