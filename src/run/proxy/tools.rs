//! The tools a client is shown: the upstream's list read whole, filtered, descriptions
//! replaced or cut by policy, `mcp_budget_read` added, and what they cost per turn (counted on
//! `measure`'s model view, as `audit` counts it).

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::filter::ToolFilter;
use super::lazy::{call_tool_definition, find_tool_definition, Catalog, CALL_TOOL, FIND_TOOL};
use super::locked::lock;
use super::options::ProxyOptions;
use super::read::{read_tool_definition, READ_TOOL};
use super::startup::{LeanSaving, Startup};
use crate::ground::text::shorten;
use crate::ground::tokens::Tokenizer;
use crate::measure::{
    apply_transform, compact_json, hide_parameters, model_view, LeanTransform, RequiredHidden,
};
use crate::wire::upstream::{PageWalker, Session, UpstreamError};

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
            if [READ_TOOL, FIND_TOOL, CALL_TOOL].contains(&name.as_str()) {
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
            "upstream `{server}`: tools/list stopped: {}; showing the {} tools read so far",
            stop.describe(session.redactor()),
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
            "upstream `{server}` has a tool of its own named like the proxy's (`{READ_TOOL}`, `{FIND_TOOL}`, `{CALL_TOOL}`): it is hidden, and the name is the proxy's"
        ));
    }
    Ok((all, warnings))
}

/// Tell telemetry the names its metrics label calls with: the upstream's tools (`all`, as
/// listed) and the proxy's own; a call to any other name is counted as `unknown`.
pub(super) fn label_tools(all: &[Value], opts: &ProxyOptions) {
    let own = [READ_TOOL, FIND_TOOL, CALL_TOOL];
    let upstream = all.iter().filter_map(|t| t["name"].as_str());
    opts.telemetry.list_tools(upstream.chain(own));
}

/// The tools a client may see: `--allow`/`--deny` and the policy's `hide` applied, descriptions
/// replaced (`description`) or cut (`max_description_chars`) as the policy says, and input
/// schemas lean where `--lean-schemas` or the policy's `lean_schemas` asks (each transform's
/// saving counted).
fn shown(
    all: &[Value],
    filter: &ToolFilter,
    opts: &ProxyOptions,
) -> Result<(Vec<Value>, Vec<LeanSaving>), RequiredHidden> {
    let policy = opts.engine.policy();
    let mut saved: Vec<LeanSaving> = Vec::new();
    let mut refused = None;
    let tools = all
        .iter()
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
            if opts.lean_schemas || p.lean_schemas {
                lean(&mut t, name, opts.tokenizer, &mut saved);
            }
            if !p.hide_params.is_empty() {
                let globs = hidden_globs(&p.hide_params);
                if let Err(e) = hide_parameters(&mut t, |n| globs.is_match(n)) {
                    refused.get_or_insert(e);
                }
            }
            Some(t)
        })
        .collect();
    match refused {
        Some(e) => Err(e),
        None => Ok((tools, saved)),
    }
}

/// The policy's `hide_params` as one glob set (each was checked when the policy was read).
fn hidden_globs(names: &[String]) -> globset::GlobSet {
    let mut b = globset::GlobSetBuilder::new();
    for n in names {
        if let Ok(g) = globset::Glob::new(n) {
            b.add(g);
        }
    }
    b.build().unwrap_or_else(|_| globset::GlobSet::empty())
}

/// Make one tool's schema lean, transform by transform, adding what each saved.
fn lean(tool: &mut Value, name: &str, tokenizer: Tokenizer, saved: &mut Vec<LeanSaving>) {
    let name = name.to_string();
    let mut before = tool_tokens(tool, tokenizer);
    for transform in LeanTransform::ALL {
        let Some(schema) = tool.get_mut("inputSchema") else {
            return;
        };
        let removed = apply_transform(schema, &name, transform);
        if removed == 0 {
            continue;
        }
        let after = tool_tokens(tool, tokenizer);
        match saved.iter_mut().find(|s| s.transform == transform) {
            Some(s) => {
                s.removed += removed;
                s.tokens += before.saturating_sub(after);
            }
            None => saved.push(LeanSaving {
                transform,
                removed,
                tokens: before.saturating_sub(after),
            }),
        }
        before = after;
    }
}

/// The tools a client is shown at start-up, the catalog behind the lazy tools, and what they
/// and the upstream's cost per turn.
pub(super) fn listing(
    all: &[Value],
    filter: &ToolFilter,
    opts: &ProxyOptions,
) -> Result<(Vec<Value>, Catalog, Startup), RequiredHidden> {
    let upstream_tokens: usize = all.iter().map(|t| tool_tokens(t, opts.tokenizer)).sum();
    let (shown, lean) = shown(all, filter, opts)?;
    let names: HashSet<&str> = shown.iter().filter_map(|t| t["name"].as_str()).collect();
    let hidden_tokens: usize = all
        .iter()
        .filter(|t| !names.contains(t["name"].as_str().unwrap_or("")))
        .map(|t| tool_tokens(t, opts.tokenizer))
        .sum();
    let catalog = Catalog::new(shown);
    let tools = client_tools(&catalog, opts, &[]);
    let read_tool_tokens = tool_tokens(&read_tool_definition(), opts.tokenizer);
    let startup = Startup {
        upstream_tools: all.len(),
        shown_tools: catalog.tools().len(),
        upstream_tokens,
        shown_tokens: schema_tokens(&tools, opts.tokenizer),
        hidden_tokens,
        read_tool_tokens,
        lazy: opts.lazy_tools,
        lean,
    };
    Ok((tools, catalog, startup))
}

/// What a client is shown: the catalog's tools then `mcp_budget_read` last; with lazy tools,
/// the exposed ones (found lately, `--lazy-expose`) then the find, call and read tools.
pub(super) fn client_tools(
    catalog: &Catalog,
    opts: &ProxyOptions,
    exposed: &[String],
) -> Vec<Value> {
    let mut tools: Vec<Value> = if opts.lazy_tools {
        let mut t: Vec<Value> = exposed
            .iter()
            .filter_map(|n| catalog.get(n).cloned())
            .collect();
        t.push(find_tool_definition(catalog.tools().len()));
        t.push(call_tool_definition());
        t
    } else {
        catalog.tools().to_vec()
    };
    tools.push(read_tool_definition());
    tools
}

/// The schema tax of a list of definitions, per turn.
pub(super) fn schema_tokens(tools: &[Value], tokenizer: Tokenizer) -> usize {
    tools.iter().map(|t| tool_tokens(t, tokenizer)).sum()
}

/// A tool's schema tax: its model view, as `audit` counts it.
fn tool_tokens(tool: &Value, tokenizer: Tokenizer) -> usize {
    let empty = Map::new();
    let view = model_view(tool.as_object().unwrap_or(&empty));
    tokenizer.count(&compact_json(&view))
}

/// What the tool list shows, and what it is built from: the filter, the upstream's tools as the
/// client may see them (the catalog the lazy tools search), the tools exposed by a find
/// (`--lazy-expose`), and their schema tax per turn.
pub(super) struct ToolView {
    pub(super) filter: ToolFilter,
    /// The tools the client sees, as JSON definitions, `mcp_budget_read` last.
    shown: std::sync::RwLock<Arc<Vec<Value>>>,
    /// The upstream's tools as the client may see them (filtered, shaped by the policy) and
    /// their search index: what the lazy tools find and call.
    catalog: std::sync::RwLock<Arc<Catalog>>,
    /// The schema tax per turn of `shown` (for the call log).
    shown_tokens: AtomicUsize,
    /// Tools found with the lazy find tool and shown in the list, with when they were last
    /// found or called (`--lazy-expose`).
    exposed: std::sync::Mutex<Vec<(String, Instant)>>,
    /// What the start-up counted (the upstream's schema tax, for the call log).
    pub(super) startup: Startup,
}

impl ToolView {
    /// The view at start-up, from [`listing`].
    pub(super) fn new(
        filter: ToolFilter,
        (tools, catalog, startup): (Vec<Value>, Catalog, Startup),
    ) -> ToolView {
        ToolView {
            filter,
            shown: std::sync::RwLock::new(Arc::new(tools)),
            catalog: std::sync::RwLock::new(Arc::new(catalog)),
            shown_tokens: AtomicUsize::new(startup.shown_tokens),
            exposed: std::sync::Mutex::new(Vec::new()),
            startup,
        }
    }

    /// The tools the client sees now.
    pub(super) fn shown(&self) -> Arc<Vec<Value>> {
        self.shown.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The catalog the lazy tools search now.
    pub(super) fn catalog(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The schema tax per turn of what the client sees now.
    pub(super) fn shown_tokens(&self) -> usize {
        self.shown_tokens.load(Ordering::Relaxed)
    }

    /// Read the upstream's tools again (after it said they changed) and rebuild the list; what
    /// the operator should hear of.
    pub(super) async fn refresh(&self, session: &Session, opts: &ProxyOptions) -> Vec<String> {
        let (all, warnings) = match upstream_tools(session, &opts.server).await {
            Ok(listed) => listed,
            Err(e) => {
                return vec![format!(
                    "upstream `{}`: could not read its tools again after it said they changed: {e}",
                    opts.server
                )]
            }
        };
        let shown = match shown(&all, &self.filter, opts) {
            Ok((shown, _)) => shown,
            Err(e) => {
                let mut said = warnings;
                said.push(format!(
                    "upstream `{}`: its tools changed and the new list cannot be shown: {e}; the last list stays",
                    opts.server
                ));
                return said;
            }
        };
        label_tools(&all, opts);
        *self.catalog.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(Catalog::new(shown));
        self.relist(opts);
        warnings
    }

    /// Rebuild the client's list from the catalog and the exposed tools; whether it changed.
    pub(super) fn relist(&self, opts: &ProxyOptions) -> bool {
        let catalog = self.catalog();
        let tools = client_tools(&catalog, opts, &self.exposed_names());
        self.shown_tokens
            .store(schema_tokens(&tools, opts.tokenizer), Ordering::Relaxed);
        let mut current = self.shown.write().unwrap_or_else(|p| p.into_inner());
        let changed = **current != tools;
        *current = Arc::new(tools);
        changed
    }

    /// The tools exposed now, longest exposed first.
    pub(super) fn exposed_names(&self) -> Vec<String> {
        lock(&self.exposed).iter().map(|(n, _)| n.clone()).collect()
    }

    /// Add tools to the client's list (`--lazy-expose`), or renew them; whether the list
    /// changed.
    pub(super) fn expose(&self, names: &[String], opts: &ProxyOptions) -> bool {
        if opts.lazy_expose.is_none() || names.is_empty() {
            return false;
        }
        {
            let mut exposed = lock(&self.exposed);
            let now = Instant::now();
            for n in names {
                match exposed.iter_mut().find(|(e, _)| e == n) {
                    Some(e) => e.1 = now,
                    None => exposed.push((n.clone(), now)),
                }
            }
        }
        self.relist(opts)
    }

    /// Take off the list the exposed tools last found or called `ttl` ago or longer; whether
    /// the list changed.
    pub(super) fn expire(&self, ttl: Duration, opts: &ProxyOptions) -> bool {
        let gone = {
            let mut exposed = lock(&self.exposed);
            let before = exposed.len();
            exposed.retain(|(_, at)| at.elapsed() < ttl);
            exposed.len() != before
        };
        gone && self.relist(opts)
    }
}
