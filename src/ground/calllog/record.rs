//! The call log: one JSON line per proxied tool call, appended whole under concurrent calls.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// One call, as docs/design.md lists the fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CallRecord {
    /// RFC 3339, UTC.
    pub ts: String,
    pub server: String,
    pub tool: String,
    pub client_name: Option<String>,
    pub client_version: Option<String>,
    /// How the client reached the proxy (`stdio`).
    pub transport: String,
    /// Bytes of the upstream's `result` as sent.
    pub raw_bytes: usize,
    /// The upstream's result in the budget's tokens (model view, as `returned_tokens`).
    pub raw_tokens: usize,
    pub returned_tokens: usize,
    /// Of a result over the budget: the share of the budget the client was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<f64>,
    /// Of the largest list the engine cut: its items sent whole, and its items in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items_kept: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items_total: Option<usize>,
    pub strategy: String,
    pub spill_id: Option<String>,
    /// Why the full original could not be saved, when it could not (the client's result says
    /// so too).
    #[serde(default)]
    pub spill_error: Option<String>,
    pub upstream_ms: f64,
    pub engine_ms: f64,
    pub is_error: bool,
    /// Why the call failed before the engine saw a result (the upstream died, sent a message
    /// that could not be read, ...); the client got this error. `None` for an answered call.
    #[serde(default)]
    pub error: Option<String>,
    /// The schema tax per turn when the call was made: the upstream's tool definitions, and
    /// what the proxy showed the client instead (fewer with `--allow`/`--deny`, the policy,
    /// `--lean-schemas`; three tools with `--lazy-tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_tokens_upstream: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_tokens_shown: Option<usize>,
    /// The proxy's own tool the client called for this one (`mcp_budget_call_tool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

/// An append-only JSONL file shared by every call.
#[derive(Debug)]
pub struct CallLog {
    path: PathBuf,
    file: Mutex<std::fs::File>,
}

impl CallLog {
    /// Open (create) `path` for appending.
    pub fn open(path: &Path) -> std::io::Result<CallLog> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(CallLog {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append one record as one `write` of one whole line.
    pub fn append(&self, record: &CallRecord) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(record)?;
        line.push(b'\n');
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        f.write_all(&line)?;
        f.flush()
    }
}

/// A log read back leniently: the records, and the numbers (from 1) of the lines that were not
/// call records (a line cut short by a crash, a line of something else).
#[derive(Debug, Default)]
pub struct LogScan {
    pub records: Vec<CallRecord>,
    pub bad_lines: Vec<usize>,
}

/// Read a log back, skipping lines that do not parse (they are listed in `bad_lines`); only a
/// file that cannot be read is an error. Invalid UTF-8 spoils only its own line.
pub fn scan_log(path: &Path) -> Result<LogScan, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut scan = LogScan::default();
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice(line) {
            Ok(record) => scan.records.push(record),
            Err(_) => scan.bad_lines.push(i + 1),
        }
    }
    Ok(scan)
}

/// Read a log back strictly; the first line that does not parse is an error with its number.
/// The tests read the proxy's logs with it (`stats` reads leniently, with [`scan_log`]).
pub fn read_log(path: &Path) -> Result<Vec<CallRecord>, String> {
    let scan = scan_log(path)?;
    match scan.bad_lines.first() {
        Some(n) => Err(format!("{}:{n}: not a call record", path.display())),
        None => Ok(scan.records),
    }
}
