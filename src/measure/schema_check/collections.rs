//! The checks of arrays and objects: their sizes, items and properties, and what their
//! members must meet.

use regex_automata::meta::Regex;
use serde_json::{Map, Value};

use super::{broken, plural, push, regex, same, shown, Checker};

impl<'s> Checker<'s> {
    pub(super) fn array(
        &mut self,
        s: &'s Map<String, Value>,
        items: &[Value],
        instance: &Value,
        path: &mut String,
        depth: usize,
    ) {
        let n = items.len() as u64;
        if let Some(m) = broken(s, "minItems", n) {
            let message = format!("{} has less than {m} item{}", shown(instance), plural(m));
            self.err(path, message);
        }
        if let Some(m) = broken(s, "maxItems", n) {
            let message = format!("{} has more than {m} item{}", shown(instance), plural(m));
            self.err(path, message);
        }
        if s.get("uniqueItems") == Some(&Value::Bool(true))
            && items
                .iter()
                .enumerate()
                .any(|(i, a)| items[i + 1..].iter().any(|b| same(a, b)))
        {
            self.err(path, format!("{} has non-unique elements", shown(instance)));
        }
        // the leading items: `prefixItems` (2020-12) or `items` as an array (draft 7)
        let (prefix, rest) = match (s.get("prefixItems"), s.get("items")) {
            (Some(Value::Array(p)), rest) => (p.as_slice(), rest),
            (None, Some(Value::Array(p))) => (p.as_slice(), s.get("additionalItems")),
            (_, rest) => (&[][..], rest),
        };
        for (i, item) in items.iter().enumerate() {
            let sub = match prefix.get(i) {
                Some(sub) => sub,
                None => match rest {
                    Some(sub) => sub,
                    None => break,
                },
            };
            let len = push(path, &i.to_string());
            self.node(sub, item, path, depth + 1);
            path.truncate(len);
        }
        if let Some(contains) = s.get("contains") {
            let found = items
                .iter()
                .enumerate()
                .filter(|(i, item)| {
                    let len = push(path, &i.to_string());
                    let ok = self.valid(contains, item, path, depth + 1);
                    path.truncate(len);
                    ok
                })
                .count() as u64;
            let least = s.get("minContains").and_then(Value::as_u64).unwrap_or(1);
            if found < least {
                self.err(
                    path,
                    format!(
                        "None of {} are valid under the given schema",
                        shown(instance)
                    ),
                );
            }
            if let Some(m) = broken(s, "maxContains", found) {
                let message = format!(
                    "{} has more than {m} matching item{}",
                    shown(instance),
                    plural(m)
                );
                self.err(path, message);
            }
        }
    }

    pub(super) fn object(
        &mut self,
        s: &'s Map<String, Value>,
        map: &Map<String, Value>,
        instance: &Value,
        path: &mut String,
        depth: usize,
    ) {
        let n = map.len() as u64;
        if let Some(m) = broken(s, "minProperties", n) {
            let message = format!("{} has less than {m} propert{}", shown(instance), ies(m));
            self.err(path, message);
        }
        if let Some(m) = broken(s, "maxProperties", n) {
            let message = format!("{} has more than {m} propert{}", shown(instance), ies(m));
            self.err(path, message);
        }
        if let Some(Value::Array(required)) = s.get("required") {
            for r in required.iter().filter_map(Value::as_str) {
                if !map.contains_key(r) {
                    self.err(path, format!("\"{r}\" is a required property"));
                }
            }
        }
        let properties = s.get("properties").and_then(Value::as_object);
        let patterns: Vec<(Regex, &'s Value)> = s
            .get("patternProperties")
            .and_then(Value::as_object)
            .map(|p| p.iter().filter_map(|(k, v)| Some((regex(k)?, v))).collect())
            .unwrap_or_default();
        let mut unexpected = Vec::new();
        for (key, value) in map {
            let len = push(path, key);
            let mut matched = false;
            if let Some(sub) = properties.and_then(|p| p.get(key)) {
                matched = true;
                self.node(sub, value, path, depth + 1);
            }
            for (re, sub) in &patterns {
                if re.is_match(key) {
                    matched = true;
                    self.node(sub, value, path, depth + 1);
                }
            }
            if !matched {
                match s.get("additionalProperties") {
                    Some(Value::Bool(false)) => unexpected.push(key.as_str()),
                    Some(sub @ Value::Object(_)) => self.node(sub, value, path, depth + 1),
                    _ => {}
                }
            }
            path.truncate(len);
        }
        if !unexpected.is_empty() {
            let names = unexpected
                .iter()
                .map(|k| format!("'{k}'"))
                .collect::<Vec<_>>()
                .join(", ");
            let verb = if unexpected.len() == 1 { "was" } else { "were" };
            self.err(
                path,
                format!("Additional properties are not allowed ({names} {verb} unexpected)"),
            );
        }
        if let Some(names) = s.get("propertyNames") {
            for key in map.keys() {
                self.node(names, &Value::String(key.clone()), path, depth + 1);
            }
        }
        // a present property's dependencies: names required (draft 2019+ and draft 7's array
        // form) and schemas the whole object must meet
        let mut dependent = |deps: Option<&'s Value>, names_only: Option<bool>| {
            let Some(Value::Object(deps)) = deps else {
                return;
            };
            for (key, dep) in deps.iter().filter(|(k, _)| map.contains_key(*k)) {
                match dep {
                    Value::Array(names) if names_only != Some(false) => {
                        for r in names.iter().filter_map(Value::as_str) {
                            if !map.contains_key(r) {
                                self.err(path, format!("\"{r}\" is a dependency of \"{key}\""));
                            }
                        }
                    }
                    sub @ (Value::Object(_) | Value::Bool(_)) if names_only != Some(true) => {
                        self.node(sub, instance, path, depth + 1)
                    }
                    _ => {}
                }
            }
        };
        dependent(s.get("dependentRequired"), Some(true));
        dependent(s.get("dependentSchemas"), Some(false));
        dependent(s.get("dependencies"), None);
    }
}

/// "propert" + "y" or "ies".
fn ies(n: u64) -> &'static str {
    if n == 1 {
        "y"
    } else {
        "ies"
    }
}
