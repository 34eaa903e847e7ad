//! Loading every source of servers for one run: the files named, or the discovered client
//! configs, merged into one set. A file that cannot be read is an error for that file only.
//! A discovered project server that is not trusted is kept apart, never in the set to run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{
    assess, discover, load_config_file, ClaudeRecords, ConfigError, Place, ProbeFile, ServerSet,
    ServerSpec,
};

/// Everything loaded for a run.
#[derive(Debug, Default)]
pub struct Sources {
    /// The servers that may be started.
    pub servers: ServerSet,
    /// Project servers that are not trusted (their `trust` says why): listed, never started.
    pub untrusted: Vec<ServerSpec>,
    /// Files that could not be used at all.
    pub file_errors: Vec<ConfigError>,
    /// The probe files among them, in order (their defaults, policy and gate tables).
    pub probe_files: Vec<ProbeFile>,
    /// The files that were read.
    pub files: Vec<PathBuf>,
}

impl Sources {
    /// The untrusted server of this name, if the name is not also a trusted server's.
    pub fn untrusted_named(&self, name: &str) -> Option<&ServerSpec> {
        if self.servers.servers.iter().any(|s| s.name == name) {
            return None;
        }
        self.untrusted.iter().find(|s| s.name == name)
    }

    /// Keep only the servers listed, trusted or not; the error names the first that is
    /// neither.
    pub fn select(&mut self, names: &[String]) -> Result<(), String> {
        if names.is_empty() {
            return Ok(());
        }
        self.untrusted.retain(|s| names.contains(&s.name));
        let runnable: Vec<String> = names
            .iter()
            .filter(|n| self.untrusted_named(n).is_none())
            .cloned()
            .collect();
        if runnable.is_empty() {
            self.servers.servers.clear();
            self.servers
                .errors
                .retain(|e| e.server.as_ref().is_some_and(|n| names.contains(n)));
            return Ok(());
        }
        self.servers.select(&runnable)
    }
}

/// Load `files`, or, when there are none, every client config found in the standard places;
/// a project server found so runs only when trusted (`trust_project` trusts those nobody
/// rejected).
pub fn load_sources(
    files: &[PathBuf],
    home: Option<&Path>,
    cwd: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
    trust_project: bool,
) -> Sources {
    let places: Vec<Option<Place>> = if files.is_empty() {
        discover(home, cwd).into_iter().map(Some).collect()
    } else {
        files.iter().map(|_| None).collect()
    };
    let mut sources = Sources::default();
    let mut records: Option<ClaudeRecords> = None;
    for (i, place) in places.iter().enumerate() {
        let path = match place {
            Some(p) => &p.path,
            None => &files[i],
        };
        match load_config_file(path, home, lookup) {
            Ok(mut file) => {
                for spec in &mut file.servers.servers {
                    if let Some(place) = place {
                        let records = records.get_or_insert_with(|| ClaudeRecords::read(home, cwd));
                        spec.trust = assess(place, spec, records);
                    }
                    spec.trust = std::mem::take(&mut spec.trust).allowed_by_flag(trust_project);
                }
                let (run, skip): (Vec<_>, Vec<_>) =
                    file.servers.servers.drain(..).partition(|s| s.trust.runs());
                file.servers.servers = run;
                sources.untrusted.extend(skip);
                sources.servers.merge(file.servers);
                sources.probe_files.extend(file.probe_file);
                sources.files.push(path.clone());
            }
            Err(e) => sources.file_errors.push(e),
        }
    }
    drop_runnable_twins(&mut sources);
    sources
}

/// An untrusted server identical to one that runs (the same server in the user's config and
/// the project's) is not listed as skipped.
fn drop_runnable_twins(sources: &mut Sources) {
    let running: HashMap<&str, &ServerSpec> = sources
        .servers
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s))
        .collect();
    sources.untrusted.retain(|u| {
        running
            .get(u.name.as_str())
            .is_none_or(|r| r.transport != u.transport)
    });
}
