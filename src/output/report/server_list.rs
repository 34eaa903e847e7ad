//! What `mcp-budget servers` prints: each server found, from where, whether it may be started
//! and with which environment, secrets redacted.

use serde::Serialize;

use super::fit::{Column, Fitted};
use super::render::{no_such_format, Listing};
use crate::config::{ServerEnv, ServerSpec, Sources, Trust};
use crate::ground::text::one_line;

/// A table of servers (those not trusted too), the environment stdio servers get, then one
/// line per server not started, skipped entry or unreadable file.
/// `servers`' output: a table, or JSON written as it is serialised (a list of 200,000 servers
/// is never one string).
pub fn render_servers(
    sources: &Sources,
    env: ServerEnv,
    sign_in: &SignIns,
    format: Listing,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    match format {
        Listing::Table { width } => out.write_all(table(sources, env, sign_in, width).as_bytes()),
        Listing::Json => {
            serde_json::to_writer_pretty(&mut *out, &json(sources, env, sign_in))?;
            out.write_all(b"\n")
        }
        Listing::Csv => Err(no_such_format("servers", format)),
    }
}

/// Each signed-in remote server's sign-in, by server name, as one phrase ("signed in, the
/// token good for 54 min (refreshable)", "needs `mcp-budget login`"): what `servers` shows.
pub type SignIns = std::collections::BTreeMap<String, String>;

fn table(sources: &Sources, env: ServerEnv, sign_in: &SignIns, width: Option<u16>) -> String {
    // the name and what runs stay; the source file and the probes go first
    let mut t = Fitted::new(vec![
        Column::text("server", 8, 0),
        Column::text("client", 6, 2),
        Column::text("transport", 5, 1),
        Column::text("command or url", 16, 0),
        Column::num("probes", 3),
        Column::text("trust", 7, 1),
        Column::text("source", 10, 3),
    ]);
    for s in sources.servers.servers.iter().chain(&sources.untrusted) {
        t.row(vec![
            one_line(&s.name).into_owned(),
            one_line(&s.origin.client).into_owned(),
            s.transport.kind().to_string(),
            one_line(&s.transport.to_string()).into_owned(),
            s.probes.len().to_string(),
            s.trust.id().to_string(),
            one_line(&s.origin.to_string()).into_owned(),
        ]);
    }
    let mut out = t.shown(width, width, "the --format json output");
    out.push_str(&format!("stdio servers start with {}\n", env.describe()));
    for (name, state) in sign_in {
        out.push_str(&format!(
            "sign-in: `{}` {}\n",
            one_line(name),
            one_line(state)
        ));
    }
    for s in &sources.untrusted {
        out.push_str(&untrusted_notice(s));
        out.push('\n');
    }
    for e in &sources.servers.errors {
        out.push_str(&format!("skipped: {}\n", one_line(&e.to_string())));
    }
    for e in &sources.file_errors {
        out.push_str(&format!("error: {}\n", one_line(&e.to_string())));
    }
    out
}

/// One line on a server that is not started: from where, why, and what would start it.
pub fn untrusted_notice(spec: &ServerSpec) -> String {
    let file = one_line(&spec.origin.file);
    let how = match (&spec.trust, spec.origin.client.as_str()) {
        (Trust::Rejected { .. }, _) => format!("to start it anyway, name its file: --config {file}"),
        (_, "probe-file") => {
            "to start it, pass --trust-project (or MCP_BUDGET_TRUST_PROJECT=1), or name the config by its path in `from`".to_string()
        }
        _ => format!(
            "to start it, pass --trust-project (or MCP_BUDGET_TRUST_PROJECT=1), or name its file: --config {file}"
        ),
    };
    format!(
        "not started: `{}` from {}: {}; {how}",
        one_line(&spec.name),
        one_line(&spec.origin.to_string()),
        one_line(&spec.trust.to_string())
    )
}

/// One server of the JSON list.
#[derive(Serialize)]
struct Row<'a> {
    name: &'a str,
    client: &'a str,
    transport: &'static str,
    target: String,
    probes: usize,
    file: &'a str,
    key: &'a str,
    trust: &'static str,
    trust_reason: String,
    starts: bool,
    /// What a stdio server's environment is (`inherited`, `sdk-default`); null for others.
    environment: Option<&'static str>,
    /// A remote server's sign-in (`mcp-budget login`), where one is kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    sign_in: Option<&'a str>,
}

/// The same as JSON: `{servers, skipped, file_errors}`, serialised as it is written (a list of
/// 200,000 servers is never built as a JSON tree).
#[derive(Serialize)]
pub struct ServerListJson<'a> {
    servers: Vec<Row<'a>>,
    skipped: &'a [crate::config::EntryError],
    file_errors: Vec<String>,
}

/// The JSON form of [`render_server_list`].
fn json<'a>(sources: &'a Sources, env: ServerEnv, sign_in: &'a SignIns) -> ServerListJson<'a> {
    let row = |s: &'a ServerSpec| Row {
        sign_in: sign_in.get(&s.name).map(String::as_str),
        ..json_row(s, env)
    };
    ServerListJson {
        servers: sources
            .servers
            .servers
            .iter()
            .chain(&sources.untrusted)
            .map(row)
            .collect(),
        skipped: &sources.servers.errors,
        file_errors: sources.file_errors.iter().map(|e| e.to_string()).collect(),
    }
}

fn json_row(s: &ServerSpec, env: ServerEnv) -> Row<'_> {
    let stdio = s.transport.kind() == "stdio";
    Row {
        name: &s.name,
        client: &s.origin.client,
        transport: s.transport.kind(),
        target: s.transport.to_string(),
        probes: s.probes.len(),
        file: &s.origin.file,
        key: &s.origin.key,
        trust: s.trust.id(),
        trust_reason: s.trust.to_string(),
        starts: s.trust.runs(),
        environment: stdio.then(|| env.id()),
        sign_in: None,
    }
}
