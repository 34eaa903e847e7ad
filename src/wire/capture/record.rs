//! The recorder of `audit --record DIR`: one transcript per server, secrets replaced, then the
//! manifest and `probes.toml` rewritten, so a run cut short still leaves a usable recording.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;

use super::{CaptureError, Manifest, ManifestServer, MessageCounts, RecordedProbe, PROBES_FILE};
use crate::config::{inherited_secrets, spec_secrets, Redactor, Secret, ServerSpec};
use crate::ground::atomic::write_atomic;
use crate::wire::upstream::{Direction, WireEvent};

/// What `probes.toml` sets in `[defaults]`, so the recording is audited the way it was made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayDefaults {
    /// Tokenizer names, primary first.
    pub tokenizer: Vec<String>,
    /// The engine's default budget in tokens.
    pub budget: Option<usize>,
}

/// Writes a recording; shared by every server's audit.
#[derive(Debug)]
pub struct Recorder {
    dir: PathBuf,
    defaults: ReplayDefaults,
    recorded_at: String,
    /// Secrets of every server of the run and of the inherited environment: a server can
    /// print another's, or the environment it inherited, so every transcript is cleaned of all.
    run_secrets: Vec<Secret>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    servers: Vec<ManifestServer>,
    /// Transcript file of each server name, so two names never share a file.
    files: BTreeMap<String, String>,
    failures: Vec<String>,
}

/// One line of a transcript file.
#[derive(Serialize)]
struct TranscriptLine<'a> {
    dir: Direction,
    at_ms: u64,
    line: &'a str,
}

impl Recorder {
    /// A recorder writing into `dir` (created). Its `probes.toml` audits the recording in
    /// place (`capture = "."`), wherever the folder is moved.
    pub fn create(dir: &Path, defaults: ReplayDefaults) -> Result<Recorder, CaptureError> {
        let failed = |source| CaptureError::Write {
            path: dir.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(failed)?;
        let dir = dir.canonicalize().map_err(failed)?;
        Ok(Recorder {
            dir,
            defaults,
            recorded_at: crate::ground::units::now_rfc3339(),
            run_secrets: inherited_secrets(),
            state: Mutex::new(State::default()),
        })
    }

    /// Also replace the secrets of these servers in every transcript (all the run's servers).
    pub fn redact_secrets_of(&mut self, specs: &[ServerSpec]) {
        self.run_secrets.extend(specs.iter().flat_map(spec_secrets));
    }

    /// The recording's directory, absolute.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // a panic while holding the lock leaves plain data behind; keep using it
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Record one server's session: its transcript with the spec's secrets replaced, then the
    /// manifest and `probes.toml` rewritten. A failure is also remembered for [`failures`].
    ///
    /// [`failures`]: Recorder::failures
    pub fn record(&self, spec: &ServerSpec, events: &[WireEvent]) -> Result<(), CaptureError> {
        let result = self.try_record(spec, events);
        if let Err(e) = &result {
            self.lock().failures.push(e.to_string());
        }
        result
    }

    /// [`record`](Recorder::record) on a blocking thread, off the async workers.
    pub async fn save(
        self: Arc<Self>,
        spec: ServerSpec,
        events: Vec<WireEvent>,
    ) -> Result<(), CaptureError> {
        let path = self.dir.clone();
        tokio::task::spawn_blocking(move || self.record(&spec, &events))
            .await
            .unwrap_or_else(|e| {
                Err(CaptureError::Write {
                    path,
                    source: std::io::Error::other(e.to_string()),
                })
            })
    }

    /// Every failure to write so far, as messages.
    pub fn failures(&self) -> Vec<String> {
        self.lock().failures.clone()
    }

    /// The manifest as it stands.
    pub fn manifest(&self) -> Manifest {
        Manifest {
            schema_version: super::SCHEMA_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            recorded_at: self.recorded_at.clone(),
            servers: self.lock().servers.clone(),
        }
    }

    fn try_record(&self, spec: &ServerSpec, events: &[WireEvent]) -> Result<(), CaptureError> {
        // the server's own names first: a value it shares with another is counted under its own
        let mut redactor = Redactor::of(spec_secrets(spec));
        redactor.add_secrets(self.run_secrets.iter().cloned());
        let file = self.file_for(&spec.name);
        let path = self.dir.join(&file);
        let mut written = Written::default();
        write_atomic(&path, |out| written.write(out, events, &redactor))
            .map_err(|source| CaptureError::Write { path, source })?;
        let server = ManifestServer {
            name: spec.name.clone(),
            file,
            transport: spec.transport.kind().to_string(),
            target: redactor.redact(&spec.transport.to_string()),
            probes: written.probes,
            messages: written.messages,
            redactions: written.redacted.values().sum(),
            redacted: written.redacted,
        };
        // the lock is held while writing, so concurrent servers never write the same file
        let mut st = self.lock();
        st.servers.retain(|s| s.name != server.name);
        st.servers.push(server);
        st.servers.sort_by(|a, b| a.name.cmp(&b.name));
        let manifest = Manifest {
            schema_version: super::SCHEMA_VERSION,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            recorded_at: self.recorded_at.clone(),
            servers: st.servers.clone(),
        };
        manifest.write(&self.dir)?;
        let toml = manifest.probes_toml(&self.dir, &self.defaults)?;
        let path = self.dir.join(PROBES_FILE);
        write_atomic(&path, |out| out.write_all(toml.as_bytes()))
            .map_err(|source| CaptureError::Write { path, source })
    }

    /// `<sanitised name>.jsonl`, unique among this recording's servers.
    fn file_for(&self, name: &str) -> String {
        let mut st = self.lock();
        if let Some(file) = st.files.get(name) {
            return file.clone();
        }
        let stem = crate::budget::sanitize(name);
        let mut file = format!("{stem}.jsonl");
        let mut n = 2;
        while st.files.values().any(|f| f.eq_ignore_ascii_case(&file)) {
            file = format!("{stem}-{n}.jsonl");
            n += 1;
        }
        st.files.insert(name.to_string(), file.clone());
        file
    }
}

/// What writing a transcript found on the way.
#[derive(Default)]
struct Written {
    probes: Vec<RecordedProbe>,
    messages: MessageCounts,
    /// Replacements made, by the secret's name.
    redacted: BTreeMap<String, usize>,
}

impl Written {
    fn write(
        &mut self,
        out: &mut dyn Write,
        events: &[WireEvent],
        redactor: &Redactor,
    ) -> std::io::Result<()> {
        for event in events {
            let line: Cow<str> = if redactor.is_empty() {
                Cow::Borrowed(&event.line)
            } else {
                Cow::Owned(redactor.redact_tallied(&event.line, &mut self.redacted))
            };
            match event.direction {
                Direction::Sent => {
                    self.messages.sent += 1;
                    self.probes.extend(tool_call(&line));
                }
                Direction::Received => self.messages.received += 1,
            }
            let entry = TranscriptLine {
                dir: event.direction,
                at_ms: event.at_ms,
                line: &line,
            };
            serde_json::to_writer(&mut *out, &entry)?;
            out.write_all(b"\n")?;
        }
        Ok(())
    }
}

/// The tool and arguments of a `tools/call` request line.
fn tool_call(line: &str) -> Option<RecordedProbe> {
    let msg: Value = serde_json::from_str(line).ok()?;
    if msg.get("method")?.as_str()? != "tools/call" || msg.get("id").is_none() {
        return None;
    }
    let params = msg.get("params")?;
    Some(RecordedProbe {
        tool: params.get("name")?.as_str()?.to_string(),
        arguments: match params.get("arguments") {
            Some(a @ Value::Object(_)) => a.clone(),
            _ => Value::Object(Default::default()),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Origin, Probe, TransportSpec};
    use std::sync::Arc;

    fn spec(name: &str) -> ServerSpec {
        let shown = serde_json::json!({ "q": "${MY_QUERY}", "n": 1 });
        let actual = serde_json::json!({ "q": "hidden-query-é", "n": 1 });
        ServerSpec {
            name: name.into(),
            origin: Origin {
                file: "p.toml".into(),
                key: format!("servers.{name}"),
                client: "probe-file".into(),
            },
            transport: TransportSpec::Stdio {
                command: "srv".into(),
                args: vec!["--token".into(), "tok-123456".into()],
                env: BTreeMap::from([("API_KEY".into(), "sk-\"live\"-42".into())]),
                cwd: None,
            },
            probes: vec![Probe {
                tool: "find".into(),
                arguments: actual.as_object().unwrap().clone(),
                shown_arguments: shown.as_object().unwrap().clone(),
                label: None,
            }],
            timeout_secs: None,
            trust: Default::default(),
        }
    }

    fn event(direction: Direction, at_ms: u64, line: &str) -> WireEvent {
        WireEvent {
            direction,
            at_ms,
            line: Arc::new(line.to_string()),
        }
    }

    #[test]
    fn writes_redacted_transcripts_a_manifest_and_a_probe_file() {
        let dir = tempfile::tempdir().unwrap();
        let defaults = ReplayDefaults {
            tokenizer: vec!["o200k_base".into()],
            budget: Some(4000),
        };
        let rec = Recorder::create(&dir.path().join("rec"), defaults).unwrap();
        let events = [
            event(
                Direction::Sent,
                0,
                r#"{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"find","arguments":{"q":"hidden-query-é","n":1}}}"#,
            ),
            event(
                Direction::Received,
                3,
                r#"{"jsonrpc":"2.0","id":0,"result":{"content":[{"type":"text","text":"key sk-\"live\"-42, q hidden-query-\u00e9"}]}}"#,
            ),
        ];
        rec.record(&spec("a/b"), &events).unwrap();
        rec.record(&spec("a_b"), &events[..1]).unwrap();
        assert!(rec.failures().is_empty());

        let files: Vec<String> = ["a_b.jsonl", "a_b-2.jsonl", "manifest.json", "probes.toml"]
            .iter()
            .map(|f| std::fs::read_to_string(rec.dir().join(f)).unwrap())
            .collect();
        for (text, secret) in files.iter().flat_map(|t| {
            [
                "sk-\\\"live\\\"-42",
                "sk-\"live\"-42",
                "hidden-query",
                "\\u00e9",
            ]
            .map(|s| (t, s))
        }) {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        let lines: Vec<serde_json::Value> = files[0]
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[1]["dir"], "received");
        assert_eq!(lines[1]["at_ms"], 3);
        assert_eq!(
            lines[1]["line"],
            r#"{"jsonrpc":"2.0","id":0,"result":{"content":[{"type":"text","text":"key <redacted>, q <redacted>"}]}}"#
        );

        let manifest = Manifest::read(rec.dir()).unwrap();
        assert_eq!(manifest, rec.manifest());
        let names: Vec<(&str, &str)> = manifest
            .servers
            .iter()
            .map(|s| (s.name.as_str(), s.file.as_str()))
            .collect();
        assert_eq!(names, [("a/b", "a_b.jsonl"), ("a_b", "a_b-2.jsonl")]);
        let a = &manifest.servers[0];
        assert_eq!(
            a.messages,
            MessageCounts {
                sent: 1,
                received: 1
            }
        );
        assert_eq!(a.redactions, 3);
        assert_eq!(
            a.redacted,
            BTreeMap::from([("API_KEY".to_string(), 1), ("${MY_QUERY}".to_string(), 2)])
        );
        assert_eq!(a.transport, "stdio");
        assert!(!a.target.contains("tok-123456"), "{}", a.target);
        assert_eq!(a.probes[0].arguments["q"], "<redacted>");

        let probe_file = rec.dir().join(PROBES_FILE);
        let loaded = crate::config::load_config_file(&probe_file, None, &|_| None).unwrap();
        let parsed = loaded.probe_file.unwrap();
        assert_eq!(parsed.defaults.budget, Some(4000));
        assert_eq!(parsed.defaults.tokenizer, Some(vec!["o200k_base".into()]));
        let servers = loaded.servers.servers;
        assert_eq!(servers.len(), 2);
        assert_eq!(servers[0].name, "a/b");
        // the recording is found relative to probes.toml: the folder can move
        assert_eq!(
            servers[0].transport,
            TransportSpec::Capture {
                dir: rec.dir().join("."),
                server: Some("a/b".into()),
            }
        );
        assert_eq!(
            serde_json::Value::Object(servers[0].probes[0].arguments.clone()),
            serde_json::json!({ "n": 1, "q": "<redacted>" })
        );
    }
}
