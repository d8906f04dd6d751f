//! An HTTP `CONNECT` proxy on loopback that records what it carries.

use std::io::{BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long the proxy listens, and the longest a tunnel is carried.
const LIFETIME: Duration = Duration::from_secs(120);

/// A `CONNECT` proxy: it records each tunnel's target and every byte it
/// carried, so a test can show what a proxy would see.
pub struct ConnectProxy {
    addr: SocketAddr,
    targets: Arc<Mutex<Vec<String>>>,
    carried: Arc<Mutex<Vec<u8>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for ConnectProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectProxy")
            .field("addr", &self.addr)
            .finish()
    }
}

impl ConnectProxy {
    /// Starts the proxy on 127.0.0.1.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let targets = Arc::new(Mutex::new(Vec::new()));
        let carried = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (t, c, s) = (targets.clone(), carried.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let born = Instant::now();
            while !s.load(Ordering::SeqCst) && born.elapsed() < LIFETIME {
                match listener.accept() {
                    Ok((client, _)) => {
                        let (t, c) = (t.clone(), c.clone());
                        std::thread::spawn(move || tunnel(client, &t, &c));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Self {
            addr,
            targets,
            carried,
            stop,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The `CONNECT` targets, in order.
    pub fn targets(&self) -> Vec<String> {
        self.targets
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Every byte the tunnels carried, both ways.
    pub fn carried(&self) -> Vec<u8> {
        self.carried
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Drop for ConnectProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn tunnel(client: TcpStream, targets: &Mutex<Vec<String>>, carried: &Arc<Mutex<Vec<u8>>>) {
    let _ = client.set_nonblocking(false);
    let _ = client.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(match client.try_clone() {
        Ok(c) => c,
        Err(_) => return,
    });
    let Some(request) = crate::raw::read_request(&mut reader) else {
        return;
    };
    let ("CONNECT", target) = (request.method.as_str(), request.target.as_str()) else {
        let _ =
            (&client).write_all(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n");
        return;
    };
    targets
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(target.to_owned());
    let Ok(upstream) = TcpStream::connect(target) else {
        let _ = (&client).write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
        return;
    };
    let _ = upstream.set_read_timeout(Some(Duration::from_secs(10)));
    if (&client)
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .is_err()
    {
        return;
    }
    let (Ok(up_read), Ok(client_write)) = (upstream.try_clone(), client.try_clone()) else {
        return;
    };
    let carried_back = carried.clone();
    let back = std::thread::spawn(move || pipe(up_read, client_write, &carried_back));
    // The reader may hold bytes read past the head: pipe from it.
    pipe(reader, upstream, carried);
    let _ = back.join();
}

/// Copies until either side closes or goes quiet for the read timeout.
fn pipe(mut from: impl Read, mut to: TcpStream, carried: &Mutex<Vec<u8>>) {
    let mut buf = [0u8; 8192];
    let began = Instant::now();
    loop {
        let n = match from.read(&mut buf) {
            Ok(n) => n,
            // A read with a timeout is never restarted by the kernel: EINTR
            // is not the end of the stream.
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted && began.elapsed() < LIFETIME => {
                continue;
            }
            Err(_) => break,
        };
        if n == 0 || to.write_all(&buf[..n]).is_err() {
            break;
        }
        carried
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(&buf[..n]);
    }
    let _ = to.shutdown(std::net::Shutdown::Write);
}
