//! The budget engine: shrink any tool result to a token budget without losing data. Least
//! destructive first, stopping as soon as the result fits: pass through, strip noise from
//! prose, write JSON compactly, project or shrink it, spill the original to disk with a preview. Every reduced
//! result carries a note saying what was cut and where the full original is. Synchronous and
//! pure except the spill store.

mod chunks;
mod client;
mod compaction;
mod engine;
mod exact;
mod fill;
mod github;
mod input;
mod note;
mod parts;
mod policy;
mod prefix;
mod prefix_strip;
mod project;
mod size;
mod spill;
mod strip;
mod toon;

pub use engine::{Budgeted, CallInfo, Engine, Stage, Strategy};
pub use fill::{scan, ArrayCut, Caps as FillCaps, FillReport, Filler};
pub use input::{load_payload, parse_result, Payload, PayloadError};
pub use policy::{
    Policy, PolicyError, PolicyFileError, StripRules, ToolPolicy, MIN_BUDGET, MIN_SIZE_CHARS,
    MIN_SIZE_LINES,
};
pub use prefix::{PrefixCounter, Scan};
pub use project::Projection;
pub use size::{Size, SizeLimits};
pub use spill::{
    content_hash, sanitize, SpillEntry, SpillHandle, SpillLines, SpillReadError, SpillStore,
    DEFAULT_MAX_BYTES, SPILL_URI_PREFIX,
};
pub use strip::{strip, StripCounts, TRACKING_PARAMS};
pub use toon::{
    decode as toon_decode, encode as toon_encode, toon_result, DecodeError as ToonDecodeError,
};
