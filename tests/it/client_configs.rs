//! Client-config fixtures for every supported client, found by discovery in a fake home, with
//! secrets redacted everywhere and broken entries reported by file and key.

use std::path::Path;

use crate::support::{bin_path, mcp_budget, read_report};

const SECRET: &str = "sk-live-TOPSECRET-4242";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// One server per client, in each client's own dialect and standard place.
fn fixtures(home: &Path, project: &Path) {
    let stdio = |name: &str| {
        format!(
            r#""{name}": {{"command": "npx", "args": ["-y", "@acme/{name}"], "env": {{"API_KEY": "{SECRET}"}}}}"#
        )
    };
    write(
        &home.join(".config/Claude/claude_desktop_config.json"),
        &format!(r#"{{"mcpServers": {{{}}}}}"#, stdio("desktop-srv")),
    );
    write(
        &home.join(".claude.json"),
        &format!(
            r#"{{"numStartups": 3, "mcpServers": {{{}}}, "projects": {{"/work/app": {{"mcpServers": {{"proj-srv": {{"type": "http", "url": "https://mcp.example.com/mcp", "headers": {{"Authorization": "Bearer {SECRET}"}}}}}}}}}}}}"#,
            stdio("code-user-srv")
        ),
    );
    write(
        &project.join(".mcp.json"),
        &format!(r#"{{"mcpServers": {{{}}}}}"#, stdio("code-project-srv")),
    );
    write(
        &home.join(".cursor/mcp.json"),
        &format!(
            r#"{{"mcpServers": {{"cursor-srv": {{"url": "https://cursor.example/sse?token={SECRET}"}}}}}}"#
        ),
    );
    write(
        &project.join(".vscode/mcp.json"),
        &format!("{{\n  // VS Code allows comments\n  \"servers\": {{\"vscode-srv\": {{\"type\": \"stdio\", \"command\": \"uvx\", \"args\": [\"vs-srv\", \"--api-key={SECRET}\"],}}}},\n  \"inputs\": []\n}}"),
    );
    write(
        &home.join(".codeium/windsurf/mcp_config.json"),
        &format!(
            r#"{{"mcpServers": {{"windsurf-srv": {{"serverUrl": "https://w.example/mcp", "headers": {{"X-Api-Key": "{SECRET}"}}}}}}}}"#
        ),
    );
    write(
        &home.join(".gemini/settings.json"),
        r#"{"theme": "dark", "mcpServers": {"gemini-srv": {"httpUrl": "https://g.example/mcp"}, "gemini-sse": {"url": "https://g.example/sse"}}}"#,
    );
    write(
        &home.join(".codex/config.toml"),
        &format!("model = \"o3\"\n[mcp_servers.codex-srv]\ncommand = \"docker\"\nargs = [\"run\", \"-i\", \"ghcr.io/acme/srv\"]\nenv = {{ TOKEN = \"{SECRET}\" }}\n"),
    );
}

#[test]
fn discovery_finds_every_client_and_redacts_secrets() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    fixtures(home.path(), project.path());
    let assert = mcp_budget(home.path(), project.path())
        .args(["servers", "--format", "json"])
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    assert!(!stdout.contains("TOPSECRET"), "a secret leaked: {stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let found: Vec<(String, String, String)> = v["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().into(),
                s["client"].as_str().unwrap().into(),
                s["transport"].as_str().unwrap().into(),
            )
        })
        .collect();
    let expect = [
        ("desktop-srv", "claude-desktop", "stdio"),
        ("code-user-srv", "claude-code", "stdio"),
        ("proj-srv", "claude-code", "http"),
        ("cursor-srv", "cursor", "http"),
        ("windsurf-srv", "windsurf", "http"),
        ("gemini-srv", "gemini", "http"),
        ("gemini-sse", "gemini", "sse"),
        ("codex-srv", "codex", "stdio"),
        ("code-project-srv", "claude-code", "stdio"),
        ("vscode-srv", "vscode", "stdio"),
    ];
    for (name, client, transport) in expect {
        assert!(
            found
                .iter()
                .any(|f| f.0 == name && f.1 == client && f.2 == transport),
            "{name} ({client}, {transport}) not in {found:?}"
        );
    }
    assert_eq!(found.len(), expect.len());
    // the table form names the source file and key
    let table = mcp_budget(home.path(), project.path())
        .args(["servers"])
        .assert()
        .code(0);
    let text = String::from_utf8_lossy(&table.get_output().stdout).to_string();
    assert!(
        text.contains("projects./work/app.mcpServers.proj-srv") && !text.contains("TOPSECRET"),
        "{text}"
    );
}

#[test]
fn broken_entries_are_named_by_file_and_key_and_the_rest_load() {
    let home = tempfile::tempdir().unwrap();
    let cfg = home.path().join("mixed.json");
    write(
        &cfg,
        r#"{"mcpServers": {"good": {"command": "x"}, "bad": {"args": ["no command"]}, "worse": 42}}"#,
    );
    let assert = mcp_budget(home.path(), home.path())
        .args(["servers", "--config", cfg.to_str().unwrap()])
        .assert()
        .code(2);
    let out = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    assert!(out.contains("good"), "{out}");
    assert!(
        out.contains("mixed.json: `mcpServers.bad`: no `command` or `url`"),
        "{out}"
    );
    assert!(
        out.contains("`mcpServers.worse`: expected an object"),
        "{out}"
    );
}

#[test]
fn audit_through_an_imported_config_redacts_env_in_every_output() {
    let home = tempfile::tempdir().unwrap();
    let cfg = home.path().join(".cursor/mcp.json");
    let bin = bin_path();
    write(
        &cfg,
        &format!(
            r#"{{"mcpServers": {{"local-demo": {{"command": "{}", "args": ["demo-server"], "env": {{"DEMO_TOKEN": "{SECRET}"}}}}}}}}"#,
            bin.display()
        ),
    );
    let out = home.path().join("out");
    let assert = mcp_budget(home.path(), home.path())
        .args([
            "audit",
            "--out",
            out.to_str().unwrap(),
            "--auto-probe",
            "--format",
            "json",
        ])
        .assert()
        .code(0);
    let report = read_report(&out);
    let s = &report["servers"][0];
    assert_eq!(s["name"], "local-demo");
    assert_eq!(s["transport"], "stdio");
    assert!(s["target"]
        .as_str()
        .unwrap()
        .contains("DEMO_TOKEN=<redacted>"));
    // auto-probe calls read-only tools without required arguments, and nothing else
    let tools: Vec<&str> = s["probes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["tool"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "browser_snapshot",
            "take_screenshot",
            "list_tickets",
            "get_time",
            "list_docs"
        ]
    );
    let mut everything = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    everything.push_str(&String::from_utf8_lossy(&assert.get_output().stderr));
    for f in ["audit.json", "servers.csv", "tools.csv", "probes.csv"] {
        everything.push_str(&std::fs::read_to_string(out.join(f)).unwrap());
    }
    assert!(!everything.contains("TOPSECRET"));
}

#[test]
fn a_planted_secret_appears_in_no_output_format() {
    let home = tempfile::tempdir().unwrap();
    let bin = bin_path();
    let cfg = home.path().join("mcp.json");
    // the secret in env, in an argument, in a header and as a URL token; the HTTP server is absent
    write(
        &cfg,
        &format!(
            r#"{{"mcpServers": {{
                "local": {{"command": "{bin}", "args": ["demo-server", "--api-key={SECRET}"], "env": {{"TOKEN": "{SECRET}"}}}},
                "remote": {{"url": "http://127.0.0.1:9/mcp?access_token={SECRET}", "headers": {{"Authorization": "Bearer {SECRET}"}}}}
            }}}}"#,
            bin = bin.display()
        ),
    );
    let mut everything = String::new();
    for format in ["table", "json", "csv"] {
        let out = home.path().join(format!("out-{format}"));
        let a = mcp_budget(home.path(), home.path())
            .args([
                "audit",
                "--config",
                cfg.to_str().unwrap(),
                "--format",
                format,
                "--out",
                out.to_str().unwrap(),
                "--auto-probe",
            ])
            .assert()
            .code(2);
        everything.push_str(&String::from_utf8_lossy(&a.get_output().stdout));
        everything.push_str(&String::from_utf8_lossy(&a.get_output().stderr));
        for f in std::fs::read_dir(&out)
            .unwrap()
            .flatten()
            .filter(|f| f.path().is_file())
        {
            everything.push_str(&std::fs::read_to_string(f.path()).unwrap());
        }
    }
    for format in ["table", "json"] {
        let a = mcp_budget(home.path(), home.path())
            .args([
                "servers",
                "--config",
                cfg.to_str().unwrap(),
                "--format",
                format,
            ])
            .assert()
            .code(0);
        everything.push_str(&String::from_utf8_lossy(&a.get_output().stdout));
    }
    assert!(everything.contains("local") && everything.contains("remote"));
    assert!(!everything.contains("TOPSECRET"), "the secret leaked");
}

/// Issue 26, item 17c: loading is linear in the servers (the merge looked every name up by a
/// scan: 200,000 entries took 79 s). Two files of 100,000 servers with the same names: the
/// second file's identical ones are kept once, the others renamed `@client`, every one counted.
#[test]
fn two_hundred_thousand_entries_load_with_the_right_names() {
    let home = tempfile::tempdir().unwrap();
    let n = 100_000;
    let file = |name: &str, arg: &dyn Fn(usize) -> String| {
        let mut text = String::from("{\"mcpServers\": {");
        for i in 0..n {
            let sep = if i == 0 { "" } else { "," };
            text.push_str(&format!(
                "{sep}\"s{i}\": {{\"command\": \"srv\", \"args\": [\"{}\"]}}",
                arg(i)
            ));
        }
        text.push_str("}}");
        let path = home.path().join(name);
        write(&path, &text);
        path
    };
    let first = file("a.json", &|i| i.to_string());
    // even entries are the same server as in a.json, odd ones another server of that name
    let second = file("b.json", &|i| {
        if i % 2 == 0 {
            i.to_string()
        } else {
            format!("other{i}")
        }
    });
    let out = mcp_budget(home.path(), home.path())
        .args(["servers", "--format", "json"])
        .arg("--config")
        .arg(&first)
        .arg("--config")
        .arg(&second)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), n + n / 2);
    assert_eq!(names[0], "s0");
    assert_eq!(names[n - 1], format!("s{}", n - 1));
    assert_eq!(names[n], "s1@generic");
    assert_eq!(names[n + n / 2 - 1], format!("s{}@generic", n - 1));
    let unique: std::collections::HashSet<&&str> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "every name is unique");
}
