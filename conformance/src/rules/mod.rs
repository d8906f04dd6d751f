//! The rule catalogue: one file per family (the part of a rule id before
//! the dot), the model, and the support every rule uses.

pub(crate) mod forms;
mod log;
mod observe;
mod paging;
mod support;
mod values;

pub use auth::HEADER_CASE;
pub use catalogue::catalogue;
pub use log::AnswerLog;
pub use observe::Cases;
#[cfg(test)]
pub use rule::Evidence;
pub use rule::{Check, Claim, Finding, Kind, Level, NotJudged, Outcome, Phase, Rule, Run, Status};

/// The claims the random sequences (`crate::explore`) make beside the
/// rules that make them first, and quote as those rules do.
pub(crate) mod claims {
    pub(crate) use super::auth::UNAUTHORIZED;
    pub(crate) use super::envelope::VALID_REQUEST_SUCCEEDS;
    pub(crate) use super::errors::{NO_SERVER_ERROR, UNKNOWN_ID_IS_404};
    pub(crate) use super::exports::EXPORT_IS_ASKED;
    pub(crate) use super::fields::STATE_BOUND;
    pub(crate) use super::ids::ANSWERS_FOR_ID;
    pub(crate) use super::keys::ROTATES_THE_KEY_ASKED;
    pub(crate) use super::lookups::ANSWERS_FOR_IBAN;
    pub(crate) use super::state::FAILED_ROTATION_UNDONE;
}

mod rule;

// The families of rules: one file each, declared with plain `mod` lines
// so that rustfmt sees every file (it does not follow modules a macro
// declares).
mod agree;
mod amounts;
mod auth;
mod body;
mod client;
mod cursor;
mod envelope;
mod errors;
mod explore;
mod exports;
mod fields;
mod filters;
mod headers;
mod ids;
mod input;
mod keys;
mod lists;
mod lookups;
mod message;
mod near;
mod offset;
mod own;
mod requests;
mod scope;
mod state;
mod status;
mod time;
mod wire;
mod writes;

/// A family's rules.
type Family = fn() -> Vec<Rule>;

/// The families of rules, in report order (the exchange rules last: they
/// judge every exchange of the run). A family is a file of this folder
/// with `pub fn rules() -> Vec<Rule>`, its rule ids `family.name`; a new
/// family is its file, its `mod` line and its entry here.
const FAMILIES: &[(&str, Family)] = &[
    ("auth", auth::rules),
    ("errors", errors::rules),
    ("scope", scope::rules),
    ("fields", fields::rules),
    ("ids", ids::rules),
    ("amounts", amounts::rules),
    ("time", time::rules),
    ("lists", lists::rules),
    ("client", client::rules),
    ("cursor", cursor::rules),
    ("offset", offset::rules),
    ("filters", filters::rules),
    ("lookups", lookups::rules),
    ("exports", exports::rules),
    ("keys", keys::rules),
    ("near", near::rules),
    ("own", own::rules),
    ("writes", writes::rules),
    ("explore", explore::rules),
    ("agree", agree::rules),
    ("status", status::rules),
    ("input", input::rules),
    ("envelope", envelope::rules),
    ("headers", headers::rules),
    ("body", body::rules),
    ("message", message::rules),
    ("state", state::rules),
    ("requests", requests::rules),
    ("wire", wire::rules),
];

mod catalogue {
    use super::Rule;

    /// Every rule, in report order.
    pub fn catalogue() -> Vec<Rule> {
        super::FAMILIES
            .iter()
            .flat_map(|(_, rules)| rules())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_in_their_family_file_of_one_kind_and_every_rule_has_a_fault() {
        let rules = catalogue();
        let mut ids = std::collections::HashSet::new();
        let mut kinds = std::collections::HashMap::new();
        for r in &rules {
            assert!(ids.insert(r.id), "duplicate {}", r.id);
            let family = r.id.split('.').next().unwrap();
            assert_eq!(
                *kinds.entry(family).or_insert(r.kind),
                r.kind,
                "{}: the rules of one family file are of one kind",
                r.id
            );
            assert!(
                FAMILIES.iter().any(|(name, _)| *name == family),
                "{} has no family file",
                r.id
            );
            assert_eq!(
                r.level == Level::Observation,
                family == "wire",
                "{}: observations, and only they, are wire.*",
                r.id
            );
            assert!(!r.faults.is_empty(), "{} has no fault that breaks it", r.id);
        }
    }

    /// The text of a specification in `spec/`, whitespace collapsed.
    fn spec(name: &str) -> String {
        let path = format!("{}/../spec/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// A sentence of an RFC, as a claim quotes it: `RFC <n> section <s>: ...`.
    fn is_rfc(quote: &str) -> bool {
        quote.starts_with("RFC ") && quote.contains(" section ") && quote.contains(": ")
    }

    /// A required check rests on a sentence of API.md: each claim of a
    /// required rule quotes one (a claim quoting only WIRE.md, the
    /// choices the mock made, belongs to an observation).
    #[test]
    fn every_claim_of_a_required_rule_rests_on_a_sentence_of_api_md() {
        let api = spec("API.md");
        for r in catalogue().iter().filter(|r| r.level == Level::Required) {
            assert!(
                !r.claims.is_empty(),
                "{}: a required rule makes no claim",
                r.id
            );
            for claim in r.claims {
                assert!(
                    claim.says.iter().any(|q| api.contains(&spec_text(q))),
                    "{}: the claim {:?} quotes no sentence of API.md",
                    r.id,
                    claim.holds
                );
            }
        }
    }

    /// A quote as the specification's text is compared: whitespace
    /// collapsed.
    fn spec_text(quote: &str) -> String {
        quote.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// Every claim quotes something, and every quote is in `spec/`
    /// verbatim, or is an RFC's sentence named by its section.
    #[test]
    fn every_claim_quotes_the_text_it_rests_on_verbatim() {
        let (api, wire) = (spec("API.md"), spec("WIRE.md"));
        for r in catalogue() {
            assert!(!r.claims.is_empty(), "{}: a rule makes no claim", r.id);
            for claim in r.claims {
                assert!(
                    !claim.says.is_empty() && !claim.holds.is_empty(),
                    "{}: a claim says what it holds and quotes what it rests on",
                    r.id
                );
                for quote in claim.says {
                    let quote = spec_text(quote);
                    assert!(
                        api.contains(&quote) || wire.contains(&quote) || is_rfc(&quote),
                        "{}: {quote:?} is not in spec/API.md or spec/WIRE.md, nor an RFC's sentence",
                        r.id
                    );
                }
            }
        }
    }

    /// A rule that judges every answer fails its one claim
    /// (`observe::from_log`): a second would never be named.
    #[test]
    fn a_rule_that_judges_every_answer_makes_one_claim() {
        for r in catalogue() {
            if let Run::EveryAnswer(..) = r.run {
                assert_eq!(r.claims.len(), 1, "{}", r.id);
            }
        }
    }

    /// One claim, one meaning: two rules that make the same claim share
    /// one constant, never two texts holding a server to one thing.
    #[test]
    fn a_claim_text_has_one_set_of_sentences() {
        let mut seen: std::collections::HashMap<&str, &[&str]> = Default::default();
        for r in catalogue() {
            for claim in r.claims {
                let says = *seen.entry(claim.holds).or_insert(claim.says);
                assert_eq!(says, claim.says, "{}: {:?}", r.id, claim.holds);
            }
        }
    }
}
