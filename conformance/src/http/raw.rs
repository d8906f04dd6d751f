//! A GET written byte for byte: header names exactly as given. The HTTP
//! client (ureq, on the `http` crate) sends every header name in lower
//! case, which HTTP allows (field names are case-insensitive, RFC 9110
//! section 5.1); to judge a server that matches the key header's name
//! case-sensitively, the harness must be able to send other spellings.
//! Plain TCP for `http://`, rustls for `https://` (the same roots as the
//! client: the bundled ones, or `--ca-cert`). One request a connection
//! (`Connection: close`); the answer is read to its end, bounded in size
//! and in time: the whole exchange, connecting included, within the
//! timeout (as the ureq path's global timeout), however slowly a server
//! drips its bytes and however often a signal interrupts a read.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most of an answer read.
const MAX_ANSWER: u64 = 1024 * 1024;

/// Status, headers (lowercase names) and body of a raw answer.
pub type RawAnswer = (u16, Vec<(String, String)>, Vec<u8>);

/// Sends `GET {url}` with `headers` spelled as given.
///
/// # Errors
///
/// Why there is no answer, with the kind the retries go by: a refused or
/// reset connection, a timeout (`TimedOut`), an answer cut short
/// (`UnexpectedEof`), TLS or a malformed answer (`Other`).
pub fn get(
    url: &str,
    headers: &[(&str, &str)],
    ca_cert: Option<&Path>,
    timeout: Duration,
) -> Result<RawAnswer, std::io::Error> {
    let deadline = Instant::now() + timeout;
    let (scheme, rest) = url.split_once("://").ok_or_else(|| other("no scheme"))?;
    let (authority, target) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let tls = scheme.eq_ignore_ascii_case("https");
    let (host, port) = split_authority(authority, if tls { 443 } else { 80 })?;
    let addr = (host.as_str(), port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| other(format!("{host} has no address")))?;
    let tcp = Bounded {
        tcp: TcpStream::connect_timeout(&addr, timeout)?,
        deadline,
    };
    let mut head = format!("GET {target} HTTP/1.1\r\nHost: {authority}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Accept: application/json\r\nAccept-Encoding: {}\r\nConnection: close\r\n\r\n",
        aggpay_internal::coding::ACCEPTED
    ));
    let mut bytes = Vec::new();
    let out_of_time = if tls {
        let config = client_config(ca_cert)?;
        let name = rustls::pki_types::ServerName::try_from(host.clone())
            .map_err(|e| other(format!("{host}: {e}")))?;
        let conn = rustls::ClientConnection::new(Arc::new(config), name).map_err(other_of)?;
        let mut stream = rustls::StreamOwned::new(conn, tcp);
        exchange(&mut stream, head.as_bytes(), &mut bytes)?
    } else {
        let mut stream = tcp;
        exchange(&mut stream, head.as_bytes(), &mut bytes)?
    };
    match parse(&bytes) {
        // Not cut short by the server: the time ran out while it sent.
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && out_of_time => {
            Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "no whole answer within the timeout ({} bytes came)",
                    bytes.len()
                ),
            ))
        }
        parsed => parsed,
    }
}

fn other(why: impl Into<String>) -> std::io::Error {
    std::io::Error::other(why.into())
}

fn cut_short(why: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::UnexpectedEof, why.into())
}

fn other_of(e: impl std::fmt::Display) -> std::io::Error {
    other(e.to_string())
}

/// Sends `head` and reads the answer into `out`; whether the time ran
/// out before the answer ended.
fn exchange(
    stream: &mut dyn ReadWrite,
    head: &[u8],
    out: &mut Vec<u8>,
) -> Result<bool, std::io::Error> {
    stream.write_all(head)?;
    stream.flush()?;
    match stream.take(MAX_ANSWER).read_to_end(out) {
        Ok(_) => Ok(false),
        // A peer that closes abruptly after its answer (a TLS peer without
        // close_notify), or keeps the connection open after it: what was
        // read stands, and is judged whole or cut short by its framing.
        Err(e) if !out.is_empty() => Ok(e.kind() == std::io::ErrorKind::TimedOut),
        Err(e) => Err(e),
    }
}

/// A connection whose reads and writes all end by one deadline: each is
/// given the time left as its socket timeout, and one interrupted by a
/// signal is tried again with the time then left (Linux never restarts a
/// socket read or write that has a timeout, `SA_RESTART` or not; a stop
/// and continue of the process interrupts it too).
struct Bounded {
    tcp: TcpStream,
    deadline: Instant,
}

impl Bounded {
    fn within<T>(
        &mut self,
        mut io: impl FnMut(&mut TcpStream, Duration) -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        let out_of_time = || {
            std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "no whole answer within the timeout",
            )
        };
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

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

/// The TLS configuration: `--ca-cert`'s roots, else the bundled ones.
fn client_config(ca_cert: Option<&Path>) -> Result<rustls::ClientConfig, std::io::Error> {
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
fn split_authority(authority: &str, default: u16) -> Result<(String, u16), std::io::Error> {
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

/// Status, headers and body of an answer read to its end.
fn parse(bytes: &[u8]) -> Result<RawAnswer, std::io::Error> {
    let end = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| cut_short("the answer ended before its head did"))?;
    let head = String::from_utf8_lossy(&bytes[..end]);
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| other("the answer is not HTTP (no status)"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let rest = &bytes[end + 4..];
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let chunked = header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        dechunk(rest)?
    } else {
        match header("content-length").and_then(|v| v.parse::<usize>().ok()) {
            // An answer cut short is no answer: the caller may try again.
            Some(n) if rest.len() < n => {
                return Err(cut_short(format!(
                    "the answer was cut short: {} of {n} bytes",
                    rest.len()
                )));
            }
            Some(n) => rest[..n].to_vec(),
            None => rest.to_vec(),
        }
    };
    Ok((status, headers, body))
}

/// A chunked body decoded (RFC 9112 section 7.1); an error when it ends
/// before its last chunk.
fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, std::io::Error> {
    let mut body = Vec::new();
    loop {
        let line_end = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or_else(|| cut_short("the chunked answer was cut short"))?;
        let size_text = String::from_utf8_lossy(&rest[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or("").trim().to_owned();
        let size = usize::from_str_radix(&size_text, 16)
            .map_err(|_| other(format!("bad chunk size {size_text:?}")))?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Ok(body);
        }
        if rest.len() < size + 2 {
            return Err(cut_short("the chunked answer was cut short"));
        }
        body.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aggpay_testkit::Interruptions;
    use std::net::TcpListener;

    /// A server for one connection: it reads the head, then `act`s on
    /// the stream; its thread ends within 10 s.
    fn serve_once(act: fn(&mut TcpStream)) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/x", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read_exact(&mut byte).is_ok() {
                head.push(byte[0]);
            }
            act(&mut stream);
        });
        url
    }

    /// Holds the connection without a word until the client closes it
    /// (or 10 s).
    fn say_nothing(stream: &mut TcpStream) {
        let began = Instant::now();
        let mut sink = [0u8; 64];
        while began.elapsed() < Duration::from_secs(10) {
            match stream.read(&mut sink) {
                Ok(0) => return,
                Err(e) if e.kind() != std::io::ErrorKind::Interrupted => return,
                _ => {}
            }
        }
    }

    #[test]
    fn a_dripping_answer_ends_by_the_timeout() {
        let url = serve_once(|stream| {
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n");
            for _ in 0..500 {
                std::thread::sleep(Duration::from_millis(20));
                if stream.write_all(b" ").is_err() {
                    return;
                }
            }
        });
        let began = Instant::now();
        let answer = get(&url, &[], None, Duration::from_millis(400));
        let took = began.elapsed();
        // Each byte came well within the timeout; the whole did not.
        assert!(took < Duration::from_secs(3), "{took:?}");
        let error = answer.unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut, "{error}");
        assert!(error.to_string().contains("no whole answer"), "{error}");
    }

    #[test]
    fn interrupted_reads_time_out_on_time_and_answers_still_come() {
        let _stops = Interruptions::every(Duration::from_millis(100));
        // Each interrupted read would start its timeout again: a silent
        // server would hold the exchange until it gave up (10 s).
        let url = serve_once(say_nothing);
        let began = Instant::now();
        let error = get(&url, &[], None, Duration::from_millis(500)).unwrap_err();
        let took = began.elapsed();
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut, "{error}");
        assert!(took < Duration::from_secs(3), "{took:?}");
        // An interrupted read is tried again: the answer is read whole.
        let url = serve_once(|stream| {
            std::thread::sleep(Duration::from_millis(300));
            let _ = stream.write_all(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n");
        });
        let (status, _, body) = get(&url, &[], None, Duration::from_secs(5)).unwrap();
        assert_eq!((status, body.len()), (204, 0));
    }

    #[test]
    fn answers_and_authorities_are_read() {
        let (status, headers, body) =
            parse(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 2\r\nX-A: b\r\n\r\n{}junk")
                .unwrap();
        assert_eq!((status, body.as_slice()), (401, b"{}".as_slice()));
        assert!(headers.contains(&("x-a".to_owned(), "b".to_owned())));
        assert!(parse(b"garbage").is_err());
        assert!(parse(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}").is_err());
        let (_, _, body) = parse(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{\"\r\n3;x=1\r\na\":\r\n2\r\n1}\r\n0\r\n\r\n",
        )
        .unwrap();
        assert_eq!(body, b"{\"a\":1}");
        assert!(parse(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab").is_err());
        assert_eq!(
            split_authority("[::1]:8", 80).unwrap(),
            ("::1".to_owned(), 8)
        );
        assert_eq!(split_authority("h", 443).unwrap(), ("h".to_owned(), 443));
    }
}
