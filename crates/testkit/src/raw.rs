//! A loopback HTTP/1.1 server written by hand, for what no real server
//! does on purpose: hostile bodies, endless answers, silence, a script of
//! answers. One request per connection, a thread per connection.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest a connection thread waits for a read.
const READ_TIMEOUT: Duration = Duration::from_secs(20);
/// Longest the server lives, whatever the test does.
const LIFETIME: Duration = Duration::from_secs(120);

/// A request: its method and target (path and query), its head, its body.
#[derive(Debug, Clone)]
pub struct RawRequest {
    /// `GET`, `PUT`…
    pub method: String,
    /// The request target as sent.
    pub target: String,
    /// The whole head as sent, request line and header lines (each ending
    /// in CRLF), without the empty line.
    pub head: String,
    /// The body (by `Content-Length`; at most 1 MiB is read).
    pub body: Vec<u8>,
}

/// The server: stops accepting when dropped; each connection thread ends
/// when the client hangs up or a read times out.
pub struct RawServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for RawServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawServer")
            .field("addr", &self.addr)
            .finish()
    }
}

impl RawServer {
    /// Starts on 127.0.0.1; `handle` answers each request by writing to
    /// the stream (see [`respond`]).
    pub fn start(handle: impl Fn(&RawRequest, &mut TcpStream) + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let handle = Arc::new(handle);
        let thread = std::thread::spawn(move || {
            let born = Instant::now();
            while !stopped.load(Ordering::SeqCst) && born.elapsed() < LIFETIME {
                let Ok((stream, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                };
                let handle = handle.clone();
                std::thread::spawn(move || {
                    let _ = stream.set_nonblocking(false);
                    let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
                    let Ok(clone) = stream.try_clone() else {
                        return;
                    };
                    let mut reader = BufReader::new(clone);
                    let Some(request) = read_request(&mut reader) else {
                        return;
                    };
                    let mut out = stream;
                    handle(&request, &mut out);
                });
            }
        });
        Self {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads a request, head and body; `None` when the client sent nothing.
pub(crate) fn read_request(reader: &mut impl BufRead) -> Option<RawRequest> {
    let mut head = String::new();
    if reader.read_line(&mut head).unwrap_or(0) == 0 {
        return None;
    }
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
    let mut parts = head.split_whitespace();
    Some(RawRequest {
        method: parts.next().unwrap_or("").to_owned(),
        target: parts.next().unwrap_or("").to_owned(),
        head: head.clone(),
        body,
    })
}

/// What a [`Scripted`] server does with one request.
#[derive(Debug, Clone)]
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

/// A JSON answer.
pub fn json(status: u16, body: &str) -> Act {
    Act::Reply(
        status,
        vec![("Content-Type", "application/json".into())],
        body.as_bytes().to_vec(),
    )
}

/// A server that plays a script, one act per request in the order they
/// come (the last act repeats), and records every request: head, then
/// body.
#[derive(Debug)]
pub struct Scripted {
    server: RawServer,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Scripted {
    /// Serves `script` on 127.0.0.1.
    pub fn start(script: Vec<Act>) -> Self {
        assert!(!script.is_empty(), "a script of at least one act");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        let next = AtomicUsize::new(0);
        let server = RawServer::start(move |request, out| {
            let n = next.fetch_add(1, Ordering::SeqCst);
            let act = script.get(n).or(script.last()).cloned();
            seen.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(format!(
                    "{}\r\n{}",
                    request.head,
                    String::from_utf8_lossy(&request.body)
                ));
            if let Some(act) = act {
                play(act, out);
            }
        });
        Self { server, requests }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// Every request received: head, then body.
    pub fn requests(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// Writes what `act` says, and closes.
fn play(act: Act, out: &mut TcpStream) {
    match act {
        Act::Reply(status, headers, body) => {
            let mut head = format!(
                "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            let _ = out.write_all(head.as_bytes());
            let _ = out.write_all(&body);
        }
        Act::Stall(d) => std::thread::sleep(d),
        Act::Reset => {}
        Act::Raw(bytes) => {
            let _ = out.write_all(&bytes);
        }
        Act::Truncate(status, body, claimed) => {
            let head = format!(
                "HTTP/1.1 {status} X\r\nContent-Length: {claimed}\r\nConnection: close\r\n\r\n"
            );
            let _ = out.write_all(head.as_bytes());
            let _ = out.write_all(&body);
        }
    }
    let _ = out.flush();
}

/// Writes a whole JSON response with Content-Length and Date, and asks
/// the client to close.
pub fn respond(out: &mut TcpStream, status: u16, body: &str) {
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nDate: Wed, 25 Nov 2026 10:00:00 GMT\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(body.as_bytes());
}

/// Says nothing until the client gives up (or the read timeout).
pub fn silence(out: &mut TcpStream) {
    let mut buf = [0u8; 64];
    // EINTR (a read with a timeout is never restarted) is not the client
    // giving up.
    let began = std::time::Instant::now();
    while let Err(e) = out.read(&mut buf) {
        if e.kind() != std::io::ErrorKind::Interrupted || began.elapsed() > READ_TIMEOUT {
            break;
        }
    }
}
