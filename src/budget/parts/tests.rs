use super::json::CountMemo;
use super::*;
use crate::ground::tokens::Tokenizer;

#[test]
fn the_size_is_the_joined_texts_size() {
    let counter = PrefixCounter::new(Tokenizer::Cl100k);
    for texts in [
        vec!["a\n", "b"],
        vec!["", "x"],
        vec!["x", ""],
        vec!["a\n\n", "", "é\n"],
        vec!["", ""],
        vec!["one"],
    ] {
        let blocks: Vec<Value> = texts
            .iter()
            .map(|t| json!({"type": "text", "text": t}))
            .collect();
        let result = json!({ "content": blocks });
        let work = Work::parse(&result, &counter);
        let joined = texts.join("\n");
        assert_eq!(work.size(), Size::of(&joined), "{texts:?}");
        let with_note = format!("{joined}\nnote");
        assert_eq!(
            work.size_with(Some("note"), false),
            Size::of(&with_note),
            "{texts:?}"
        );
        let note_first = format!("note\n{joined}");
        assert_eq!(
            work.size_with(Some("note"), true),
            Size::of(&note_first),
            "{texts:?}"
        );
    }
}

#[test]
fn a_text_is_counted_once_for_every_limit_it_answers() {
    let counter = PrefixCounter::new(Tokenizer::Cl100k);
    let text = "{\"k\": \"the quick brown fox\"}".repeat(50);
    let exact = counter.count(&text);
    let counted = CountMemo::default();
    let mut calls = 0;
    let mut ask = |limit: usize| {
        counted.up_to(limit, |l| {
            calls += 1;
            counter.count_up_to(&text, l)
        })
    };
    // over a limit: known for that limit and every smaller one
    assert_eq!(ask(exact - 1), None);
    assert_eq!(ask(10), None);
    assert_eq!(ask(exact - 1), None);
    // a larger limit must be counted again, and then the exact count answers everything
    assert_eq!(ask(exact), Some(exact));
    assert_eq!(ask(exact + 100), Some(exact));
    assert_eq!(ask(3), None);
    assert_eq!(calls, 2);
}
