//! The structural shrink read straight from JSON text: what [`shrink`](super::shrink::shrink)
//! makes of the parsed value, built without parsing what it drops. Items past an array's cap
//! and containers past the depth are only checked and counted (serde's `IgnoredAny`, a byte
//! scan), so a 4 MB array costs a scan and the few items kept, not a tree of 4 MB that is
//! dropped again.

use std::collections::HashMap;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::shrink::{cut_string, shrink_with, Caps, ShrinkReport};

/// `shrink(&serde_json::from_str(text)?, caps)`, reading `text` once; `None` when it is not
/// JSON or repeats a key in an object (then the caller parses it whole). The tests' reference for
/// [`Capped`], which reads once for a whole ladder.
#[cfg(test)]
pub fn shrink_text(text: &str, caps: Caps) -> Option<(Value, ShrinkReport)> {
    let mut report = ShrinkReport {
        string_chars: caps.string_chars,
        depth: caps.depth,
        ..ShrinkReport::default()
    };
    let value = read(text, caps, &mut report, &mut Vec::new())?;
    Some((value, report))
}

fn read(
    text: &str,
    caps: Caps,
    report: &mut ShrinkReport,
    lengths: &mut Vec<usize>,
) -> Option<Value> {
    let mut path = String::new();
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Node {
        caps,
        depth: 0,
        path: &mut path,
        report,
        lengths,
    }
    .deserialize(&mut de)
    .ok()?;
    de.end().ok()?;
    Some(value)
}

/// A JSON text read once with the loosest caps of a shrink ladder, from which every tighter
/// step is made exactly as from the whole value: it keeps one more level than the caps'
/// depth (so a container at the last level still says whether it was empty) and the length
/// each array had in the text.
#[derive(Debug)]
pub struct Capped {
    value: Value,
    caps: Caps,
    /// Arrays' lengths in the text, by the address of their (non-empty) items.
    lengths: HashMap<usize, usize>,
}

impl Capped {
    /// Read `text` for the ladder that starts at `caps`; `None` as [`shrink_text`] gives it.
    pub fn read(text: &str, caps: Caps) -> Option<Capped> {
        if caps.array_items == 0 {
            // nothing of an array would be kept to tell whether it was empty
            return None;
        }
        let deeper = Caps {
            depth: caps.depth + 1,
            ..caps
        };
        let mut lengths = Vec::new();
        let value = read(text, deeper, &mut ShrinkReport::default(), &mut lengths)?;
        let mut by_address = HashMap::new();
        let mut order = lengths.into_iter();
        index(&value, &mut order, &mut by_address);
        Some(Capped {
            value,
            caps,
            lengths: by_address,
        })
    }

    /// What `shrink` makes of the whole value with `caps`, when they are no looser than the
    /// caps this was read with.
    pub fn shrink(&self, caps: Caps) -> Option<(Value, ShrinkReport)> {
        let within = caps.array_items <= self.caps.array_items
            && caps.string_chars <= self.caps.string_chars
            && caps.depth <= self.caps.depth;
        within.then(|| {
            shrink_with(&self.value, caps, &|items: &Vec<Value>| {
                self.lengths
                    .get(&(items.as_ptr() as usize))
                    .copied()
                    .unwrap_or(items.len())
            })
        })
    }
}

/// Map each non-empty array of `v`, in the order they were read, to its length in the text.
fn index(v: &Value, order: &mut impl Iterator<Item = usize>, out: &mut HashMap<usize, usize>) {
    match v {
        Value::Array(items) => {
            let total = order.next().unwrap_or(items.len());
            if !items.is_empty() {
                out.insert(items.as_ptr() as usize, total);
            }
            items.iter().for_each(|i| index(i, order, out));
        }
        Value::Object(map) => map.values().for_each(|c| index(c, order, out)),
        _ => {}
    }
}

/// One value at `depth`, at the normalised `path` (`items[].labels`).
struct Node<'a> {
    caps: Caps,
    depth: usize,
    path: &'a mut String,
    report: &'a mut ShrinkReport,
    /// Each array's length in the text, in the order the arrays start.
    lengths: &'a mut Vec<usize>,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl Node<'_> {
    fn child(&mut self) -> Node<'_> {
        Node {
            caps: self.caps,
            depth: self.depth + 1,
            path: self.path,
            report: self.report,
            lengths: self.lengths,
        }
    }

    fn past_depth(&self) -> bool {
        self.depth >= self.caps.depth
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    crate::measure::json_scalar_visits!();
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(cut_string(v, self.caps.string_chars, self.report))
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Value, A::Error> {
        let at = self.lengths.len();
        self.lengths.push(0);
        if self.past_depth() {
            if seq.next_element::<IgnoredAny>()?.is_some() {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                self.report.containers_emptied += 1;
            }
            return Ok(Value::Array(Vec::new()));
        }
        let len = self.path.len();
        self.path.push_str("[]");
        let mut kept = Vec::new();
        while kept.len() < self.caps.array_items {
            match seq.next_element_seed(self.child())? {
                Some(v) => kept.push(v),
                None => break,
            }
        }
        self.path.truncate(len);
        let mut total = kept.len();
        while seq.next_element::<IgnoredAny>()?.is_some() {
            total += 1;
        }
        self.lengths[at] = total;
        if total > kept.len() {
            let e = self.report.arrays.entry(self.path.clone()).or_default();
            *e = (e.0 + 1, e.1 + kept.len(), e.2 + total);
        }
        Ok(Value::Array(kept))
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Value, A::Error> {
        if self.past_depth() {
            if map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                self.report.containers_emptied += 1;
            }
            return Ok(Value::Object(Map::new()));
        }
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                // the parsed value keeps the last of a repeated key, and what the first one
                // added to the report cannot be taken back here
                return Err(serde::de::Error::custom("repeated key"));
            }
            let len = self.path.len();
            if !self.path.is_empty() {
                self.path.push('.');
            }
            self.path.push_str(&key);
            let v = map.next_value_seed(self.child())?;
            self.path.truncate(len);
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::super::shrink::{ladder, shrink};
    use super::*;
    use proptest::prelude::*;

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| Value::Number(n.into())),
            any::<u64>().prop_map(|n| Value::Number(n.into())),
            (-1e12f64..1e12)
                .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            "[a-zé東\"\\\\\n ]{0,40}".prop_map(Value::String),
        ];
        leaf.prop_recursive(6, 300, 12, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..12).prop_map(Value::Array),
                proptest::collection::btree_map("[a-c]{1,2}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn reading_text_equals_shrinking_the_parsed_value(v in json(), pretty in any::<bool>()) {
            let text = if pretty {
                serde_json::to_string_pretty(&v).unwrap()
            } else {
                serde_json::to_string(&v).unwrap()
            };
            let parsed: Value = serde_json::from_str(&text).unwrap();
            for caps in ladder(Caps { array_items: 20, string_chars: 500, depth: 12 }) {
                let (want, want_report) = shrink(&parsed, caps);
                let (got, got_report) = shrink_text(&text, caps).expect("valid JSON");
                prop_assert_eq!(&got, &want);
                prop_assert_eq!(&got_report, &want_report);
            }
            // read once with the loosest caps, every step of the ladder from that
            let steps = ladder(Caps { array_items: 3, string_chars: 12, depth: 4 });
            let once = Capped::read(&text, steps[0]).expect("valid JSON");
            for caps in steps {
                let (want, want_report) = shrink(&parsed, caps);
                let (got, got_report) = once.shrink(caps).expect("within the caps read");
                prop_assert_eq!(&got, &want, "{:?}", caps);
                prop_assert_eq!(&got_report, &want_report, "{:?}", caps);
            }
        }
    }

    #[test]
    fn not_json_or_a_repeated_key_gives_none() {
        let caps = Caps {
            array_items: 2,
            string_chars: 10,
            depth: 3,
        };
        assert!(shrink_text("[1, 2", caps).is_none());
        assert!(shrink_text("[1] x", caps).is_none());
        assert!(shrink_text(r#"{"a": 1, "a": 2}"#, caps).is_none());
        let (v, r) =
            shrink_text(r#"{"items": [1, 2, 3, 4], "s": "abcdefghijklmno"}"#, caps).expect("JSON");
        assert_eq!(v, serde_json::json!({"items": [1, 2], "s": "abcdefghij…"}));
        assert_eq!(r.arrays["items"], (1, 2, 4));
        assert_eq!(r.strings_cut, 1);
    }
}
