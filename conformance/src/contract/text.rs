//! The contract table held to API.md's own text: every row of a field
//! table, every operation's Errors line, every parameter named or given
//! by purpose, and every sentence that leaves something unshown is
//! accounted for, by the table, a room, a rule's quote, or [`SILENT`].
//! A sentence nobody accounted for fails a test here, not a user's CI as
//! a false alarm.

/// Sentences of API.md that leave something unshown and that neither a
/// room nor a rule needs, each with the reason: what they leave open is
/// nothing a request of the harness can meet.
pub const SILENT: &[(&str, &str)] = &[
    (
        "Operations that create or change payments, refunds, QR codes, merchants, aliases, webhook endpoints or settlements, and operations that read one payment, refund or settlement batch on its own: not shown.",
        "those operations are not offered: the harness sends nothing to them",
    ),
    (
        "Allowed values of kind and status in the response beyond those listed under States: not shown.",
        "the export's kind and status are judged as `REPORT_KIND_*` and `REPORT_STATUS_*` names (room `export-status`), any such name",
    ),
    (
        "Allowed values of type, status and reason: not shown.",
        "the refund's type, status and reason are typed as strings, any value (room `open-values`)",
    ),
    (
        "Allowed values of type, and of the alias status below, beyond those listed: not shown.",
        "typed as strings, any value (room `open-values`)",
    ),
    (
        "Meaning of is_super and vault_enabled: not shown.",
        "typed as booleans; no meaning is judged",
    ),
    (
        "Fields of the payment record itself (only its charges are described): not shown.",
        "the payment record is never read",
    ),
    (
        "Transitions: not shown.",
        "no rule expects a state to follow another; a record's state is judged as a value of its field",
    ),
    (
        "Full list of event names: not shown.",
        "event_filter_json is judged as a JSON array of strings, any names",
    ),
    (
        "Event payload shape, delivery headers, signing scheme and retry behaviour: not shown.",
        "no event is delivered to the harness",
    ),
    (
        "Operations that create, change or delete webhook endpoints: not shown.",
        "those operations are not offered",
    ),
    (
        "HTTP status numbers for error.bad_request and error.internal_server_error responses: not shown.",
        "the error table beside it shows them (400, 500) and the operations list them by number (\"Errors: 400 error.bad_request\"), and API.md wins over itself nowhere else: the harness takes the numbers listed",
    ),
    (
        "Deprecation policy and compatibility guarantees: not shown.",
        "nothing a request can meet",
    ),
];

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::SILENT;
    use crate::contract::resources::TABLES;
    use crate::contract::{FieldKind, Named, OPS, ROOMS};

    /// `spec/API.md`, as written.
    fn api() -> String {
        let path = format!("{}/../spec/API.md", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn norm(text: &str) -> String {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// Every text the harness quotes: the rooms' texts (their quoted
    /// parts), every rule's quotes, and [`SILENT`].
    fn quoted() -> Vec<String> {
        let mut out: Vec<String> = ROOMS
            .iter()
            .flat_map(|r| r.text.split('"').skip(1).step_by(2))
            .map(norm)
            .collect();
        out.extend(
            crate::rules::catalogue()
                .iter()
                .flat_map(|r| r.says().into_iter().map(norm)),
        );
        out.extend(SILENT.iter().map(|(s, _)| norm(s)));
        out
    }

    /// The sentences of `line` (split after a full stop or a colon
    /// before a capital), without their list numbers.
    fn sentences(line: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut current = String::new();
        let chars: Vec<char> = line.trim().chars().collect();
        for (i, c) in chars.iter().enumerate() {
            current.push(*c);
            let ends = *c == '.'
                && chars.get(i + 1) == Some(&' ')
                && chars.get(i + 2).is_some_and(|n| n.is_uppercase());
            if ends {
                out.push(current.trim().to_owned());
                current.clear();
            }
        }
        if !current.trim().is_empty() {
            out.push(current.trim().to_owned());
        }
        out.into_iter()
            .map(|s| {
                s.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ' ')
                    .to_owned()
            })
            .collect()
    }

    /// The words by which API.md leaves a server a choice: what it does
    /// not show, what "most" records do, what a server "may" do, what was
    /// only "observed".
    const OPEN_WORDS: &[&str] = &["not shown", "Most ", " may ", "observed"];

    #[test]
    fn every_sentence_that_leaves_something_unshown_is_accounted_for() {
        let quoted = quoted();
        let mut missing = Vec::new();
        for line in api().lines().filter(|l| !l.starts_with('|')) {
            for sentence in sentences(line) {
                let Some(word) = OPEN_WORDS.iter().find(|w| sentence.contains(**w)) else {
                    continue;
                };
                let s = norm(&sentence);
                // The clause that leaves something open.
                let part = s
                    .split(['.', ';'])
                    .map(str::trim)
                    .rfind(|c| c.contains(word.trim()))
                    .unwrap_or(&s)
                    .to_owned();
                // Quoted whole, its unshown part quoted, or a quote that
                // is most of it (a room quoting what the sentence leaves
                // open, without its "not shown").
                let holds = |q: &String| {
                    q.contains(&s)
                        || q.contains(&part)
                        || (s.contains(q.as_str()) && 2 * q.len() >= s.len())
                };
                if !quoted.iter().any(holds) {
                    missing.push(s);
                }
            }
        }
        assert!(
            missing.is_empty(),
            "sentences of API.md that leave something unshown, accounted for by no room, no rule's quote and no entry of SILENT: {missing:#?}"
        );
        for (s, why) in SILENT {
            assert!(
                norm(&api()).contains(&norm(s)),
                "SILENT quotes {s:?}, not in API.md"
            );
            assert!(!why.is_empty());
        }
    }

    /// The rows of the first table after the heading `### NAME`.
    fn table_rows(api: &str, name: &str) -> Vec<Vec<String>> {
        let at = [" ", "\n"]
            .iter()
            .filter_map(|end| api.find(&format!("### {name}{end}")))
            .min();
        let Some(at) = at else {
            return Vec::new();
        };
        api[at..]
            .lines()
            .skip(1)
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .skip(2)
            .map(|l| {
                l.trim_matches('|')
                    .split('|')
                    .map(|c| c.trim().to_owned())
                    .collect()
            })
            .collect()
    }

    /// Whether a field of `kind` may hold an empty string.
    fn takes_empty(kind: FieldKind) -> bool {
        match kind {
            FieldKind::Str
            | FieldKind::PrefixOrEmpty(_)
            | FieldKind::StrOrNull
            | FieldKind::AnyObj
            | FieldKind::Obj(_) => true,
            FieldKind::OneOf(values) => values.contains(&""),
            _ => false,
        }
    }

    #[test]
    fn every_row_of_every_field_table_is_in_the_table_with_its_notes() {
        let api = api();
        let mut problems = Vec::new();
        for (name, fields) in TABLES {
            let rows = table_rows(&api, name);
            if *name == "BankAccount" {
                // A sentence, not a table: its fields are the record's.
                continue;
            }
            assert!(!rows.is_empty(), "API.md has no table for {name}");
            for row in rows {
                let notes = row.get(2).cloned().unwrap_or_default();
                let notes = if row.len() == 2 {
                    row[1].clone()
                } else {
                    notes
                };
                for field in row[0].split(',').map(|f| f.trim().trim_matches('`')) {
                    let Some(f) = fields.iter().find(|f| f.name == field) else {
                        problems.push(format!("{name}.{field}: a row of API.md the table lacks"));
                        continue;
                    };
                    // "may be empty" of the field itself (not of its parts).
                    let empty = notes.starts_with("may be empty")
                        || notes.ends_with("; may be empty")
                        || notes.contains("may be an empty string");
                    if empty && !takes_empty(f.kind) {
                        problems.push(format!(
                            "{name}.{field}: API.md says it may be empty, the table's kind does not take \"\""
                        ));
                    }
                    if notes.contains("observed") && matches!(f.kind, FieldKind::OneOf(_)) {
                        problems.push(format!(
                            "{name}.{field}: API.md gives observed values only, the table closes the list"
                        ));
                    }
                }
            }
        }
        assert!(problems.is_empty(), "{problems:#?}");
    }

    /// The numbers of the `Errors:` line of each operation.
    fn listed_errors(api: &str, method: &str, path: &str) -> Option<BTreeSet<u16>> {
        let heading = format!(
            "**{method} {}**",
            aggpay_internal::syntax::documented_path(path)
        );
        let at = api.find(&heading)?;
        let rest = &api[at + heading.len()..];
        let end = rest
            .find("**GET ")
            .into_iter()
            .chain(rest.find("**PUT "))
            .chain(rest.find("**POST "))
            .chain(rest.find("\n## "))
            .min()
            .unwrap_or(rest.len());
        let block = &rest[..end];
        if block.contains("Error bodies listed: none") {
            return Some(BTreeSet::new());
        }
        let line = &block[block.find("Errors:")?..];
        let line = &line[..line.find('\n').unwrap_or(line.len())];
        let line = &line[..line.find(". ").unwrap_or(line.len())];
        Some(
            line.split(|c: char| !c.is_ascii_digit())
                .filter(|w| w.len() == 3)
                .filter_map(|w| w.parse().ok())
                .collect(),
        )
    }

    #[test]
    fn every_operation_lists_the_errors_api_md_gives_it() {
        let api = api();
        for op in OPS {
            let Some(listed) = listed_errors(&api, op.method, op.path) else {
                panic!("{}: API.md has no Errors line for it", op.name);
            };
            let table: BTreeSet<u16> = op.errors.iter().copied().collect();
            assert_eq!(
                table, listed,
                "{}: the table's errors against API.md's",
                op.name
            );
        }
    }

    #[test]
    fn every_parameter_api_md_names_is_named_so_and_the_others_are_by_purpose() {
        let api = api();
        for op in OPS.iter().filter(|o| !o.params.is_empty()) {
            let heading = format!(
                "**{} {}**",
                op.method,
                aggpay_internal::syntax::documented_path(op.path)
            );
            let at = api.find(&heading).unwrap_or_else(|| panic!("{heading}"));
            let rest = &api[at + heading.len()..];
            let end = rest[1..].find("**").map_or(rest.len(), |i| i + 1);
            let block = &rest[..end];
            // The names API.md shows: in a table of names, a row's first
            // cell that is an identifier; in a table of purposes, only the
            // names the heading excepts ("purpose only, except alias_type").
            let identifier =
                |c: &str| !c.is_empty() && c.chars().all(|ch| ch.is_ascii_lowercase() || ch == '_');
            let header = block.lines().find(|l| l.starts_with('|')).unwrap_or("");
            let shown: BTreeSet<String> = if header.starts_with("| Name") {
                block
                    .lines()
                    .filter(|l| l.starts_with('|'))
                    .skip(2)
                    .map(|l| {
                        let cell = l.trim_matches('|').split('|').next().unwrap_or("");
                        cell.trim().to_owned()
                    })
                    .filter(|c| identifier(c))
                    .collect()
            } else {
                block
                    .split("except ")
                    .skip(1)
                    .filter_map(|rest| rest.split(')').next())
                    .map(str::to_owned)
                    .filter(|c| identifier(c))
                    .collect()
            };
            let named: BTreeSet<String> = op
                .params
                .iter()
                .filter(|p| p.named == Named::Api)
                .map(|p| p.wire.to_owned())
                .collect();
            assert_eq!(named, shown, "{}: parameters API.md names", op.name);
        }
    }
}
