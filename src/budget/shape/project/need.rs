//! What of its input a JMESPath expression can read, found from the expression alone, so that a
//! projection runs on a copy of the data without what it cannot see: a GitHub search result's
//! dozens of `*_url` fields and the repository object repeated in every item are never turned
//! into the crate's values. Exact by construction: a part is dropped only where no node of the
//! expression can reach it; anywhere a value is compared, tested for truth, counted by a function
//! or output whole, all of it is kept. Nodes keep their type (an object stays an object, an
//! array keeps every item), so nulls, types, lengths and indexes read the same.

use std::collections::BTreeMap;

use jmespath::ast::Ast;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// What is read of one value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Need {
    /// Not read: only its type (and a scalar's value) is kept.
    #[default]
    Nothing,
    /// Read whole.
    All,
    /// An object's listed fields (the others are dropped), an array's every item.
    Shape {
        fields: BTreeMap<String, Need>,
        items: Box<Need>,
    },
}

impl Need {
    fn field(name: &str, need: Need) -> Need {
        Need::Shape {
            fields: BTreeMap::from([(name.to_string(), need)]),
            items: Box::new(Need::Nothing),
        }
    }

    fn items(need: Need) -> Need {
        Need::Shape {
            fields: BTreeMap::new(),
            items: Box::new(need),
        }
    }

    /// What is read of each item of an array read this way.
    fn of_items(&self) -> Need {
        match self {
            Need::Shape { items, .. } => (**items).clone(),
            other => other.clone(),
        }
    }

    /// What is read of the field `name` of an object read this way.
    fn of_field(&self, name: &str) -> Need {
        match self {
            Need::Shape { fields, .. } => fields.get(name).cloned().unwrap_or_default(),
            other => other.clone(),
        }
    }

    /// Everything either reads.
    fn union(self, other: Need) -> Need {
        match (self, other) {
            (Need::All, _) | (_, Need::All) => Need::All,
            (Need::Nothing, n) | (n, Need::Nothing) => n,
            (
                Need::Shape { fields, items },
                Need::Shape {
                    fields: more,
                    items: more_items,
                },
            ) => {
                let mut fields = fields;
                for (k, n) in more {
                    let merged = fields.remove(&k).unwrap_or_default().union(n);
                    fields.insert(k, merged);
                }
                Need::Shape {
                    fields,
                    items: Box::new(items.union(*more_items)),
                }
            }
        }
    }

    /// What `ast` reads of its input when `out` is what is read of its output.
    pub fn of(ast: &Ast, out: Need) -> Need {
        match ast {
            Ast::Identity { .. } => out,
            Ast::Field { name, .. } => Need::field(name, out),
            Ast::Subexpr { lhs, rhs, .. } => Need::of(lhs, Need::of(rhs, out)),
            Ast::Index { .. } => Need::items(out),
            Ast::Slice { .. } => Need::items(out.of_items()),
            Ast::Projection { lhs, rhs, .. } => {
                let each = Need::of(rhs, out.of_items());
                Need::of(lhs, Need::items(each))
            }
            Ast::Flatten { node, .. } => {
                // an item that is an array gives its items, any other item itself
                let each = out.of_items();
                Need::of(node, Need::items(each.clone().union(Need::items(each))))
            }
            Ast::MultiList { elements, .. } => elements
                .iter()
                .fold(Need::Nothing, |n, e| n.union(Need::of(e, out.of_items()))),
            Ast::MultiHash { elements, .. } => elements.iter().fold(Need::Nothing, |n, kv| {
                n.union(Need::of(&kv.value, out.of_field(&kv.key)))
            }),
            // a value whose truth is tested: an emptied object would read as false
            Ast::Not { node, .. } => Need::of(node, Need::All),
            Ast::And { lhs, rhs, .. } | Ast::Or { lhs, rhs, .. } => {
                Need::of(lhs, Need::All).union(Need::of(rhs, out))
            }
            Ast::Condition {
                predicate, then, ..
            } => Need::of(predicate, Need::All).union(Need::of(then, out)),
            Ast::Comparison { lhs, rhs, .. } => {
                Need::of(lhs, Need::All).union(Need::of(rhs, Need::All))
            }
            Ast::ObjectValues { node, .. } => Need::of(node, Need::All),
            // a function sees its arguments whole; one given an expression applies it to
            // items of another argument, so everything is kept
            Ast::Function { args, .. } => {
                if args.iter().any(|a| matches!(a, Ast::Expref { .. })) {
                    return Need::All;
                }
                args.iter()
                    .fold(Need::Nothing, |n, a| n.union(Need::of(a, Need::All)))
            }
            Ast::Expref { .. } => Need::All,
            Ast::Literal { .. } => Need::Nothing,
        }
    }

    /// `value` without what this does not read.
    pub fn prune(&self, value: &Value) -> Value {
        match (self, value) {
            (Need::All, v) => v.clone(),
            (Need::Nothing, Value::Object(_)) => Value::Object(Map::new()),
            (Need::Nothing, Value::Array(_)) => Value::Array(Vec::new()),
            (Need::Shape { fields, .. }, Value::Object(map)) => Value::Object(
                map.iter()
                    .filter_map(|(k, v)| fields.get(k).map(|n| (k.clone(), n.prune(v))))
                    .collect(),
            ),
            (Need::Shape { items, .. }, Value::Array(a)) => {
                Value::Array(a.iter().map(|v| items.prune(v)).collect())
            }
            (_, scalar) => scalar.clone(),
        }
    }

    /// The JSON `text`, read without building what this does not read (`None`: not JSON).
    pub fn read(&self, text: &str) -> Option<Value> {
        let mut de = serde_json::Deserializer::from_str(text);
        let v = Pruned(self).deserialize(&mut de).ok()?;
        de.end().ok()?;
        Some(v)
    }
}

/// Reads one value with a [`Need`].
struct Pruned<'n>(&'n Need);

impl<'de> DeserializeSeed<'de> for Pruned<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        match self.0 {
            Need::All => serde::Deserialize::deserialize(d),
            _ => d.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for Pruned<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    crate::measure::json_scalar_visits!();
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        match self.0 {
            Need::Shape { items, .. } => {
                while let Some(v) = seq.next_element_seed(Pruned(items))? {
                    out.push(v);
                }
            }
            _ => while seq.next_element::<IgnoredAny>()?.is_some() {},
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        let Need::Shape { fields, .. } = self.0 else {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(Value::Object(out));
        };
        while let Some(key) = map.next_key::<String>()? {
            match fields.get(&key) {
                Some(need) => {
                    let v = map.next_value_seed(Pruned(need))?;
                    out.insert(key, v);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }
}
