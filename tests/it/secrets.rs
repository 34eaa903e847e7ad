//! Secrets never leave: a recording drops the secrets a server inherited and keeps ordinary
//! text whole; an error that echoes a URL token or a server's stderr is redacted on every path
//! (stderr, every report file, the proxy); configured headers never reach another origin; the
//! proxy's bearer token is not passed to its upstream.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::fail_fast::{answering_server, fails_fast};
use crate::support::{
    audit_probe, bin_path, free_port, head_server, mcp_budget, real_server, serve_on, Heads,
};

/// `path` as text (lossy) when it is a file, else every file under it.
pub(crate) fn files_under_or_file(path: &Path) -> Vec<(String, String)> {
    if path.is_dir() {
        return files_under(path);
    }
    let bytes = std::fs::read(path).unwrap();
    vec![(
        path.display().to_string(),
        String::from_utf8_lossy(&bytes).to_string(),
    )]
}

/// Every file under `dir`, as text (lossy), with its path.
pub(crate) fn files_under(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            let bytes = std::fs::read(&path).unwrap();
            out.push((
                path.display().to_string(),
                String::from_utf8_lossy(&bytes).to_string(),
            ));
        }
    }
    out
}

fn assert_nowhere(secret: &str, texts: &[(String, String)]) {
    for (name, text) in texts {
        assert!(
            !text.contains(secret),
            "{secret} leaked into {name}:\n{text}"
        );
    }
}

#[test]
fn a_recording_drops_inherited_secrets_and_keeps_ordinary_text() {
    const INHERITED: &str = "sk-field-0123456789abcdef";
    let Some(bin) = real_server("mcp-server-everything") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let toml = format!(
        r#"
[servers.everything]
command = {bin:?}
args = ["stdio"]
env = {{ LOG_LEVEL = "warn" }}

[[servers.everything.probes]]
tool = "echo"
arguments = {{ message = "warning: the level is warn" }}

[[servers.everything.probes]]
tool = "get-env"
"#,
        bin = bin.display().to_string()
    );
    let dir = home.path().join("rec");
    let (run, _) = audit_probe(
        home.path(),
        &toml,
        &["--record", dir.to_str().unwrap()],
        &[("FIELD_API_KEY", INHERITED)],
        0,
    );
    let files = files_under(&dir);
    assert_nowhere("sk-field", &files);
    let transcript = std::fs::read_to_string(dir.join("everything.jsonl")).unwrap();
    let env_dump = transcript
        .lines()
        .filter_map(|l| {
            let entry: Value = serde_json::from_str(l).unwrap();
            let msg: Value = serde_json::from_str(entry["line"].as_str().unwrap()).unwrap();
            let text = msg["result"]["content"][0]["text"].as_str()?.to_string();
            serde_json::from_str::<Value>(&text).ok()
        })
        .find(|v| v.get("PATH").is_some())
        .expect("get-env's result was recorded");
    assert_eq!(
        env_dump["FIELD_API_KEY"], "<redacted>",
        "get-env's dump shows the variable, not its value"
    );
    assert_eq!(env_dump["LOG_LEVEL"], "warn");
    assert!(
        transcript.contains("warning: the level is warn"),
        "ordinary text is kept whole"
    );
    assert!(!transcript.contains("<redacted>ing"));

    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let server = &manifest["servers"][0];
    let redacted = &server["redacted"];
    assert!(
        redacted["FIELD_API_KEY"].as_u64().is_some_and(|n| n >= 1),
        "{redacted}"
    );
    assert!(redacted.get("LOG_LEVEL").is_none(), "{redacted}");
    let total: u64 = redacted
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(server["redactions"].as_u64(), Some(total));

    // the echo's numbers from the recording equal the live ones
    let out = mcp_budget(home.path(), home.path())
        .arg("audit")
        .arg(dir.join("probes.toml"))
        .args(["--no-write", "--format", "json", "--spill-dir"])
        .arg(home.path().join("spill"))
        .assert()
        .code(0);
    let replayed: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let (live, again) = (&run["servers"][0], &replayed["servers"][0]);
    for field in ["wire_bytes", "wire_tokens", "model_tokens"] {
        assert_eq!(
            live["tools_list"][field], again["tools_list"][field],
            "{field}"
        );
    }
    assert_eq!(live["probes"][0]["tool"], "echo");
    assert_eq!(live["probes"][0]["raw"], again["probes"][0]["raw"]);
}

/// A plain HTTP server on a loopback port that answers every request with `status` and a body
/// that echoes the request line (as many error pages do).
fn echoing_server(status: &str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let status = status.to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(16) {
            let Ok(mut s) = stream else { continue };
            let mut first = String::new();
            let _ = BufReader::new(s.try_clone().unwrap()).read_line(&mut first);
            let body = format!("upstream failure for {}", first.trim());
            let _ = write!(
                s,
                "HTTP/1.1 {status}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

#[test]
fn an_error_that_echoes_a_url_token_is_redacted_in_every_output() {
    const SECRET: &str = "sk-echo-SECRET-4242";
    let port = echoing_server("500 Internal Server Error");
    let home = tempfile::tempdir().unwrap();
    let probe = home.path().join("leaky.toml");
    std::fs::write(
        &probe,
        format!(
            "[servers.leaky]\nurl = \"http://127.0.0.1:{port}/err500?api_key={SECRET}&page=2\"\n\
             [servers.demo]\nbuiltin = \"demo\"\n"
        ),
    )
    .unwrap();
    let out = home.path().join("out");
    let assert = mcp_budget(home.path(), home.path())
        .args(["audit", probe.to_str().unwrap(), "--timeout", "30", "--out"])
        .arg(&out)
        .assert()
        .code(2);
    let output = assert.get_output();
    let mut texts = files_under(&out);
    texts.push((
        "stdout".into(),
        String::from_utf8_lossy(&output.stdout).into(),
    ));
    texts.push((
        "stderr".into(),
        String::from_utf8_lossy(&output.stderr).into(),
    ));
    for file in [
        "audit.json",
        "report.md",
        "report.html",
        "servers.csv",
        "stderr",
    ] {
        assert!(
            texts.iter().any(|(n, _)| n.ends_with(file)),
            "{file} written"
        );
    }
    assert_nowhere(SECRET, &texts);
    let report = crate::support::read_report(&out);
    let leaky = report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "leaky")
        .unwrap();
    let error = leaky["error"].as_str().unwrap();
    assert!(
        error.contains("500") && error.contains("/err500?api_key=<redacted>&page=2"),
        "{error}"
    );
}

/// A token given as a URL's username (GitHub's `https://TOKEN@github.com`) is a credential:
/// `servers` shows the URL without it, and an audit's error (from an unreachable server, and
/// from one that answers with a web page, whose message names the URL) does not leak it.
#[test]
fn a_token_given_as_a_urls_username_never_shows() {
    const TOKEN: &str = "ghp_tok0123456789SECRET";
    let closed = free_port();
    let page = answering_server(
        "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 15".into(),
        "<html>hi</html>".into(),
    );
    let home = tempfile::tempdir().unwrap();
    let probe = home.path().join("token.toml");
    std::fs::write(
        &probe,
        format!(
            "[servers.gone]\nurl = \"https://{TOKEN}@127.0.0.1:{closed}/mcp\"\n\
             [servers.page]\nurl = \"http://{TOKEN}@127.0.0.1:{page}/mcp\"\n"
        ),
    )
    .unwrap();

    let listed = mcp_budget(home.path(), home.path())
        .args(["servers", "--format", "json", "--config"])
        .arg(&probe)
        .assert()
        .code(0);
    let listed = listed.get_output();
    let stdout = String::from_utf8_lossy(&listed.stdout).to_string();
    let mut texts = vec![
        ("servers stdout".to_string(), stdout.clone()),
        (
            "servers stderr".to_string(),
            String::from_utf8_lossy(&listed.stderr).to_string(),
        ),
    ];
    assert!(
        stdout.contains(&format!("https://<redacted>@127.0.0.1:{closed}/mcp\"")),
        "{stdout}"
    );

    let out = home.path().join("out");
    let audited = mcp_budget(home.path(), home.path())
        .args(["audit", probe.to_str().unwrap(), "--timeout", "30", "--out"])
        .arg(&out)
        .assert()
        .code(2);
    let audited = audited.get_output();
    texts.extend(files_under(&out));
    texts.push((
        "audit stdout".into(),
        String::from_utf8_lossy(&audited.stdout).into(),
    ));
    texts.push((
        "audit stderr".into(),
        String::from_utf8_lossy(&audited.stderr).into(),
    ));
    assert_nowhere(TOKEN, &texts);
    assert_nowhere("tok0123456789", &texts);
    let report = crate::support::read_report(&out);
    let error = |name: &str| {
        report["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap()["error"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(!error("gone").is_empty());
    let page_error = error("page");
    assert!(
        page_error.contains(&format!(
            "http://<redacted>@127.0.0.1:{page}/mcp did not answer"
        )),
        "{page_error}"
    );
}

/// A stdio "server" that prints its credentials on stderr and exits.
const LEAKY_SERVER: &str =
    r#"echo "starting with API_KEY=$API_KEY and FIELD_TOKEN=$FIELD_TOKEN" >&2; exit 3"#;

#[test]
fn a_servers_stderr_is_redacted_by_the_proxy_and_by_audit() {
    const LIVE: &str = "sk-live-0123456789";
    const INHERITED: &str = "tok-inherited-98765";
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("servers.toml");
    std::fs::write(
        &config,
        format!(
            "[servers.leaky]\ncommand = \"sh\"\nargs = [\"-c\", {LEAKY_SERVER:?}]\nenv = {{ API_KEY = \"${{LIVE_KEY}}\" }}\n"
        ),
    )
    .unwrap();
    let envs = [("LIVE_KEY", LIVE), ("FIELD_TOKEN", INHERITED)];
    let mut outputs = Vec::new();
    let mut proxy = mcp_budget(home.path(), home.path());
    proxy
        .args(["proxy", "--timeout", "20", "--server", "leaky", "--config"])
        .arg(&config)
        .write_stdin("");
    let mut plain = mcp_budget(home.path(), home.path());
    plain
        .args(["proxy", "--timeout", "20", "--", "sh", "-c", LEAKY_SERVER])
        .write_stdin("");
    let mut audit = mcp_budget(home.path(), home.path());
    audit.args(["audit", "--no-write", "--timeout", "20", "--config"]);
    audit.arg(&config);
    for (name, mut cmd) in [
        ("proxy --server", proxy),
        ("proxy --", plain),
        ("audit", audit),
    ] {
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let out = cmd.assert().code(2);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(
            stderr.contains("FIELD_TOKEN=<redacted>"),
            "{name}: {stderr}"
        );
        outputs.push((name.to_string(), stderr));
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        outputs.push((format!("{name} stdout"), stdout));
    }
    assert!(
        outputs[0].1.contains("API_KEY=<redacted>"),
        "{}",
        outputs[0].1
    );
    assert_nowhere(LIVE, &outputs);
    assert_nowhere(INHERITED, &outputs);
}

/// A plain HTTP server that records the head of every request it gets and answers 202.
fn recording_server() -> (u16, Heads) {
    head_server(16, |_| {
        "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into()
    })
}

#[test]
fn configured_headers_never_reach_another_origin() {
    const SECRET: &str = "sk-cross-origin-31337";
    let (other, seen) = recording_server();
    let headers =
        format!("headers = {{ Authorization = \"Bearer {SECRET}\", X-Api-Key = \"{SECRET}\" }}");

    // a legacy SSE server whose stream names an endpoint on another port
    let sse = answering_server(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache".into(),
        format!("event: endpoint\ndata: http://127.0.0.1:{other}/messages\n\n"),
    );
    let error = fails_fast(&format!(
        "[servers.sse]\nurl = \"http://127.0.0.1:{sse}/sse\"\ntransport = \"sse\"\n{headers}\n"
    ));
    assert!(
        error.contains("another origin") && error.contains(&format!("127.0.0.1:{other}")),
        "{error}"
    );

    // a streamable HTTP server that redirects to another port
    let redirect = answering_server(
        format!(
            "HTTP/1.1 307 Temporary Redirect\r\nlocation: http://127.0.0.1:{other}/mcp\r\ncontent-length: 0"
        ),
        String::new(),
    );
    let error = fails_fast(&format!(
        "[servers.http]\nurl = \"http://127.0.0.1:{redirect}/mcp\"\n{headers}\n"
    ));
    assert!(
        error.contains("another origin") && error.contains(&format!("127.0.0.1:{other}")),
        "{error}"
    );
    assert!(!error.contains(SECRET), "{error}");

    let seen = seen.lock().unwrap();
    assert!(
        seen.iter().all(|h| !h.contains(SECRET)),
        "the other origin got the credentials: {seen:?}"
    );
}

#[test]
fn the_proxys_bearer_token_is_not_passed_to_the_upstream() {
    const TOKEN: &str = "gate-value-5150";
    let Some(everything) = real_server("mcp-server-everything") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut cmd = Command::new(bin_path());
    cmd.args(["proxy", "--spill-dir"])
        .arg(home.path().join("spill"))
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--bearer-token-env", "MY_GATE", "--"])
        .arg(&everything)
        .arg("stdio")
        .env("MY_GATE", TOKEN);
    let _proxy = serve_on(cmd, port);
    // get-env through the proxy, recorded by an audit that does not know the token
    let toml = format!(
        "[servers.viaproxy]\nurl = \"http://127.0.0.1:{port}/mcp\"\nheaders = {{ Authorization = \"Bearer {TOKEN}\" }}\n[[servers.viaproxy.probes]]\ntool = \"get-env\"\n"
    );
    let dir = home.path().join("rec");
    let (report, _) = audit_probe(
        home.path(),
        &toml,
        &["--timeout", "30", "--record", dir.to_str().unwrap()],
        &[],
        0,
    );
    assert_eq!(report["servers"][0]["probes"][0]["status"], "ok");
    let transcript = std::fs::read_to_string(dir.join("viaproxy.jsonl")).unwrap();
    assert!(
        transcript.contains("PATH"),
        "get-env printed the environment"
    );
    assert!(!transcript.contains("MY_GATE"), "the upstream saw MY_GATE");
}
