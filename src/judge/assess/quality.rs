//! What a model is sent of a result, judged against the original: how much of the budget it
//! fills, how many whole items of the result's main list it holds, whether JSON stayed JSON
//! (or says it is a preview), whether a number was cut in two, and how many planted facts
//! (needles) it shows. The same judge for the engine's output and each client's own cut.

use std::collections::HashSet;

use crate::budget::scan::{items, push_compact, skip_ws, value_end};
use crate::measure::is_json_text;

/// How a view of a JSON result reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JsonForm {
    /// The result is not JSON.
    NotJson,
    /// Valid JSON.
    Valid,
    /// Not JSON, and it says it is a cut (a note or the client's marker).
    LabelledPreview,
    /// Not JSON, and nothing says so.
    Invalid,
}

/// One view judged.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Judged {
    /// Of a result over the budget: the view's tokens over the budget.
    pub fill: Option<f64>,
    /// Whole items of the original's main list found in the view, and the list's length.
    pub items: Option<(usize, usize)>,
    pub json: JsonForm,
    /// Where the view ends inside a number of the original (`…900719925`), if it does.
    pub cut_number: Option<String>,
    /// Planted facts the view shows, of those planted.
    pub needles: Option<(usize, usize)>,
}

/// What is judged: the original text, the view's text and tokens, and the budget.
pub struct View<'a> {
    pub original: &'a str,
    /// The view's body (the result's text, without the engine's note).
    pub body: &'a str,
    pub tokens: usize,
    /// The view says it is cut (a note, a client's marker).
    pub labelled: bool,
}

/// Judge `view` at `budget`, the original costing `tokens_before`; `needles` were planted.
pub fn judge(view: &View, budget: usize, tokens_before: usize, needles: &[String]) -> Judged {
    let json_in = is_json_text(view.original);
    let json = match (json_in, is_json_text(view.body)) {
        (false, _) => JsonForm::NotJson,
        (true, true) => JsonForm::Valid,
        (true, false) if view.labelled => JsonForm::LabelledPreview,
        (true, false) => JsonForm::Invalid,
    };
    Judged {
        fill: (tokens_before > budget && budget > 0).then(|| view.tokens as f64 / budget as f64),
        items: json_in
            .then(|| whole_items(view.original, view.body))
            .flatten(),
        json,
        cut_number: cut_number(view.original, view.body),
        needles: (!needles.is_empty()).then(|| {
            let shown = needles
                .iter()
                .filter(|n| view.body.contains(n.as_str()))
                .count();
            (shown, needles.len())
        }),
    }
}

/// The original's main list: the top-level array, or the longest array one level down.
fn main_list(text: &str) -> Option<Vec<(usize, usize)>> {
    let b = text.as_bytes();
    let start = skip_ws(b, 0);
    let root = (start, value_end(b, start));
    match b.get(start)? {
        b'[' => Some(items(b, root)),
        b'{' => crate::budget::scan::entries(b, root)
            .into_iter()
            .filter(|(_, v)| b[v.0] == b'[')
            .map(|(_, v)| items(b, v))
            .max_by_key(Vec::len),
        _ => None,
    }
}

/// How many of the original's main list's items appear whole in `body` (written compactly,
/// each where an item may start: after `[` or `,`), and how many it has.
fn whole_items(original: &str, body: &str) -> Option<(usize, usize)> {
    let list = main_list(original)?;
    let mut set = HashSet::with_capacity(list.len());
    for span in &list {
        let mut s = String::new();
        push_compact(original, *span, &mut s);
        set.insert(s);
    }
    let b = body.as_bytes();
    let mut found = 0;
    let mut i = 0;
    while i < b.len() {
        let starts = matches!(
            b[i],
            b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
        );
        let after = b[..i]
            .iter()
            .rev()
            .find(|c| !c.is_ascii_whitespace())
            .is_some_and(|c| matches!(c, b'[' | b','));
        if starts && after {
            let end = value_end(b, i);
            if end <= b.len() {
                let mut s = String::new();
                push_compact(body, (i, end), &mut s);
                if set.contains(&s) {
                    found += 1;
                    i = end;
                    continue;
                }
            }
        }
        i += 1;
    }
    Some((found.min(list.len()), list.len()))
}

/// Where `body` starts as the original does and stops inside one of its numbers: the digits
/// shown before the cut (`…900719925`).
fn cut_number(original: &str, body: &str) -> Option<String> {
    let common = original
        .bytes()
        .zip(body.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    if common == 0 || common >= original.len() {
        return None;
    }
    let (o, next) = (original.as_bytes(), original.as_bytes()[common]);
    let digits = o[..common]
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .count();
    let word = common
        .checked_sub(digits + 1)
        .is_some_and(|i| o[i].is_ascii_alphabetic() || o[i] == b'_');
    let inside =
        digits > 0 && !word && (next.is_ascii_digit() || matches!(next, b'.' | b'e' | b'E'));
    inside.then(|| {
        let from = common.saturating_sub(20);
        let from = (from..common)
            .find(|&i| original.is_char_boundary(i))
            .unwrap_or(common);
        format!("…{}", &original[from..common])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_is_judged_by_what_it_holds() {
        let original =
            r#"[{"id":1,"amount":9007199254740993.72},{"id":2,"amount":5},{"id":3,"amount":6}]"#;
        let judged = |body: &str, labelled| {
            let v = View {
                original,
                body,
                tokens: 10,
                labelled,
            };
            judge(&v, 20, 40, &["amount\":5".to_string()])
        };
        // a head cut inside the first number: a wrong value, unlabelled
        let cut = judged(r#"[{"id":1,"amount":900719925"#, false);
        assert_eq!(cut.cut_number.as_deref(), Some(r#"…1,"amount":900719925"#));
        assert_eq!(cut.json, JsonForm::Invalid);
        assert_eq!(cut.items, Some((0, 3)));
        assert_eq!(cut.fill, Some(0.5));
        // whole items, valid JSON
        let whole = judged(
            r#"[{"id":1,"amount":9007199254740993.72},{"id":2,"amount":5}]"#,
            true,
        );
        assert_eq!(
            (whole.items, whole.json, whole.cut_number),
            (Some((2, 3)), JsonForm::Valid, None)
        );
        assert_eq!(whole.needles, Some((1, 1)));
        // a cut with a marker, after whole items
        let marked = judged(
            r#"[{"id":1,"amount":9007199254740993.72},{"id":2,"am…[cut]"#,
            true,
        );
        assert_eq!(
            (marked.items, marked.json),
            (Some((1, 3)), JsonForm::LabelledPreview)
        );
    }
}
