//! The real coding clients in the lab (installed pinned by `.ci/run` into
//! `target/lab-clients`): what each sends its model of the demo's results must be what its
//! profile in `clients.toml` predicts, measured with the same version. A client update that
//! changes what it sends, or a profile left stale, fails here.

use serde_json::Value;

use crate::support::{mcp_budget, repo};

/// The npm package of each client the tests run: all nine the lab has adapters for.
const CLIENTS: [(&str, &str); 9] = [
    ("claude-code", "@anthropic-ai/claude-code"),
    ("codex", "@openai/codex"),
    ("gemini-cli", "@google/gemini-cli"),
    ("opencode", "opencode-ai"),
    ("copilot-cli", "@github/copilot"),
    ("qwen-code", "@qwen-code/qwen-code"),
    ("cline", "cline"),
    ("kilo", "@kilocode/cli-linux-x64"),
    ("continue-cli", "@continuedev/cli"),
];

/// `target/lab-clients/node_modules`, or None (skip; a failure under
/// MCP_BUDGET_REQUIRE_REAL_SERVERS).
pub(crate) fn lab_clients() -> Option<std::path::PathBuf> {
    let dir = repo().join("target/lab-clients/node_modules");
    if dir.join(".bin").exists() {
        return Some(dir);
    }
    crate::support::skip(&format!(
        "no coding clients in {} (run .ci/run)",
        dir.display()
    ));
    None
}

/// Held by every test that runs a real client in the lab: one at a time, as a client under a
/// loaded machine's timeouts sometimes gives up a tool call (Codex once ended a run without
/// calling the probe's tool while four other clients ran beside it).
pub static ONE_CLIENT: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The version `.ci/run` pinned for a package.
fn pinned(package: &str) -> String {
    let text = std::fs::read_to_string(repo().join("target/lab-clients/package.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["dependencies"][package].as_str().unwrap().to_string()
}

fn measured_as_its_profile_predicts(id: &str) {
    let Some(npm) = lab_clients() else {
        return;
    };
    let _one = ONE_CLIENT.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    // a small text, a large markdown page, one long JSON line; structuredContent where the
    // client reads the demo's second tools/list page (Gemini CLI reads only the first)
    let mut wanted = vec![
        (
            "list_pull_requests",
            "{ owner = \"acme\", repo = \"widgets\", per_page = 2 }",
        ),
        (
            "scrape_as_markdown",
            "{ url = \"demo://shop/search?q=wireless+earbuds\" }",
        ),
        ("search_code", "{ q = \"fetchUser language:typescript\" }"),
    ];
    let first_page_only =
        mcp_budget::config::profiles::profile(id).is_some_and(|p| p.first_page_only());
    if !first_page_only {
        wanted.push(("get_forecast", "{ city = \"Lisbon\" }"));
        // an embedded resource, and a name Qwen Code's own read_file shares (issue 39)
        wanted.push(("read_file", "{ path = \"src/server.rs\" }"));
    }
    let probes = super::demo_probes(dir.path(), &wanted);
    let client = lab_run(id, &npm, dir.path(), &probes, wanted.len());
    let server = &client["servers"][0];
    speaks_its_profiles_era(id, &client);
    // the definitions: names only for a client whose profile defers them, else every one
    let form = server["definitions"]["form"].as_str().unwrap();
    let profiles: toml::Value = toml::from_str(
        &std::fs::read_to_string(repo().join("src/config/profiles/clients.toml")).unwrap(),
    )
    .unwrap();
    let profile = profiles["client"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"].as_str() == Some(id))
        .unwrap();
    let mode = profile["schema"]["mode"].as_str().unwrap();
    let deferred = matches!(form, "deferred" | "hidden");
    assert_eq!(
        deferred,
        mode == "deferred" || mode == "names",
        "{id}: sent {form}, profile {mode}"
    );
    // the parameters it adds to every definition are the profile's (`adds_parameter`)
    let added: Vec<String> = defs_added(&server["definitions"]);
    let profiled: Vec<String> = mcp_budget::config::profiles::profile(id)
        .unwrap()
        .schema
        .adds_parameter
        .as_deref()
        .map(|a| {
            let v: Value = serde_json::from_str(a).unwrap();
            v.as_object().unwrap().keys().cloned().collect()
        })
        .unwrap_or_default();
    assert_eq!(
        added, profiled,
        "{id}: the parameters it adds to every tool"
    );
    // what a deferring client sends every turn of the tools (names, or names and descriptions)
    // is what its profile models, to within a tenth (a heading or a tag around the lines)
    let defs = &server["definitions"];
    if form == "deferred" {
        let (sent, modelled) = (
            defs["tokens"].as_u64().unwrap(),
            defs["modelled_tokens"].as_u64().unwrap(),
        );
        assert!(
            sent > 0 && sent.abs_diff(modelled) * 10 <= modelled,
            "{id}: sent {sent} tokens of deferred tools per turn, the profile models {modelled}: {defs:#}"
        );
    }
}

/// The parameters a client added to every definition, as the lab found them.
fn defs_added(defs: &Value) -> Vec<String> {
    defs["added_parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| p.as_str().unwrap().to_string())
        .collect()
}

/// `mcp-budget lab` of `probes` in client `id`: the pinned version measured, every probe of the
/// first server as its profile predicts; the client's part of the report.
fn lab_run(
    id: &str,
    npm: &std::path::Path,
    dir: &std::path::Path,
    probes: &std::path::Path,
    count: usize,
) -> Value {
    let package = CLIENTS.iter().find(|(c, _)| *c == id).unwrap().1;
    let out = mcp_budget(dir, dir)
        .env("TMPDIR", dir)
        .arg("lab")
        .arg(probes)
        .args(["--client", id, "--format", "json", "--npm-dir"])
        .arg(npm)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{report:#}");
    let client = &report["clients"][0];
    assert_eq!(client["status"], "measured", "{client:#}");
    let version = client["version"].as_str().unwrap();
    assert_eq!(
        version,
        pinned(package),
        "the client run is not the pinned one"
    );
    // the probe file's server (the era's and the long list's checks aside)
    let server = client["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["server"] == "demo" || s["server"] == "shapes")
        .unwrap();
    let probes = server["probes"].as_array().unwrap();
    assert_eq!(probes.len(), count, "{server:#}");
    let mut wrong = Vec::new();
    for p in probes {
        let m = &p["modelled"];
        assert_eq!(
            m["profile_version"].as_str(),
            Some(version),
            "the profile of {id} was not measured with {version}: re-measure it (docs/clients.md: the lab)"
        );
        if m["agrees"] != true {
            wrong.push(format!(
                "{id} {version} sent {} tokens ({}, {} of {} images) of {} ({} chars), its profile predicts {} ({}); added {:?}",
                p["delivered"]["tokens"],
                m["measured_outcome"],
                p["images_delivered"],
                p["images"],
                p["tool"],
                p["raw"]["chars"],
                m["tokens"],
                m["outcome"],
                p["added"],
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    client.clone()
}

/// The lab server's shapes, each at a size past the clients' rules (a line cap under a byte
/// cap, wide text, pretty JSON, an image, an embedded resource, a blob: a note in its place or
/// nothing, an error): a probe file that mounts `mcp-budget lab-server` with 11 tools.
fn shape_probes(dir: &std::path::Path, id: &str) -> (std::path::PathBuf, usize) {
    let shapes = [
        ("lines", 60_000),
        ("short_lines", 30_000),
        ("wide", 20_000),
        ("pretty_array", 30_000),
        ("image", 400_000),
        ("resource", 60_000),
        ("blob", 4_000),
        ("error", 60_000),
    ];
    let bin = crate::support::bin_path();
    let mut text = format!(
        "[servers.shapes]\ncommand = {}\nargs = [\"lab-server\", \"--tools\", \"11\"]\n",
        toml::Value::String(bin.display().to_string())
    );
    // Gemini CLI 0.61.0 turns an isError result into an error message that holds the result's
    // JSON escaped twice (measured; not profiled: docs/clients.md)
    let mut shapes: Vec<_> = shapes
        .into_iter()
        .filter(|(shape, _)| !(id == "gemini-cli" && *shape == "error"))
        .collect();
    // Qwen Code's second regime: each text over 500,000 characters cut in the tool (here the
    // JSON of a 490,000-character text), the result then cut to 200,000; a plain text over it
    if id == "qwen-code" {
        shapes.extend([("structured", 490_000), ("lines", 600_000)]);
    }
    for (shape, chars) in &shapes {
        text += &format!(
            "\n[[servers.shapes.probes]]\ntool = \"lab_result\"\narguments = {{ shape = \"{shape}\", chars = {chars} }}\n"
        );
    }
    // a server from before 2026 (server/discover unknown): the era the client opens with, and
    // whether it falls back (issue 39, part 3)
    text += &format!(
        "\n[servers.old]\ncommand = {}\nargs = [\"lab-server\", \"--era\", \"unaware\"]\n\n[[servers.old.probes]]\ntool = \"lab_result\"\narguments = {{ shape = \"lines\", chars = 200 }}\n",
        toml::Value::String(bin.display().to_string())
    );
    // 158 tools over four pages of 50: the pages it reads, the definitions it sends
    text += &format!(
        "\n[servers.many]\ncommand = {}\nargs = [\"lab-server\", \"--tools\", \"158\", \"--page-size\", \"50\"]\n\n[[servers.many.probes]]\ntool = \"lab_result\"\narguments = {{ shape = \"lines\", chars = 200 }}\n",
        toml::Value::String(bin.display().to_string())
    );
    let path = dir.join("shapes.toml");
    std::fs::write(&path, text).unwrap();
    (path, shapes.len())
}

/// A list of 158 tools over four pages reaches the client's model as its profile says: the
/// pages it reads (the first alone, or all), every definition or the names alone.
fn offers_a_long_list_as_its_profile_says(id: &str, client: &Value) {
    let p = mcp_budget::config::profiles::profile(id).unwrap();
    let many = client["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["server"] == "many")
        .unwrap();
    // pages of 50: the first alone, those up to `max_tools` (Qwen Code: 100), or all four
    let max = p.listing.as_ref().and_then(|l| l.max_tools);
    let pages = match (p.first_page_only(), max) {
        (true, _) => 1,
        (false, Some(m)) => m.div_ceil(50).min(4),
        (false, None) => 4,
    };
    let offered = (pages * 50).min(158);
    assert_eq!(many["pages_read"], pages, "{id}: {many:#}");
    let defs = &many["definitions"];
    let deferred = match p.schema.mode {
        mcp_budget::config::profiles::SchemaMode::Full => false,
        mcp_budget::config::profiles::SchemaMode::DeferredOver => {
            offered > p.schema.over_tools.unwrap_or(usize::MAX)
        }
        _ => true,
    };
    match deferred {
        true => assert_eq!(defs["form"], "deferred", "{id}: {defs:#}"),
        false => assert_eq!(defs["defined"], offered, "{id}: {defs:#}"),
    }
}

/// The era a client spoke to each server of a lab run is its profile's `[client.era]`: the
/// first request and version, and on a server from before 2026 the fallback it makes.
fn speaks_its_profiles_era(id: &str, client: &Value) {
    let era = &mcp_budget::config::profiles::profile(id).unwrap().era;
    let era = era
        .as_ref()
        .expect("every measured client's era is profiled");
    for s in client["servers"].as_array().unwrap() {
        let spoke = &s["era"];
        assert_eq!(
            (spoke["opened_with"].as_str(), spoke["asked"].as_str()),
            (Some(era.opens_with.as_str()), Some(era.version.as_str())),
            "{id} on {}: {spoke:#}",
            s["server"]
        );
        if !spoke["fell_back"].is_null() {
            assert_eq!(spoke["fell_back"], era.falls_back, "{id}: {spoke:#}");
        }
    }
    let servers = client["servers"].as_array().unwrap();
    let Some(old) = servers.iter().find(|s| s["server"] == "old") else {
        return;
    };
    assert_eq!(old["probes"][0]["delivery"], "whole", "{id}: {old:#}");
    if era.opens_with == "server/discover" {
        assert_eq!(old["era"]["discover_refused"], -32601, "{id}: {old:#}");
    }
}

/// Every shape of the lab's server in a client: what reaches its model is what its profile
/// predicts (issue 39: images dropped, line caps, errors, resources).
fn every_shape_as_its_profile_predicts(id: &str) {
    let Some(npm) = lab_clients() else {
        return;
    };
    let _one = ONE_CLIENT.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (probes, count) = shape_probes(dir.path(), id);
    let client = lab_run(id, &npm, dir.path(), &probes, count);
    speaks_its_profiles_era(id, &client);
    offers_a_long_list_as_its_profile_says(id, &client);
}

#[test]
fn copilot_cli_sends_what_its_profile_predicts() {
    measured_as_its_profile_predicts("copilot-cli");
}

#[test]
fn qwen_code_sends_what_its_profile_predicts() {
    measured_as_its_profile_predicts("qwen-code");
}

#[test]
fn cline_sends_what_its_profile_predicts() {
    measured_as_its_profile_predicts("cline");
}

#[test]
fn kilo_sends_what_its_profile_predicts() {
    measured_as_its_profile_predicts("kilo");
}

#[test]
fn continue_cli_sends_what_its_profile_predicts() {
    measured_as_its_profile_predicts("continue-cli");
}

#[test]
fn copilot_cli_sends_every_shape_as_its_profile_predicts() {
    every_shape_as_its_profile_predicts("copilot-cli");
}

#[test]
fn qwen_code_sends_every_shape_as_its_profile_predicts() {
    every_shape_as_its_profile_predicts("qwen-code");
}

#[test]
fn cline_sends_every_shape_as_its_profile_predicts() {
    every_shape_as_its_profile_predicts("cline");
}

#[test]
fn kilo_sends_every_shape_as_its_profile_predicts() {
    every_shape_as_its_profile_predicts("kilo");
}

#[test]
fn continue_cli_sends_every_shape_as_its_profile_predicts() {
    every_shape_as_its_profile_predicts("continue-cli");
}

#[test]
fn claude_code_sends_every_shape_as_its_profile_predicts() {
    every_shape_as_its_profile_predicts("claude-code");
}

#[test]
fn codex_sends_every_shape_as_its_profile_predicts() {
    every_shape_as_its_profile_predicts("codex");
}

#[test]
fn gemini_cli_sends_every_shape_as_its_profile_predicts() {
    every_shape_as_its_profile_predicts("gemini-cli");
}

#[test]
fn opencode_sends_every_shape_as_its_profile_predicts() {
    every_shape_as_its_profile_predicts("opencode");
}

#[test]
fn claude_code_sends_what_its_profile_predicts() {
    measured_as_its_profile_predicts("claude-code");
}

#[test]
fn codex_sends_what_its_profile_predicts() {
    measured_as_its_profile_predicts("codex");
}

#[test]
fn gemini_cli_sends_what_its_profile_predicts() {
    measured_as_its_profile_predicts("gemini-cli");
}

#[test]
fn opencode_sends_what_its_profile_predicts() {
    measured_as_its_profile_predicts("opencode");
}

/// `audit --client measured`: the audit runs the installed client in the lab on its own probes
/// and reports what the client sent beside what its profile predicts; the compatibility finding
/// then rests on the run (Codex's marker says 7 or 8 tokens were cut from a 55,000-token page).
#[test]
fn audit_client_measured_reports_what_the_client_sent() {
    let Some(npm) = lab_clients() else {
        return;
    };
    let _one = ONE_CLIENT.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let probes = super::demo_probes(
        dir.path(),
        &[
            (
                "scrape_as_markdown",
                "{ url = \"demo://shop/search?q=wireless+earbuds\" }",
            ),
            ("get_forecast", "{ city = \"Lisbon\" }"),
        ],
    );
    let out_dir = dir.path().join("out");
    let out = mcp_budget(dir.path(), dir.path())
        .env("TMPDIR", dir.path())
        .env("MCP_BUDGET_LAB_NPM", &npm)
        .arg("audit")
        .arg(&probes)
        .args([
            "--client",
            "measured,codex,naive",
            "--width",
            "200",
            "--out",
        ])
        .arg(&out_dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{stdout}");
    let version = pinned("@openai/codex");
    assert!(
        stdout.contains(&format!("codex (measured {version})")),
        "{stdout}"
    );
    assert!(
        stderr.contains(&format!(
            "measured in the lab: Codex CLI {version}: measured"
        )),
        "{stderr}"
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("audit.json")).unwrap())
            .unwrap();
    let measured = report["measured_clients"].as_array().unwrap();
    assert_eq!(measured.len(), 1, "naive has no lab adapter: {measured:?}");
    assert_eq!(measured[0]["version"].as_str(), Some(version.as_str()));
    let server = &report["servers"][0];
    let row = |tool: &str| {
        let p = server["probes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["tool"] == tool)
            .unwrap();
        p["clients"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["client"] == "codex")
            .unwrap()
            .clone()
    };
    let page = row("scrape_as_markdown");
    let m = &page["measured"];
    assert_eq!(m["outcome"], "truncated", "{page:#}");
    assert_eq!(page["measured_version"].as_str(), Some(version.as_str()));
    let (measured_tokens, modelled) = (
        m["tokens_to_model"].as_u64().unwrap(),
        page["raw"]["tokens_to_model"].as_u64().unwrap(),
    );
    assert!(
        measured_tokens.abs_diff(modelled) <= 100.max(modelled * 3 / 100),
        "measured {measured_tokens}, modelled {modelled}"
    );
    // 12,000 bytes of ASCII kept of a page of over 200,000: a marker saying 7 is far off
    assert_eq!(m["breaks"]["kind"], "misstated_marker", "{m:#}");
    // it names 7 or 8 tokens whatever it cut
    assert!(m["breaks"]["stated"].as_u64().unwrap() < 10, "{m:#}");
    assert!(m["breaks"]["cut"].as_u64().unwrap() > 50_000, "{m:#}");
    let forecast = row("get_forecast");
    assert_eq!(forecast["measured"]["outcome"], "full", "{forecast:#}");
    // the definitions as sent per turn
    let defs = server["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["client"] == "codex")
        .unwrap();
    // Codex 0.171.0 sends every definition inside a namespace item: more than the bare tools
    assert_eq!(defs["measured"]["form"], "namespace", "{defs:#}");
    assert!(
        defs["measured"]["tokens_per_turn"].as_u64().unwrap()
            > defs["schema_tokens_per_turn"].as_u64().unwrap(),
        "{defs:#}"
    );
    let finding = server["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "client-misstated-cut")
        .unwrap_or_else(|| panic!("{:#}", server["findings"]));
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("Codex {version} (measured in this run)")),
        "{finding:#}"
    );
}
