//! An answer read from its bytes (RFC 9112): each head as the server sent
//! it, interim (1xx) answers included, and its body framed the way the
//! message says. The parsing of a head is httparse's; what is kept is
//! every byte and fact a judge of the message needs (`rules::message`).
//! Nothing is forgiven silently: a flaw the reader can read past (a
//! bare LF, a chunk line's) is kept for the judges; one it cannot (a
//! head httparse refuses, a length that is not a number) makes the
//! answer unreadable, with the bytes that made it so.

use super::conn::{Conn, other};

/// The largest head read: a larger one is unreadable.
const MAX_HEAD: usize = 64 * 1024;
/// The most interim answers read before a final one.
const MAX_INTERIM: usize = 16;
/// The most fields a head may have.
const MAX_FIELDS: usize = 128;

/// A head as the server sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// Its bytes, through the empty line that ends it.
    pub bytes: Vec<u8>,
    /// `1` for HTTP/1.1, `0` for HTTP/1.0.
    pub minor: u8,
    /// The status code.
    pub status: u16,
    /// The field lines in order: the name as spelled, the value as sent
    /// (surrounding whitespace removed, RFC 9112 section 5.1).
    pub fields: Vec<(String, Vec<u8>)>,
}

impl Head {
    /// The values of the field `name` (any case), in order.
    pub fn values<'h>(&'h self, name: &'h str) -> impl Iterator<Item = &'h [u8]> + 'h {
        self.fields
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }

    /// The comma-separated members of every value of `name`, lower-cased
    /// and trimmed (a list field, RFC 9110 section 5.6.1).
    pub fn members(&self, name: &str) -> Vec<String> {
        self.values(name)
            .flat_map(|v| {
                String::from_utf8_lossy(v)
                    .split(',')
                    .map(|m| m.trim().to_ascii_lowercase())
                    .collect::<Vec<_>>()
            })
            .filter(|m| !m.is_empty())
            .collect()
    }

    /// The fields, names in lower case, values as text (a byte that is
    /// not UTF-8 replaced).
    pub fn fields_lowercase(&self) -> Vec<(String, String)> {
        self.fields
            .iter()
            .map(|(n, v)| {
                (
                    n.to_ascii_lowercase(),
                    String::from_utf8_lossy(v).into_owned(),
                )
            })
            .collect()
    }

    /// The status line, without its line end.
    pub fn status_line(&self) -> &[u8] {
        let end = self
            .bytes
            .iter()
            .position(|&b| b == b'\n')
            .unwrap_or(self.bytes.len());
        let line = &self.bytes[..end];
        line.strip_suffix(b"\r").unwrap_or(line)
    }

    /// How many of its lines end with a bare LF instead of CRLF.
    pub fn bare_lf_lines(&self) -> usize {
        self.bytes
            .iter()
            .enumerate()
            .filter(|&(i, &b)| b == b'\n' && (i == 0 || self.bytes[i - 1] != b'\r'))
            .count()
    }
}

/// How the body of an answer was delimited (RFC 9112 section 6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No content: the answer to a HEAD, a 1xx, 204 or 304.
    NoContent,
    /// `Content-Length` bytes.
    Length(u64),
    /// The chunked transfer coding, `chunks` of data.
    Chunked {
        /// Chunks of data, the last (empty) one not counted.
        chunks: usize,
    },
    /// Until the server closed the connection.
    UntilClose,
}

/// One answer read: its interim answers, its head, its framing and body,
/// and the flaws of its chunked framing the reader read past.
#[derive(Debug, Clone)]
pub struct Message {
    /// 1xx answers before the final one, in order.
    pub interim: Vec<Head>,
    /// The final answer's head.
    pub head: Head,
    /// How its body was delimited.
    pub framing: Framing,
    /// Its body as received (content codings not undone).
    pub body: Vec<u8>,
    /// What was wrong in its chunked framing but could be read past.
    pub chunk_flaws: Vec<String>,
}

/// Why an answer could not be read as HTTP: the flaw, and the bytes of
/// the head where there was one.
#[derive(Debug)]
pub struct Unreadable {
    /// What is wrong, in words.
    pub why: String,
    /// The head's bytes, when the flaw is in or after it.
    pub head: Option<Vec<u8>>,
}

impl From<Unreadable> for std::io::Error {
    fn from(u: Unreadable) -> Self {
        other(format!("the answer is not readable HTTP/1.1: {}", u.why))
    }
}

/// Reads one answer to a request (`head_request`: a HEAD, whose answer
/// has no content) from `conn`, leaving in its buffer what came after.
///
/// # Errors
///
/// The connection's failure (`TimedOut`, `UnexpectedEof` when it ended
/// before the answer did), or the answer's unreadable bytes (`Other`).
pub fn answer(conn: &mut Conn, head_request: bool) -> std::io::Result<Message> {
    answer_after(conn, head_request, Vec::new(), None)
}

/// [`answer`], once `interim` answers were read, and the head `first`
/// if it was read already.
pub fn answer_after(
    conn: &mut Conn,
    head_request: bool,
    mut interim: Vec<Head>,
    mut first: Option<Head>,
) -> std::io::Result<Message> {
    loop {
        let head = match first.take() {
            Some(head) => head,
            None => head(conn)?,
        };
        // 101 switches protocols: never asked for, so a final answer.
        if (100..200).contains(&head.status) && head.status != 101 {
            if interim.len() == MAX_INTERIM {
                return Err(Unreadable {
                    why: format!("more than {MAX_INTERIM} interim answers"),
                    head: Some(head.bytes),
                }
                .into());
            }
            interim.push(head);
            continue;
        }
        let framing = framing(&head, head_request).map_err(|why| Unreadable {
            why,
            head: Some(head.bytes.clone()),
        })?;
        let mut chunk_flaws = Vec::new();
        let (body, framing) = match framing {
            Framing::NoContent => (Vec::new(), framing),
            Framing::Length(n) => (length(conn, n)?, framing),
            Framing::Chunked { .. } => {
                let (body, chunks) = chunked(conn, &mut chunk_flaws)?;
                (body, Framing::Chunked { chunks })
            }
            Framing::UntilClose => (until_close(conn)?, framing),
        };
        return Ok(Message {
            interim,
            head,
            framing,
            body,
            chunk_flaws,
        });
    }
}

/// The end of a head in `buf`: the index past the empty line (CRLF or a
/// bare LF, so that a head with bare LFs is read and judged, not lost).
fn head_end(buf: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(at) = buf[i..].iter().position(|&b| b == b'\n') {
        let next = i + at + 1;
        match buf.get(next) {
            Some(b'\n') => return Some(next + 1),
            Some(b'\r') if buf.get(next + 1) == Some(&b'\n') => return Some(next + 2),
            Some(_) => i = next,
            None => return None,
        }
    }
    None
}

/// Reads one head.
pub fn head(conn: &mut Conn) -> std::io::Result<Head> {
    let end = loop {
        if let Some(end) = head_end(&conn.buf) {
            break end;
        }
        if conn.buf.len() > MAX_HEAD {
            return Err(Unreadable {
                why: format!("a head longer than {MAX_HEAD} bytes"),
                head: None,
            }
            .into());
        }
        if conn.fill()? == 0 {
            let why = if conn.buf.is_empty() {
                "the connection closed without an answer".to_owned()
            } else {
                format!(
                    "the connection closed within the head ({} bytes)",
                    conn.buf.len()
                )
            };
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, why));
        }
    };
    let bytes: Vec<u8> = conn.buf.drain(..end).collect();
    let mut fields = [httparse::EMPTY_HEADER; MAX_FIELDS];
    let mut parsed = httparse::Response::new(&mut fields);
    let unreadable = |why: String| Unreadable {
        why,
        head: Some(bytes.clone()),
    };
    match httparse::ParserConfig::default().parse_response(&mut parsed, &bytes) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => {
            return Err(unreadable("a head httparse reads as incomplete".to_owned()).into());
        }
        Err(e) => {
            let line = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
            return Err(unreadable(format!("{e} in {line:?}")).into());
        }
    }
    let (Some(minor), Some(status)) = (parsed.version, parsed.code) else {
        return Err(unreadable("no version or status".to_owned()).into());
    };
    let fields = parsed
        .headers
        .iter()
        .map(|h| (h.name.to_owned(), h.value.to_vec()))
        .collect();
    Ok(Head {
        bytes,
        minor,
        status,
        fields,
    })
}

/// How the body after `head` is delimited (RFC 9112 section 6.3), or why
/// it cannot be told.
fn framing(head: &Head, head_request: bool) -> Result<Framing, String> {
    if head_request || matches!(head.status, 100..=199 | 204 | 304) {
        return Ok(Framing::NoContent);
    }
    let codings = head.members("transfer-encoding");
    if !codings.is_empty() {
        // Transfer-Encoding overrides Content-Length (section 6.3 item 3);
        // that both came is the judges' to say.
        return Ok(if codings.last().is_some_and(|c| c == "chunked") {
            Framing::Chunked { chunks: 0 }
        } else {
            Framing::UntilClose
        });
    }
    let lengths: Vec<&[u8]> = head.values("content-length").collect();
    let Some(first) = lengths.first() else {
        return Ok(Framing::UntilClose);
    };
    // One value, or a list of one value repeated (section 6.3 item 5).
    let values: Vec<String> = lengths
        .iter()
        .flat_map(|v| {
            String::from_utf8_lossy(v)
                .split(',')
                .map(|s| s.trim().to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    let number = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| s.parse::<u64>().ok())
            .flatten()
    };
    match values
        .iter()
        .map(|v| number(v))
        .collect::<Option<Vec<u64>>>()
    {
        Some(ns) if !ns.is_empty() && ns.iter().all(|n| *n == ns[0]) => Ok(Framing::Length(ns[0])),
        _ => Err(format!(
            "Content-Length {:?} is not one length",
            String::from_utf8_lossy(first)
        )),
    }
}

fn cut_short(why: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::UnexpectedEof, why)
}

/// Reads `n` bytes of body.
fn length(conn: &mut Conn, n: u64) -> std::io::Result<Vec<u8>> {
    if n > super::super::MAX_BODY {
        return Err(Unreadable {
            why: format!("a body of {n} bytes, more than the harness reads"),
            head: None,
        }
        .into());
    }
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    while conn.buf.len() < n {
        if conn.fill()? == 0 {
            return Err(cut_short(format!(
                "the answer was cut short: {} of {n} bytes",
                conn.buf.len()
            )));
        }
    }
    Ok(conn.buf.drain(..n).collect())
}

/// Reads to the end of the stream.
fn until_close(conn: &mut Conn) -> std::io::Result<Vec<u8>> {
    loop {
        if conn.buf.len() as u64 > super::super::MAX_BODY {
            return Err(Unreadable {
                why: "a body longer than the harness reads".to_owned(),
                head: None,
            }
            .into());
        }
        if conn.fill()? == 0 {
            return Ok(std::mem::take(&mut conn.buf));
        }
    }
}

/// One line of the chunked framing, without its line end; whether it
/// ended with a bare LF.
fn line(conn: &mut Conn) -> std::io::Result<(Vec<u8>, bool)> {
    loop {
        if let Some(at) = conn.buf.iter().position(|&b| b == b'\n') {
            let mut line: Vec<u8> = conn.buf.drain(..=at).collect();
            line.pop();
            let bare = line.last() != Some(&b'\r');
            if !bare {
                line.pop();
            }
            return Ok((line, bare));
        }
        if conn.buf.len() > MAX_HEAD {
            return Err(Unreadable {
                why: "a chunk line longer than 64 KiB".to_owned(),
                head: None,
            }
            .into());
        }
        if conn.fill()? == 0 {
            return Err(cut_short("the chunked answer was cut short".to_owned()));
        }
    }
}

/// Reads a chunked body (RFC 9112 section 7.1): the body and its chunks
/// of data; `flaws` gets a sentence per flaw read past.
fn chunked(conn: &mut Conn, flaws: &mut Vec<String>) -> std::io::Result<(Vec<u8>, usize)> {
    let mut body = Vec::new();
    let mut chunks = 0;
    loop {
        let (size_line, bare) = line(conn)?;
        if bare {
            flaws.push("a chunk-size line ends with a bare LF".to_owned());
        }
        let text = String::from_utf8_lossy(&size_line).into_owned();
        let digits = text
            .split(';')
            .next()
            .unwrap_or("")
            .trim_end_matches([' ', '\t']);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Unreadable {
                why: format!("the chunk size {text:?} is not hexadecimal"),
                head: None,
            }
            .into());
        }
        let size = u64::from_str_radix(digits, 16)
            .ok()
            .filter(|n| body.len() as u64 + n <= super::super::MAX_BODY)
            .ok_or_else(|| Unreadable {
                why: format!("the chunk size {text:?} is too large"),
                head: None,
            })?;
        if size == 0 {
            // Trailer fields, then the empty line.
            loop {
                let (trailer, bare) = line(conn)?;
                if bare {
                    flaws.push("a trailer line ends with a bare LF".to_owned());
                }
                if trailer.is_empty() {
                    return Ok((body, chunks));
                }
            }
        }
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        while conn.buf.len() < size {
            if conn.fill()? == 0 {
                return Err(cut_short("the chunked answer was cut short".to_owned()));
            }
        }
        body.extend(conn.buf.drain(..size));
        chunks += 1;
        let (after, bare) = line(conn)?;
        if bare {
            flaws.push("a chunk's data ends with a bare LF".to_owned());
        }
        if !after.is_empty() {
            return Err(Unreadable {
                why: format!("a chunk of {size} bytes is followed by more data than its size"),
                head: None,
            }
            .into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_end_at_an_empty_line_of_either_ending() {
        assert_eq!(head_end(b"HTTP/1.1 200 OK\r\nA: b\r\n\r\nrest"), Some(25));
        assert_eq!(head_end(b"HTTP/1.1 200 OK\nA: b\n\nrest"), Some(22));
        assert_eq!(head_end(b"HTTP/1.1 200 OK\r\nA: b\r\n"), None);
    }

    fn head_of(bytes: &[u8]) -> Head {
        let mut fields = [httparse::EMPTY_HEADER; 8];
        let mut r = httparse::Response::new(&mut fields);
        r.parse(bytes).unwrap();
        Head {
            bytes: bytes.to_vec(),
            minor: r.version.unwrap(),
            status: r.code.unwrap(),
            fields: r
                .headers
                .iter()
                .map(|h| (h.name.to_owned(), h.value.to_vec()))
                .collect(),
        }
    }

    #[test]
    fn framing_follows_rfc_9112_section_6_3() {
        let h = head_of(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
        assert_eq!(framing(&h, false), Ok(Framing::Length(5)));
        assert_eq!(framing(&h, true), Ok(Framing::NoContent));
        let h =
            head_of(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n");
        assert_eq!(framing(&h, false), Ok(Framing::Chunked { chunks: 0 }));
        let h = head_of(b"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n");
        assert_eq!(framing(&h, false), Ok(Framing::Length(5)));
        let h = head_of(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n");
        assert!(framing(&h, false).is_err());
        let h = head_of(b"HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n");
        assert_eq!(framing(&h, false), Ok(Framing::NoContent));
        let h = head_of(b"HTTP/1.1 200 OK\r\n\r\n");
        assert_eq!(framing(&h, false), Ok(Framing::UntilClose));
    }

    #[test]
    fn heads_count_their_bare_line_feeds() {
        let h = head_of(b"HTTP/1.1 200 OK\nA: b\r\n\n");
        assert_eq!(h.bare_lf_lines(), 2);
        assert_eq!(h.status_line(), b"HTTP/1.1 200 OK");
        assert_eq!(h.members("a"), vec!["b".to_owned()]);
    }
}
