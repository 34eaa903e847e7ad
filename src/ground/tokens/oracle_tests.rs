//! Exactness against an independent implementation: the `bpe-openai` crate (a dev-dependency,
//! itself checked against tiktoken) counts the same adversarial texts, for both encodings; and
//! the chunked count on several threads equals the count on one.

use proptest::prelude::*;

use super::cuts::chunks;
use super::Encoding;

fn encodings() -> [(&'static Encoding, &'static bpe_openai::Tokenizer); 2] {
    [
        (Encoding::cl100k(), bpe_openai::cl100k_base()),
        (Encoding::o200k(), bpe_openai::o200k_base()),
    ]
}

/// Texts made of what makes pre-tokenisation and merging hard.
fn adversarial() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("\n".to_string()),
        Just("\r\n".to_string()),
        Just("\r".to_string()),
        Just(" ".to_string()),
        "[ ]{2,40}",
        "[ \t\u{a0}\u{3000}]{1,6}",
        "\n[ \t]{1,16}",
        "\r\n {2,8}",
        "[ \n\r\t]{1,8}",
        "[a-zA-Z]{1,14}",
        "[A-Z][a-z]{1,8}[A-Z][a-z]{1,8}",
        "[0-9]{1,9}",
        "'(s|t|re|ve|m|ll|d|S|T|RE|LL)",
        "[.,;:!?'\"(){}<>\\[\\]/\\\\|=+*&^%$#@~`-]{1,5}",
        "[éüßçñ]{1,4}",
        "[世界東京日本語]{1,4}",
        "[😀🎉👍🏽]{1,3}",
        "[\u{301}\u{308}\u{2028}\u{85}\u{0b}\u{0c}\u{200b}]{1,2}",
        "[аб вгд]{1,8}",
        "<\\|endoftext\\|>",
        "(a|b|ab|ba){20,200}",
        "[xyz0-9]{100,400}",
    ];
    proptest::collection::vec(piece, 0..400).prop_map(|v| v.concat())
}

/// The same without line breaks (one long line).
fn one_line() -> impl Strategy<Value = String> {
    adversarial().prop_map(|t| t.replace(['\n', '\r'], " "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn counts_equal_the_oracle(text in adversarial()) {
        for (ours, oracle) in encodings() {
            prop_assert_eq!(ours.count(&text), oracle.count(text.as_str()));
        }
    }

    #[test]
    fn counts_equal_the_oracle_on_one_line(text in one_line()) {
        for (ours, oracle) in encodings() {
            prop_assert_eq!(ours.count(&text), oracle.count(text.as_str()));
        }
    }

    #[test]
    fn encodes_like_the_oracle(text in adversarial()) {
        for (ours, oracle) in encodings() {
            let tokens = ours.encode(&text);
            prop_assert_eq!(&tokens, &oracle.encode(text.as_str()));
            prop_assert_eq!(ours.decode(&tokens), text.as_bytes());
        }
    }

    #[test]
    fn chunked_counts_equal_the_whole(text in adversarial(), n in 2usize..6) {
        for (ours, _) in encodings() {
            let parts = chunks(&text, n);
            prop_assert_eq!(parts.concat(), text.as_str());
            let sum: usize = parts.iter().map(|p| ours.count_on_this_thread(p)).sum();
            prop_assert_eq!(sum, ours.count_on_this_thread(&text));
        }
    }

    #[test]
    fn count_up_to_is_exact_or_over(text in adversarial(), limit in 0usize..2000) {
        for (ours, _) in encodings() {
            let whole = ours.count(&text);
            let expected = (whole <= limit).then_some(whole);
            prop_assert_eq!(ours.count_up_to(&text, limit), expected);
        }
    }
}

#[test]
fn long_single_pieces_equal_the_oracle() {
    let texts = [
        "a".repeat(200_000),
        " ".repeat(50_000),
        "ab".repeat(40_000),
        "x".repeat(3_000) + &"\n".repeat(3_000),
        "\u{301}".repeat(20_000),
    ];
    for text in &texts {
        for (ours, oracle) in encodings() {
            assert_eq!(ours.count(text), oracle.count(text.as_str()));
        }
    }
}

#[test]
fn a_large_text_counted_on_threads_equals_one_thread() {
    let line = "    let x = foo(bar, \"baz\"); // 12345 don't\r\n\tIndented  \u{a0} text é世界\n";
    let text = line.repeat(2 * 1024 * 1024 / line.len());
    for (ours, oracle) in encodings() {
        let whole = ours.count_on_this_thread(&text);
        assert_eq!(ours.count(&text), whole);
        assert_eq!(whole, oracle.count(text.as_str()));
    }
}
