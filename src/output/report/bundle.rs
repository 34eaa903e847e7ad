//! The report folder an audit writes: audit.json, servers.csv, tools.csv, probes.csv,
//! clients.csv, the charts (charts/*.svg and *.png), report.md and report.html, each file whole
//! or not at all.
//! Each chart is drawn as SVG once, for its file and for the page that inlines it.

use std::path::Path;

use super::charts::{self, ChartError};
use super::csv::CsvKind;
use super::html::write_html;
use super::markdown::write_markdown;
use super::page::Page;
use super::{render, Format};
use crate::ground::atomic::write_atomic;
use crate::measure::facts::Report;

/// Why the report folder could not be written; the message is the failed file's.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Chart(#[from] ChartError),
}

/// Write the report files into `dir`, with the charts when `with_charts`. A run stopped by a
/// config error (nothing to audit) never gets here, so the last report stays as it was; a run
/// whose servers all failed does write its report (the gate refuses it).
pub fn write(report: &Report, dir: &Path, with_charts: bool) -> Result<(), BundleError> {
    write_atomic(&dir.join("audit.json"), |out| {
        render(report, Format::Json, out)
    })?;
    for kind in CsvKind::ALL {
        write_atomic(&dir.join(kind.file_name()), |out| {
            render(report, Format::Csv(kind), out)
        })?;
    }
    let drawn = if with_charts {
        let drawn = charts::draw_svgs(report)?;
        charts::write_drawn(report, dir, &drawn)?;
        drawn
    } else {
        Vec::new()
    };
    let page = Page::of(report);
    write_atomic(&dir.join("report.md"), |out| {
        write_markdown(&page, &drawn, out)
    })?;
    write_atomic(&dir.join("report.html"), |out| {
        write_html(&page, &drawn, out)
    })?;
    Ok(())
}
