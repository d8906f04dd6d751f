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
pub use rule::{Check, Finding, Level, Outcome, Phase, Rule, Run, Status};

/// The families of properties: each of their rules sends its cases to
/// every place of the contract table its subjects hold for, and reports
/// where it did (`Outcome::places`).
pub const FAMILIES_OF_PROPERTIES: &[&str] = &["near", "own", "writes"];

mod rule;

/// The families of rules, in report order (the exchange rules last: they
/// judge every exchange of the run). A family is a file of this folder
/// with `pub fn rules() -> Vec<Rule>`, its rule ids `family.name`; a new
/// family is its file and its name here.
macro_rules! families {
    ($($family:ident),+ $(,)?) => {
        $(mod $family;)+

        /// The family names, in report order.
        #[cfg(test)]
        const FAMILIES: &[&str] = &[$(stringify!($family)),+];

        mod catalogue {
            use super::Rule;

            /// Every rule, in report order.
            pub fn catalogue() -> Vec<Rule> {
                let mut rules = Vec::new();
                $(rules.extend(super::$family::rules());)+
                rules
            }
        }
    };
}

families!(
    auth, errors, scope, fields, ids, amounts, time, lists, client, cursor, offset, filters,
    lookups, exports, keys, near, own, writes, explore, agree, status, input, envelope, headers,
    body, wire,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_in_their_family_file_and_every_rule_has_a_fault() {
        let rules = catalogue();
        let mut ids = std::collections::HashSet::new();
        for r in &rules {
            assert!(ids.insert(r.id), "duplicate {}", r.id);
            let family = r.id.split('.').next().unwrap();
            assert!(FAMILIES.contains(&family), "{} has no family file", r.id);
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

    /// A required check rests on a sentence of API.md: a rule quoting
    /// only WIRE.md (the choices the mock made) is an observation.
    #[test]
    fn every_required_rule_rests_on_a_sentence_of_api_md() {
        let api = spec("API.md");
        for r in catalogue().iter().filter(|r| r.level == Level::Required) {
            assert!(
                r.says.iter().any(|q| api.contains(&spec_text(q))),
                "{}: a required rule quotes no sentence of API.md",
                r.id
            );
        }
    }

    /// A quote as the specification's text is compared: whitespace
    /// collapsed.
    fn spec_text(quote: &str) -> String {
        quote.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn every_rule_quotes_the_text_it_rests_on_verbatim() {
        let (api, wire) = (spec("API.md"), spec("WIRE.md"));
        for r in catalogue() {
            let from_spec = r.source.starts_with("API.md") || r.source.starts_with("WIRE.md");
            assert_eq!(
                !r.says.is_empty(),
                from_spec,
                "{}: a rule from API.md or WIRE.md quotes it, and only such a rule",
                r.id
            );
            for quote in r.says {
                assert!(
                    api.contains(quote) || wire.contains(quote),
                    "{}: {quote:?} is not in spec/API.md or spec/WIRE.md",
                    r.id
                );
            }
        }
    }
}
