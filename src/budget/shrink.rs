//! Structural shrink of any JSON: arrays capped to N items, long strings cut, containers past a
//! depth emptied. The output is valid JSON of the same shape; what was cut is reported by path.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// How hard to shrink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub array_items: usize,
    pub string_chars: usize,
    pub depth: usize,
}

/// What one shrink cut.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShrinkReport {
    /// Normalised path (`items[].labels`) -> (arrays cut, items kept, items in total).
    pub arrays: BTreeMap<String, (usize, usize, usize)>,
    pub strings_cut: usize,
    pub string_chars: usize,
    pub containers_emptied: usize,
    pub depth: usize,
}

impl ShrinkReport {
    pub fn is_empty(&self) -> bool {
        self.arrays.is_empty() && self.strings_cut == 0 && self.containers_emptied == 0
    }

    /// "items: 5 of 3,187 kept", "12 strings cut to 200 chars", ...
    pub fn describe(&self) -> Vec<String> {
        use crate::units::thousands;
        let mut out: Vec<String> = self
            .arrays
            .iter()
            .map(|(path, (arrays, kept, total))| {
                let path = if path.is_empty() { "(top level)" } else { path };
                if *arrays == 1 {
                    format!(
                        "{path}: {} of {} items kept",
                        thousands(*kept),
                        thousands(*total)
                    )
                } else {
                    format!(
                        "{path}: {} arrays cut, {} of {} items kept",
                        thousands(*arrays),
                        thousands(*kept),
                        thousands(*total)
                    )
                }
            })
            .collect();
        if self.strings_cut > 0 {
            out.push(format!(
                "{} strings cut to {} chars",
                thousands(self.strings_cut),
                thousands(self.string_chars)
            ));
        }
        if self.containers_emptied > 0 {
            out.push(format!(
                "{} objects or arrays deeper than {} levels emptied",
                thousands(self.containers_emptied),
                self.depth
            ));
        }
        out
    }

    /// Merge the report of another part shrunk with the same caps.
    pub fn merge(&mut self, other: ShrinkReport) {
        for (k, (a, kept, total)) in other.arrays {
            let e = self.arrays.entry(k).or_default();
            *e = (e.0 + a, e.1 + kept, e.2 + total);
        }
        self.strings_cut += other.strings_cut;
        self.containers_emptied += other.containers_emptied;
        self.string_chars = other.string_chars;
        self.depth = other.depth;
    }
}

/// Shrink `value` with `caps`.
pub fn shrink(value: &Value, caps: Caps) -> (Value, ShrinkReport) {
    shrink_with(value, caps, &|items: &Vec<Value>| items.len())
}

/// [`shrink`], where `total` gives each array's length in the JSON it was read from (a value
/// already capped on reading keeps fewer items than the text had).
pub fn shrink_with(
    value: &Value,
    caps: Caps,
    total: &dyn Fn(&Vec<Value>) -> usize,
) -> (Value, ShrinkReport) {
    let mut report = ShrinkReport {
        string_chars: caps.string_chars,
        depth: caps.depth,
        ..ShrinkReport::default()
    };
    let mut walker = Walk {
        caps,
        total,
        report: &mut report,
    };
    let out = walker.walk(value, 0, &mut String::new());
    (out, report)
}

struct Walk<'a> {
    caps: Caps,
    total: &'a dyn Fn(&Vec<Value>) -> usize,
    report: &'a mut ShrinkReport,
}

impl Walk<'_> {
    fn walk(&mut self, v: &Value, depth: usize, path: &mut String) -> Value {
        let (caps, r) = (self.caps, &mut *self.report);
        match v {
            Value::String(s) => cut_string(s, caps.string_chars, r),
            Value::Array(items) => {
                if depth >= caps.depth && !items.is_empty() {
                    r.containers_emptied += 1;
                    return Value::Array(Vec::new());
                }
                let total = (self.total)(items);
                let keep = items.len().min(caps.array_items);
                if keep < total {
                    let e = r.arrays.entry(path.clone()).or_default();
                    *e = (e.0 + 1, e.1 + keep, e.2 + total);
                }
                let len = path.len();
                path.push_str("[]");
                let out = items[..keep]
                    .iter()
                    .map(|i| self.walk(i, depth + 1, path))
                    .collect();
                path.truncate(len);
                Value::Array(out)
            }
            Value::Object(map) => {
                if depth >= caps.depth && !map.is_empty() {
                    r.containers_emptied += 1;
                    return Value::Object(Map::new());
                }
                let mut out = Map::new();
                for (k, child) in map {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(k);
                    out.insert(k.clone(), self.walk(child, depth + 1, path));
                    path.truncate(len);
                }
                Value::Object(out)
            }
            other => other.clone(),
        }
    }
}

pub(super) fn cut_string(s: &str, max_chars: usize, r: &mut ShrinkReport) -> Value {
    match s.char_indices().nth(max_chars) {
        Some((at, _)) => {
            r.strings_cut += 1;
            Value::String(format!("{}…", &s[..at]))
        }
        None => Value::String(s.to_string()),
    }
}

/// Caps from the policy's down to nothing, each step more destructive than the last.
pub fn ladder(start: Caps) -> Vec<Caps> {
    let steps = [
        (start.array_items, start.string_chars, start.depth),
        (10, start.string_chars, start.depth),
        (5, 200, start.depth),
        (3, 200, 8),
        (3, 100, 6),
        (2, 100, 5),
        (1, 80, 4),
        (1, 40, 3),
        (1, 20, 2),
        (1, 10, 1),
        (0, 0, 0),
    ];
    let mut out: Vec<Caps> = Vec::new();
    for (a, s, d) in steps {
        let caps = Caps {
            array_items: a.min(start.array_items),
            string_chars: s.min(start.string_chars),
            depth: d.min(start.depth),
        };
        if out.last() != Some(&caps) {
            out.push(caps);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn caps_arrays_strings_and_depth_keeping_shape() {
        let v = json!({"total_count": 3187, "items": (0..50).map(|i| json!({"name": format!("n{i}"), "body": "x".repeat(300), "tags": [1,2,3,4]})).collect::<Vec<_>>()});
        let (out, r) = shrink(
            &v,
            Caps {
                array_items: 5,
                string_chars: 100,
                depth: 12,
            },
        );
        assert_eq!(out["items"].as_array().unwrap().len(), 5);
        assert_eq!(out["total_count"], 3187);
        assert_eq!(
            out["items"][0]["body"].as_str().unwrap().chars().count(),
            101
        );
        assert_eq!(r.arrays["items"], (1, 5, 50));
        assert!(
            !r.arrays.contains_key("items[].tags"),
            "4 tags fit under the cap of 5"
        );
        assert_eq!(r.strings_cut, 5);
        assert_eq!(r.describe()[0], "items: 5 of 50 items kept");
        let (deep, r) = shrink(
            &v,
            Caps {
                array_items: 5,
                string_chars: 100,
                depth: 2,
            },
        );
        assert_eq!(deep["items"][0], json!({}));
        assert_eq!(r.containers_emptied, 5);
    }

    #[test]
    fn ladder_never_loosens() {
        let l = ladder(Caps {
            array_items: 20,
            string_chars: 500,
            depth: 12,
        });
        assert_eq!(
            l.last(),
            Some(&Caps {
                array_items: 0,
                string_chars: 0,
                depth: 0
            })
        );
        for w in l.windows(2) {
            assert!(
                w[1].array_items <= w[0].array_items
                    && w[1].string_chars <= w[0].string_chars
                    && w[1].depth <= w[0].depth
            );
        }
    }
}
