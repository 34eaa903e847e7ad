//! What is derived from the measured numbers: the dollar cost (`pricing.rs`), the client limits
//! each result breaks (`limits.rs`), the per-client rows (`clients/`), the findings and the
//! schema score (`findings/`), and the suggested policy (`policy.rs`). It reads and fills the
//! report's facts; it writes nothing out (that is `report/`).

pub mod clients;
pub mod compare;
pub mod findings;
pub mod limits;
mod policy;
pub mod pricing;
pub mod quality;

pub use policy::{suggested_policy, suggested_tax};

use crate::measure::facts::{PriceInfo, Report};

/// Price every server and probe, judge them against the client limits, and run the design
/// checks: everything derived from the measured numbers.
pub fn annotate(report: &mut Report, price: PriceInfo) {
    pricing::apply(report, price);
    limits::apply(report);
    clients::apply(report);
    findings::apply(report);
}
