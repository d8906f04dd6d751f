//! headers.*: every response carries Content-Length and Date. Judged on
//! every exchange of the run, as it happens.

use super::observe::{Cases, Observed};
use super::{Claim, Kind, Level, Rule, Run};
use crate::contract::subject::{Said, Subject};
use aggpay_mock::Fault;

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "headers.content-length",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Conventions 4",
            claims: &[Claim {
                holds: "Content-Length is present and is the body's length",
                says: &["Responses carry the headers Content-Length and Date."],
            }],
            summary: "every response carries Content-Length, equal to the body's length",
            faults: &[Fault::Chunked],
            judges: &[Subject::Said(Said::Headers)],
            run: Run::EveryAnswer(content_length, Cases::Answers),
        },
        Rule {
            id: "headers.date",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Conventions 4",
            claims: &[Claim {
                holds: "a Date header holds an HTTP date",
                says: &["Responses carry the headers Content-Length and Date."],
            }],
            summary: "every response carries a Date header holding an HTTP date",
            faults: &[Fault::BadDateHeader],
            judges: &[Subject::Said(Said::Headers)],
            run: Run::EveryAnswer(date, Cases::Answers),
        },
    ]
}

fn content_length(e: &Observed<'_>) -> Option<String> {
    if let Some(extra) = e.wire.as_ref().map(|w| w.leftover).filter(|n| *n > 0) {
        return Some(format!(
            "{extra} bytes came after the {} bytes Content-Length gives",
            e.received
        ));
    }
    match e
        .header("content-length")
        .map(|v| v.trim().parse::<usize>())
    {
        None => Some("no Content-Length header".into()),
        Some(Ok(n)) if n == e.received => None,
        Some(_) => Some(format!(
            "Content-Length {} but the body has {} bytes",
            aggpay_internal::text::excerpt(e.header("content-length").unwrap_or(""), 40),
            e.received
        )),
    }
}

fn date(e: &Observed<'_>) -> Option<String> {
    match e.header("date") {
        None => Some("no Date header".into()),
        Some(d) if is_http_date(d) => None,
        Some(d) => Some(format!("Date {d:?} is not an HTTP date")),
    }
}

fn is_http_date(value: &str) -> bool {
    static PARSER: jiff::fmt::rfc2822::DateTimeParser = jiff::fmt::rfc2822::DateTimeParser::new();
    value.trim().ends_with("GMT") && PARSER.parse_timestamp(value.trim()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::is_http_date;

    #[test]
    fn http_dates() {
        assert!(is_http_date("Wed, 25 Nov 2026 22:40:55 GMT"));
        assert!(!is_http_date("yesterday"));
    }
}
