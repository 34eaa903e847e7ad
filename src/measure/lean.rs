//! Lean schemas: what a model does not need taken out of a tool's input schema, without
//! changing what the schema accepts. Each transform removes only annotations (keywords that
//! never decide validity), and only where JSON Schema says they are keywords: a property named
//! `title` is a property, not a title. `$schema` goes only where the schema means the same under
//! the dialect MCP assumes without one (2020-12).

use serde_json::{json, Map, Value};

use super::compact_json;

/// A visitor of schema objects, told the property name when the schema is a `properties` entry.
pub type SchemaVisitor<'a> = dyn FnMut(&mut Map<String, Value>, Option<&str>) + 'a;
/// The same, read-only.
pub type SchemaReader<'a> = dyn FnMut(&Map<String, Value>, Option<&str>) + 'a;

/// One lossless transform of [`lean_schema`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LeanTransform {
    /// `$schema` and `$comment`: for validators and maintainers, not for models.
    MetaKeys,
    /// A `title` that says the property's (or the tool's) name again.
    RepeatedTitles,
    /// `default: null`: an optional property says no more with it.
    NullDefaults,
}

impl LeanTransform {
    pub const ALL: [LeanTransform; 3] = [
        LeanTransform::MetaKeys,
        LeanTransform::RepeatedTitles,
        LeanTransform::NullDefaults,
    ];

    /// The words the start-up line and the findings use.
    pub fn label(self) -> &'static str {
        match self {
            LeanTransform::MetaKeys => "$schema/$comment",
            LeanTransform::RepeatedTitles => "titles repeating names",
            LeanTransform::NullDefaults => "null defaults",
        }
    }
}

/// Keywords whose value is a map of name -> schema.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords whose value is one schema.
const SCHEMA_ONE: &[&str] = &[
    "additionalProperties",
    "additionalItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];
/// Keywords whose value is a list of schemas (`items` may be either).
const SCHEMA_LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];

/// Visit every schema object inside `schema`, itself first, with the name of the property it
/// describes when it is a `properties` entry. `enum`, `const`, `default` and `examples` are
/// data and are not entered.
pub fn each_schema_mut(schema: &mut Value, f: &mut SchemaVisitor) {
    walk_mut(schema, None, f);
}

fn walk_mut(schema: &mut Value, name: Option<&str>, f: &mut SchemaVisitor) {
    let Value::Object(map) = schema else { return };
    f(map, name);
    each_child_mut(map, &mut |sub, named| walk_mut(sub, named, f));
}

/// Call `f` on every direct subschema of the schema object `map`, with the property name when
/// it is a `properties` entry.
pub fn each_child_mut(map: &mut Map<String, Value>, f: &mut dyn FnMut(&mut Value, Option<&str>)) {
    for (key, value) in map.iter_mut() {
        let key = key.as_str();
        if SCHEMA_MAPS.contains(&key) || key == "dependencies" {
            if let Value::Object(entries) = value {
                for (prop, sub) in entries.iter_mut() {
                    let named = (key == "properties").then_some(prop.as_str());
                    if sub.is_object() {
                        f(sub, named);
                    }
                }
            }
        } else if SCHEMA_ONE.contains(&key) {
            if value.is_object() {
                f(value, None);
            }
        } else if SCHEMA_LISTS.contains(&key) {
            match value {
                Value::Array(list) => list
                    .iter_mut()
                    .filter(|s| s.is_object())
                    .for_each(|s| f(s, None)),
                other if other.is_object() => f(other, None),
                _ => {}
            }
        }
    }
}

/// The same visit, read-only.
pub fn each_schema(schema: &Value, f: &mut SchemaReader) {
    let mut copy = schema.clone();
    each_schema_mut(&mut copy, &mut |m, n| f(m, n));
}

/// Names compared the way a reader would: case, `_`, `-` and spaces ignored.
fn same_name(a: &str, b: &str) -> bool {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| !matches!(c, '_' | '-' | ' ' | '.'))
            .flat_map(char::to_lowercase)
            .collect()
    };
    !a.is_empty() && norm(a) == norm(b)
}

/// Whether removing `$schema` keeps the meaning: the schema uses nothing whose meaning differs
/// between the drafts 4-7 and 2020-12 (array-form `items`, `additionalItems`, `dependencies`,
/// boolean `exclusiveMinimum`/`exclusiveMaximum`, `$recursiveRef`, `$ref` with sibling keywords
/// that older drafts ignore), and the dialect it names is a JSON Schema draft.
fn schema_key_removable(schema: &Value) -> bool {
    let Some(dialect) = schema.get("$schema").and_then(Value::as_str) else {
        return false;
    };
    if !dialect.contains("json-schema.org/") {
        return false;
    }
    let mut safe = true;
    each_schema(schema, &mut |m, _| {
        let array_items = m.get("items").is_some_and(Value::is_array);
        let bool_exclusive = ["exclusiveMinimum", "exclusiveMaximum"]
            .iter()
            .any(|k| m.get(*k).is_some_and(Value::is_boolean));
        let old = [
            "additionalItems",
            "dependencies",
            "$recursiveRef",
            "$recursiveAnchor",
        ]
        .iter()
        .any(|k| m.contains_key(*k));
        let ref_siblings = m.contains_key("$ref")
            && m.keys().any(|k| {
                !matches!(
                    k.as_str(),
                    "$ref" | "description" | "title" | "$comment" | "default" | "examples"
                )
            });
        if array_items || bool_exclusive || old || ref_siblings {
            safe = false;
        }
    });
    safe
}

/// Apply one transform to a tool's input schema (`tool` is the tool's name, for a root title).
/// Returns how many keywords it removed.
pub fn apply_transform(schema: &mut Value, tool: &str, t: LeanTransform) -> usize {
    let mut removed = 0;
    match t {
        LeanTransform::MetaKeys => {
            if schema_key_removable(schema) {
                if let Some(m) = schema.as_object_mut() {
                    removed += usize::from(m.shift_remove("$schema").is_some());
                }
            }
            each_schema_mut(schema, &mut |m, _| {
                removed += usize::from(m.shift_remove("$comment").is_some());
            });
        }
        LeanTransform::RepeatedTitles => {
            let mut root = true;
            each_schema_mut(schema, &mut |m, name| {
                let name = if root { Some(tool) } else { name };
                root = false;
                let repeats = matches!((m.get("title"), name),
                    (Some(Value::String(title)), Some(name)) if same_name(title, name));
                if repeats {
                    m.shift_remove("title");
                    removed += 1;
                }
            });
        }
        LeanTransform::NullDefaults => each_schema_mut(schema, &mut |m, _| {
            if m.get("default") == Some(&Value::Null) {
                m.shift_remove("default");
                removed += 1;
            }
        }),
    }
    removed
}

/// A tool definition with its input schema lean: every transform applied, and how many keywords
/// each removed (only those that removed any).
pub fn lean_tool(tool: &Value) -> (Value, Vec<(LeanTransform, usize)>) {
    let mut out = tool.clone();
    let name = tool["name"].as_str().unwrap_or("").to_string();
    let mut done = Vec::new();
    if let Some(schema) = out.get_mut("inputSchema") {
        for t in LeanTransform::ALL {
            let n = apply_transform(schema, &name, t);
            if n > 0 {
                done.push((t, n));
            }
        }
    }
    (out, done)
}

/// Replace subschemas that occur more than once with `$ref`s to new `$defs` entries, largest
/// saving first. Returns the entries made and how many copies each replaced. Subschemas with a
/// `$ref`, `$id` or anchor inside stay (moving them could change what they refer to).
pub fn factor_repeats(schema: &mut Value, min_bytes: usize) -> Vec<(String, usize)> {
    let mut made = Vec::new();
    for _ in 0..32 {
        let mut seen = Seen::default();
        if let Value::Object(root) = schema {
            each_child_mut(root, &mut |sub, name| collect(sub, name, &mut seen));
        }
        let seen = seen.order;
        let best = seen
            .into_iter()
            .filter(|(text, n, _)| {
                *n > 1
                    && text.len() >= min_bytes
                    && !["\"$ref\"", "\"$id\"", "\"$anchor\"", "\"$dynamic"]
                        .iter()
                        .any(|k| text.contains(k))
            })
            .max_by_key(|(text, n, _)| (n - 1) * text.len());
        let Some((text, n, name)) = best else { break };
        let Ok(target) = serde_json::from_str::<Value>(&text) else {
            break;
        };
        let Value::Object(root) = schema else { break };
        let defs = root.entry("$defs").or_insert_with(|| json!({}));
        let Value::Object(defs) = defs else { break };
        let base = name.unwrap_or_else(|| "shared".into());
        let mut key = base.clone();
        let mut i = 2;
        while defs.contains_key(&key) {
            key = format!("{base}{i}");
            i += 1;
        }
        let reference =
            json!({"$ref": format!("#/$defs/{}", key.replace('~', "~0").replace('/', "~1"))});
        each_child_mut(root, &mut |sub, _| replace(sub, &target, &reference));
        if let Some(Value::Object(defs)) = root.get_mut("$defs") {
            defs.insert(key.clone(), target);
        }
        made.push((key, n));
    }
    made
}

/// Every subschema's compact text, in the order first met, with its count and the property it
/// first described.
#[derive(Default)]
struct Seen {
    order: Vec<(String, usize, Option<String>)>,
    index: std::collections::HashMap<String, usize>,
}

fn collect(v: &mut Value, name: Option<&str>, seen: &mut Seen) {
    let text = compact_json(v);
    match seen.index.get(&text) {
        Some(&i) => seen.order[i].1 += 1,
        None => {
            seen.index.insert(text.clone(), seen.order.len());
            seen.order.push((text, 1, name.map(String::from)));
        }
    }
    if let Value::Object(m) = v {
        each_child_mut(m, &mut |sub, n| collect(sub, n, seen));
    }
}

fn replace(v: &mut Value, target: &Value, with: &Value) {
    if v == target {
        *v = with.clone();
        return;
    }
    if let Value::Object(m) = v {
        each_child_mut(m, &mut |sub, _| replace(sub, target, with));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_keywords_in_schema_places_are_removed() {
        let tool = json!({"name": "create_issue", "inputSchema": {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "title": "Create Issue",
            "type": "object",
            "properties": {
                "title": {"type": "string", "title": "Title"},
                "owner": {"type": "string", "title": "The repository owner", "default": null},
                "labels": {"type": "array", "items": {"type": "string", "title": "labels"}},
                "default": {"type": "string", "$comment": "kept as a property"}
            },
            "required": ["title"],
            "default": {"title": "kept: data, not a schema", "x": null}
        }});
        let (lean, done) = lean_tool(&tool);
        let s = &lean["inputSchema"];
        assert!(s.get("$schema").is_none());
        assert!(
            s.get("title").is_none(),
            "the root title repeats the tool name"
        );
        assert!(
            s["properties"].get("title").is_some(),
            "a property named title stays"
        );
        assert!(s["properties"]["title"].get("title").is_none());
        assert_eq!(s["properties"]["owner"]["title"], "The repository owner");
        assert!(s["properties"]["owner"].get("default").is_none());
        assert!(s["properties"]["default"].get("$comment").is_none());
        // an items schema names no property: its title stays
        assert_eq!(s["properties"]["labels"]["items"]["title"], "labels");
        assert_eq!(s["default"]["title"], "kept: data, not a schema");
        assert_eq!(s["default"]["x"], Value::Null);
        assert_eq!(
            done,
            vec![
                (LeanTransform::MetaKeys, 2),
                (LeanTransform::RepeatedTitles, 2),
                (LeanTransform::NullDefaults, 1)
            ]
        );
    }

    #[test]
    fn schema_stays_where_the_draft_changes_the_meaning() {
        for schema in [
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "array", "items": [{"type": "string"}]}),
            json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "number", "minimum": 0, "exclusiveMinimum": true}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"a": {"type": "string"}}, "properties": {"x": {"$ref": "#/definitions/a", "maxLength": 3}}}),
            json!({"$schema": "https://example.com/my-dialect"}),
        ] {
            let mut s = schema.clone();
            apply_transform(&mut s, "t", LeanTransform::MetaKeys);
            assert_eq!(s, schema);
        }
    }
}
