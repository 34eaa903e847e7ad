//! Whether a JSON text holds a given value, decided while the text is read: nothing is built,
//! and reading stops at the first difference. A result's text block and its structuredContent
//! are most often the same data twice; proving it by parsing the text into a second tree cost
//! more than all the rest of a budget pass.

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

/// How a text holds a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// Parsing the text gives the value, every object's keys in the same order.
    InOrder,
    /// Parsing the text gives an equal value (as `Value`'s `==` has it), keys in another order.
    Equal,
}

/// `Some` when `text` is JSON whose value equals `expected` (`serde_json::from_str::<Value>(text)
/// == Ok(expected)`), else `None` (another value, or no JSON).
pub fn json_text_holds(text: &str, expected: &Value) -> Option<Holds> {
    let mut flags = Flags {
        in_order: true,
        repeated: false,
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let read = Same {
        expected,
        flags: &mut flags,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end());
    if flags.repeated {
        // a key given twice: the parsed value keeps the first place and the last value, which
        // reading in one pass cannot tell; parse it (a rare text)
        let got: Value = serde_json::from_str(text).ok()?;
        return (got == *expected).then_some(Holds::Equal);
    }
    read.ok()?;
    Some(if flags.in_order {
        Holds::InOrder
    } else {
        Holds::Equal
    })
}

/// What reading has found besides a difference.
struct Flags {
    /// Every object's keys came in the expected value's order.
    in_order: bool,
    /// An object gave a key twice (reading stopped there).
    repeated: bool,
}

/// Whether `text` is a JSON object of exactly one key whose value equals `expected`.
pub fn json_text_wraps(text: &str, expected: &Value) -> bool {
    let mut flags = Flags {
        in_order: true,
        repeated: false,
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let read = (&mut de).deserialize_map(Wrap {
        expected,
        flags: &mut flags,
    });
    if flags.repeated {
        let got: Option<Value> = serde_json::from_str(text).ok();
        return match got.as_ref().and_then(Value::as_object) {
            Some(m) if m.len() == 1 => m.values().next() == Some(expected),
            _ => false,
        };
    }
    read.is_ok() && de.end().is_ok()
}

/// The reading stopped: the text differs from the value.
fn differs<E: serde::de::Error>() -> E {
    E::custom("differs")
}

/// Reads one value and compares it with `expected`.
struct Same<'v, 'f> {
    expected: &'v Value,
    flags: &'f mut Flags,
}

impl<'de> DeserializeSeed<'de> for Same<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Same<'_, '_> {
    fn scalar<E: serde::de::Error>(&self, got: Value) -> Result<(), E> {
        if *self.expected == got {
            Ok(())
        } else {
            Err(differs())
        }
    }
}

impl<'de> Visitor<'de> for Same<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<(), E> {
        self.scalar(Value::Bool(v))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<(), E> {
        self.scalar(Value::Number(v.into()))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        self.scalar(Value::Number(v.into()))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        // as serde_json's own Value reads it
        self.scalar(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        match self.expected.as_str() {
            Some(s) if s == v => Ok(()),
            _ => Err(differs()),
        }
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.scalar(Value::Null)
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
        self.scalar(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let items = self.expected.as_array().ok_or_else(differs)?;
        let mut at = 0;
        loop {
            let seed = match items.get(at) {
                Some(expected) => Same {
                    expected,
                    flags: &mut *self.flags,
                },
                // one item more than expected, if the text has it
                None => {
                    return seq
                        .next_element::<serde::de::IgnoredAny>()?
                        .map_or(Ok(()), |_| Err(differs()))
                }
            };
            match seq.next_element_seed(seed)? {
                Some(()) => at += 1,
                None => {
                    return if at == items.len() {
                        Ok(())
                    } else {
                        Err(differs())
                    }
                }
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let expected = self.expected.as_object().ok_or_else(differs)?;
        // the keys in the expected order while the text keeps it; after that, the keys seen,
        // to tell a repeated key (the parsed value keeps the last of a repeat, so it would lack
        // a key) from a complete object
        let mut in_order = expected.keys();
        let mut seen: Option<HashSet<&str>> = None;
        let mut at = 0;
        while let Some(key) = map.next_key::<Key>()? {
            let key = key.as_str();
            let value = match (&mut seen, in_order.next()) {
                (None, Some(k)) if k == key => &expected[k],
                (seen, _) => {
                    let (k, v) = expected.get_key_value(key).ok_or_else(differs)?;
                    let seen = seen.get_or_insert_with(|| {
                        self.flags.in_order = false;
                        expected.keys().take(at).map(String::as_str).collect()
                    });
                    if !seen.insert(k.as_str()) {
                        self.flags.repeated = true;
                        return Err(differs());
                    }
                    v
                }
            };
            map.next_value_seed(Same {
                expected: value,
                flags: &mut *self.flags,
            })?;
            at += 1;
        }
        if at == expected.len() {
            Ok(())
        } else {
            Err(differs())
        }
    }
}

/// Reads an object and compares it with `{key: expected}` for any one key.
struct Wrap<'v, 'f> {
    expected: &'v Value,
    flags: &'f mut Flags,
}

impl<'de> Visitor<'de> for Wrap<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of one key")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        if map.next_key::<serde::de::IgnoredAny>()?.is_none() {
            return Err(A::Error::custom("no key"));
        }
        map.next_value_seed(Same {
            expected: self.expected,
            flags: self.flags,
        })?;
        match map.next_key::<serde::de::IgnoredAny>()? {
            None => Ok(()),
            Some(_) => Err(differs()),
        }
    }
}

/// An object key, borrowed from the text when it has no escapes.
enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
        }
    }
}

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key::Borrowed(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v.to_string()))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::Map;

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| Value::Number(n.into())),
            any::<u64>().prop_map(|n| Value::Number(n.into())),
            (-1e9f64..1e9).prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
            "[a-c\"\\\\é\n]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                proptest::collection::vec(("[a-c]{1,2}", inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    /// What parsing the text and comparing the values says, order included.
    fn by_parsing(text: &str, expected: &Value) -> Option<Holds> {
        let got: Value = serde_json::from_str(text).ok()?;
        (got == *expected).then(|| {
            if serde_json::to_string(&got).ok() == serde_json::to_string(expected).ok() {
                Holds::InOrder
            } else {
                Holds::Equal
            }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        /// The same answer as parsing the text into a value and comparing, for a text of the
        /// value itself, of another value, reordered, and with a key repeated.
        #[test]
        fn equals_parsing_and_comparing(a in json(), b in json(), pretty in any::<bool>()) {
            let text = |v: &Value| if pretty {
                serde_json::to_string_pretty(v).unwrap()
            } else {
                serde_json::to_string(v).unwrap()
            };
            for (t, v) in [(text(&a), &a), (text(&a), &b), (text(&b), &a)] {
                prop_assert_eq!(json_text_holds(&t, v), by_parsing(&t, v), "{} vs {}", t, v);
            }
            // a text with a repeated key: the same verdict, and never "in order" unless it is
            let sound = |t: &str, v: &Value| {
                let (got, want) = (json_text_holds(t, v), by_parsing(t, v));
                got.is_some() == want.is_some()
                    && (got != Some(Holds::InOrder) || want == Some(Holds::InOrder))
            };
            if let Value::Object(m) = &a {
                let mut reversed: Map<String, Value> = Map::new();
                for (k, v) in m.iter().rev() {
                    reversed.insert(k.clone(), v.clone());
                }
                let t = text(&Value::Object(reversed));
                prop_assert_eq!(json_text_holds(&t, &a), by_parsing(&t, &a));
                if let Some((k, v)) = m.iter().next() {
                    // a key twice, with its own value and with another: the parsed value
                    // keeps the first place and the last value
                    let body = t.trim_end().trim_end_matches('}');
                    for again in [v, &b] {
                        let repeated = format!("{body},{}:{}}}", Value::String(k.clone()), again);
                        prop_assert!(sound(&repeated, &a), "{}", repeated);
                    }
                }
            }
            // floats need not read back to the same number: compare with what the text reads as
            let read = |v: &Value| -> Value { serde_json::from_str(&text(v)).unwrap() };
            let wrapped = format!("{{\"w\": {}}}", text(&a));
            prop_assert!(json_text_wraps(&wrapped, &read(&a)));
            prop_assert_eq!(json_text_wraps(&wrapped, &read(&b)), read(&a) == read(&b));
        }
    }

    #[test]
    fn not_json_and_near_misses() {
        let v: Value = serde_json::from_str(r#"{"a": [1, 2.5, "x"], "b": null}"#).unwrap();
        assert_eq!(
            json_text_holds(r#"{"a":[1,2.5,"x"],"b":null}"#, &v),
            Some(Holds::InOrder)
        );
        assert_eq!(
            json_text_holds(r#"{"b":null,"a":[1,2.5,"x"]}"#, &v),
            Some(Holds::Equal)
        );
        for other in [
            r#"{"a":[1,2.5,"x"]}"#,
            r#"{"a":[1,2.5,"x"],"b":null,"c":1}"#,
            r#"{"a":[1,2.5],"b":null}"#,
            r#"{"a":[1,2.5,"x",4],"b":null}"#,
            r#"{"a":[1.0,2.5,"x"],"b":null}"#,
            r#"{"a":[1,2.5,"x"],"b":null} x"#,
            r#"{"a":[1,2.5,"x"],"b":nul"#,
            "",
        ] {
            assert_eq!(json_text_holds(other, &v), None, "{other}");
        }
        assert!(json_text_wraps(
            r#"{"result": {"a":[1,2.5,"x"],"b":null}}"#,
            &v
        ));
        assert!(!json_text_wraps(
            r#"{"result": {"a":[1,2.5,"x"],"b":null}, "n": 1}"#,
            &v
        ));
        assert!(!json_text_wraps(r#"[{"a":[1,2.5,"x"],"b":null}]"#, &v));
    }
}
