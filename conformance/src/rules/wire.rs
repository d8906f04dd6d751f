//! wire.*: observations. What WIRE.md (or common practice) says where
//! API.md is silent: reported, failing the run only with `--strict`.

use aggpay_mock::Fault;
use proptest::prelude::*;
use serde::Deserialize;
use serde_json::Value;

use super::observe::{Cases, Observed};
use super::paging::fetch;
use super::support::{Judge, text};
use super::{Check, Claim, Kind, Level, Outcome, Rule, Run};
use crate::contract::subject::{Subject, on};
use crate::contract::{At, OpId, Place, names};
use crate::ctx::Sampled;
use crate::http::{Auth, Request};
use crate::model::{ListModel, NamedOtherwise, Several, id_of};

/// The cursor lists observed (the batches and the largest transactions)
/// that read the paging names `needed`.
fn lists<'a>(c: &Check<'a>, needed: &[&str]) -> Vec<&'a ListModel> {
    let model = &c.ctx.model;
    model
        .list(OpId::Batches)
        .into_iter()
        .chain(model.transaction_lists().first().copied())
        .filter(|l| l.usable().is_ok() && needed.iter().all(|n| l.reads(n)))
        .collect()
}

fn q(pairs: &[(&str, String)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

pub fn rules() -> Vec<Rule> {
    // The observations of what requests the server takes, then those of
    // what its answers look like.
    let mut rules = vec![
        Rule {
            id: "wire.cursor-bounds",
            level: Level::Observation,
            kind: Kind::Check,
            source: "WIRE.md Cursor pagination (next_cursor is the last row's id; the next page follows it)",
            claims: &[
                Claim {
                    holds: "a page after a cursor holds only ids beyond it",
                    says: &[
                        "The reference's examples show `next_cursor` equal to the `id` of the last row returned",
                    ],
                },
                super::paging::ROWS_ANSWERED,
            ],
            summary: "generated cursors (real ids, their neighbours, random numbers): a page holds only ids beyond the cursor",
            faults: &[Fault::CursorInclusive, Fault::CursorAscAsDesc],
            judges: &[],
            run: Run::Check(cursor_bounds),
        },
        Rule {
            id: "wire.limit-validation",
            level: Level::Observation,
            kind: Kind::Check,
            source: "WIRE.md Cursor pagination (negative or non-numeric limit: 400)",
            claims: &[Claim {
                holds: "a negative or non-numeric limit gets 400",
                says: &["negative or non-numeric: 400."],
            }],
            summary: "a negative or non-numeric limit gets 400",
            faults: &[Fault::NegativeLimitAccepted, Fault::BadRequest422],
            judges: &[],
            run: Run::Check(limit_validation),
        },
        Rule {
            id: "wire.rotation-revokes-old",
            level: Level::Observation,
            kind: Kind::Check,
            source: "WIRE.md Authentication in the mock (the old secret stops working at once)",
            claims: &[Claim {
                holds: "after a rotation the old secret gets 401",
                says: &["Rotating a key replaces its secret: the old one stops working at once."],
            }],
            summary: "after rotation the old secret gets 401",
            faults: &[
                Fault::RotateKeepsOldSecret,
                Fault::AcceptAnyKey,
                Fault::RotateSameSecret,
            ],
            judges: &[],
            run: Run::Check(revokes_old),
        },
        Rule {
            id: "wire.export-validation",
            level: Level::Observation,
            kind: Kind::Check,
            source: "WIRE.md (settlement_batch_id and kind are required; 400 bare)",
            claims: &[Claim {
                holds: "an export request without its required fields gets 400",
                says: &[
                    "A missing required field or an unknown batch gets 400 error.bad_request (bare form).",
                ],
            }],
            summary: "an export request without its required fields gets 400",
            faults: &[
                Fault::ExportAcceptsEmptyBody,
                Fault::TextErrors,
                Fault::BadRequestEnvelope,
                Fault::BadRequest422,
            ],
            judges: &[],
            run: Run::Check(export_validation),
        },
        Rule {
            id: "wire.export-seeded",
            level: Level::Observation,
            kind: Kind::Check,
            source: "API.md Report export status (\"Observed value: REPORT_STATUS_SEEDED (a newly created export, with attempts at 1, started_at set and finished_at null). Other values and transitions: not shown.\")",
            claims: &[Claim {
                holds: "a new export is REPORT_STATUS_SEEDED, attempts 1, finished_at null",
                says: &[
                    "Observed value: REPORT_STATUS_SEEDED (a newly created export, with attempts at 1, started_at set and finished_at null). Other values and transitions: not shown.",
                ],
            }],
            summary: "a new export is in the state API.md observed: REPORT_STATUS_SEEDED, attempts 1, finished_at null",
            faults: &[
                Fault::ExportFinished,
                Fault::ExportFinishedEarly,
                Fault::EmptyStringNull,
                Fault::ExportSeededFinished,
            ],
            judges: &[],
            run: Run::Check(export_seeded),
        },
    ];
    rules.extend(answers());
    rules.extend(names_read());
    rules
}

/// The observations of what answers look like: owners, statuses, media
/// types, members, payouts.
fn answers() -> Vec<Rule> {
    vec![
        Rule {
            id: "wire.title-fetch-owner",
            level: Level::Observation,
            kind: Kind::Check,
            source: "API.md Lookups (account title metadata for a till-code alias); AccountInfo (name, dba, mcc); Alias (merchant_id); RailMerchant (name; additional_details dba, mcc)",
            claims: &[Claim {
                holds: "a title fetch by an alias's till code answers with its rail merchant's holder name, dba and mcc",
                says: &[
                    "account title metadata for a till-code alias.",
                    "| name | string | account holder name |",
                    "| dba | string | may be empty |",
                    "| merchant_id | string | rail merchant (mer_) |",
                ],
            }],
            summary: "a title fetch by the till code of the alias read answers with the holder name, dba and mcc of the alias's rail merchant. An observation: API.md ties the answer to the alias only through these fields, and they may legally differ (an account's holder is not said to be the merchant, and dba and mcc \"may be empty\"), so with the one alias a tester knows, another alias's account cannot be told from this one's",
            faults: &[
                Fault::RailMerchantWrongRecord,
                Fault::TillAnyAccount,
                Fault::TillOtherAlias,
            ],
            judges: &[],
            run: Run::Check(title_fetch_owner),
        },
        Rule {
            id: "wire.unknown-id-404",
            level: Level::Observation,
            kind: Kind::Check,
            source: "WIRE.md Status codes and errors (a well-formed ID that does not exist gets 404)",
            claims: &[Claim {
                holds: "an unknown id of the right shape gets 404 in the bare form",
                says: &["a well-formed ID that does not exist gets 404."],
            }],
            summary: "an unknown rail merchant or alias id of the right shape gets 404 in the bare form",
            faults: &[
                Fault::UnknownAliasFound,
                Fault::TextErrors,
                Fault::NotFoundEnvelope,
                Fault::NotFoundOtherMessage,
                Fault::UnknownRailMerchantFound,
                Fault::RailMerchant404Message,
            ],
            judges: &[],
            run: Run::Check(unknown_id_404),
        },
        Rule {
            id: "wire.success-200",
            level: Level::Observation,
            kind: Kind::Check,
            source: "WIRE.md Status codes (success: 200 everywhere; API.md allows any 2xx)",
            claims: &[Claim {
                holds: "a success is 200",
                says: &["Success: 200 everywhere in the mock"],
            }],
            summary: "success answers are 200 (the charges aside: status.charges-200 requires it)",
            faults: &[Fault::Success201],
            judges: &[],
            run: Run::EveryAnswer(success_200, Cases::Successes),
        },
        Rule {
            id: "wire.bad-request-400",
            level: Level::Observation,
            kind: Kind::Check,
            source: "API.md Errors (the table lists 400 beside error.bad_request; \"HTTP status numbers for error.bad_request and error.internal_server_error responses: not shown.\")",
            claims: &[Claim {
                holds: "error.bad_request is answered 400",
                says: &[
                    "| 400 | error.bad_request | invalid request parameters (message says so) |",
                ],
            }],
            summary: "every answer saying error.bad_request is a 400, the number API.md's table lists (the required rules take any client error saying error.bad_request: the numbers are \"not shown\")",
            faults: &[Fault::BadRequest422],
            judges: &[],
            run: Run::EveryAnswer(bad_request_400, Cases::Answers),
        },
        Rule {
            id: "wire.content-type-json",
            level: Level::Observation,
            kind: Kind::Check,
            source: "common practice (JSON bodies labelled application/json)",
            claims: &[Claim {
                holds: "a response is labelled Content-Type: application/json",
                says: &["RFC 8259 section 11: The media type for JSON text is application/json."],
            }],
            summary: "every response is labelled Content-Type: application/json",
            faults: &[
                Fault::ContentTypeText,
                Fault::TextErrors,
                Fault::RefundsTextPlain,
            ],
            judges: &[],
            run: Run::EveryAnswer(content_type_json, Cases::Answers),
        },
        Rule {
            id: "wire.unique-members",
            level: Level::Observation,
            kind: Kind::Check,
            source: "RFC 8259 section 4 (\"The names within an object SHOULD be unique.\")",
            claims: &[Claim {
                holds: "no object names a member twice",
                says: &["RFC 8259 section 4: The names within an object SHOULD be unique."],
            }],
            summary: "no object names a member twice, even with the same value (body.one-meaning requires it where the values differ)",
            faults: &[Fault::DuplicateCount],
            judges: &[],
            run: Run::EveryAnswer(unique_members, Cases::Answers),
        },
        Rule {
            id: "wire.payout-shape",
            level: Level::Observation,
            kind: Kind::Check,
            source: "WIRE.md Cursor pagination (the reference's payout element)",
            claims: &[Claim {
                holds: "a payout has the reference's shape",
                says: &[
                    "`only_settlement_txns=true` returns payouts in `settlement_transactions` (reference element: id, token with prefix `stxn_`",
                ],
            }],
            summary: "payouts carry stxn_ tokens, sb_ batch tokens, paisa amounts and acct_ accounts, and the client decodes them",
            faults: &[Fault::PayoutPrefix],
            judges: &[],
            run: Run::Check(payouts),
        },
    ]
}

/// The observations of the names a server reads where API.md gives a
/// parameter by purpose only: paging, filters, lookups. The required
/// rules judge only what a server reads.
fn names_read() -> Vec<Rule> {
    vec![
        Rule {
            id: "wire.paging-names",
            level: Level::Observation,
            kind: Kind::Check,
            source: "API.md Conventions 6 (a parameter given only by its purpose has a wire name that is not shown); Refunds (the pagination parameters are not shown); WIRE.md offset pagination (`limit`, `offset`) and cursor pagination (`cursor`, `limit`, `direction`)",
            claims: &[Claim {
                holds: "a list reads WIRE.md's paging names",
                says: &[
                    "a parameter given only by its purpose has a wire name that is not shown.",
                    "the pagination parameters are not shown",
                ],
            }],
            summary: "a list whose paging parameters API.md gives by purpose only reads WIRE.md's names: an offset list `limit` and `offset`, a cursor list `cursor`, `limit` and `direction`; a name no answer shows read (no value changes the page or is refused, no cursor walk moves on in either direction) is listed not judged, and the rules that need it do not apply to that list",
            // A list whose every answer is kept for a while, whatever its
            // query, reads no name as far as any answer shows.
            faults: &[
                Fault::PagingUnread,
                Fault::RailMerchantListCache,
                Fault::DirectionIgnored,
            ],
            judges: &[Subject::Param(on::paging_named_by_wire)],
            run: Run::Check(paging_names),
        },
        Rule {
            id: "wire.filter-names",
            level: Level::Observation,
            kind: Kind::Check,
            source: "API.md Conventions 6 (a parameter given only by its purpose has a wire name that is not shown); WIRE.md query parameter wire names",
            claims: &[Claim {
                holds: "a filter API.md gives by purpose only is read under WIRE.md's name, and one that accepts one or more values reads several, repeated or comma-separated",
                says: &[
                    "a parameter given only by its purpose has a wire name that is not shown.",
                    "Query filters (purpose only; each accepts one or more values):",
                ],
            }],
            summary: "every filter API.md gives by purpose only is read under WIRE.md's name: a value of the server's own data that keeps none of the first page's first row under any reading of the filter leaves that row out, or is refused; a filter no answer shows the server reads under that name (none of its values changes the page, no value is refused) is listed not judged, and judged by no required rule; a filter API.md says accepts one or more values keeps the rows of two of them, the key repeated as WIRE.md writes it or the values comma-separated (a list that keeps one at most either way is not asked for several)",
            faults: &[
                Fault::RefundFiltersOneValue,
                Fault::BatchFilterIgnored,
                Fault::RailMerchantListCache,
            ],
            judges: &[Subject::Param(on::filter_named_by_wire)],
            run: Run::Check(filter_names),
        },
        Rule {
            id: "wire.lookup-names",
            level: Level::Observation,
            kind: Kind::Check,
            source: "API.md Lookups (query purpose only, except alias_type); Conventions 6 (a parameter given only by its purpose has a wire name that is not shown); WIRE.md query parameter wire names (`iban`, `alias_value`)",
            claims: &[Claim {
                holds: "a lookup with a value the server showed or was given, under WIRE.md's names, is not refused",
                says: &[
                    "Query (purpose only, except alias_type):",
                    "a parameter given only by its purpose has a wire name that is not shown.",
                ],
            }],
            summary: "account-info by IBAN and by mobile alias, and the till code's title fetch, asked under WIRE.md's names (`iban`, `alias_value`) with a value the server showed or was given, are not refused; a server that refuses them may read those names under its own, and no required rule judges that lookup",
            faults: &[Fault::LookupNamesUnread],
            judges: &[],
            run: Run::Check(lookup_names),
        },
    ]
}

fn lookup_names(c: &Check<'_>) -> Outcome {
    let asked: Vec<_> = c
        .ctx
        .samples
        .iter()
        .filter(|s| {
            matches!(
                s.op,
                Sampled::Op(OpId::AccountInfo | OpId::TitleFetch) | Sampled::AccountInfoByMobile
            )
        })
        .collect();
    if asked.is_empty() {
        return Outcome::skipped("no lookup was asked: pass --iban, --mobile or --till-code");
    }
    let refused: Vec<_> = c
        .ctx
        .lookups_refused()
        .map(|s| (s.op, &s.exchange))
        .collect();
    let mut judge = Judge::default();
    for s in asked {
        judge.case();
        if let Some((op, e)) = refused
            .iter()
            .find(|(_, e)| e.request == s.exchange.request)
        {
            judge.fail(c.fail(
                c.main_claim(),
                e,
                format!(
                    "{op}: a value the server showed or was given was refused (400): the server may read it under another name than WIRE.md's (API.md gives the lookup parameters by purpose only)"
                ),
            ));
        }
    }
    judge.outcome()
}

fn success_200(e: &Observed<'_>) -> Option<String> {
    // The charges' 200 is a required rule of its own (status.charges-200).
    if e.op().is_some_and(|op| op.id == OpId::Charges) {
        return None;
    }
    let status = e.status()?;
    ((200..300).contains(&status) && status != 200)
        .then(|| format!("success answered {status}, not 200"))
}

fn bad_request_400(e: &Observed<'_>) -> Option<String> {
    let status = e.status()?;
    (e.error_code() == Some("error.bad_request") && status != 400)
        .then(|| format!("error.bad_request answered {status}, not 400"))
}

fn unique_members(e: &Observed<'_>) -> Option<String> {
    let d = e.duplicates.first()?;
    Some(format!(
        "the body names {} {} times",
        d.path,
        d.values.len()
    ))
}

fn content_type_json(e: &Observed<'_>) -> Option<String> {
    let content_type = e.header("content-type").unwrap_or("");
    (!content_type
        .to_ascii_lowercase()
        .starts_with("application/json"))
    .then(|| format!("Content-Type {content_type:?}"))
}

fn cursor_bounds(c: &Check<'_>) -> Outcome {
    let lists = lists(c, &[names::CURSOR, names::DIRECTION, names::LIMIT]);
    if lists.is_empty() {
        return Outcome::skipped("no cursor list that reads WIRE.md's paging names could be read");
    }
    // Real ids of each list: cursors from real responses.
    let real: Vec<Vec<u64>> = lists
        .iter()
        .map(|l| l.known().filter_map(id_of).collect())
        .collect();
    let n = lists.len();
    let cursors = prop_oneof![
        3 => (any::<prop::sample::Index>(), -1i64..=1).prop_map(|(i, d)| (Some(i), d, 0u64)),
        1 => (1u64..=10_000_000_000_000).prop_map(|c| (None, 0, c)),
    ];
    let strategy = (0..n, cursors, any::<bool>(), 1u64..=20);
    c.property(strategy, |(i, (index, delta, random), ascending, limit)| {
        let cursor = match (index, real[*i].is_empty()) {
            (Some(ix), false) => real[*i][ix.index(real[*i].len())]
                .saturating_add_signed(*delta)
                .max(1),
            _ => (*random).max(1),
        };
        let direction = if *ascending { "ASC" } else { "DESC" };
        let p = fetch(
            c,
            &lists[*i].source,
            &q(&[
                (names::CURSOR, cursor.to_string()),
                (names::DIRECTION, direction.into()),
                (names::LIMIT, limit.to_string()),
            ]),
        );
        let rows = p.rows_or_fail(c, &lists[*i].source.label)?;
        let ids: Vec<u64> = rows.iter().filter_map(id_of).collect();
        match ids.iter().find(|id| {
            if *ascending {
                **id <= cursor
            } else {
                **id >= cursor
            }
        }) {
            None => Ok(()),
            Some(id) => Err(c.fail(
                c.main_claim(),
                &p.e,
                format!("cursor {cursor} {direction}: the page holds id {id}"),
            )),
        }
    })
}

fn limit_validation(c: &Check<'_>) -> Outcome {
    let mut cases = Vec::new();
    for list in lists(c, &[names::LIMIT]) {
        for bad in ["-1", "-100", "abc"] {
            cases.push((list, bad));
        }
    }
    if cases.is_empty() {
        return Outcome::skipped("no cursor list that reads WIRE.md's `limit` could be read");
    }
    let mut judge = Judge::default();
    for ((list, bad), p) in cases.iter().zip(c.map(&cases, |(list, bad)| {
        fetch(c, &list.source, &q(&[(names::LIMIT, (*bad).into())]))
    })) {
        judge.check(p.e.status() == Some(400), || {
            c.fail(
                c.main_claim(),
                &p.e,
                format!("{}: limit={bad} not refused with 400", list.source.label),
            )
        });
    }
    judge.outcome()
}

fn revokes_old(c: &Check<'_>) -> Outcome {
    let Some(old) = c
        .ctx
        .model
        .rotation
        .as_ref()
        .and_then(|r| r.before.as_ref())
    else {
        return Outcome::skipped(
            c.ctx
                .unsampled
                .get(&Sampled::Op(OpId::Rotate))
                .cloned()
                .unwrap_or_else(|| "the key was not rotated".into()),
        );
    };
    if c.ctx
        .model
        .rotation
        .as_ref()
        .and_then(|r| r.key())
        .is_none()
    {
        return Outcome::skipped("the rotation did not succeed");
    }
    let mut judge = Judge::default();
    // A real credential: sent, never shown.
    let e = c.send(Request::to(OpId::Ledger).auth(Auth::Secret(old.clone())));
    judge.check(e.status() == Some(401), || {
        c.fail(
            c.main_claim(),
            &e,
            "the old secret still works after rotation",
        )
    });
    judge.outcome()
}

fn export_seeded(c: &Check<'_>) -> Outcome {
    let e = match c.ctx.sample_or_why(OpId::ReportExport) {
        Ok(e) => e,
        Err(why) => return Outcome::skipped(why),
    };
    let mut judge = Judge::default();
    if let Some(export) = e.data().map(|d| &d["report_export"]) {
        let seen = [
            ("status", export["status"] == "REPORT_STATUS_SEEDED"),
            ("attempts", export["attempts"] == 1),
            ("finished_at", export["finished_at"].is_null()),
        ];
        for (field, ok) in seen {
            judge.check(ok, || {
                c.fail(
                    c.main_claim(),
                    e,
                    format!(
                        "report_export.{field} is {}, not as API.md observed a new export",
                        crate::http::show(export.get(field))
                    ),
                )
            });
        }
    }
    judge.outcome()
}

fn export_validation(c: &Check<'_>) -> Outcome {
    if !c.ctx.options.allow_writes {
        return Outcome::skipped("a write: pass --allow-writes");
    }
    let batch = c
        .ctx
        .model
        .rows(OpId::Batches)
        .first()
        .map(|b| crate::model::token_of(b))
        .unwrap_or_default();
    let bodies = [
        serde_json::json!({}),
        serde_json::json!({"settlement_batch_id": batch}),
        serde_json::json!({"kind": "REPORT_KIND_BATCH"}),
    ];
    let mut judge = Judge::default();
    let answers = c.map(&bodies, |body| {
        c.send(Request::to(OpId::ReportExport).json(body.to_string()))
    });
    for (body, e) in bodies.iter().zip(&answers) {
        let code = e
            .json
            .as_ref()
            .and_then(|v| v.get("code"))
            .and_then(Value::as_str);
        judge.check(
            e.status() == Some(400) && code == Some("error.bad_request"),
            || {
                c.fail(
                    c.main_claim(),
                    e,
                    format!("body {body}: not refused with a bare 400 error.bad_request"),
                )
            },
        );
    }
    judge.outcome()
}

fn unknown_id_404(c: &Check<'_>) -> Outcome {
    // Ids that name nothing, of the server's own shape: a known one with
    // its end changed within its alphabet.
    let requests: Vec<Request> = [OpId::RailMerchant, OpId::Alias]
        .into_iter()
        .filter_map(|op| {
            let id = super::forms::unknown_like(c.ctx.known_ids(op).last()?)?;
            Some(Request::to_one(op, &id))
        })
        .collect();
    if requests.is_empty() {
        return Outcome::skipped("no rail merchant or alias id is known");
    }
    let mut judge = Judge::default();
    for e in c.map(&requests, |r| c.send(r.clone())) {
        let why = if e.status() == Some(404) {
            super::errors::form(&e)
        } else {
            Some(format!(
                "answered {}, not 404",
                e.status().map_or("nothing".to_owned(), |s| s.to_string())
            ))
        };
        judge.check(why.is_none(), || {
            c.fail(c.main_claim(), &e, why.unwrap_or_default())
        });
    }
    judge.outcome()
}

fn payouts(c: &Check<'_>) -> Outcome {
    let Some((e, rows)) = c
        .ctx
        .model
        .lists(OpId::Transactions)
        .filter(|l| !l.source.base.is_empty())
        .flat_map(|l| l.pages.iter())
        .find_map(|e| e.rows("settlement_transactions").map(|r| (e, r.clone())))
    else {
        return Outcome::skipped("no batch's payouts were read");
    };
    if rows.is_empty() {
        return Outcome::skipped("the sampled batch has no payouts");
    }
    let mut judge = Judge::default();
    for p in &rows {
        let amounts = [
            "gross_amount",
            "fee_amount",
            "net_amount",
            "sales_tax_on_fee_amount",
        ]
        .iter()
        .all(|f| aggpay_internal::syntax::is_paisa(text(p, f)));
        let ok = aggpay_internal::syntax::has_prefix(text(p, "token"), "stxn_")
            && aggpay_internal::syntax::is_batch_token(text(p, "settlement_batch_id"))
            && aggpay_internal::syntax::has_prefix(text(p, "debitor_account_id"), "acct_")
            && aggpay_internal::syntax::has_prefix(text(p, "creditor_account_id"), "acct_")
            && amounts
            && aggpay::SettlementPayout::deserialize(p).is_ok_and(|p| reference_payout(&p));
        judge.check(ok, || {
            c.fail(
                c.main_claim(),
                e,
                format!("payout {} differs from the reference's shape", p["token"]),
            )
        });
    }
    judge.outcome()
}

/// Whether the client read every member of the reference's payout
/// element from it (API.md does not show the shape: the client keeps
/// what it does not recognise, so decoding alone says nothing).
fn reference_payout(p: &aggpay::SettlementPayout) -> bool {
    p.id.is_some()
        && p.token.is_some()
        && p.settlement_batch_id.is_some()
        && p.aggregator_id.is_some()
        && p.aggregator_merchant_id.is_some()
        && p.rail_merchant_id.is_some()
        && p.status.is_some()
        && p.attempt.is_some()
        && [
            p.gross_amount,
            p.fee_amount,
            p.net_amount,
            p.sales_tax_on_fee_amount,
            p.sales_tax_withholding_amount,
            p.income_tax_withholding_amount,
            p.digital_tax_amount,
        ]
        .iter()
        .all(Option::is_some)
        && p.debitor_account_id.is_some()
        && p.creditor_account_id.is_some()
        && p.created_at.is_some()
        && p.updated_at.is_some()
}

fn paging_names(c: &Check<'_>) -> Outcome {
    let mut seen = std::collections::HashSet::new();
    let lists: Vec<&ListModel> = c
        .ctx
        .model
        .lists
        .iter()
        .filter(|l| l.usable().is_ok() && seen.insert(l.source.label.clone()))
        .filter(|l| {
            l.source
                .op
                .params
                .iter()
                .any(|p| on::paging_named_by_wire(l.source.op, p))
        })
        .collect();
    if lists.is_empty() {
        return Outcome::skipped(
            "no list whose paging names API.md gives by purpose only could be read",
        );
    }
    let mut judge = Judge::default();
    for list in lists {
        match &list.named_otherwise {
            None => judge.result(Ok(())),
            Some(n) => not_read(c, &mut judge, list, n),
        }
    }
    judge.outcome()
}

/// That `list` does not read the names `n` shows: this observation's
/// failure, and a place not judged for each name, as no required rule
/// holds a name the server does not read to its meaning.
fn not_read(c: &Check<'_>, judge: &mut Judge, list: &ListModel, n: &NamedOtherwise) {
    judge.check(false, || {
        c.fail(
            c.main_claim(),
            &n.evidence,
            format!(
                "{} does not read {}: {}",
                list.source.label,
                n.names.join(" or "),
                n.seen
            ),
        )
    });
    for name in &n.names {
        judge.not_judged(c.not_judged(
            Place::new(list.source.op.id, At::Param(name)),
            format!(
                "no answer shows that {} reads {name} ({}), so no required rule holds it to its meaning; --param-name {}.{name}=NAME gives the server's own name, --require-wire-names holds it to this one",
                list.source.label, n.seen, list.source.op.name
            ),
        ));
    }
}

fn filter_names(c: &Check<'_>) -> Outcome {
    let lists: Vec<_> = c
        .ctx
        .model
        .lists
        .iter()
        .filter(|l| l.source.base.is_empty() && l.usable().is_ok())
        .filter(|l| {
            l.source
                .op
                .filters()
                .any(|p| on::filter_named_by_wire(l.source.op, p))
        })
        .collect();
    if lists.is_empty() {
        return Outcome::skipped("no list with filters could be read");
    }
    let mut judge = Judge::default();
    for list in lists {
        judge.result(Ok(()));
        for n in &list.filters_named_otherwise {
            not_read(c, &mut judge, list, n);
        }
        if let Several::Neither(n) = &list.several {
            judge.check(false, || {
                c.fail(
                    c.main_claim(),
                    &n.evidence,
                    format!(
                        "{} reads one value of a filter at most: {}",
                        list.source.label, n.seen
                    ),
                )
            });
            for name in &n.names {
                judge.not_judged(c.not_judged(
                    Place::new(list.source.op.id, At::Param(name)),
                    format!(
                        "{} keeps the rows of one value of {name} at most, written either way ({}), so no required rule judges several values of it; --require-wire-names holds it to WIRE.md's form",
                        list.source.label, n.seen
                    ),
                ));
            }
        }
    }
    judge.outcome()
}

/// The fields a title fetch's answer shares with the rail merchant that
/// owns the alias: the account's, and where the merchant's record has it.
const OWNER_FIELDS: &[(&str, &[&str])] = &[
    ("name", &["name"]),
    ("dba", &["additional_details", "dba"]),
    ("mcc", &["additional_details", "mcc"]),
];

fn title_fetch_owner(c: &Check<'_>) -> Outcome {
    let Some(alias) = c.ctx.data(OpId::Alias) else {
        return Outcome::skipped(c.ctx.why_unsampled(OpId::Alias));
    };
    let (kind, value, merchant) = (
        text(alias, "alias_type"),
        text(alias, "alias_value"),
        text(alias, "merchant_id"),
    );
    if kind != "TILL_CODE" || value.is_empty() || merchant.is_empty() {
        return Outcome::skipped(format!(
            "the alias read is not a till code with a merchant (alias_type {kind:?})"
        ));
    }
    let requests = [
        Request::to(OpId::TitleFetch)
            .q(names::ALIAS_TYPE, "TILL_CODE")
            .q(names::ALIAS_VALUE, value)
            .q(names::WITH_TITLE_FETCH, "false"),
        Request::to_one(OpId::RailMerchant, merchant),
    ];
    let answers = c.map(&requests, |r| c.send(r.clone()));
    let (Some(account), Some(record)) = (answers[0].data(), answers[1].data()) else {
        return Outcome::skipped(format!(
            "the till code {value:?} or its merchant {merchant:?} was not answered"
        ));
    };
    let mut judge = Judge::default();
    for (field, path) in OWNER_FIELDS {
        let got = text(account, field);
        let want = path
            .iter()
            .try_fold(record, |v, k| v.get(k))
            .and_then(Value::as_str)
            .unwrap_or("");
        if got.is_empty() || want.is_empty() {
            continue;
        }
        judge.check(got == want, || {
            c.fail(
                c.main_claim(),
                &answers[0],
                format!(
                    "the till code {value:?} of alias {} was answered with {field} {got:?}, but the alias's merchant {merchant} gives {want:?}: perhaps another alias's account",
                    text(alias, "token")
                ),
            )
        });
    }
    if judge.cases == 0 {
        return Outcome::skipped(
            "neither the answer nor the alias's merchant gives a field to compare",
        );
    }
    judge.outcome()
}
