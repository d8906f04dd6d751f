//! The harness's HTTP/1.1, written and read byte for byte: every answer
//! the run receives is kept as the server sent it (its heads, interim
//! answers included, and its framing), so that the rules judge the
//! message itself by RFC 9112 and RFC 9110, not what a forgiving client
//! library would make of it. Requests go in the forms a real client
//! sends (`Form`): HTTP/1.0, `Connection: close`, a chunked body,
//! `Expect: 100-continue`, a validator; several on one connection, or
//! pipelined.

mod conn;
mod read;
mod write;

use std::time::{Duration, Instant, SystemTime};

pub use conn::{Conn, Idle, Origin};
pub use read::{Framing, Head, Message};
pub use write::Bytes;

/// How a request is written, beside its method, target and fields.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Form {
    /// Sent as HTTP/1.0 (no persistence asked for).
    pub http10: bool,
    /// With `Connection: close`.
    pub close: bool,
    /// The body in the chunked transfer coding.
    pub chunked: bool,
    /// With `Expect: 100-continue`: the body waits for the 100, or
    /// [`CONTINUE_WAIT`].
    pub expect_continue: bool,
    /// With `If-None-Match` and this entity tag.
    pub if_none_match: Option<String>,
}

impl Form {
    /// The plain form: HTTP/1.1, persistent, `Content-Length`.
    pub fn is_plain(&self) -> bool {
        *self == Form::default()
    }

    /// What differs from the plain form, in words (`HTTP/1.0`,
    /// `Connection: close`, ...); empty for the plain form.
    pub fn shown(&self) -> String {
        let mut parts = Vec::new();
        if self.http10 {
            parts.push("HTTP/1.0".to_owned());
        }
        if self.close {
            parts.push("Connection: close".to_owned());
        }
        if self.chunked {
            parts.push("a chunked body".to_owned());
        }
        if self.expect_continue {
            parts.push("Expect: 100-continue".to_owned());
        }
        if let Some(tag) = &self.if_none_match {
            parts.push(format!("If-None-Match: {tag}"));
        }
        parts.join(", ")
    }
}

impl Answer {
    /// The final answer's fields, names in lower case, values as text.
    pub fn headers(&self) -> Vec<(String, String)> {
        self.wire.head.fields_lowercase()
    }

    /// Whether the connection may carry another request after it, sent
    /// in `form` (RFC 9112 section 9.3).
    pub fn persists(&self, form: &Form) -> bool {
        !form.http10 && !form.close && self.body_sent && self.wire.persists()
    }

    /// The answer to a GET whose bytes are `bytes`, read as from a
    /// connection (for tests of what judges answers).
    ///
    /// # Errors
    ///
    /// Why the bytes are no whole answer.
    #[cfg(test)]
    pub fn read_from(bytes: &[u8]) -> std::io::Result<Answer> {
        let mut conn = Conn::of_bytes(bytes);
        let mut message = read::answer(&mut conn, false)?;
        let (wire, body) = Wire::of(&mut message, conn.buf.len(), SystemTime::now());
        Ok(Answer {
            wire,
            body,
            body_sent: true,
        })
    }
}

/// An answer's status, fields (lower-case names) and body.
pub type Plain = (u16, Vec<(String, String)>, Vec<u8>);

/// The request target of `url`: its path and query (`/` for none).
pub fn target_of(url: &str) -> String {
    url.split_once("://")
        .and_then(|(_, rest)| rest.find(['/', '?']).map(|i| &rest[i..]))
        .map_or_else(
            || "/".to_owned(),
            |t| {
                if t.starts_with('?') {
                    format!("/{t}")
                } else {
                    t.to_owned()
                }
            },
        )
}

/// One GET of `url` with `fields` spelled as given, on a connection of
/// its own, within `timeout` (connecting included): status, fields
/// (lower-case names) and body. For the setup's questions, before the
/// run's client exists.
///
/// # Errors
///
/// Why there is no answer, with the kind the retries go by: a refused or
/// reset connection, a timeout (`TimedOut`), an answer cut short
/// (`UnexpectedEof`), TLS or an unreadable answer (`Other`).
pub fn get_once(
    url: &str,
    fields: &[(&str, &str)],
    ca_cert: Option<&std::path::Path>,
    timeout: Duration,
) -> std::io::Result<Plain> {
    let deadline = Instant::now() + timeout;
    let origin = Origin::of(url, ca_cert)?;
    let target = target_of(url);
    let fields: Vec<(String, String)> = fields
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .chain([
            ("Accept".to_owned(), "application/json".to_owned()),
            (
                "Accept-Encoding".to_owned(),
                aggpay_internal::coding::ACCEPTED.to_owned(),
            ),
        ])
        .collect();
    let form = Form {
        close: true,
        ..Form::default()
    };
    let bytes = Bytes::request("GET", &target, &origin.authority, &fields, None, &form);
    let mut conn = origin.connect(deadline)?;
    let mut all = bytes.head;
    all.extend_from_slice(&bytes.body);
    conn.send(&all)?;
    let message = read::answer(&mut conn, false)?;
    Ok((
        message.head.status,
        message.head.fields_lowercase(),
        message.body,
    ))
}

/// How long a request that expects a 100 Continue waits for it before it
/// sends its body all the same (RFC 9110 section 10.1.1: a client that
/// sends a 100-continue expectation is not required to wait for any
/// specific length of time).
pub const CONTINUE_WAIT: Duration = Duration::from_secs(1);

/// What the harness keeps of an answer's bytes beside its body: the
/// heads as sent, the framing, and when it came.
#[derive(Debug, Clone)]
pub struct Wire {
    /// 1xx answers before the final one, in order.
    pub interim: Vec<Head>,
    /// The final answer's head.
    pub head: Head,
    /// How its body was delimited.
    pub framing: Framing,
    /// Flaws of its chunked framing read past.
    pub chunk_flaws: Vec<String>,
    /// Bytes the server sent past the answer's end before any other
    /// request was sent on the connection.
    pub leftover: usize,
    /// After a `Connection: close` request: whether the server closed the
    /// connection once it had answered (`None` when not asked).
    pub closed: Option<bool>,
    /// When the request was sent.
    pub sent_at: SystemTime,
    /// When the answer's end was read.
    pub read_at: SystemTime,
}

impl Wire {
    /// Whether the connection may carry another request after this
    /// answer, as far as the answer says (RFC 9112 section 9.3): HTTP/1.1,
    /// no `close` option, a body that did not end with the connection,
    /// and no bytes past its end.
    pub fn persists(&self) -> bool {
        self.head.minor >= 1
            && !self.head.members("connection").iter().any(|m| m == "close")
            && self.framing != Framing::UntilClose
            && self.leftover == 0
    }

    /// The record of `message` (its body taken out), sent at `sent_at`.
    fn of(message: &mut Message, leftover: usize, sent_at: SystemTime) -> (Self, Vec<u8>) {
        let wire = Wire {
            interim: std::mem::take(&mut message.interim),
            head: message.head.clone(),
            framing: message.framing,
            chunk_flaws: std::mem::take(&mut message.chunk_flaws),
            leftover,
            closed: None,
            sent_at,
            read_at: SystemTime::now(),
        };
        (wire, std::mem::take(&mut message.body))
    }
}

/// One answer as the transport hands it on.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The bytes kept.
    pub wire: Wire,
    /// The body as received.
    pub body: Vec<u8>,
    /// False when the server answered an `Expect: 100-continue` request
    /// before its body was sent (the body then never is).
    pub body_sent: bool,
}

/// How long the harness waits, after an answer to a `Connection: close`
/// request, for the server to close the connection.
pub const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// The server's connections: the origin, and those kept idle.
#[derive(Debug)]
pub struct Transport {
    origin: Origin,
    idle: Idle,
}

impl Transport {
    /// A transport to `origin`, keeping at most `idle` connections.
    pub fn new(origin: Origin, idle: usize) -> Self {
        Self {
            origin,
            idle: Idle::new(idle),
        }
    }

    /// The `Host` of every request.
    pub fn authority(&self) -> &str {
        &self.origin.authority
    }

    /// A new connection.
    ///
    /// # Errors
    ///
    /// Why it could not be made by `deadline`.
    pub fn connect(&self, deadline: Instant) -> std::io::Result<Conn> {
        self.origin.connect(deadline)
    }

    /// Sends `bytes` and reads the answer: on an idle connection when
    /// `reuse` allows, else a new one. A request that met a kept
    /// connection the server had closed, before any byte of answer came,
    /// is sent once more on a new one (RFC 9112 section 9.3.1: such a
    /// connection closing is not the server's answer).
    ///
    /// # Errors
    ///
    /// Why there is no answer.
    pub fn exchange(
        &self,
        bytes: &Bytes,
        form: &Form,
        head_request: bool,
        reuse: bool,
        deadline: Instant,
    ) -> std::io::Result<Answer> {
        if reuse && let Some(mut conn) = self.idle.take() {
            conn.set_deadline(deadline);
            let before = conn.received;
            match self.on(&mut conn, bytes, form, head_request) {
                Err(e) if conn.received == before && stale_failure(&e) => {}
                result => return self.done(conn, result, form),
            }
        }
        let mut conn = self.origin.connect(deadline)?;
        let result = self.on(&mut conn, bytes, form, head_request);
        self.done(conn, result, form)
    }

    /// Sends `bytes` on `conn` and reads the answer (the body after a
    /// 100 Continue, or [`CONTINUE_WAIT`], when the form expects one).
    ///
    /// # Errors
    ///
    /// Why there is no answer.
    pub fn on(
        &self,
        conn: &mut Conn,
        bytes: &Bytes,
        form: &Form,
        head_request: bool,
    ) -> std::io::Result<Answer> {
        let sent_at = SystemTime::now();
        let mut body_sent = true;
        let mut message = if form.expect_continue && !bytes.body.is_empty() {
            conn.send(&bytes.head)?;
            let deadline = conn.deadline();
            conn.set_deadline(deadline.min(Instant::now() + CONTINUE_WAIT));
            let first = read::head(conn);
            conn.set_deadline(deadline);
            match first {
                Ok(head) if head.status == 100 => {
                    conn.send(&bytes.body)?;
                    read::answer_after(conn, head_request, vec![head], None)?
                }
                // Answered before the body was sent: the body is not sent,
                // and the connection is not kept (RFC 9110 section
                // 10.1.1).
                Ok(head) => {
                    body_sent = false;
                    read::answer_after(conn, head_request, Vec::new(), Some(head))?
                }
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut && Instant::now() < deadline => {
                    conn.send(&bytes.body)?;
                    read::answer(conn, head_request)?
                }
                Err(e) => return Err(e),
            }
        } else {
            let mut all = bytes.head.clone();
            all.extend_from_slice(&bytes.body);
            conn.send(&all)?;
            read::answer(conn, head_request)?
        };
        conn.served += 1;
        let leftover = conn.buf.len();
        let (mut wire, body) = Wire::of(&mut message, leftover, sent_at);
        wire.closed = form.close.then(|| conn.closes_within(CLOSE_WAIT));
        Ok(Answer {
            wire,
            body,
            body_sent,
        })
    }

    /// Keeps `conn` when its last answer lets it carry another request.
    fn done(
        &self,
        conn: Conn,
        result: std::io::Result<Answer>,
        form: &Form,
    ) -> std::io::Result<Answer> {
        if let Ok(answer) = &result
            && answer.persists(form)
        {
            self.idle.put(conn);
        }
        result
    }

    /// Sends every request of `bytes` at once on one new connection, then
    /// reads their answers in order (RFC 9112 section 9.3.2). An answer
    /// after which the connection does not persist ends the reading: the
    /// later requests are `None` (a client sends them again).
    ///
    /// # Errors
    ///
    /// Why the connection could not be made or written to.
    pub fn pipelined(
        &self,
        bytes: &[Bytes],
        deadline: Instant,
    ) -> std::io::Result<Vec<Option<std::io::Result<Answer>>>> {
        let mut conn = self.origin.connect(deadline)?;
        let mut all = Vec::new();
        for b in bytes {
            all.extend_from_slice(&b.head);
            all.extend_from_slice(&b.body);
        }
        let sent_at = SystemTime::now();
        conn.send(&all)?;
        let mut answers = Vec::new();
        let mut open = true;
        for _ in bytes {
            if !open {
                answers.push(None);
                continue;
            }
            let answer = read::answer(&mut conn, false).map(|mut message| {
                // Bytes already read belong to the next answer: none is
                // left over while answers are still due.
                let (wire, body) = Wire::of(&mut message, 0, sent_at);
                open = wire.persists();
                Answer {
                    wire,
                    body,
                    body_sent: true,
                }
            });
            open &= answer.is_ok();
            answers.push(Some(answer));
        }
        Ok(answers)
    }
}

/// A failure that, with no byte of answer received, shows a kept
/// connection was closed before the request reached the server.
fn stale_failure(e: &std::io::Error) -> bool {
    use std::io::ErrorKind as K;
    matches!(
        e.kind(),
        K::UnexpectedEof | K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe
    )
}

#[cfg(test)]
mod tests {
    use super::target_of;

    #[test]
    fn a_url_s_target_is_its_path_and_query() {
        assert_eq!(target_of("http://h:1/v1/a?x=1"), "/v1/a?x=1");
        assert_eq!(target_of("https://h"), "/");
        assert_eq!(target_of("http://h:1?x=1"), "/?x=1");
    }
}
