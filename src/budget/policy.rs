//! The engine's policy: a default budget and per-tool overrides by glob (budget, JMESPath
//! projection, array and string caps, depth, preview size, strip rules), validated at load.
//! The built-in policy ships projections for the heavy GitHub tools.

use globset::{Glob, GlobMatcher};
use serde::Deserialize;

use crate::budget::shape::project::Projection;
use size::SizeLimits;

/// The smallest budget a result can be cut to and still carry its note.
pub const MIN_BUDGET: usize = 200;
/// The smallest byte or character limit (the note alone takes a few hundred).
pub const MIN_SIZE_CHARS: usize = 1000;
/// The smallest line limit (the note alone takes up to ten lines).
pub const MIN_SIZE_LINES: usize = 20;

/// Which noise the strip stage removes from prose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StripRules {
    pub data_uris: bool,
    pub long_urls: bool,
    pub tracking_params: bool,
    pub base64_runs: bool,
    pub blank_lines: bool,
}

impl Default for StripRules {
    fn default() -> Self {
        StripRules {
            data_uris: true,
            long_urls: true,
            tracking_params: true,
            base64_runs: true,
            blank_lines: true,
        }
    }
}

/// The settings that apply to one tool's result.
#[derive(Debug, Clone)]
pub struct ToolPolicy {
    pub budget: usize,
    /// Bounds in bytes, characters and lines, met beside `budget` (a client's own units).
    pub size: SizeLimits,
    /// The note goes before the result, not after it: for a client that keeps only the head of
    /// what it is sent, the handle to the full original is never what it drops.
    pub note_first: bool,
    /// An embedded resource is measured as its block's JSON (a client that sends it so).
    pub resources_json: bool,
    pub project: Option<Projection>,
    /// At most this many items of an array are kept (none: as many as fill the budget).
    pub max_array_items: Option<usize>,
    /// A string longer than this is cut, in bytes as written in the JSON (none: only to fit).
    pub max_string_chars: Option<usize>,
    /// Containers at this depth and below are kept empty (none: only to fit).
    pub max_depth: Option<usize>,
    /// Upper bound on a spill preview; by default the preview fills the budget.
    pub preview_tokens: Option<usize>,
    pub strip: StripRules,
    /// URLs longer than this are shortened by the strip stage.
    pub url_max_chars: usize,
    /// Drop structuredContent that repeats a text block.
    pub drop_duplicate_structured: bool,
    /// The proxy hides the tool from the client (it costs no schema tokens and cannot be called).
    pub hide: bool,
    /// The proxy shows this description instead of the server's.
    pub description: Option<String>,
    /// The proxy cuts longer descriptions to this many characters (at a sentence end if one is
    /// near).
    pub max_description_chars: Option<usize>,
    /// The proxy shows the tool's input schema lean (annotations a model does not need removed;
    /// what the schema accepts unchanged).
    pub lean_schemas: bool,
    /// Try TOON (Token-Oriented Object Notation) for a JSON text that is a uniform array of
    /// objects, before projection and shrink: used when it round-trips to the same value and
    /// saves at least `toon_min_saving` of the tokens.
    pub toon: bool,
    /// The share of tokens TOON must save to be used (0.0-1.0).
    pub toon_min_saving: f64,
    /// The proxy takes these parameters (names or globs) out of the tool's input schema; each
    /// must be optional (a required one is refused at start).
    pub hide_params: Vec<String>,
    /// Arguments the proxy supplies on every call of the tool (where the client gave none).
    pub fixed_arguments: serde_json::Map<String, serde_json::Value>,
}

impl ToolPolicy {
    /// The bounds the JSON fill meets beside the budget.
    pub fn fill_caps(&self) -> crate::budget::shape::fill::Caps {
        crate::budget::shape::fill::Caps {
            items: self.max_array_items,
            string_bytes: self.max_string_chars,
            depth: self.max_depth,
        }
    }
}

impl Default for ToolPolicy {
    fn default() -> Self {
        ToolPolicy {
            budget: 8000,
            size: SizeLimits::default(),
            note_first: false,
            resources_json: false,
            project: None,
            max_array_items: None,
            max_string_chars: None,
            max_depth: None,
            preview_tokens: None,
            strip: StripRules::default(),
            url_max_chars: 200,
            drop_duplicate_structured: true,
            hide: false,
            description: None,
            max_description_chars: None,
            lean_schemas: false,
            toon: false,
            toon_min_saving: 0.1,
            hide_params: Vec::new(),
            fixed_arguments: serde_json::Map::new(),
        }
    }
}

/// A policy problem, naming the tool (or `default`) and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("policy for `{tool}`: {message}")]
pub struct PolicyError {
    pub tool: String,
    pub message: String,
}

/// The TOML form of a policy table (`[policy]` or `[policy.tools.NAME]`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleToml {
    budget: Option<usize>,
    budget_bytes: Option<usize>,
    budget_chars: Option<usize>,
    budget_lines: Option<usize>,
    note_first: Option<bool>,
    project: Option<String>,
    max_array_items: Option<usize>,
    max_string_chars: Option<usize>,
    max_depth: Option<usize>,
    preview_tokens: Option<usize>,
    url_max_chars: Option<usize>,
    drop_duplicate_structured: Option<bool>,
    strip: Option<StripToml>,
    hide: Option<bool>,
    description: Option<String>,
    max_description_chars: Option<usize>,
    lean_schemas: Option<bool>,
    toon: Option<bool>,
    toon_min_saving: Option<f64>,
    hide_params: Option<Vec<String>>,
    fixed_arguments: Option<toml::Table>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StripToml {
    data_uris: Option<bool>,
    long_urls: Option<bool>,
    tracking_params: Option<bool>,
    base64_runs: Option<bool>,
    blank_lines: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyToml {
    #[serde(flatten)]
    default: RuleToml,
    #[serde(default)]
    tools: indexmap_free::OrderedTools,
}

mod indexmap_free {
    //! `[policy.tools.*]` in file order (later rules win).
    use serde::de::{Deserializer, MapAccess, Visitor};
    use serde::Deserialize;

    #[derive(Debug, Clone, Default)]
    pub struct OrderedTools(pub Vec<(String, super::RuleToml)>);

    impl<'de> Deserialize<'de> for OrderedTools {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = OrderedTools;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a table of tool policies")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<OrderedTools, A::Error> {
                    let mut out = Vec::new();
                    while let Some((k, v)) = m.next_entry::<String, super::RuleToml>()? {
                        out.push((k, v));
                    }
                    Ok(OrderedTools(out))
                }
            }
            d.deserialize_map(V)
        }
    }
}

/// A per-tool rule: a glob over tool names and the settings it overrides.
#[derive(Debug, Clone)]
struct Rule {
    pattern: String,
    matcher: GlobMatcher,
    rule: RuleToml,
    project: Option<Projection>,
}

/// The whole policy.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    default: ToolPolicy,
    rules: Vec<Rule>,
    /// A client's token cap and size bounds, applied after every rule.
    client: Option<(Option<usize>, SizeLimits)>,
    /// Every tool's note goes first (a client that keeps the head).
    note_first: bool,
    /// Every tool's embedded resources are measured as their blocks' JSON.
    resources_json: bool,
}

impl Policy {
    /// The built-in policy: defaults plus projections for GitHub's heavy tools.
    pub fn builtin() -> Policy {
        let mut p = Policy::default();
        for (tool, expr) in crate::budget::policy::github::PROJECTIONS {
            let project = Projection::builtin(expr, crate::budget::policy::github::KNOWN)
                .expect("built-in projections are valid");
            p.rules.push(Rule {
                pattern: tool.to_string(),
                matcher: Glob::new(tool)
                    .expect("tool names are valid globs")
                    .compile_matcher(),
                rule: RuleToml::default(),
                project: Some(project),
            });
        }
        p
    }

    /// Add the rules of a `[policy]` table on top of this policy (its rules win).
    pub fn extend_from_toml(&mut self, table: &toml::Value) -> Result<(), PolicyError> {
        let parsed: PolicyToml =
            table
                .clone()
                .try_into()
                .map_err(|e: toml::de::Error| PolicyError {
                    tool: "policy".into(),
                    message: e.to_string().trim().replace('\n', " "),
                })?;
        apply(&mut self.default, &parsed.default, "default")?;
        if let Some(expr) = &parsed.default.project {
            self.default.project = Some(compile(expr, "default")?);
        }
        for (pattern, rule) in parsed.tools.0 {
            let matcher = Glob::new(&pattern)
                .map_err(|e| PolicyError {
                    tool: pattern.clone(),
                    message: format!("bad glob: {e}"),
                })?
                .compile_matcher();
            let project = rule
                .project
                .as_deref()
                .map(|e| compile(e, &pattern))
                .transpose()?;
            // validate the override values now, on a scratch copy
            apply(&mut ToolPolicy::default(), &rule, &pattern)?;
            self.rules.push(Rule {
                pattern,
                matcher,
                rule,
                project,
            });
        }
        Ok(())
    }

    /// Set the default budget (the `--budget` flag); per-tool budgets still apply.
    pub fn set_budget(&mut self, budget: usize) -> Result<(), PolicyError> {
        check_budget(budget, "default")?;
        self.default.budget = budget;
        Ok(())
    }

    /// The arguments the policy supplies on every call of `tool` (`fixed_arguments`); `None`,
    /// without building the tool's whole policy, when no rule supplies any (the call path asks
    /// this of every call).
    pub fn fixed_arguments(
        &self,
        tool: &str,
    ) -> Option<serde_json::Map<String, serde_json::Value>> {
        let any = !self.default.fixed_arguments.is_empty()
            || self.rules.iter().any(|r| r.rule.fixed_arguments.is_some());
        any.then(|| self.for_tool(tool).fixed_arguments)
            .filter(|m| !m.is_empty())
    }

    /// The settings for `tool`: the default, then every matching rule in order, then a
    /// client's limits (which only tighten).
    pub fn for_tool(&self, tool: &str) -> ToolPolicy {
        let mut p = self.default.clone();
        for r in self.rules.iter().filter(|r| r.matcher.is_match(tool)) {
            apply(&mut p, &r.rule, &r.pattern).expect("rules were validated at load");
            if r.project.is_some() {
                p.project = r.project.clone();
            }
        }
        if let Some((tokens, size)) = self.client {
            p.budget = p.budget.min(tokens.unwrap_or(usize::MAX)).max(MIN_BUDGET);
            p.size = p.size.tightened(size);
        }
        p.note_first |= self.note_first;
        p.resources_json |= self.resources_json;
        p
    }

    /// Tighten every tool's limits to a client's (`proxy --client`): a token cap and bounds in
    /// bytes, characters and lines; the tighter of the policy's and the client's wins. Bounds
    /// below the minimums are raised to them (a note must still fit).
    pub fn tighten_to(&mut self, tokens: Option<usize>, size: SizeLimits) {
        let floor = |v: Option<usize>, min: usize| v.map(|v| v.max(min));
        let size = SizeLimits {
            bytes: floor(size.bytes, MIN_SIZE_CHARS),
            chars: floor(size.chars, MIN_SIZE_CHARS),
            lines: floor(size.lines, MIN_SIZE_LINES),
        };
        self.client = Some((tokens, size));
    }

    /// Put every tool's note before its result (a client that keeps only the head).
    pub fn set_note_first(&mut self, first: bool) {
        self.note_first = first;
    }

    /// Measure every tool's embedded resources as their blocks' JSON (a client that sends
    /// them so).
    pub fn set_resources_json(&mut self, json: bool) {
        self.resources_json = json;
    }

    /// The default budget.
    pub fn budget(&self) -> usize {
        self.default.budget
    }
}

fn compile(expr: &str, tool: &str) -> Result<Projection, PolicyError> {
    Projection::compile(expr).map_err(|message| PolicyError {
        tool: tool.into(),
        message,
    })
}

fn check_budget(budget: usize, tool: &str) -> Result<(), PolicyError> {
    if budget < MIN_BUDGET {
        return Err(PolicyError {
            tool: tool.into(),
            message: format!("budget {budget} is below the minimum of {MIN_BUDGET} tokens"),
        });
    }
    Ok(())
}

fn apply(p: &mut ToolPolicy, r: &RuleToml, tool: &str) -> Result<(), PolicyError> {
    let positive = |v: Option<usize>, name: &str| -> Result<Option<usize>, PolicyError> {
        match v {
            Some(0) => Err(PolicyError {
                tool: tool.into(),
                message: format!("`{name}` must be at least 1"),
            }),
            other => Ok(other),
        }
    };
    if let Some(b) = r.budget {
        check_budget(b, tool)?;
        p.budget = b;
    }
    let at_least = |v: Option<usize>, name: &str, min: usize| match v {
        Some(v) if v < min => Err(PolicyError {
            tool: tool.into(),
            message: format!("`{name}` {v} is below the minimum of {min}"),
        }),
        other => Ok(other),
    };
    let size = SizeLimits {
        bytes: at_least(r.budget_bytes, "budget_bytes", MIN_SIZE_CHARS)?,
        chars: at_least(r.budget_chars, "budget_chars", MIN_SIZE_CHARS)?,
        lines: at_least(r.budget_lines, "budget_lines", MIN_SIZE_LINES)?,
    };
    p.size = SizeLimits {
        bytes: size.bytes.or(p.size.bytes),
        chars: size.chars.or(p.size.chars),
        lines: size.lines.or(p.size.lines),
    };
    if let Some(n) = r.note_first {
        p.note_first = n;
    }
    p.max_array_items = positive(r.max_array_items, "max_array_items")?.or(p.max_array_items);
    p.max_string_chars = positive(r.max_string_chars, "max_string_chars")?.or(p.max_string_chars);
    p.max_depth = positive(r.max_depth, "max_depth")?.or(p.max_depth);
    p.url_max_chars = positive(r.url_max_chars, "url_max_chars")?.unwrap_or(p.url_max_chars);
    if let Some(t) = positive(r.preview_tokens, "preview_tokens")? {
        p.preview_tokens = Some(t);
    }
    if let Some(d) = r.drop_duplicate_structured {
        p.drop_duplicate_structured = d;
    }
    if let Some(h) = r.hide {
        p.hide = h;
    }
    if let Some(d) = &r.description {
        p.description = Some(d.clone());
    }
    if let Some(m) = positive(r.max_description_chars, "max_description_chars")? {
        p.max_description_chars = Some(m);
    }
    if let Some(l) = r.lean_schemas {
        p.lean_schemas = l;
    }
    if let Some(t) = r.toon {
        p.toon = t;
    }
    params::apply(
        p,
        r.hide_params.as_deref(),
        r.fixed_arguments.as_ref(),
        tool,
    )?;
    if let Some(m) = r.toon_min_saving {
        if !(0.0..=1.0).contains(&m) {
            return Err(PolicyError {
                tool: tool.into(),
                message: format!("`toon_min_saving` {m} is not a share between 0 and 1"),
            });
        }
        p.toon_min_saving = m;
    }
    if let Some(s) = &r.strip {
        let st = &mut p.strip;
        st.data_uris = s.data_uris.unwrap_or(st.data_uris);
        st.long_urls = s.long_urls.unwrap_or(st.long_urls);
        st.tracking_params = s.tracking_params.unwrap_or(st.tracking_params);
        st.base64_runs = s.base64_runs.unwrap_or(st.base64_runs);
        st.blank_lines = s.blank_lines.unwrap_or(st.blank_lines);
    }
    Ok(())
}

mod file;
mod params;

pub use file::PolicyFileError;

pub(super) mod github;
pub(super) mod size;
#[cfg(test)]
mod tests;
