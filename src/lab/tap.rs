//! The lab's tap (`mcp-budget lab-tap --out FILE -- COMMAND...`): the MCP server a client
//! mounts in the lab. It starts the real server and passes every line between the two
//! unchanged, writing each to FILE (in the transcript form of `audit --record`: `{"dir",
//! "at_ms", "line"}`) before it passes it on, so what the server sent and what reached the model
//! are counted on the same bytes. Reading a transcript back gives the server's tools and each call's result.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use super::LabError;
use crate::config::Redactor;

/// Run `command` behind the tap until both sides close; the server's exit code. `env_file`
/// holds the server's own variables (`NAME=value` lines), kept out of the client's argv.
pub async fn run(out: &Path, env_file: Option<&Path>, command: &[String]) -> Result<i32, LabError> {
    let (program, args) = command.split_first().ok_or_else(|| LabError::Tap {
        message: "no server command after --".into(),
    })?;
    let failed = |e: std::io::Error| LabError::Tap {
        message: format!("{}: {e}", out.display()),
    };
    let env = match env_file {
        Some(p) => std::fs::read_to_string(p).map_err(|e| LabError::Tap {
            message: format!("{}: {e}", p.display()),
        })?,
        None => String::new(),
    };
    let file = tokio::fs::File::create(out).await.map_err(failed)?;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .envs(env.lines().filter_map(|l| l.split_once('=')))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| LabError::Tap {
            message: format!("could not start `{program}`: {e}"),
        })?;
    let log = Arc::new(Mutex::new(file));
    let started = Instant::now();
    let to_server = child.stdin.take().expect("stdin is piped");
    let from_server = child.stdout.take().expect("stdout is piped");
    let errors = child.stderr.take().expect("stderr is piped");
    let up = pass(tokio::io::stdin(), to_server, "sent", log.clone(), started);
    let down = pass(
        from_server,
        tokio::io::stdout(),
        "received",
        log.clone(),
        started,
    );
    // the server's exit is written down as it happens, with the end of its stderr: a server
    // that fails to start is then reported with why, whatever its client does next
    let ended = async {
        // the server's own variables are its secrets: redacted before a line is cut
        let values = env
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(_, v)| v);
        let redactor = server_redactor(values);
        let tail = tokio::spawn(stderr_tail(errors, redactor));
        let status = child.wait().await;
        let tail = tokio::time::timeout(std::time::Duration::from_secs(2), tail)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        let code = status.as_ref().ok().and_then(|s| s.code());
        let entry = serde_json::json!({
            "dir": "exit",
            "at_ms": started.elapsed().as_millis() as u64,
            "code": code,
            "stderr": tail,
        });
        record(&log, &entry).await;
        status
    };
    // the client closing stdin ends the server's input; the server closing stdout (and
    // ending) ends the tap, whatever the client does: a client waiting for an answer from a
    // server that died then reads the end of its input instead of waiting for its timeout
    let rest = async {
        let (_, status) = tokio::join!(down, ended);
        status
    };
    tokio::pin!(rest);
    let status = tokio::select! {
        status = &mut rest => status,
        _ = up => rest.await,
    };
    let status = status.map_err(failed)?;
    Ok(status.code().unwrap_or(1))
}

/// Write one transcript entry, flushed (a line the log fails to take is lost, not the relay).
async fn record(log: &Mutex<tokio::fs::File>, entry: &Value) {
    let mut file = log.lock().await;
    let _ = file.write_all(format!("{entry}\n").as_bytes()).await;
    let _ = file.flush().await;
}

/// A redactor of a lab server's variables (every value, whatever its name) and of the
/// inherited environment's secrets: what the server prints may echo any of them.
pub(super) fn server_redactor<'v>(values: impl IntoIterator<Item = &'v str>) -> Redactor {
    let mut redactor = Redactor::of(crate::config::inherited_secrets());
    redactor.add(values.into_iter().map(String::from));
    redactor
}

/// Lines of the server's stderr kept for the transcript, and characters of each.
const STDERR_LINES: usize = 20;
const STDERR_LINE_CHARS: usize = 400;
/// Characters of the server's stderr a lab error quotes.
const SAID_CHARS: usize = 300;

/// Pass the server's stderr on to the tap's (the client's, as before), keeping its last lines.
async fn stderr_tail(from: impl tokio::io::AsyncRead + Unpin, redactor: Redactor) -> Vec<String> {
    let mut from = BufReader::new(from);
    let mut to = tokio::io::stderr();
    let mut kept = std::collections::VecDeque::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        match from.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let _ = to.write_all(&line).await;
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end();
        if text.is_empty() {
            continue;
        }
        if kept.len() == STDERR_LINES {
            kept.pop_front();
        }
        kept.push_back(crate::ground::text::preview(
            &redactor.redact(text),
            STDERR_LINE_CHARS,
        ));
    }
    kept.into()
}

/// Copy lines from `from` to `to`, logging each; stops at the end of `from` or a failed write.
async fn pass(
    from: impl tokio::io::AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    dir: &'static str,
    log: Arc<Mutex<tokio::fs::File>>,
    started: Instant,
) {
    let mut from = BufReader::with_capacity(1 << 16, from);
    let mut line = Vec::new();
    loop {
        line.clear();
        match from.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        // recorded before it is passed on: a client that ends (and ends the tap) as soon as it
        // has a result must not leave the transcript without it (a large result under a loaded
        // machine was passed on, read and answered before the tap had written it down)
        let text = String::from_utf8_lossy(&line);
        let entry = serde_json::json!({
            "dir": dir,
            "at_ms": started.elapsed().as_millis() as u64,
            "line": text.trim_end_matches(['\n', '\r']),
        });
        record(&log, &entry).await;
        if to.write_all(&line).await.is_err() || to.flush().await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}

/// A transcript read back: the lines each way, in order.
#[derive(Debug, Default)]
pub struct Transcript {
    sent: Vec<Value>,
    received: Vec<String>,
    /// The server's exit, when it ended before the tap was ended: its code (None: a signal)
    /// and the last lines of its stderr.
    exit: Option<(Option<i32>, Vec<String>)>,
}

impl Transcript {
    /// Read a tap's file; a missing file is an empty transcript (the server never started).
    pub fn read(path: &Path) -> Transcript {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let mut t = Transcript::default();
        for entry in text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        {
            let line = entry["line"].as_str().unwrap_or("").to_string();
            match entry["dir"].as_str() {
                Some("sent") => t.sent.extend(serde_json::from_str(&line).ok()),
                Some("received") => t.received.push(line),
                Some("exit") => {
                    let code = entry["code"].as_i64().map(|c| c as i32);
                    let tail = entry["stderr"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|l| l.as_str().map(String::from))
                        .collect();
                    t.exit = Some((code, tail));
                }
                _ => {}
            }
        }
        t
    }

    /// The response (as parsed) to each request of `method` the client sent, in order.
    fn responses(&self, method: &str) -> Vec<(Value, Value)> {
        let ids: Vec<(Value, Value)> = self
            .sent
            .iter()
            .filter(|m| m["method"] == method && m.get("id").is_some())
            .map(|m| (m["id"].clone(), m["params"].clone()))
            .collect();
        let mut found = Vec::new();
        for line in &self.received {
            let Ok(msg) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if let Some((_, params)) = ids.iter().find(|(id, _)| msg.get("id") == Some(id)) {
                found.push((params.clone(), msg));
            }
        }
        found
    }

    /// Every tool the server listed (all pages the client read), first listing of a name wins.
    pub fn tools(&self) -> Vec<Value> {
        let mut tools: Vec<Value> = Vec::new();
        for (_, msg) in self.responses("tools/list") {
            for tool in msg["result"]["tools"].as_array().into_iter().flatten() {
                if !tools.iter().any(|t| t["name"] == tool["name"]) {
                    tools.push(tool.clone());
                }
            }
        }
        tools
    }

    /// How many tools/list pages the client read, and whether the last one named a next page.
    pub fn pages(&self) -> (usize, bool) {
        let pages = self.responses("tools/list");
        let more = pages
            .last()
            .is_some_and(|(_, m)| m["result"]["nextCursor"].is_string());
        (pages.len(), more)
    }

    /// The result the server gave a tools/call of `tool` with `arguments` (the JSON-RPC
    /// `result`); where none has them, the `k`-th call of `tool`'s (0: the first).
    pub fn call_result(&self, tool: &str, arguments: &Value, k: usize) -> Option<Value> {
        let calls: Vec<(Value, Value)> = self
            .responses("tools/call")
            .into_iter()
            .filter(|(params, _)| params["name"] == tool)
            .collect();
        // the call with these arguments; else (a client that rewrote them) the `k`-th
        let same = calls
            .iter()
            .find(|(params, _)| params["arguments"] == *arguments);
        same.or_else(|| calls.get(k))
            .map(|(_, msg)| msg["result"].clone())
    }

    /// The server's end as the tap saw it, when it ended before the tap: its exit and the
    /// last lines of its stderr (`the server ended (exit 3), its stderr ending: a | b`).
    pub fn server_ended(&self) -> Option<String> {
        let (code, stderr) = self.exit.as_ref()?;
        let exit = code.map_or("killed by a signal".into(), |c| format!("exit {c}"));
        // the lines were redacted as the tap kept them; the cause first, as `audit` says it
        let said = match stderr.is_empty() {
            true => ", saying nothing on stderr".to_string(),
            false => format!(
                ", its stderr ending: {}",
                crate::wire::upstream::stderr_summary(
                    &stderr.join("\n"),
                    SAID_CHARS,
                    &Redactor::default()
                )
            ),
        };
        Some(format!("the server ended ({exit}){said}"))
    }

    /// The protocol era the client spoke: its first request, the version asked, a fallback.
    pub fn era(&self) -> Option<super::ClientEra> {
        super::era::read(&self.sent, &self.received)
    }

    /// Whether the client called `tool` at all.
    pub fn called(&self, tool: &str) -> bool {
        self.sent
            .iter()
            .any(|m| m["method"] == "tools/call" && m["params"]["name"] == tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_call_of_a_tool_has_its_own_result_by_its_arguments_else_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tap.jsonl");
        let line = |dir: &str, msg: Value| json_line(dir, &msg.to_string());
        let call = |id: u64, args: Value| {
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                               "params": {"name": "lab_result", "arguments": args}})
        };
        let result = |id: u64, text: &str| {
            serde_json::json!({"jsonrpc": "2.0", "id": id,
                               "result": {"content": [{"type": "text", "text": text}]}})
        };
        let lines = [
            line("sent", call(4, serde_json::json!({"chars": 100}))),
            line("received", result(4, "first")),
            line("sent", call(5, serde_json::json!({"chars": 200}))),
            line("received", result(5, "second")),
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        let t = Transcript::read(&path);
        let text = |r: Option<Value>| r.map(|r| r["content"][0]["text"].clone());
        let args = |n: u64| serde_json::json!({"chars": n});
        assert_eq!(
            text(t.call_result("lab_result", &args(200), 0)),
            Some("second".into())
        );
        assert_eq!(
            text(t.call_result("lab_result", &args(100), 1)),
            Some("first".into())
        );
        // arguments the client rewrote: the call in its place
        assert_eq!(
            text(t.call_result("lab_result", &args(7), 1)),
            Some("second".into())
        );
        assert_eq!(t.call_result("lab_result", &args(7), 2), None);
        assert_eq!(t.call_result("other", &args(100), 0), None);
    }

    fn json_line(dir: &str, line: &str) -> String {
        serde_json::json!({"dir": dir, "at_ms": 1, "line": line}).to_string()
    }
}
