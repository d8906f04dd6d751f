//! lookups.*: account lookups answer for what was asked, and need their
//! alias value. (A value one slip from a known one is `near.lookups`'s.)

use super::support::{Judge, text};
use super::{Check, Claim, Kind, Level, Outcome, Rule, Run};
use crate::contract::subject::{Subject, on};
use crate::contract::{OpId, names};
use crate::http::Request;
use aggpay_mock::Fault;

pub(crate) const ANSWERS_FOR_IBAN: Claim = Claim {
    holds: "an account lookup by IBAN answers for the IBAN asked",
    says: &["account metadata by IBAN or alias."],
};
const ALIAS_VALUE_REQUIRED: Claim = Claim {
    holds: "a lookup with an alias_type and no alias value does not succeed",
    says: &["must be provided when alias_type is supplied"],
};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "lookups.match",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Lookups (account metadata by IBAN); AccountInfo (iban)",
            claims: &[ANSWERS_FOR_IBAN],
            summary: "an account lookup by IBAN answers for that IBAN: the one given, and the aggregator's own when the server resolves it",
            faults: &[Fault::AccountInfoWrongIban, Fault::LookupCacheIgnoresQuery],
            judges: &[Subject::Param(on::lookup_named_back)],
            run: Run::Check(matches),
        },
        Rule {
            id: "lookups.alias-value-required",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Lookups (alias value: must be provided when alias_type is supplied)",
            claims: &[
                ALIAS_VALUE_REQUIRED,
                super::errors::ERROR_FORM,
                super::errors::NO_SERVER_ERROR,
            ],
            summary: "account-info and title-fetch with an alias_type but no alias value never succeed (a 400 is in the bare form)",
            faults: &[
                Fault::TextErrors,
                Fault::BadRequestEnvelope,
                Fault::AliasValueOptional,
                Fault::BadRequestMessage,
                Fault::LookupCacheIgnoresQuery,
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
            c.fail(
                &ANSWERS_FOR_IBAN,
                e,
                format!("asked for IBAN {asked:?}, answered for {got:?}"),
            )
        });
    }
    if judge.cases == 0 {
        return Outcome::skipped(
            c.ctx
                .sample_or_why(OpId::AccountInfo)
                .err()
                .unwrap_or_else(|| c.ctx.why_no_lookup("the IBAN lookup did not succeed")),
        );
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
        use super::errors::ERROR_FORM;
        if let Some(broken) =
            super::errors::server_error(c, &e, "an alias_type without an alias value")
        {
            judge.fail(broken);
            continue;
        }
        let why = if e.success() {
            Some((
                &ALIAS_VALUE_REQUIRED,
                "an alias_type without an alias value succeeded".to_owned(),
            ))
        } else if e.refused() {
            super::errors::form(&e).map(|why| (&ERROR_FORM, why))
        } else {
            None
        };
        match why {
            Some((claim, why)) => judge.fail(c.fail(claim, &e, why)),
            None => judge.case(),
        }
    }
    judge.outcome()
}
