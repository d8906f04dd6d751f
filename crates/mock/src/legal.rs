//! Legal choices: the mirror of the faults. Where API.md leaves a server a
//! choice, the mock's own answer is one legal reading of it, not the
//! contract; each choice here makes the mock take another legal reading,
//! so that the conformance harness can be shown to pass every server that
//! honours API.md, not only one that answers as the mock does.
//!
//! Each choice names the text that leaves the room open (API.md, or
//! WIRE.md where it says both readings honour API.md).

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

macro_rules! legal {
    ($( $variant:ident = $name:literal: $desc:literal; allowed by $text:literal, )+) => {
        /// A legal reading of API.md other than the mock's own.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Legal {
            $( #[doc = $desc] $variant, )+
        }

        impl Legal {
            /// Every legal choice.
            pub const ALL: &'static [Legal] = &[$(Legal::$variant),+];

            /// The name used by `--legal`.
            pub fn name(self) -> &'static str {
                match self {
                    $( Legal::$variant => $name, )+
                }
            }

            /// What the server does with this choice.
            pub fn description(self) -> &'static str {
                match self {
                    $( Legal::$variant => $desc, )+
                }
            }

            /// The text of API.md (or WIRE.md) that leaves the choice open.
            pub fn allowed_by(self) -> &'static str {
                match self {
                    $( Legal::$variant => $text, )+
                }
            }
        }
    };
}

legal! {
    OffsetMax7 = "offset-max-7":
        "the merchant, rail-merchant, QR, refund and webhook lists return at most 7 rows a page, whatever the limit asked";
        allowed by "API.md Limits: \"Maximum page size of the merchant, rail-merchant, QR, refund and webhook lists: not shown.\"",
    OffsetDefault20 = "offset-default-20":
        "the offset lists return 20 rows a page when no limit is given";
        allowed by "API.md Access keys and Merchants: page size is a query parameter whose default is not shown; WIRE.md: \"reference default 10\" is the reference's, not API.md's",
    LimitAboveMax400 = "limit-above-max-400":
        "a limit above 100 gets 400 error.bad_request instead of being clamped to 100";
        allowed by "WIRE.md Cursor pagination: \"above 100 the mock clamps to 100 (a server may instead answer 400: both honour API.md)\"; API.md Access keys: page size 0 to 100",
    ExtraFields = "extra-fields":
        "every record of every success body carries a field API.md does not define, whose value changes on every request";
        allowed by "API.md Resources and their fields: the tables list the fields a record carries; nothing forbids others, nor says what they hold",
    PrettyJson = "pretty-json":
        "bodies are indented JSON, with whitespace between tokens";
        allowed by "API.md Conventions 2: \"Requests and responses are JSON.\" (JSON allows whitespace between tokens)",
    ConnectionClose = "connection-close":
        "every answer closes its connection (Connection: close)";
        allowed by "API.md Conventions: connection reuse is not shown",
    TimestampMicros = "timestamp-micros":
        "every timestamp carries six fraction digits";
        allowed by "API.md typing rule 4: \"they carry seconds precision, and some carry fractional seconds\"",
    UnknownAggregator404 = "unknown-aggregator-404":
        "a well-formed aggregator id that is not the key's gets 404 error.not_found (bare) instead of 401";
        allowed by "API.md Authentication 4: \"Whether the key must belong to the aggregator named in the path: not shown.\"; Aggregator: \"Errors: 404 error.not_found\"",
    Created201 = "created-201":
        "a created report export is answered 201 Created";
        allowed by "API.md Conventions 7: \"Success status code is stated only for the payment-charges operation (200)\"",
    CursorEndEmpty = "cursor-end-empty":
        "the last page of a cursor list (fewer rows than the limit) answers next_cursor \"\"";
        allowed by "API.md Settlements: cursor lists \"return next_cursor\" and the end of a list is not shown; WIRE.md Cursor pagination: a client stops at a next_cursor of \"\"",
    MerchantNamesExact = "merchant-names-exact":
        "the merchant list's names filter keeps merchants whose name is one of the values exactly, not a fragment";
        allowed by "API.md Merchants: \"merchant names: comma-separated list of names\" (names, where the access-key filter says name fragments)",
    CountPage = "count-page":
        "an offset list's count is the number of rows of the page";
        allowed by "API.md Conventions 5: \"List operations return their records under a named key of data together with a count\" (what it counts is not shown)",
    OtherErrorWords = "other-error-words":
        "401 and 400 messages in other words that still say what API.md says they say";
        allowed by "API.md Authentication 2: \"a message saying that a partner access key is required in the request header\"; Errors: 400 \"invalid request parameters (message says so)\"",
    OldSecretGrace = "old-secret-grace":
        "after a rotation the old secret keeps working until the key is rotated again";
        allowed by "API.md Authentication 5: \"Key scopes, expiry, and the treatment of an inactive key: not shown.\"; Access keys: rotation returns the new secret, and says nothing of the old",
}

impl fmt::Display for Legal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing an unknown legal choice's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownLegal(pub String);

impl fmt::Display for UnknownLegal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Legal::ALL.iter().map(|l| l.name()).collect();
        write!(
            f,
            "unknown legal choice `{}` (known: {})",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownLegal {}

impl FromStr for Legal {
    type Err = UnknownLegal;

    fn from_str(s: &str) -> Result<Self, UnknownLegal> {
        Legal::ALL
            .iter()
            .copied()
            .find(|l| l.name() == s)
            .ok_or_else(|| UnknownLegal(s.to_owned()))
    }
}

/// The legal choices a server makes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Choices(BTreeSet<Legal>);

impl Choices {
    pub(crate) fn insert(&mut self, legal: Legal) {
        self.0.insert(legal);
    }

    pub(crate) fn has(&self, legal: Legal) -> bool {
        self.0.contains(&legal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_roundtrip_are_unique_and_say_what_allows_them() {
        let mut names = std::collections::HashSet::new();
        for l in Legal::ALL {
            assert_eq!(l.name().parse::<Legal>().unwrap(), *l);
            assert!(names.insert(l.name()));
            assert!(!l.description().is_empty());
            assert!(
                l.allowed_by().starts_with("API.md") || l.allowed_by().starts_with("WIRE.md"),
                "{l}"
            );
        }
        let err = "nope".parse::<Legal>().unwrap_err().to_string();
        assert!(err.contains("offset-max-7"));
    }
}
