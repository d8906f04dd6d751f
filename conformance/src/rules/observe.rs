//! Rules that judge every answer of the run as it comes: every page of
//! every list, whatever rule asked for it, and every operation the table
//! routes it to. A field missing only on later pages, or on a record no
//! probe looked at, is seen wherever any request met it.

use serde_json::Value;

pub use super::log::Observed;
use super::{Check, Outcome};
use crate::contract::{Field, FieldKind};
use crate::http::Exchange;

/// A field's verdict under one rule.
pub enum Verdict {
    /// Not this rule's business.
    Skip,
    Ok,
    Bad(String),
}

/// Judges every field of a success's `data` by its operation's table;
/// the first violation `judge` finds, and how many more.
pub fn schema(
    e: &Observed<'_>,
    mut judge: impl FnMut(&Field, Option<&Value>) -> Verdict,
) -> Option<String> {
    let (Some(op), Some(walk)) = (e.op(), e.walk()) else {
        return None;
    };
    let mut bad = walk
        .fields()
        .iter()
        .filter_map(|met| match judge(met.field, met.value) {
            Verdict::Bad(why) => Some((met.at, why)),
            Verdict::Skip | Verdict::Ok => None,
        });
    // Only the first is written out: a broken server breaks a field on
    // every row.
    let (at, why) = bad.next()?;
    let first = format!("{}: {}: {why}", op.name, walk.path(at));
    Some(and_more(first, bad.count()))
}

/// Judges string fields of the kinds `applies` selects with `ok`; a field
/// missing or of another JSON type is `fields.required`'s business.
pub fn strings(
    e: &Observed<'_>,
    applies: impl Fn(FieldKind) -> bool,
    ok: impl Fn(FieldKind, &str) -> Result<(), String>,
) -> Option<String> {
    schema(e, |field, value| {
        if !applies(field.kind) {
            return Verdict::Skip;
        }
        match value {
            Some(Value::String(s)) => match ok(field.kind, s) {
                Ok(()) => Verdict::Ok,
                Err(why) => Verdict::Bad(why),
            },
            _ => Verdict::Skip,
        }
    })
}

/// The rows of every list in a success of `op`'s name.
pub fn rows_of<'e>(e: &'e Exchange, op: &str, key: &str) -> impl Iterator<Item = &'e Value> {
    e.op()
        .filter(|o| o.name == op)
        .and_then(|_| e.rows(key))
        .into_iter()
        .flatten()
}

/// The first of several findings, with how many more.
pub fn first_of(findings: impl IntoIterator<Item = String>) -> Option<String> {
    let mut it = findings.into_iter();
    let first = it.next()?;
    Some(and_more(first, it.count()))
}

fn and_more(first: String, more: usize) -> String {
    if more > 0 {
        format!("{first} (and {more} more in this answer)")
    } else {
        first
    }
}

/// Which answers a rule that judges every answer counts as its cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cases {
    /// Successes (it judges what a success holds).
    Successes,
    /// Every answer with content the server gave.
    Answers,
    /// Every message the server sent, answers without content (to a
    /// HEAD, a 304) included: it judges the message, not its content.
    Messages,
}

/// The verdict of a rule that judges every answer: its violations over
/// the run, and the answers it counts as cases.
pub fn from_log(c: &Check<'_>, counted: Cases) -> Outcome {
    let log = c.ctx.answers.lock();
    if log.answered == 0 {
        return Outcome::skipped("the server answered nothing");
    }
    let (violations, total) = log.of(c.rule);
    let cases = match counted {
        Cases::Successes => log.successes,
        Cases::Answers => log.answered - log.bodiless,
        Cases::Messages => log.answered,
    };
    drop(log);
    // A rule that judges every answer makes one claim (a test holds the
    // catalogue to it): its verdict on an answer is that claim's.
    let claim = c.main_claim();
    let mut failures: Vec<_> = violations
        .iter()
        .map(|(message, exchange)| c.fail(claim, exchange, message.clone()))
        .collect();
    if total > failures.len() as u64
        && let Some(last) = failures.last_mut()
    {
        last.message
            .push_str(&format!(" ({total} responses in all broke this rule)"));
    }
    Outcome::judged(cases, failures)
}
