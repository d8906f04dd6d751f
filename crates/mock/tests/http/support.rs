//! Test support: the mock over real HTTP, judged with ureq and
//! `serde_json::Value` only, independent of the client's model types.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

pub use aggpay_internal::syntax::KEY_HEADER;
use aggpay_mock::{MockConfig, MockServer};
use serde_json::{Value, json};

pub struct Api {
    pub server: MockServer,
    pub agent: ureq::Agent,
    pub key: String,
}

pub struct Response {
    pub status: u16,
    pub body: Value,
    pub content_length: Option<String>,
    pub raw_len: usize,
    pub date: bool,
    pub content_type: Option<String>,
    pub connection: Option<String>,
}

impl Response {
    pub fn data(&self) -> &Value {
        assert_eq!(self.status, 200, "{}", self.body);
        assert_eq!(self.body["api_version"], "v1");
        &self.body["data"]
    }

    pub fn assert_bare(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "{}", self.body);
        assert_eq!(self.body["code"], code, "{}", self.body);
        assert!(
            self.body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{}",
            self.body
        );
        assert!(
            self.body.get("api_version").is_none(),
            "bare form: {}",
            self.body
        );
    }

    pub fn assert_envelope(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "{}", self.body);
        assert_eq!(self.body["api_version"], "v1");
        assert_eq!(self.body["error"]["code"], code, "{}", self.body);
        assert!(self.body["error"]["message"].is_string());
    }
}

impl Api {
    pub fn start(config: MockConfig) -> Self {
        let server = MockServer::start(config).unwrap();
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(20)))
            // ureq 3.5 counts every byte read with an interim answer
            // (`early-hints`) against the head's limit: a large body that
            // came in the same read would fail as a large head.
            .max_response_header_size(4 * 1024 * 1024)
            .build()
            .into();
        let key = server.secret_key().expose().to_owned();
        Self { server, agent, key }
    }

    pub fn new() -> Self {
        Self::start(MockConfig::new())
    }

    pub fn url(&self, path: &str) -> String {
        format!(
            "{}/v1/aggregators/{}{path}",
            self.server.url(),
            self.server.aggregator_id()
        )
    }

    pub fn finish(mut response: ureq::http::Response<ureq::Body>) -> Response {
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let content_length = header("content-length");
        let content_type = header("content-type");
        let date = header("date").is_some();
        let connection = header("connection");
        // A legal choice may code the body (coded-bodies): read as a
        // client that takes any coding must.
        let coding = header("content-encoding");
        let bytes = response.body_mut().read_to_vec().unwrap();
        let bytes = aggpay_internal::coding::decode(coding.as_deref(), bytes, u64::MAX).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let body = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("status {status}: body is not JSON ({e}): {text}"));
        Response {
            status,
            body,
            content_length,
            raw_len: text.len(),
            date,
            content_type,
            connection,
        }
    }

    pub fn get_with(&self, path: &str, query: &[(&str, &str)], key: Option<&str>) -> Response {
        let mut req = self.agent.get(self.url(path));
        for (k, v) in query {
            req = req.query(*k, *v);
        }
        if let Some(key) = key {
            req = req.header(KEY_HEADER, key);
        }
        Self::finish(req.call().unwrap())
    }

    pub fn get(&self, path: &str, query: &[(&str, &str)]) -> Response {
        self.get_with(path, query, Some(&self.key))
    }

    pub fn get_raw(&self, path_and_query: &str) -> Response {
        let url = format!("{}{path_and_query}", self.server.url());
        Self::finish(
            self.agent
                .get(url)
                .header(KEY_HEADER, &self.key)
                .call()
                .unwrap(),
        )
    }

    pub fn put(&self, path: &str, key: &str) -> Response {
        Self::finish(
            self.agent
                .put(self.url(path))
                .header(KEY_HEADER, key)
                .send_empty()
                .unwrap(),
        )
    }

    pub fn post(&self, path: &str, body: &str, key: &str) -> Response {
        let req = self
            .agent
            .post(self.url(path))
            .header(KEY_HEADER, key)
            .header("Content-Type", "application/json");
        Self::finish(req.send(body).unwrap())
    }
}

pub fn s<'a>(v: &'a Value, field: &str) -> &'a str {
    v[field]
        .as_str()
        .unwrap_or_else(|| panic!("{field} not a string in {v}"))
}

pub fn numeric(v: &Value, field: &str) -> u64 {
    s(v, field)
        .parse()
        .unwrap_or_else(|_| panic!("{field} not numeric in {v}"))
}

/// One operation with inputs that resolve: method, path, query.
pub type Operation = (&'static str, String, Vec<(&'static str, String)>);

/// Every operation of API.md.
pub fn operations(api: &Api) -> Vec<Operation> {
    let info = api.server.info();
    let batch = s(
        &api.get("/settlements/batches", &[("status", "2")]).data()["batches"][0],
        "token",
    )
    .to_owned();
    vec![
        ("GET", String::new(), vec![]),
        ("GET", "/keys".into(), vec![]),
        (
            "PUT",
            format!("/keys/{}/rotate", info.access_key_id.unwrap()),
            vec![],
        ),
        ("GET", "/merchants".into(), vec![]),
        ("GET", "/rail-merchants".into(), vec![]),
        (
            "GET",
            format!("/rail-merchants/{}", info.rail_merchant_id),
            vec![],
        ),
        ("GET", "/qrs".into(), vec![]),
        (
            "GET",
            format!("/payments/{}/charges", info.payment_id.unwrap()),
            vec![],
        ),
        ("GET", "/refunds".into(), vec![]),
        ("GET", "/settlements/batches".into(), vec![]),
        (
            "GET",
            format!("/settlements/batches/{batch}/transactions"),
            vec![],
        ),
        ("POST", "/settlements/report-exports".into(), vec![]),
        (
            "GET",
            "/account-info".into(),
            vec![("iban", info.iban.clone())],
        ),
        (
            "GET",
            "/title-fetch/alias".into(),
            vec![
                ("alias_type", "TILL_CODE".into()),
                ("alias_value", info.till_code.clone()),
            ],
        ),
        ("GET", format!("/alias/{}", info.alias_id), vec![]),
        ("GET", "/ledger/accounts".into(), vec![]),
        ("GET", "/webhooks".into(), vec![]),
    ]
}

pub fn call(
    api: &Api,
    method: &str,
    path: &str,
    query: &[(&str, String)],
    key: Option<&str>,
) -> Response {
    let url = api.url(path);
    match method {
        "GET" => {
            let q: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
            api.get_with(path, &q, key)
        }
        "PUT" => {
            let mut req = api.agent.put(url);
            if let Some(k) = key {
                req = req.header(KEY_HEADER, k);
            }
            Api::finish(req.send_empty().unwrap())
        }
        _ => {
            let batch = s(
                &api.get("/settlements/batches", &[]).data()["batches"][0],
                "token",
            )
            .to_owned();
            let mut req = api.agent.post(url);
            if let Some(k) = key {
                req = req.header(KEY_HEADER, k);
            }
            let body = json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_BATCH"});
            Api::finish(req.send(body.to_string()).unwrap())
        }
    }
}

/// Walks a cursor list to its end, bounded; returns the rows.
pub fn walk(
    api: &Api,
    path: &str,
    field: &str,
    extra: &[(&str, &str)],
) -> (Vec<Value>, Vec<usize>, Value) {
    let mut rows = Vec::new();
    let mut sizes = Vec::new();
    let mut cursor = String::new();
    let mut count;
    for _ in 0..10_000 {
        let mut q: Vec<(&str, &str)> = extra.to_vec();
        if !cursor.is_empty() {
            q.push(("cursor", &cursor));
        }
        let answer = api.get(path, &q);
        let data = answer.data();
        let page = data[field].as_array().unwrap().clone();
        count = data["count"].clone();
        sizes.push(page.len());
        let next = s(data, "next_cursor").to_owned();
        if page.is_empty() {
            assert_eq!(next, "", "empty page ends with an empty cursor");
            return (rows, sizes, count);
        }
        assert_eq!(
            next,
            s(page.last().unwrap(), "id"),
            "next_cursor is the last id"
        );
        rows.extend(page);
        assert_ne!(next, cursor, "cursor repeated");
        cursor = next;
    }
    panic!("walk did not end");
}

pub fn assert_ordered(rows: &[Value], ascending: bool) {
    let ids: Vec<u64> = rows.iter().map(|r| numeric(r, "id")).collect();
    let unique: HashSet<u64> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "duplicates");
    assert!(
        ids.windows(2)
            .all(|w| if ascending { w[0] < w[1] } else { w[0] > w[1] }),
        "order {ascending}: {ids:?}"
    );
}

/// Sends raw bytes and reads the whole answer, bounded by timeouts.
pub fn raw_exchange(addr: std::net::SocketAddr, request: &[u8]) -> Option<(u16, Vec<u8>)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    stream
        .set_write_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    stream.write_all(request).ok()?;
    let (out, _) = aggpay_testkit::read_until_closed(&mut stream, Duration::from_secs(10));
    let text = String::from_utf8_lossy(&out);
    let status = text.split(' ').nth(1)?.parse().ok()?;
    let body = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| out[i + 4..].to_vec())?;
    Some((status, body))
}

pub fn assert_documented_error_shape(status: u16, body: &[u8]) {
    if status == 200 {
        return;
    }
    let value: Value = serde_json::from_slice(body)
        .unwrap_or_else(|_| panic!("{status}: not JSON: {}", String::from_utf8_lossy(body)));
    match status {
        401 | 500 => assert!(
            value["error"]["code"].is_string() && value["api_version"] == "v1",
            "{value}"
        ),
        _ => assert!(
            value["code"].is_string() && value["message"].is_string(),
            "{status} {value}"
        ),
    }
}

pub fn s_owned(v: &Value, field: &str) -> String {
    s(v, field).to_owned()
}

/// The mock binary running as its own process (so that its memory is its
/// own), killed when dropped.
pub struct Process {
    child: std::process::Child,
    pub url: String,
    pub addr: std::net::SocketAddr,
    pub aggregator: String,
    pub key: String,
    /// The info file the mock wrote.
    pub info: Value,
    _dir: aggpay_testkit::TempDir,
}

impl Process {
    /// Starts `aggpay-mock` with `args`, under a file limit when given.
    pub fn start(args: &[&str], file_limit: Option<u32>) -> Self {
        let dir = aggpay_testkit::TempDir::new("aggpay-mock-process");
        let info = dir.join("info.json");
        let exe = env!("CARGO_BIN_EXE_aggpay-mock");
        let mut command = match file_limit {
            Some(n) => {
                let mut c = std::process::Command::new("/bin/sh");
                c.args(["-c", &format!(r#"ulimit -n {n}; exec "$0" "$@""#), exe]);
                c
            }
            None => std::process::Command::new(exe),
        };
        command
            .args(["--port", "0", "--info-file", info.to_str().unwrap()])
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        let mut child = command.spawn().unwrap();
        let started = std::time::Instant::now();
        while !info.exists()
            || std::fs::read_to_string(&info)
                .unwrap_or_default()
                .is_empty()
        {
            if let Ok(Some(status)) = child.try_wait() {
                let mut err = String::new();
                let _ = child.stderr.take().unwrap().read_to_string(&mut err);
                panic!("the mock exited with {status}: {err}");
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the mock did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(20));
        let info: Value = serde_json::from_str(&std::fs::read_to_string(&info).unwrap()).unwrap();
        let url = info["base_url"].as_str().unwrap().to_owned();
        let addr = url
            .trim_start_matches("http://")
            .trim_start_matches("https://")
            .parse()
            .unwrap();
        Self {
            child,
            url,
            addr,
            aggregator: info["aggregator_id"].as_str().unwrap().to_owned(),
            key: info["secret_key"].as_str().unwrap().to_owned(),
            info,
            _dir: dir,
        }
    }

    /// A normal request's status, answered within one second (None when
    /// no answer came in time).
    pub fn probe(&self) -> Option<u16> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(1)))
            .build()
            .into();
        let url = format!(
            "{}/v1/aggregators/{}/ledger/accounts",
            self.url, self.aggregator
        );
        let mut answer = agent.get(url).header(KEY_HEADER, &self.key).call().ok()?;
        let status = answer.status().as_u16();
        answer.body_mut().read_to_vec().ok()?;
        Some(status)
    }

    /// Peak resident memory so far, in MiB.
    pub fn peak_mb(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    }

    /// True while the process runs.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A connection that sends `head` and then stays silent, read timeout set.
pub fn open_with(addr: std::net::SocketAddr, head: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    if !head.is_empty() {
        stream.write_all(head).unwrap();
    }
    stream
}

/// One answer as read off the wire by [`RawConn`].
#[derive(Debug)]
pub struct RawAnswer {
    /// The interim (1xx) heads before it, as sent.
    pub interim: Vec<String>,
    /// The final head as sent: status line and field lines, line ends
    /// included.
    pub head: String,
    pub status: u16,
    /// The field lines: name as written, value trimmed.
    pub fields: Vec<(String, String)>,
    /// The body, its framing undone.
    pub body: Vec<u8>,
}

impl RawAnswer {
    /// Every value of the field `name` (case-insensitive).
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.fields
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The first value of the field `name`.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.all(name).first().copied()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {}{}",
                self.head,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// Seconds from now to the answer's (first) `Date`.
    pub fn date_skew(&self) -> f64 {
        date_skew(self.field("date").expect("a Date field"))
    }
}

/// Seconds from now to an HTTP date (IMF-fixdate); panics on another
/// form.
pub fn date_skew(value: &str) -> f64 {
    assert!(
        value.ends_with(" GMT") && value.len() == "Sun, 06 Nov 1994 08:49:37 GMT".len(),
        "not an IMF-fixdate: {value}"
    );
    let at = jiff::fmt::rfc2822::DateTimeParser::new()
        .parse_timestamp(value)
        .unwrap_or_else(|e| panic!("not an HTTP date: {value}: {e}"));
    at.duration_since(jiff::Timestamp::now()).as_secs_f64()
}

/// A raw HTTP/1.x connection to the mock: requests written as bytes,
/// answers read as bytes, every wait bounded.
pub struct RawConn {
    stream: TcpStream,
    buf: Vec<u8>,
    closed: bool,
}

/// How long one answer may take to come.
const RAW_WAIT: Duration = Duration::from_secs(5);

impl RawConn {
    pub fn open(addr: std::net::SocketAddr) -> Self {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        stream
            .set_write_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        Self {
            stream,
            buf: Vec::new(),
            closed: false,
        }
    }

    /// Writes `bytes`; false when the connection would not take them
    /// (closed by the server).
    pub fn send(&mut self, bytes: &[u8]) -> bool {
        self.stream.write_all(bytes).is_ok()
    }

    /// Reads more bytes until `deadline`; false when none came (closed,
    /// reset, or silent).
    fn fill(&mut self, deadline: std::time::Instant) -> bool {
        let mut chunk = [0u8; 16 * 1024];
        while !self.closed && std::time::Instant::now() < deadline {
            match self.stream.read(&mut chunk) {
                Ok(0) => self.closed = true,
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    return true;
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(_) => self.closed = true,
            }
        }
        false
    }

    /// Takes `n` bytes, waiting for them until `deadline`.
    fn take(&mut self, n: usize, deadline: std::time::Instant) -> Option<Vec<u8>> {
        while self.buf.len() < n {
            if !self.fill(deadline) {
                return None;
            }
        }
        Some(self.buf.drain(..n).collect())
    }

    /// Takes a line ending with LF (the LF included).
    fn line(&mut self, deadline: std::time::Instant) -> Option<Vec<u8>> {
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                return Some(self.buf.drain(..=i).collect());
            }
            if !self.fill(deadline) {
                return None;
            }
        }
    }

    /// Takes a head (up to its empty line, CRLF or bare LF).
    fn head(&mut self, deadline: std::time::Instant) -> Option<String> {
        let mut head = Vec::new();
        loop {
            let line = self.line(deadline)?;
            let empty = line == b"\r\n" || line == b"\n";
            head.extend_from_slice(&line);
            if empty {
                return Some(String::from_utf8_lossy(&head).into_owned());
            }
        }
    }

    /// The bytes received and not read as an answer yet, once `enough`
    /// says they are enough (or a few seconds passed).
    pub fn leftover(&mut self, enough: impl Fn(&[u8]) -> bool) -> Vec<u8> {
        let deadline = std::time::Instant::now() + RAW_WAIT;
        while !enough(&self.buf) && self.fill(deadline) {}
        std::mem::take(&mut self.buf)
    }

    /// The next answer, to a request of `method`; `None` when none came
    /// within a few seconds (closed or silent).
    pub fn answer(&mut self, method: &str) -> Option<RawAnswer> {
        self.answer_within(method, RAW_WAIT)
    }

    pub fn answer_within(&mut self, method: &str, within: Duration) -> Option<RawAnswer> {
        let deadline = std::time::Instant::now() + within;
        let mut interim = Vec::new();
        let (head, status) = loop {
            let head = self.head(deadline)?;
            let status: u16 = head.split(' ').nth(1)?.trim().parse().ok()?;
            if (100..200).contains(&status) {
                interim.push(head);
                continue;
            }
            break (head, status);
        };
        let fields: Vec<(String, String)> = head
            .split('\n')
            .skip(1)
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.to_owned(), v.trim().to_owned()))
            .collect();
        let mut answer = RawAnswer {
            interim,
            head,
            status,
            fields,
            body: Vec::new(),
        };
        if method == "HEAD" || matches!(status, 204 | 304) {
            return Some(answer);
        }
        let chunked = answer
            .all("transfer-encoding")
            .iter()
            .any(|v| v.contains("chunked"));
        let length = answer
            .field("content-length")
            .map(|v| v.parse::<usize>().unwrap());
        answer.body = if chunked {
            let mut body = Vec::new();
            loop {
                let line = String::from_utf8(self.line(deadline)?).unwrap();
                let size = usize::from_str_radix(line.trim().split(';').next()?, 16).unwrap();
                if size == 0 {
                    while self.line(deadline)?.len() > 2 {}
                    break body;
                }
                body.extend(self.take(size, deadline)?);
                self.take(2, deadline)?;
            }
        } else if let Some(n) = length {
            self.take(n, deadline)?
        } else {
            while self.fill(deadline) {}
            std::mem::take(&mut self.buf)
        };
        Some(answer)
    }

    /// Whether the server closed the connection (cleanly, without a
    /// byte) within `within`.
    pub fn closed_within(&mut self, within: Duration) -> bool {
        let deadline = std::time::Instant::now() + within;
        while !self.closed && self.buf.is_empty() && std::time::Instant::now() < deadline {
            self.fill(deadline);
        }
        self.closed && self.buf.is_empty()
    }
}

impl Api {
    /// The path of `path` below the aggregator, as a request line names it.
    pub fn path(&self, path: &str) -> String {
        format!("/v1/aggregators/{}{path}", self.server.aggregator_id())
    }

    /// A request's bytes: `method`, the aggregator's `path` (query
    /// included), `version` (`1.1`, `1.0`), the key, `fields` (whole lines)
    /// and `body` as given.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        version: &str,
        fields: &str,
        body: &[u8],
    ) -> Vec<u8> {
        let mut out = format!(
            "{method} {} HTTP/{version}\r\nHost: 127.0.0.1\r\n{KEY_HEADER}: {}\r\n{fields}\r\n",
            self.path(path),
            self.key
        )
        .into_bytes();
        out.extend_from_slice(body);
        out
    }

    /// A GET of `path` in HTTP/1.1 with `fields`.
    pub fn raw_get(&self, path: &str, fields: &str) -> Vec<u8> {
        self.request("GET", path, "1.1", fields, b"")
    }

    /// One request on a connection of its own, and its answer.
    pub fn exchange(&self, method: &str, request: &[u8]) -> RawAnswer {
        let mut conn = RawConn::open(self.server.addr());
        conn.send(request);
        conn.answer(method)
            .unwrap_or_else(|| panic!("no answer to {}", String::from_utf8_lossy(request)))
    }
}
