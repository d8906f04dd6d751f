//! Aggregator merchants and rail merchants.

use aggpay::{AggregatorMerchantId, RailMerchantId};

use crate::fault::Fault;
use crate::legal::Legal;
use crate::query::{Invalid, Query};
use crate::reply::{self, Reply};
use crate::router::App;
use crate::wire::{MerchantList, RailMerchantList, StringCount};

impl App {
    pub(crate) fn merchants(&self, q: &Query) -> Result<Reply, Invalid> {
        let limit = self.offset_limit(q, false)?;
        let offset = self.offset(q)?;
        let enabled = q
            .boolean("enabled")?
            .filter(|_| !self.faults.has(Fault::MerchantsEnabledFilterIgnored))
            .or_else(|| self.legal.has(Legal::EnabledByDefault).then_some(true));
        // Every entry an am_ identifier: an empty one (`a,,b`) or one
        // padded with spaces is malformed, not skipped.
        let ids = q
            .one("merchant_identifiers")?
            .map(|raw| {
                raw.split(',')
                    .map(|s| AggregatorMerchantId::parse(s).map_err(|e| e.to_string()))
                    .collect::<Result<Vec<_>, _>>()
            })
            .transpose()?
            .unwrap_or_default();
        let ids = if self.faults.has(Fault::MerchantIdsFirstOnly) {
            ids.into_iter().take(1).collect()
        } else {
            ids
        };
        let listed = if self.faults.has(Fault::MerchantNamesSplitOnce) {
            // Split once, at the first comma: "a,b,c" is "a" and "b,c".
            q.one("names")?
                .map(|v| match v.split_once(',') {
                    Some((first, rest)) => vec![first.to_owned(), rest.to_owned()],
                    None => vec![v.to_owned()],
                })
                .unwrap_or_default()
        } else {
            q.list("names")?
        };
        for name in &listed {
            self.plain_value("names", name)?;
        }
        let exact = self.name_values(listed);
        let names = self.fragments(exact.clone());
        let exact = self.legal.has(Legal::MerchantNamesExact).then_some(exact);
        let d = &self.data;
        let rows = self
            .in_order(0..d.sizes.merchants)
            .filter(|i| {
                ids.is_empty()
                    || ids
                        .iter()
                        .any(|id| d.merchant_index(id.as_str()) == Some(*i))
            })
            .map(|i| d.merchant(i))
            .filter(|m| enabled.is_none_or(|e| m.enabled == e))
            .filter(|m| match &exact {
                Some(exact) => exact.is_empty() || exact.contains(&m.name),
                None => self.matches_any(&m.name, &names),
            });
        let (merchants, count) = self.counted_page(rows, offset, limit);
        Ok(reply::ok(&MerchantList {
            merchants,
            count: StringCount(count),
        }))
    }

    pub(crate) fn rail_merchants(&self, q: &Query) -> Result<Reply, Invalid> {
        let limit = self.offset_limit(q, false)?;
        let offset = self.offset(q)?;
        let status = q
            .choice("status", &["Active", "Inactive", "Suspended"])?
            .filter(|_| !self.faults.has(Fault::RailStatusFilterIgnored));
        if let Some(name) = q.one("name")? {
            self.plain_value("name", name)?;
        }
        let name = q
            .one("name")?
            .map(|n| self.fold(&self.name_value(n)))
            .filter(|n| !n.is_empty());
        let d = &self.data;
        let rows = self
            .in_order(0..d.rail_merchant_count())
            .map(|i| d.rail_merchant(i))
            .filter(|m| status.is_none_or(|s| m.status.as_str() == s))
            .filter(|m| {
                name.as_ref()
                    .is_none_or(|n| self.contains(&self.fold(&m.name), n))
            });
        let (merchants, count) = self.counted_page(rows, offset, limit);
        Ok(reply::ok(&RailMerchantList {
            merchants,
            count: StringCount(count),
        }))
    }

    /// A name filter's value as the handler reads it.
    fn name_value(&self, value: &str) -> String {
        if self.faults.has(Fault::NonAsciiNameFilter) {
            value.chars().filter(char::is_ascii).collect()
        } else {
            value.to_owned()
        }
    }

    fn name_values(&self, values: Vec<String>) -> Vec<String> {
        values.iter().map(|v| self.name_value(v)).collect()
    }

    pub(crate) fn rail_merchant(&self, id: &str) -> Result<Reply, Invalid> {
        let id = self.token_case(id);
        let id = RailMerchantId::parse(&id).map_err(|e| e.to_string())?;
        Ok(match self.data.rail_merchant_index(id.as_str()) {
            Some(i) if self.faults.has(Fault::RailMerchantWrongRecord) => {
                let next = (i + 1) % self.data.rail_merchant_count();
                reply::ok(&self.data.rail_merchant(next))
            }
            Some(i) => reply::ok(&self.data.rail_merchant(i)),
            None if self.faults.has(Fault::UnknownRailMerchantFound) => {
                reply::ok(&self.data.rail_merchant(0))
            }
            None if self.faults.has(Fault::RailMerchant404Message) => {
                reply::not_found_saying("merchant not found")
            }
            None => reply::not_found(),
        })
    }
}
