//! lookups.*: account lookups answer for what was asked, and need their
//! alias value.

use super::support::{Judge, text};
use super::{Check, Level, Outcome, Rule, Run};
use crate::contract::subject::{Subject, on};
use crate::contract::{OpId, names};
use crate::ctx::Sampled;
use crate::http::Request;
use aggpay_mock::Fault;

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "lookups.match",
            level: Level::Required,
            source: "API.md Lookups (account metadata by IBAN); AccountInfo (iban)",
            says: &["account metadata by IBAN or alias."],
            summary: "an account lookup by IBAN answers for that IBAN: the one given, and the aggregator's own when the server resolves it",
            faults: &[Fault::AccountInfoWrongIban],
            judges: &[Subject::Param(on::lookup_named_back)],
            run: Run::Check(matches),
        },
        Rule {
            id: "lookups.looked-up",
            level: Level::Required,
            source: "API.md Lookups (account metadata by IBAN or alias; account title metadata for a till-code alias)",
            says: &[
                "account metadata by IBAN or alias.",
                "account title metadata for a till-code alias.",
            ],
            summary: "every lookup (IBAN, mobile alias, till code) is tried with its known value and with values no account has: an answer for an unknown value is never the account a known value names",
            faults: &[Fault::TillAnyAccount],
            judges: &[Subject::Param(on::lookup)],
            run: Run::Check(looked_up),
        },
        Rule {
            id: "lookups.owner",
            level: Level::Required,
            source: "API.md Lookups (account title metadata for a till-code alias); Alias (merchant_id: rail merchant; alias_value); AccountInfo (dba); RailMerchant (additional_details: dba)",
            says: &[
                "account title metadata for a till-code alias.",
                "| merchant_id | string | rail merchant (mer_) |",
            ],
            summary: "a title fetch by the till code of a known alias answers for that alias: where its answer and the alias's rail merchant both give a dba (the merchant's trading name), they are the same",
            faults: &[
                Fault::TillOtherAlias,
                Fault::TillAnyAccount,
                Fault::RailMerchantWrongRecord,
            ],
            judges: &[Subject::Param(|op, p| {
                on::lookup_with_type(op, p) && op.id == OpId::TitleFetch
            })],
            run: Run::Check(owner),
        },
        Rule {
            id: "lookups.alias-value-required",
            level: Level::Required,
            source: "API.md Lookups (alias value: must be provided when alias_type is supplied)",
            says: &["must be provided when alias_type is supplied"],
            summary: "account-info and title-fetch with an alias_type but no alias value never succeed (a 400 is in the bare form)",
            faults: &[
                Fault::AliasValueOptional,
                Fault::TextErrors,
                Fault::BadRequestEnvelope,
                Fault::BadRequestMessage,
            ],
            judges: &[Subject::Param(on::lookup_with_type)],
            run: Run::Check(alias_value_required),
        },
    ]
}

fn matches(c: &Check<'_>) -> Outcome {
    let mut judge = Judge::default();
    // The IBAN given, and the aggregator's own, which the server may or
    // may not resolve: when it answers, it answers for it.
    let own = c
        .ctx
        .data(OpId::Aggregator)
        .and_then(|a| a["bank_account"]["iban"].as_str())
        .filter(|i| !i.is_empty())
        .map(|iban| c.send(Request::to(OpId::AccountInfo).q(names::IBAN, iban)));
    for e in c.ctx.samples(OpId::AccountInfo).chain(own.as_ref()) {
        let Some(data) = e.data() else { continue };
        let asked = e
            .request
            .query
            .iter()
            .find(|(k, _)| k == names::IBAN)
            .map(|(_, v)| v.as_str())
            .unwrap_or("");
        let got = text(data, "iban");
        judge.check(got == asked, || {
            c.fail(e, format!("asked for IBAN {asked:?}, answered for {got:?}"))
        });
    }
    if judge.cases == 0 {
        return Outcome::skipped(
            c.ctx
                .sample_or_why(OpId::AccountInfo)
                .err()
                .unwrap_or_else(|| "the IBAN lookup did not succeed".into()),
        );
    }
    judge.outcome()
}

/// A lookup by a value.
struct Lookup {
    /// The sample that holds a known value's answer.
    sample: Sampled,
    /// Its operation.
    op: OpId,
    /// The parameters beside the value.
    fixed: &'static [(&'static str, &'static str)],
    /// The parameter that carries the value.
    param: &'static str,
}

const LOOKUPS: &[Lookup] = &[
    Lookup {
        sample: Sampled::Op(OpId::AccountInfo),
        op: OpId::AccountInfo,
        fixed: &[],
        param: names::IBAN,
    },
    Lookup {
        sample: Sampled::AccountInfoByMobile,
        op: OpId::AccountInfo,
        fixed: &[(names::ALIAS_TYPE, "MOBILE")],
        param: names::ALIAS_VALUE,
    },
    Lookup {
        sample: Sampled::Op(OpId::TitleFetch),
        op: OpId::TitleFetch,
        fixed: &[
            (names::ALIAS_TYPE, "TILL_CODE"),
            (names::WITH_TITLE_FETCH, "false"),
        ],
        param: names::ALIAS_VALUE,
    },
];

/// Values of a known value's shape that name no account: it with digits
/// appended, and as many zeros as it has characters.
fn unknown_values(known: &str) -> [String; 2] {
    [
        format!("{known}9090"),
        "0".repeat(known.chars().count().max(4)),
    ]
}

fn looked_up(c: &Check<'_>) -> Outcome {
    let mut cases = Vec::new();
    for Lookup {
        sample,
        op,
        fixed,
        param,
    } in LOOKUPS
    {
        let Some(known) = c.ctx.samples(*sample).find(|e| e.success()) else {
            continue;
        };
        let Some(value) = known
            .request
            .query
            .iter()
            .find(|(k, _)| k == param)
            .map(|(_, v)| v.clone())
        else {
            continue;
        };
        for other in unknown_values(&value) {
            let mut request = Request::to(*op);
            for (k, v) in fixed.iter() {
                request = request.q(k, v);
            }
            cases.push((known, value.clone(), request.q(param, &other), other));
        }
    }
    if cases.is_empty() {
        return Outcome::skipped("no lookup by a known value succeeded");
    }
    let answers = c.map(&cases, |(_, _, request, _)| c.send(request.clone()));
    let mut judge = Judge::default();
    for ((known, value, _, other), e) in cases.iter().zip(&answers) {
        // An unknown value may be refused or answered empty; an account it
        // is answered with is named by its IBAN.
        let iban = e.data().map(|got| text(got, "iban")).unwrap_or_default();
        let same = !iban.is_empty()
            && known
                .data()
                .is_some_and(|named| text(named, "iban") == iban);
        judge.check(!same, || {
            c.fail(
                e,
                format!(
                    "{other:?}, a value no account has, was answered with the account of {value:?} (IBAN {:?}): the value is not looked up",
                    iban
                ),
            )
        });
    }
    judge.outcome()
}

fn alias_value_required(c: &Check<'_>) -> Outcome {
    let requests = [
        Request::to(OpId::AccountInfo).q(names::ALIAS_TYPE, "MOBILE"),
        Request::to(OpId::TitleFetch).q(names::ALIAS_TYPE, "TILL_CODE"),
    ];
    let mut judge = Judge::default();
    for e in c.map(&requests, |r| c.send(r.clone())) {
        let why = if e.success() {
            Some("an alias_type without an alias value succeeded".to_owned())
        } else if e.status() == Some(400) {
            super::errors::form(&e)
        } else if e.status().is_some_and(|s| s >= 500) || e.status().is_none() {
            Some("not refused cleanly".to_owned())
        } else {
            None
        };
        judge.check(why.is_none(), || c.fail(&e, why.unwrap_or_default()));
    }
    judge.outcome()
}

/// The fields an account answer shares with the rail merchant that owns the
/// alias looked up: a dba is a merchant's trading name, whichever record
/// shows it. Only the dba: API.md gives the account's holder `name` its
/// own meaning (a holder may trade under another name), and an account's
/// `mcc` may be a bank's own classification.
const OWNER_FIELDS: &[(&str, &[&str])] = &[("dba", &["additional_details", "dba"])];

fn owner(c: &Check<'_>) -> Outcome {
    let Some(alias) = c.ctx.data(OpId::Alias) else {
        return Outcome::skipped(
            c.ctx
                .sample_or_why(OpId::Alias)
                .err()
                .unwrap_or_else(|| "no alias was read".into()),
        );
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
    let [answer, record] = &answers[..] else {
        unreachable!("two requests, two answers")
    };
    let (Some(account), Some(record_data)) = (answer.data(), record.data()) else {
        return Outcome::skipped(format!(
            "the till code {value:?} or its merchant {merchant:?} was not answered (HTTP {} and {})",
            answer.status().map_or("none".into(), |s| s.to_string()),
            record.status().map_or("none".into(), |s| s.to_string()),
        ));
    };
    let mut judge = Judge::default();
    for (field, path) in OWNER_FIELDS {
        let got = text(account, field);
        let want = path
            .iter()
            .try_fold(record_data, |v, k| v.get(k))
            .and_then(|v| v.as_str())
            .unwrap_or("");
        if got.is_empty() || want.is_empty() {
            continue;
        }
        judge.check(got == want, || {
            c.fail(
                answer,
                format!(
                    "the till code {value:?} of alias {} was answered with {field} {got:?}, but the alias's merchant {merchant} gives {want:?}: the answer is another account's",
                    text(alias, "token")
                ),
            )
        });
    }
    if judge.cases == 0 {
        return Outcome::skipped("the answer or the alias's merchant gives no dba to compare");
    }
    judge.outcome()
}
