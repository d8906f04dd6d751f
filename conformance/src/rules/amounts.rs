//! amounts.*: amounts are paisa strings, currencies ISO 4217 codes, and
//! net is gross minus the fee and the four taxes, on every row.

use aggpay::rules as text_rules;
use serde_json::Value;

use super::fields::strings;
use super::support::Judge;
use super::{Check, Level, Outcome, Rule};
use crate::http::{Exchange, show};
use crate::schema::Kind;

pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            id: "amounts.paisa",
            level: Level::Required,
            source: "API.md typing rule 3",
            summary: "amounts are decimal integer strings in paisa",
            faults: &["decimal-amounts"],
            check: paisa,
            observe: None,
        },
        Rule {
            id: "amounts.net",
            level: Level::Required,
            source: "API.md PaymentCharges (net_amount) and Transaction (same meaning as in PaymentCharges)",
            summary: "net_amount equals gross_amount minus fee_amount and the four tax amounts, on the charges and on every sampled transaction, refunds included",
            faults: &["net-mismatch", "refund-net-mismatch"],
            check: net,
            observe: None,
        },
        Rule {
            id: "amounts.currency",
            level: Level::Required,
            source: "API.md typing rule 3",
            summary: "currency is an ISO 4217 code",
            faults: &["lowercase-currency"],
            check: currency,
            observe: None,
        },
    ]
}

fn paisa(c: &Check<'_>) -> Outcome {
    strings(
        c,
        |k| k == Kind::Amount,
        |_, s| {
            if text_rules::is_paisa(s) {
                Ok(())
            } else {
                Err(format!("{s:?} is not an integer amount in paisa"))
            }
        },
    )
}

fn currency(c: &Check<'_>) -> Outcome {
    strings(
        c,
        |k| k == Kind::Currency,
        |_, s| {
            if text_rules::is_currency(s) {
                Ok(())
            } else {
                Err(format!("{s:?} is not an ISO 4217 code"))
            }
        },
    )
}

/// The charges objects and every sampled transaction.
fn amount_rows<'c>(c: &'c Check<'_>) -> Vec<(&'static str, &'c Exchange, &'c Value)> {
    let mut rows: Vec<(&'static str, &Exchange, &Value)> = c
        .ctx
        .samples("charges")
        .filter_map(|e| e.data().map(|d| ("charges", e, d)))
        .collect();
    rows.extend(
        c.ctx
            .rows("transactions", "transactions")
            .map(|(e, t)| ("transactions", e, t)),
    );
    rows
}

fn net(c: &Check<'_>) -> Outcome {
    let rows = amount_rows(c);
    if rows.is_empty() {
        return Outcome::skipped("no charges and no transactions were sampled");
    }
    let mut judge = Judge::default();
    let amount = |v: &Value, f: &str| {
        v[f].as_str()
            .filter(|s| text_rules::is_paisa(s))
            .and_then(|s| s.parse::<i128>().ok())
    };
    for (op, e, row) in rows {
        let parts: Option<Vec<i128>> = [
            "gross_amount",
            "fee_amount",
            "sales_tax_on_fee_amount",
            "sales_tax_withholding_amount",
            "income_tax_withholding_amount",
            "digital_tax_amount",
            "net_amount",
        ]
        .iter()
        .map(|f| amount(row, f))
        .collect();
        // Unparsable amounts are `amounts.paisa`'s business.
        let Some(p) = parts else { continue };
        let expected = p[0] - p[1] - p[2] - p[3] - p[4] - p[5];
        judge.check(expected == p[6], || {
            c.fail(
                e,
                format!(
                    "{op}: net_amount {} but gross minus fee and taxes is {expected} ({} {})",
                    p[6],
                    show(row.get("transaction_type").or(row.get("payment_id"))),
                    show(row.get("token"))
                ),
            )
        });
    }
    judge.outcome()
}
