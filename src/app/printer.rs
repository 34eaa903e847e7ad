//! Every write to stdout and the binary's messages on stderr. Text is shown with its control
//! characters escaped (a server's name cannot drive the terminal), and a closed stdout (the
//! reader went away, as with `| head`) is a normal end, not an error or a panic.

use std::io::{IsTerminal, Write};

use anyhow::Context;
use mcp_budget::ground::text;

/// Write `out` to stdout, control characters escaped (line breaks and tabs kept). A closed
/// pipe ends the output quietly.
pub fn print(out: &str) -> anyhow::Result<()> {
    let escaped = text::lines(out);
    let mut stdout = std::io::stdout().lock();
    quiet_on_closed_pipe(
        stdout
            .write_all(escaped.as_bytes())
            .and_then(|()| stdout.flush()),
    )
}

/// Stream to stdout through `fill` (large JSON); a closed pipe ends the output quietly.
pub fn print_with(fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    let mut out = std::io::BufWriter::new(&mut stdout);
    quiet_on_closed_pipe(fill(&mut out).and_then(|()| out.flush()))
}

/// Write a renderer's output to stdout: a table (`escaped`) goes through [`print`], which
/// escapes what a server named, line by line; a machine format streams as it is written.
pub fn rendered(
    escaped: bool,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    if !escaped {
        return print_with(fill);
    }
    let mut text = Vec::new();
    fill(&mut text)?;
    print(&String::from_utf8_lossy(&text))
}

fn quiet_on_closed_pipe(written: std::io::Result<()>) -> anyhow::Result<()> {
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("failed to write to stdout"),
    }
}

/// A message on stderr (warnings, errors, progress notes), control characters escaped.
/// A closed stderr is ignored: there is nowhere left to say anything.
pub fn warn(message: &str) {
    let mut line = text::lines(message).into_owned();
    if !line.ends_with('\n') {
        line.push('\n');
    }
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// Whether prose wraps to the table's width: at a terminal, or with `--width`; piped output
/// keeps one line per note and finding.
pub fn wraps(flag: Option<u16>) -> bool {
    flag.is_some() || std::io::stdout().is_terminal()
}

/// Table width: the flag, else the terminal's, else 120 columns (deterministic when piped).
pub fn table_width(flag: Option<u16>) -> Option<u16> {
    flag.or_else(|| (!std::io::stdout().is_terminal()).then_some(120))
}
