//! Client profiles: what each MCP client puts in front of the model, as data with a source and a
//! date for every fact (`clients.toml`), and the rules applied to one result (`result.rs`: what
//! reaches the model; `visible.rs`: the parts it is sent; `era.rs`: the protocol era it speaks;
//! `listing.rs`: how it offers a server's tools;
//! `model.rs`: the tokenizer its model's counts are in).
//! The ground layer: the report's model,
//! the engine (`budget::Engine::for_clients`) and the lab read them; the per-server client rows
//! every output shows are derived in `assess::clients`.

mod era;
mod limits;
mod listing;
mod model;
mod per_block;
mod result;
mod rule_match;
mod sdk_limits;
mod size;
mod visible;

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

pub use era::EraRule;
pub use limits::{engine_limits, ResultLimits};
pub use listing::{ListingRule, SchemaMode, SchemaRule};
pub use model::ModelRule;
pub use result::{
    breaks_limit, client_view, client_view_counted, client_view_in, is_json_array_result,
    misstated_by, stated_cut,
};
pub use sdk_limits::{sdk_limits, SdkLimit};
pub use visible::CountFn;

/// A fact's provenance: a primary source, its date, the day it was read, and whether a primary
/// source states it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Sourced {
    pub source: String,
    pub as_of: String,
    pub checked: String,
    pub confirmed: bool,
}

/// Which parts of a tool result reach the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Sends {
    Both,
    Content,
    StructuredOnly,
    StructuredReplacesText,
    BothDedup,
    /// The whole result as one JSON text (Cline CLI).
    ResultJson,
    /// The content array as one JSON text (Continue CLI); structuredContent is not sent.
    ContentJson,
}

impl Sends {
    /// The client sends the result as one JSON text it wrote (a wrapper and escapes included).
    pub fn as_json(self) -> bool {
        matches!(self, Sends::ResultJson | Sends::ContentJson)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SendsRule {
    pub mode: Sends,
    /// A text block that is a JSON object or array is rewritten compactly before the client
    /// measures and sends it, in a result without structuredContent (Copilot CLI 1.0.102:
    /// measured; beside structuredContent a pretty copy is sent as it is).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub compacts_json: bool,
    /// The structuredContent's JSON goes before the content's texts (Qwen Code: measured).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub structured_first: bool,
    #[serde(flatten)]
    pub sourced: Sourced,
}

/// How an image block reaches the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Images {
    /// As an image, priced by its dimensions.
    Pixels,
    /// Its base64 pasted as text.
    Base64Text,
    /// Not sent at all: the model gets nothing of it (measured: opencode 1.18.33).
    Dropped,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ImagesRule {
    pub mode: Images,
    /// A text the client sends beside each image it sends (Claude Code: the path it saved the
    /// image to, measured): `{file}` is the profile's `file_path` with the image's extension.
    /// Counted after the result's rules, as the client writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(flatten)]
    pub sourced: Sourced,
}

/// How an embedded resource block reaches the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Resources {
    /// A text resource's text alone; a blob's nothing.
    #[default]
    Text,
    /// The block's compact JSON (`{"type":"resource","resource":{uri, mimeType, text or
    /// blob}}`): a blob's base64 is paid as text.
    Json,
    /// A text resource's text, and a blob's base64 as text.
    TextAndBlob,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ResourcesRule {
    pub mode: Resources,
    /// The text sent in place of a blob, where the client sends a note and not the blob
    /// (measured: opencode, Kilo CLI, Claude Code, Qwen Code): `{uri}`, `{mime}`, `{size}`
    /// ("2 KB", rounded up), `{size_1}` ("2.9KB"), `{file}` (the profile's `file_path`);
    /// `{server}` and `{tool}` become stand-ins (a profile does not know them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob_note: Option<String>,
    /// Blob types sent as attachments, as images are, and not as the note.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blob_attaches: Vec<String>,
    #[serde(flatten)]
    pub sourced: Sourced,
}

/// One limit of a client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// `result` (one tool result) or `tools` (the tools a client mounts).
    pub applies: String,
    /// tokens, chars, bytes, lines or tools
    pub unit: String,
    pub threshold: u64,
    /// warning, cap, truncate, spill, refuse or drop
    pub effect: String,
    /// truncate: the share of the kept text taken from the start (the rest from the end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_share: Option<f64>,
    /// spill: the preview's size in the rule's unit (or in `preview_unit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<u64>,
    /// spill: the preview's unit when it is not the rule's (Copilot CLI measures bytes and
    /// previews 500 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview_unit: Option<String>,
    /// The text the client adds in place of what it cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Applies only to a result whose content is one text block (or one embedded text
    /// resource).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub only_single_text: bool,
    /// `json_array`: the rule applies only to a result whose content is one text block holding a
    /// JSON array; `cut`: only to a result a `per_block` rule cut (Qwen Code's 200,000-character
    /// budget, which its filing of any result over 28,000 otherwise leaves nothing to do).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// cap, truncate: the kept head ends at a line end (a first line longer than the limit
    /// keeps nothing).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_at_line: bool,
    /// The rule does not act on a result marked `isError` (it reaches the model whole).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_on_error: bool,
    /// The rule acts only on a result marked `isError`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub only_on_error: bool,
    /// The rule acts on each sent text alone, before the rules on the whole result (Qwen Code
    /// cuts a text over 500,000 characters in the tool, then budgets the joined result).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub per_block: bool,
    /// The rule does not act on a text that holds this (a cut the client made already).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unless_marked: Option<String>,
    /// truncate: the size of the kept head, the message and the kept tail together, when it
    /// is not the threshold (then the message comes out of it, and the header too when
    /// `header_counts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<u64>,
    /// truncate: the client's text before the kept head (the message goes between head and tail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    /// truncate: the header too comes out of `keep` (what is shown is `keep` long).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub header_counts: bool,
    /// truncate: the tail is taken only from the lines after the head's (a text of one line
    /// keeps its head alone).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tail_after_head_line: bool,
    /// A number in the tool definition's `_meta` under this key raises the threshold, up to
    /// `raised_up_to`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raised_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raised_up_to: Option<u64>,
    /// `false`: the message or preview size has no primary source (the threshold has).
    #[serde(default = "yes", skip_serializing_if = "Clone::clone")]
    pub shape_confirmed: bool,
    pub note: String,
    #[serde(flatten)]
    pub sourced: Sourced,
}

fn yes() -> bool {
    true
}

/// One client's profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ClientProfile {
    /// `claude-code`, `codex`, … (what `--client` takes).
    pub id: String,
    /// "Claude Code": how reports name it.
    pub name: String,
    pub note: String,
    pub sends: SendsRule,
    pub images: ImagesRule,
    /// How embedded resources reach the model (absent: a text resource's text, a blob not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesRule>,
    pub schema: SchemaRule,
    /// How it reads `tools/list` (absent: every page, as the SDKs do).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listing: Option<ListingRule>,
    /// The protocol era it speaks (absent: not measured; every client is offered the
    /// listing of the era the audit spoke).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub era: Option<EraRule>,
    /// Its model's family and the tokenizer its rows are counted in (absent: the report's
    /// primary tokenizer; the client runs whatever model it is configured with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRule>,
    /// Server instructions are cut to this many bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_cap_bytes: Option<usize>,
    /// How a deferred tool's name is shown: `{server}` and `{tool}` filled in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Every text the model is shown is wrapped: `{text}` filled in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrap: Option<String>,
    /// A path like the ones the client gives the model for a saved result (`{file}` in its
    /// messages); a short stand-in when the profile has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
    #[serde(default, rename = "rule", skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<Rule>,
    /// The lab run the profile's measured facts come from (`mcp-budget lab`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<Measured>,
}

/// Which client build a profile was measured with: its version, the model name it was told,
/// the day.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Measured {
    pub version: String,
    pub model: String,
    pub date: String,
    /// How (the command), and what the numbers depend on (model name, provider path).
    pub note: String,
}

impl ClientProfile {
    /// The client reads only the first `tools/list` page.
    pub fn first_page_only(&self) -> bool {
        self.listing.as_ref().is_some_and(|l| l.first_page_only)
    }

    /// Every fact of the profile is confirmed by a primary source.
    pub fn confirmed(&self) -> bool {
        self.sends.sourced.confirmed
            && self.images.sourced.confirmed
            && self.schema.sourced.confirmed
            && self.listing.as_ref().is_none_or(|l| l.sourced.confirmed)
            && self.resources.as_ref().is_none_or(|r| r.sourced.confirmed)
            && self.era.as_ref().is_none_or(|e| e.sourced.confirmed)
            && self
                .rules
                .iter()
                .all(|r| r.sourced.confirmed && r.shape_confirmed)
    }
}

#[derive(Deserialize)]
struct Table {
    client: Vec<ClientProfile>,
}

static PROFILES: LazyLock<Vec<ClientProfile>> = LazyLock::new(|| {
    toml::from_str::<Table>(include_str!("profiles/clients.toml"))
        .expect("the embedded client profiles parse (tested)")
        .client
});

/// Every client profile, in the file's order (`naive` first).
pub fn profiles() -> &'static [ClientProfile] {
    &PROFILES
}

/// The profile with this id.
pub fn profile(id: &str) -> Option<&'static ClientProfile> {
    profiles().iter().find(|p| p.id == id)
}

/// The profile with this id, or an error naming the known ones (`--client ID`).
pub fn find(id: &str) -> Result<&'static ClientProfile, UnknownClient> {
    profile(id).ok_or_else(|| UnknownClient {
        name: id.to_string(),
        known: profiles()
            .iter()
            .map(|p| p.id.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// A `--client` value naming no profile.
#[derive(Debug, thiserror::Error)]
#[error("unknown client `{name}` (known: {known})")]
pub struct UnknownClient {
    pub name: String,
    pub known: String,
}

/// A `--client LIST` (`MCP_BUDGET_CLIENT`), parsed once: the clients in front of the servers,
/// by id (comma-separated) or `all`. `audit` reports each one's view; `proxy` and `replay` hold
/// every result to the tightest limits of them all. [`MEASURED`] in the list also asks for the
/// lab's measurements (`audit` only).
#[derive(Debug, Clone, PartialEq)]
pub struct ClientList {
    pub profiles: Vec<&'static ClientProfile>,
    pub measured: bool,
}

impl std::str::FromStr for ClientList {
    type Err = UnknownClient;
    fn from_str(list: &str) -> Result<ClientList, UnknownClient> {
        Ok(ClientList {
            profiles: select(list)?,
            measured: wants_measured(list),
        })
    }
}

impl ClientList {
    /// The clients' names, for a message ("Claude Code, Codex CLI").
    pub fn names(&self) -> String {
        let names: Vec<&str> = self.profiles.iter().map(|p| p.name.as_str()).collect();
        names.join(", ")
    }
}

/// The word in a `--client` list that asks for the lab's measurements (`audit --client
/// measured`): it names no client, so `measured` alone is every client.
pub const MEASURED: &str = "measured";

/// Whether a `--client` list asks for the lab's measurements.
pub fn wants_measured(list: &str) -> bool {
    list.split(',').any(|s| s.trim() == MEASURED)
}

/// Parse `--client LIST`: comma-separated ids, or `all`; duplicates once, in the file's order.
/// [`MEASURED`] in the list selects nothing by itself.
pub fn select(list: &str) -> Result<Vec<&'static ClientProfile>, UnknownClient> {
    let names: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != MEASURED)
        .collect();
    if names.is_empty() || names.contains(&"all") {
        return Ok(profiles().iter().collect());
    }
    for n in &names {
        find(n)?;
    }
    Ok(profiles()
        .iter()
        .filter(|p| names.contains(&p.id.as_str()))
        .collect())
}

/// What a client does with a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Full,
    Truncated,
    SpilledToFile,
    Refused,
}

impl Outcome {
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Full => "full",
            Outcome::Truncated => "truncated",
            Outcome::SpilledToFile => "spilled_to_file",
            Outcome::Refused => "refused",
        }
    }
}

/// What reaches the model of one result in one client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ClientSeen {
    /// Tokens (primary tokenizer) of the text and images the model is shown, with what the
    /// client adds (its markers, wrappers, messages).
    pub tokens_to_model: usize,
    /// The same in the client's model's tokenizer (its profile's `[client.model]`), when that
    /// is not the report's primary one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_tokens: Option<usize>,
    /// Bytes of that text.
    pub bytes_to_model: usize,
    pub outcome: Outcome,
    /// The share of the model-visible text (in bytes) that the model is shown.
    pub kept_fraction: f64,
    /// The parts sent: `content`, `structuredContent`.
    pub sent: Vec<String>,
    /// The rules that acted, as "40,000 chars (truncate)".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
    /// How the client breaks this result, beyond cutting it (a finding names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breaks: Option<Break>,
    /// The text the model is shown (the client's markers and wrapper included; the texts
    /// joined by line breaks when shown whole). Not in the reports: `replay --compare` shows it.
    #[serde(skip)]
    #[cfg_attr(test, schemars(skip))]
    pub text: String,
}

/// A way a client breaks a result beyond a cut that keeps a head and a tail: each is a
/// compatibility finding once a profile rule or a lab run measured it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Break {
    /// A text that is a JSON array became an error message.
    JsonArrayError,
    /// Over a cap of the client's (in tokens, for Claude Code): an error in place of the
    /// result, no preview at all.
    CapNoPreview { cap: usize, unit: String },
    /// Nothing of the text was kept: the model got only the client's marker.
    MarkerOnly,
    /// An error message in place of the result, for a reason the lab could not tell.
    ErrorInstead,
    /// The client sends its model none of the result's images (the texts beside them as
    /// its rules say).
    ImagesDropped { images: usize },
    /// The client's marker says `stated` of `unit` were cut where `cut` were.
    MisstatedMarker {
        stated: usize,
        cut: usize,
        unit: String,
    },
}

#[cfg(test)]
mod tests;
