//! Reading a connection to its end, as the tests that speak raw HTTP do.

use std::io::{ErrorKind, Read};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Most a test reads of one answer.
const MOST: usize = 4 * 1024 * 1024;

/// How a read to the end ended.
#[derive(Debug)]
pub enum End {
    /// The peer closed the connection.
    Closed,
    /// The connection failed (a reset): the peer's doing, not a close.
    Failed(std::io::Error),
    /// Neither within the time given (or 4 MiB read first).
    Open,
}

impl End {
    /// The peer closed the connection, cleanly or not.
    pub fn closed(&self) -> bool {
        !matches!(self, End::Open)
    }

    /// The error that failed the connection, if one did.
    pub fn error(&self) -> Option<ErrorKind> {
        match self {
            End::Failed(e) => Some(e.kind()),
            _ => None,
        }
    }
}

/// Reads `stream` until the peer closes it, it fails, `within` passes or
/// 4 MiB are read: the bytes and how the read ended. The stream's read
/// timeout is set short, to keep to `within`; a read interrupted by a
/// signal (a test that stops and continues its process: a read with a
/// timeout is never restarted by the kernel) is tried again.
pub fn read_until_closed(stream: &mut TcpStream, within: Duration) -> (Vec<u8>, End) {
    let started = Instant::now();
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    if let Err(e) = stream.set_read_timeout(Some(Duration::from_millis(100))) {
        return (out, End::Failed(e));
    }
    while started.elapsed() < within && out.len() < MOST {
        match stream.read(&mut buf) {
            Ok(0) => return (out, End::Closed),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(e) => return (out, End::Failed(e)),
        }
    }
    (out, End::Open)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    #[test]
    fn reads_to_the_close_or_says_it_stayed_open() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut first, _) = listener.accept().unwrap();
            first.write_all(b"whole").unwrap();
            drop(first);
            let (mut second, _) = listener.accept().unwrap();
            second.write_all(b"part").unwrap();
            std::thread::sleep(Duration::from_millis(600));
        });
        let mut a = TcpStream::connect(addr).unwrap();
        let (got, end) = read_until_closed(&mut a, Duration::from_secs(5));
        assert_eq!((got.as_slice(), end.closed()), (&b"whole"[..], true));
        let mut b = TcpStream::connect(addr).unwrap();
        let (got, end) = read_until_closed(&mut b, Duration::from_millis(300));
        assert_eq!(got, b"part");
        assert!(matches!(end, End::Open), "{end:?}");
        server.join().unwrap();
    }
}
