//! A policy file (`--policy`): read, parsed as TOML (a `[policy]` table, or a file that is
//! one) and added on top of a policy, each failure naming the file.

use crate::budget::policy::{Policy, PolicyError};

/// A policy file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PolicyFileError {
    #[error("failed to read {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to parse {path}: {message}")]
    Parse { path: String, message: String },
    #[error("{path}: {source}")]
    Invalid {
        path: String,
        #[source]
        source: PolicyError,
    },
}

impl Policy {
    /// The built-in policy extended by a file: a `[policy]` table, or a file that is one.
    pub fn load_file(path: &std::path::Path) -> Result<Policy, PolicyFileError> {
        let mut p = Policy::builtin();
        p.extend_from_file(path)?;
        Ok(p)
    }

    /// Add a policy file's rules on top of this policy.
    pub fn extend_from_file(&mut self, path: &std::path::Path) -> Result<(), PolicyFileError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| PolicyFileError::Read {
            path: shown.clone(),
            source,
        })?;
        let value: toml::Value =
            toml::from_str(crate::ground::text::strip_bom(&text)).map_err(|e| {
                PolicyFileError::Parse {
                    path: shown.clone(),
                    message: e.to_string().trim().replace('\n', " "),
                }
            })?;
        let table = value.get("policy").cloned().unwrap_or(value);
        self.extend_from_toml(&table)
            .map_err(|source| PolicyFileError::Invalid {
                path: shown,
                source,
            })
    }
}
