//! The budget engine: shrink any tool result to a token budget without losing data. Least
//! destructive first, stopping as soon as the result fits: pass through, strip noise from
//! prose, write JSON compactly, project or shrink it, spill the original to disk with a preview. Every reduced
//! result carries a note saying what was cut and where the full original is. Synchronous and
//! pure except the spill store.
//!
//! Budget a `CallToolResult`: a result the model would be sent whole comes out as the part of
//! it that fits, and the whole original is saved in the spill store.
//!
//! ```
//! use mcp_budget::budget::{CallInfo, Engine, Policy, SpillStore, Strategy};
//! use mcp_budget::Tokenizer;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let mut policy = Policy::builtin();
//! policy.set_budget(500).unwrap();
//! let store = SpillStore::new(dir.path(), 1 << 30);
//! let engine = Engine::new(policy, Tokenizer::Cl100k, store);
//! // a scraped page of 20,000 lines: far over 500 tokens
//! let page: String = (0..20_000).map(|i| format!("line {i} of the page\n")).collect();
//! let result = serde_json::json!({"content": [{"type": "text", "text": page}]});
//! let call = CallInfo { server: "web", tool: "scrape", raw: None, output_schema: false };
//! let out = engine.run(&call, &result);
//! assert_eq!(out.strategy, Strategy::Spilled);
//! assert!(out.tokens_after <= 500);
//! // the whole page is on disk, and the result the model gets says where
//! let spill = out.spill.unwrap();
//! assert_eq!(std::fs::read_to_string(&spill.path).unwrap(), page);
//! assert!(out.result.to_string().contains(&spill.id));
//! ```

mod engine;
mod parts;
mod policy;
mod shape;
mod spill;
mod strip;

pub use engine::{Budgeted, CallInfo, Engine, Stage, Strategy};
pub use parts::input::{load_payload, parse_result, Payload, PayloadError};
pub use parts::prefix::{PrefixCounter, Scan};
pub use policy::size::{Size, SizeLimits};
pub use policy::{
    Policy, PolicyError, PolicyFileError, StripRules, ToolPolicy, MIN_BUDGET, MIN_SIZE_CHARS,
    MIN_SIZE_LINES,
};
pub use shape::fill::{scan, ArrayCut, Caps as FillCaps, FillReport, Filler};
pub use shape::project::Projection;
pub use shape::toon::{
    decode as toon_decode, encode as toon_encode, toon_result, DecodeError as ToonDecodeError,
};
pub use spill::{
    content_hash, sanitize, SpillEntry, SpillHandle, SpillLines, SpillReadError, SpillStore,
    DEFAULT_MAX_BYTES, SPILL_URI_PREFIX,
};
pub use strip::{strip, StripCounts, TRACKING_PARAMS};
