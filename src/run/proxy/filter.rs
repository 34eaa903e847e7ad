//! Which upstream tools a client may see and call: the `--allow` and `--deny` globs.

use globset::{Glob, GlobSet, GlobSetBuilder};

/// A bad `--allow`/`--deny` glob.
#[derive(Debug, thiserror::Error)]
#[error("invalid tool glob `{glob}`: {message}")]
pub struct GlobError {
    pub glob: String,
    pub message: String,
}

fn globset(globs: &[String]) -> Result<GlobSet, GlobError> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        b.add(Glob::new(g).map_err(|e| GlobError {
            glob: g.clone(),
            message: e.to_string(),
        })?);
    }
    b.build().map_err(|e| GlobError {
        glob: globs.join(","),
        message: e.to_string(),
    })
}

/// Which tools the client may see and call.
#[derive(Debug, Clone)]
pub struct ToolFilter {
    allow: Option<GlobSet>,
    deny: GlobSet,
}

impl ToolFilter {
    pub fn new(allow: &[String], deny: &[String]) -> Result<ToolFilter, GlobError> {
        Ok(ToolFilter {
            allow: if allow.is_empty() {
                None
            } else {
                Some(globset(allow)?)
            },
            deny: globset(deny)?,
        })
    }

    pub fn shows(&self, tool: &str) -> bool {
        !self.deny.is_match(tool) && self.allow.as_ref().is_none_or(|a| a.is_match(tool))
    }
}
