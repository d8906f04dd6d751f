//! The contract table as an OpenAPI 3.1 document: the 17 operations with
//! their path ids and query parameters, request and response bodies as
//! JSON Schema 2020-12, the error conditions, the key header as a security
//! scheme, and the legal room where JSON Schema can say it. Every
//! operation and resource quotes the line of API.md it rests on, read from
//! the copy of the specification in `spec/` (so a quote is verbatim by
//! construction). `aggpay-conformance openapi` prints it; `openapi.json`
//! at the top of the repository is that output, and a test keeps the two
//! equal.
//!
//! Where the document draws a line it is one API.md draws, never one of the
//! mock's own: a page size of at most 100 where API.md states it, an
//! identifier's prefix, the 39-character batch token, a page size that is
//! not negative. A cursor or a UNIX time is an integer, bounded by
//! nothing API.md states. What a server does with a value outside a line
//! (refuse it, clamp it, match nothing with it) API.md leaves open
//! ("Which parameter values cause error.bad_request: not shown"), and
//! `schemathesis.toml` widens a fuzzer's expectations accordingly, each
//! with its reason.

use serde_json::{Map, Value, json};

mod params;

use params::{parameters, path_param};

use crate::contract::resources::{self as r, CountForm, Field, FieldKind};
use crate::contract::{
    ERRORS, Effect, Form, Many, Matching, Message, OPS, Op, Param, ROOMS, Role, Success,
};

/// The specification the document quotes.
const API_MD: &str = include_str!("../../../spec/API.md");

/// The characters an identifier may hold after its prefix (URL-unreserved,
/// as the tools' identifier types take them).
const ID_TAIL: &str = "[A-Za-z0-9._~-]";

/// The schema of an identifier: a string of `prefix` and the identifier
/// characters after it; `ak_` never `ak_tok_` (a prefix of its own, said
/// with `not` rather than a lookahead, which not every validator reads).
fn id(prefix: &str) -> Value {
    match prefix {
        "sb_" => json!({ "type": "string", "pattern": format!("^sb_{ID_TAIL}{{36}}$") }),
        "ak_" => json!({
            "type": "string",
            "pattern": format!("^ak_{ID_TAIL}+$"),
            "not": { "pattern": "^ak_tok_" }
        }),
        p => json!({ "type": "string", "pattern": format!("^{p}{ID_TAIL}+$") }),
    }
}

const NUMERIC: &str = "^(0|[1-9][0-9]*)$";
const PAISA: &str = "^(0|-?[1-9][0-9]*)$";
/// RFC 3339 in UTC: `Z` or `+00:00` (room `timestamp-utc`), a fraction of
/// 1 to 9 digits or none (room `timestamp-fraction`).
const UTC: &str =
    "^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?([Zz]|\\+00:00)$";

fn with_description(mut schema: Value, description: Option<String>) -> Value {
    if let (Some(d), Value::Object(map)) = (description, &mut schema) {
        map.insert("description".to_owned(), Value::from(d));
    }
    schema
}

/// The schema of a named resource table, by reference, or `None`.
fn named(fields: &[Field]) -> Option<&'static str> {
    r::TABLES
        .iter()
        .find(|(_, f)| std::ptr::eq(*f, fields))
        .map(|(name, _)| *name)
}

fn reference(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

fn kind_schema(kind: FieldKind) -> Value {
    match kind {
        FieldKind::Str => json!({ "type": "string" }),
        FieldKind::Bool => json!({ "type": "boolean" }),
        FieldKind::Int => json!({ "type": "integer" }),
        FieldKind::Obj(fields) => named(fields).map_or_else(|| object(fields, None), reference),
        FieldKind::AnyObj => json!({ "type": "object" }),
        FieldKind::Arr([]) => json!({
            "type": "array",
            "description": "Element shape not shown by API.md: any objects.",
            "items": { "type": "object" }
        }),
        FieldKind::Arr(fields) => json!({
            "type": "array",
            "items": named(fields).map_or_else(|| object(fields, None), reference)
        }),
        FieldKind::Numeric | FieldKind::NumStr => json!({ "type": "string", "pattern": NUMERIC }),
        FieldKind::Prefix(p) => id(p),
        FieldKind::PrefixOrEmpty(p) => json!({
            "anyOf": [
                { "const": "" },
                id(p)
            ]
        }),
        FieldKind::Batch => id("sb_"),
        FieldKind::Amount => json!({
            "type": "string",
            "pattern": PAISA,
            "description": "An amount in paisa: a decimal integer string."
        }),
        FieldKind::Currency => json!({ "type": "string", "pattern": "^[A-Z]{3}$" }),
        FieldKind::Ts => json!({ "type": "string", "format": "date-time", "pattern": UTC }),
        FieldKind::NullTs => json!({
            "anyOf": [
                { "type": "string", "format": "date-time", "pattern": UTC },
                { "type": "null" }
            ]
        }),
        FieldKind::Date => json!({
            "type": "string",
            "format": "date",
            "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
        }),
        FieldKind::StrOrNull => json!({ "type": ["string", "null"] }),
        FieldKind::EventJson => json!({
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": { "type": "array", "items": { "type": "string" } }
        }),
        // The access key's two shapes are a rule of the whole record.
        FieldKind::KeyPart => json!({ "type": "string" }),
        FieldKind::Count(CountForm::Text) => json!({ "type": "string", "pattern": NUMERIC }),
        FieldKind::Count(CountForm::Integer) => json!({ "type": "integer", "minimum": 0 }),
        FieldKind::OneOf(values) => json!({ "type": "string", "enum": values }),
        FieldKind::Named(prefix) => json!({
            "type": "string",
            "pattern": format!("^{prefix}"),
            "description": format!("A {prefix}* name; values beyond those listed are not shown by API.md.")
        }),
    }
}

/// An object schema with every field required; other fields are allowed
/// (room `undefined-fields`). `resource` names the API.md table whose rows
/// describe the fields.
fn object(fields: &[Field], resource: Option<&str>) -> Value {
    let notes = resource.map(table_notes).unwrap_or_default();
    let properties: Map<String, Value> = fields
        .iter()
        .map(|f| {
            let note = notes
                .iter()
                .find(|(name, _)| name == f.name)
                .map(|(_, note)| note.clone())
                .filter(|n| !n.is_empty());
            (
                f.name.to_owned(),
                with_description(kind_schema(f.kind), note),
            )
        })
        .collect();
    let required: Vec<&str> = fields.iter().map(|f| f.name).collect();
    let mut schema = json!({
        "type": "object",
        "required": required,
        "properties": properties,
    });
    if fields.iter().any(|f| f.kind == FieldKind::KeyPart) {
        schema["oneOf"] = json!([
            {
                "properties": {
                    "id": { "pattern": NUMERIC },
                    "token": id("ak_")
                }
            },
            {
                "properties": {
                    "id": id("ak_"),
                    "token": id("ak_tok_")
                }
            }
        ]);
    }
    schema
}

/// The rows of API.md's table for `resource`: each field name and the
/// notes (or meaning) the row gives it, verbatim.
fn table_notes(resource: &str) -> Vec<(String, String)> {
    let Some(start) = API_MD.find(&format!("\n### {resource} ")) else {
        return Vec::new();
    };
    let section = &API_MD[start + 1..];
    let end = section[4..].find("\n### ").map_or(section.len(), |e| e + 4);
    let mut rows = Vec::new();
    for line in section[..end].lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() < 3 || cells[0] == "Field" || cells[0].starts_with("---") {
            continue;
        }
        for name in cells[0].split(", ") {
            rows.push((name.to_owned(), cells[2].to_owned()));
        }
    }
    rows
}

/// The line of API.md that states `op`, verbatim.
fn op_line(op: &Op) -> &'static str {
    let head = format!(
        "**{} /v1/aggregators/{{aggregator-id}}{}**",
        op.method, op.path
    );
    #[allow(
        clippy::expect_used,
        reason = "the embedded API.md states every operation of the table: a test renders them all"
    )]
    API_MD
        .lines()
        .find(|l| l.starts_with(&head))
        .expect("API.md states every operation")
}

/// The heading of API.md's section for a resource.
fn resource_heading(name: &str) -> Option<&'static str> {
    API_MD
        .lines()
        .find(|l| l.starts_with(&format!("### {name} ")) || *l == format!("### {name}"))
        .or_else(|| API_MD.lines().find(|l| l.starts_with(&format!("{name}: "))))
}

/// The headers every response carries (Conventions 4).
fn response_headers() -> Value {
    json!({
        "Content-Length": { "required": true, "schema": { "type": "string", "pattern": NUMERIC } },
        "Date": { "required": true, "schema": { "type": "string" } }
    })
}

/// A message pattern that holds `phrase`, in any case.
fn any_case(phrase: &str) -> String {
    phrase
        .chars()
        .map(|c| {
            if c.is_ascii_alphabetic() {
                format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase())
            } else if c.is_ascii_alphanumeric() || c == ' ' {
                c.to_string()
            } else {
                format!("\\{c}")
            }
        })
        .collect()
}

/// The schema of an error answer of `status`, from the error table.
fn error_schema(status: u16) -> Value {
    #[allow(
        clippy::expect_used,
        reason = "every status asked is one of the error table's: a test renders them all"
    )]
    let case = ERRORS
        .iter()
        .find(|e| e.status == status)
        .expect("the error table holds every status asked");
    let message = match case.message {
        Message::Exactly(text) => json!({
            "type": "string",
            "pattern": format!("^\\s*{}\\.?\\s*$", any_case(text))
        }),
        // Each phrase anywhere (a pattern matches anywhere unless
        // anchored), all of them.
        Message::Says(phrases) => json!({
            "type": "string",
            "allOf": phrases
                .iter()
                .map(|p| json!({ "pattern": any_case(p) }))
                .collect::<Vec<_>>()
        }),
        Message::Described => json!({ "type": "string", "minLength": 1 }),
    };
    let body = json!({
        "type": "object",
        "required": ["code", "message"],
        "properties": { "code": { "const": case.code }, "message": message }
    });
    let schema = match case.form {
        Form::Bare => body,
        Form::Envelope => json!({
            "type": "object",
            "required": ["api_version", "error"],
            "properties": { "api_version": { "type": "string" }, "error": body }
        }),
    };
    with_description(
        schema,
        Some(format!(
            "{} form, {}: {}",
            case.form.as_str(),
            case.code,
            case.condition
        )),
    )
}

fn error_response(status: u16, why: &str) -> Value {
    json!({
        "description": why,
        "headers": response_headers(),
        "content": { "application/json": { "schema": error_schema(status) } }
    })
}

fn operation(op: &Op) -> Value {
    let line = op_line(op);
    let mut out = json!({
        "operationId": op.name,
        "summary": summary(op),
        "description": format!("API.md {}: \"{line}\"", op.section),
        "tags": [op.section],
        "parameters": parameters(op),
        "responses": responses(op),
    });
    if op.effect == Effect::Rotation {
        out["description"] = json!(format!(
            "{} Never repeat it blindly: a second rotation replaces the secret the first one returned; a lost answer is recovered from the key list, where secrets are returned in clear.",
            out["description"].as_str().unwrap_or_default()
        ));
    }
    if op.id == crate::contract::OpId::ReportExport {
        out["requestBody"] = report_export_body();
    }
    out
}

/// An operation's answers: its success, and each error it may meet.
fn responses(op: &Op) -> Map<String, Value> {
    let success_key = match op.success {
        Success::Exactly200 => "200",
        Success::Any2xx => "2XX",
    };
    let data = named(op.data).map_or_else(|| object(op.data, None), reference);
    let mut responses = Map::new();
    responses.insert(
        success_key.to_owned(),
        json!({
            "description": match op.success {
                Success::Exactly200 => "Success: 200, as API.md states for this operation (Conventions 7).",
                Success::Any2xx => "Success: the status is not shown by API.md (Conventions 7), so any 2xx.",
            },
            "headers": response_headers(),
            "content": { "application/json": { "schema": {
                "type": "object",
                "required": ["api_version", "data"],
                "properties": { "api_version": { "const": "v1" }, "data": data }
            } } }
        }),
    );
    let mut statuses: Vec<(u16, &str)> = vec![(
        401,
        "The key header is missing or not accepted (Authentication 2).",
    )];
    if !op.params.is_empty() || op.path_id.is_some() || op.id == crate::contract::OpId::ReportExport
    {
        statuses.push((
            400,
            "Invalid request parameters. Which values cause it: not shown by API.md (Errors).",
        ));
    }
    // The aggregator path id of the wrong shape.
    if !statuses.iter().any(|(s, _)| *s == 400) {
        statuses.push((400, "A malformed aggregator id."));
    }
    if op.lists_error(404)
        || op.path_id.is_some()
        || op.id == crate::contract::OpId::AccountInfo
        || op.id == crate::contract::OpId::TitleFetch
    {
        statuses.push((
            404,
            "The resource does not exist, or the aggregator is not the key's (Authentication 4).",
        ));
    } else {
        statuses.push((
            404,
            "The aggregator is not the key's: 401 or 404 (Authentication 4: not shown).",
        ));
    }
    if op.lists_error(500) {
        statuses.push((500, "An internal failure."));
    }
    statuses.sort_by_key(|(s, _)| *s);
    for (status, why) in statuses {
        responses.insert(status.to_string(), error_response(status, why));
    }
    // API.md Errors: "HTTP status numbers for error.bad_request and
    // error.internal_server_error responses: not shown": its body under
    // another client-error number.
    responses.insert(
        "4XX".to_owned(),
        error_response(
            400,
            "error.bad_request under another client-error number than 400 (API.md Errors: the numbers are not shown).",
        ),
    );
    responses
}

/// The report export's request body.
fn report_export_body() -> Value {
    json!({
            "required": true,
            "description": "API.md: \"Which of settlement_batch_id and kind are required: not shown.\"; WIRE.md fixes both as required (400 without either). A well-formed batch token that names no batch, or a rail merchant that does not exist, is refused with 400 too (WIRE.md): a schema cannot know which exist.",
            "content": { "application/json": { "schema": {
                "type": "object",
                "required": ["settlement_batch_id", "kind"],
                "allOf": [
                    {
                        "if": { "properties": { "kind": { "const": "REPORT_KIND_BATCH" } } },
                        "then": { "properties": { "merchant_id": { "const": "" } } }
                    },
                    {
                        "if": { "properties": { "kind": { "const": "REPORT_KIND_MERCHANT" } } },
                        "then": {
                            "required": ["merchant_id"],
                            "properties": { "merchant_id": id("mer_") }
                        }
                    }
                ],
                "properties": {
                    "settlement_batch_id": with_description(id("sb_"), Some("batch token to export".to_owned())),
                    "kind": { "type": "string", "enum": ["REPORT_KIND_BATCH", "REPORT_KIND_MERCHANT"] },
                    "merchant_id": {
                        "anyOf": [{ "const": "" }, id("mer_")],
                        "description": "optional; rail merchant (mer_) for kind REPORT_KIND_MERCHANT; empty for REPORT_KIND_BATCH"
                    }
                }
            } } }
    })
}

fn summary(op: &Op) -> String {
    let what = match op.id {
        crate::contract::OpId::Aggregator => "Read the aggregator record",
        crate::contract::OpId::Keys => "List access keys",
        crate::contract::OpId::Rotate => "Rotate an access key",
        crate::contract::OpId::Merchants => "List aggregator merchants",
        crate::contract::OpId::RailMerchants => "List rail merchants",
        crate::contract::OpId::RailMerchant => "Read a rail merchant",
        crate::contract::OpId::Qrs => "List QR codes",
        crate::contract::OpId::Charges => "Read a payment's charges",
        crate::contract::OpId::Refunds => "List refunds",
        crate::contract::OpId::Batches => "List settlement batches",
        crate::contract::OpId::Transactions => "List a batch's transactions",
        crate::contract::OpId::ReportExport => "Create a settlement report export",
        crate::contract::OpId::AccountInfo => "Look up account metadata by IBAN or mobile alias",
        crate::contract::OpId::TitleFetch => "Fetch account title metadata by till-code alias",
        crate::contract::OpId::Alias => "Read an alias",
        crate::contract::OpId::Ledger => "Read the ledger account",
        crate::contract::OpId::Webhooks => "List webhook endpoints",
    };
    what.to_owned()
}

/// The document.
pub fn document() -> Value {
    let mut paths = Map::new();
    for op in OPS {
        let path = aggpay_internal::syntax::documented_path(op.path);
        if let Some(item) = paths
            .entry(path)
            .or_insert_with(|| json!({}))
            .as_object_mut()
        {
            item.insert(op.method.to_ascii_lowercase(), operation(op));
        }
    }
    let mut schemas = Map::new();
    for (name, fields) in r::TABLES {
        let mut schema = object(fields, Some(name));
        if let Some(heading) = resource_heading(name) {
            schema["description"] = json!(format!("API.md: \"{heading}\""));
        }
        schemas.insert((*name).to_owned(), schema);
    }
    let rooms: Vec<Value> = ROOMS
        .iter()
        .map(|room| {
            json!({
                "room": room.name,
                "text": room.text,
                "readings": room.readings,
                "judged": room.judged,
            })
        })
        .collect();
    json!({
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {
            "title": "Aggregator Settlement and Payments API",
            "version": "1.0.0",
            "description": "The aggregator settlement and payments API as its contract (API.md, with the wire names WIRE.md fixes) states it, generated by aggpay-conformance from its contract table. Where API.md leaves a server a choice, the document leaves it open (x-legal-room lists each choice); a bound a legal server may clamp instead of refusing is described, not declared.",
            "license": { "name": "MIT OR Apache-2.0", "identifier": "MIT OR Apache-2.0" }
        },
        "servers": [{
            "url": "{base_url}",
            "description": "The service base address, with its own path prefix (API.md Conventions 1).",
            "variables": { "base_url": { "default": "http://127.0.0.1:8080" } }
        }],
        "security": [{ "aggregatorKey": [] }],
        "tags": OPS.iter().map(|o| o.section).fold(Vec::<&str>::new(), |mut v, s| { if !v.contains(&s) { v.push(s); } v }).into_iter().map(|s| json!({ "name": s })).collect::<Vec<_>>(),
        "paths": paths,
        "components": {
            "securitySchemes": {
                "aggregatorKey": {
                    "type": "apiKey",
                    "in": "header",
                    "name": aggpay_internal::syntax::KEY_HEADER,
                    "description": "API.md Authentication 1: \"It is an API-key scheme carried in a request header only.\""
                }
            },
            "parameters": {
                "aggregator-id": path_param("aggregator-id", "agg_", "The aggregator every operation is scoped to (agg_...).")
            },
            "schemas": schemas,
        },
        "x-legal-room": rooms,
    })
}

/// The document as it is committed: pretty JSON, keys sorted (whatever
/// order `serde_json`'s features give its maps), and a final newline.
pub fn render() -> String {
    let mut out = serde_json::to_string_pretty(&sorted(document())).unwrap_or_default();
    out.push('\n');
    out
}

fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}
