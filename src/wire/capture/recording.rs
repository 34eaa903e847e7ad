//! A recording loaded for serving: the answers to every recorded request, found by method and
//! by what tells two requests apart (a tool call's name and arguments, a list page's cursor).

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::{CaptureError, Manifest};
use crate::wire::upstream::Direction;

/// What a request is answered with: the raw JSON text of a result or of an error object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordedReply {
    Result(String),
    Error(String),
}

impl RecordedReply {
    /// The response line for request `id` (its JSON text); the result's bytes are kept verbatim.
    pub fn to_line(&self, id: &str) -> String {
        match self {
            RecordedReply::Result(raw) => {
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{raw}}}"#)
            }
            RecordedReply::Error(raw) => format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{raw}}}"#),
        }
    }

    /// A JSON-RPC error of our own.
    pub fn error(code: i64, message: &str) -> RecordedReply {
        RecordedReply::Error(json!({ "code": code, "message": message }).to_string())
    }
}

/// One recorded request and its answers, in the order they came.
#[derive(Debug)]
struct Recorded {
    method: String,
    key: Value,
    answers: Vec<RecordedReply>,
    /// Answers given so far; the last answer repeats once all were given.
    served: usize,
}

/// One recorded server's requests and answers.
#[derive(Debug)]
pub struct Recording {
    server: String,
    recorded: Vec<Recorded>,
}

/// One line of a transcript file.
#[derive(Deserialize)]
struct TranscriptLine {
    dir: String,
    line: String,
}

/// The parts of a JSON-RPC message that pair requests with responses.
#[derive(Deserialize)]
struct Message<'a> {
    id: Option<Value>,
    method: Option<String>,
    params: Option<Value>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

impl Recording {
    /// Load server `server` of the recording in `dir`; `None` picks the only one.
    pub fn load(dir: &Path, server: Option<&str>) -> Result<Recording, CaptureError> {
        let manifest = Manifest::read(dir)?;
        let manifest_path = dir.join(super::MANIFEST_FILE);
        let known = || {
            let names: Vec<&str> = manifest.servers.iter().map(|s| s.name.as_str()).collect();
            names.join(", ")
        };
        let entry =
            match (server, manifest.servers.as_slice()) {
                (_, []) => {
                    return Err(CaptureError::Empty {
                        path: manifest_path,
                    })
                }
                (None, [only]) => only,
                (None, all) => {
                    return Err(CaptureError::ServerRequired {
                        path: manifest_path,
                        count: all.len(),
                        known: known(),
                    })
                }
                (Some(name), all) => all.iter().find(|s| s.name == name).ok_or_else(|| {
                    CaptureError::UnknownServer {
                        name: name.to_string(),
                        path: manifest_path.clone(),
                        known: known(),
                    }
                })?,
            };
        // the manifest names a file inside the recording, never a path out of it
        let plain = Path::new(&entry.file).file_name() == Some(entry.file.as_ref());
        if !plain || entry.file.starts_with('.') {
            return Err(CaptureError::Parse {
                path: manifest_path,
                message: format!(
                    "server `{}`: `{}` is not a file name",
                    entry.name, entry.file
                ),
            });
        }
        let path = dir.join(&entry.file);
        let text = std::fs::read_to_string(&path).map_err(|source| CaptureError::Read {
            path: path.clone(),
            source,
        })?;
        Recording::from_transcript(&entry.name, &text, &path)
    }

    /// Parse a transcript file's text (`path` names it in errors).
    pub fn from_transcript(
        server: &str,
        text: &str,
        path: &Path,
    ) -> Result<Recording, CaptureError> {
        let mut events = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let parsed: TranscriptLine =
                serde_json::from_str(line).map_err(|e| CaptureError::Parse {
                    path: path.to_path_buf(),
                    message: format!("line {}: {e}", n + 1),
                })?;
            let direction = match parsed.dir.as_str() {
                "sent" => Direction::Sent,
                "received" => Direction::Received,
                other => {
                    return Err(CaptureError::Parse {
                        path: path.to_path_buf(),
                        message: format!("line {}: unknown direction `{other}`", n + 1),
                    })
                }
            };
            events.push((direction, parsed.line));
        }
        Ok(Recording::from_events(
            server,
            events.iter().map(|(d, l)| (*d, l.as_str())),
        ))
    }

    /// Pair each request we sent with the server's response to it. Lines that are not JSON,
    /// the server's own requests and notifications are left out.
    pub fn from_events<'a>(
        server: &str,
        events: impl IntoIterator<Item = (Direction, &'a str)>,
    ) -> Recording {
        let mut replay = Recording {
            server: server.to_string(),
            recorded: Vec::new(),
        };
        let mut pending: HashMap<String, (String, Value)> = HashMap::new();
        for (direction, line) in events {
            let Ok(msg) = serde_json::from_str::<Message>(line) else {
                continue;
            };
            match (direction, msg.id, msg.method) {
                (Direction::Sent, Some(id), Some(method)) => {
                    let key = request_key(&method, msg.params.as_ref());
                    pending.insert(id.to_string(), (method, key));
                }
                (Direction::Received, Some(id), None) => {
                    let reply = match (msg.result, msg.error) {
                        (Some(r), _) => RecordedReply::Result(r.get().to_string()),
                        (None, Some(e)) => RecordedReply::Error(e.get().to_string()),
                        (None, None) => continue,
                    };
                    if let Some((method, key)) = pending.remove(&id.to_string()) {
                        replay.push(method, key, reply);
                    }
                }
                _ => {}
            }
        }
        replay
    }

    fn push(&mut self, method: String, key: Value, reply: RecordedReply) {
        match self
            .recorded
            .iter_mut()
            .find(|r| r.method == method && r.key == key)
        {
            Some(r) => r.answers.push(reply),
            None => self.recorded.push(Recorded {
                method,
                key,
                answers: vec![reply],
                served: 0,
            }),
        }
    }

    /// The recorded server's name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Requests recorded with their answers (distinct method and key).
    pub fn len(&self) -> usize {
        self.recorded.len()
    }

    pub fn is_empty(&self) -> bool {
        self.recorded.is_empty()
    }

    /// The answer to a request: the recorded one (in recorded order when a request was made
    /// more than once), else an empty list, an empty `ping` result or an error that says what
    /// was not recorded.
    pub fn answer(&mut self, method: &str, params: Option<&Value>) -> RecordedReply {
        let key = request_key(method, params);
        let found = self
            .recorded
            .iter_mut()
            .find(|r| r.method == method && r.key == key);
        if let Some(r) = found {
            let i = r.served.min(r.answers.len() - 1);
            r.served += 1;
            return r.answers[i].clone();
        }
        self.unrecorded(method, params)
    }

    /// The versions a recording of the 2026-07-28 era names in its `server/discover` result
    /// (`None` for a recording of the handshake era).
    fn discovered_versions(&self) -> Option<Value> {
        let mut answers = self
            .recorded
            .iter()
            .filter(|r| r.method == "server/discover")
            .flat_map(|r| &r.answers);
        answers.find_map(|a| match a {
            RecordedReply::Result(raw) => serde_json::from_str::<Value>(raw)
                .ok()
                .map(|v| v["supportedVersions"].clone()),
            RecordedReply::Error(_) => None,
        })
    }

    /// A recording keeps the era it was made in: one of the 2026-07-28 era refuses
    /// `initialize` as a server of that era does (-32022, with the versions it speaks), and one
    /// of the handshake era answers `server/discover` "method not found", as a server of that
    /// era does (so a client that asks it first falls back to `initialize`).
    fn unrecorded(&self, method: &str, params: Option<&Value>) -> RecordedReply {
        let param = |name: &str| params.and_then(|p| p.get(name));
        if method == "initialize" {
            if let Some(supported) = self.discovered_versions() {
                let requested = param("protocolVersion").cloned().unwrap_or(Value::Null);
                return RecordedReply::Error(
                    json!({
                        "code": -32022,
                        "message": format!("unsupported protocol version: the recording of server `{}` was made in the 2026-07-28 era, without a handshake", self.server),
                        "data": {"supported": supported, "requested": requested},
                    })
                    .to_string(),
                );
            }
        }
        match method {
            "ping" => RecordedReply::Result("{}".into()),
            "tools/call" => {
                let tool = param("name").and_then(Value::as_str).unwrap_or("");
                let arguments = arguments(param("arguments"));
                RecordedReply::error(
                    -32602,
                    &format!("no recorded result for tool `{tool}` with arguments {arguments}"),
                )
            }
            "prompts/list" => RecordedReply::Result(r#"{"prompts":[]}"#.into()),
            "resources/list" => RecordedReply::Result(r#"{"resources":[]}"#.into()),
            "resources/templates/list" => {
                RecordedReply::Result(r#"{"resourceTemplates":[]}"#.into())
            }
            _ if self.recorded.iter().any(|r| r.method == method) => RecordedReply::error(
                -32602,
                &format!(
                    "no recorded result for `{method}` with params {}",
                    params.unwrap_or(&Value::Null)
                ),
            ),
            _ => RecordedReply::error(
                -32601,
                &format!(
                    "method `{method}` is not in the recording of server `{}`",
                    self.server
                ),
            ),
        }
    }
}

/// What tells two requests of a method apart.
fn request_key(method: &str, params: Option<&Value>) -> Value {
    let param = |name: &str| params.and_then(|p| p.get(name));
    match method {
        "initialize" | "ping" => Value::Null,
        // asked in each version it was asked in (a version the server does not speak gets
        // the refusal recorded for it, not the result)
        "server/discover" => param("_meta")
            .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
            .cloned()
            .unwrap_or(Value::Null),
        "tools/call" => json!({
            "name": param("name").cloned().unwrap_or(Value::Null),
            "arguments": arguments(param("arguments")),
        }),
        m if m.ends_with("/list") => param("cursor").cloned().unwrap_or(Value::Null),
        _ => match params {
            Some(Value::Object(map)) => {
                let mut map = map.clone();
                map.shift_remove("_meta");
                if map.is_empty() {
                    Value::Null
                } else {
                    Value::Object(map)
                }
            }
            Some(other) => other.clone(),
            None => Value::Null,
        },
    }
}

/// A call's arguments; none and `null` are the same as `{}`.
fn arguments(given: Option<&Value>) -> Value {
    match given {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(v) => v.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::upstream::Direction::{Received, Sent};

    fn discover(id: u64, version: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"server/discover","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"{version}"}}}}}}"#
        )
    }

    /// A recording of the 2026-07-28 era answers each version as it was answered, however
    /// often it is asked, and refuses `initialize` with the versions it named.
    #[test]
    fn a_modern_recording_answers_each_version_as_recorded() {
        let (d1, d2) = (discover(0, "2026-07-28"), discover(1, "2099-01-01"));
        let lines = [
            (Sent, d1.as_str()),
            (
                Received,
                r#"{"jsonrpc":"2.0","id":0,"result":{"resultType":"complete","supportedVersions":["2026-07-28"]}}"#,
            ),
            (Sent, d2.as_str()),
            (
                Received,
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported"}}"#,
            ),
        ];
        let mut replay = Recording::from_events("rec", lines);
        let params = |v: &str| json!({"_meta": {"io.modelcontextprotocol/protocolVersion": v}});
        for _ in 0..3 {
            let got = replay.answer("server/discover", Some(&params("2026-07-28")));
            assert!(matches!(got, RecordedReply::Result(r) if r.contains("supportedVersions")));
        }
        let got = replay.answer("server/discover", Some(&params("2099-01-01")));
        assert!(matches!(got, RecordedReply::Error(e) if e.contains("-32022")));
        let init = json!({"protocolVersion": "2025-11-25"});
        let RecordedReply::Error(e) = replay.answer("initialize", Some(&init)) else {
            panic!("initialize is refused");
        };
        let e: Value = serde_json::from_str(&e).unwrap();
        assert_eq!(e["code"], -32022);
        assert_eq!(e["data"]["supported"], json!(["2026-07-28"]));
        assert_eq!(e["data"]["requested"], "2025-11-25");
    }
}
