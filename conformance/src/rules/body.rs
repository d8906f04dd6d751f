//! body.*: every body, success or error, is JSON: labelled as JSON, read
//! strictly, one meaning.

use super::observe::{Cases, Observed};
use super::{Claim, Kind, Level, Rule, Run};
use crate::contract::subject::{Said, Subject};
use aggpay_mock::Fault;

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "body.json",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Conventions 2; Errors (both body shapes are JSON); RFC 8259 (grammar, UTF-8, no byte order mark); RFC 9110 section 8.4 (content codings)",
            claims: &[Claim {
                holds: "a response body is one JSON text",
                says: &["Requests and responses are JSON."],
            }],
            summary: "every response body, success or error, is one JSON text once its content codings (of those the request accepted) are undone: UTF-8 without a byte order mark, RFC 8259's grammar, nothing after the text",
            faults: &[Fault::TextErrors],
            judges: &[Subject::Said(Said::JsonWithKey)],
            run: Run::EveryAnswer(json, Cases::Answers),
        },
        Rule {
            id: "body.media-type",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Conventions 2; RFC 9110 section 8.3 (the media type of a representation is its Content-Type)",
            claims: &[Claim {
                holds: "a JSON body is labelled with a JSON media type",
                says: &[
                    "Requests and responses are JSON.",
                    "RFC 9110 section 8.3: The \"Content-Type\" header field indicates the media type of the associated representation",
                ],
            }],
            summary: "a JSON body is labelled with a JSON media type (application/json, or a +json type): labelled text/plain it is text to every client that honours the label",
            faults: &[Fault::ContentTypeText, Fault::RefundsTextPlain],
            judges: &[Subject::Said(Said::JsonMeaning)],
            run: Run::EveryAnswer(media_type, Cases::Answers),
        },
        Rule {
            id: "body.one-meaning",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Conventions 2; RFC 8259 section 4 (\"When the names within an object are not unique, the behavior of software that receives such an object is unpredictable\")",
            claims: &[Claim {
                holds: "no object names a member twice with values that differ",
                says: &[
                    "Requests and responses are JSON.",
                    "RFC 8259 section 4: When the names within an object are not unique, the behavior of software that receives such an object is unpredictable.",
                ],
            }],
            summary: "no object names a member twice with values that differ: one client reads the first value, another the last, and serde's derive refuses the body",
            faults: &[Fault::DuplicateCount],
            judges: &[Subject::Said(Said::JsonMeaning)],
            run: Run::EveryAnswer(one_meaning, Cases::Answers),
        },
    ]
}

/// Whether a Content-Type names a JSON media type: `application/json`
/// or a structured `+json` type (RFC 6839), parameters aside.
pub fn is_json_media_type(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || essence
            .split_once('/')
            .is_some_and(|(kind, sub)| kind == "application" && sub.ends_with("+json"))
}

fn media_type(e: &Observed<'_>) -> Option<String> {
    // A body that is not JSON is body.json's; a missing label the
    // observation wire.content-type-json's.
    e.json.as_ref()?;
    let content_type = e.header("content-type")?;
    (!is_json_media_type(content_type)).then(|| {
        format!(
            "a JSON body labelled Content-Type {:?}: the label says it is not JSON (RFC 9110 section 8.3)",
            aggpay_internal::text::excerpt(content_type, 80)
        )
    })
}

fn one_meaning(e: &Observed<'_>) -> Option<String> {
    let d = e.duplicates.iter().find(|d| !d.agrees())?;
    let values: Vec<String> = d
        .values
        .iter()
        .map(|v| crate::http::show(Some(v)))
        .collect();
    Some(format!(
        "the body names {} {} times, with values that differ ({}): a client that keeps the first member reads {}, one that keeps the last {} (RFC 8259 section 4)",
        d.path,
        d.values.len(),
        values.join(", "),
        values.first().map_or("", String::as_str),
        values.last().map_or("", String::as_str),
    ))
}

fn json(e: &Observed<'_>) -> Option<String> {
    if let Some(why) = &e.undecodable {
        return Some(why.clone());
    }
    e.json.is_none().then(|| why_not_json(&e.body))
}

/// Why a body is not JSON, in words a staging team can act on: empty, a
/// byte order mark, bytes that are not UTF-8 (and where), or the
/// parser's own reason with its byte offset.
pub fn why_not_json(body: &[u8]) -> String {
    if body.is_empty() {
        return "the body is empty, not JSON".to_owned();
    }
    if body.starts_with(b"\xef\xbb\xbf") {
        return "the body starts with a byte order mark (\\u{feff}), which JSON text sent over a network must not (RFC 8259 section 8.1)".to_owned();
    }
    if let Err(e) = std::str::from_utf8(body) {
        let at = e.valid_up_to();
        return format!(
            "the body is not UTF-8: byte 0x{:02x} at byte offset {at} (RFC 8259 section 8.1: JSON is UTF-8)",
            body[at]
        );
    }
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(_) => "the body is JSON".to_owned(),
        Err(e) => {
            let offset = byte_offset(body, e.line(), e.column());
            let byte = body
                .get(offset)
                .map(|b| format!(" (byte 0x{b:02x})"))
                .unwrap_or_default();
            format!("the body is not JSON: {e}, at byte offset {offset}{byte}")
        }
    }
}

/// The byte offset (from 0) of a 1-based line and column.
fn byte_offset(body: &[u8], line: usize, column: usize) -> usize {
    let start: usize = body
        .split(|b| *b == b'\n')
        .take(line.saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    start + column.saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::{is_json_media_type, why_not_json};

    #[test]
    fn json_media_types_are_told_from_others() {
        for yes in [
            "application/json",
            "Application/JSON; charset=utf-8",
            "application/problem+json",
            " application/json ;charset=UTF-8",
        ] {
            assert!(is_json_media_type(yes), "{yes}");
        }
        for no in [
            "text/plain",
            "text/json",
            "application/jsonp",
            "",
            "application/x-json-stream",
        ] {
            assert!(!is_json_media_type(no), "{no}");
        }
    }

    #[test]
    fn a_body_that_is_not_json_says_why_and_where() {
        assert!(why_not_json(b"").contains("empty"));
        assert!(why_not_json(b"\xef\xbb\xbf{}").contains("byte order mark"));
        let w = why_not_json(b"{\"a\":\xff}");
        assert!(
            w.contains("not UTF-8") && w.contains("0xff at byte offset 5"),
            "{w}"
        );
        let w = why_not_json(b"{\"a\":1,}");
        assert!(w.contains("byte offset 7 (byte 0x7d)"), "{w}");
        let w = why_not_json(b"error 500");
        assert!(w.contains("expected value"), "{w}");
    }
}
