use super::*;
use crate::budget::shape::toon::{decode, encode_exact};
use proptest::prelude::*;

/// A number token in any form JSON allows.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        "-?[1-9][0-9]{19,30}",
        "-?(0|[1-9][0-9]{0,17})\\.[0-9]{1,20}",
        "-?[1-9](\\.[0-9]{1,6})?[eE][+-]?[0-9]{1,2}",
        Just("-0".to_string()),
        Just("-0.0".to_string()),
        Just("1.50".to_string()),
        Just("1E-7".to_string()),
    ]
}

/// A JSON text with its number tokens: a table of rows (what TOON writes), pretty or compact.
fn table() -> impl Strategy<Value = (String, Vec<String>)> {
    (
        proptest::collection::vec((number(), number()), 2..12),
        any::<bool>(),
    )
        .prop_map(|(rows, pretty)| {
            let sep = if pretty { "\n    " } else { "" };
            let items: Vec<String> = rows
                .iter()
                .map(|(a, b)| format!("{sep}{{\"id\": {a}, \"name\": \"n\", \"amount\": {b}}}"))
                .collect();
            let tokens = rows
                .iter()
                .flat_map(|(a, b)| [a.clone(), b.clone()])
                .collect();
            (format!("{{\"items\": [{}]}}", items.join(",")), tokens)
        })
}

fn tokens_in(text: &str) -> Vec<&str> {
    number_tokens(text).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// A rewrite writes every number it keeps as the token it was read from, or refuses.
    #[test]
    fn a_cut_table_and_toon_keep_number_tokens((text, tokens) in table(), keep in 1usize..12) {
        let value = match read_value(&text) {
            Ok(v) => v,
            Err(e) => { prop_assert_eq!(e, Unexact::Unreadable); return Ok(()); }
        };
        let numbers = match Numbers::of(&text) {
            Ok(n) => n,
            Err(_) => return Ok(()),
        };
        // the first rows of the table, as a stage that drops rows keeps them
        let mut shrunk = value.clone();
        if let Some(items) = shrunk["items"].as_array_mut() {
            items.truncate(keep);
        }
        let out = compact_exact(&shrunk, &numbers);
        let kept = keep.min(tokens.len() / 2) * 2;
        prop_assert_eq!(tokens_in(&out), tokens[..kept].to_vec());
        let toon = encode_exact(&value, &numbers).expect("a table");
        prop_assert_eq!(decode(&toon).ok(), Some(value));
        let written: Vec<&str> = toon.lines().skip(1)
            .flat_map(|row| { let f: Vec<&str> = row.trim().split(',').collect(); [f[0], f[2]] })
            .collect();
        prop_assert_eq!(written, tokens.iter().map(String::as_str).collect::<Vec<_>>());
    }
}

#[test]
fn numbers_serde_would_rewrite_are_written_as_sent() {
    let text =
        r#"{"a": [1.50, -0, 1234567890123456789012340, 1E-7, 2.5, 7], "b": "1.50 in a string"}"#;
    let v = read_value(text).unwrap();
    assert_eq!(
        serde_json::to_string(&v).unwrap(),
        r#"{"a":[1.5,-0.0,1.2345678901234568e+24,1e-7,2.5,7],"b":"1.50 in a string"}"#,
        "what serde alone writes"
    );
    let numbers = Numbers::of(text).unwrap();
    assert_eq!(
        compact_exact(&v, &numbers),
        r#"{"a":[1.50,-0,1234567890123456789012340,1E-7,2.5,7],"b":"1.50 in a string"}"#
    );
}

#[test]
fn two_tokens_of_one_f64_or_one_out_of_range_refuse() {
    let same = "[9007199254740993.17, 9007199254740993.18]";
    assert_eq!(
        Numbers::of(same).unwrap_err(),
        Unexact::SameNumber("9007199254740993.17".into(), "9007199254740993.18".into())
    );
    // a token in serde's own form and another of the same value
    assert!(Numbers::of("[1.5, 1.50]").is_err());
    assert!(Numbers::of("[1.50, 1.5]").is_err());
    assert!(Numbers::of("[1.50, 1.50, \"1.5\"]").is_ok());
    assert_eq!(Numbers::of("[1E400]").unwrap_err(), Unexact::Unreadable);
    assert_eq!(read_value("[1E400]").unwrap_err(), Unexact::Unreadable);
}

#[test]
fn a_repeated_key_is_told_at_any_depth() {
    assert_eq!(
        read_value(r#"{"x": [{"id": 1, "id": 2}]}"#).unwrap_err(),
        Unexact::RepeatedKey("id".into())
    );
    let ok = r#"{"a": {"id": 1}, "b": {"id": 2}, "s": "\"id\": \\"}"#;
    assert_eq!(
        read_value(ok).unwrap(),
        serde_json::from_str::<Value>(ok).unwrap()
    );
    assert_eq!(
        tokens_in(r#"["a\"1", 2, "\\", -3.5e2]"#),
        vec!["2", "-3.5e2"]
    );
    assert_eq!(tokens_in("[1, \"a\\"), vec!["1"]);
}
