//! The published OpenAPI document: `openapi` prints the committed
//! `openapi.json`; it is an OpenAPI 3.1 document by the specification's
//! own schema, with its 17 operations; and
//! every answer the mock gives during a full strict run of the harness
//! validates against the document's schema for its operation and status,
//! so that the contract table, the mock and the document cannot drift
//! apart.

use std::collections::BTreeSet;

use aggpay_conformance::EXIT_OK;
use aggpay_mock::{MockConfig, MockServer, Served};
use serde_json::Value;

use crate::support::{harness, json_run};

const DOCUMENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../openapi.json");

fn document() -> Value {
    serde_json::from_str(&std::fs::read_to_string(DOCUMENT).unwrap()).unwrap()
}

#[test]
fn openapi_prints_the_committed_document() {
    let (code, out, _) = harness(&["openapi"]);
    assert_eq!(code, EXIT_OK);
    if std::env::var_os("AGGPAY_BLESS").is_some() {
        std::fs::write(DOCUMENT, &out).unwrap();
    }
    assert!(
        out == std::fs::read_to_string(DOCUMENT).unwrap(),
        "openapi.json is stale: rerun with AGGPAY_BLESS=1"
    );
}

/// The OpenAPI 3.1 specification's own JSON Schema of a document
/// (OAI/OpenAPI-Specification, `schemas/v3.1/schema.json`, 2022-10-07,
/// Apache-2.0), as Schemathesis validates a document with it.
const OAS_31_SCHEMA: &str = include_str!("oas-3.1-schema.json");

#[test]
fn the_document_is_an_openapi_3_1_document_of_the_17_operations() {
    let doc = document();
    let meta: Value = serde_json::from_str(OAS_31_SCHEMA).unwrap();
    let id = meta["$id"].as_str().unwrap().to_owned();
    let mut compiler = boon::Compiler::new();
    compiler.add_resource(&id, meta).unwrap();
    let mut schemas = boon::Schemas::new();
    let index = compiler.compile(&id, &mut schemas).unwrap();
    if let Err(e) = schemas.validate(&doc, index) {
        panic!("openapi.json is not an OpenAPI 3.1 document: {e:#}");
    }
    assert_eq!(doc["openapi"], "3.1.0");
    let methods = ["get", "put", "post", "delete", "patch"];
    let mut ids = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        assert!(
            path.starts_with("/v1/aggregators/{aggregator-id}"),
            "{path}"
        );
        for (method, op) in item.as_object().unwrap() {
            if !methods.contains(&method.as_str()) {
                continue;
            }
            ids.insert(op["operationId"].as_str().unwrap().to_owned());
            assert!(
                op["description"]
                    .as_str()
                    .is_some_and(|d| d.contains("API.md")),
                "{method} {path} quotes no API.md line"
            );
            assert!(
                op["responses"].as_object().is_some_and(|r| !r.is_empty()),
                "{method} {path}"
            );
        }
    }
    assert_eq!(ids.len(), 17, "{ids:?}");
    assert!(doc["components"]["securitySchemes"]["aggregatorKey"].is_object());
}

/// The document's operation for a request, with its path template.
fn operation<'d>(doc: &'d Value, method: &str, target: &str) -> Option<(&'d str, &'d Value)> {
    let path = target.split('?').next().unwrap_or("");
    let segments: Vec<&str> = path.split('/').collect();
    doc["paths"]
        .as_object()?
        .iter()
        .find_map(|(template, item)| {
            let parts: Vec<&str> = template.split('/').collect();
            let fits = parts.len() == segments.len()
                && parts
                    .iter()
                    .zip(&segments)
                    .all(|(t, s)| t.starts_with('{') || t == s);
            let op = &item[method.to_ascii_lowercase()];
            (fits && op.is_object()).then_some((template.as_str(), op))
        })
}

/// One token of a JSON Pointer in a URI fragment: `~` and `/` escaped as
/// the pointer needs, braces percent-encoded as the URI needs.
fn escape(token: &str) -> String {
    token
        .replace('~', "~0")
        .replace('/', "~1")
        .replace('{', "%7B")
        .replace('}', "%7D")
}

/// Where the document is loaded from (it names no `$id`: its `$ref`s are
/// fragments of itself).
const HOME: &str = "http://aggpay.invalid/openapi.json";

/// The document's schemas, compiled on demand: the document itself is
/// the root resource, so that its `$ref`s into `components` resolve.
struct Validator {
    compiler: boon::Compiler,
    schemas: boon::Schemas,
}

impl Validator {
    fn new(doc: &Value) -> Self {
        let mut compiler = boon::Compiler::new();
        compiler.set_default_draft(boon::Draft::V2020_12);
        compiler.enable_format_assertions();
        compiler.add_resource(HOME, doc.clone()).unwrap();
        Self {
            compiler,
            schemas: boon::Schemas::new(),
        }
    }

    /// Why `value` does not fit the schema at `pointer`, if it does not.
    fn misfit(&mut self, pointer: &str, value: &Value) -> Option<String> {
        let index = self
            .compiler
            .compile(&format!("{HOME}#{pointer}"), &mut self.schemas)
            .unwrap_or_else(|e| panic!("{pointer}: {e}"));
        self.schemas
            .validate(value, index)
            .err()
            .map(|e| format!("{e:#}"))
    }
}

/// Why `served` does not fit the document, if it does not.
fn misfit(doc: &Value, validator: &mut Validator, served: &Served) -> Option<String> {
    let (template, op) = operation(doc, &served.method, &served.target)?;
    let responses = op["responses"].as_object()?;
    let status = served.status.to_string();
    let range = format!("{}XX", served.status / 100);
    let Some(key) = [status.as_str(), range.as_str()]
        .into_iter()
        .find(|k| responses.contains_key(*k))
    else {
        return Some(format!("status {status} is not documented"));
    };
    let media = &responses[key]["content"]["application/json"];
    if !served.content_type.starts_with("application/json") || !media.is_object() {
        return Some(format!("Content-Type {}", served.content_type));
    }
    let pointer = format!(
        "/paths/{}/{}/responses/{key}/content/application~1json/schema",
        escape(template),
        served.method.to_ascii_lowercase()
    );
    let body: Value = match serde_json::from_slice(&served.body) {
        Ok(body) => body,
        Err(e) => return Some(format!("body is not JSON: {e}")),
    };
    validator.misfit(&pointer, &body)
}

#[test]
fn every_answer_of_a_strict_run_fits_the_document() {
    fits(MockConfig::new().seed(9), &["--strict"]);
}

/// The document leaves open what API.md leaves open: a mock making every
/// compatible legal choice at once (extra fields, `+00:00`, 202, other
/// words, other page sizes...) fits it too.
#[test]
fn every_answer_of_a_mock_making_every_legal_choice_fits_the_document() {
    let mut config = MockConfig::new().seed(9);
    for legal in aggpay_mock::Legal::compatible() {
        config = config.legal(legal);
    }
    fits(config, &[]);
}

/// Runs the harness against a mock of `config` and checks every answer
/// of an operation against the document.
fn fits(config: MockConfig, extra: &[&str]) {
    let doc = document();
    let server = MockServer::start(config.journal(1_000_000)).unwrap();
    let (code, report) = json_run(&server, extra);
    assert_eq!(code, EXIT_OK, "{}", report["summary"]);
    let served = server.journal();
    let mut checked = 0;
    let mut operations = BTreeSet::new();
    let mut statuses = BTreeSet::new();
    let mut misfits = Vec::new();
    let mut validator = Validator::new(&doc);
    for s in &served {
        // Answers outside the API (a route that does not exist, a method
        // an operation does not take) have no schema.
        let Some((template, _)) = operation(&doc, &s.method, &s.target) else {
            continue;
        };
        // A 505 refuses the request's HTTP version (requests.http10 sends
        // HTTP/1.0), below what an operation's document describes.
        if s.status == 505 {
            continue;
        }
        checked += 1;
        operations.insert(format!("{} {template}", s.method));
        statuses.insert(s.status);
        if let Some(why) = misfit(&doc, &mut validator, s) {
            misfits.push(format!("{} {} -> {}: {why}", s.method, s.target, s.status));
        }
    }
    assert!(
        misfits.is_empty(),
        "{} of {checked}: {misfits:#?}",
        misfits.len()
    );
    assert!(checked > 500, "{checked} answers checked");
    assert_eq!(operations.len(), 17, "{operations:#?}");
    for status in [200, 400, 401, 404] {
        assert!(
            statuses.contains(&status),
            "no {status} was checked: {statuses:?}"
        );
    }
}

#[test]
fn a_broken_answer_does_not_fit_the_document() {
    // The validation can fail: a body the document does not allow is told.
    let doc = document();
    let served = server_answer;
    let mut validator = Validator::new(&doc);
    let good = served(200, r#"{"api_version":"v1","data":{"count":0,"keys":[]}}"#);
    assert_eq!(misfit(&doc, &mut validator, &good), None);
    for (status, body) in [
        (
            200,
            r#"{"api_version":"v1","data":{"count":"0","keys":[]}}"#,
        ),
        (200, r#"{"api_version":"v2","data":{"count":0,"keys":[]}}"#),
        (
            401,
            r#"{"code":"error.unauthorized_access","message":"no"}"#,
        ),
        (418, r#"{}"#),
    ] {
        assert!(
            misfit(&doc, &mut validator, &served(status, body)).is_some(),
            "{status} {body}"
        );
    }
}

/// An answer of the key list, as the journal keeps it.
fn server_answer(status: u16, body: &str) -> Served {
    let server = MockServer::start(MockConfig::new().journal(1)).unwrap();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let url = format!(
        "{}/v1/aggregators/{}/keys",
        server.url(),
        server.aggregator_id()
    );
    agent
        .get(&url)
        .header(
            aggpay_internal::syntax::KEY_HEADER,
            server.secret_key().expose(),
        )
        .call()
        .unwrap();
    let mut served = server.journal().pop().unwrap();
    served.status = status;
    served.body = body.as_bytes().to_vec();
    served
}
