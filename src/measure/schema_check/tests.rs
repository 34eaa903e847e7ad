//! The checker against the `jsonschema` crate it replaced (a dev-dependency now): the same
//! verdict and the same places of error on arguments made from a seed for every input schema
//! of the corpus's real tool lists, and on schemas that use every keyword.

use serde_json::{json, Map, Value};

use super::check;

/// Arguments made per schema.
const PER_SCHEMA: usize = 60;

/// A small deterministic generator (xorshift), so a failure names its seed.
struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A value for `schema`: mostly the shape it asks for (so the deep keywords are reached), now
/// and then a wrong type, a missing or extra property, a number or a length past a bound.
fn make(schema: &Value, root: &Value, r: &mut Seeded, depth: usize) -> Value {
    let s = match schema {
        Value::Object(s) => s,
        _ => return any(r, depth),
    };
    if depth > 6 || r.chance(8) {
        return any(r, depth);
    }
    if let Some(target) = s
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|x| x.strip_prefix('#'))
        .and_then(|p| root.pointer(p))
    {
        return make(target, root, r, depth + 1);
    }
    if let Some(Value::Array(options)) = s.get("enum") {
        if !options.is_empty() && r.chance(85) {
            return options[r.below(options.len() as u64) as usize].clone();
        }
    }
    if let Some(c) = s.get("const") {
        if r.chance(80) {
            return c.clone();
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(subs)) = s.get(key) {
            if !subs.is_empty() && r.chance(70) {
                return make(
                    &subs[r.below(subs.len() as u64) as usize],
                    root,
                    r,
                    depth + 1,
                );
            }
        }
    }
    let t = match s.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) if !ts.is_empty() => ts[r.below(ts.len() as u64) as usize]
            .as_str()
            .unwrap_or("string")
            .to_string(),
        _ if s.contains_key("properties") => "object".into(),
        _ => return any(r, depth),
    };
    let num = |k: &str| s.get(k).and_then(Value::as_f64);
    match t.as_str() {
        "object" => {
            let mut m = Map::new();
            let required: Vec<&str> = s
                .get("required")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                for (k, sub) in props {
                    let needed = required.contains(&k.as_str());
                    if (needed && !r.chance(10)) || (!needed && r.chance(50)) {
                        m.insert(k.clone(), make(sub, root, r, depth + 1));
                    }
                }
            }
            if r.chance(12) {
                m.insert(format!("extra_{}", r.below(3)), any(r, depth + 1));
            }
            Value::Object(m)
        }
        "array" => {
            let n = match (num("minItems"), num("maxItems")) {
                (_, Some(max)) if r.chance(70) => r.below(max as u64 + 2),
                (Some(min), _) => min as u64 + r.below(3),
                _ => r.below(4),
            };
            let items = s.get("items").cloned().unwrap_or(Value::Bool(true));
            Value::Array(
                (0..n)
                    .map(|i| match items.get(i as usize) {
                        Some(sub) if items.is_array() => make(sub, root, r, depth + 1),
                        _ => make(&items, root, r, depth + 1),
                    })
                    .collect(),
            )
        }
        "string" => {
            let len = match (num("minLength"), num("maxLength")) {
                (_, Some(max)) if r.chance(70) => r.below(max as u64 + 3),
                (Some(min), _) => (min as u64).saturating_sub(1) + r.below(4),
                _ => r.below(12),
            };
            let alphabet = ["a", "Z", "7", "-", "é", " ", "/", "的", ":", "%"];
            Value::String(
                (0..len)
                    .map(|_| alphabet[r.below(alphabet.len() as u64) as usize])
                    .collect(),
            )
        }
        "integer" | "number" => {
            let lo = num("minimum").or(num("exclusiveMinimum")).unwrap_or(-50.0);
            let hi = num("maximum")
                .or(num("exclusiveMaximum"))
                .unwrap_or(lo + 100.0);
            let span = (hi - lo).abs().min(1e6) as u64 + 3;
            let base = lo as i64 - 1 + r.below(span) as i64;
            match t.as_str() {
                "number" if r.chance(40) => json!(base as f64 + 0.5),
                _ if r.chance(5) => json!(base as f64),
                _ => json!(base),
            }
        }
        "boolean" => json!(r.chance(50)),
        "null" => Value::Null,
        _ => any(r, depth),
    }
}

/// Any JSON value.
fn any(r: &mut Seeded, depth: usize) -> Value {
    match r.below(if depth > 4 { 5 } else { 7 }) {
        0 => Value::Null,
        1 => json!(r.chance(50)),
        2 => json!(r.below(200) as i64 - 100),
        3 => json!(r.below(1000) as f64 / 8.0),
        4 => json!(["x", "yy", ""][r.below(3) as usize]),
        5 => Value::Array((0..r.below(3)).map(|_| any(r, depth + 1)).collect()),
        _ => {
            let mut m = Map::new();
            for i in 0..r.below(3) {
                m.insert(format!("k{i}"), any(r, depth + 1));
            }
            Value::Object(m)
        }
    }
}

/// Every `inputSchema` in the corpus's tool lists (JSON, JSON lines and snapshot files).
fn corpus_schemas() -> Vec<Value> {
    fn walk(dir: &std::path::Path, out: &mut Vec<Value>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&p) else {
                continue;
            };
            let docs: Vec<Value> = match serde_json::from_str(&text) {
                Ok(v) => vec![v],
                Err(_) => text
                    .lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect(),
            };
            for d in &docs {
                find(d, out);
            }
        }
    }
    fn find(v: &Value, out: &mut Vec<Value>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    if k == "inputSchema" {
                        out.push(x.clone());
                    } else {
                        find(x, out);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| find(x, out)),
            _ => {}
        }
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/toolslists");
    let mut out = Vec::new();
    walk(&dir, &mut out);
    out
}

/// Schemas that use every keyword the checker reads.
fn keyword_schemas() -> Vec<Value> {
    vec![
        json!({"type": "object", "properties": {
            "n": {"type": "integer", "minimum": 1, "maximum": 10},
            "x": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 5, "multipleOf": 0.5},
            "s": {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[a-z]+$"},
            "e": {"enum": ["a", "b", 3]},
            "c": {"const": "fixed"},
            "t": {"type": ["string", "null"]},
            "u": {"type": "array", "items": {"type": "integer"}, "uniqueItems": true, "minItems": 1, "maxItems": 3},
            "p": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "boolean"}], "items": false},
            "d7": {"type": "array", "items": [{"type": "string"}], "additionalItems": {"type": "integer"}},
            "has": {"type": "array", "contains": {"type": "string"}, "maxContains": 1},
            "o": {"type": "object", "minProperties": 1, "maxProperties": 2,
                  "propertyNames": {"pattern": "^k"}, "additionalProperties": {"type": "integer"}},
            "pp": {"type": "object", "patternProperties": {"^x_": {"type": "string"}},
                   "additionalProperties": false}
        }, "required": ["n", "s"], "additionalProperties": false}),
        json!({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]}),
        json!({"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 2}]}),
        json!({"allOf": [{"type": "object", "required": ["a"]}, {"properties": {"a": {"type": "string"}}}]}),
        json!({"not": {"type": "string"}}),
        json!({"type": "object", "if": {"properties": {"kind": {"const": "file"}}, "required": ["kind"]},
               "then": {"required": ["path"]}, "else": {"required": ["url"]},
               "properties": {"kind": {"enum": ["file", "web"]}, "path": {"type": "string"}, "url": {"type": "string"}}}),
        json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
               "dependentRequired": {"a": ["b"]}, "dependentSchemas": {"b": {"required": ["c"]}}}),
        json!({"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"},
               "next": {"$ref": "#/$defs/node"}}, "required": ["v"]}}, "$ref": "#/$defs/node"}),
        json!({"definitions": {"id": {"type": "string", "minLength": 3}}, "type": "object",
               "properties": {"id": {"$ref": "#/definitions/id"}}}),
        json!(false),
        json!(true),
    ]
}

fn theirs(schema: &Value, instance: &Value) -> Option<Vec<String>> {
    let v = jsonschema::validator_for(schema).ok()?;
    let mut paths: Vec<String> = v
        .iter_errors(instance)
        .map(|e| e.instance_path().to_string())
        .collect();
    paths.sort();
    paths.dedup();
    Some(paths)
}

fn ours(schema: &Value, instance: &Value) -> Vec<String> {
    let mut paths: Vec<String> = check(schema, instance)
        .into_iter()
        .map(|e| e.path)
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

fn compare(schemas: &[Value], seed: u64) -> (usize, usize, Vec<String>) {
    let (mut compared, mut invalid, mut differ) = (0, 0, Vec::new());
    for (i, schema) in schemas.iter().enumerate() {
        let mut r = Seeded(seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        for _ in 0..PER_SCHEMA {
            let instance = make(schema, schema, &mut r, 0);
            let Some(want) = theirs(schema, &instance) else {
                break;
            };
            let got = ours(schema, &instance);
            compared += 1;
            invalid += usize::from(!want.is_empty());
            if got != want && differ.len() < 10 {
                differ.push(format!(
                    "schema {schema}\ninstance {instance}\njsonschema {want:?}\nours {got:?} {:?}",
                    check(schema, &instance)
                ));
            }
        }
    }
    (compared, invalid, differ)
}

#[test]
fn the_same_verdicts_as_jsonschema_on_every_keyword() {
    let (compared, invalid, differ) = compare(&keyword_schemas(), 0x5EED);
    assert!(differ.is_empty(), "{}", differ.join("\n\n"));
    assert!(compared > 500, "{compared}");
    // both valid and invalid arguments were made
    assert!(
        invalid > compared / 5 && invalid < compared,
        "{invalid} of {compared}"
    );
}

#[test]
fn the_same_verdicts_as_jsonschema_on_the_corpus_tool_lists() {
    let schemas = corpus_schemas();
    assert!(
        schemas.len() > 300,
        "{} input schemas in ../shared/corpus/toolslists",
        schemas.len()
    );
    let (compared, invalid, differ) = compare(&schemas, 0xC0FFEE);
    assert!(differ.is_empty(), "{}", differ.join("\n\n"));
    assert!(compared > 10_000, "{compared}");
    assert!(
        invalid > compared / 5 && invalid < compared,
        "{invalid} of {compared}"
    );
}

#[test]
fn errors_are_worded_as_jsonschema_words_them() {
    let schema = json!({"type": "object", "properties": {
        "owner": {"type": "string"}, "n": {"type": "integer", "minimum": 1},
        "tags": {"type": "array", "maxItems": 1}}, "required": ["repo"],
        "additionalProperties": false});
    let instance = json!({"owner": 5, "n": 0, "tags": ["a", "b"], "x": 1});
    let v = jsonschema::validator_for(&schema).unwrap();
    let mut want: Vec<String> = v
        .iter_errors(&instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    let mut got: Vec<String> = check(&schema, &instance)
        .into_iter()
        .map(|e| format!("{}: {}", e.path, e.message))
        .collect();
    want.sort();
    got.sort();
    assert_eq!(got, want);
}

#[test]
fn a_schema_that_refers_to_itself_ends() {
    let schema = json!({"$ref": "#"});
    assert!(check(&schema, &json!(1)).is_empty());
    let schema = json!({"anyOf": [{"$ref": "#"}], "type": "string"});
    assert_eq!(check(&schema, &json!(1)).len(), 2);
}

#[test]
fn formats_assert_under_draft_7_as_jsonschema_has_them() {
    let samples: &[(&str, &[&str])] = &[
        (
            "uri",
            &[
                "https://x.org/a?b=c#d",
                "mailto:a@b",
                "urn:isbn:123",
                "a-",
                "http://x y",
                "http://x%zz",
                "http://x%20y",
                "7 7",
                "",
                "1a:b",
                "a+b.c-d:rest",
            ],
        ),
        (
            "uri-reference",
            &["/a/b", "a b", "#frag", "http://x.org", "%41", "%4"],
        ),
        (
            "date-time",
            &[
                "2026-12-05T08:00:00Z",
                "2026-12-05T08:00:00.5+01:00",
                "2026-13-05T08:00:00Z",
                "2026-12-05 08:00:00Z",
                "2026-12-05T08:00:00",
                "2026-12-05t08:00:00z",
            ],
        ),
        (
            "date",
            &["2026-12-05", "2026-1-05", "2026-00-10", "20261205"],
        ),
        (
            "time",
            &["08:00:00Z", "08:00:00+01:00", "08:00", "08:00:00"],
        ),
        ("email", &["a@b.c", "a", "@b", "a@", "a@b@c"]),
        ("ipv4", &["127.0.0.1", "256.0.0.1", "1.2.3", "01.2.3.4"]),
        ("ipv6", &["::1", "fe80::1", "::g", "1:2:3"]),
        ("uuid", &["123e4567e89b12d3a456426614174000"]),
        ("regex", &["^a+$", "(", "[a-z]{2,}"]),
    ];
    let mut differ = Vec::new();
    for (format, texts) in samples {
        let schema = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "string", "format": format});
        for text in *texts {
            let instance = json!(text);
            let want = theirs(&schema, &instance).unwrap().is_empty();
            let got = check(&schema, &instance).is_empty();
            if want != got {
                differ.push(format!("{format} {text:?}: jsonschema {want}, ours {got}"));
            }
        }
        // under 2020-12 a format is an annotation
        let schema = json!({"type": "string", "format": format});
        assert!(check(&schema, &json!("\u{0}")).is_empty());
    }
    assert!(differ.is_empty(), "{differ:#?}");
}
