//! One entry point for every audit report format: a closed `Format` picks the writer, and each
//! writer writes to any `std::io::Write` (the way hyperfine's exporters and ruff's emitters do).

use std::io::Write;

use super::charts::DrawnChart;
use super::csv::{write_csv, CsvKind};
use super::html::write_html;
use super::json::write_json;
use super::markdown::write_markdown;
use super::page::Page;
use super::table::write_table;
use crate::measure::facts::Report;

/// An output format of the audit report.
#[derive(Debug, Clone, Copy)]
pub enum Format<'a> {
    /// The terminal summary; `width` fixes the table width (None: the terminal's, if any);
    /// `wrap`: notes and findings wrap to it too (a terminal, or a width asked for; piped
    /// output keeps one line per finding for grep).
    Table { width: Option<u16>, wrap: bool },
    /// audit.json: the report model, the machine contract.
    Json,
    /// One of the three CSV tables.
    Csv(CsvKind),
    /// report.md; it links the drawn `charts` (written beside it, under charts/).
    Markdown { charts: &'a [DrawnChart] },
    /// report.html; it inlines the drawn `charts`.
    Html { charts: &'a [DrawnChart] },
}

/// The formats of the listings (`count`, `replay`, `servers`, `stats`, `lab`): each has one
/// entry point that takes one of these, as [`render`] does for the audit report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// A terminal table; `width` fixes its width where it wraps (None: the terminal's).
    Table {
        width: Option<u16>,
    },
    Json,
    /// CSV, for a listing that has one (`stats`).
    Csv,
}

/// The error of a listing asked for a format it does not have.
pub(crate) fn no_such_format(listing: &str, format: Listing) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        format!("{listing} has no {format:?} output"),
    )
}

/// Write `report` in `format` to `out`.
pub fn render(report: &Report, format: Format<'_>, out: &mut dyn Write) -> std::io::Result<()> {
    match format {
        Format::Table { width, wrap } => write_table(report, width, wrap, out),
        Format::Json => write_json(report, out),
        Format::Csv(kind) => write_csv(report, kind, out).map_err(std::io::Error::from),
        Format::Markdown { charts } => write_markdown(&Page::of(report), charts, out),
        Format::Html { charts } => write_html(&Page::of(report), charts, out),
    }
}
