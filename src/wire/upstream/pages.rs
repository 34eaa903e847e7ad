//! Following `nextCursor` through a list (`tools/list`, `prompts/list`, `resources/list`), the
//! one walker `audit` and the proxy share: it stops at a cursor it has seen before, at a page
//! identical to the one before (a server that ignores cursors), and after [`MAX_PAGES`] pages,
//! so a hostile server cannot keep a client paging forever.

use std::collections::HashSet;

use crate::config::Redactor;

/// Pages followed at most, against a server whose cursor never ends.
pub const MAX_PAGES: usize = 1000;

/// Every page of a list, as the server sent each `result`.
#[derive(Debug, Clone, Default)]
pub struct Listed {
    pub pages: Vec<String>,
    pub latency_ms: f64,
    /// A cursor brought back the page before it (the server ignores cursors).
    pub cursor_ignored: bool,
    /// Why the listing stopped before the server said it was done.
    pub stopped: Option<ListStop>,
}

/// Why a listing stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListStop {
    /// The server sent a cursor it had sent before (its pages go round in a circle).
    RepeatedCursor { cursor: String, pages: usize },
    /// The server was still sending cursors after [`MAX_PAGES`] pages.
    TooManyPages,
}

impl ListStop {
    /// What a message says of the stop; a cursor (server text) is quoted redacted, then cut, so
    /// a hostile one cannot flood a terminal nor leave part of a secret (no `Display`: every
    /// message that quotes a cursor goes through the redactor).
    pub fn describe(&self, redactor: &Redactor) -> String {
        match self {
            ListStop::RepeatedCursor { cursor, pages } => format!(
                "the server repeated cursor `{}` after {pages} pages (its pages go round in a circle)",
                redactor.preview(cursor, 60)
            ),
            ListStop::TooManyPages => {
                format!("the server was still sending cursors after {MAX_PAGES} pages")
            }
        }
    }
}

/// Follows `nextCursor` from the first page: ask for [`PageWalker::next`] until it says the
/// listing is over, handing each page to [`PageWalker::page`]. The listing stops early (with
/// [`Listed::stopped`] set, keeping the pages read) at a repeated cursor or after
/// [`MAX_PAGES`]; a page identical to the one before ends it with [`Listed::cursor_ignored`].
///
/// ```text
/// let mut walker = PageWalker::default();
/// while let Some(cursor) = walker.to_ask() {
///     let (raw, ms) = session.list_page(method, cursor).await?;
///     walker.page(raw.result_text(), ms);
/// }
/// let listed = walker.finish();
/// ```
#[derive(Debug)]
pub struct PageWalker {
    listed: Listed,
    seen: HashSet<String>,
    /// The cursor to ask with next (`Some(None)` for the first page), `None` when done.
    next: Option<Option<String>>,
}

impl Default for PageWalker {
    fn default() -> Self {
        PageWalker {
            listed: Listed::default(),
            seen: HashSet::new(),
            next: Some(None),
        }
    }
}

impl PageWalker {
    /// The cursor of the next page to ask for (`Some(None)`: the first page), or `None` when
    /// the listing is over.
    pub fn to_ask(&mut self) -> Option<Option<String>> {
        self.next.take()
    }

    /// The `result` of the page just asked for, and how long it took.
    pub fn page(&mut self, text: &str, latency_ms: f64) {
        let listed = &mut self.listed;
        listed.latency_ms += latency_ms;
        if listed.pages.last().is_some_and(|last| last == text) {
            listed.cursor_ignored = true;
            return;
        }
        let next = next_cursor(text);
        listed.pages.push(text.to_string());
        let Some(next) = next else {
            return;
        };
        if !self.seen.insert(next.clone()) {
            let pages = listed.pages.len();
            listed.stopped = Some(ListStop::RepeatedCursor {
                cursor: next,
                pages,
            });
        } else if listed.pages.len() >= MAX_PAGES {
            listed.stopped = Some(ListStop::TooManyPages);
        } else {
            self.next = Some(Some(next));
        }
    }

    /// The pages read.
    pub fn finish(self) -> Listed {
        self.listed
    }
}

/// A page's `nextCursor`, when it has a string one.
fn next_cursor(page: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Page {
        #[serde(rename = "nextCursor")]
        next_cursor: Option<serde_json::Value>,
    }
    let page: Page = serde_json::from_str(page).ok()?;
    page.next_cursor?.as_str().map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    /// A server whose page `i` (from cursor `c{i}`) names the cursor `next(i)`.
    fn walk(next: impl Fn(usize) -> Option<String>) -> (Listed, usize) {
        let mut asked = 0;
        let mut walker = PageWalker::default();
        while let Some(cursor) = walker.to_ask() {
            asked += 1;
            let i: usize = cursor.map_or(0, |c| c[1..].parse().unwrap());
            let page = match next(i) {
                Some(c) => format!(r#"{{"tools":[{{"name":"t{i}"}}],"nextCursor":"{c}"}}"#),
                None => format!(r#"{{"tools":[{{"name":"t{i}"}}]}}"#),
            };
            walker.page(&page, 1.0);
        }
        (walker.finish(), asked)
    }

    #[test]
    fn a_cycling_cursor_stops_at_the_first_repeat() {
        // c1 -> c2 -> c3 -> c1 ...
        let (listed, asked) = walk(|i| Some(format!("c{}", i % 3 + 1)));
        assert_eq!(asked, 4);
        assert_eq!(listed.pages.len(), 4);
        assert_eq!(
            listed.stopped,
            Some(ListStop::RepeatedCursor {
                cursor: "c1".into(),
                pages: 4
            })
        );
    }

    #[test]
    fn an_endless_cursor_stops_after_max_pages() {
        let (listed, asked) = walk(|i| Some(format!("c{}", i + 1)));
        assert_eq!((asked, listed.pages.len()), (MAX_PAGES, MAX_PAGES));
        assert_eq!(listed.stopped, Some(ListStop::TooManyPages));
    }

    #[test]
    fn a_finite_list_is_read_whole() {
        let (listed, asked) = walk(|i| (i < 4).then(|| format!("c{}", i + 1)));
        assert_eq!((asked, listed.pages.len(), listed.stopped), (5, 5, None));
        assert!(!listed.cursor_ignored);
    }

    #[test]
    fn a_long_cursor_is_cut_in_messages() {
        let stop = ListStop::RepeatedCursor {
            cursor: "\u{1b}[2J".to_string() + &"x".repeat(500),
            pages: 2,
        };
        let text = stop.describe(&Redactor::default());
        assert!(text.len() < 200 && !text.contains('\u{1b}'), "{text}");
    }
}
