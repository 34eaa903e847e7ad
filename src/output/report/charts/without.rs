//! A build without the `charts` feature: no chart is drawn. A report has none (its files and
//! pages say nothing of charts), and `stats --chart` is an error that says how to get them.

use std::path::{Path, PathBuf};

use super::{ChartError, ChartKind, DrawnChart};
use crate::measure::facts::Report;
use crate::output::report::StatsRow;

/// No SVG: this build draws no chart.
pub fn render_svg(_report: &Report, _kind: ChartKind) -> Option<String> {
    None
}

/// No chart drawn.
pub fn draw_svgs(_report: &Report) -> Result<Vec<DrawnChart>, ChartError> {
    Ok(Vec::new())
}

/// Nothing to write.
pub fn write_drawn(
    _report: &Report,
    _dir: &Path,
    _drawn: &[DrawnChart],
) -> Result<Vec<PathBuf>, ChartError> {
    Ok(Vec::new())
}

/// `stats --chart`: an error naming the feature.
pub fn render_stats_chart(_rows: &[StatsRow], _png: bool) -> Result<Option<Vec<u8>>, ChartError> {
    Err(ChartError::NotBuilt)
}
