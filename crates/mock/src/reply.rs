//! Responses in API.md's shapes.

use serde::Serialize;
use serde_json::Value;

use crate::fault::{Fault, Faults};
use crate::wire::{Envelope, ErrorBody, ErrorEnvelope};

/// A response about to be written: status and JSON body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
    pub(crate) allow: Option<&'static str>,
    pub(crate) content_type: &'static str,
}

const JSON: &str = "application/json";

fn json(status: u16, value: &impl Serialize) -> Reply {
    match serde_json::to_vec(value) {
        Ok(body) => Reply {
            status,
            body,
            allow: None,
            content_type: JSON,
        },
        Err(err) => internal(&format!("serialize response: {err}")),
    }
}

fn bare(status: u16, code: &str, message: impl Into<String>) -> Reply {
    json(
        status,
        &ErrorBody {
            code,
            message: &message.into(),
        },
    )
}

fn envelope(status: u16, code: &str, message: impl Into<String>) -> Reply {
    json(
        status,
        &ErrorEnvelope {
            api_version: "v1",
            error: ErrorBody {
                code,
                message: &message.into(),
            },
        },
    )
}

/// 200 with `{"api_version": "v1", "data": …}`.
pub(crate) fn ok(data: &impl Serialize) -> Reply {
    json(200, &Envelope::v1(data))
}

/// 400 bare: the message starts as WIRE.md's and adds the detail.
pub(crate) fn bad_request(detail: impl std::fmt::Display) -> Reply {
    bare(
        400,
        "error.bad_request",
        format!("invalid request parameters: {detail}"),
    )
}

/// 404 bare.
pub(crate) fn not_found() -> Reply {
    bare(404, "error.not_found", "requested resource not found")
}

/// 405 bare, with the methods the path takes.
pub(crate) fn method_not_allowed(allow: &'static str) -> Reply {
    let mut reply = bare(
        405,
        "error.bad_request",
        format!("invalid request parameters: method not allowed, use {allow}"),
    );
    reply.allow = Some(allow);
    reply
}

/// 401 envelope.
pub(crate) fn unauthorized() -> Reply {
    envelope(
        401,
        "error.unauthorized_access",
        "partner access key is required in request header",
    )
}

/// 500 envelope.
pub(crate) fn internal(detail: &str) -> Reply {
    let body = serde_json::json!({
        "api_version": "v1",
        "error": {"code": "error.internal_server_error", "message": detail},
    });
    Reply {
        status: 500,
        body: body.to_string().into_bytes(),
        allow: None,
        content_type: JSON,
    }
}

/// Applies the faults that change a finished reply: its body, its error
/// form, its status or its content type.
pub(crate) fn with_faults(mut reply: Reply, faults: &Faults) -> Reply {
    let success = reply.status == 200;
    if let Ok(mut value) = serde_json::from_slice::<Value>(&reply.body) {
        let mut changed = true;
        if success {
            crate::corrupt::corrupt(faults, &mut value);
        } else if (reply.status == 400 && faults.has(Fault::BadRequestEnvelope))
            || (reply.status == 404 && faults.has(Fault::NotFoundEnvelope))
        {
            value = serde_json::json!({"api_version": "v1", "error": value});
        } else {
            changed = false;
        }
        if changed {
            reply.body = value.to_string().into_bytes();
        }
    }
    if !success && faults.has(Fault::TextErrors) {
        reply.body = format!("error {}", reply.status).into_bytes();
        reply.content_type = "text/plain";
    }
    if success && faults.has(Fault::ContentTypeText) {
        reply.content_type = "text/plain";
    }
    if success && faults.has(Fault::Success201) {
        reply.status = 201;
    }
    reply
}
