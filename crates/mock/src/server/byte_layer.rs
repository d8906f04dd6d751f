//! The byte layer: what the mock does to the bytes of an answer that the
//! HTTP layer will not write itself.
//!
//! hyper writes every response head well-formed: CRLF line ends, no body
//! after a HEAD's head, no interim answer but its own `100 Continue`, and
//! an empty body for its own errors. A few faults and legal choices need
//! other bytes (a bare LF, a HEAD answered with a body, a `103` or a `100`
//! to an HTTP/1.0 client, a `Content-Length` beside chunked framing), and
//! a malformed request must get the documented error body. So the write
//! side of the connection's stream (`conn::Watched`) follows the answers
//! hyper writes, and rewrites a head when it is told to:
//!
//! - the service answers each request with a [`HeadEdit`], queued on the
//!   connection (`ConnState::push_edit`) before hyper writes the head;
//! - [`Writer`] finds each head in the written stream (heads are followed
//!   through bodies by their framing, as the client reads them), takes
//!   the next edit for each final head (interim ones are hyper's
//!   `100 Continue`) and writes the head as the edit says;
//! - a final head with no edit queued is hyper's own error answer (a
//!   request it could not parse): it gets the mock's bare error body.
//!
//! With every edit empty, every byte the mock writes is hyper's own, and
//! body bytes go to the socket straight from hyper's buffers.
//!
//! The read side's one rewrite (`close-ignored`: a `close` option taken
//! out of a request head before hyper reads it) is [`without_close`], run
//! by the scanner, which holds each head until it ends for it.

use std::fmt;

use super::state::ConnState;

/// What the byte layer does to one final answer as it is written.
#[derive(Debug, Default)]
pub(crate) struct HeadEdit {
    /// Written before the head: an interim answer.
    pub(crate) interim: Option<&'static [u8]>,
    /// The status line and field lines (and the empty line) end with a
    /// bare LF instead of CRLF.
    pub(crate) bare_lf: bool,
    /// A `Content-Length` of this value added to the head when hyper
    /// frames the body chunked.
    pub(crate) length_when_chunked: Option<usize>,
    /// Written right after the head, outside any framing (a HEAD
    /// answered with the GET's body).
    pub(crate) trailing: Option<Vec<u8>>,
    /// The answer is to a HEAD: its head announces a length it does not
    /// carry.
    pub(crate) to_head: bool,
    /// Field names are written Title-Case (the fields this layer adds).
    pub(crate) title_case: bool,
}

impl HeadEdit {
    /// An interim `103 Early Hints` (`early-hints`).
    pub(crate) const EARLY_HINTS: &'static [u8] =
        b"HTTP/1.1 103 Early Hints\r\nLink: </v1>; rel=preload\r\n\r\n";
    /// An interim `100 Continue` (to HTTP/1.0 under `continue-to-http10`).
    pub(crate) const CONTINUE: &'static [u8] = b"HTTP/1.1 100 Continue\r\n\r\n";
}

/// Where the written stream is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// In a response head (or between answers).
    Head,
    /// In a body framed by `Content-Length`: the bytes left.
    Length(u64),
    /// In a chunked body.
    Chunked(Chunk),
    /// In a body delimited by the close: the rest of the stream.
    Rest,
}

/// Where a chunked body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// The size line: the size so far, and whether an extension began.
    Size(u64, bool),
    /// Chunk data: the bytes left.
    Data(u64),
    /// The CRLF after chunk data: bytes left.
    DataEnd(u8),
    /// The trailer section: whether the current line is empty so far.
    Trailer(bool),
}

/// Follows the answers written on a connection and rewrites their heads
/// (see the module's documentation).
#[derive(Debug)]
pub(super) struct Writer {
    phase: Phase,
    head: Vec<u8>,
}

impl Writer {
    pub(super) fn new() -> Self {
        Self {
            phase: Phase::Head,
            head: Vec::new(),
        }
    }

    /// How many of `len` bytes to be written are body bytes that go to
    /// the socket unchanged (`None`: they must go through [`Writer::take`]).
    pub(super) fn passable(&self, len: usize) -> Option<usize> {
        match self.phase {
            Phase::Length(left) => Some(usize::try_from(left).unwrap_or(usize::MAX).min(len)),
            Phase::Rest => Some(len),
            Phase::Head | Phase::Chunked(_) => None,
        }
    }

    /// `n` body bytes went to the socket unchanged.
    pub(super) fn passed(&mut self, n: usize) {
        if let Phase::Length(left) = self.phase {
            let left = left.saturating_sub(n as u64);
            self.phase = if left == 0 {
                Phase::Head
            } else {
                Phase::Length(left)
            };
        }
    }

    /// Takes all of `bytes`, and appends what is to be written for them
    /// to `out` (held back while a head is incomplete).
    pub(super) fn take(&mut self, mut bytes: &[u8], out: &mut Vec<u8>, conn: &ConnState) {
        while !bytes.is_empty() {
            match self.phase {
                Phase::Rest => {
                    out.extend_from_slice(bytes);
                    return;
                }
                Phase::Length(left) => {
                    let n = usize::try_from(left).unwrap_or(usize::MAX).min(bytes.len());
                    out.extend_from_slice(&bytes[..n]);
                    bytes = &bytes[n..];
                    self.passed(n);
                }
                Phase::Chunked(chunk) => {
                    let (b, rest) = (bytes[0], &bytes[1..]);
                    if let Chunk::Data(left) = chunk {
                        let n = usize::try_from(left).unwrap_or(usize::MAX).min(bytes.len());
                        out.extend_from_slice(&bytes[..n]);
                        bytes = &bytes[n..];
                        let left = left - n as u64;
                        self.phase = Phase::Chunked(if left == 0 {
                            Chunk::DataEnd(2)
                        } else {
                            Chunk::Data(left)
                        });
                        continue;
                    }
                    out.push(b);
                    bytes = rest;
                    self.phase = match chunk.next(b) {
                        Some(chunk) => Phase::Chunked(chunk),
                        None => Phase::Head,
                    };
                }
                Phase::Head => {
                    // hyper ends every head with CRLF CRLF.
                    let at = self.head.len().saturating_sub(3);
                    self.head.extend_from_slice(bytes);
                    let Some(end) = find(&self.head[at..], b"\r\n\r\n").map(|i| at + i + 4) else {
                        return;
                    };
                    let rest_len = self.head.len() - end;
                    let head: Vec<u8> = self.head.drain(..).take(end).collect();
                    bytes = &bytes[bytes.len() - rest_len..];
                    self.phase = self.write_head(head, out, conn);
                }
            }
        }
    }

    /// Writes one whole head to `out` as its edit says; the phase after.
    fn write_head(&mut self, head: Vec<u8>, out: &mut Vec<u8>, conn: &ConnState) -> Phase {
        let seen = Head::parse(&head);
        if (100..200).contains(&seen.status) {
            // An interim answer of hyper's own (100 Continue).
            out.extend_from_slice(&head);
            return Phase::Head;
        }
        let Some(edit) = conn.next_edit() else {
            return match own_error_body(seen.status) {
                Some(body) if seen.length == Some(0) => {
                    // The body is written here: hyper writes none.
                    out.extend_from_slice(&with_body(&head, &body));
                    Phase::Head
                }
                _ => {
                    out.extend_from_slice(&head);
                    seen.phase(false)
                }
            };
        };
        if let Some(interim) = edit.interim {
            out.extend_from_slice(interim);
        }
        let mut head = head;
        if let Some(length) = edit.length_when_chunked.filter(|_| seen.chunked) {
            let name = if edit.title_case {
                "Content-Length"
            } else {
                "content-length"
            };
            let field = format!("{name}: {length}\r\n\r\n");
            head.truncate(head.len() - 2);
            head.extend_from_slice(field.as_bytes());
        }
        if edit.bare_lf {
            head = bare_lf(&head);
        }
        out.extend_from_slice(&head);
        if let Some(trailing) = &edit.trailing {
            out.extend_from_slice(trailing);
        }
        seen.phase(edit.to_head)
    }
}

impl Phase {
    /// A length phase with nothing left is the next head.
    fn settled(self) -> Phase {
        match self {
            Phase::Length(0) => Phase::Head,
            other => other,
        }
    }
}

impl Chunk {
    /// The state after byte `b` (outside chunk data); `None` at the end
    /// of the body.
    fn next(self, b: u8) -> Option<Chunk> {
        Some(match self {
            Chunk::Size(size, ext) => match b {
                b'\n' if size == 0 => Chunk::Trailer(true),
                b'\n' => Chunk::Data(size),
                b';' => Chunk::Size(size, true),
                _ if ext => Chunk::Size(size, true),
                _ => match (b as char).to_digit(16) {
                    Some(d) => {
                        Chunk::Size(size.saturating_mul(16).saturating_add(u64::from(d)), false)
                    }
                    None => Chunk::Size(size, false),
                },
            },
            Chunk::Data(_) => Chunk::DataEnd(2),
            Chunk::DataEnd(1) => Chunk::Size(0, false),
            Chunk::DataEnd(left) => Chunk::DataEnd(left - 1),
            Chunk::Trailer(empty) => match b {
                b'\n' if empty => return None,
                b'\n' => Chunk::Trailer(true),
                b'\r' => Chunk::Trailer(empty),
                _ => Chunk::Trailer(false),
            },
        })
    }
}

/// What a written head says of its answer.
struct Head {
    status: u16,
    length: Option<u64>,
    chunked: bool,
}

impl Head {
    fn parse(head: &[u8]) -> Self {
        let text = String::from_utf8_lossy(head);
        let mut lines = text.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let (mut length, mut chunked) = (None, false);
        for line in lines {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok();
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.to_ascii_lowercase().contains("chunked");
            }
        }
        Self {
            status,
            length,
            chunked,
        }
    }

    /// Where the stream is after this head: `to_head`, an answer to a
    /// HEAD, carries no body whatever its head says.
    fn phase(&self, to_head: bool) -> Phase {
        if to_head || matches!(self.status, 204 | 304) {
            Phase::Head
        } else if self.chunked {
            Phase::Chunked(Chunk::Size(0, false))
        } else {
            match self.length {
                Some(n) => Phase::Length(n).settled(),
                None => Phase::Rest,
            }
        }
    }
}

/// The mock's bare error body for an error answer hyper writes itself
/// (a request it cannot parse, a head over the limit).
fn own_error_body(status: u16) -> Option<Vec<u8>> {
    let detail = match status {
        400 => "the request is not well-formed HTTP/1.1",
        431 => "the request head is larger than the limit",
        _ => return None,
    };
    Some(crate::reply::bad_request(detail).body)
}

/// `head` (hyper's, `Content-Length: 0`) announcing `body` as JSON, with
/// `body` after it; the field names in the head's case.
fn with_body(head: &[u8], body: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(head);
    let mut out = Vec::with_capacity(head.len() + body.len() + 32);
    for line in text.split_inclusive("\r\n") {
        let name = line.split(':').next().unwrap_or("");
        if name.eq_ignore_ascii_case("content-length") {
            let title = name.starts_with('C');
            let (ty, len) = if title {
                ("Content-Type", "Content-Length")
            } else {
                ("content-type", "content-length")
            };
            out.extend_from_slice(
                format!("{ty}: application/json\r\n{len}: {}\r\n", body.len()).as_bytes(),
            );
        } else {
            out.extend_from_slice(line.as_bytes());
        }
    }
    out.extend_from_slice(body);
    out
}

/// `head` with every CRLF a bare LF.
fn bare_lf(head: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(head.len());
    for (i, &b) in head.iter().enumerate() {
        if !(b == b'\r' && head.get(i + 1) == Some(&b'\n')) {
            out.push(b);
        }
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A rewrite of a whole request head: the head to pass on instead, or
/// `None` to pass it as it is.
type Rewrite = dyn Fn(&[u8]) -> Option<Vec<u8>> + Send + Sync;

/// Rewrites a whole request head before the HTTP layer reads it.
pub(super) struct HeadRewrite(Box<Rewrite>);

impl HeadRewrite {
    pub(super) fn new(f: impl Fn(&[u8]) -> Option<Vec<u8>> + Send + Sync + 'static) -> Self {
        Self(Box::new(f))
    }

    pub(super) fn apply(&self, head: &[u8]) -> Option<Vec<u8>> {
        (self.0)(head)
    }
}

impl fmt::Debug for HeadRewrite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HeadRewrite")
    }
}

/// The request target of a head's request line.
pub(super) fn target_of(head: &[u8]) -> &str {
    let line_end = head.iter().position(|&b| b == b'\n').unwrap_or(head.len());
    std::str::from_utf8(&head[..line_end])
        .ok()
        .and_then(|line| line.split(' ').nth(1))
        .unwrap_or("")
}

/// `head` without the `close` option of its `Connection` fields (a field
/// left with no option is dropped); `None` when it has none.
pub(super) fn without_close(head: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(head).ok()?;
    let mut changed = false;
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let field = line.split_once(':').filter(|_| i > 0);
        let Some((name, value)) =
            field.filter(|(n, _)| n.trim().eq_ignore_ascii_case("connection"))
        else {
            out.push_str(line);
            continue;
        };
        let options: Vec<&str> = value
            .split(',')
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .collect();
        let kept: Vec<&str> = options
            .iter()
            .copied()
            .filter(|o| !o.eq_ignore_ascii_case("close"))
            .collect();
        if kept.len() == options.len() {
            out.push_str(line);
            continue;
        }
        changed = true;
        if !kept.is_empty() {
            let eol = if line.ends_with("\r\n") { "\r\n" } else { "\n" };
            out.push_str(&format!("{name}: {}{eol}", kept.join(", ")));
        }
    }
    changed.then(|| out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(edits: Vec<HeadEdit>, chunks: &[&[u8]]) -> Vec<u8> {
        let conn = ConnState::new(1024, None);
        for e in edits {
            conn.push_edit(e);
        }
        let mut w = Writer::new();
        let mut out = Vec::new();
        for c in chunks {
            w.take(c, &mut out, &conn);
        }
        out
    }

    #[test]
    fn heads_are_found_through_bodies_of_every_framing() {
        let stream: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\n\r\n\r\nHTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\n\r\n\r\n\r\n0\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\n";
        let edits = || {
            (0..3)
                .map(|_| HeadEdit {
                    bare_lf: true,
                    ..HeadEdit::default()
                })
                .collect()
        };
        let expected: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\ncontent-length: 4\n\n\r\n\r\nHTTP/1.1 200 OK\ntransfer-encoding: chunked\n\n4\r\n\r\n\r\n\r\n0\r\n\r\nHTTP/1.1 200 OK\ncontent-length: 9\n\n";
        assert_eq!(written(edits(), &[stream]), expected);
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(written(edits(), &bytes), expected);
    }

    #[test]
    fn a_head_answer_carries_no_body_unless_told() {
        let out = written(
            vec![
                HeadEdit {
                    to_head: true,
                    trailing: Some(b"body".to_vec()),
                    interim: Some(HeadEdit::EARLY_HINTS),
                    ..HeadEdit::default()
                },
                HeadEdit::default(),
            ],
            &[b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"],
        );
        let mut expected = HeadEdit::EARLY_HINTS.to_vec();
        expected.extend_from_slice(b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nbodyHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
        assert_eq!(out, expected);
    }

    #[test]
    fn own_errors_get_the_bare_body_and_chunked_heads_a_length() {
        let out = written(
            vec![],
            &[b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"],
        );
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("content-type: application/json\r\ncontent-length: "),
            "{text}"
        );
        assert!(text.ends_with(r#"{"code":"error.bad_request","message":"invalid request parameters: the request is not well-formed HTTP/1.1"}"#), "{text}");
        let out = written(
            vec![HeadEdit {
                length_when_chunked: Some(4),
                ..HeadEdit::default()
            }],
            &[b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\nbody\r\n0\r\n\r\n"],
        );
        assert_eq!(
            out,
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 4\r\n\r\n4\r\nbody\r\n0\r\n\r\n"
        );
    }

    #[test]
    fn the_close_option_is_taken_out() {
        let head = b"GET /keys HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, Close\r\n\r\n";
        assert_eq!(
            without_close(head).unwrap(),
            b"GET /keys HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n"
        );
        assert_eq!(
            without_close(b"GET /keys HTTP/1.1\nconnection:close\n\n").unwrap(),
            b"GET /keys HTTP/1.1\n\n"
        );
        assert_eq!(
            without_close(b"GET /keys HTTP/1.1\r\nHost: x\r\n\r\n"),
            None
        );
        assert_eq!(target_of(head), "/keys");
    }
}
