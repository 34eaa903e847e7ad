//! PNG and SVG charts of an audit report: the schema tax per server, the most expensive tools,
//! and each probe's raw vs budgeted tokens and latency. Drawn with plotters and an embedded
//! DejaVu Sans, so no system font is needed; characters the font lacks are spelled `[U+XXXX]`.
//! A build without the `charts` feature (default on) draws none: the report has no charts and
//! `stats --chart` says why.

#[cfg(feature = "charts")]
mod bitmap;
#[cfg(feature = "charts")]
mod draw;
mod error;
#[cfg(all(test, feature = "charts"))]
mod fixtures;
#[cfg(feature = "charts")]
mod font;
mod kind;
#[cfg(feature = "charts")]
mod plan;
#[cfg(feature = "charts")]
mod stats;
#[cfg(not(feature = "charts"))]
mod without;

#[cfg(feature = "charts")]
use std::path::{Path, PathBuf};

pub use error::ChartError;
pub use kind::ChartKind;
#[cfg(feature = "charts")]
pub use stats::{render_stats_chart, STATS_TITLE};
#[cfg(not(feature = "charts"))]
pub use without::{draw_svgs, render_stats_chart, render_svg, write_drawn};

#[cfg(feature = "charts")]
use crate::measure::facts::Report;

/// One chart drawn as SVG: report.md links its file, report.html inlines its text.
#[derive(Debug, Clone, PartialEq)]
pub struct DrawnChart {
    pub kind: ChartKind,
    pub svg: String,
}

#[cfg(feature = "charts")]
/// SVG text of one chart; None when the report has no data for it (e.g. no probes).
pub fn render_svg(report: &Report, kind: ChartKind) -> Option<String> {
    svg(report, kind).expect("an SVG drawn into a string with the embedded font cannot fail")
}

#[cfg(feature = "charts")]
/// PNG bytes of one chart; None when the report has no data for it.
fn render_png(report: &Report, kind: ChartKind) -> Result<Option<Vec<u8>>, ChartError> {
    let Some(plan) = plan::plan(report, kind) else {
        return Ok(None);
    };
    bitmap::png_of(&plan, kind.title(), kind.file_stem()).map(Some)
}

#[cfg(feature = "charts")]
/// Every chart the report has data for, drawn as SVG once, in `ChartKind::ALL` order.
pub fn draw_svgs(report: &Report) -> Result<Vec<DrawnChart>, ChartError> {
    let mut drawn = Vec::new();
    for kind in ChartKind::ALL {
        if let Some(svg) = svg(report, kind)? {
            drawn.push(DrawnChart { kind, svg });
        }
    }
    Ok(drawn)
}

#[cfg(feature = "charts")]
/// Write each drawn chart's SVG text as charts/<stem>.svg under `dir` and its PNG beside it,
/// each file whole or not at all; returns the paths written.
pub fn write_drawn(
    report: &Report,
    dir: &Path,
    drawn: &[DrawnChart],
) -> Result<Vec<PathBuf>, ChartError> {
    let dir = dir.join("charts");
    let mut written = Vec::new();
    for DrawnChart { kind, svg } in drawn {
        let png = render_png(report, *kind)?.expect("a chart with SVG data has PNG data");
        for (ext, bytes) in [("svg", svg.as_bytes()), ("png", png.as_slice())] {
            let path = dir.join(format!("{}.{ext}", kind.file_stem()));
            crate::ground::atomic::write_atomic(&path, |w| w.write_all(bytes)).map_err(
                |source| ChartError::Write {
                    path: path.clone(),
                    source,
                },
            )?;
            written.push(path);
        }
    }
    Ok(written)
}

#[cfg(feature = "charts")]
fn svg(report: &Report, kind: ChartKind) -> Result<Option<String>, ChartError> {
    let Some(plan) = plan::plan(report, kind) else {
        return Ok(None);
    };
    draw::svg_of(&plan, kind.title(), kind.file_stem()).map(Some)
}

#[cfg(all(test, feature = "charts"))]
mod tests {
    use super::draw::WIDTH;
    use super::fixtures::{decode, fixture, no_probes, report};
    use super::*;

    #[test]
    fn every_svg_has_title_axis_and_labels() {
        let r = fixture();
        for kind in ChartKind::ALL {
            let svg = render_svg(&r, kind).unwrap();
            assert!(svg.starts_with("<svg"), "{kind:?}");
            assert!(svg.trim_end().ends_with("</svg>"), "{kind:?}");
            assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
            assert!(svg.contains(kind.title()), "{kind:?}");
        }
        let tax = render_svg(&r, ChartKind::SchemaTax).unwrap();
        assert!(tax.contains("tokens sent to the model every turn"));
        assert!(tax.contains("[U+4E2D][U+6587]-server (2 tools)"));
        assert!(tax.contains("14,185"), "value label with separators");
        assert!(!tax.contains("broken"));
        let top = render_svg(&r, ChartKind::TopTools).unwrap();
        assert!(top.contains("rocket[U+1F680]"));
        assert!(top.contains("github/list_pull_requests"));
        let tokens = render_svg(&r, ChartKind::ProbeTokens).unwrap();
        for text in [
            "tokens per result (log scale)",
            "budget 8,000",
            "Claude Code warns 10k",
            "Claude Code cap 25k",
            "61,234",
            "10,000",
            "raw result",
            "after the budget engine",
        ] {
            assert!(tokens.contains(text), "{text}");
        }
        let latency = render_svg(&r, ChartKind::ProbeLatency).unwrap();
        for text in [
            "milliseconds (log scale)",
            "upstream call",
            "budget engine",
            "0.85",
        ] {
            assert!(latency.contains(text), "{text}");
        }
    }

    #[test]
    fn charts_without_data_are_none() {
        let r = no_probes();
        assert!(render_svg(&r, ChartKind::ProbeTokens).is_none());
        assert!(render_svg(&r, ChartKind::ProbeLatency).is_none());
        assert!(render_png(&r, ChartKind::ProbeTokens).unwrap().is_none());
        assert!(render_svg(&r, ChartKind::SchemaTax).is_some());
        let empty = report(Vec::new());
        for kind in ChartKind::ALL {
            assert!(render_svg(&empty, kind).is_none(), "{kind:?}");
        }
    }

    #[test]
    fn every_png_decodes_and_is_drawn_on() {
        let r = fixture();
        for kind in ChartKind::ALL {
            let bytes = render_png(&r, kind).unwrap().unwrap();
            let plan = plan::plan(&r, kind).unwrap();
            let (w, h, inked) = decode(&bytes);
            assert_eq!((w, h), (WIDTH, plan.height()), "{kind:?}");
            assert!(inked > 0.02, "{kind:?}: {inked}");
        }
    }

    #[test]
    fn write_charts_writes_exactly_what_it_returns() {
        let dir = tempfile::tempdir().unwrap();
        let r = fixture();
        let written = write_drawn(&r, dir.path(), &draw_svgs(&r).unwrap()).unwrap();
        assert_eq!(written.len(), 10, "five charts, PNG and SVG");
        let mut on_disk: Vec<PathBuf> = std::fs::read_dir(dir.path().join("charts"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        on_disk.sort();
        let mut expected = written.clone();
        expected.sort();
        assert_eq!(on_disk, expected);
        assert!(written.contains(&dir.path().join("charts/probe-tokens.svg")));

        let dir = tempfile::tempdir().unwrap();
        let r = no_probes();
        let written = write_drawn(&r, dir.path(), &draw_svgs(&r).unwrap()).unwrap();
        let names: Vec<_> = written.iter().map(|p| p.file_name().unwrap()).collect();
        assert_eq!(
            names,
            [
                "schema-tax.svg",
                "schema-tax.png",
                "top-tools.svg",
                "top-tools.png"
            ]
        );
    }
}
