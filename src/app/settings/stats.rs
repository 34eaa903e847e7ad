//! `stats`' settings: which chart `--chart FILE` asks for, told by the file's extension before
//! the log is read.

use std::path::PathBuf;

use crate::app::cli::StatsArgs;

/// The kind of chart file `--chart` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartFile {
    Png,
    Svg,
}

/// What `stats` runs with.
pub struct Stats {
    /// `--chart FILE`: where, and as PNG or SVG.
    pub chart: Option<(PathBuf, ChartFile)>,
}

impl Stats {
    pub fn resolve(args: &StatsArgs) -> anyhow::Result<Stats> {
        let chart = match &args.chart {
            None => None,
            Some(path) => {
                let kind = match path.extension().and_then(|e| e.to_str()) {
                    Some(e) if e.eq_ignore_ascii_case("png") => ChartFile::Png,
                    Some(e) if e.eq_ignore_ascii_case("svg") => ChartFile::Svg,
                    _ => anyhow::bail!(
                        "--chart {}: the file must end in .svg or .png",
                        path.display()
                    ),
                };
                Some((path.clone(), kind))
            }
        };
        Ok(Stats { chart })
    }
}
