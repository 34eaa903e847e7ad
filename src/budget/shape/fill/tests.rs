//! The fill's promises on generated JSON: valid JSON within the budget, every kept scalar the
//! original's, cut strings marked, and the budget filled.

use super::*;
use proptest::prelude::*;
use serde_json::Value;

/// Every scalar of `v`, numbers as their text, strings as they read.
fn scalars(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Array(a) => a.iter().for_each(|i| scalars(i, out)),
        Value::Object(m) => m.values().for_each(|i| scalars(i, out)),
        other => out.push(other.clone()),
    }
}

/// Each scalar of `got` is one of `original`'s, or a string marked cut whose start is one.
fn faithful(original: &Value, got: &Value) -> Result<(), String> {
    let mut want = Vec::new();
    scalars(original, &mut want);
    let mut have = Vec::new();
    scalars(got, &mut have);
    for s in have {
        let ok = want.contains(&s)
            || s.as_str()
                .and_then(|t| t.strip_suffix('…'))
                .is_some_and(|head| {
                    want.iter()
                        .any(|w| w.as_str().is_some_and(|w| w.starts_with(head) && w != head))
                });
        if !ok {
            return Err(format!("{s} is not in the original"));
        }
    }
    Ok(())
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| Value::Number(n.into())),
        (-1e12f64..1e12)
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "[a-zé東\"\\\\\n \u{1F600}]{0,60}".prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 400, 30, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..30).prop_map(Value::Array),
            proptest::collection::btree_map("[a-d]{1,3}", inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn any_json_at_any_budget_is_valid_faithful_and_within_it(
        v in json(), pretty in any::<bool>(), budget in 0usize..3000
    ) {
        let text = if pretty { serde_json::to_string_pretty(&v).unwrap() } else { v.to_string() };
        prop_assume!(matches!(v, Value::Array(_) | Value::Object(_)));
        let mut f = Filler::new(&text, Caps::default()).unwrap();
        let (out, report) = f.fill(budget);
        let got: Value = serde_json::from_str(&out).map_err(|e| TestCaseError::fail(format!("{e}: {out}")))?;
        faithful(&v, &got).map_err(TestCaseError::fail)?;
        if budget >= f.whole_bytes() {
            prop_assert_eq!(&got, &v);
            prop_assert!(report.is_empty());
        } else {
            // cut and said so, or shorter; an empty container (`[]`, `{}`) is the least there is
            prop_assert!(!report.is_empty() || out.len() < f.whole_bytes() || out.len() == 2, "{}", out);
        }
    }
}

fn rows(n: usize) -> String {
    let rows: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"id":{i},"title":"Row {i} title words","amount":{}.{:02},"body":"alpha beta gamma delta eps"}}"#, i * 7, i % 100))
        .collect();
    format!("[{}]", rows.join(","))
}

#[test]
fn a_long_list_keeps_as_many_whole_rows_as_fill_the_budget() {
    let text = rows(60_000);
    let mut f = Filler::new(&text, Caps::default()).unwrap();
    let (out, report) = f.fill(32_000);
    assert!(out.len() <= 32_000 && out.len() >= 31_000, "{}", out.len());
    let got: Vec<Value> = serde_json::from_str(&out).unwrap();
    let a = report.arrays[""];
    assert_eq!((a.total, a.whole + a.inside), (60_000, got.len()));
    assert!(a.whole > 300, "{a:?}");
    // whole rows are the original's first ones, byte for byte
    let original: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(got[..a.whole], original[..a.whole]);
    let said = match a.inside {
        0 => format!("(top level): items 1-{} of 60,000 kept whole", a.whole),
        i => format!(
            "(top level): items 1-{} of 60,000 kept, {i} of them cut inside",
            a.whole + i
        ),
    };
    assert_eq!(report.describe()[0], said);
}

#[test]
fn few_huge_items_share_the_budget_and_numbers_stay_as_written() {
    let big = "word ".repeat(20_000);
    let text = format!(
        r#"{{"total": 3, "price": 9007199254740993.72, "items": [{{"id": 1, "text": "{big}"}}, {{"id": 2, "text": "{big}"}}, {{"id": 3, "text": "short"}}]}}"#
    );
    let mut f = Filler::new(&text, Caps::default()).unwrap();
    let (out, report) = f.fill(4_000);
    assert!(out.len() <= 4_000 && out.len() > 3_600, "{}", out.len());
    assert!(out.contains(r#""price":9007199254740993.72"#), "{out}");
    let got: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(got["items"].as_array().unwrap().len(), 3);
    assert_eq!(got["items"][2]["text"], "short");
    let t0 = got["items"][0]["text"].as_str().unwrap();
    assert!(t0.ends_with("word…"), "{t0}");
    assert_eq!(report.strings_cut, 2);
}

#[test]
fn an_object_of_too_many_keys_keeps_its_first_entries() {
    let entries: Vec<String> = (0..5_000).map(|i| format!(r#""key{i}": {i}"#)).collect();
    let text = format!("{{{}}}", entries.join(", "));
    let mut f = Filler::new(&text, Caps::default()).unwrap();
    let (out, report) = f.fill(2_000);
    assert!(out.len() <= 2_000 && out.len() > 1_800, "{}", out.len());
    let got: serde_json::Map<String, Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(got.keys().next().unwrap(), "key0");
    assert_eq!(report.objects[""], (1, got.len(), 5_000));
}

#[test]
fn a_policys_caps_hold_beside_the_budget() {
    let text = format!(
        r#"{{"deep": {{"a": {{"b": [1, 2]}}}}, "rows": [{}], "s": "{}"}}"#,
        (0..50)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        "word ".repeat(100)
    );
    let caps = Caps {
        items: Some(5),
        string_bytes: Some(40),
        depth: Some(2),
    };
    let mut f = Filler::new(&text, caps).unwrap();
    let (out, report) = f.fill(usize::MAX);
    let got: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(got["rows"], serde_json::json!([0, 1, 2, 3, 4]));
    assert_eq!(got["deep"], serde_json::json!({"a": {}}));
    let s = got["s"].as_str().unwrap();
    assert!(s.len() <= 40 + "…".len() && s.ends_with('…'), "{s}");
    assert_eq!(report.arrays["rows"].whole, 5);
    assert_eq!((report.emptied, report.strings_cut), (1, 1));
}

/// A value that cannot be cut (a number) is left out where what is left is less than it: the
/// fill once kept the whole object, 68 bytes of a 53-byte budget (found by the proptest above).
#[test]
fn an_uncuttable_last_value_is_dropped_not_kept_over_the_budget() {
    let text = r#"{"a":-100000000000,"aa":false,"aaa":null,"aba":-1000000000000000000}"#;
    let mut f = Filler::new(text, Caps::default()).unwrap();
    let (out, report) = f.fill(53);
    assert_eq!(out, r#"{"a":-100000000000,"aa":false,"aaa":null}"#);
    assert_eq!(
        report.describe(),
        ["(top level): the first 3 of 4 keys kept"]
    );
}
