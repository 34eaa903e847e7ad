//! The facts of a run, as audit.json holds them: the report's data model (`report.rs`), what a
//! tool definition costs (`definitions.rs`), the protocol era a server kept (`era.rs`), its lists (`lists.rs`) and the
//! per-client rows (`clients.rs`). `measure` and `audit` fill it, `assess` derives from it,
//! `report` writes it, `gate` compares it. Field names are public interface: add, never rename.

mod clients;
mod definitions;
mod era;
mod items;
mod lists;
pub use items::ItemsKept;
pub use lists::{EraListing, ListCost, ToolsList};
mod report;

pub use clients::{ClientResult, ClientSchema, MeasuredClient, MeasuredDefinitions};
pub use definitions::{SchemaLint, SchemaScore, SharedParameter, ToolCost};
pub use era::{EraConformance, VersionRefusal};
pub use report::{
    BlockCost, BudgetedCost, ConfigIssue, Finding, LimitVerdict, PriceInfo, ProbeCost, ProbeResult,
    ProbeStatus, RawCost, RawTotals, Report, ServerCost, ServerReport, ServerTotals, Status,
    SCHEMA_VERSION,
};
