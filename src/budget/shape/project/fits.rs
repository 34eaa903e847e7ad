//! Whether a projection fits the data it is given, checked on the text before it runs: every
//! field the expression names is there (a projection of data of another shape writes `null`
//! for what the data lacks), and for a built-in projection (a guess made from the tool's name)
//! the data has no field its shape does not know (it would drop data it was never written
//! for). Arrays are checked on their first items.

use std::collections::BTreeMap;

use crate::budget::shape::fill::scan::{entries, items_up_to, skip_ws, value_end, Span};
use crate::budget::shape::project::need::Need;

/// Items of an array that are checked.
const SAMPLE: usize = 20;

/// Why a projection does not fit `text`, or `None` when it does.
pub fn misfit(need: &Need, known: Option<&[&str]>, text: &str) -> Option<String> {
    let b = text.as_bytes();
    let start = skip_ws(b, 0);
    if start >= b.len() {
        return None;
    }
    let root = (start, value_end(b, start));
    check(need, known, text, root, &mut String::new())
}

fn check(
    need: &Need,
    known: Option<&[&str]>,
    text: &str,
    span: Span,
    path: &mut String,
) -> Option<String> {
    let Need::Shape { fields, items } = need else {
        return None;
    };
    let b = text.as_bytes();
    match b[span.0] {
        b'{' => {
            let here: BTreeMap<&str, Span> = entries(b, span)
                .into_iter()
                .map(|(k, v)| (&text[k.0 + 1..k.1 - 1], v))
                .collect();
            let at = if path.is_empty() {
                "the top level"
            } else {
                path.as_str()
            };
            if let Some(missing) = fields.keys().find(|f| !here.contains_key(f.as_str())) {
                return Some(format!("the data has no `{missing}` at {at}"));
            }
            // the objects the expression builds its own from (three fields or more)
            if let Some(known) = known.filter(|_| fields.len() >= 3) {
                if let Some(unknown) = here.keys().find(|k| !known.contains(k)) {
                    return Some(format!(
                        "the data has `{unknown}` at {at}, which the projection does not know"
                    ));
                }
            }
            for (name, sub) in fields {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(name);
                let why = check(sub, known, text, here[name.as_str()], path);
                path.truncate(len);
                if why.is_some() {
                    return why;
                }
            }
            None
        }
        b'[' => {
            for (i, item) in items_up_to(b, span, SAMPLE).into_iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                let why = check(items, known, text, item, path);
                path.truncate(len);
                if why.is_some() {
                    return why;
                }
            }
            None
        }
        _ => None,
    }
}
