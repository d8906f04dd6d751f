//! Account lookups by IBAN, mobile or till code, and aliases.

use aggpay::AliasId;

use crate::fault::Fault;
use crate::legal::Legal;
use crate::query::{Invalid, Query};
use crate::reply::{self, Reply};
use crate::router::App;

impl App {
    /// A looked-up value, absent when empty; with `lookups-normalised`,
    /// trimmed and in capitals.
    fn normalised(&self, value: Option<&str>) -> Option<String> {
        let value = value.filter(|v| !v.is_empty())?;
        Some(if self.legal.has(Legal::LookupsNormalised) {
            value.trim().to_uppercase()
        } else {
            value.to_owned()
        })
    }

    pub(crate) fn account_info(&self, q: &Query) -> Result<Reply, Invalid> {
        let with_title =
            q.boolean("with_title_fetch")?.unwrap_or(false) && !self.legal.has(Legal::TitleEmpty);
        let alias_type = q.choice("alias_type", &["MOBILE"])?;
        let alias_value = self.normalised(q.one("alias_value")?);
        let iban = self.normalised(q.one("iban")?);
        let (alias_value, iban) = (alias_value.as_deref(), iban.as_deref());
        for (name, value) in [("iban", iban), ("alias_value", alias_value)] {
            self.plain_value(name, value.unwrap_or(""))?;
        }
        let d = &self.data;
        let f = &self.faults;
        let found = match (iban, alias_type, alias_value) {
            (_, Some(_), None) if f.has(Fault::AliasValueOptional) => Some((0, true)),
            (_, Some(_), None) => {
                return Err("`alias_value` is required with `alias_type`".to_owned());
            }
            (_, None, Some(_)) => {
                return Err("`alias_type` is required with `alias_value`".to_owned());
            }
            (_, Some(_), Some(mobile)) => d.account_by_mobile(mobile).map(|m| (m, true)),
            (Some(iban), None, None) if f.has(Fault::AccountInfoWrongIban) => d
                .account_by_iban(iban)
                .map(|m| ((m + 1) % d.sizes.merchants, false)),
            (Some(iban), None, None) => d.account_by_iban(iban).map(|m| (m, false)),
            (None, None, None) => {
                return Err("give `iban`, or `alias_type` and `alias_value`".to_owned());
            }
        };
        Ok(match found {
            Some((m, by_alias)) => reply::ok(&d.account_info(m, by_alias, with_title)),
            None => reply::not_found(),
        })
    }

    pub(crate) fn title_fetch(&self, q: &Query) -> Result<Reply, Invalid> {
        q.choice("alias_type", &["TILL_CODE"])?;
        let with_title =
            q.boolean("with_title_fetch")?.unwrap_or(false) && !self.legal.has(Legal::TitleEmpty);
        let value = self.normalised(q.one("alias_value")?);
        let value = value.as_deref();
        self.plain_value("alias_value", value.unwrap_or(""))?;
        let found = match value {
            None if self.faults.has(Fault::AliasValueOptional) => Some(0),
            None => return Err("`alias_value` is required".to_owned()),
            Some(_) if self.faults.has(Fault::TillAnyAccount) => Some(1),
            Some(value) if self.faults.has(Fault::TillOtherAlias) => self
                .data
                .account_by_till(value)
                .map(|m| (m + 1) % self.data.sizes.merchants),
            Some(value) => self.data.account_by_till(value),
        };
        Ok(match found {
            Some(m) => reply::ok(&self.data.account_info(m, true, with_title)),
            None => reply::not_found(),
        })
    }

    pub(crate) fn alias(&self, id: &str) -> Result<Reply, Invalid> {
        let id = AliasId::parse(id).map_err(|e| e.to_string())?;
        Ok(match self.data.alias_index(id.as_str()) {
            Some(i) => reply::ok(&self.alias_as_read(i)),
            None if self.faults.has(Fault::UnknownAliasFound) => reply::ok(&self.alias_as_read(0)),
            None => reply::not_found(),
        })
    }

    /// Alias `index` as a read answers it: as the dataset has it, or under
    /// `reads-write` saved by the read, its updated_at the read's time.
    fn alias_as_read(&self, index: u64) -> crate::wire::Alias {
        let mut alias = self.data.alias(index);
        if self.faults.has(Fault::ReadsWrite) {
            alias.updated_at = self.state.stamp_alias(index, alias.updated_at);
        }
        alias
    }
}
