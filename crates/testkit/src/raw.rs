//! A loopback HTTP/1.1 server written by hand, for what no real server
//! does on purpose: hostile bodies, endless answers, silence. One request
//! per connection, a thread per connection.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest a connection thread waits for a read.
const READ_TIMEOUT: Duration = Duration::from_secs(20);
/// Longest the server lives, whatever the test does.
const LIFETIME: Duration = Duration::from_secs(120);

/// The head of a request: its method and target (path and query).
#[derive(Debug, Clone)]
pub struct RawRequest {
    /// `GET`, `PUT`…
    pub method: String,
    /// The request target as sent.
    pub target: String,
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
                    let Some(line) = read_head(&mut reader) else {
                        return;
                    };
                    let mut parts = line.split_whitespace();
                    let request = RawRequest {
                        method: parts.next().unwrap_or("").to_owned(),
                        target: parts.next().unwrap_or("").to_owned(),
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

/// Reads a request head; returns its first line, or `None` when the
/// client sent nothing.
pub fn read_head(reader: &mut impl BufRead) -> Option<String> {
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return None;
    }
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
            break;
        }
    }
    Some(line)
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
    let _ = out.read(&mut buf);
}
