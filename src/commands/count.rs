//! `mcp-budget count`: tokens of files or stdin, by every tokenizer asked for.

use std::io::Read;

use anyhow::Context;
use mcp_budget::report::render_count_table;
use mcp_budget::tokens::{Tokenizer, TokenizerSet};

use crate::cli::{CountArgs, ListFormat};
use crate::exit::ExitStatus;

pub fn run(args: CountArgs) -> anyhow::Result<ExitStatus> {
    let set = TokenizerSet::new(Tokenizer::parse_list(&args.tokenizer)?);
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
    let out = match args.format {
        ListFormat::Table => render_count_table(&set, &rows),
        ListFormat::Json => {
            let names: Vec<&str> = set.all().iter().map(|t| t.name()).collect();
            let files: Vec<serde_json::Value> = rows
                .iter()
                .map(|(f, bytes, c)| {
                    let mut v = serde_json::json!({"file": f, "bytes": bytes, "tokens": c.primary});
                    v["by_tokenizer"] = serde_json::json!(c.others);
                    v
                })
                .collect();
            format!(
                "{}\n",
                serde_json::to_string_pretty(
                    &serde_json::json!({"tokenizers": names, "files": files})
                )?
            )
        }
    };
    crate::printer::print(&out)?;
    Ok(ExitStatus::Success)
}
