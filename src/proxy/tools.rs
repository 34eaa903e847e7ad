//! The tools a client is shown: the upstream's list read whole, filtered, descriptions
//! replaced or cut by policy, `mcp_budget_read` added, and what they cost per turn (counted on
//! `measure`'s model view, as `audit` counts it).

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::filter::ToolFilter;
use super::options::ProxyOptions;
use super::read::{read_tool_definition, READ_TOOL};
use super::state::Shared;
use crate::measure::{compact_json, model_view};
use crate::tokens::Tokenizer;
use crate::upstream::{PageWalker, Session, UpstreamError};

/// What the proxy found at startup (for its log line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Startup {
    pub upstream_tools: usize,
    pub shown_tools: usize,
    /// Schema tokens per turn of the upstream's tools, and of what the client is shown.
    pub upstream_tokens: usize,
    pub shown_tokens: usize,
    /// What the hidden tools would have cost per turn, and what `mcp_budget_read` costs.
    pub hidden_tokens: usize,
    pub read_tool_tokens: usize,
}

/// Every tool of the upstream, following `nextCursor` with the page walker `audit` uses, each
/// definition as the server sent it (rmcp's typed list would drop fields it does not know and
/// reorder keys), each name once (the first definition), and never one named
/// `mcp_budget_read` (the proxy's own). What had to be cut is said in the warnings.
pub(super) async fn upstream_tools(
    session: &Session,
    server: &str,
) -> Result<(Vec<Value>, Vec<String>), UpstreamError> {
    let mut walker = PageWalker::default();
    while let Some(cursor) = walker.to_ask() {
        let raw = session.tools_page(cursor).await?;
        walker.page(raw.result_text(), 0.0);
    }
    let listed = walker.finish();
    let mut warnings = Vec::new();
    let mut all: Vec<Value> = Vec::new();
    let mut names = HashSet::new();
    let (mut repeated, mut clash) = (Vec::new(), false);
    for page in &listed.pages {
        let page: Value = serde_json::from_str(page).unwrap_or_default();
        for tool in page["tools"].as_array().into_iter().flatten() {
            let name = tool["name"].as_str().unwrap_or("").to_string();
            if name == READ_TOOL {
                clash = true;
            } else if !names.insert(name.clone()) {
                repeated.push(name);
            } else {
                all.push(tool.clone());
            }
        }
    }
    if let Some(stop) = &listed.stopped {
        warnings.push(format!(
            "upstream `{server}`: tools/list stopped: {stop}; showing the {} tools read so far",
            all.len()
        ));
    }
    if !repeated.is_empty() {
        repeated.sort();
        repeated.dedup();
        let some: Vec<String> = repeated
            .iter()
            .take(3)
            .map(|n| format!("`{}`", shorten(n, 40)))
            .collect();
        warnings.push(format!(
            "upstream `{server}`: tools/list named {} tools more than once ({}{}); each is shown once, as first listed",
            repeated.len(),
            some.join(", "),
            if repeated.len() > 3 { ", ..." } else { "" }
        ));
    }
    if clash {
        warnings.push(format!(
            "upstream `{server}` has a tool of its own named `{READ_TOOL}`: it is hidden, and `{READ_TOOL}` is the proxy's"
        ));
    }
    Ok((all, warnings))
}

/// The tools a client is shown: `--allow`/`--deny` and the policy's `hide` applied, and
/// descriptions replaced (`description`) or cut (`max_description_chars`) as the policy says.
fn shown(all: &[Value], filter: &ToolFilter, policy: &crate::budget::Policy) -> Vec<Value> {
    all.iter()
        .filter_map(|t| {
            let name = t["name"].as_str().unwrap_or("");
            let p = policy.for_tool(name);
            if !filter.shows(name) || p.hide {
                return None;
            }
            let mut t = t.clone();
            if let Some(d) = &p.description {
                t["description"] = json!(d);
            } else if let (Some(max), Some(d)) =
                (p.max_description_chars, t["description"].as_str())
            {
                t["description"] = json!(shorten(d, max));
            }
            Some(t)
        })
        .collect()
}

/// `text` cut to at most `max` characters, at the end of a sentence when one is in the last
/// third, else at a word, with `…` added.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    let sentence = cut.rfind(". ").filter(|&i| i * 3 >= cut.len() * 2);
    match sentence {
        Some(i) => cut[..=i].to_string(),
        None => {
            let word = cut
                .rfind(' ')
                .filter(|&i| i * 3 >= cut.len() * 2)
                .unwrap_or(cut.len());
            format!("{}…", cut[..word].trim_end())
        }
    }
}

/// The tools a client is shown at start-up (`mcp_budget_read` last), and what they and the
/// upstream's cost per turn.
pub(super) fn listing(
    all: &[Value],
    filter: &ToolFilter,
    opts: &ProxyOptions,
) -> (Vec<Value>, Startup) {
    let upstream_tokens: usize = all.iter().map(|t| tool_tokens(t, opts.tokenizer)).sum();
    let tools = client_tools(all, filter, opts.engine.policy());
    // the read tool is last
    let (read_tool, upstream_shown) = tools.split_last().expect("the read tool is listed");
    let shown_tools = upstream_shown.len();
    let kept: usize = upstream_shown
        .iter()
        .map(|t| tool_tokens(t, opts.tokenizer))
        .sum();
    let read_tool_tokens = tool_tokens(read_tool, opts.tokenizer);
    let startup = Startup {
        upstream_tools: all.len(),
        shown_tools,
        upstream_tokens,
        shown_tokens: kept + read_tool_tokens,
        hidden_tokens: upstream_tokens - kept,
        read_tool_tokens,
    };
    (tools, startup)
}

/// What a client is shown of the upstream's tools `all`: the allowed ones, shaped by the policy,
/// then `mcp_budget_read` last. At start-up and after the upstream's tools change.
fn client_tools(all: &[Value], filter: &ToolFilter, policy: &crate::budget::Policy) -> Vec<Value> {
    let mut tools = shown(all, filter, policy);
    tools.push(read_tool_definition());
    tools
}

/// A tool's schema tax: its model view, as `audit` counts it.
fn tool_tokens(tool: &Value, tokenizer: Tokenizer) -> usize {
    let empty = Map::new();
    let view = model_view(tool.as_object().unwrap_or(&empty));
    tokenizer.count(&compact_json(&view))
}

impl Shared {
    /// Read the upstream's tools again (after it said they changed).
    pub(super) async fn refresh_tools(&self) {
        let listed = upstream_tools(&self.upstream.get(), &self.opts.server).await;
        let all = match listed {
            Ok((all, warnings)) => {
                warnings.into_iter().for_each(|w| self.warn(w));
                all
            }
            Err(e) => {
                self.warn(format!(
                    "upstream `{}`: could not read its tools again after it said they changed: {e}",
                    self.opts.server
                ));
                return;
            }
        };
        let tools = client_tools(&all, &self.filter, self.opts.engine.policy());
        *self.tools.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(tools);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_cut_at_a_sentence_or_a_word() {
        let d = "Search code across repositories. Returns matching files with line numbers and context.";
        assert_eq!(shorten(d, 200), d);
        assert_eq!(shorten(d, 40), "Search code across repositories.");
        let cut = shorten(d, 60);
        assert!(cut.ends_with('…') && cut.chars().count() <= 60, "{cut}");
        assert!(!cut.contains("  "));
        assert_eq!(shorten("日本語のテキストです", 5), "日本語の…");
    }
}
