//! The report model: what an audit found, serialised as audit.json and read by every renderer,
//! the gate and baselines. Field names are public interface (docs/design.md); add, never rename.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::lists::{ListCost, ToolsList};
use super::ItemsKept;

use super::clients::{ClientResult, ClientSchema, MeasuredClient};
use super::definitions::{SchemaScore, SharedParameter, ToolCost};
use crate::config::profiles::ClientProfile;

/// Bumped when a field changes meaning or is removed.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Report {
    pub schema_version: u32,
    pub tool_version: String,
    pub generated_at: String,
    /// Tokenizers used, primary first (an estimate says so and gives its factor).
    pub tokenizers: Vec<String>,
    pub servers: Vec<ServerReport>,
    /// Config entries that could not be used (file, key, message).
    #[serde(default)]
    pub config_errors: Vec<ConfigIssue>,
    /// The model and prices every `cost` uses.
    #[serde(default)]
    pub pricing: Option<PriceInfo>,
    /// All audited servers together against each client's tool limits.
    #[serde(default)]
    pub limits: Vec<LimitVerdict>,
    /// The budget engine's one-time start-up in this process: what only a first pass pays
    /// (patterns compiled, tables built at first use), paid before the first probe and in no
    /// probe's `engine_us`.
    #[serde(default)]
    pub engine_startup_us: Option<u64>,
    /// The client profiles every `clients` row is for, with their sources.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<ClientProfile>,
    /// The clients `audit --client measured` ran in the lab (their rows carry `measured`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measured_clients: Vec<MeasuredClient>,
    /// The spill store: the full originals of reduced results as the servers sent them (which
    /// can hold secrets a server echoed), outside the report folder unless `--spill-dir` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spill_dir: Option<String>,
}

/// The price of input tokens for one model, with where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PriceInfo {
    pub model: String,
    pub input_usd_per_mtok: f64,
    pub cached_input_usd_per_mtok: f64,
    /// The tokenizer whose counts are priced (an estimate for Claude models).
    pub tokenizer: String,
    pub as_of: String,
    pub source: String,
    /// Set by `--price` rather than the table.
    #[serde(default)]
    pub overridden: bool,
}

/// What a server's tool definitions cost in dollars.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ServerCost {
    pub model: String,
    /// Schema tax per turn in the priced tokenizer.
    pub tokens_per_turn: usize,
    pub usd_per_turn: f64,
    pub usd_per_1k_turns: f64,
    /// With prompt caching (every turn after the first reads the tools from the cache).
    pub usd_per_1k_turns_cached: f64,
}

/// What one probe's result costs in dollars, as sent and after the budget engine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ProbeCost {
    pub model: String,
    pub raw_tokens: usize,
    pub raw_usd: f64,
    pub budgeted_tokens: Option<usize>,
    pub budgeted_usd: Option<f64>,
}

/// One client limit against one measured value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct LimitVerdict {
    pub client: String,
    /// The limit in words: "25,000 tokens (cap)".
    pub limit: String,
    /// What the client does past it: cap, warning, spill, truncate, refuse.
    pub effect: String,
    /// The measured value in the limit's unit, as the server sent it.
    pub value: u64,
    pub exceeded: bool,
    /// The same after the budget engine (probes only).
    #[serde(default)]
    pub budgeted_value: Option<u64>,
    #[serde(default)]
    pub budgeted_exceeded: Option<bool>,
}

/// A server-design check that failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Finding {
    pub rule: String,
    /// error | warning | info
    pub severity: String,
    pub tool: Option<String>,
    pub message: String,
    /// The one-line fix.
    pub fix: String,
    /// Tokens per turn the fix saves, measured on the definition (definition rules only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saves_tokens: Option<usize>,
    /// Wire tokens the fix saves where the model does not see them (`heavy-output-schema`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saves_wire_tokens: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ConfigIssue {
    pub file: String,
    pub key: String,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Error,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ServerReport {
    pub name: String,
    pub transport: String,
    /// The command line or URL, secrets redacted.
    pub target: String,
    /// Where the server was declared: `file (key)`.
    pub source: String,
    pub status: Status,
    pub error: Option<String>,
    /// Oddities that did not stop the audit (non-JSON stdout lines, failed optional lists).
    #[serde(default)]
    pub warnings: Vec<String>,
    pub protocol_version: Option<String>,
    /// Every protocol version the audit saw the server speak: the 2026-07-28 era's from
    /// `server/discover`, and the handshake era's from `initialize` (with `--protocol auto`,
    /// both are asked; with one era forced, only that one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub eras: Vec<String>,
    /// The 2026-07-28 era's rules as this audit saw them kept (a server measured in that era).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub era_conformance: Option<super::EraConformance>,
    /// Set when `--protocol auto`'s `server/discover` ended the server's stream (a process
    /// that exits on a method it does not know): what it said. The server was started again
    /// and measured in the handshake era; a client that asks `server/discover` first loses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discover_ended: Option<String>,
    pub server_info: Option<serde_json::Value>,
    pub instructions_tokens: usize,
    pub initialize_ms: Option<f64>,
    pub tools_list: ToolsList,
    pub tools: Vec<ToolCost>,
    pub prompts: Option<ListCost>,
    pub resources: Option<ListCost>,
    pub probes: Vec<ProbeResult>,
    /// Counts of this server by the other tokenizers: name -> totals.
    #[serde(default)]
    pub by_tokenizer: BTreeMap<String, ServerTotals>,
    #[serde(default)]
    pub cost: Option<ServerCost>,
    /// Each client's tool limits against this server alone.
    #[serde(default)]
    pub limits: Vec<LimitVerdict>,
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// How lean the definitions are, 0-100 with a grade (servers with tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_score: Option<SchemaScore>,
    /// Parameters repeated, the same, across this server's tools (the `shared-parameters`
    /// rule), each with what hiding it and stating it once save.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_parameters: Vec<SharedParameter>,
    /// What each client sends per turn of these tool definitions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<ClientSchema>,
}

/// A server's headline numbers for one tokenizer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ServerTotals {
    pub instructions_tokens: usize,
    pub tools_wire_tokens: usize,
    pub tools_model_tokens: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ProbeStatus {
    Ok,
    ToolError,
    Error,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ProbeResult {
    pub tool: String,
    /// The probe file's label for this call, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub arguments: serde_json::Value,
    /// How the arguments break the listed tool's input schema (`path: message`, at most 10);
    /// empty when they match, or the tool is not listed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argument_errors: Vec<String>,
    pub status: ProbeStatus,
    /// Why the call failed (`error`), or what the tool said in its `isError` result
    /// (`tool_error`), whole.
    pub error: Option<String>,
    pub latency_ms: f64,
    pub raw: Option<RawCost>,
    /// What the budget engine made of the raw result.
    #[serde(default)]
    pub budgeted: Option<BudgetedCost>,
    #[serde(default)]
    pub cost: Option<ProbeCost>,
    /// Each client's result limits against this result.
    #[serde(default)]
    pub limits: Vec<LimitVerdict>,
    /// What reaches the model of this result in each client, as sent and after the engine.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<ClientResult>,
}

/// The budget engine's replay of one probe result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct BudgetedCost {
    pub budget: usize,
    /// Tokens of the result as the model would be sent it after the engine.
    pub tokens: usize,
    /// The same result's tokens before the engine (content and structuredContent: the raw
    /// `model_tokens`).
    pub tokens_before: usize,
    /// `pass_through`, `stripped`, `compacted`, `toon`, `projected`, `shrunk` or `spilled`.
    pub strategy: String,
    pub engine_us: u64,
    pub spill_path: Option<String>,
    pub note: Option<String>,
    /// Why the full original could not be saved (the audit then exits 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spill_error: Option<String>,
    /// Size of the budgeted result's text (what client limits in bytes, characters or lines see).
    #[serde(default)]
    pub text_bytes: usize,
    #[serde(default)]
    pub text_chars: usize,
    #[serde(default)]
    pub text_lines: usize,
    /// Of a result over the budget: the share of the budget the model is sent (its tokens over
    /// the budget; 1.0 is the whole budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<f64>,
    /// The largest list the engine cut, and what of it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<ItemsKept>,
}

/// What a tool result costs, as received.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RawCost {
    pub wire_bytes: usize,
    pub wire_tokens: usize,
    /// What a client that shows both the content and structuredContent pays:
    /// `content_tokens + structured_tokens`. The budget engine counts the same way, so a
    /// pass-through result's `budgeted.tokens` equals it.
    pub model_tokens: usize,
    /// The content blocks alone (text blocks + embedded resource text + image cost + resource
    /// links): what a client that shows only the content pays.
    #[serde(default)]
    pub content_tokens: usize,
    /// Text blocks only.
    pub text_tokens: usize,
    /// structuredContent as compact JSON.
    pub structured_tokens: usize,
    /// structuredContent repeats data a text block already carries.
    pub structured_duplicate: bool,
    /// Images at their pixel cost; image data that does not decode to a known image, as its
    /// base64 text (what a client pays for it; never 0).
    pub image_tokens: usize,
    /// What a client that pastes base64 image/audio data as text would pay.
    pub base64_as_text_tokens: usize,
    pub is_error: bool,
    /// Size of the text a client shows the model (text blocks and embedded resource text).
    #[serde(default)]
    pub text_bytes: usize,
    #[serde(default)]
    pub text_chars: usize,
    #[serde(default)]
    pub text_lines: usize,
    /// The result says it was truncated or carries a cursor / next page.
    #[serde(default)]
    pub continuation: bool,
    pub blocks: Vec<BlockCost>,
    /// wire / model / text tokens by the other tokenizers.
    #[serde(default)]
    pub by_tokenizer: BTreeMap<String, RawTotals>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RawTotals {
    pub wire_tokens: usize,
    pub model_tokens: usize,
    #[serde(default)]
    pub content_tokens: usize,
    pub text_tokens: usize,
    pub structured_tokens: usize,
}

/// One content block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct BlockCost {
    #[serde(rename = "type")]
    pub kind: String,
    /// Bytes of the block's payload: text, base64 data, or blob.
    pub bytes: usize,
    /// Model-view tokens of the block (an image's pixel cost; 0 for blobs and audio).
    pub tokens: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width_px: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height_px: Option<u32>,
}

impl Report {
    /// A report of `servers` counted with `tokenizers`, nothing derived yet (`generated_at`
    /// empty; `audit` sets it).
    pub fn new(tokenizers: Vec<String>, servers: Vec<ServerReport>) -> Self {
        Report {
            schema_version: SCHEMA_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            generated_at: String::new(),
            tokenizers,
            servers,
            config_errors: Vec::new(),
            pricing: None,
            limits: Vec::new(),
            engine_startup_us: None,
            clients: Vec::new(),
            measured_clients: Vec::new(),
            spill_dir: None,
        }
    }

    /// The tokenizers other than the primary one that any server was counted with, sorted by
    /// name: the extra columns of every table.
    pub fn other_tokenizers(&self) -> Vec<String> {
        self.servers
            .iter()
            .flat_map(|s| s.by_tokenizer.keys().cloned())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    }
}

impl ProbeResult {
    /// How tables and charts name the call: `tool (label)`, or the tool alone.
    pub fn name(&self) -> String {
        match &self.label {
            Some(label) => format!("{} ({label})", self.tool),
            None => self.tool.clone(),
        }
    }

    /// A probe of `tool` with no arguments and nothing measured yet.
    pub fn new(tool: &str) -> Self {
        ProbeResult {
            tool: tool.to_string(),
            label: None,
            arguments: serde_json::Value::Object(serde_json::Map::new()),
            argument_errors: Vec::new(),
            status: ProbeStatus::Ok,
            error: None,
            latency_ms: 0.0,
            raw: None,
            budgeted: None,
            cost: None,
            limits: Vec::new(),
            clients: Vec::new(),
        }
    }
}

impl ServerReport {
    /// A row with nothing measured yet.
    pub fn new(name: &str, transport: &str, target: &str, source: &str) -> Self {
        ServerReport {
            name: name.to_string(),
            transport: transport.to_string(),
            target: target.to_string(),
            source: source.to_string(),
            status: Status::Ok,
            error: None,
            warnings: Vec::new(),
            protocol_version: None,
            eras: Vec::new(),
            era_conformance: None,
            discover_ended: None,
            server_info: None,
            instructions_tokens: 0,
            initialize_ms: None,
            tools_list: ToolsList::default(),
            tools: Vec::new(),
            prompts: None,
            resources: None,
            probes: Vec::new(),
            by_tokenizer: BTreeMap::new(),
            cost: None,
            limits: Vec::new(),
            findings: Vec::new(),
            schema_score: None,
            shared_parameters: Vec::new(),
            clients: Vec::new(),
        }
    }

    /// The most expensive tool by model tokens.
    pub fn largest_tool(&self) -> Option<&ToolCost> {
        self.tools.iter().max_by(|a, b| {
            a.model_tokens
                .cmp(&b.model_tokens)
                .then(b.name.cmp(&a.name))
        })
    }
}

impl RawCost {
    /// The content blocks in a few words: `2 text, image`.
    pub fn block_summary(&self) -> String {
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for b in &self.blocks {
            match counts.iter_mut().find(|(k, _)| *k == b.kind) {
                Some((_, n)) => *n += 1,
                None => counts.push((&b.kind, 1)),
            }
        }
        counts
            .iter()
            .map(|(k, n)| {
                if *n == 1 {
                    k.to_string()
                } else {
                    format!("{n} {k}")
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}
