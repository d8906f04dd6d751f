//! An operation's parameters: the aggregator, its path id and its query,
//! each with what API.md says of it.

use serde_json::{Value, json};

use super::*;

/// A query parameter.
pub(super) fn query_param(p: &Param) -> Value {
    use crate::contract::Domain;
    let (schema, description): (Value, String) = match (p.role, p.domain) {
        (Role::Limit { default, max, zero_is_default }, _) => {
            let mut words = String::from("Page size.");
            if let Some(d) = default {
                words.push_str(&format!(" Default {d}."));
            } else {
                words.push_str(" Default not shown by API.md.");
            }
            if zero_is_default {
                words.push_str(" 0 means the default.");
            }
            let mut schema = json!({ "type": "integer", "minimum": 0 });
            match max {
                Some(m) => {
                    // API.md states the maximum; what a server does with a
                    // larger value is its choice (schemathesis.toml).
                    schema["maximum"] = json!(m);
                    words.push_str(&format!(
                        " At most {m} rows a page (API.md); a server clamps a larger value to {m} or refuses it with 400 (both honour API.md)."
                    ));
                }
                None => words.push_str(
                    " Largest page not shown by API.md: a server may serve fewer rows than asked, or refuse a size above its own maximum with 400.",
                ),
            }
            (schema, words)
        }
        (Role::Offset, _) => (
            json!({ "type": "integer", "minimum": 0 }),
            "Rows skipped before the page.".to_owned(),
        ),
        (Role::Cursor, _) => (
            json!({ "type": "integer", "minimum": 0 }),
            "The previous page's next_cursor; omit or 0 for the first page.".to_owned(),
        ),
        (Role::Direction, _) => (
            json!({ "type": "string", "examples": ["ASC", "DESC"] }),
            "ASC or DESC, uppercase only; any other value (lowercase, empty) sorts DESC, so every string is valid.".to_owned(),
        ),
        (Role::Filter(f), value) => filter_param(f, value),
        (Role::Part { field, default }, Domain::Choice(values)) => (
            json!({ "type": "string", "enum": values, "default": default }),
            format!("Which part of the list, by `{field}`; {default} when omitted."),
        ),
        (Role::RowKind, _) => (
            json!({ "type": "boolean", "default": false }),
            "When true, settlement payouts are returned in settlement_transactions instead of the transactions.".to_owned(),
        ),
        (Role::Lookup(_), _) => (
            json!({ "type": "string", "minLength": 1 }),
            "The value looked up.".to_owned(),
        ),
        (_, Domain::Choice(values)) => (
            json!({ "type": "string", "enum": values }),
            "One of the values API.md lists.".to_owned(),
        ),
        (_, Domain::Bool) => (
            json!({ "type": "boolean" }),
            "When true, account title details are included.".to_owned(),
        ),
        _ => (json!({ "type": "string" }), String::new()),
    };
    let mut param = json!({
        "name": p.wire,
        "in": "query",
        "required": false,
        "schema": schema,
        "description": description,
    });
    if let Role::Filter(f) = p.role {
        match f.many {
            Many::Comma if param["schema"]["type"] == "array" => {
                param["style"] = json!("form");
                param["explode"] = json!(false);
            }
            Many::Repeated => {
                param["style"] = json!("form");
                param["explode"] = json!(true);
            }
            Many::Comma | Many::One => {}
        }
    }
    if p.named == crate::contract::Named::Wire {
        param["x-name-from"] = json!("WIRE.md (API.md gives only its purpose)");
    }
    param
}

/// A filter's schema and description.
pub(super) fn filter_param(
    f: crate::contract::Filter,
    domain: crate::contract::Domain,
) -> (Value, String) {
    use crate::contract::Domain;
    let item = match domain {
        Domain::Int | Domain::Unix => json!({ "type": "integer" }),
        Domain::Bool => json!({ "type": "boolean" }),
        Domain::Choice(values) if matches!(f.matching, Matching::Code(_)) => {
            let codes: Vec<i64> = values.iter().filter_map(|v| v.parse().ok()).collect();
            json!({ "type": "integer", "enum": codes })
        }
        Domain::Choice(values) => json!({ "type": "string", "enum": values }),
        // A refund filter's value is matched, never refused: a malformed
        // one keeps no rows.
        Domain::Token(_) if f.many == Many::Repeated => json!({ "type": "string" }),
        Domain::Token(prefix) => id(prefix),
        Domain::BatchToken => id("sb_"),
        Domain::Text => json!({ "type": "string" }),
    };
    let matching = match f.matching {
        Matching::Exact => format!("`{}` equals the value", f.field),
        Matching::Fragment => format!(
            "the value is a fragment of `{}` (whether case counts is not shown)",
            f.field
        ),
        Matching::Name => format!(
            "the value names `{}` (whole or as a fragment, with or without case: not shown)",
            f.field
        ),
        Matching::Bool => format!("`{}` is the value", f.field),
        Matching::Code(names) => format!(
            "`{}` is the name of the code: {}",
            f.field,
            names
                .iter()
                .enumerate()
                .map(|(i, n)| format!("{i} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Matching::OnOrAfter => format!("`{}` is on or after the value (UNIX seconds)", f.field),
        Matching::OnOrBefore => format!("`{}` is on or before the value (UNIX seconds)", f.field),
    };
    match f.many {
        Many::One => (item, format!("Keeps the rows where {matching}.")),
        // Identifiers are refused when malformed, one by one; names are
        // text, whose list is the text itself (empty entries ignored).
        Many::Comma if item.get("pattern").is_some() => (
            json!({ "type": "array", "minItems": 1, "items": item }),
            format!("Keeps the rows where {matching}, for any of several comma-separated values."),
        ),
        Many::Comma => (
            item,
            format!(
                "Keeps the rows where {matching}, for any of several comma-separated values (a comma-separated list)."
            ),
        ),
        Many::Repeated => (
            json!({ "type": "array", "minItems": 1, "items": item }),
            format!(
                "Keeps the rows where {matching}, for any of the values (the parameter repeated)."
            ),
        ),
    }
}

/// The account-info lookup: the IBAN, or the alias pair (both or
/// neither), as one object of query parameters (`form`, exploded: each
/// property is a parameter of its own on the wire), since OpenAPI can say
/// "one of two sets of parameters" only of an object's properties.
pub(super) fn account_info_parameters(parameters: Vec<Value>) -> Vec<Value> {
    const LOOKUP: [&str; 3] = ["iban", "alias_type", "alias_value"];
    let (lookup, mut rest): (Vec<Value>, Vec<Value>) = parameters
        .into_iter()
        .partition(|p| LOOKUP.iter().any(|n| p["name"] == *n));
    let properties: Map<String, Value> = lookup
        .iter()
        .map(|p| {
            let name = p["name"].as_str().unwrap_or_default().to_owned();
            let mut schema = p["schema"].clone();
            if name != "alias_type" {
                schema["minLength"] = json!(1);
            }
            (
                name,
                with_description(schema, p["description"].as_str().map(str::to_owned)),
            )
        })
        .collect();
    rest.push(json!({
        "name": "lookup",
        "in": "query",
        "required": true,
        "style": "form",
        "explode": true,
        "description": "What is looked up, each property a query parameter of its own: the IBAN, or alias_type and alias_value together (API.md: IBAN \"optional when alias parameters are supplied\"; alias value \"must be provided when alias_type is supplied\"). With both, the alias is looked up.",
        "schema": {
            "type": "object",
            "properties": properties,
            "additionalProperties": false,
            "anyOf": [{ "required": ["iban"] }, { "required": ["alias_type", "alias_value"] }],
            "dependentRequired": { "alias_type": ["alias_value"], "alias_value": ["alias_type"] }
        }
    }));
    rest
}

/// A path parameter.
pub(super) fn path_param(name: &str, prefix: &str, description: &str) -> Value {
    json!({
        "name": name,
        "in": "path",
        "required": true,
        "schema": id(prefix),
        "description": description,
    })
}

/// An operation's parameters: the aggregator, its path id, its query.
pub(super) fn parameters(op: &Op) -> Vec<Value> {
    let mut parameters = vec![json!({ "$ref": "#/components/parameters/aggregator-id" })];
    if let Some(id) = op.path_id {
        let description = match id.exact_len {
            Some(n) => format!(
                "{}..., exactly {n} characters (API.md Path parameters).",
                id.prefix
            ),
            None => format!("{}... (API.md Path parameters).", id.prefix),
        };
        parameters.push(path_param(id.name, id.prefix, &description));
    }
    for p in op.params {
        parameters.push(query_param(p));
    }
    if op.id == crate::contract::OpId::AccountInfo {
        parameters = account_info_parameters(parameters);
    }
    if op.id == crate::contract::OpId::TitleFetch
        && let Some(value) = parameters.iter_mut().find(|p| p["name"] == "alias_value")
    {
        value["required"] = json!(true);
        value["description"] = json!(
            "The till code looked up (API.md: \"must be provided when alias_type is supplied\")."
        );
    }
    parameters
}
