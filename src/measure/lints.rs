//! The definition rules that say what they save: each fix is applied to the real definition and
//! the model view counted again, so `saves_tokens` is a measurement, not an estimate. The rules'
//! texts (`--explain`) are in `assess/findings/rules.rs`; this file finds and measures.

use serde_json::{json, Map, Value};

use super::lean::{apply_transform, each_child_mut, each_schema, factor_repeats, LeanTransform};
use super::{compact_json, model_view};
use crate::facts::SchemaLint;
use crate::text::{preview, shorten};
use crate::tokens::Tokenizer;
use crate::units::thousands;

/// A description longer than this many tokens is flagged (and the suggested cut keeps at most
/// this many).
pub const LONG_DESCRIPTION_TOKENS: usize = 500;

/// Where the rules draw their lines. [`LintLimits::default`] is what `audit` uses (and what
/// `--explain` says); tests lower them to run every rule on real definitions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LintLimits {
    /// A description over this many tokens is long, and its cut keeps at most this many.
    pub description_tokens: usize,
    /// An enum or examples list this large (tokens), and at least this share of the tool,
    /// dwarfs the rest.
    pub list_tokens: usize,
    pub list_share: f64,
    /// An `outputSchema` over this many tokens is heavy on the wire.
    pub output_schema_tokens: usize,
    /// A subschema is worth a `$defs` entry when its compact JSON is at least this long.
    pub shared_bytes: usize,
}

impl Default for LintLimits {
    fn default() -> Self {
        LintLimits {
            description_tokens: LONG_DESCRIPTION_TOKENS,
            list_tokens: 100,
            list_share: 0.5,
            output_schema_tokens: 1_000,
            shared_bytes: 40,
        }
    }
}

/// What the rules found on one tool, and the model tokens after the fixes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolLints {
    pub lints: Vec<SchemaLint>,
    /// Every fix applied together.
    pub fixed_tokens: usize,
    /// The suggested policy applied: the lean schema and the description cut.
    pub suggested_tokens: usize,
    /// `max_description_chars` of the suggested policy, for a long description.
    pub description_cut_chars: Option<usize>,
}

/// A definition's model view in tokens (what the model is sent of it per turn).
pub(super) fn view_tokens(tool: &Map<String, Value>, tok: Tokenizer) -> usize {
    tok.count(&compact_json(&model_view(tool)))
}

fn with_schema(tool: &Map<String, Value>, f: impl FnOnce(&mut Value)) -> Map<String, Value> {
    let mut t = tool.clone();
    if let Some(s) = t.get_mut("inputSchema") {
        f(s);
    }
    t
}

fn lint(rule: &str, saves: usize, wire: usize, message: String) -> SchemaLint {
    SchemaLint {
        rule: rule.into(),
        saves_tokens: saves,
        saves_wire_tokens: wire,
        message,
    }
}

/// What `measure_tool` has already counted of a tool (so the rules do not count it again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    /// The model view.
    pub model: usize,
    pub description: usize,
    pub output_schema: usize,
}

impl Counted {
    /// Count them (for a caller that has not).
    pub fn of(tool: &Map<String, Value>, tok: Tokenizer) -> Counted {
        let count = |key: &str| match tool.get(key) {
            None | Some(Value::Null) => 0,
            Some(Value::String(s)) => tok.count(s),
            Some(other) => tok.count(&compact_json(other)),
        };
        Counted {
            model: view_tokens(tool, tok),
            description: count("description"),
            output_schema: count("outputSchema"),
        }
    }
}

/// Run every definition rule on one tool definition, at the audit's limits.
pub fn lint_tool(tool: &Map<String, Value>, tok: Tokenizer, counted: Counted) -> ToolLints {
    lint_counted(tool, tok, &LintLimits::default(), counted)
}

/// Run every definition rule on one tool definition.
pub fn lint_tool_with(tool: &Map<String, Value>, tok: Tokenizer, limits: &LintLimits) -> ToolLints {
    lint_counted(tool, tok, limits, Counted::of(tool, tok))
}

/// The rules, given what is already counted. Only what a fix changes is counted again: a tool
/// no rule fires on costs no count at all.
fn lint_counted(
    tool: &Map<String, Value>,
    tok: Tokenizer,
    limits: &LintLimits,
    counted: Counted,
) -> ToolLints {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
    let base = counted.model;
    let mut out = ToolLints::default();
    let mut fixed = tool.clone();
    // what the fixed (every fix) and suggested (lean and cut) definitions have had done, so
    // that each is counted only when no count already made says what it costs
    let mut lean_steps = 0;
    let mut one_step_tokens = base;
    let (mut fixed_only, mut described) = (false, false);

    for (t, rule) in [
        (LeanTransform::MetaKeys, "schema-meta-keys"),
        (LeanTransform::RepeatedTitles, "title-repeats-name"),
        (LeanTransform::NullDefaults, "null-default"),
    ] {
        let mut removed = 0;
        let alone = with_schema(tool, |s| removed = apply_transform(s, name, t));
        if removed == 0 {
            continue;
        }
        if let Some(s) = fixed.get_mut("inputSchema") {
            apply_transform(s, name, t);
        }
        let alone_tokens = view_tokens(&alone, tok);
        lean_steps += 1;
        one_step_tokens = alone_tokens;
        let saves = base.saturating_sub(alone_tokens);
        let what = match t {
            LeanTransform::MetaKeys => format!("{removed} `$schema`/`$comment` key(s)"),
            LeanTransform::RepeatedTitles => format!("{removed} title(s) that repeat a name"),
            LeanTransform::NullDefaults => format!("{removed} `default: null`"),
        };
        out.lints.push(lint(
            rule,
            saves,
            0,
            format!(
                "{what}: removing them saves {} tokens per turn",
                thousands(saves)
            ),
        ));
    }
    let lean = fixed.clone();

    let mut shared = Vec::new();
    let factored = with_schema(tool, |s| shared = factor_repeats(s, limits.shared_bytes));
    let saves = if shared.is_empty() {
        0
    } else {
        base.saturating_sub(view_tokens(&factored, tok))
    };
    if saves > 0 {
        if let Some(s) = fixed.get_mut("inputSchema") {
            factor_repeats(s, limits.shared_bytes);
        }
        fixed_only = true;
        let copies: usize = shared.iter().map(|(_, n)| n).sum();
        let names: Vec<String> = shared
            .iter()
            .take(3)
            .map(|(d, _)| format!("`{d}`"))
            .collect();
        out.lints.push(lint(
            "repeated-subtree",
            saves,
            0,
            format!(
                "{copies} copies of {} repeated subschema(s) ({}{}) could be `$defs` entries: saves {} tokens per turn",
                shared.len(),
                names.join(", "),
                if shared.len() > 3 { ", ..." } else { "" },
                thousands(saves)
            ),
        ));
    }

    if let Some((l, dropped)) = dwarfing_list(tool, base, tok, limits, &mut fixed) {
        fixed_only |= dropped;
        out.lints.push(l);
    }

    let mut suggested = lean;
    let long = counted.description > limits.description_tokens;
    if let Some(d) = tool
        .get("description")
        .and_then(Value::as_str)
        .filter(|_| long)
    {
        if let Some((chars, cut)) = description_cut(d, limits.description_tokens, tok) {
            described = true;
            let short = json!(cut);
            let mut cut_tool = tool.clone();
            cut_tool.insert("description".into(), short.clone());
            fixed.insert("description".into(), short.clone());
            suggested.insert("description".into(), short);
            let saves = base.saturating_sub(view_tokens(&cut_tool, tok));
            let last = cut
                .rsplit_terminator(['.', '!', '?'])
                .next()
                .unwrap_or(&cut);
            out.lints.push(lint(
                "long-description",
                saves,
                0,
                format!(
                    "description is {} tokens (over {}); cut after \"{}\" (max_description_chars = {chars}) it saves {} tokens per turn",
                    thousands(counted.description),
                    thousands(limits.description_tokens),
                    preview(last.trim(), 60),
                    thousands(saves)
                ),
            ));
            out.description_cut_chars = Some(chars);
        }
    }

    if tool.contains_key("outputSchema") {
        let tokens = counted.output_schema;
        if tokens > limits.output_schema_tokens {
            let mut without = tool.clone();
            without.shift_remove("outputSchema");
            let wire = tok
                .count(&compact_json(&Value::Object(tool.clone())))
                .saturating_sub(tok.count(&compact_json(&Value::Object(without))));
            out.lints.push(lint(
                "heavy-output-schema",
                0,
                wire,
                format!(
                    "outputSchema is {} tokens: {} on the wire per tools/list, not in the model's context",
                    thousands(tokens),
                    thousands(wire)
                ),
            ));
        }
    }
    // the suggested definition is the fixed one unless a fix only `fixed` has was made, and one
    // lean transform alone was counted when it was made
    let suggested_tokens = match (lean_steps, described) {
        (0, false) => base,
        (1, false) => one_step_tokens,
        _ => view_tokens(&suggested, tok),
    };
    out.fixed_tokens = if fixed_only {
        view_tokens(&fixed, tok)
    } else {
        suggested_tokens
    }
    .min(base);
    out.suggested_tokens = suggested_tokens.min(base);
    out
}

/// An `enum` or `examples` list that is at least half the tool: the saving of dropping it (for
/// an enum, the most a shorter one could save), and whether `fixed` dropped it (examples only:
/// an enum decides validity).
fn dwarfing_list(
    tool: &Map<String, Value>,
    base: usize,
    tok: Tokenizer,
    limits: &LintLimits,
    fixed: &mut Map<String, Value>,
) -> Option<(SchemaLint, bool)> {
    let schema = tool.get("inputSchema")?;
    let mut biggest: Option<(usize, &'static str, Value, String)> = None;
    each_schema(schema, &mut |m, prop| {
        for key in ["enum", "examples"] {
            let Some(list @ Value::Array(items)) = m.get(key) else {
                continue;
            };
            let text = compact_json(list);
            // a token is at least a byte: a shorter list cannot reach the limit
            if text.len() < limits.list_tokens {
                continue;
            }
            let tokens = tok.count(&text);
            if biggest.as_ref().is_none_or(|(t, ..)| tokens > *t) {
                let what = format!(
                    "{} of {} values{}",
                    if key == "enum" { "an enum" } else { "examples" },
                    items.len(),
                    prop.map(|p| format!(" (`{p}`)")).unwrap_or_default()
                );
                biggest = Some((tokens, key, list.clone(), what));
            }
        }
    });
    let (tokens, key, list, what) = biggest?;
    if tokens < limits.list_tokens || (tokens as f64) < limits.list_share * base as f64 {
        return None;
    }
    let drop = |s: &mut Value| {
        let mut done = false;
        drop_list(s, key, &list, &mut done);
    };
    let without = with_schema(tool, drop);
    let examples = key == "examples";
    if examples {
        if let Some(s) = fixed.get_mut("inputSchema") {
            drop(s);
        }
    }
    let saves = base.saturating_sub(view_tokens(&without, tok));
    let lint = lint(
        "list-dwarfs-tool",
        saves,
        0,
        format!(
            "{what} is {} of the tool's {} tokens; {} saves {} tokens per turn",
            thousands(tokens),
            thousands(base),
            if examples {
                "dropping the examples"
            } else {
                "a free-text parameter with the values described in a line"
            },
            thousands(saves)
        ),
    );
    Some((lint, examples))
}

/// Remove the first `key` list equal to `list` in a schema position.
fn drop_list(s: &mut Value, key: &str, list: &Value, done: &mut bool) {
    let Value::Object(m) = s else { return };
    if !*done && m.get(key) == Some(list) {
        m.shift_remove(key);
        *done = true;
        return;
    }
    each_child_mut(m, &mut |sub, _| drop_list(sub, key, list, done));
}

/// Where a long description would be cut: the last sentence end (else word end) whose prefix
/// is at most `max_tokens`, as `(max_description_chars, the cut text)`, checked to be what the
/// proxy's `shorten` gives for that setting. `None` when the description is not over the limit.
pub fn description_cut(d: &str, max_tokens: usize, tok: Tokenizer) -> Option<(usize, String)> {
    if tok.count(d) <= max_tokens {
        return None;
    }
    let sentence_ends: Vec<usize> = d
        .match_indices(['.', '!', '?'])
        .map(|(i, _)| i + 1)
        .filter(|&e| d[e..].starts_with([' ', '\n']))
        .collect();
    let fits = |e: &usize| tok.count(&d[..*e]) <= max_tokens;
    // the prefix count grows with the prefix: the last end that fits, by bisection
    let last_fit = |ends: &[usize]| -> Option<usize> {
        let n = ends.partition_point(fits);
        n.checked_sub(1).map(|i| ends[i])
    };
    let end = last_fit(&sentence_ends).or_else(|| {
        let word_ends: Vec<usize> = d.match_indices(' ').map(|(i, _)| i).collect();
        last_fit(&word_ends)
    })?;
    for extra in [2, 1] {
        let chars = d[..end].chars().count() + extra;
        let cut = shorten(d, chars);
        if tok.count(&cut) <= max_tokens + 1 && cut.trim_end_matches('…').len() <= end {
            return Some((chars, cut));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn repeated_subschemas_become_defs_and_say_what_they_save() {
        let address = json!({"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}, "zip": {"type": "string"}}, "required": ["street", "city"]});
        let t = tool(
            json!({"name": "ship", "description": "Ship a parcel.", "inputSchema": {
                "type": "object",
                "properties": {"from": address, "to": address, "billing": address}
            }}),
        );
        let l = lint_tool_with(&t, Tokenizer::Cl100k, &LintLimits::default());
        let rep = l
            .lints
            .iter()
            .find(|l| l.rule == "repeated-subtree")
            .unwrap();
        let mut s = t["inputSchema"].clone();
        let made = factor_repeats(&mut s, 40);
        assert_eq!(made, vec![("from".to_string(), 3)]);
        assert_eq!(s["properties"]["to"], json!({"$ref": "#/$defs/from"}));
        assert_eq!(s["$defs"]["from"], address);
        let mut fixed = t.clone();
        fixed.insert("inputSchema".into(), s);
        assert_eq!(
            rep.saves_tokens,
            view_tokens(&t, Tokenizer::Cl100k) - view_tokens(&fixed, Tokenizer::Cl100k)
        );
        assert!(rep.saves_tokens > 20, "{rep:?}");
    }

    #[test]
    fn a_long_description_is_cut_at_a_sentence_that_fits() {
        let sentence = "This tool reads a file from the workspace and returns its text. ";
        let d = sentence.repeat(60);
        let (chars, cut) = description_cut(&d, 500, Tokenizer::Cl100k).unwrap();
        assert!(cut.ends_with("its text."), "{cut}");
        assert!(Tokenizer::Cl100k.count(&cut) <= 500);
        assert!(Tokenizer::Cl100k.count(&format!("{cut} {}", sentence.trim())) > 500);
        assert_eq!(shorten(&d, chars), cut);
        assert!(description_cut(sentence, 500, Tokenizer::Cl100k).is_none());
    }
}
