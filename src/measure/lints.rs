//! The definition rules that say what they save: each fix is applied to the real definition and
//! the model view counted again, so `saves_tokens` is a measurement, not an estimate. The rules'
//! texts (`--explain`) are in `assess/findings/rules.rs`; this file finds and measures.

use serde_json::{json, Map, Value};

use super::description_cut::{description_cut, last_sentence};
use super::lean::{apply_transform, each_child_mut, each_schema, factor_repeats, LeanTransform};
use super::{compact_json, model_view};
use crate::ground::text::preview;
use crate::ground::tokens::Tokenizer;
use crate::ground::units::thousands;
use crate::measure::facts::SchemaLint;

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
            fixed.insert("description".into(), short.clone());
            suggested.insert("description".into(), short);
            // counted on the description's text, as its length is: the escapes of the JSON
            // it travels in (a quote, a line break) are not the description's
            let saves = counted.description.saturating_sub(tok.count(&cut));
            let last = last_sentence(&cut);
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
    out.lints
        .extend(super::list_limit::list_without_limit(tool));
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

#[cfg(test)]
mod tests {
    use super::super::code_spans::{code_spans, inside};
    use super::*;
    use crate::ground::text::shorten;

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

    /// A description with a JSON example of a call: prose, the example across the 500-token
    /// line, and more prose.
    fn with_example() -> String {
        let mut d = String::from("Extract structured data from one or more web pages with a language model. Give the pages' URLs, a prompt that says what to extract, and a JSON Schema for the result. ");
        for i in 1..16 {
            d += &format!("Rule {i}: keep the prompt short and name each field the schema asks for, so the model extracts it from the page. ");
        }
        d += "\n**Usage example:**\n```json\n{\n  \"name\": \"extract\",\n  \"arguments\": {\n    \"urls\": [\"https://example.com/page1\", \"https://example.com/page2\"],\n    \"prompt\": \"Extract the product name, price and description. Skip ads.\",\n    \"schema\": { ... },\n    \"options\": { ... }\n  }\n}\n```\n";
        for i in 1..12 {
            d += &format!("Note {i}: the result is the JSON the schema describes, one object per page, in the order of the URLs. ");
        }
        d
    }

    /// Issue 37: the cut landed on `{ ...` inside the example ("cut after \"\""), and the
    /// saving was counted on the escaped JSON the description travels in, more than the
    /// description itself loses.
    #[test]
    fn a_cut_stays_out_of_examples_and_saves_what_the_text_loses() {
        let tok = Tokenizer::Cl100k;
        let d = with_example();
        let (chars, cut) = description_cut(&d, 500, tok).unwrap();
        assert!(cut.ends_with("Rule 15: keep the prompt short and name each field the schema asks for, so the model extracts it from the page."), "{cut}");
        assert!(!inside(&code_spans(&d), cut.len() - 1));
        assert_eq!(shorten(&d, chars), cut);
        let t =
            tool(json!({"name": "extract", "description": d, "inputSchema": {"type": "object"}}));
        let l = lint_tool_with(&t, tok, &LintLimits::default());
        let long = l
            .lints
            .iter()
            .find(|l| l.rule == "long-description")
            .unwrap();
        assert_eq!(long.saves_tokens, tok.count(&d) - tok.count(&cut));
        assert!(
            long.message
                .contains("cut after \"Rule 15: keep the prompt short"),
            "{}",
            long.message
        );
        // what the JSON escapes add is not the description's: the view saves more
        let mut cut_tool = t.clone();
        cut_tool.insert("description".into(), json!(cut));
        assert!(view_tokens(&t, tok) - view_tokens(&cut_tool, tok) > long.saves_tokens);
    }
}
