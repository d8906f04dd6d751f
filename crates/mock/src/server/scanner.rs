//! The request heads of a connection followed as their bytes arrive, in
//! front of the HTTP layer: how each body is framed, when a head started,
//! and the bytes of a request target the HTTP layer would refuse,
//! percent-encoded. It never changes any other byte (but for the head
//! rewrite a fault asks for, see `byte_layer`), and agrees with the HTTP layer
//! on where each request ends (a property test below).

use std::collections::VecDeque;
use std::time::Instant;

use super::byte_layer::HeadRewrite;

/// How one request's body is framed, as its head says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Framing {
    /// `Content-Length`, or no body.
    #[default]
    Plain,
    /// `Transfer-Encoding`: the connection is closed after the answer,
    /// since the next request's start is not tracked through chunks.
    Chunked,
    /// Both `Content-Length` and `Transfer-Encoding`: which one frames the
    /// body is ambiguous (request smuggling), so the request is refused.
    Ambiguous,
}

/// What the scanner saw of one request head, taken by the service in
/// order.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    pub(crate) framing: Framing,
    /// The key header's name as the head spelled it (the fault
    /// `key-header-case-sensitive` needs it: the HTTP layer lowers it).
    pub(crate) key_name: Option<String>,
    /// When the head's first byte arrived (`pipeline-drops-second`).
    pub(crate) started: Option<Instant>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    Head,
    Body(u64),
    /// After a chunked body or an oversized head: no longer followed.
    Untracked,
}

/// Follows the request heads of a connection as their bytes arrive, to
/// tell how each body is framed (the HTTP layer quietly prefers
/// `Transfer-Encoding` over `Content-Length`) and when a head started.
///
/// It also percent-encodes the bytes of a request target that the HTTP
/// layer would refuse with a bare 400 (`"`, `<`, `>`, DEL and non-ASCII
/// bytes, which curl sends as typed), so that such a request gets the
/// API's answer, in its documented shape, like any other value.
#[derive(Debug)]
pub(super) struct Scanner {
    phase: Phase,
    head: Vec<u8>,
    pub(super) head_started: Option<Instant>,
    /// The heads seen, not yet taken by the service.
    pub(super) heads: VecDeque<Seen>,
    max_head: usize,
    /// A rewrite of whole heads: with one, each head is held back until
    /// it ends, then passed on rewritten.
    rewrite: Option<HeadRewrite>,
    /// Spaces seen in the current request line (1: in the target), and
    /// whether the line has ended.
    line_spaces: u8,
    line_done: bool,
}

/// True for a byte of a request target to percent-encode (see [`Scanner`]).
fn needs_encoding(b: u8) -> bool {
    matches!(b, b'"' | b'<' | b'>') || b >= 0x7f
}

impl Scanner {
    pub(super) fn new(max_head: usize, rewrite: Option<HeadRewrite>) -> Self {
        Self {
            phase: Phase::Head,
            head: Vec::new(),
            head_started: None,
            heads: VecDeque::new(),
            max_head,
            rewrite,
            line_spaces: 0,
            line_done: false,
        }
    }

    /// Follows `bytes` and writes them to `out`, the request target's
    /// unsafe bytes percent-encoded.
    pub(super) fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<u8>) {
        while !bytes.is_empty() {
            match self.phase {
                Phase::Untracked => {
                    out.extend_from_slice(bytes);
                    return;
                }
                Phase::Body(left) => {
                    let take = usize::try_from(left).unwrap_or(usize::MAX).min(bytes.len());
                    out.extend_from_slice(&bytes[..take]);
                    bytes = &bytes[take..];
                    let left = left - take as u64;
                    self.phase = if left == 0 {
                        Phase::Head
                    } else {
                        Phase::Body(left)
                    };
                }
                Phase::Head => {
                    let b = bytes[0];
                    bytes = &bytes[1..];
                    // Empty lines before a request are allowed (RFC 9112 2.2).
                    if self.head.is_empty() && matches!(b, b'\r' | b'\n') {
                        out.push(b);
                        continue;
                    }
                    if self.head.is_empty() {
                        self.head_started = Some(Instant::now());
                    }
                    match b {
                        b'\n' => self.line_done = true,
                        b' ' if !self.line_done => {
                            self.line_spaces = self.line_spaces.saturating_add(1)
                        }
                        _ => {}
                    }
                    let in_target = !self.line_done && self.line_spaces == 1;
                    let held = self.rewrite.is_some();
                    if in_target && needs_encoding(b) {
                        let encoded = format!("%{b:02X}");
                        if !held {
                            out.extend_from_slice(encoded.as_bytes());
                        }
                        self.head.extend_from_slice(encoded.as_bytes());
                    } else {
                        if !held {
                            out.push(b);
                        }
                        self.head.push(b);
                    }
                    if self.head.ends_with(b"\r\n\r\n") || self.head.ends_with(b"\n\n") {
                        if let Some(rewrite) = &self.rewrite {
                            let rewritten = rewrite.apply(&self.head);
                            out.extend_from_slice(rewritten.as_deref().unwrap_or(&self.head));
                        }
                        self.end_of_head();
                    } else if self.head.len() > self.max_head {
                        // The HTTP layer refuses it; nothing more to follow.
                        if held {
                            out.extend_from_slice(&self.head);
                        }
                        self.phase = Phase::Untracked;
                    }
                }
            }
        }
    }

    fn end_of_head(&mut self) {
        let head = String::from_utf8_lossy(&self.head);
        let (mut length, mut chunked, mut lengths) = (None, false, 0);
        let mut key_name = None;
        for line in head.lines().skip(1) {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let name = name.trim();
            if name.eq_ignore_ascii_case(aggpay_internal::syntax::KEY_HEADER) {
                key_name = Some(name.to_owned());
            } else if name.eq_ignore_ascii_case("content-length") {
                lengths += 1;
                length = value.trim().parse::<u64>().ok();
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = true;
            }
        }
        let (verdict, phase) = match (chunked, lengths) {
            (true, 0) => (Framing::Chunked, Phase::Untracked),
            (true, _) => (Framing::Ambiguous, Phase::Untracked),
            (false, 0) => (Framing::Plain, Phase::Head),
            (false, _) => match length {
                Some(0) => (Framing::Plain, Phase::Head),
                Some(n) => (Framing::Plain, Phase::Body(n)),
                // An unreadable length is the HTTP layer's 400.
                None => (Framing::Plain, Phase::Untracked),
            },
        };
        self.heads.push_back(Seen {
            framing: verdict,
            key_name,
            started: self.head_started,
        });
        self.phase = phase;
        self.head.clear();
        self.head_started = None;
        self.line_spaces = 0;
        self.line_done = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdicts(chunks: &[&[u8]]) -> (Vec<Framing>, Phase) {
        let mut s = Scanner::new(1024, None);
        let mut out = Vec::new();
        for c in chunks {
            s.feed(c, &mut out);
        }
        assert_eq!(
            out,
            chunks.concat(),
            "nothing to encode: bytes pass unchanged"
        );
        (s.heads.into_iter().map(|h| h.framing).collect(), s.phase)
    }

    #[test]
    fn heads_are_followed_across_reads_and_bodies() {
        let (v, phase) = verdicts(&[
            b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nContent-Length: 5\r\n",
            b"\r\nhel",
            b"loGET /c HTTP/1.1\r\n\r\n",
        ]);
        assert_eq!(v, [Framing::Plain, Framing::Plain, Framing::Plain]);
        assert_eq!(phase, Phase::Head);
    }

    #[test]
    fn both_lengths_are_ambiguous_and_chunked_stops_following() {
        let (v, phase) = verdicts(&[
            b"POST / HTTP/1.1\r\ncontent-length: 4\r\nTransfer-Encoding: chunked\r\n\r\n",
        ]);
        assert_eq!(v, [Framing::Ambiguous]);
        assert_eq!(phase, Phase::Untracked);
        let (v, _) = verdicts(&[b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"]);
        assert_eq!(v, [Framing::Chunked]);
    }

    #[test]
    fn a_head_start_is_timed_and_oversized_heads_are_left_to_hyper() {
        let mut s = Scanner::new(16, None);
        let mut out = Vec::new();
        s.feed(b"\r\nGET /", &mut out);
        assert!(s.head_started.is_some());
        s.feed(&[b'x'; 64], &mut out);
        assert_eq!(s.phase, Phase::Untracked);
    }

    #[test]
    fn unsafe_target_bytes_are_encoded_and_nothing_else() {
        let mut s = Scanner::new(1024, None);
        let mut out = Vec::new();
        s.feed(
            "GET /a?x=<\"é\"> HTTP/1.1\r\nX-Quote: \"<>\"\r\nContent-Length: 3\r\n\r\n<é>"
                .as_bytes(),
            &mut out,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "GET /a?x=%3C%22%C3%A9%22%3E HTTP/1.1\r\nX-Quote: \"<>\"\r\nContent-Length: 3\r\n\r\n<é>"
        );
        assert_eq!(s.heads.pop_front().map(|h| h.framing), Some(Framing::Plain));
    }

    #[test]
    fn a_rewrite_holds_each_head_and_passes_bodies_unchanged() {
        let rewrite = HeadRewrite::new(super::super::byte_layer::without_close);
        let mut s = Scanner::new(1024, Some(rewrite));
        let mut out = Vec::new();
        s.feed(
            b"POST /keys HTTP/1.1\r\nConnection: close\r\nContent-Length: 4\r\n",
            &mut out,
        );
        assert!(out.is_empty(), "held until the head ends");
        s.feed(b"\r\nbodyGET / HTTP/1.1\r\n\r\n", &mut out);
        assert_eq!(
            out,
            b"POST /keys HTTP/1.1\r\nContent-Length: 4\r\n\r\nbodyGET / HTTP/1.1\r\n\r\n"
        );
        assert_eq!(s.heads.len(), 2);
        let mut s = Scanner::new(16, Some(HeadRewrite::new(|_| None)));
        let mut out = Vec::new();
        s.feed(&[b'x'; 40], &mut out);
        assert_eq!(out, [b'x'; 40], "an oversized head is passed on");
    }

    /// Pipelines of requests as a client may legally send them: bodies by
    /// length (any bytes, request look-alikes included), a last one maybe
    /// chunked, header names in any case, blanks around values, bare LF
    /// line ends, empty lines between requests, target bytes the HTTP
    /// layer refuses. Fed in any split, the scanner changes no byte but
    /// those target bytes, and ends each head where `httparse` (hyper's
    /// own parser) ends it.
    mod pipelines {
        use proptest::prelude::*;

        use super::super::{Framing, Scanner, needs_encoding};

        #[derive(Debug, Clone)]
        struct Request {
            method: &'static str,
            target: Vec<u8>,
            /// `Content-Length` spelled with these letters upper-cased.
            upper: Vec<bool>,
            blanks: (&'static str, &'static str),
            value: String,
            body: Vec<u8>,
            empty_lines: usize,
            bare_lf: bool,
        }

        fn request() -> impl Strategy<Value = Request> {
            let target = prop::collection::vec(
                prop::sample::select(b"abz09/?=&%-._~\"<>\x7f\xc3\xa9".to_vec()),
                0..12,
            );
            let body = prop_oneof![
                prop::collection::vec(any::<u8>(), 0..40),
                Just(b"GET /x HTTP/1.1\r\nContent-Length: 3\r\n\r\n".to_vec()),
                Just(b"\r\n\r\n".to_vec()),
            ];
            (
                prop::sample::select(vec!["GET", "POST", "PUT"]),
                target,
                prop::collection::vec(any::<bool>(), 14),
                prop::sample::select(vec![("", ""), (" ", ""), ("  ", " "), ("\t", "\t")]),
                "[ -~]{0,12}",
                body,
                0..3usize,
                any::<bool>(),
            )
                .prop_map(
                    |(method, target, upper, blanks, value, body, empty_lines, bare_lf)| Request {
                        method,
                        target,
                        upper,
                        blanks,
                        value,
                        body,
                        empty_lines,
                        bare_lf,
                    },
                )
        }

        impl Request {
            /// The bytes sent, and what the HTTP layer must see (the
            /// target's unsafe bytes percent-encoded).
            fn bytes(&self, chunked: bool) -> (Vec<u8>, Vec<u8>) {
                let eol: &[u8] = if self.bare_lf { b"\n" } else { b"\r\n" };
                let mut sent = Vec::new();
                let mut seen = Vec::new();
                let both = |v: &mut Vec<u8>, w: &mut Vec<u8>, b: &[u8]| {
                    v.extend_from_slice(b);
                    w.extend_from_slice(b);
                };
                for _ in 0..self.empty_lines {
                    both(&mut sent, &mut seen, eol);
                }
                both(
                    &mut sent,
                    &mut seen,
                    format!("{} /", self.method).as_bytes(),
                );
                for &b in &self.target {
                    sent.push(b);
                    if needs_encoding(b) {
                        seen.extend_from_slice(format!("%{b:02X}").as_bytes());
                    } else {
                        seen.push(b);
                    }
                }
                both(&mut sent, &mut seen, b" HTTP/1.1");
                both(&mut sent, &mut seen, eol);
                let name: String = "content-length"
                    .chars()
                    .zip(&self.upper)
                    .map(|(c, up)| if *up { c.to_ascii_uppercase() } else { c })
                    .collect();
                let mut head = format!("Host: x\r\nX-Quote: {}\r\n", self.value.trim());
                if chunked {
                    head.push_str("Transfer-Encoding: chunked\r\n");
                } else {
                    let (before, after) = self.blanks;
                    head.push_str(&format!("{name}:{before}{}{after}\r\n", self.body.len()));
                }
                let head = if self.bare_lf {
                    head.replace("\r\n", "\n")
                } else {
                    head
                };
                both(&mut sent, &mut seen, head.as_bytes());
                both(&mut sent, &mut seen, eol);
                if chunked {
                    let body = format!("{:x}\r\n", self.body.len());
                    both(&mut sent, &mut seen, body.as_bytes());
                    both(&mut sent, &mut seen, &self.body);
                    both(&mut sent, &mut seen, b"\r\n0\r\n\r\n");
                } else {
                    both(&mut sent, &mut seen, &self.body);
                }
                (sent, seen)
            }
        }

        /// Where `httparse` ends each head of `stream` (bodies by their
        /// length; a chunked request ends the following).
        fn heads(stream: &[u8]) -> Vec<(usize, Framing)> {
            let mut out = Vec::new();
            let mut at = 0;
            while at < stream.len() {
                let mut headers = [httparse::EMPTY_HEADER; 16];
                let mut request = httparse::Request::new(&mut headers);
                let Ok(httparse::Status::Complete(n)) = request.parse(&stream[at..]) else {
                    panic!(
                        "httparse refuses {:?}",
                        String::from_utf8_lossy(&stream[at..])
                    );
                };
                let header = |name: &str| {
                    request
                        .headers
                        .iter()
                        .find(|h| h.name.eq_ignore_ascii_case(name))
                        .map(|h| String::from_utf8_lossy(h.value).trim().to_owned())
                };
                if header("transfer-encoding").is_some() {
                    out.push((at + n, Framing::Chunked));
                    break;
                }
                let length: usize = header("content-length").map_or(0, |v| v.parse().unwrap());
                out.push((at + n, Framing::Plain));
                at += n + length;
                // Empty lines before the next request belong to it.
            }
            out
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(400))]

            #[test]
            fn the_scanner_changes_no_body_byte_and_agrees_on_request_ends(
                requests in prop::collection::vec(request(), 1..5),
                last_chunked in any::<bool>(),
                cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
            ) {
                let (mut sent, mut seen) = (Vec::new(), Vec::new());
                for (i, r) in requests.iter().enumerate() {
                    let (a, b) = r.bytes(last_chunked && i + 1 == requests.len());
                    sent.extend(a);
                    seen.extend(b);
                }
                // Byte by byte: where each verdict falls in what the HTTP
                // layer sees.
                let mut scanner = Scanner::new(64 * 1024, None);
                let mut out = Vec::new();
                let mut ends = Vec::new();
                for b in &sent {
                    let before = scanner.heads.len();
                    scanner.feed(std::slice::from_ref(b), &mut out);
                    if scanner.heads.len() > before {
                        ends.push((out.len(), scanner.heads.back().unwrap().framing));
                    }
                }
                prop_assert_eq!(&out, &seen);
                prop_assert_eq!(ends, heads(&seen));
                // Any split of the reads gives the same bytes.
                let mut at: Vec<usize> = cuts.iter().map(|c| c.index(sent.len() + 1)).collect();
                at.sort_unstable();
                let mut scanner = Scanner::new(64 * 1024, None);
                let mut split = Vec::new();
                let mut from = 0;
                for to in at.into_iter().chain([sent.len()]) {
                    scanner.feed(&sent[from..to.max(from)], &mut split);
                    from = to.max(from);
                }
                prop_assert_eq!(split, seen);
            }
        }
    }
}
