//! The JSON of a result as the engine holds it: a text block's value, parsed on first need and
//! shared by the copies of its part, a structuredContent borrowed from the result, and what
//! counting either has shown.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::compact;
use crate::budget::shape::exact::{compact_exact, has_f64, read_value, Numbers, Unexact};

/// A JSON text's value, parsed on first use and shared by the copies of a part: a result within
/// its budget is only validated and counted, never built into a tree. A large one that must be
/// shrunk is read once with the shrink's loosest caps instead ([`Capped`]); one that repeats
/// the structuredContent takes that value, borrowed, and is never parsed.
#[derive(Debug, Clone)]
pub struct JsonValue<'a> {
    value: Arc<OnceLock<Cow<'a, Value>>>,
    /// Why the text cannot be rewritten exactly, found when it was read whole.
    unexact: Arc<OnceLock<Unexact>>,
    /// The texts of its numbers (scanned when a rewrite first writes an `f64`).
    numbers: Arc<OnceLock<Result<Numbers, Unexact>>>,
    pub(super) counted: Arc<CountMemo>,
    /// The text is known to be JSON (a large one is taken for JSON by its look, and checked
    /// by its first read: [`super::Work::verify_json`]).
    pub(super) checked: bool,
}

impl<'a> JsonValue<'a> {
    /// The value of a text checked to be JSON, not yet parsed.
    pub fn checked() -> Self {
        JsonValue {
            value: Arc::default(),
            unexact: Arc::default(),
            numbers: Arc::default(),
            counted: Arc::default(),
            checked: true,
        }
    }

    /// The value of a text that looks like JSON, not yet checked.
    pub fn unchecked() -> Self {
        JsonValue {
            checked: false,
            ..Self::checked()
        }
    }

    /// A value already parsed (or made by a stage).
    pub fn parsed(value: Value) -> Self {
        Self::known(Cow::Owned(value))
    }

    /// The value of a text known to equal `value` (in key order too).
    pub fn borrowed(value: &'a Value) -> Self {
        Self::known(Cow::Borrowed(value))
    }

    fn known(value: Cow<'a, Value>) -> Self {
        JsonValue {
            value: Arc::new(OnceLock::from(value)),
            ..Self::checked()
        }
    }

    /// Whether the value has been built (or borrowed).
    pub fn is_parsed(&self) -> bool {
        self.value.get().is_some()
    }

    /// The value of `text`, the part's JSON text (validated when the part was made; `null`
    /// when serde cannot read it or it repeats a key: [`Self::rewritable`] says so).
    pub fn get(&self, text: &str) -> &Value {
        self.value.get_or_init(|| match read_value(text) {
            Ok(v) => Cow::Owned(v),
            Err(e) => {
                let _ = self.unexact.set(e);
                Cow::Owned(Value::Null)
            }
        })
    }

    /// Whether a stage may rewrite `text` from its value: serde reads it and no object repeats
    /// a key (known without a second read when the shrink's read of it held).
    pub fn rewritable(&self, text: &str) -> Result<(), Unexact> {
        self.get(text);
        self.unexact.get().map_or(Ok(()), |e| Err(e.clone()))
    }

    /// `value` (made from this part's value) as compact JSON, its numbers as `text` has them;
    /// `Err` when that cannot be told (`text` is scanned once, when `value` holds an `f64`).
    pub fn write(&self, text: &str, value: &Value) -> Result<String, Unexact> {
        if !has_f64(value) {
            return Ok(compact(value));
        }
        Ok(compact_exact(value, self.numbers(text)?))
    }

    /// The texts of `text`'s numbers.
    pub fn numbers(&self, text: &str) -> Result<&Numbers, Unexact> {
        self.numbers
            .get_or_init(|| Numbers::of(text))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The same value for a text written otherwise (compacted): what counting knew is gone.
    pub fn for_new_text(&self) -> Self {
        JsonValue {
            counted: Arc::default(),
            ..self.clone()
        }
    }
}

/// A structuredContent: borrowed from the result until a stage replaces it, with what counting
/// it has shown (a replaced value is a new `Structured`, so the memo always fits its value).
#[derive(Debug, Clone)]
pub struct Structured<'a> {
    value: Cow<'a, Value>,
    counted: Arc<CountMemo>,
}

impl<'a> Structured<'a> {
    pub fn borrowed(value: &'a Value) -> Self {
        Structured {
            value: Cow::Borrowed(value),
            counted: Arc::default(),
        }
    }

    pub fn owned(value: Value) -> Self {
        Structured {
            value: Cow::Owned(value),
            counted: Arc::default(),
        }
    }

    pub fn value(&self) -> &Value {
        &self.value
    }

    /// Its compact JSON's count when at most `limit`.
    pub fn count_up_to(
        &self,
        limit: usize,
        count: impl FnOnce(&str, usize) -> Option<usize>,
    ) -> Option<usize> {
        self.counted
            .up_to(limit, |l| count(&compact(&self.value), l))
    }
}

/// What counting one text has shown, shared by the copies of its part: its exact count, or the
/// largest limit it is known to pass. A pass asks the same of a JSON text up to three times
/// (after stripping, before it, and beside the note), each a count up to the budget.
#[derive(Debug, Default)]
pub struct CountMemo {
    /// The exact count plus one; 0: not known.
    exact: AtomicUsize,
    /// One more than the largest limit the text is known to pass; 0: none.
    over: AtomicUsize,
}

impl CountMemo {
    /// `count(limit)` (a count up to `limit`), answered from what is known when it can be.
    pub(super) fn up_to(
        &self,
        limit: usize,
        count: impl FnOnce(usize) -> Option<usize>,
    ) -> Option<usize> {
        if let Some(n) = self.exact.load(Ordering::Relaxed).checked_sub(1) {
            return (n <= limit).then_some(n);
        }
        if limit < self.over.load(Ordering::Relaxed) {
            return None;
        }
        let found = count(limit);
        match found {
            Some(n) => self.exact.store(n.saturating_add(1), Ordering::Relaxed),
            None => {
                self.over
                    .fetch_max(limit.saturating_add(1), Ordering::Relaxed);
            }
        }
        found
    }
}
