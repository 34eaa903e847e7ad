//! The user-facing documents (README.md and every page under docs/) hold together: every
//! relative link and image leads to a file or folder of the repository, every `#anchor` into a
//! Markdown file names one of its headings (GitHub's slugs), the README stays a short front page
//! (at most 300 lines), and none of them sends a reader into `../shared`, which someone who
//! clones the repository does not have.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::support::repo;

/// README.md and every `*.md` under docs/, folders included.
fn documents() -> Vec<PathBuf> {
    let mut docs = vec![repo().join("README.md")];
    let mut folders = vec![repo().join("docs")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                docs.push(path);
            }
        }
    }
    docs.sort();
    docs
}

/// The lines of a document outside fenced code blocks, with their numbers (1-based).
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push((i + 1, line));
        }
    }
    lines
}

/// A line without its inline code spans (`` `[a](b)` `` is code, not a link).
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let ticks = rest[start..].chars().take_while(|&c| c == '`').count();
        let fence = &rest[start..start + ticks];
        match rest[start + ticks..].find(fence) {
            Some(end) => rest = &rest[start + ticks + end + ticks..],
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The targets of every `[text](target)` and `![alt](target)` of a line: the part before any
/// space (a title) or the closing parenthesis, parentheses inside it balanced, `<...>` unwrapped.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code_spans(line);
    let mut targets = Vec::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let mut depth = 0;
        let mut end = after.len();
        for (i, c) in after.char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    end = i;
                    break;
                }
                ')' => depth -= 1,
                ' ' => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        let target = after[..end].trim_start_matches('<').trim_end_matches('>');
        targets.push(target.to_string());
        rest = &after[end..];
    }
    targets
}

/// GitHub's anchor for a heading's text: lowercase, every character that is not a letter, a
/// digit, `-`, `_` or a space dropped, spaces turned into `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every anchor of a Markdown file's headings; a repeated heading gets `-1`, `-2`, ... as on
/// GitHub.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&line[hashes..]);
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// What is wrong with one link of `doc`, if anything.
fn broken(doc: &Path, target: &str) -> Option<String> {
    if target.starts_with("http://")
        || target.starts_with("https://")
        || target.starts_with("mailto:")
    {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        doc.to_path_buf()
    } else {
        doc.parent().unwrap().join(path)
    };
    if !file.exists() {
        return Some(format!("{target}: {} does not exist", file.display()));
    }
    let anchor = anchor.filter(|_| file.extension().is_some_and(|e| e == "md"))?;
    let text = std::fs::read_to_string(&file).unwrap();
    if anchors(&text).contains(anchor) {
        None
    } else {
        Some(format!(
            "{target}: no heading of {} has the anchor #{anchor}",
            file.display()
        ))
    }
}

#[test]
fn every_relative_link_and_anchor_of_the_readme_and_docs_resolves() {
    let mut problems = Vec::new();
    let mut links = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (n, line) in prose_lines(&text) {
            for target in link_targets(line) {
                links += 1;
                if let Some(problem) = broken(&doc, &target) {
                    problems.push(format!("{}:{n}: {problem}", doc.display()));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
    // the README links every docs page, so there are dozens of links: none found means the
    // parser is broken, not the documents sound
    assert!(links > 30, "only {links} links found");
}

#[test]
fn the_readme_is_a_front_page_of_at_most_300_lines() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md is {lines} lines: move a topic to docs/"
    );
}

#[test]
fn no_user_document_points_into_the_shared_folder() {
    let mut hits = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.contains("../shared") {
                hits.push(format!("{}:{}: {line}", doc.display(), i + 1));
            }
        }
    }
    assert!(
        hits.is_empty(),
        "a clone has no ../shared:\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_link_checker_reads_links_images_code_and_anchors_as_github_does() {
    let line = "see [a](docs/x.md#the-lab) and ![c](img.png \"title\"), `[not](code)` [p](f(1).md)";
    assert_eq!(
        link_targets(line),
        ["docs/x.md#the-lab", "img.png", "f(1).md"]
    );
    assert_eq!(
        slug("The lab: what each client really sends (`mcp-budget lab`)"),
        "the-lab-what-each-client-really-sends-mcp-budget-lab"
    );
    let text = "# T\n## Exit codes\n```\n## not a heading\n```\n## Exit codes\n";
    let found = anchors(text);
    assert!(found.contains("exit-codes") && found.contains("exit-codes-1"));
    assert!(!found.contains("not-a-heading"));
    let doc = repo().join("README.md");
    assert_eq!(broken(&doc, "docs/ci.md"), None);
    assert!(broken(&doc, "docs/no-such-page.md").is_some());
    assert!(broken(&doc, "#no-such-heading").is_some());
}
