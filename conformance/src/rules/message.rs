//! message.*: the bytes of every answer the run receives, judged by RFC
//! 9112 and RFC 9110 (API.md: "a JSON-over-HTTP API"): its status and
//! field lines and their ends, no field that is not a list sent twice,
//! its framing, its `Date`, and no interim answer to an HTTP/1.0 request.
//! What is judged is what the server sent (`http::h1`), every answer of
//! every rule, the answers without content (to a HEAD, a 304) included.

use std::time::{Duration, SystemTime};

use aggpay_mock::Fault;

use super::observe::{Cases, Observed};
use super::{Claim, Kind, Level, Rule, Run};
use crate::contract::subject::{Said, Subject};
use crate::http::Exchange;
use crate::http::h1::Head;

/// API.md's sentence that makes HTTP's requirements the server's.
pub(crate) const JSON_OVER_HTTP: &str = "The service is a JSON-over-HTTP API through which an aggregator administers instant bank-transfer payment acceptance for its merchants over a national instant-payment rail.";

const SYNTAX: Claim = Claim {
    holds: "every head is a status line `HTTP/1.x <3 digits> <reason>` and field lines `name: value`, each line ended by CRLF",
    says: &[
        JSON_OVER_HTTP,
        "RFC 9110 section 2.2: A sender MUST NOT generate protocol elements that do not match the grammar defined by the corresponding ABNF rules.",
        "RFC 9112 section 2.1: HTTP-message = start-line CRLF *( field-line CRLF ) CRLF [ message-body ]",
        "RFC 9112 section 4: status-line = HTTP-version SP status-code SP [ reason-phrase ]",
    ],
};

pub(crate) const ONCE: Claim = Claim {
    holds: "a field whose definition is not a list is sent at most once",
    says: &[
        JSON_OVER_HTTP,
        "RFC 9110 section 5.3: A sender MUST NOT generate multiple field lines with the same name in a message (whether in the headers or trailers) or append a field line when a field line of the same name already exists in the message, unless that field's definition allows multiple field line values to be recombined as a comma-separated list",
    ],
};

pub(crate) const FRAMING: Claim = Claim {
    holds: "a body is framed one way: never Content-Length beside Transfer-Encoding, no Transfer-Encoding to an HTTP/1.0 request, chunk lines ended by CRLF",
    says: &[
        JSON_OVER_HTTP,
        "RFC 9112 section 6.1: A sender MUST NOT send a Content-Length header field in any message that contains a Transfer-Encoding header field.",
        "RFC 9112 section 6.1: A server MUST NOT send a response containing Transfer-Encoding unless the corresponding request indicates HTTP/1.1 (or later minor revisions).",
        "RFC 9110 section 2.2: A sender MUST NOT generate protocol elements that do not match the grammar defined by the corresponding ABNF rules.",
    ],
};

const DATE: Claim = Claim {
    holds: "Date is one IMF-fixdate, in UTC, the time the answer was made (within the stated tolerance of the harness's clock)",
    says: &[
        "Responses carry the headers Content-Length and Date.",
        "RFC 9110 section 5.6.7: When a sender generates a field that contains one or more timestamps defined as HTTP-date, the sender MUST generate those timestamps in the IMF-fixdate format.",
        "RFC 9110 section 5.6.7: An HTTP-date value represents time as an instance of Coordinated Universal Time (UTC).",
        "RFC 9110 section 6.6.1: The \"Date\" header field represents the date and time at which the message was originated",
    ],
};

pub(crate) const NO_INTERIM_TO_HTTP10: Claim = Claim {
    holds: "no 1xx answer to an HTTP/1.0 request",
    says: &[
        JSON_OVER_HTTP,
        "RFC 9110 section 15.2: Since HTTP/1.0 did not define any 1xx status codes, a server MUST NOT send a 1xx response to an HTTP/1.0 client.",
    ],
};

/// How far a `Date` may stray from the harness's clock between sending
/// the request and reading the answer: wider than any clock kept by NTP
/// is off, far narrower than a time zone.
pub const DATE_TOLERANCE: Duration = Duration::from_secs(60);

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "message.syntax",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md (a JSON-over-HTTP API); RFC 9112 sections 2.1, 4 and 5",
            claims: &[SYNTAX],
            summary: "every answer's status line and field lines, interim answers' included, follow RFC 9112's grammar and end with CRLF, judged from the bytes the server sent",
            faults: &[Fault::BareLfHeads],
            judges: &[Subject::Said(Said::Http)],
            run: Run::EveryAnswer(syntax, Cases::Messages),
        },
        Rule {
            id: "message.fields-once",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md (a JSON-over-HTTP API); RFC 9110 section 5.3",
            claims: &[ONCE],
            summary: "no answer sends a field that is not a list (Date, Content-Type, Content-Length, ETag, ...) twice",
            faults: &[Fault::DateTwice, Fault::ContentTypeTwice],
            judges: &[Subject::Said(Said::Http)],
            run: Run::EveryAnswer(fields_once, Cases::Messages),
        },
        Rule {
            id: "message.framing",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md (a JSON-over-HTTP API); RFC 9112 sections 6.1 and 7.1",
            claims: &[FRAMING],
            summary: "every answer's body is framed one way: never Content-Length with Transfer-Encoding, no chunked answer to HTTP/1.0, chunk lines ended by CRLF",
            faults: &[Fault::ChunkedWithLength],
            judges: &[Subject::Said(Said::Http)],
            run: Run::EveryAnswer(framing, Cases::Messages),
        },
        Rule {
            id: "message.date",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Conventions 4; RFC 9110 sections 5.6.7 and 6.6.1",
            claims: &[DATE],
            summary: "every Date is one IMF-fixdate within 60 s of the harness's clock while the exchange lasted",
            faults: &[Fault::DateAhead, Fault::BadDateHeader],
            judges: &[Subject::Said(Said::Headers)],
            run: Run::EveryAnswer(date, Cases::Messages),
        },
        Rule {
            id: "message.interim",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md (a JSON-over-HTTP API); RFC 9110 section 15.2",
            claims: &[NO_INTERIM_TO_HTTP10],
            summary: "no answer to an HTTP/1.0 request is preceded by a 1xx",
            faults: &[Fault::ContinueToHttp10],
            judges: &[Subject::Said(Said::Http)],
            run: Run::EveryAnswer(interim, Cases::Messages),
        },
    ]
}

/// Bytes fit to quote: at most 120, controls escaped.
fn quoted(bytes: &[u8]) -> String {
    aggpay_internal::text::excerpt(&format!("{:?}", String::from_utf8_lossy(bytes)), 120)
}

/// Every head of an answer, interim ones first.
fn heads<'e>(e: &'e Observed<'_>) -> impl Iterator<Item = &'e Head> {
    e.wire
        .iter()
        .flat_map(|w| w.interim.iter().chain(std::iter::once(&w.head)))
}

/// Whether `line` is `HTTP/1.x SP 3DIGIT SP reason-phrase` (RFC 9112
/// section 4: the reason of HTAB, SP, VCHAR and obs-text).
fn is_status_line(line: &[u8]) -> bool {
    let Some(rest) = line.strip_prefix(b"HTTP/1.") else {
        return false;
    };
    match rest {
        [minor, b' ', a, b, c, b' ', reason @ ..] => {
            matches!(minor, b'0' | b'1')
                && (b'1'..=b'9').contains(a)
                && b.is_ascii_digit()
                && c.is_ascii_digit()
                && reason
                    .iter()
                    .all(|&r| r == b'\t' || r == b' ' || (0x21..=0x7e).contains(&r) || r >= 0x80)
        }
        _ => false,
    }
}

fn syntax(e: &Observed<'_>) -> Option<String> {
    for head in heads(e) {
        let line = head.status_line();
        if !is_status_line(line) {
            return Some(format!(
                "the status line {} is not `HTTP-version SP status-code SP [ reason-phrase ]`",
                quoted(line)
            ));
        }
        let bare = head.bare_lf_lines();
        if bare > 0 {
            return Some(format!(
                "{bare} line(s) of the {} head end with a bare LF, not CRLF: {}",
                head.status,
                quoted(&head.bytes)
            ));
        }
        let body_end = head.bytes.len().saturating_sub(2);
        if let Some(at) = head.bytes[..body_end]
            .windows(2)
            .position(|w| w[0] == b'\r' && w[1] != b'\n')
        {
            return Some(format!(
                "a bare CR within the {} head, at byte {at}: {}",
                head.status,
                quoted(&head.bytes)
            ));
        }
    }
    None
}

/// Fields whose definitions are a single value, not a list (RFC 9110
/// sections 6.6.1, 8.3, 8.6, 8.7, 8.8.2, 8.8.3, 10.2.2, 10.2.3, 10.2.4,
/// 14.4; RFC 9111 sections 5.1 and 5.3).
const SINGLETONS: &[&str] = &[
    "date",
    "content-type",
    "content-length",
    "content-location",
    "content-range",
    "etag",
    "last-modified",
    "location",
    "retry-after",
    "server",
    "age",
    "expires",
];

fn fields_once(e: &Observed<'_>) -> Option<String> {
    for head in heads(e) {
        for name in SINGLETONS {
            let values: Vec<&[u8]> = head.values(name).collect();
            if values.len() > 1 {
                let shown: Vec<String> = values.iter().map(|v| quoted(v)).collect();
                return Some(format!(
                    "the {} answer sends {name} {} times: {}",
                    head.status,
                    values.len(),
                    shown.join(", ")
                ));
            }
        }
    }
    None
}

fn framing(e: &Observed<'_>) -> Option<String> {
    framing_flaw(e)
}

/// What breaks the framing of `e`'s answer ([`FRAMING`]), if anything.
pub(crate) fn framing_flaw(e: &Exchange) -> Option<String> {
    let wire = e.wire.as_ref()?;
    let head = &wire.head;
    let codings = head.members("transfer-encoding");
    if !codings.is_empty() && head.values("content-length").next().is_some() {
        return Some(format!(
            "Content-Length {} beside Transfer-Encoding {}",
            quoted(head.values("content-length").next().unwrap_or_default()),
            codings.join(", ")
        ));
    }
    if !codings.is_empty() && e.request.form.http10 {
        return Some(format!(
            "Transfer-Encoding {} in the answer to an HTTP/1.0 request",
            codings.join(", ")
        ));
    }
    wire.chunk_flaws
        .first()
        .map(|flaw| format!("the chunked body: {flaw}"))
}

fn date(e: &Observed<'_>) -> Option<String> {
    let wire = e.wire.as_ref()?;
    let values: Vec<&[u8]> = wire.head.values("date").collect();
    // Absent: headers.date's to say; twice: each is judged.
    for value in values {
        let text = String::from_utf8_lossy(value);
        let Some(at) = imf_fixdate(&text) else {
            return Some(format!("Date {} is not an IMF-fixdate", quoted(value)));
        };
        let early = wire
            .sent_at
            .checked_sub(DATE_TOLERANCE + Duration::from_secs(1))?;
        let late = wire.read_at + DATE_TOLERANCE;
        if at < early || at > late {
            let off = |t: SystemTime| match t.duration_since(wire.read_at) {
                Ok(ahead) => format!("{} s ahead of", ahead.as_secs()),
                Err(behind) => format!("{} s behind", behind.duration().as_secs()),
            };
            return Some(format!(
                "Date {} is {} the harness's clock (tolerance {} s)",
                quoted(value),
                off(at),
                DATE_TOLERANCE.as_secs()
            ));
        }
    }
    None
}

/// The time of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC
/// 9110 section 5.6.7), exactly that form.
fn imf_fixdate(text: &str) -> Option<SystemTime> {
    const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    static PARSER: jiff::fmt::rfc2822::DateTimeParser = jiff::fmt::rfc2822::DateTimeParser::new();
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    let form = b.len() == 29
        && DAYS.contains(&&text[0..3])
        && &text[3..5] == ", "
        && digits(5..7)
        && b[7] == b' '
        && MONTHS.contains(&&text[8..11])
        && b[11] == b' '
        && digits(12..16)
        && b[16] == b' '
        && digits(17..19)
        && b[19] == b':'
        && digits(20..22)
        && b[22] == b':'
        && digits(23..25)
        && &text[25..] == " GMT";
    if !form {
        return None;
    }
    let at = PARSER.parse_timestamp(text).ok()?;
    let secs = u64::try_from(at.as_second()).ok()?;
    SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

fn interim(e: &Observed<'_>) -> Option<String> {
    interim_to_http10(e)
}

/// The 1xx before the answer to `e`'s HTTP/1.0 request
/// ([`NO_INTERIM_TO_HTTP10`]), if there was one.
pub(crate) fn interim_to_http10(e: &Exchange) -> Option<String> {
    let wire = e.wire.as_ref()?;
    let first = wire.interim.first()?;
    e.request.form.http10.then(|| {
        format!(
            "an HTTP/1.0 request was answered {} {} before its answer",
            first.status,
            quoted(first.status_line())
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::h1::Answer;

    #[test]
    fn imf_fixdates_only() {
        assert!(imf_fixdate("Sun, 06 Nov 1994 08:49:37 GMT").is_some());
        assert!(imf_fixdate("Sunday, 06-Nov-94 08:49:37 GMT").is_none());
        assert!(imf_fixdate("Sun, 6 Nov 1994 08:49:37 GMT").is_none());
        assert!(imf_fixdate("Sun, 06 Nov 1994 08:49:37 +0000").is_none());
    }

    #[test]
    fn status_lines_follow_the_grammar() {
        assert!(is_status_line(b"HTTP/1.1 200 OK"));
        assert!(is_status_line(b"HTTP/1.1 204 "));
        assert!(!is_status_line(b"HTTP/1.1 200"));
        assert!(!is_status_line(b"HTTP/2 200 OK"));
        assert!(!is_status_line(b"HTTP/1.1 200 O\x01K"));
    }

    #[test]
    fn heads_are_read_for_the_judges() {
        let answer =
            Answer::read_from(b"HTTP/1.1 200 OK\nDate: a\r\nDate: b\r\nContent-Length: 0\r\n\r\n")
                .unwrap();
        assert_eq!(answer.wire.head.bare_lf_lines(), 1);
        assert_eq!(answer.wire.head.values("date").count(), 2);
    }
}
