//! time.*: timestamps are RFC 3339 UTC, unset ones null, alias dates
//! calendar dates; on every sampled record.

use aggpay::rules as text_rules;

use super::fields::strings;
use super::{Check, Level, Outcome, Rule};
use crate::schema::Kind;

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "time.rfc3339-utc",
            level: Level::Required,
            source: "API.md typing rule 4",
            summary: "timestamps are RFC 3339 UTC strings, in every sampled record",
            faults: &["offset-timestamps", "unlinked-merchant-bad-timestamp"],
            check: timestamps,
            observe: None,
        },
        Rule {
            id: "time.null-not-empty",
            level: Level::Required,
            source: "API.md typing rule 4",
            summary: "nullable timestamps are JSON null when unset, never \"\"",
            faults: &["empty-string-null"],
            check: null_timestamps,
            observe: None,
        },
        Rule {
            id: "time.dates",
            level: Level::Required,
            source: "API.md typing rule 4 (alias dates)",
            summary: "alias dates are calendar dates YYYY-MM-DD",
            faults: &["datetime-alias-dates"],
            check: dates,
            observe: None,
        },
    ]
}

fn timestamps(c: &Check<'_>) -> Outcome {
    strings(
        c,
        |k| matches!(k, Kind::Ts | Kind::NullTs),
        |kind, s| {
            // "" for a nullable timestamp is `time.null-not-empty`'s business.
            if (kind == Kind::NullTs && s.is_empty()) || text_rules::is_utc_timestamp(s) {
                Ok(())
            } else {
                Err(format!("{s:?} is not an RFC 3339 UTC timestamp"))
            }
        },
    )
}

fn null_timestamps(c: &Check<'_>) -> Outcome {
    strings(
        c,
        |k| k == Kind::NullTs,
        |_, s| {
            if s.is_empty() {
                Err("an unset timestamp is \"\" instead of null".into())
            } else {
                Ok(())
            }
        },
    )
}

fn dates(c: &Check<'_>) -> Outcome {
    if let Err(why) = c.ctx.sample_or_why("alias") {
        return Outcome::skipped(why);
    }
    strings(
        c,
        |k| k == Kind::Date,
        |_, s| {
            if text_rules::is_date(s) {
                Ok(())
            } else {
                Err(format!("{s:?} is not a YYYY-MM-DD date"))
            }
        },
    )
}
