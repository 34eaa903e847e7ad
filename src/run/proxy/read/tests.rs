use super::*;

pub(super) fn store_with(text: &str) -> (tempfile::TempDir, SpillStore, String) {
    let dir = tempfile::tempdir().unwrap();
    let store = SpillStore::new(dir.path().to_path_buf(), 1 << 30);
    let h = store.save("srv", "scrape", "md", text.as_bytes()).unwrap();
    (dir, store, h.id)
}

#[test]
fn pages_and_grep_windows_stay_within_a_clients_bytes_and_lines() {
    let size = SizeLimits {
        bytes: Some(10_000),
        chars: None,
        lines: Some(256),
    };
    let within = |page: &str| page.len() <= 10_000 && page.lines().count() <= 256;
    // short lines: the line bound binds before the 8,000 tokens
    let many: String = (0..5000).map(|i| format!("{i}\n")).collect();
    // one long JSON line with a match every few hundred bytes: grep windows
    let one_line = (0..3000)
        .map(|i| {
            format!(
                "{{\"id\":{i},\"name\":\"needle {i}\",\"pad\":\"{}\"}}",
                "x".repeat(300)
            )
        })
        .collect::<Vec<_>>()
        .join(",");
    for (text, grep) in [(many.as_str(), None), (one_line.as_str(), Some("needle"))] {
        let (_dir, store, id) = store_with(text);
        let mut a = args(&id);
        a.grep = grep.map(String::from);
        let page = read_within(&store, &a, 8000, size, Tokenizer::Cl100k).unwrap();
        assert!(
            within(&page),
            "{} bytes, {} lines",
            page.len(),
            page.lines().count()
        );
        assert!(
            page.contains("continue with"),
            "{}",
            &page[page.len() - 200..]
        );
    }
}

pub(super) fn args(handle: &str) -> ReadArgs {
    ReadArgs {
        handle: handle.into(),
        start_line: None,
        max_lines: None,
        grep: None,
        start_char: None,
    }
}

/// `start_line=N` and `start_char=K` from a footer.
pub(super) fn continuation(footer: &str) -> (Option<usize>, Option<usize>) {
    let num = |key: &str| {
        footer.split(key).nth(1).map(|r| {
            r.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .unwrap()
        })
    };
    (num("start_line="), num("start_char="))
}

#[test]
fn paging_to_the_end_returns_the_whole_original() {
    let mut text: String = (1..=2000)
        .map(|i| format!("line {i}: the quick brown fox jumps over the lazy dog\n"))
        .collect();
    // and a line far longer than the budget (an inline image), in the middle
    text.insert_str(
        20_000,
        &format!("data:image/png;base64,{}\n", "iVBORw0KGgoé".repeat(3000)),
    );
    let (_d, store, id) = store_with(&text);
    let mut got = String::new();
    let mut a = args(&format!("mcp-budget://spill/{id}"));
    let mut pages = 0;
    loop {
        let page = read(&store, &a, 2000, Tokenizer::Cl100k).unwrap();
        assert!(
            Tokenizer::Cl100k.count(&page) <= 2000,
            "a page fits the budget"
        );
        let (body, footer) = page.rsplit_once("[mcp-budget: ").unwrap();
        pages += 1;
        let (line, at) = continuation(footer);
        // a line cut short continues on the next page
        got.push_str(if at.is_some() {
            body.strip_suffix('\n').unwrap()
        } else {
            body
        });
        match line {
            Some(n) => (a.start_line, a.start_char) = (Some(n), at),
            None => break,
        }
    }
    assert_eq!(got, text);
    assert!(pages > 5, "{pages}");
}

#[test]
fn grep_gives_numbered_lines_and_reads_are_confined() {
    let (_d, store, id) = store_with("alpha\nbeta\nalphabet\ngamma\n");
    let mut a = args(&id);
    a.grep = Some("^alpha".into());
    let page = read(&store, &a, 1000, Tokenizer::Cl100k).unwrap();
    assert!(
        page.starts_with("1: alpha\n3: alphabet\n[mcp-budget: 2 matching"),
        "{page}"
    );
    a.grep = Some("(".into());
    assert!(matches!(
        read(&store, &a, 1000, Tokenizer::Cl100k),
        Err(ReadError::Pattern(_))
    ));
    for evil in ["../etc/passwd", "srv/../../x", "/etc/passwd", "srv/nope.md"] {
        assert_eq!(
            read(&store, &args(evil), 1000, Tokenizer::Cl100k),
            Err(ReadError::Unknown(evil.into()))
        );
    }
    let mut far = args(&id);
    far.start_line = Some(99);
    assert!(matches!(
        read(&store, &far, 1000, Tokenizer::Cl100k),
        Err(ReadError::Arguments(_))
    ));
}

/// Every line of `text` as a page shows it (`str::lines`, each ended by `\n`).
fn normalized(text: &str) -> String {
    text.lines().map(|l| format!("{l}\n")).collect()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Streamed pages: paging to the end gives back every line, each page fits, every
    /// footer has the right total, and grep pages give exactly the matching lines.
    #[test]
    fn streamed_pages_give_back_every_line(
        lines in proptest::collection::vec(
            proptest::prop_oneof![
                "[a-z ]{0,40}",
                "[a-zé日本 ]{0,12}\r",
                "x{300,3000}",
                proptest::strategy::Just(String::new()),
            ],
            0..120,
        ),
        trailing_newline in proptest::bool::ANY,
        budget in 150usize..1200,
    ) {
        let mut text = lines.join("\n");
        if trailing_newline && !text.is_empty() {
            text.push('\n');
        }
        let (_d, store, id) = store_with(&text);
        let total = text.lines().count();
        let mut a = args(&id);
        let mut got = String::new();
        for _ in 0..10_000 {
            let page = read(&store, &a, budget, Tokenizer::Cl100k).unwrap();
            proptest::prop_assert!(Tokenizer::Cl100k.count(&page) <= budget, "{page}");
            let (body, footer) = page.rsplit_once("[mcp-budget: ").unwrap();
            let of_total = format!(" of {total}");
            proptest::prop_assert!(
                footer.contains(&of_total) || footer.contains("longer than the budget"),
                "{footer}"
            );
            let (line, at) = continuation(footer);
            got.push_str(if at.is_some() { body.strip_suffix('\n').unwrap() } else { body });
            match line {
                Some(n) => (a.start_line, a.start_char) = (Some(n), at),
                None => break,
            }
        }
        proptest::prop_assert_eq!(got, normalized(&text));

        let mut g = args(&id);
        g.grep = Some("^[a-c]".into());
        let mut matched = String::new();
        for _ in 0..10_000 {
            let page = read(&store, &g, budget, Tokenizer::Cl100k).unwrap();
            let (body, footer) = page.rsplit_once("[mcp-budget: ").unwrap();
            matched.push_str(body);
            match continuation(footer).0 {
                Some(n) => g.start_line = Some(n),
                None => break,
            }
        }
        let re = regex::Regex::new("^[a-c]").unwrap();
        let want: String = text
            .lines()
            .enumerate()
            .filter(|(_, l)| re.is_match(l))
            .map(|(i, l)| format!("{}: {l}\n", i + 1))
            .collect();
        // a matching line longer than the budget is shown cut: compare line numbers
        let numbers = |s: &str| -> Vec<String> {
            s.lines().filter_map(|l| l.split_once(": ").map(|(n, _)| n.to_string())).collect()
        };
        proptest::prop_assert_eq!(numbers(&matched), numbers(&want));
    }
}

#[test]
fn start_line_past_the_end_names_the_line_count() {
    for (text, start, ok) in [
        ("", 1, true),
        ("", 2, false),
        ("a\nb", 2, true),
        ("a\nb", 3, false),
        ("a\nb\n", 3, false),
        ("a\n\n", 2, true),
    ] {
        let (_d, store, id) = store_with(text);
        let mut a = args(&id);
        a.start_line = Some(start);
        let got = read(&store, &a, 1000, Tokenizer::Cl100k);
        assert_eq!(got.is_ok(), ok, "{text:?} from {start}: {got:?}");
        if let Err(e) = got {
            let want = format!("({} lines)", text.lines().count());
            assert!(e.to_string().contains(&want), "{e}");
        }
    }
}
