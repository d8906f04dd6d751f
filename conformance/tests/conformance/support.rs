//! Running the harness in-process against mocks, and reading its reports.

use aggpay_conformance::{Args, run};
use aggpay_mock::MockServer;
use aggpay_testkit::{RawServer, respond, silence};
use clap::Parser;
use serde_json::Value;

/// Runs the harness in-process; returns (exit code, stdout, stderr).
pub fn harness(args: &[&str]) -> (u8, String, String) {
    let mut argv = vec!["aggpay-conformance"];
    argv.extend_from_slice(args);
    let args = Args::try_parse_from(argv).unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run(&args, &mut out, &mut err);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

/// The flags that point the harness at `server`, with every input, a
/// fixed seed and the JSON report.
pub fn against(server: &MockServer) -> Vec<String> {
    let mut v = aggpay_conformance::mock_arguments(server);
    v.extend(["--format", "json", "--cases", "12", "--seed", "42"].map(str::to_owned));
    v
}

/// Replaces the value of `flag` in `args`.
pub fn set(args: &mut [String], flag: &str, value: &str) {
    let i = args.iter().position(|a| a == flag).unwrap();
    args[i + 1] = value.to_owned();
}

/// Runs against `server` with `extra` flags; the exit code and the JSON
/// report.
pub fn json_run(server: &MockServer, extra: &[&str]) -> (u8, Value) {
    let mut args = against(server);
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = harness(&refs);
    let report: Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}\n{err}"));
    (code, report)
}

/// A rule's entry in a JSON report.
pub fn rule<'r>(report: &'r Value, id: &str) -> &'r Value {
    report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("{id} is not in the report"))
}

/// A rule's status in a JSON report, or `absent`.
pub fn status_of<'r>(report: &'r Value, id: &str) -> &'r str {
    report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .map_or("absent", |r| r["status"].as_str().unwrap())
}

/// The ids of the rules with `status`.
pub fn with_status<'r>(report: &'r Value, status: &str) -> Vec<&'r str> {
    report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == status)
        .map(|r| r["id"].as_str().unwrap())
        .collect()
}

/// A hand-written server answering each request target with
/// `answer`'s (status, body), or with silence for `None`.
pub fn hand_server(answer: fn(&str) -> Option<(u16, String)>) -> RawServer {
    RawServer::start(move |request, out| match answer(&request.target) {
        Some((status, body)) => respond(out, status, &body),
        None => silence(out),
    })
}

/// The access keys of `server`'s aggregator, read from its key list.
pub fn keys(server: &MockServer) -> Vec<Value> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let url = format!(
        "{}/v1/aggregators/{}/keys?limit=100",
        server.url(),
        server.aggregator_id()
    );
    let body: Value = serde_json::from_str(
        &agent
            .get(url)
            .header(
                aggpay_internal::syntax::KEY_HEADER,
                server.secret_key().expose(),
            )
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap(),
    )
    .unwrap();
    body["data"]["keys"].as_array().unwrap().clone()
}

/// The harness's arguments for a run beside others on every core: few
/// requests in flight. On loopback the cores, not the round trips, are
/// the limit, and 16 requests in flight per run cost a third more CPU in
/// thread switches than 2 (the checks are the same at any `--jobs`).
pub const BESIDE_OTHERS: [&str; 2] = ["--jobs", "2"];

/// `f` of every item, on `per_core` threads per core, each thread taking
/// the next item as it is free (runs differ in length); the results in
/// the items' order. More than one per core where runs mostly wait (the
/// retries' backoff through chaos).
pub fn on_every_core<T: Sync, R: Send>(
    per_core: usize,
    items: &[T],
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let threads = (std::thread::available_parallelism().map_or(2, usize::from) * per_core)
        .clamp(1, items.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(item) = items.get(i) else { return };
                    let r = f(item);
                    results.lock().unwrap()[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(Option::unwrap)
        .collect()
}
