//! Recording an audit's JSON-RPC exchanges and serving a recording back, so CI can audit a
//! server without its credentials: `audit --record DIR` writes one transcript per server
//! (secrets redacted), `manifest.json` and a `probes.toml` that audits the recording through
//! `serve-capture`, which answers every recorded request with the recorded bytes.

mod error;
mod manifest;
mod record;
mod recording;
mod serve;

pub use error::CaptureError;
pub use manifest::{
    Manifest, ManifestServer, MessageCounts, RecordedProbe, MANIFEST_FILE, PROBES_FILE,
    SCHEMA_VERSION,
};
pub use record::{Recorder, ReplayDefaults};
pub use recording::{RecordedReply, Recording};
pub use serve::serve;
