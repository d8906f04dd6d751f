//! Blocking TLS servers on loopback for tests.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::Identity;

/// A rustls server configuration for `identity` (ring provider).
pub fn server_config(identity: &Identity) -> Arc<rustls::ServerConfig> {
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(identity.cert_pem.as_bytes())
            .collect::<Result<_, _>>()
            .expect("certificate PEM");
    let key = PrivateKeyDer::from_pem_slice(identity.key_pem.as_bytes()).expect("key PEM");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("server identity");
    Arc::new(config)
}

/// An HTTPS server that answers every request with one fixed response,
/// and records the request heads it read (after the handshake).
pub struct TlsServer {
    addr: SocketAddr,
    heads: Arc<Mutex<Vec<String>>>,
    handshakes_failed: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for TlsServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsServer")
            .field("addr", &self.addr)
            .finish()
    }
}

impl TlsServer {
    /// Serves `status` and the JSON `body` on 127.0.0.1 with `identity`.
    pub fn start(identity: &Identity, status: u16, body: &str) -> Self {
        let config = server_config(identity);
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let heads = Arc::new(Mutex::new(Vec::new()));
        let handshakes_failed = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let response = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let (seen, failed, stopped) = (heads.clone(), handshakes_failed.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let born = Instant::now();
            while !stopped.load(Ordering::SeqCst) && born.elapsed() < Duration::from_secs(120) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        // The head is recorded before the answer is sent:
                        // a test that reads the heads as soon as its
                        // request returned sees it.
                        let record = |head: String| {
                            seen.lock().unwrap_or_else(|e| e.into_inner()).push(head)
                        };
                        if serve(stream, config.clone(), response.as_bytes(), record).is_none() {
                            failed.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Self {
            addr,
            heads,
            handshakes_failed,
            stop,
            thread: Some(thread),
        }
    }

    /// `https://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.addr.port())
    }

    /// `https://localhost:PORT`.
    pub fn localhost_url(&self) -> String {
        format!("https://localhost:{}", self.addr.port())
    }

    /// The address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Request heads read after a completed handshake.
    pub fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Connections whose handshake (or request) failed.
    pub fn failed(&self) -> usize {
        self.handshakes_failed.load(Ordering::SeqCst)
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One connection: handshake, read the head and hand it to `record`,
/// answer `response`, close; `None` when the handshake or the request
/// failed.
fn serve(
    stream: TcpStream,
    config: Arc<rustls::ServerConfig>,
    response: &[u8],
    record: impl FnOnce(String),
) -> Option<()> {
    stream.set_nonblocking(false).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    stream
        .set_write_timeout(Some(Duration::from_secs(5)))
        .ok()?;
    let conn = rustls::ServerConnection::new(config).ok()?;
    let mut tls = rustls::StreamOwned::new(conn, stream);
    let mut reader = BufReader::new(&mut tls);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return None,
            Ok(_) if line == "\r\n" => break,
            Ok(_) => head.push_str(&line),
        }
    }
    drop(reader);
    record(head);
    tls.write_all(response).ok()?;
    tls.flush().ok()?;
    tls.conn.send_close_notify();
    let _ = tls.flush();
    Some(())
}
