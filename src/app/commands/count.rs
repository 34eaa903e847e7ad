//! `mcp-budget count`: tokens of files or stdin, by every tokenizer asked for.

use std::io::Read;

use anyhow::Context;
use mcp_budget::output::report::render_count;

use crate::app::cli::{CountArgs, ListFormat};
use crate::app::settings;

pub fn run(args: CountArgs) -> anyhow::Result<()> {
    let settings::CountSettings { tokenizers: set } = settings::CountSettings::resolve(&args)?;
    let mut rows = Vec::new();
    let files = if args.files.is_empty() {
        vec!["-".into()]
    } else {
        args.files.clone()
    };
    for file in &files {
        let mut bytes = Vec::new();
        if file.as_os_str() == "-" {
            std::io::stdin()
                .read_to_end(&mut bytes)
                .context("failed to read stdin")?;
        } else {
            bytes = std::fs::read(file)
                .with_context(|| format!("failed to read {}", file.display()))?;
        }
        let text = String::from_utf8(bytes)
            .with_context(|| format!("{} is not UTF-8 text", file.display()))?;
        rows.push((file.display().to_string(), text.len(), set.count(&text)));
    }
    if args.plain {
        return crate::app::printer::print_with(|out| {
            mcp_budget::output::report::render_count_plain(&set, &rows, out)
        });
    }
    let format = args.format.listing(args.width);
    crate::app::printer::rendered(args.format == ListFormat::Table, |out| {
        render_count(&set, &rows, format, out)
    })?;
    Ok(())
}
