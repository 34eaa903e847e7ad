//! audit.json: the report model as pretty JSON (the machine contract, with `schema_version`).

use std::io::Write;

use crate::measure::facts::Report;

/// Write the report as pretty JSON with a trailing newline.
pub(crate) fn write_json(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    out.write_all(b"\n")
}
