//! Servers the tests talk to: the mock, and a scripted one.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use aggpay::*;
use aggpay_mock::{MockConfig, MockServer};

pub const KEY: &str = "s3cr3t-key-value";

pub fn client_for(server: &MockServer) -> Client {
    Client::builder(
        server.url(),
        server.aggregator_id().as_str(),
        server.secret_key(),
    )
    .timeout(Duration::from_secs(20))
    .build()
    .unwrap()
}

pub fn mock() -> (MockServer, Client) {
    let server = MockServer::start(MockConfig::new().seed(11)).unwrap();
    let client = client_for(&server);
    (server, client)
}

/// What the scripted server does with one request.
#[derive(Clone)]
pub enum Act {
    /// Answer with status, extra headers and body.
    Reply(u16, Vec<(&'static str, String)>, Vec<u8>),
    /// Send nothing for this long, then close.
    Stall(Duration),
    /// Close the connection without a word.
    Reset,
    /// Send the head and part of a body shorter than its Content-Length.
    Truncate(u16, Vec<u8>, usize),
    /// Send these bytes as the whole answer.
    Raw(Vec<u8>),
}

/// A server that plays a script, one act per connection (the last act
/// repeats), and records every request head and body.
pub struct Scripted {
    pub url: String,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Scripted {
    /// Serves `script`; the thread ends after `max` connections or 30 s
    /// without one.
    pub fn start(script: Vec<Act>, max: usize) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut served = 0;
            let mut idle_since = Instant::now();
            while served < max
                && idle_since.elapsed() < Duration::from_secs(30)
                && !stopped.load(Ordering::SeqCst)
            {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let act = script.get(served).or(script.last()).cloned().unwrap();
                        served += 1;
                        idle_since = Instant::now();
                        serve_one(stream, act, &seen);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Self {
            url,
            requests,
            stop,
            handle: Some(handle),
        }
    }

    /// A client of this server with key [`KEY`], a 5 s timeout and quick
    /// retries; `configure` adjusts it.
    pub fn client(&self, configure: impl FnOnce(ClientBuilder) -> ClientBuilder) -> Client {
        let builder = Client::builder(&self.url, "agg_test", KEY)
            .timeout(Duration::from_secs(5))
            .retry(
                RetryPolicy::builder()
                    .base_delay(Duration::from_millis(5))
                    .max_delay(Duration::from_millis(20))
                    .build(),
            );
        configure(builder).build().unwrap()
    }

    /// Every request received: head, then body.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.handle.take().map(JoinHandle::join);
    }
}

fn serve_one(stream: TcpStream, act: Act, seen: &Arc<Mutex<Vec<String>>>) {
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut head = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        head.push_str(&line);
    }
    let mut body = vec![0; length.min(1 << 20)];
    let _ = reader.read_exact(&mut body);
    if head.is_empty() {
        return;
    }
    head.push_str("\r\n");
    head.push_str(&String::from_utf8_lossy(&body));
    seen.lock().unwrap().push(head);
    let mut stream = stream;
    match act {
        Act::Reply(status, headers, body) => {
            let mut out = format!(
                "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (k, v) in headers {
                out.push_str(&format!("{k}: {v}\r\n"));
            }
            out.push_str("\r\n");
            let _ = stream.write_all(out.as_bytes());
            let _ = stream.write_all(&body);
        }
        Act::Stall(d) => std::thread::sleep(d),
        Act::Reset => {}
        Act::Raw(bytes) => {
            let _ = stream.write_all(&bytes);
        }
        Act::Truncate(status, body, claimed) => {
            let head = format!(
                "HTTP/1.1 {status} X\r\nContent-Length: {claimed}\r\nConnection: close\r\n\r\n"
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    }
    let _ = stream.flush();
}

pub fn json(status: u16, body: &str) -> Act {
    Act::Reply(
        status,
        vec![("Content-Type", "application/json".into())],
        body.as_bytes().to_vec(),
    )
}

pub const LEDGER: &str = r#"{"api_version":"v1","data":{"id":"1","token":"acct_1","account_type":"ACCT_NEW_KIND","account_name":"n","normal_balance":"SIDE_CREDIT","balance":"10","running_balance":"-5","currency":"PKR","vault_token":"lock_1","bank_acct_id":"acc_1","external_partner_id":"","external_aggregator_id":"","external_merchant_id":"","created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-01T00:00:00.5Z","unknown_field":{"x":1}}}"#;

/// A batch token for scripted answers.
pub fn token() -> BatchToken {
    BatchToken::parse("sb_0f8fad5b-d9cb-469f-a165-70867728950e").unwrap()
}
