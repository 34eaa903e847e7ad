//! The JSON fill: a JSON text written again within a byte budget, as much of it as fits and
//! least destructive first. An array keeps as many whole items from its head as fit (no fixed
//! cap), then cuts the next one inside to what is left when that is worth a tenth of the
//! budget; when fewer than three would be whole, the first three share the budget. An object
//! keeps every key and shares the budget among its values, small ones whole; one with more
//! keys than fit keeps its first entries as an array keeps items. A string is cut between
//! words and marked with `…`; a number, `true`, `false` or `null` is whole or not there. Every
//! kept value is copied from the text (compactly): nothing is parsed and written back, so
//! every number, escape and key order is the original's, and nothing is invented.
//!
//! The engine searches the byte budget for the largest output that fits its token budget
//! ([`Filler`] keeps what it learnt of the text between the tries).

mod report;
pub mod scan;

use std::collections::HashMap;
use std::rc::Rc;

pub use report::{ArrayCut, FillReport};
use scan::{compact_len, entries, items, push_compact, skip_ws, string_cut, value_end, Span};

/// Fewer whole items than this (of an array that has them) and the first ones share the budget.
const MIN_ITEMS: usize = 3;
/// Containers with this many children keep their spans between the tries.
const MEMO_CHILDREN: usize = 64;

/// Bounds a policy may set beside the budget (none by default: the budget alone decides).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Caps {
    /// At most this many items of an array are kept.
    pub items: Option<usize>,
    /// A string longer than this many bytes (as written in the text) is cut.
    pub string_bytes: Option<usize>,
    /// Containers at this depth and below are kept empty.
    pub depth: Option<usize>,
}

/// One JSON text, filled at any budget.
pub struct Filler<'t> {
    text: &'t str,
    caps: Caps,
    root: Span,
    items: HashMap<usize, Rc<Vec<Span>>>,
    entries: HashMap<usize, Rc<Vec<(Span, Span)>>>,
    /// What scans found of a value's compact length, by where it starts: exact, or more than.
    sizes: HashMap<usize, Known>,
    whole: usize,
}

/// A value's compact length as far as a scan went.
#[derive(Debug, Clone, Copy)]
enum Known {
    Exact(usize),
    Over(usize),
}

/// What a share of the budget buys one child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Alloc {
    Whole,
    Cut(usize),
    Drop,
}

impl<'t> Filler<'t> {
    /// `None` when `text` is not one JSON value.
    pub fn new(text: &'t str, caps: Caps) -> Option<Filler<'t>> {
        crate::measure::is_json_text(text).then(|| Filler::checked(text, caps))
    }

    /// A text already checked to be one JSON object or array (the engine's JSON parts are
    /// checked when the result is taken apart): read only when filled.
    pub fn checked(text: &'t str, caps: Caps) -> Filler<'t> {
        let b = text.as_bytes();
        let start = skip_ws(b, 0);
        let root = (start, value_end(b, start));
        let whole = compact_len(b, root, usize::MAX);
        Filler {
            text,
            caps,
            root,
            items: HashMap::new(),
            entries: HashMap::new(),
            sizes: HashMap::new(),
            whole,
        }
    }

    /// The text's length written compactly: at this budget or more it is kept whole.
    pub fn whole_bytes(&self) -> usize {
        self.whole
    }

    /// The text within `budget` bytes (written compactly), and what was cut.
    pub fn fill(&mut self, budget: usize) -> (String, FillReport) {
        let mut out = String::with_capacity(budget.min(self.whole) + 16);
        let mut report = FillReport::default();
        let mut path = String::new();
        self.value(self.root, budget, 0, &mut path, &mut out, &mut report);
        (out, report)
    }

    #[allow(clippy::too_many_arguments)]
    fn value(
        &mut self,
        span: Span,
        budget: usize,
        depth: usize,
        path: &mut String,
        out: &mut String,
        report: &mut FillReport,
    ) {
        let b = self.text.as_bytes();
        let long_string = b[span.0] == b'"'
            && self
                .caps
                .string_bytes
                .is_some_and(|m| span.1 - span.0 > m + 2);
        let capped = self.caps.items.is_some() || self.caps.depth.is_some() || long_string;
        if !capped && (span.1 - span.0 <= budget || compact_len(b, span, budget) <= budget) {
            push_compact(self.text, span, out);
            return;
        }
        let b = self.text.as_bytes();
        if self.caps.depth.is_some_and(|d| depth >= d) && matches!(b[span.0], b'[' | b'{') {
            let empty = compact_len(b, span, 2) <= 2;
            out.push_str(if b[span.0] == b'[' { "[]" } else { "{}" });
            if !empty {
                report.emptied += 1;
            }
            return;
        }
        match b[span.0] {
            b'"' => {
                let max = self.caps.string_bytes.unwrap_or(usize::MAX);
                if span.1 - span.0 <= budget.min(max.saturating_add(2)) {
                    push_compact(self.text, span, out);
                    return;
                }
                let keep = string_cut(self.text, span, budget.saturating_sub(5).min(max));
                out.push('"');
                out.push_str(&self.text[span.0 + 1..span.0 + 1 + keep]);
                out.push_str("…\"");
                report.strings_cut += 1;
            }
            b'[' => self.array(span, budget, depth, path, out, report),
            b'{' => self.object(span, budget, depth, path, out, report),
            _ => push_compact(self.text, span, out),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn array(
        &mut self,
        span: Span,
        budget: usize,
        depth: usize,
        path: &mut String,
        out: &mut String,
        report: &mut FillReport,
    ) {
        let spans = match self.items.get(&span.0) {
            Some(s) => s.clone(),
            None => {
                let s = Rc::new(items(self.text.as_bytes(), span));
                if s.len() >= MEMO_CHILDREN {
                    self.items.insert(span.0, s.clone());
                }
                s
            }
        };
        let room = budget.saturating_sub(2);
        let n = spans.len().min(self.caps.items.unwrap_or(usize::MAX));
        let text = self.text.as_bytes();
        let plan = prefix(
            n,
            room,
            |i, cap| self.len(spans[i], cap),
            |i| least_bytes(text, spans[i]),
        );
        let len = path.len();
        path.push_str("[]");
        out.push('[');
        let (mut whole, mut inside) = (0, 0);
        for (i, alloc) in plan.iter().enumerate() {
            if *alloc == Alloc::Drop {
                break;
            }
            if i > 0 {
                out.push(',');
            }
            match *alloc {
                // whole, unless a cap inside it must still be met
                Alloc::Whole if !self.caps_within() => {
                    whole += 1;
                    push_compact(self.text, spans[i], out);
                }
                Alloc::Whole => {
                    whole += 1;
                    self.value(spans[i], usize::MAX, depth + 1, path, out, report);
                }
                Alloc::Cut(n) => {
                    inside += 1;
                    self.value(spans[i], n, depth + 1, path, out, report);
                }
                Alloc::Drop => unreachable!("a dropped item ends the kept ones"),
            }
        }
        out.push(']');
        path.truncate(len);
        report.array(path, whole, inside, spans.len());
    }

    #[allow(clippy::too_many_arguments)]
    fn object(
        &mut self,
        span: Span,
        budget: usize,
        depth: usize,
        path: &mut String,
        out: &mut String,
        report: &mut FillReport,
    ) {
        let spans = match self.entries.get(&span.0) {
            Some(s) => s.clone(),
            None => {
                let s = Rc::new(entries(self.text.as_bytes(), span));
                if s.len() >= MEMO_CHILDREN {
                    self.entries.insert(span.0, s.clone());
                }
                s
            }
        };
        let b = self.text.as_bytes();
        let room = budget.saturating_sub(2);
        // every key, a colon and a comma each, and the least each value can be
        let keys: usize = spans.iter().map(|(k, _)| k.1 - k.0 + 2).sum();
        let least: usize = spans.iter().map(|(_, v)| least_bytes(b, *v)).sum();
        // shared: every key kept, the shares are the values'; else a share holds its key too
        let shared = keys + least <= room;
        let plan = if shared {
            share_lazy(spans.len(), room - keys, |i, cap| self.len(spans[i].1, cap))
        } else {
            let key = |i: usize| spans[i].0 .1 - spans[i].0 .0 + 2;
            prefix(
                spans.len(),
                room,
                |i, cap| key(i) + self.len(spans[i].1, cap.saturating_sub(key(i))),
                |i| key(i) + least_bytes(b, spans[i].1),
            )
        };
        out.push('{');
        let mut kept = 0;
        for (i, alloc) in plan.iter().enumerate() {
            let (k, v) = spans[i];
            if *alloc == Alloc::Drop {
                continue;
            }
            if kept > 0 {
                out.push(',');
            }
            kept += 1;
            out.push_str(&self.text[k.0..k.1]);
            out.push(':');
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&self.text[k.0 + 1..k.1 - 1]);
            match *alloc {
                Alloc::Whole if !self.caps_within() => push_compact(self.text, v, out),
                Alloc::Whole => self.value(v, usize::MAX, depth + 1, path, out, report),
                Alloc::Cut(n) => {
                    let n = match shared {
                        true => n,
                        false => n.saturating_sub(k.1 - k.0 + 2).max(least_bytes(b, v)),
                    };
                    self.value(v, n, depth + 1, path, out, report)
                }
                Alloc::Drop => unreachable!(),
            }
            path.truncate(len);
        }
        out.push('}');
        if kept < spans.len() {
            report.object(path, kept, spans.len());
        }
    }
}

impl Filler<'_> {
    /// `span`'s compact length counted up to `cap` (then `cap + 1`), from what earlier scans
    /// found where they tell (a long list is scanned once for all the tries of a search).
    fn len(&mut self, span: Span, cap: usize) -> usize {
        if span.1 - span.0 <= cap && span.1 - span.0 < 64 {
            return compact_len(self.text.as_bytes(), span, cap);
        }
        match self.sizes.get(&span.0) {
            Some(Known::Exact(n)) => return if *n <= cap { *n } else { cap + 1 },
            Some(Known::Over(n)) if cap < *n => return cap + 1,
            _ => {}
        }
        let n = compact_len(self.text.as_bytes(), span, cap);
        let known = if n <= cap {
            Known::Exact(n)
        } else {
            Known::Over(n)
        };
        self.sizes.insert(span.0, known);
        n
    }

    /// A cap holds inside values (a whole value is then still walked to meet it).
    fn caps_within(&self) -> bool {
        self.caps != Caps::default()
    }
}

/// The fewest bytes a value can be cut to: a scalar whole, a string `"…"`, a container empty.
fn least_bytes(b: &[u8], (start, end): Span) -> usize {
    match b[start] {
        b'"' => 5.min(end - start),
        b'[' | b'{' => 2,
        _ => end - start,
    }
}

/// Whole children from the head while they fit `room` (a comma between each); then the next
/// one cut to what is left when that is at least a tenth of the room and its `least`; with fewer than
/// [`MIN_ITEMS`] whole, the first ones share the room, as many as can each have at least
/// `least(i)`. `size(i, cap)` is child `i`'s compact length counted up to `cap`.
fn prefix(
    n: usize,
    room: usize,
    mut size: impl FnMut(usize, usize) -> usize,
    least: impl Fn(usize) -> usize,
) -> Vec<Alloc> {
    let mut plan = vec![Alloc::Drop; n];
    let mut used = 0;
    let mut whole = 0;
    while whole < n {
        let comma = usize::from(whole > 0);
        let cap = room.saturating_sub(used + comma);
        let s = size(whole, cap);
        if s > cap {
            break;
        }
        used += s + comma;
        plan[whole] = Alloc::Whole;
        whole += 1;
    }
    if whole == n {
        return plan;
    }
    let few = n.min(MIN_ITEMS);
    if whole < few {
        // as many of the first few as can each have at least their least
        let sizes: Vec<usize> = (0..few).map(|i| size(i, room)).collect();
        for m in (1..=few).rev() {
            let shared = share(&sizes[..m], room.saturating_sub(m - 1));
            let fits = shared.iter().enumerate().all(|(i, a)| match a {
                Alloc::Cut(s) => *s >= least(i),
                _ => true,
            });
            if fits {
                plan[..m].copy_from_slice(&shared);
                break;
            }
        }
        return plan;
    }
    // a child that cannot be cut below its least (a number, a key) is not cut to less
    let left = room.saturating_sub(used + 1);
    if left >= room / 10 && left >= 8 && left >= least(whole) {
        plan[whole] = Alloc::Cut(left);
    }
    plan
}

/// [`share`] with sizes read only as far as a share can reach: each round reads the children
/// not yet known small up to the share they would get, so a round reads at most `room` bytes.
fn share_lazy(n: usize, room: usize, mut size: impl FnMut(usize, usize) -> usize) -> Vec<Alloc> {
    let mut plan = vec![Alloc::Whole; n];
    let mut big: Vec<usize> = (0..n).collect();
    let mut left = room;
    while !big.is_empty() {
        let share = left / big.len();
        let mut still = Vec::with_capacity(big.len());
        for &i in &big {
            let s = size(i, share);
            if s <= share {
                left -= s;
            } else {
                still.push(i);
            }
        }
        let done = still.len() == big.len();
        big = still;
        if done {
            break;
        }
    }
    if !big.is_empty() {
        let share = left / big.len();
        for i in big {
            plan[i] = Alloc::Cut(share);
        }
    }
    plan
}

/// Every child kept: the small ones whole, the rest cut to equal shares of what they leave.
pub(crate) fn share(sizes: &[usize], room: usize) -> Vec<Alloc> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| sizes[i]);
    let mut plan = vec![Alloc::Whole; sizes.len()];
    let mut left = room;
    for (done, &i) in order.iter().enumerate() {
        let share = left / (sizes.len() - done);
        if sizes[i] <= share {
            left -= sizes[i];
        } else {
            for &j in &order[done..] {
                plan[j] = Alloc::Cut(share);
            }
            break;
        }
    }
    plan
}

#[cfg(test)]
mod tests;
