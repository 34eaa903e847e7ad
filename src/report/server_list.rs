//! What `mcp-budget servers` prints: each server found, from where, secrets redacted.

use serde_json::json;

use super::grid::{grid, Fit};
use crate::config::Sources;
use crate::text::one_line;

/// A table of servers, then one line per skipped entry or unreadable file.
pub fn render_server_list(sources: &Sources) -> String {
    let mut t = grid(Fit::Content);
    t.set_header([
        "server",
        "client",
        "transport",
        "command or url",
        "probes",
        "source",
    ]);
    for s in &sources.servers.servers {
        t.add_row([
            one_line(&s.name).into_owned(),
            one_line(&s.origin.client).into_owned(),
            s.transport.kind().to_string(),
            one_line(&s.transport.to_string()).into_owned(),
            s.probes.len().to_string(),
            one_line(&s.origin.to_string()).into_owned(),
        ]);
    }
    let mut out = format!("{t}\n");
    for e in &sources.servers.errors {
        out.push_str(&format!("skipped: {}\n", one_line(&e.to_string())));
    }
    for e in &sources.file_errors {
        out.push_str(&format!("error: {}\n", one_line(&e.to_string())));
    }
    out
}

/// The same as JSON.
pub fn server_list_json(sources: &Sources) -> serde_json::Value {
    let servers: Vec<_> = sources
        .servers
        .servers
        .iter()
        .map(|s| {
            json!({"name": s.name, "client": s.origin.client, "transport": s.transport.kind(),
                   "target": s.transport.to_string(), "probes": s.probes.len(),
                   "file": s.origin.file, "key": s.origin.key})
        })
        .collect();
    let skipped: Vec<_> = sources.servers.errors.iter().map(|e| json!(e)).collect();
    let files: Vec<_> = sources
        .file_errors
        .iter()
        .map(|e| json!(e.to_string()))
        .collect();
    json!({"servers": servers, "skipped": skipped, "file_errors": files})
}
