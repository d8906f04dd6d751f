//! agree.*: an entity seen through two operations is the same entity: a
//! transaction repeats its merchants' and aggregator's names as their own
//! records show them, and a payment's charges are its payment
//! transaction's amounts.

use aggpay_mock::Fault;
use serde_json::Value;

use super::support::Judge;
use super::{Check, Claim, Kind, Level, Outcome, Rule, Run};
use crate::contract::subject::{Said, Subject};
use crate::contract::{OpId, REFERENCES};
use crate::http::show;
use crate::model::token_of;

const NAMES_AGREE: Claim = Claim {
    holds: "a transaction names its merchants and aggregator as their own records do",
    says: &[
        "| aggregator_merchant_id, aggregator_merchant_name | string | am_ identifier and its name |",
        "| rail_merchant_id, rail_merchant_name | string | mer_ identifier and its name |",
    ],
};
const CHARGES_AGREE: Claim = Claim {
    holds: "a payment's charges carry the amounts and currency of its payment transaction",
    says: &[
        "read the fee and tax breakdown of a payment",
        "| gross_amount, fee_amount, net_amount, sales_tax_on_fee_amount, sales_tax_withholding_amount, income_tax_withholding_amount, digital_tax_amount | string | same meaning as in PaymentCharges |",
    ],
};

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "agree.references",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md Transaction (aggregator_merchant_id and aggregator_merchant_name: am_ identifier and its name; rail_merchant_id and rail_merchant_name: mer_ identifier and its name; aggregator_id, aggregator_name)",
            claims: &[NAMES_AGREE],
            summary: "every transaction read names its aggregator merchant, rail merchant and aggregator as their own records do, wherever both are seen",
            faults: &[Fault::TransactionMerchantName],
            judges: &[Subject::References],
            run: Run::Check(references),
        },
        Rule {
            id: "agree.charges",
            level: Level::Required,
            kind: Kind::Check,
            source: "API.md PaymentCharges (the fee and tax breakdown of a payment); Transaction (amounts: same meaning as in PaymentCharges)",
            claims: &[CHARGES_AGREE],
            summary: "a payment's charges carry the amounts and currency of its payment transaction, for every payment read",
            faults: &[Fault::ChargesFeeShift],
            judges: &[Subject::Said(Said::NetAmount)],
            run: Run::Check(charges),
        },
    ]
}

fn references(c: &Check<'_>) -> Outcome {
    let model = &c.ctx.model;
    let aggregator = c.ctx.data(OpId::Aggregator);
    let mut judge = Judge::default();
    for reference in REFERENCES {
        let targets: Vec<&Value> = match reference.to {
            OpId::Aggregator => aggregator.into_iter().collect(),
            op => model.rows(op),
        };
        if targets.is_empty() {
            continue;
        }
        for list in model
            .lists(reference.from)
            .filter(|l| l.source.base.is_empty())
        {
            for page in &list.pages {
                for row in page.rows(list.source.rows).into_iter().flatten() {
                    let id = &row[reference.id];
                    let Some(target) = targets.iter().find(|t| t[reference.key] == *id) else {
                        continue;
                    };
                    let (want, got) = (&target[reference.to_name], &row[reference.name]);
                    judge.check(want == got, || {
                        c.fail(
                            &NAMES_AGREE,
                            page,
                            format!(
                                "transaction {}: {} is {}, the record of {} {} says {}",
                                token_of(row),
                                reference.name,
                                show(Some(got)),
                                reference.id,
                                show(Some(id)),
                                show(Some(want))
                            ),
                        )
                    });
                }
            }
        }
    }
    if judge.cases == 0 {
        return Outcome::skipped("no transaction named a record that was read");
    }
    judge.outcome()
}

const AMOUNTS: [&str; 8] = [
    "gross_amount",
    "fee_amount",
    "net_amount",
    "sales_tax_on_fee_amount",
    "sales_tax_withholding_amount",
    "income_tax_withholding_amount",
    "digital_tax_amount",
    "currency",
];

fn charges(c: &Check<'_>) -> Outcome {
    let payments: Vec<&Value> = c
        .ctx
        .model
        .lists(OpId::Transactions)
        .filter(|l| l.source.base.is_empty())
        .flat_map(|l| l.known())
        .filter(|t| t["transaction_type"] == "TT_PAYMENT")
        .collect();
    let mut judge = Judge::default();
    for e in c.ctx.samples(OpId::Charges) {
        let Some(data) = e.data() else { continue };
        let Some(txn) = payments
            .iter()
            .find(|t| t["payment_id"] == data["payment_id"])
        else {
            continue;
        };
        for field in AMOUNTS {
            judge.check(data[field] == txn[field], || {
                c.fail(
                    &CHARGES_AGREE,
                    e,
                    format!(
                        "charges of {}: {field} is {}, its payment transaction {} says {}",
                        show(data.get("payment_id")),
                        show(data.get(field)),
                        token_of(txn),
                        show(txn.get(field))
                    ),
                )
            });
        }
    }
    if judge.cases == 0 {
        return Outcome::skipped("no charges read were of a payment transaction read");
    }
    judge.outcome()
}
