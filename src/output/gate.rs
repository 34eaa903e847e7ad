//! The gate's verdict written: the terminal table, Markdown for a PR comment, GitHub
//! annotations, JSON (one entry point, [`render`]), and the verdict files beside a report.

mod github;
mod markdown;
mod render;
mod table;

pub use render::{render, GateFormat};

use std::path::Path;

use crate::judge::gate::Verdict;

/// Write the verdict beside a report: `gate.md` (the PR comment) and `gate.json`, each
/// atomically (a failed write leaves the last one whole).
pub fn write_files(verdict: &Verdict, dir: &Path) -> std::io::Result<()> {
    crate::ground::atomic::write_atomic(&dir.join("gate.md"), |o| {
        render(verdict, GateFormat::Markdown, o)
    })?;
    crate::ground::atomic::write_atomic(&dir.join("gate.json"), |o| {
        render(verdict, GateFormat::Json, o)
    })
}
