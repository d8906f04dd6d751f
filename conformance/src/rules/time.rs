//! time.*: timestamps are RFC 3339 UTC, unset ones null, alias dates
//! calendar dates; on every answer of the run.

use aggpay_internal::syntax;
use aggpay_mock::Fault;

use super::observe::{Cases, Observed, from_log, strings};
use super::{Check, Claim, Kind, Level, Outcome, Rule, Run};
use crate::contract::subject::{Said, Subject};
use crate::contract::{FieldKind, OpId};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "time.rfc3339-utc",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md typing rule 4",
            claims: &[Claim {
                holds: "a timestamp is an RFC 3339 UTC string",
                says: &[
                    "Timestamps are RFC 3339 UTC strings; they carry seconds precision, and some carry fractional seconds.",
                ],
            }],
            summary: "timestamps are RFC 3339 UTC strings, in every record of every answer",
            faults: &[Fault::OffsetTimestamps, Fault::UnlinkedMerchantBadTimestamp],
            judges: &[
                Subject::Field(|k| matches!(k, FieldKind::Ts | FieldKind::NullTs)),
                Subject::Said(Said::Timestamps),
            ],
            run: Run::EveryAnswer(timestamps, Cases::Successes),
        },
        Rule {
            id: "time.null-not-empty",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md typing rule 4",
            claims: &[Claim {
                holds: "an unset nullable timestamp is null",
                says: &["Nullable timestamps are JSON null when unset."],
            }],
            summary: "nullable timestamps are JSON null when unset, never \"\"",
            faults: &[Fault::EmptyStringNull],
            judges: &[
                Subject::Field(|k| k == FieldKind::NullTs),
                Subject::Said(Said::Timestamps),
            ],
            run: Run::EveryAnswer(null_timestamps, Cases::Successes),
        },
        Rule {
            id: "time.dates",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md typing rule 4 (alias dates)",
            claims: &[Claim {
                holds: "an alias date is a calendar date YYYY-MM-DD",
                says: &["Alias dates are calendar dates (YYYY-MM-DD)."],
            }],
            summary: "alias dates are calendar dates YYYY-MM-DD",
            faults: &[Fault::DatetimeAliasDates],
            judges: &[
                Subject::Field(|k| k == FieldKind::Date),
                Subject::Said(Said::Timestamps),
            ],
            run: Run::EveryAnswerAnd(dates, dates_verdict),
        },
    ]
}

fn timestamps(e: &Observed<'_>) -> Option<String> {
    strings(
        e,
        |k| matches!(k, FieldKind::Ts | FieldKind::NullTs),
        |kind, s| {
            // "" for a nullable timestamp is `time.null-not-empty`'s business.
            if (kind == FieldKind::NullTs && s.is_empty()) || syntax::is_utc_timestamp(s) {
                Ok(())
            } else {
                Err(format!("{s:?} is not an RFC 3339 UTC timestamp"))
            }
        },
    )
}

fn null_timestamps(e: &Observed<'_>) -> Option<String> {
    strings(
        e,
        |k| k == FieldKind::NullTs,
        |_, s| {
            if s.is_empty() {
                Err("an unset timestamp is \"\" instead of null".into())
            } else {
                Ok(())
            }
        },
    )
}

fn dates(e: &Observed<'_>) -> Option<String> {
    strings(
        e,
        |k| k == FieldKind::Date,
        |_, s| {
            if syntax::is_date(s) {
                Ok(())
            } else {
                Err(format!("{s:?} is not a YYYY-MM-DD date"))
            }
        },
    )
}

/// Only an alias carries dates: without one read, nothing was judged.
fn dates_verdict(c: &Check<'_>) -> Outcome {
    match c.ctx.sample_or_why(OpId::Alias) {
        Ok(_) => from_log(c, Cases::Successes),
        Err(why) => Outcome::skipped(why),
    }
}
