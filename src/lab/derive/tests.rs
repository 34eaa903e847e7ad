use super::*;
use crate::ground::tokens::Tokenizer;
use crate::lab::delivered::Delivered;
use crate::lab::probe::{content_text, judge};
use crate::lab::shapes;

/// Judge what a simulated client showed of a lab result, as a real run is judged.
fn judged(
    result: &serde_json::Value,
    shown: String,
) -> std::future::Ready<Result<ProbeOutcome, String>> {
    let d = Delivered::of_text(shown);
    std::future::ready(Ok(judge(
        "lab_result",
        result,
        Some(&d),
        std::path::Path::new("/x"),
        &[],
        Tokenizer::Cl100k,
    )))
}

/// A simulated client: whole up to `limit` units of `unit`, above it the first `head` and the
/// last `tail` characters with a marker; each run judged like a real one.
fn client(
    shape: Shape,
    unit: &'static str,
    limit: usize,
    head: usize,
    tail: usize,
) -> impl FnMut(usize) -> std::future::Ready<Result<ProbeOutcome, String>> {
    move |chars| {
        let result = shapes::result(shape, chars);
        let text = content_text(&result);
        let size = Sizes::of(&text, Tokenizer::Cl100k);
        let delivered = if size.in_unit(unit) <= limit {
            text.clone()
        } else {
            let cs: Vec<char> = text.chars().collect();
            let h: String = cs[..head.min(cs.len())].iter().collect();
            let t: String = cs[cs.len().saturating_sub(tail)..].iter().collect();
            format!("{h}\n...[{} removed]...\n{t}", cs.len() - head - tail)
        };
        judged(&result, delivered)
    }
}

/// A batch runner from a one-size one: each size of a run judged in turn.
fn each<F>(
    mut one: F,
) -> impl FnMut(Vec<usize>) -> std::future::Ready<Result<Vec<ProbeOutcome>, String>>
where
    F: FnMut(usize) -> std::future::Ready<Result<ProbeOutcome, String>>,
{
    move |sizes| std::future::ready(sizes.into_iter().map(|c| one(c).into_inner()).collect())
}

fn block<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn a_character_threshold_is_found_to_the_round_number_with_its_head_and_tail() {
    let mut rules = vec![
        block(bisect(
            Shape::Lines,
            400_000,
            None,
            1,
            each(client(Shape::Lines, "chars", 40_000, 8_000, 32_000)),
        ))
        .unwrap()
        .remove(0),
        block(bisect(
            Shape::Wide,
            400_000,
            None,
            1,
            each(client(Shape::Wide, "chars", 40_000, 8_000, 32_000)),
        ))
        .unwrap()
        .remove(0),
    ];
    settle_units(&mut rules);
    for r in &rules {
        assert_eq!(
            (r.unit.as_deref(), r.threshold),
            (Some("chars"), Some(40_000)),
            "{r:?}"
        );
        assert_eq!(
            (r.head, r.tail, r.delivery),
            (8_000, 32_000, Some(Delivery::Cut))
        );
        let (lo, hi) = (r.whole_up_to.unwrap().chars, r.cut_from.unwrap().chars);
        assert!(lo <= 40_000 && hi > 40_000 && hi - lo <= 400, "{lo}..{hi}");
        assert!(r.marker.contains("removed"), "{}", r.marker);
        assert!(r.runs <= 20, "{} runs", r.runs);
    }
}

#[test]
fn wide_characters_tell_a_byte_threshold_from_a_character_one() {
    let mut rules = vec![
        block(bisect(
            Shape::Lines,
            400_000,
            None,
            1,
            each(client(Shape::Lines, "bytes", 10_000, 3_000, 3_000)),
        ))
        .unwrap()
        .remove(0),
        block(bisect(
            Shape::Wide,
            400_000,
            None,
            1,
            each(client(Shape::Wide, "bytes", 10_000, 1_000, 1_000)),
        ))
        .unwrap()
        .remove(0),
    ];
    settle_units(&mut rules);
    assert_eq!(rules[0].unit.as_deref(), Some("bytes"), "{:?}", rules[0]);
    assert_eq!(rules[1].unit.as_deref(), Some("bytes"), "{:?}", rules[1]);
    assert_eq!(rules[0].threshold, Some(10_000));
    assert!(rules.iter().all(|r| r.unit_also.is_empty()), "{rules:?}");
    // 10,000 bytes of mostly 3-byte characters is far fewer than 10,000 characters
    let wide = rules[1].whole_up_to.unwrap();
    assert!(
        wide.chars < 4_000 && (9_800..=10_000).contains(&wide.bytes),
        "{wide:?}"
    );
}

#[test]
fn ascii_text_alone_says_it_cannot_tell_bytes_from_characters() {
    let mut rules = block(bisect(
        Shape::Lines,
        400_000,
        None,
        1,
        each(client(Shape::Lines, "bytes", 10_000, 3_000, 3_000)),
    ))
    .unwrap();
    settle_units(&mut rules);
    // the bisection's interval reads the same in chars and bytes: the unit is a guess
    assert_eq!(rules[0].unit.as_deref(), Some("chars"));
    assert_eq!(rules[0].unit_also, ["bytes"]);
}

#[test]
fn a_client_that_never_cuts_has_no_threshold() {
    let mut rules = block(bisect(
        Shape::Lines,
        64_000,
        None,
        1,
        each(client(Shape::Lines, "chars", usize::MAX, 0, 0)),
    ))
    .unwrap();
    assert_eq!(rules.len(), 1);
    settle_units(&mut rules);
    assert_eq!(
        (
            rules[0].unit.as_deref(),
            rules[0].threshold,
            rules[0].cut_from
        ),
        (None, None, None)
    );
    assert_eq!(rules[0].whole_up_to.unwrap().chars, 64_000);
}

#[test]
fn round_numbers_are_taken_from_the_interval() {
    assert_eq!(round_in(39_900, 40_050), 40_000);
    assert_eq!(round_in(50_000, 51_000), 50_000);
    assert_eq!(round_in(8_100, 8_300), 8_192);
    assert_eq!(round_in(1_234, 1_236), 1_234);
}

#[test]
fn shapes_that_agree_narrow_the_threshold_to_their_common_interval() {
    // lines alone would round to 51,000; wide's interval holds only 51,200 (50 KiB) of both
    let size = |bytes| Sizes {
        chars: bytes,
        bytes,
        tokens: bytes / 4,
        lines: bytes / 40,
    };
    let wide = |bytes: usize| Sizes {
        chars: bytes / 3,
        bytes,
        tokens: bytes / 3,
        lines: bytes / 100,
    };
    let rule = |lo, hi| ShapeRule {
        unit_also: Vec::new(),
        shape: Shape::Lines,
        stage: 1,
        unit: None,
        threshold: None,
        whole_up_to: Some(lo),
        cut_from: Some(hi),
        delivery: Some(Delivery::Cut),
        head: 0,
        tail: 0,
        file: false,
        marker: String::new(),
        sent: None,
        runs: 1,
    };
    let mut rules = vec![
        rule(size(50_900), size(51_400)),
        rule(wide(51_150), wide(51_700)),
    ];
    settle_units(&mut rules);
    assert_eq!(
        (rules[0].unit.as_deref(), rules[0].threshold),
        (Some("bytes"), Some(51_200))
    );
    assert_eq!(
        (rules[1].unit.as_deref(), rules[1].threshold),
        (Some("bytes"), Some(51_200))
    );
}

#[test]
fn a_preview_that_becomes_an_error_further_up_is_a_second_rule() {
    // whole up to 50,000 chars, a 2,000-char preview up to 400,000, an error message above
    let run = |chars: usize| {
        let result = shapes::result(Shape::Lines, chars);
        let text = content_text(&result);
        let shown = match text.len() {
            n if n <= 50_000 => text.clone(),
            n if n <= 400_000 => format!("Output too large. Preview:\n{}", &text[..2_000]),
            _ => "Error: result exceeds maximum allowed tokens".to_string(),
        };
        judged(&result, shown)
    };
    let mut rules = block(bisect(Shape::Lines, 1_000_000, None, 1, each(run))).unwrap();
    settle_units(&mut rules);
    assert_eq!(rules.len(), 2, "{rules:?}");
    assert_eq!(
        (rules[0].stage, rules[0].delivery, rules[0].head),
        (1, Some(Delivery::Cut), 2_000)
    );
    assert_eq!(
        (rules[1].stage, rules[1].delivery, rules[1].head),
        (2, Some(Delivery::Error), 0)
    );
    assert_eq!(rules[0].threshold, Some(50_000));
    assert_eq!(rules[1].threshold, Some(400_000));
    assert_eq!(
        rules[1].marker,
        "Error: result exceeds maximum allowed tokens"
    );
}

/// A profile's boundaries tried first: a profile that holds is confirmed in two runs, one that
/// moved still finds the client's boundary (issue 39: a full derive under 5 minutes).
#[test]
fn a_hint_that_holds_is_confirmed_in_two_runs_and_a_wrong_one_still_finds_the_boundary() {
    let derive = |hint| {
        block(bisect(
            Shape::Lines,
            400_000,
            Some((hint, Some(Hint::Never))),
            1,
            each(client(Shape::Lines, "chars", 40_000, 8_000, 32_000)),
        ))
        .unwrap()
    };
    let right = derive(Hint::At(39_950));
    assert_eq!(right.len(), 1, "{right:?}");
    let (lo, hi) = (
        right[0].whole_up_to.unwrap().chars,
        right[0].cut_from.unwrap().chars,
    );
    assert!(lo <= 40_000 && hi > 40_000 && hi - lo <= 400, "{lo}..{hi}");
    // two runs at the boundary, one at the largest size to see nothing changes past it
    assert_eq!(right[0].runs, 3, "{right:?}");
    let unhinted = block(bisect(
        Shape::Lines,
        400_000,
        None,
        1,
        each(client(Shape::Lines, "chars", 40_000, 8_000, 32_000)),
    ))
    .unwrap();
    assert!(unhinted[0].runs >= 10, "{unhinted:?}");
    // a profile a little off (Codex's 12,000 bytes are 11,970 of a result): a run or two more
    for near in [Hint::At(40_100), Hint::At(39_500)] {
        let found = derive(near);
        assert!(found[0].runs <= 5, "{near:?}: {} runs", found[0].runs);
        assert!(found[0].cut_from.unwrap().chars > 40_000);
    }
    for wrong in [Hint::At(12_000), Hint::At(90_000), Hint::Never] {
        let found = derive(wrong);
        let (lo, hi) = (
            found[0].whole_up_to.unwrap().chars,
            found[0].cut_from.unwrap().chars,
        );
        assert!(
            lo <= 40_000 && hi > 40_000 && hi - lo <= 400,
            "{wrong:?}: {lo}..{hi}"
        );
        assert_eq!(found[0].head, 8_000);
    }
}

/// Several sizes in one client run (issue 39: a full derive under 5 minutes): the same rules
/// as one size a run, in fewer runs; a hint that holds is settled in one run, the search past
/// it asked in the same run; a run that ends early (a prefix of its sizes) still finds it.
#[test]
fn sizes_batched_in_one_run_find_the_same_rules_in_fewer_runs() {
    let derive = |hints, batch| {
        let mut rules = block(bisect(
            Shape::Lines,
            400_000,
            hints,
            batch,
            each(client(Shape::Lines, "chars", 40_000, 8_000, 32_000)),
        ))
        .unwrap();
        settle_units(&mut rules);
        rules
    };
    let found = |r: &ShapeRule| (r.unit.clone(), r.threshold, r.head, r.tail, r.delivery);
    let one = derive(None, 1);
    for batch in [2, 3, 4, 8] {
        let many = derive(None, batch);
        assert_eq!(many.len(), 1);
        assert_eq!(found(&many[0]), found(&one[0]), "batch {batch}");
        assert!(many[0].runs < one[0].runs, "batch {batch}: {many:?}");
    }
    assert_eq!(found(&one[0]).1, Some(40_000));
    // a profile that holds: one run of four calls (39,550, 39,950, 40,350 and the top)
    let hinted = derive(Some((Hint::At(39_950), Some(Hint::Never))), 4);
    assert_eq!(found(&hinted[0]), found(&one[0]));
    assert_eq!(hinted[0].runs, 1, "{hinted:?}");
    // a client that ends after the first two calls of every run
    let mut inner = client(Shape::Lines, "chars", 40_000, 8_000, 32_000);
    let two = move |sizes: Vec<usize>| {
        let got: Vec<ProbeOutcome> = sizes
            .into_iter()
            .take(2)
            .map(|c| inner(c).into_inner().unwrap())
            .collect();
        std::future::ready(Ok::<_, String>(got))
    };
    let mut rules = block(bisect(Shape::Lines, 400_000, None, 4, two)).unwrap();
    settle_units(&mut rules);
    assert_eq!(found(&rules[0]), found(&one[0]));
    // a run that measured nothing is an error, not a loop
    let none = |_: Vec<usize>| std::future::ready(Ok::<_, String>(Vec::new()));
    let e = block(bisect(Shape::Lines, 400_000, None, 4, none)).unwrap_err();
    assert!(e.contains("measured nothing"), "{e}");
}

/// A client that never delivers the shape whole at any size (an image it drops): two runs
/// one a run, one in a batch, where the walk past it used to double up to the top.
#[test]
fn a_shape_never_whole_is_settled_at_the_smallest_size_and_the_top() {
    let dropped = || {
        each(|chars: usize| {
            let result = shapes::result(Shape::Lines, chars);
            judged(&result, "[image omitted]".to_string())
        })
    };
    let hints = Some((Hint::At(SMALLEST), Some(Hint::Never)));
    let one = block(bisect(Shape::Lines, 4_000_000, hints, 1, dropped())).unwrap();
    assert_eq!(one.len(), 1, "{one:?}");
    assert_eq!(one[0].whole_up_to, None);
    assert_eq!(one[0].cut_from.unwrap().chars, SMALLEST);
    assert_eq!(one[0].runs, 2, "{one:?}");
    let many = block(bisect(Shape::Lines, 4_000_000, hints, 4, dropped())).unwrap();
    assert_eq!((many[0].cut_from, many[0].runs), (one[0].cut_from, 1));
    // without the profile's hint the search doubles up to the top
    let plain = block(bisect(Shape::Lines, 4_000_000, None, 1, dropped())).unwrap();
    assert!(plain[0].runs > 10, "{plain:?}");
}
