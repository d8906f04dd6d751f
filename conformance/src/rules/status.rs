//! status.*: the one success status API.md states.

use super::support::Judge;
use super::{Check, Claim, Kind, Level, Outcome, Rule, Run};
use aggpay_mock::Fault;

use crate::contract::OpId;
use crate::contract::subject::{Subject, on};

const CHARGES_200: Claim = Claim {
    holds: "the payment-charges operation succeeds with 200",
    says: &["Success status code is stated only for the payment-charges operation (200)"],
};

pub fn rules() -> Vec<Rule> {
    vec![Rule {
        id: "status.charges-200",
        level: Level::Required,
        kind: Kind::Check,
        source: "API.md Conventions 7 and Payments (200 returns data: PaymentCharges)",
        claims: &[CHARGES_200],
        summary: "the payment-charges operation succeeds with 200 exactly",
        faults: &[Fault::Charges201, Fault::Success201],
        judges: &[Subject::Answer(on::exactly_200)],
        run: Run::Check(charges_200),
    }]
}

fn charges_200(c: &Check<'_>) -> Outcome {
    let mut judge = Judge::default();
    for e in c.ctx.samples(OpId::Charges).filter(|e| e.success()) {
        judge.check(e.status() == Some(200), || {
            c.fail(
                &CHARGES_200,
                e,
                format!("charges answered {}, not 200", e.status().unwrap_or(0)),
            )
        });
    }
    if judge.cases == 0 {
        return Outcome::skipped(
            c.ctx
                .sample_or_why(OpId::Charges)
                .err()
                .unwrap_or_else(|| "no charges succeeded".into()),
        );
    }
    judge.outcome()
}
