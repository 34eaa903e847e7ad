//! Tool arguments checked against a tool's input schema (JSON Schema, draft 7 to 2020-12):
//! each error with where it is (a JSON pointer into the arguments) and what is wrong, worded as
//! the `jsonschema` crate words it (a differential test holds the two to the same verdicts on
//! every schema of the corpus). Built in because it is one call (the audit's probes, the lazy
//! proxy's calls) and the crate was 1.3 MiB of the binary.
//!
//! Every assertion keyword is checked: types, `enum`, `const`, the number, string, array and
//! object bounds, `pattern` and `patternProperties` (Rust regexes: a pattern they cannot read
//! asserts nothing), `properties`, `additionalProperties`, `required`, `propertyNames`,
//! `dependentRequired`, `dependentSchemas`, `dependencies`, `items`, `prefixItems`,
//! `additionalItems`, `contains`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, and
//! `$ref` into the schema itself. `format` asserts under drafts 4 to 7 (`$schema` says which)
//! and is an annotation under 2019-09 and later or no `$schema` (as the crate has it by
//! default); `unevaluated*` and references outside the schema assert nothing.

use regex_automata::meta::Regex;
use serde_json::{Map, Value};

use crate::config::percent_decoded;
use formats::format_ok;

mod collections;
mod formats;

/// How deep `$ref`s and subschemas are followed: a schema that refers to itself ends here.
const MAX_DEPTH: usize = 64;

/// One error: where in the instance (a JSON pointer, "" for the whole) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    pub path: String,
    pub message: String,
}

/// Every error of `instance` against `schema`, in the order the schema's keywords find them.
pub fn check(schema: &Value, instance: &Value) -> Vec<SchemaError> {
    let draft = schema
        .get("$schema")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut c = Checker {
        root: schema,
        errors: Vec::new(),
        formats: ["draft-04", "draft-06", "draft-07"]
            .iter()
            .any(|d| draft.contains(d)),
    };
    c.node(schema, instance, &mut String::new(), 0);
    c.errors
}

struct Checker<'s> {
    root: &'s Value,
    errors: Vec<SchemaError>,
    /// `format` asserts (drafts 4 to 7).
    formats: bool,
}

impl<'s> Checker<'s> {
    fn err(&mut self, path: &str, message: String) {
        self.errors.push(SchemaError {
            path: path.to_string(),
            message,
        });
    }

    /// Whether `instance` is valid under `schema`, errors discarded.
    fn valid(
        &mut self,
        schema: &'s Value,
        instance: &Value,
        path: &mut String,
        depth: usize,
    ) -> bool {
        let before = self.errors.len();
        self.node(schema, instance, path, depth);
        let ok = self.errors.len() == before;
        self.errors.truncate(before);
        ok
    }

    fn node(&mut self, schema: &'s Value, instance: &Value, path: &mut String, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let s = match schema {
            Value::Bool(false) => {
                return self.err(
                    path,
                    format!("False schema does not allow {}", shown(instance)),
                )
            }
            Value::Object(s) => s,
            _ => return,
        };
        if let Some(target) = s
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| self.resolve(r))
        {
            self.node(target, instance, path, depth + 1);
        }
        self.generic(s, instance, path, depth);
        match instance {
            Value::Number(_) => self.number(s, instance, path),
            Value::String(text) => self.string(s, text, instance, path),
            Value::Array(items) => self.array(s, items, instance, path, depth),
            Value::Object(map) => self.object(s, map, instance, path, depth),
            _ => {}
        }
    }

    /// A `$ref` into this schema: `#` or a JSON pointer after it.
    fn resolve(&self, reference: &str) -> Option<&'s Value> {
        let pointer = reference.strip_prefix('#')?;
        self.root.pointer(&percent_decoded(pointer)?)
    }

    fn generic(
        &mut self,
        s: &'s Map<String, Value>,
        instance: &Value,
        path: &mut String,
        depth: usize,
    ) {
        if let Some(t) = s.get("type") {
            let names: Vec<&str> = match t {
                Value::String(one) => vec![one.as_str()],
                Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            if !names.is_empty() && !names.iter().any(|n| is_type(instance, n).unwrap_or(true)) {
                let message = match names.as_slice() {
                    [one] => format!("{} is not of type \"{one}\"", shown(instance)),
                    many => format!(
                        "{} is not of types {}",
                        shown(instance),
                        many.iter()
                            .map(|n| format!("\"{n}\""))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                self.err(path, message);
            }
        }
        if let Some(Value::Array(options)) = s.get("enum") {
            if !options.iter().any(|o| same(o, instance)) {
                let listed = Value::Array(options.clone());
                self.err(
                    path,
                    format!("{} is not one of {}", shown(instance), shown(&listed)),
                );
            }
        }
        if let Some(c) = s.get("const") {
            if !same(c, instance) {
                self.err(path, format!("{} was expected", shown(c)));
            }
        }
        if let Some(Value::Array(all)) = s.get("allOf") {
            for sub in all {
                self.node(sub, instance, path, depth + 1);
            }
        }
        if let Some(Value::Array(any)) = s.get("anyOf") {
            if !any
                .iter()
                .any(|sub| self.valid(sub, instance, path, depth + 1))
            {
                self.err(
                    path,
                    format!(
                        "{} is not valid under any of the schemas listed in the 'anyOf' keyword",
                        shown(instance)
                    ),
                );
            }
        }
        if let Some(Value::Array(one)) = s.get("oneOf") {
            let passing = one
                .iter()
                .filter(|sub| self.valid(sub, instance, path, depth + 1))
                .count();
            match passing {
                0 => self.err(path, format!("{} is not valid under any of the schemas listed in the 'oneOf' keyword", shown(instance))),
                1 => {}
                _ => self.err(path, format!("{} is valid under more than one of the schemas listed in the 'oneOf' keyword", shown(instance))),
            }
        }
        if let Some(not) = s.get("not") {
            if self.valid(not, instance, path, depth + 1) {
                self.err(
                    path,
                    format!("{} is not allowed for {}", shown(not), shown(instance)),
                );
            }
        }
        if let Some(cond) = s.get("if") {
            let branch = match self.valid(cond, instance, path, depth + 1) {
                true => s.get("then"),
                false => s.get("else"),
            };
            if let Some(b) = branch {
                self.node(b, instance, path, depth + 1);
            }
        }
    }

    fn number(&mut self, s: &Map<String, Value>, instance: &Value, path: &str) {
        let x = instance.as_f64().unwrap_or(0.0);
        let bound = |k: &str| s.get(k).and_then(Value::as_f64);
        let shown_x = shown(instance);
        if let Some(m) = bound("minimum").filter(|m| x < *m) {
            self.err(
                path,
                format!(
                    "{shown_x} is less than the minimum of {}",
                    num(s, "minimum", m)
                ),
            );
        }
        if let Some(m) = bound("maximum").filter(|m| x > *m) {
            self.err(
                path,
                format!(
                    "{shown_x} is greater than the maximum of {}",
                    num(s, "maximum", m)
                ),
            );
        }
        if let Some(m) = bound("exclusiveMinimum").filter(|m| x <= *m) {
            self.err(
                path,
                format!(
                    "{shown_x} is less than or equal to the minimum of {}",
                    num(s, "exclusiveMinimum", m)
                ),
            );
        }
        if let Some(m) = bound("exclusiveMaximum").filter(|m| x >= *m) {
            self.err(
                path,
                format!(
                    "{shown_x} is greater than or equal to the maximum of {}",
                    num(s, "exclusiveMaximum", m)
                ),
            );
        }
        if let Some(m) = bound("multipleOf").filter(|m| *m > 0.0) {
            let q = x / m;
            if !q.is_finite() || (q - q.round()).abs() > 1e-9 * q.abs().max(1.0) {
                self.err(
                    path,
                    format!("{shown_x} is not a multiple of {}", num(s, "multipleOf", m)),
                );
            }
        }
    }

    fn string(&mut self, s: &Map<String, Value>, text: &str, instance: &Value, path: &str) {
        let chars = text.chars().count() as u64;
        if let Some(m) = broken(s, "minLength", chars) {
            let message = format!(
                "{} is shorter than {m} character{}",
                shown(instance),
                plural(m)
            );
            self.err(path, message);
        }
        if let Some(m) = broken(s, "maxLength", chars) {
            let message = format!(
                "{} is longer than {m} character{}",
                shown(instance),
                plural(m)
            );
            self.err(path, message);
        }
        if let Some(f) = s
            .get("format")
            .and_then(Value::as_str)
            .filter(|_| self.formats)
        {
            if !format_ok(f, text) {
                self.err(path, format!("{} is not a \"{f}\"", shown(instance)));
            }
        }
        if let Some(p) = s.get("pattern").and_then(Value::as_str) {
            if regex(p).is_some_and(|r| !r.is_match(text)) {
                self.err(path, format!("{} does not match \"{p}\"", shown(instance)));
            }
        }
    }
}

/// Appends `/key` (escaped as a JSON pointer) to `path`, returning the length to cut back to.
fn push(path: &mut String, key: &str) -> usize {
    let len = path.len();
    path.push('/');
    path.push_str(&key.replace('~', "~0").replace('/', "~1"));
    len
}

/// Whether `v` is of JSON Schema type `name`; `None` for a name that is none of the seven.
fn is_type(v: &Value, name: &str) -> Option<bool> {
    Some(match name {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => match v {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        _ => return None,
    })
}

/// Whether a schema can be judged by: an object or a boolean whose `type`s are the seven JSON
/// Schema names (a schema that is not, the server judges: as the `jsonschema` crate refused to
/// compile one).
pub fn well_formed(schema: &Value) -> bool {
    let known = |n: &Value| {
        n.as_str()
            .is_some_and(|n| is_type(&Value::Null, n).is_some())
    };
    let type_ok = |t: &Value| match t {
        Value::Array(ns) => ns.iter().all(known),
        one => known(one),
    };
    match schema {
        Value::Bool(_) => true,
        Value::Object(s) => s.get("type").is_none_or(type_ok),
        _ => false,
    }
}

/// The bound `key` (`minLength`, `maxItems`, ...) when `n` breaks it: under a `min*`, over a
/// `max*`.
pub(super) fn broken(s: &Map<String, Value>, key: &str, n: u64) -> Option<u64> {
    let bound = s.get(key).and_then(Value::as_u64)?;
    let broken = match key.starts_with("min") {
        true => n < bound,
        false => n > bound,
    };
    broken.then_some(bound)
}

/// JSON equality with numbers compared by value (1 and 1.0 are the same).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(i), Some(j), _, _) => i == j,
                (_, _, Some(i), Some(j)) => i == j,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// A value as an error shows it: its compact JSON.
fn shown(v: &Value) -> String {
    v.to_string()
}

/// A keyword's number as the schema wrote it (an integer stays one).
fn num(s: &Map<String, Value>, key: &str, f: f64) -> String {
    s.get(key).map_or_else(|| f.to_string(), Value::to_string)
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A pattern as a regex, unanchored as JSON Schema's are; `None` where it cannot be read.
fn regex(pattern: &str) -> Option<Regex> {
    Regex::new(pattern).ok()
}

#[cfg(test)]
mod tests;
