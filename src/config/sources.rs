//! Loading every source of servers for one run: the files named, or the discovered client
//! configs, merged into one set. A file that cannot be read is an error for that file only.

use std::path::{Path, PathBuf};

use super::{discover, load_config_file, ConfigError, ProbeFile, ServerSet};

/// Everything loaded for a run.
#[derive(Debug, Default)]
pub struct Sources {
    pub servers: ServerSet,
    /// Files that could not be used at all.
    pub file_errors: Vec<ConfigError>,
    /// The probe files among them, in order (their defaults, policy and gate tables).
    pub probe_files: Vec<ProbeFile>,
    /// The files that were read.
    pub files: Vec<PathBuf>,
}

/// Load `files`, or, when there are none, every client config found in the standard places.
pub fn load_sources(
    files: &[PathBuf],
    home: Option<&Path>,
    cwd: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Sources {
    let paths: Vec<PathBuf> = if files.is_empty() {
        discover(home, cwd).into_iter().map(|p| p.path).collect()
    } else {
        files.to_vec()
    };
    let mut sources = Sources::default();
    for path in paths {
        match load_config_file(&path, home, lookup) {
            Ok(file) => {
                sources.servers.merge(file.servers);
                sources.probe_files.extend(file.probe_file);
                sources.files.push(path);
            }
            Err(e) => sources.file_errors.push(e),
        }
    }
    sources
}
