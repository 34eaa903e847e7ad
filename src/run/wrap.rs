//! `wrap` and `unwrap`: put `mcp-budget proxy` in front of the servers in the client configs a
//! user already has, and take it out again. An edit keeps the file as the user wrote it
//! (`json.rs` edits byte ranges of JSON and JSONC; `codex.rs` edits Codex's TOML with a
//! format-preserving editor), a backup of the file is written beside it first, the new text
//! replaces the old whole (temp file, rename) only if the file is still what was read, and the
//! original of every wrapped entry is recorded (`store.rs`) so `unwrap` gives it back byte for
//! byte (`write.rs`: in place for a file with hard links). A file in a git work tree is shared
//! (`project.rs`): no secret value, no path of this machine, no backup goes into it. Nothing
//! here prints: the command shows the plans and their diffs.

mod argv;
mod codex;
mod json;
mod project;
mod store;
mod tree;
mod write;

use std::fmt;
use std::path::{Path, PathBuf};

pub use argv::{fragile_binary, profile_of, Options};
pub use store::{Record, Store};
pub use write::{write, Wrote};

use crate::config::{discover, ClientKind};

/// A file's new text and each entry's outcome; for `wrap`, also the original text of each
/// entry wrapped and each entry as wrapped (canonical), by key path.
#[derive(Debug, Default)]
struct Edited {
    text: String,
    entries: Vec<EntryChange>,
    originals: std::collections::BTreeMap<String, String>,
    wrapped: std::collections::BTreeMap<String, String>,
}

/// Whether the server `name` is one the caller picked (none picked: every one).
fn picked(servers: &[String], name: &str) -> bool {
    servers.is_empty() || servers.iter().any(|s| s == name)
}

/// What became of one server entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryOutcome {
    /// Now behind the proxy.
    Wrapped,
    /// Was behind the proxy already: unchanged.
    AlreadyWrapped,
    /// Given back exactly as recorded.
    Restored,
    /// Given back from the command after `--` (no record of its original text).
    Rebuilt,
    /// Not behind the proxy (unwrap leaves it).
    NotWrapped,
    /// Left as it is, and why.
    Skipped(String),
}

impl fmt::Display for EntryOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EntryOutcome::Wrapped => f.write_str("wrapped"),
            EntryOutcome::AlreadyWrapped => f.write_str("already wrapped (unchanged)"),
            EntryOutcome::Restored => f.write_str("unwrapped (restored as it was)"),
            EntryOutcome::Rebuilt => {
                f.write_str("unwrapped (no record of its original: command and args rebuilt)")
            }
            EntryOutcome::NotWrapped => f.write_str("not wrapped"),
            EntryOutcome::Skipped(why) => write!(f, "left as it is: {why}"),
        }
    }
}

/// One entry of a file and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryChange {
    /// Its key path in the file (`mcpServers.github`).
    pub key: String,
    pub server: String,
    pub outcome: EntryOutcome,
}

/// A config file to edit, and whose it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub path: PathBuf,
    pub client: ClientKind,
    /// The git work tree the file (or the file its link points to) is in: a shared file.
    pub shared: Option<PathBuf>,
}

impl Target {
    fn new(path: PathBuf, client: ClientKind) -> Target {
        let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        let shared = project::work_tree(&path).or_else(|| project::work_tree(&real));
        Target {
            path,
            client,
            shared,
        }
    }
}

/// A file that cannot be edited, and why (one line, naming the file).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct FileError {
    pub path: PathBuf,
    pub message: String,
}

fn error(path: &Path, message: impl Into<String>) -> FileError {
    FileError {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// The edit of one file: its text before and after, and each entry's outcome.
#[derive(Debug, Clone)]
pub struct FilePlan {
    pub target: Target,
    /// The file written: the link's target when the config is a symbolic link (a dotfile
    /// kept in a repository stays a link).
    pub real: PathBuf,
    pub before: String,
    pub after: String,
    pub entries: Vec<EntryChange>,
    /// Where the file as it was goes before it is written: beside it, or in the state folder
    /// for a shared file.
    pub backup: PathBuf,
    /// The binary the wrapped entries run, when this edit wraps any.
    pub bin: Option<String>,
    /// What a shared file got instead of a secret value, in words
    /// (`OTEL_EXPORTER_OTLP_HEADERS as ${env:OTEL_EXPORTER_OTLP_HEADERS}`).
    pub references: Vec<String>,
    /// The record as it will be after this edit.
    record: Record,
}

impl FilePlan {
    /// Whether the edit changes the file.
    pub fn changes(&self) -> bool {
        self.before != self.after
    }
}

/// Which way to edit.
#[derive(Debug, Clone, Copy)]
pub enum Edit<'a> {
    Wrap(&'a Options),
    Unwrap,
}

/// The files to edit: `configs` when given (the client by the file's place, else its shape),
/// else every standard place that exists, the current folder's project files only with
/// `project`; only `clients` when any are named.
pub fn targets(
    home: Option<&Path>,
    cwd: &Path,
    configs: &[PathBuf],
    clients: &[ClientKind],
    project: bool,
) -> Result<Vec<Target>, FileError> {
    let mut out = Vec::new();
    if configs.is_empty() {
        for place in discover(home, cwd) {
            if place.project && !project {
                continue;
            }
            out.push(Target::new(place.path, place.client));
        }
    } else {
        for path in configs {
            let client = match ClientKind::at(path) {
                Some(c) => c,
                None if path.extension().is_some_and(|e| e == "toml") => ClientKind::Codex,
                None => {
                    let text = std::fs::read_to_string(path)
                        .map_err(|e| error(path, format!("cannot read it: {e}")))?;
                    let value = crate::config::parse_jsonc(crate::ground::text::strip_bom(&text))
                        .map_err(|e| error(path, format!("not JSON: {e}")))?;
                    value
                        .as_object()
                        .and_then(|o| ClientKind::guess(path, o))
                        .ok_or_else(|| error(path, "not a client config: an unknown shape"))?
                }
            };
            out.push(Target::new(path.clone(), client));
        }
    }
    out.retain(|t| clients.is_empty() || clients.contains(&t.client));
    // one file named twice (or a link to one already listed, symbolic or hard) is edited once
    let mut seen = Vec::new();
    out.retain(|t| {
        use std::os::unix::fs::MetadataExt;
        let id = std::fs::metadata(&t.path)
            .map(|m| (m.dev(), m.ino(), PathBuf::new()))
            .unwrap_or_else(|_| (0, 0, t.path.clone()));
        let fresh = !seen.contains(&id);
        seen.push(id);
        fresh
    });
    Ok(out)
}

/// Plan the edit of one file: read it and make the new text, writing nothing.
pub fn plan(
    target: &Target,
    direction: Edit,
    servers: &[String],
    store: &Store,
) -> Result<FilePlan, FileError> {
    let path = &target.path;
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
    let bytes = std::fs::read(&real).map_err(|e| error(path, format!("cannot read it: {e}")))?;
    let before =
        String::from_utf8(bytes).map_err(|_| error(path, "not UTF-8 text: left as it is"))?;
    let (bom, body) = match before.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", before.as_str()),
    };
    let mut record = store.load(&real).map_err(|e| error(path, e))?;
    // the whole file can come back only while every change since it was mcp-budget's
    let ours = record.written.as_deref() == Some(store::hash(before.as_bytes()).as_str());
    if !ours {
        record.before = None;
    }
    let codex = target.client == ClientKind::Codex;
    let mut bin = None;
    let mut references = Vec::new();
    let edited = match direction {
        Edit::Wrap(options) => {
            let (options, said, refusal) = file_options(options, target);
            let edited = if codex {
                codex::wrap(body, servers, &options)
            } else {
                json::wrap(body, target.client, servers, &options)
            }
            .map_err(|m| error(path, m))?;
            if !edited.originals.is_empty() {
                if let Some(why) = refusal {
                    return Err(error(path, why));
                }
                bin = Some(options.bin.clone());
                references = said;
            }
            if !edited.originals.is_empty() && record.originals.is_empty() {
                record.before = Some(before.clone());
            }
            record.originals.extend(edited.originals.clone());
            record.wrapped.extend(edited.wrapped.clone());
            edited
        }
        Edit::Unwrap => {
            let edited = if codex {
                codex::unwrap(body, servers, &record.originals, &record.wrapped)
            } else {
                json::unwrap(
                    body,
                    target.client,
                    servers,
                    &record.originals,
                    &record.wrapped,
                )
            }
            .map_err(|m| error(path, m))?;
            for e in &edited.entries {
                if matches!(e.outcome, EntryOutcome::Restored | EntryOutcome::Rebuilt) {
                    record.originals.remove(&e.key);
                    record.wrapped.remove(&e.key);
                }
            }
            edited
        }
    };
    let entries = edited.entries;
    let mut after = format!("{bom}{}", edited.text);
    if matches!(direction, Edit::Unwrap) && record.originals.is_empty() {
        // every wrapped entry given back, and nothing else changed since mcp-budget wrote the
        // file: the file as it was, byte for byte
        let all_back = entries
            .iter()
            .all(|e| matches!(e.outcome, EntryOutcome::Restored | EntryOutcome::NotWrapped));
        if let (true, Some(original)) = (all_back, record.before.take()) {
            after = original;
        }
        record.before = None;
    }
    record.written = Some(store::hash(after.as_bytes()));
    let backup = match target.shared {
        Some(_) => store.backup_path(&real),
        None => beside(&real),
    };
    Ok(FilePlan {
        target: target.clone(),
        real,
        before,
        after,
        entries,
        backup,
        bin,
        references,
        record,
    })
}

/// The options for one file: as given, or for a shared file its own (the bare binary, secrets
/// as references) with what they became, in words; and why the file must be refused if an
/// entry is wrapped in it (a secret no reference of its client can carry).
fn file_options(options: &Options, target: &Target) -> (Options, Vec<String>, Option<String>) {
    if target.shared.is_none() {
        return (options.clone(), Vec::new(), None);
    }
    match project::shared_options(options, target.client) {
        Ok((o, said)) => (o, said, None),
        Err(why) => {
            // what would be wrapped, with no secret at all, only to know if anything would be
            let mut o = options.clone();
            o.env.clear();
            o.shared = Some(target.client);
            (o, Vec::new(), Some(why))
        }
    }
}

/// The token of a set of plans: what `--dry-run` prints and `--expect` checks, a hash of every
/// file's path and text before and after.
pub fn token(plans: &[FilePlan]) -> String {
    let mut h = blake3::Hasher::new();
    for p in plans.iter().filter(|p| p.changes()) {
        for part in [
            p.real.display().to_string().as_bytes(),
            p.before.as_bytes(),
            p.after.as_bytes(),
        ] {
            h.update(&(part.len() as u64).to_le_bytes());
            h.update(part);
        }
    }
    h.finalize().to_hex()[..16].to_string()
}

/// Remember a dry run's view of the files under its token.
pub fn remember_dry_run(plans: &[FilePlan], token: &str, store: &Store) -> std::io::Result<()> {
    let files = plans
        .iter()
        .map(|p| {
            (
                p.real.display().to_string(),
                store::hash(p.before.as_bytes()),
            )
        })
        .collect();
    store.save_plan(token, &files)
}

/// Why plans differ from the dry run of `token`: the files that changed since, by name.
pub fn differs_from_dry_run(plans: &[FilePlan], token: &str, store: &Store) -> String {
    let Some(seen) = store.load_plan(token) else {
        return format!("the edits differ from those of the dry run {token}");
    };
    let changed: Vec<String> = plans
        .iter()
        .filter(|p| {
            seen.get(&p.real.display().to_string())
                .is_none_or(|h| *h != store::hash(p.before.as_bytes()))
        })
        .map(|p| p.target.path.display().to_string())
        .collect();
    if changed.is_empty() {
        format!("the edits differ from those of the dry run {token} (other options?)")
    } else {
        format!("{} changed since the dry run {token}", changed.join(", "))
    }
}

/// Every secret a config's text holds as written: each header value (`headers`, Codex's
/// `http_headers`), each `env` value and each string under a secret-looking key anywhere in the
/// file (a header moved by `wrap` is one), duplicate keys and unusual escapes included; a value
/// made only of references (`Bearer ${env:TOKEN}`) holds none. The command's diff redacts them
/// beside what the config loader finds.
pub fn written_secrets(client: ClientKind, text: &str) -> Vec<crate::config::Secret> {
    let body = crate::ground::text::strip_bom(text);
    let found = if client == ClientKind::Codex {
        codex::secrets(body)
    } else {
        tree::secrets(body)
    };
    found
        .into_iter()
        // a reference (`Bearer ${env:TOKEN}`) holds no secret: the dry run shows it
        .filter(|(_, value)| !project::is_reference(value))
        .map(|(name, value)| crate::config::Secret::new(name, value))
        .collect()
}

/// Where the backup of a file that is not shared goes: beside it, `NAME.mcp-budget.bak`.
fn beside(real: &Path) -> PathBuf {
    let mut name = real.file_name().unwrap_or_default().to_os_string();
    name.push(".mcp-budget.bak");
    real.with_file_name(name)
}
