//! The scalar half of a `serde::de::Visitor` that builds a `serde_json::Value`: booleans,
//! integers, floats (as serde_json's own `Value` reads them: a float no `Number` can hold is
//! null) and null. The readers that build a `Value` their own way (a capped read, a pruned
//! read, an exact read, a read of large texts) differ only in strings, arrays and objects, so
//! they take these from one place.

/// Expands, inside `impl Visitor for X { type Value = serde_json::Value; ... }`, to its
/// `visit_bool`, `visit_i64`, `visit_u64`, `visit_f64` and `visit_unit`.
macro_rules! json_scalar_visits {
    () => {
        fn visit_bool<E>(self, v: bool) -> Result<serde_json::Value, E> {
            Ok(serde_json::Value::Bool(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<serde_json::Value, E> {
            Ok(serde_json::Value::Number(v.into()))
        }
        fn visit_u64<E>(self, v: u64) -> Result<serde_json::Value, E> {
            Ok(serde_json::Value::Number(v.into()))
        }
        fn visit_f64<E>(self, v: f64) -> Result<serde_json::Value, E> {
            Ok(serde_json::Number::from_f64(v)
                .map_or(serde_json::Value::Null, serde_json::Value::Number))
        }
        fn visit_unit<E>(self) -> Result<serde_json::Value, E> {
            Ok(serde_json::Value::Null)
        }
    };
}

pub(crate) use json_scalar_visits;

#[cfg(test)]
mod tests {
    use serde::de::{DeserializeSeed, Deserializer, Visitor};
    use serde_json::Value;

    /// A visitor with the scalars only, as the readers use them.
    struct Scalars;

    impl<'de> Visitor<'de> for Scalars {
        type Value = Value;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a scalar")
        }
        json_scalar_visits!();
    }

    impl<'de> DeserializeSeed<'de> for Scalars {
        type Value = Value;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
            d.deserialize_any(self)
        }
    }

    #[test]
    fn every_scalar_reads_as_serde_json_reads_it() {
        for text in [
            "true",
            "false",
            "null",
            "0",
            "-7",
            "18446744073709551615",
            "1.5",
            "-2e-3",
        ] {
            let mut de = serde_json::Deserializer::from_str(text);
            let ours = Scalars.deserialize(&mut de).unwrap();
            let theirs: Value = serde_json::from_str(text).unwrap();
            assert_eq!(ours, theirs, "{text}");
        }
    }
}
