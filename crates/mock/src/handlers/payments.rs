//! Payment charges and refunds.

use aggpay::PaymentId;

use crate::fault::Fault;
use crate::legal::Legal;
use crate::query::{Invalid, Query};
use crate::reply::{self, Reply};
use crate::router::App;
use crate::wire::{IntCount, RefundList};

impl App {
    pub(crate) fn charges(&self, id: &str) -> Result<Reply, Invalid> {
        let id = PaymentId::parse(id).map_err(|e| e.to_string())?;
        let view = self.view();
        let found = view.payment_location(id.as_str()).map(|place| {
            if self.faults.has(Fault::ChargesFirstPayment) {
                // The first payment of the newest batch that has one.
                (0..view.batch_count())
                    .rev()
                    .find(|b| view.transaction_count(*b) > 0)
                    .map_or(place, |b| (b, 0))
            } else {
                place
            }
        });
        Ok(match found {
            Some((b, j)) => {
                let mut reply = reply::ok(&self.data.charges(b, j));
                if self.faults.has(Fault::Charges201) {
                    reply.status = 201;
                }
                reply
            }
            None => reply::not_found(),
        })
    }

    pub(crate) fn refunds(&self, q: &Query) -> Result<Reply, Invalid> {
        let (offset, limit) = self.purpose_paging(q)?;
        let start = q.unix("start_date")?;
        let end = q.unix("end_date")?;
        let ascending = if self.faults.has(Fault::RefundDirectionLowercase) {
            self.ascending(q)? || q.one("direction")? == Some("asc")
        } else {
            self.ascending(q)?
        };
        let first_status_only = self.faults.has(Fault::RefundStatusFirstOnly);
        let dated = start.is_some() || end.is_some();
        let status_dropped = dated && self.faults.has(Fault::RefundDateDropsStatus);
        let end_exclusive = self.faults.has(Fault::RefundEndDateExclusive);
        let mut filters: Vec<(&str, Vec<&str>)> = Vec::new();
        for name in [
            "payment_id",
            "status",
            "trace_reference",
            "msg_id",
            "return_id",
            "request_id",
            "refund_id",
        ] {
            let mut values = if self.legal.has(Legal::CommaValues) {
                // One key, its values comma-separated; a repeated key is
                // refused (`Query::one`).
                q.one(name)?
                    .map(|v| v.split(',').collect())
                    .unwrap_or_default()
            } else {
                q.all(name)
            };
            if (name == "status" && first_status_only)
                || self.faults.has(Fault::RefundFiltersOneValue)
            {
                values.truncate(1);
            }
            if name == "status" && status_dropped {
                values.clear();
            }
            filters.push((name, values));
        }
        let view = self.view();
        let n = view.refund_count();
        let order: Box<dyn Iterator<Item = u64>> = if ascending {
            Box::new(0..n)
        } else {
            Box::new((0..n).rev())
        };
        let rows = order
            .filter(|i| {
                let t = self.data.refund_created_unix(*i);
                start.is_none_or(|s| t >= s)
                    && end.is_none_or(|e| if end_exclusive { t < e } else { t <= e })
            })
            .map(|i| view.refund(i))
            .filter(|r| {
                filters.iter().all(|(name, wanted)| {
                    let have = match *name {
                        "payment_id" => r.payment_id.as_str(),
                        "status" => r.status.as_str(),
                        "trace_reference" => &r.trace_reference,
                        "msg_id" => &r.msg_id,
                        "return_id" => &r.return_id,
                        "request_id" => &r.request_id,
                        _ => &r.token,
                    };
                    wanted.is_empty() || wanted.contains(&have)
                })
            });
        let (keys, count) = self.counted_page(rows, offset, limit);
        Ok(reply::ok(&RefundList {
            count: IntCount(count),
            keys,
        }))
    }
}
