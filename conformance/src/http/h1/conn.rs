//! Connections to the server under test: plain TCP for `http://`, rustls
//! for `https://` (the bundled roots, or `--ca-cert`'s), every read and
//! write ending by the deadline of the exchange in hand, and the idle ones
//! kept for the next request (RFC 9112 section 9.3: HTTP/1.1 connections
//! persist unless either side says otherwise).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Where requests go: scheme, authority and the address it resolves to.
#[derive(Debug, Clone)]
pub struct Origin {
    /// `host[:port]` as the base URL writes it: the `Host` field.
    pub authority: String,
    host: String,
    addr: SocketAddr,
    tls: Option<Arc<rustls::ClientConfig>>,
}

impl Origin {
    /// The origin of `url` (`http://` or `https://`), resolved once.
    ///
    /// # Errors
    ///
    /// A URL without a scheme, a bad port, a host without an address, a
    /// CA file that cannot be used.
    pub fn of(url: &str, ca_cert: Option<&Path>) -> std::io::Result<Self> {
        let (scheme, rest) = url.split_once("://").ok_or_else(|| other("no scheme"))?;
        let authority = rest.split(['/', '?']).next().unwrap_or(rest).to_owned();
        let tls = scheme.eq_ignore_ascii_case("https");
        let (host, port) = split_authority(&authority, if tls { 443 } else { 80 })?;
        let addr = (host.as_str(), port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| other(format!("{host} has no address")))?;
        let tls = if tls {
            Some(Arc::new(client_config(ca_cert)?))
        } else {
            None
        };
        Ok(Self {
            authority,
            host,
            addr,
            tls,
        })
    }

    /// A new connection, made by `deadline`.
    pub fn connect(&self, deadline: Instant) -> std::io::Result<Conn> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(out_of_time());
        }
        let tcp = TcpStream::connect_timeout(&self.addr, left)?;
        let _ = tcp.set_nodelay(true);
        let bounded = Bounded { tcp, deadline };
        let stream = match &self.tls {
            None => Stream::Plain(bounded),
            Some(config) => {
                let name = rustls::pki_types::ServerName::try_from(self.host.clone())
                    .map_err(|e| other(format!("{}: {e}", self.host)))?;
                let conn = rustls::ClientConnection::new(config.clone(), name).map_err(other_of)?;
                Stream::Tls(Box::new(rustls::StreamOwned::new(conn, bounded)))
            }
        };
        Ok(Conn {
            stream,
            buf: Vec::new(),
            served: 0,
            received: 0,
        })
    }
}

/// One connection and the bytes read from it not yet taken by an answer.
#[derive(Debug)]
pub struct Conn {
    stream: Stream,
    /// Received, not yet part of an answer read.
    pub(super) buf: Vec<u8>,
    /// Answers read from it so far.
    pub(super) served: u32,
    /// Bytes received from it so far.
    pub(super) received: u64,
}

#[derive(Debug)]
enum Stream {
    Plain(Bounded),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, Bounded>>),
    /// Bytes given whole: an answer read from memory.
    #[cfg(test)]
    Given,
}

impl Conn {
    /// A connection whose every byte is `bytes`, already received.
    #[cfg(test)]
    pub(super) fn of_bytes(bytes: &[u8]) -> Self {
        Conn {
            stream: Stream::Given,
            buf: bytes.to_vec(),
            served: 0,
            received: bytes.len() as u64,
        }
    }

    /// Every read and write from now on ends by `deadline`.
    pub fn set_deadline(&mut self, deadline: Instant) {
        if let Some(b) = self.bounded() {
            b.deadline = deadline;
        }
    }

    /// When its reads and writes end.
    pub fn deadline(&mut self) -> Instant {
        self.bounded().map_or_else(Instant::now, |b| b.deadline)
    }

    /// Whether the server closes the connection within `wait` (or the
    /// deadline), sending nothing more: what a request with `Connection:
    /// close` is owed (RFC 9112 section 9.6). Bytes that come instead
    /// stay in the buffer.
    pub fn closes_within(&mut self, wait: Duration) -> bool {
        if !self.buf.is_empty() {
            return false;
        }
        let deadline = self.deadline();
        self.set_deadline(deadline.min(Instant::now() + wait));
        let closed = match self.fill() {
            Ok(0) => true,
            // A reset after the answer closes the connection as well.
            Err(e) => matches!(
                e.kind(),
                std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::ConnectionAborted
            ),
            Ok(_) => false,
        };
        self.set_deadline(deadline);
        closed
    }

    fn bounded(&mut self) -> Option<&mut Bounded> {
        match &mut self.stream {
            Stream::Plain(b) => Some(b),
            Stream::Tls(s) => Some(&mut s.sock),
            #[cfg(test)]
            Stream::Given => None,
        }
    }

    /// Sends `bytes` whole.
    pub fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match &mut self.stream {
            Stream::Plain(s) => s.write_all(bytes).and_then(|()| s.flush()),
            Stream::Tls(s) => s.write_all(bytes).and_then(|()| s.flush()),
            #[cfg(test)]
            Stream::Given => Ok(()),
        }
    }

    /// Reads more into the buffer: the bytes read, 0 at the end of the
    /// stream. A TLS peer that closes without close_notify ends the
    /// stream as well: the framing of what came tells whether it was whole.
    pub fn fill(&mut self) -> std::io::Result<usize> {
        let mut chunk = [0u8; 16 * 1024];
        let read = match &mut self.stream {
            Stream::Plain(s) => s.read(&mut chunk),
            Stream::Tls(s) => match s.read(&mut chunk) {
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(0),
                other => other,
            },
            #[cfg(test)]
            Stream::Given => Ok(0),
        }?;
        self.buf.extend_from_slice(&chunk[..read]);
        self.received += read as u64;
        Ok(read)
    }

    /// Whether the server has closed the connection, or sent bytes no
    /// request asked for, while it sat idle: it must not carry a request.
    /// (Over TLS the record layer may hold session tickets: only a plain
    /// connection is looked at; a TLS one that was closed fails its first
    /// read, which the retries tell apart.)
    pub fn stale(&mut self) -> bool {
        if !self.buf.is_empty() {
            return true;
        }
        let Stream::Plain(b) = &mut self.stream else {
            return false;
        };
        if b.tcp.set_nonblocking(true).is_err() {
            return true;
        }
        let mut probe = [0u8; 1];
        let stale =
            !matches!(b.tcp.peek(&mut probe), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock);
        stale || b.tcp.set_nonblocking(false).is_err()
    }
}

/// Idle connections kept for the next request: at most `cap`.
#[derive(Debug)]
pub struct Idle {
    conns: Mutex<Vec<Conn>>,
    cap: usize,
}

impl Idle {
    /// At most `cap` idle connections.
    pub fn new(cap: usize) -> Self {
        Self {
            conns: Mutex::new(Vec::new()),
            cap: cap.max(1),
        }
    }

    /// The most recently used idle connection still fit to carry a
    /// request.
    pub fn take(&self) -> Option<Conn> {
        let mut conns = self.conns.lock().unwrap_or_else(PoisonError::into_inner);
        while let Some(mut conn) = conns.pop() {
            if !conn.stale() {
                return Some(conn);
            }
        }
        None
    }

    /// Keeps `conn` for a later request (the oldest goes at the cap).
    pub fn put(&self, conn: Conn) {
        let mut conns = self.conns.lock().unwrap_or_else(PoisonError::into_inner);
        if conns.len() >= self.cap {
            conns.remove(0);
        }
        conns.push(conn);
    }
}

/// A connection whose reads and writes all end by one deadline: each is
/// given the time left as its socket timeout, and one interrupted by a
/// signal is tried again with the time then left (Linux never restarts a
/// socket read or write that has a timeout, `SA_RESTART` or not; a stop
/// and continue of the process interrupts it too).
#[derive(Debug)]
struct Bounded {
    tcp: TcpStream,
    deadline: Instant,
}

impl Bounded {
    fn within<T>(
        &mut self,
        mut io: impl FnMut(&mut TcpStream, Duration) -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(out_of_time());
            }
            match io(&mut self.tcp, left) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // A socket timeout is WouldBlock on Linux.
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Err(out_of_time()),
                result => return result,
            }
        }
    }
}

impl Read for Bounded {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.within(|tcp, left| {
            tcp.set_read_timeout(Some(left))?;
            tcp.read(buf)
        })
    }
}

impl Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.within(|tcp, left| {
            tcp.set_write_timeout(Some(left))?;
            tcp.write(buf)
        })
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.tcp.flush()
    }
}

pub(super) fn out_of_time() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        "no whole answer within the timeout",
    )
}

pub(super) fn other(why: impl Into<String>) -> std::io::Error {
    std::io::Error::other(why.into())
}

fn other_of(e: impl std::fmt::Display) -> std::io::Error {
    other(e.to_string())
}

/// The TLS configuration: `--ca-cert`'s roots, else the bundled ones.
fn client_config(ca_cert: Option<&Path>) -> std::io::Result<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    match ca_cert {
        Some(path) => {
            for cert in aggpay_internal::http::ca_file(path).map_err(other_of)? {
                roots
                    .add(rustls::pki_types::CertificateDer::from(cert.der().to_vec()))
                    .map_err(other_of)?;
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(other_of)?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// `host` and port of an authority (`[::1]:8080`, `host`, `host:80`).
fn split_authority(authority: &str, default: u16) -> std::io::Result<(String, u16)> {
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !p.contains(']') => (h, p.parse().map_err(|_| other("bad port"))?),
        _ => (authority, default),
    };
    Ok((
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned(),
        port,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities_are_split() {
        assert_eq!(
            split_authority("[::1]:8", 80).unwrap(),
            ("::1".to_owned(), 8)
        );
        assert_eq!(split_authority("h", 443).unwrap(), ("h".to_owned(), 443));
        assert!(split_authority("h:x", 443).is_err());
    }
}
