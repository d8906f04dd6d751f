//! QR codes.

use aggpay::AggregatorMerchantId;

use crate::fault::Fault;
use crate::query::{Invalid, Query};
use crate::reply::{self, Reply};
use crate::router::App;
use crate::wire::{QrCodeList, StringCount};

impl App {
    pub(crate) fn qrs(&self, q: &Query) -> Result<Reply, Invalid> {
        let limit = self.offset_limit(q, false)?;
        let offset = self.offset(q)?;
        let default = if self.faults.has(Fault::QrDefaultDynamic) {
            "DYNAMIC"
        } else {
            "STATIC"
        };
        let qr_type = q.choice("type", &["STATIC", "DYNAMIC"])?.unwrap_or(default);
        let merchant = q
            .one("aggregator_merchant_id")?
            .map(|s| AggregatorMerchantId::parse(s).map_err(|e| e.to_string()))
            .transpose()?;
        let d = &self.data;
        let rows = self
            .in_order(0..d.sizes.qr_codes)
            .map(|i| d.qr_code(i))
            .filter(|c| c.qr_type.as_str() == qr_type)
            .filter(|c| {
                merchant
                    .as_ref()
                    .is_none_or(|m| &c.aggregator_merchant_id == m)
            });
        let (qr_codes, count) = self.counted_page(rows, offset, limit);
        Ok(reply::ok(&QrCodeList {
            qr_codes,
            count: StringCount(count),
        }))
    }
}
