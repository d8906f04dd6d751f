//! requests.*: every form of request a real client sends, at every
//! operation of the contract table: HEAD for every read, HTTP/1.0,
//! `Connection: close`, pipelined reads. Each rule visits every place its
//! subjects hold for, in every run; the bytes of every answer are judged
//! by the message rules as well (`message.*`).

use aggpay_mock::Fault;

use super::message::{FRAMING, JSON_OVER_HTTP, NO_INTERIM_TO_HTTP10};
use super::support::{Judge, Reached};
use super::{Check, Claim, Finding, Kind, Level, Outcome, Rule, Run};
use crate::contract::subject::{Subject, on};
use crate::contract::{At, Place};
use crate::http::h1::{CLOSE_WAIT, Form};
use crate::http::{Exchange, Request};

const HEAD_NO_CONTENT: Claim = Claim {
    holds: "a HEAD is answered as its GET is, with no content",
    says: &[
        JSON_OVER_HTTP,
        "RFC 9110 section 9.1: All general-purpose servers MUST support the methods GET and HEAD.",
        "RFC 9110 section 9.3.2: The HEAD method is identical to GET except that the server MUST NOT send content in the response.",
    ],
};

const CLOSES: Claim = Claim {
    holds: "after answering a request with `Connection: close`, the server closes the connection",
    says: &[
        JSON_OVER_HTTP,
        "RFC 9112 section 9.6: A server that receives a \"close\" connection option MUST initiate closure of the connection (see below) after it sends the final response to the request that contained the \"close\" connection option.",
    ],
};

const PIPELINED: Claim = Claim {
    holds: "pipelined requests are each answered, in the order they were sent, unless the server closes the connection first",
    says: &[
        JSON_OVER_HTTP,
        "RFC 9112 section 9.3.2: A client that supports persistent connections MAY \"pipeline\" its requests (i.e., send multiple requests without waiting for each response).",
        "RFC 9112 section 9.3.2: A server MAY process a sequence of pipelined requests in parallel if they all have safe methods (Section 9.2.1 of [HTTP]), but it MUST send the corresponding responses in the same order that the requests were received.",
    ],
};

const BODY_READ: Claim = Claim {
    holds: "a write's body is read alike whether it comes with Content-Length, chunked, or after an `Expect: 100-continue` (a 411 for the chunked form is a refusal the server may make)",
    says: &[
        JSON_OVER_HTTP,
        "RFC 9112 section 6.1: A recipient MUST be able to parse the chunked transfer coding (Section 7.1) because it plays a crucial role in framing messages when the content size is not known in advance.",
        "RFC 9110 section 10.1.1: A server that receives a 100-continue expectation in an HTTP/1.0 request MUST ignore that expectation.",
    ],
};

const ROTATED_IN_EVERY_FORM: Claim = Claim {
    holds: "a rotation is performed alike whether it comes with Content-Length, chunked or after `Expect: 100-continue`: each answers the key with a new secret (a 411 for the chunked form is a refusal the server may make)",
    says: &[
        JSON_OVER_HTTP,
        "Rotates the key and returns `data`: AccessKey with the new secret.",
        "RFC 9112 section 6.1: A recipient MUST be able to parse the chunked transfer coding (Section 7.1) because it plays a crucial role in framing messages when the content size is not known in advance.",
    ],
};

const VALIDATED: Claim = Claim {
    holds: "a GET with If-None-Match naming an entity tag the server gave is answered 304 only while the representation is the one so tagged",
    says: &[
        JSON_OVER_HTTP,
        "RFC 9110 section 8.8.1: A \"strong validator\" is representation metadata that changes value whenever a change occurs to the representation data that would be observable in the content of a 200 (OK) response to GET.",
        "RFC 9110 section 13.1.2: If-None-Match is primarily used in conditional GET requests to enable efficient updates of cached information with a minimum amount of transaction overhead.",
    ],
};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "requests.head",
            level: Level::Required,
            kind: Kind::Properties,
            source: "API.md (a JSON-over-HTTP API); RFC 9110 sections 9.1 and 9.3.2",
            claims: &[HEAD_NO_CONTENT],
            summary: "a HEAD of every read, then its GET on the same connection: the HEAD answered with the GET's status and no content, the GET reading its own answer",
            faults: &[Fault::HeadWithBody],
            judges: &[Subject::Answer(on::read)],
            run: Run::Check(head),
        },
        Rule {
            id: "requests.http10",
            level: Level::Required,
            kind: Kind::Properties,
            source: "API.md (a JSON-over-HTTP API); RFC 9110 section 15.2; RFC 9112 section 6.1",
            claims: &[NO_INTERIM_TO_HTTP10, FRAMING],
            summary: "an HTTP/1.0 request to every operation is answered with no 1xx before it and no Transfer-Encoding (505 is a legal refusal)",
            faults: &[Fault::ContinueToHttp10],
            judges: &[Subject::Answer(on::every_op)],
            run: Run::Check(http10),
        },
        Rule {
            id: "requests.close",
            level: Level::Required,
            kind: Kind::Properties,
            source: "API.md (a JSON-over-HTTP API); RFC 9112 section 9.6",
            claims: &[CLOSES],
            summary: "a request with Connection: close to every operation is answered, then the server closes the connection (within 2 s)",
            faults: &[Fault::CloseIgnored],
            judges: &[Subject::Answer(on::every_op)],
            run: Run::Check(close),
        },
        Rule {
            id: "requests.pipelined",
            level: Level::Required,
            kind: Kind::Properties,
            source: "API.md (a JSON-over-HTTP API); RFC 9112 section 9.3.2",
            claims: &[PIPELINED],
            summary: "every read pipelined with another read on one connection: both answered, in order (a server may close after the first)",
            faults: &[Fault::PipelineDropsSecond],
            judges: &[Subject::Answer(on::read)],
            run: Run::Check(pipelined),
        },
        Rule {
            id: "requests.write-bodies",
            level: Level::Required,
            kind: Kind::Properties,
            source: "API.md (a JSON-over-HTTP API); RFC 9112 section 6.1; RFC 9110 section 10.1.1",
            claims: &[BODY_READ, ROTATED_IN_EVERY_FORM],
            summary: "every write sent with its body chunked, and with Expect: 100-continue, is answered as with Content-Length; the --second-access-key-id key rotated in each form is rotated each time (with --allow-writes)",
            faults: &[Fault::ChunkedBodyEmpty, Fault::RotateSameSecret],
            judges: &[Subject::Answer(on::write)],
            run: Run::Check(write_bodies),
        },
        Rule {
            id: "requests.conditional",
            level: Level::Required,
            kind: Kind::Properties,
            source: "API.md (a JSON-over-HTTP API); RFC 9110 sections 8.8.1 and 13.1.2",
            claims: &[VALIDATED],
            summary: "the reads a rotation changes (the key list, the aggregator record), asked again after the run's writes with If-None-Match and the entity tag they had before: 304 only if the representation is unchanged",
            faults: &[Fault::EtagWithoutSecrets],
            judges: &[Subject::Answer(on::shows_keys)],
            run: Run::Check(conditional),
        },
    ]
}

/// The requests of `ops` the run can send (writes only when allowed),
/// each with its place.
fn cases(c: &Check<'_>, reads_only: bool) -> Vec<(Request, Place)> {
    crate::contract::OPS
        .iter()
        .filter(|op| !reads_only || op.method == "GET")
        .filter_map(|op| {
            let request = super::auth::request(c.ctx, op)?;
            Some((request, Place::new(op.id, At::Answer)))
        })
        .collect()
}

/// Judges each case at its place.
fn judged<T: Sync>(
    c: &Check<'_>,
    cases: &[(T, Place)],
    case: impl Fn(&T) -> Result<(), Finding> + Sync,
) -> Outcome {
    reaching(c, cases, |t| case(t).map(|()| Reached::Judged))
}

/// [`judged`], for cases that may not reach what they judge at their
/// place: those are listed as not judged, with why.
fn reaching<T: Sync>(
    c: &Check<'_>,
    cases: &[(T, Place)],
    case: impl Fn(&T) -> Result<Reached, Finding> + Sync,
) -> Outcome {
    let results = c.map(cases, |(request, _)| case(request));
    let mut judge = Judge::default();
    for ((_, place), result) in cases.iter().zip(results) {
        judge.reached(c, *place, result);
    }
    judge.outcome()
}

/// Times a pair of requests on one connection is sent when it is cut
/// short or met by a transient answer.
const PAIR_TRIES: usize = 3;

/// The status of an exchange, in words.
fn status(e: &Exchange) -> String {
    e.status()
        .map_or_else(|| "no answer".to_owned(), |s| s.to_string())
}

fn head(c: &Check<'_>) -> Outcome {
    judged(c, &cases(c, true), |get| {
        // The HEAD, then its GET on the same connection: the GET reads its
        // own answer only if nothing followed the HEAD's head.
        // A pair cut short or met by a transient answer (a flaky
        // staging's) shows nothing of the framing: sent again, a few
        // times, on a new connection.
        let pair = [get.clone().into_head(), get.clone()];
        let mut answers = c.ctx.http.on_one_connection(&pair);
        for _ in 1..PAIR_TRIES {
            if answers.len() == pair.len() && answers.iter().all(|e| e.transient.is_none()) {
                break;
            }
            answers = c.ctx.http.on_one_connection(&pair);
        }
        let Some(after) = answers.get(1) else {
            // The connection closed after the HEAD: its GET goes alone.
            return alone(c, &c.send(get.clone()), &answers[0]);
        };
        match (&after.outcome, &after.transient) {
            (Err(no), None) => Err(c.fail(
                &HEAD_NO_CONTENT,
                after,
                format!(
                    "the GET sent after a HEAD on the same connection got no answer of its own: bytes after the HEAD's answer were read as its start ({no})"
                ),
            )),
            _ => alone(c, after, &answers[0]),
        }
    })
}

/// A HEAD answered as its GET, with nothing after its head.
fn alone(c: &Check<'_>, get: &Exchange, head: &Exchange) -> Result<(), Finding> {
    if get.transient.is_some() || head.transient.is_some() {
        return Ok(());
    }
    if let Some(leftover) = head.wire.as_ref().map(|w| w.leftover).filter(|n| *n > 0) {
        return Err(c.fail(
            &HEAD_NO_CONTENT,
            head,
            format!("the answer to a HEAD was followed by {leftover} bytes of content"),
        ));
    }
    if head.status() != get.status() {
        return Err(c.fail(
            &HEAD_NO_CONTENT,
            head,
            format!("HEAD answered {}, its GET {}", status(head), status(get)),
        ));
    }
    Ok(())
}

fn http10(c: &Check<'_>) -> Outcome {
    let form = Form {
        http10: true,
        ..Form::default()
    };
    judged(c, &cases(c, false), |request| {
        // The message rules' own judges: the answers here are theirs too,
        // and this rule says where it sent them.
        let e = c.send(request.clone().in_form(form.clone()));
        if let Some(why) = super::message::interim_to_http10(&e) {
            return Err(c.fail(&NO_INTERIM_TO_HTTP10, &e, why));
        }
        if let Some(why) = super::message::framing_flaw(&e) {
            return Err(c.fail(&FRAMING, &e, why));
        }
        Ok(())
    })
}

fn close(c: &Check<'_>) -> Outcome {
    let form = Form {
        close: true,
        ..Form::default()
    };
    judged(c, &cases(c, false), |request| {
        let e = c.send(request.clone().in_form(form.clone()));
        match e.wire.as_ref().and_then(|w| w.closed) {
            Some(false) if e.transient.is_none() => Err(c.fail(
                &CLOSES,
                &e,
                format!(
                    "answered {} to a request with Connection: close, then kept the connection open {} s",
                    status(&e),
                    CLOSE_WAIT.as_secs()
                ),
            )),
            _ => Ok(()),
        }
    })
}

fn pipelined(c: &Check<'_>) -> Outcome {
    let reads = cases(c, true);
    // Each read followed by another: the next of the table (the first
    // after the last), so that every read is sent both first and second.
    let pairs: Vec<(Request, Request)> = reads
        .iter()
        .enumerate()
        .map(|(i, (r, _))| (r.clone(), reads[(i + 1) % reads.len()].0.clone()))
        .collect();
    let results = c.map(&pairs, |(first, second)| {
        // Each request's answer alone: the run's earlier one where it has
        // it (a request of the table's is read while the model is), else
        // asked now.
        let alone = [first, second].map(|r| earlier(c, r).unwrap_or_else(|| c.send(r.clone())));
        let pair = [first.clone(), second.clone()];
        let mut answers = c.ctx.http.pipelined(&pair);
        // A pipelined request that went unanswered in time, where alone it
        // is answered, is sent so once more: a transport's slip is not
        // the same twice, a server that drops pipelined requests is.
        let unanswered = |answers: &[Option<Exchange>]| {
            answers
                .iter()
                .flatten()
                .any(|e| e.status().is_none() && e.transient.is_some())
        };
        let dropped = unanswered(&answers) && alone.iter().all(Exchange::success);
        if dropped {
            answers = c.ctx.http.pipelined(&pair);
            if unanswered(&answers) {
                for e in answers.iter_mut().flatten() {
                    e.transient = None;
                }
            }
        }
        for (i, (answer, alone)) in answers.iter().zip(&alone).enumerate() {
            let Some(e) = answer else {
                // Closed after an earlier answer: a client sends it again.
                return Ok(());
            };
            if e.transient.is_some() || alone.transient.is_some() {
                return Ok(());
            }
            let which = if i == 0 { "first" } else { "second" };
            match e.status() {
                None => {
                    return Err(c.fail(
                        &PIPELINED,
                        e,
                        format!("the {which} of two pipelined requests got no answer"),
                    ));
                }
                Some(s) if Some(s) != alone.status() || shape(e) != shape(alone) => {
                    return Err(c.fail(
                        &PIPELINED,
                        e,
                        format!(
                            "the {which} of two pipelined requests was answered {s} with data {:?}, where alone it is answered {} with data {:?}: answers out of order, or for another request",
                            shape(e),
                            status(alone),
                            shape(alone)
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        Ok(())
    });
    let mut judge = Judge::default();
    for ((_, place), result) in reads.iter().zip(results) {
        judge.at(*place, result);
    }
    judge.outcome()
}

/// The run's earliest successful plain read of `op`, whatever its query.
fn first_read(c: &Check<'_>, op: &crate::contract::Op) -> Option<Exchange> {
    c.ctx
        .samples
        .iter()
        .map(|s| &s.exchange)
        .filter(|e| {
            e.op().is_some_and(|o| o.id == op.id)
                && e.request.method == "GET"
                && e.request.form.is_plain()
                && e.request.aggregator.is_none()
                && matches!(e.request.auth, crate::http::Auth::Key)
                && e.success()
                && e.transient.is_none()
        })
        .min_by_key(|e| e.wire.as_ref().map(|w| w.sent_at))
        .cloned()
}

/// The run's earliest successful answer to exactly `request`.
fn earlier(c: &Check<'_>, request: &Request) -> Option<Exchange> {
    c.ctx
        .samples
        .iter()
        .map(|s| &s.exchange)
        .filter(|e| e.request == *request && e.success() && e.transient.is_none())
        .min_by_key(|e| e.wire.as_ref().map(|w| w.sent_at))
        .cloned()
}

/// The names of an answer's `data` members: what tells two operations'
/// answers apart whatever values change between requests.
fn shape(e: &Exchange) -> Vec<String> {
    let mut keys: Vec<String> = e
        .json
        .as_ref()
        .and_then(|v| v.get("data"))
        .and_then(|d| d.as_object())
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    keys.sort();
    keys
}

fn write_bodies(c: &Check<'_>) -> Outcome {
    if !c.ctx.options.allow_writes {
        return Outcome::skipped("writes are not allowed (--allow-writes)");
    }
    // Each write with a body the server takes: an export of a batch and
    // of a merchant the run knows (a body it refuses either way would
    // show nothing), a rotation of a key id that names none.
    let mut writes: Vec<(Request, Place)> = Vec::new();
    for (request, place) in cases(c, false)
        .into_iter()
        .filter(|(r, _)| r.method != "GET")
    {
        if request.body.is_none() {
            writes.push((request, place));
            continue;
        }
        let batch = c
            .ctx
            .model
            .rows(crate::contract::OpId::Batches)
            .first()
            .and_then(|b| b["token"].as_str().map(str::to_owned));
        if let Some(batch) = batch {
            let body =
                serde_json::json!({"settlement_batch_id": batch, "kind": "REPORT_KIND_BATCH"});
            writes.push((request.clone().json(body.to_string()), place));
        }
        if let Some(merchant) = c.ctx.inputs.rail_merchant_id.clone() {
            let body = serde_json::json!({"merchant_id": merchant, "kind": "REPORT_KIND_MERCHANT"});
            writes.push((request.json(body.to_string()), place));
        }
    }
    let forms = body_forms();
    // A rotation has no body to misread, only framing: whether it is
    // performed shows only on a key that exists. The second key given is
    // this rule's alone in this phase (the random sequences leave it
    // out); the first is the sequences'. Its chain runs beside the other
    // writes.
    let rotate = Place::new(crate::contract::OpId::Rotate, At::Answer);
    let work: Vec<(Option<&Request>, Place)> = writes
        .iter()
        .map(|(r, p)| (Some(r), *p))
        .chain([(None, rotate)])
        .collect();
    reaching(c, &work, |request| {
        let Some(request) = request else {
            return match c.ctx.inputs.second_access_key_id.as_deref() {
                Some(id) => rotations_in_forms(c, id, &forms),
                None => Ok(Reached::Not(
                    "no --second-access-key-id was given: a rotation is judged in each request form only on a key this rule alone rotates".to_owned(),
                )),
            };
        };
        // Each a write that makes a new export or names no key: sent
        // again when its answer is lost, harmless.
        let plain = c.ctx.http.repeatable_write((*request).clone());
        for form in &forms {
            let e = c
                .ctx
                .http
                .repeatable_write((*request).clone().in_form(form.clone()));
            if e.transient.is_some() || plain.transient.is_some() {
                continue;
            }
            let class = |e: &Exchange| e.status().map(|s| s / 100);
            if form.chunked && e.status() == Some(411) {
                continue;
            }
            if class(&e) != class(&plain) {
                return Err(c.fail(
                    &BODY_READ,
                    &e,
                    format!(
                        "with {} the write was answered {}, with Content-Length {}",
                        form.shown(),
                        status(&e),
                        status(&plain)
                    ),
                ));
            }
        }
        Ok(Reached::Judged)
    })
}

/// The forms a write is sent in besides the plain one.
fn body_forms() -> [Form; 2] {
    [
        Form {
            chunked: true,
            ..Form::default()
        },
        Form {
            expect_continue: true,
            ..Form::default()
        },
    ]
}

/// Rotations of key `id`, plain and then in each form, one after another:
/// each performed, so each answers a secret the one before did not.
fn rotations_in_forms(c: &Check<'_>, id: &str, forms: &[Form]) -> Result<Reached, Finding> {
    use crate::model::writes::{rotatable, rotate, rotate_as};
    let secret = |r: &crate::model::Rotation| {
        r.key()
            .and_then(|k| k["secret"].as_str())
            .map(str::to_owned)
    };
    let before = match rotatable(&c.ctx.http, id) {
        Ok(before) => before,
        Err(why) => return Ok(Reached::Not(why)),
    };
    let mut last = secret(&rotate(&c.ctx.http, id, before.as_deref()));
    let mut judged = false;
    for form in forms {
        let Some(before) = last.clone() else {
            // No secret to compare with: the rotation before did not
            // succeed, which keys.rotation judges.
            continue;
        };
        let request = Request::to_one(crate::contract::OpId::Rotate, id).in_form(form.clone());
        let rotation = rotate_as(&c.ctx.http, request, id, Some(&before));
        let e = &rotation.answer;
        if form.chunked && e.status() == Some(411) {
            continue;
        }
        if e.transient.is_some() && rotation.recovered.is_none() {
            last = None;
            continue;
        }
        let now = secret(&rotation);
        if rotation.recovered.is_none() && e.success() && now.as_deref() == Some(before.as_str()) {
            return Err(c.fail(
                &ROTATED_IN_EVERY_FORM,
                e,
                format!(
                    "the rotation of {id} sent with {} answered {} with the secret the key already had: it was not performed",
                    form.shown(),
                    status(e)
                ),
            ));
        }
        judged = true;
        last = now;
    }
    Ok(if judged {
        Reached::Judged
    } else {
        Reached::Not(format!(
            "no rotation of {id} in another form could be told from the one before (each before it went unanswered, failed or was refused with 411)"
        ))
    })
}

/// The reads a rotation changes, asked with the entity tag they had when
/// the run first read them (before its writes): a 304 is owed only while
/// the representation is the one tagged, which the same GET without the
/// condition shows.
fn conditional(c: &Check<'_>) -> Outcome {
    // Each place's first answer in the run, before anything was written,
    // asked again as it was (a list read with its page size is its own
    // representation).
    let cases: Vec<(Option<Exchange>, Place)> = crate::contract::OPS
        .iter()
        .filter(|op| on::shows_keys(op))
        .map(|op| (first_read(c, op), Place::new(op.id, At::Answer)))
        .collect();
    reaching(c, &cases, |first| {
        let Some(first) = first else {
            return Ok(Reached::Not(
                "the run has no plain, keyed first read of it to ask again".to_owned(),
            ));
        };
        // A weak tag promises less than the content; no tag, nothing.
        let Some(tag) = first.header("etag").filter(|t| !t.starts_with("W/")) else {
            return Ok(Reached::Not(
                "its answer carries no strong ETag, so no conditional request could be asked of it"
                    .to_owned(),
            ));
        };
        let form = Form {
            if_none_match: Some(tag.to_owned()),
            ..Form::default()
        };
        let asked = c.send(first.request.clone().in_form(form));
        if asked.status() != Some(304) {
            return Ok(Reached::Judged);
        }
        let now = c.send(first.request.clone());
        if now.success() && now.transient.is_none() && now.body != first.body {
            return Err(c.fail(
                &VALIDATED,
                &asked,
                format!(
                    "If-None-Match {tag} got 304, but the representation so tagged has changed since: {} now, {} then",
                    c.ctx.http.snippet(&now.body),
                    c.ctx.http.snippet(&first.body)
                ),
            ));
        }
        Ok(Reached::Judged)
    })
}
