//! The largest message each MCP SDK's client reads, per transport (`sdk_limits.toml`, data
//! with a primary source per row): a tools/list page over it never reaches that client.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

/// The largest message an SDK's client reads on one transport (`sdk_limits.toml`), with its
/// primary source: a tools/list page over it never reaches that client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SdkLimit {
    pub id: String,
    pub name: String,
    pub transport: String,
    pub bytes: usize,
    pub effect: String,
    pub source: String,
    pub as_of: String,
    pub checked: String,
}

static SDK_LIMITS: LazyLock<Vec<SdkLimit>> = LazyLock::new(|| {
    #[derive(Deserialize)]
    struct Table {
        sdk: Vec<SdkLimit>,
    }
    toml::from_str::<Table>(include_str!("sdk_limits.toml"))
        .expect("sdk_limits.toml is valid (a unit test parses it)")
        .sdk
});

/// Every SDK read limit known.
pub fn sdk_limits() -> &'static [SdkLimit] {
    &SDK_LIMITS
}
