//! The JSON of a result filled to its room: every JSON text block (and the structuredContent)
//! written by [`Filler`] at the largest byte budget whose result fits, found by a search that
//! scales the bytes by the tokens they cost. Many JSON blocks (a list sent as one block per
//! item) keep the first ones whole, as an array keeps items; a few share the room.

use std::borrow::Cow;

use super::super::parts::{compact, JsonValue, Part, Structured, Work};
use super::super::Size;
use crate::budget::shape::fill::{share, Alloc, ArrayCut, Caps, FillReport, Filler};
use crate::measure::facts::ItemsKept;

/// More JSON blocks than this are records (the Python SDK sends a list as one block per item):
/// kept from the head as an array keeps its items.
const RECORDS_OVER: usize = 20;
/// Tries of the byte budget before the best that fitted is taken.
const TRIES: usize = 12;
/// A try that fills this share of the room ends the search. On the corpus's JSON and the
/// generated lists at 2,000, 8,000 and 25,000 tokens, 0.985 (and a first guess 2% under the
/// room less 200 tokens) took 59 tries for a median fill of 98.8%; this and a first guess at
/// 99% of the room the sample's note leaves, 27 for 97.8%, the memory graph and the directory
/// tree in one try each.
const GOOD: f64 = 0.965;
/// The search ends when the bytes that fit and the bytes that do not are within this fraction
/// (1/50: 2%) of each other, after one try at the top of them.
const CLOSE: usize = 50;

/// A filled work and what the fill cut.
pub(super) struct Filled<'a> {
    pub work: Work<'a>,
    /// The tokens of its JSON, once a try counted them.
    pub json_tokens: Option<usize>,
    pub cuts: Vec<String>,
    pub list: Option<ItemsKept>,
}

/// How one try came out: whether it fits, the tokens of its JSON and the tokens it may have.
pub(super) struct Try {
    pub fits: bool,
    pub json_tokens: usize,
    pub room: usize,
    /// The least of the size bounds over what they measure (infinite when there are none).
    pub size_ratio: f64,
}

/// The JSON of one work, ready to be filled at any byte budget.
pub(super) struct JsonFill<'w, 'a> {
    from: &'w Work<'a>,
    /// One per JSON part, in order, then the structuredContent's.
    fillers: Vec<Filler<'w>>,
    /// Many blocks are records: whole ones from the head, as an array keeps items.
    records: bool,
}

impl<'w, 'a> JsonFill<'w, 'a> {
    /// `structured_text`: the structuredContent written compactly (owned by the caller).
    /// `None` when a JSON part cannot be read (it is then kept as it is by the caller).
    pub fn new(from: &'w Work<'a>, structured_text: Option<&'w str>, caps: Caps) -> Option<Self> {
        let mut fillers = Vec::new();
        for p in &from.parts {
            if let Part::Json { text, .. } = p {
                // checked when the result was taken apart (a stage writes only JSON)
                fillers.push(Filler::checked(text, caps));
            }
        }
        let blocks = fillers.len();
        if let Some(t) = structured_text {
            fillers.push(Filler::checked(t, caps));
        }
        Some(JsonFill {
            from,
            fillers,
            records: blocks > RECORDS_OVER,
        })
    }

    /// The first JSON's first 4 KB written compactly, and the lines its cuts add to the note:
    /// counted, its bytes per token and its lines make the search's first guess land near the
    /// budget, and its count is reused by the first try, which begins with the same bytes when
    /// the JSON is a list.
    pub fn sample(&mut self) -> Option<(String, Vec<String>)> {
        let (text, report) = self.fillers.first_mut()?.fill(4096);
        Some((text, report.describe()))
    }

    /// All of the JSON written compactly, in bytes: the search's ceiling.
    pub fn whole_bytes(&self) -> usize {
        self.fillers.iter().map(|f| f.whole_bytes()).sum()
    }

    /// The work with its JSON filled to `bytes` in all.
    pub fn at(&mut self, bytes: usize) -> Filled<'a> {
        let sizes: Vec<usize> = self.fillers.iter().map(|f| f.whole_bytes()).collect();
        let blocks = self.fillers.len() - usize::from(self.from.structured.is_some());
        let shares = if self.records {
            records_plan(&sizes[..blocks], bytes)
                .into_iter()
                .chain(self.from.structured.as_ref().map(|_| Some(bytes / 4)))
                .collect()
        } else {
            shares(&sizes, bytes)
        };
        let mut report = FillReport::default();
        let mut texts: Vec<Option<String>> = Vec::new();
        for (f, share) in self.fillers.iter_mut().zip(&shares) {
            texts.push(share.map(|s| {
                let (t, r) = f.fill(s);
                report.merge(r);
                t
            }));
        }
        let mut texts = texts.into_iter();
        let mut kept_blocks = 0;
        let parts = self
            .from
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Json { .. } => texts.next().flatten().map(|t| {
                    kept_blocks += 1;
                    Part::Json {
                        text: Cow::Owned(t),
                        value: JsonValue::checked(),
                    }
                }),
                other => Some(other.clone()),
            })
            .collect();
        let structured = self.from.structured.as_ref().and_then(|_| {
            let t = texts.next().flatten()?;
            Some(Structured::owned(serde_json::from_str(&t).ok()?))
        });
        let mut cuts = Vec::new();
        if kept_blocks < blocks {
            cuts.push(format!(
                "content: the first {} of {} JSON blocks kept",
                crate::ground::units::thousands(kept_blocks),
                crate::ground::units::thousands(blocks)
            ));
        }
        cuts.extend(report.describe());
        let list = report
            .main_list()
            .map(|(path, a): (&str, ArrayCut)| ItemsKept {
                path: path.to_string(),
                whole: a.whole,
                inside: a.inside,
                total: a.total,
            });
        let list = match (list, kept_blocks < blocks) {
            (None, true) => Some(ItemsKept {
                path: "content".into(),
                whole: kept_blocks,
                inside: 0,
                total: blocks,
            }),
            (list, _) => list,
        };
        Filled {
            json_tokens: None,
            work: Work {
                parts,
                structured,
                structured_duplicate: self.from.structured_duplicate,
                rest: self.from.rest.clone(),
            },
            cuts,
            list,
        }
    }

    /// The largest fill that `judge` says fits, searched from a first guess of `start` bytes
    /// by scaling the bytes with the tokens they cost; `None` when not even the least fits.
    pub fn search(
        &mut self,
        start: usize,
        mut judge: impl FnMut(&mut Filled<'a>) -> Try,
    ) -> Option<Filled<'a>> {
        let ceiling = self.whole_bytes();
        let mut best: Option<(usize, Filled<'a>)> = None;
        let mut over = ceiling + 1;
        // the tokens of the best try and of the last that did not fit: a try that gives the same
        // as the bound it moves found a step of whole items, which scaling would creep along
        let (mut best_tokens, mut over_tokens) = (usize::MAX, usize::MAX);
        let mut b = start.clamp(1, ceiling.max(1));
        // the one try at the top of bounds found close
        let mut last = false;
        for _ in 0..TRIES {
            let mut f = self.at(b);
            let t = judge(&mut f);
            let scaled = |factor: f64| (b as f64 * factor) as usize;
            let ratio = (t.room as f64 / t.json_tokens.max(1) as f64).min(t.size_ratio);
            let stalled;
            let next = if t.fits {
                let good = t.json_tokens as f64 >= t.room as f64 * GOOD;
                stalled = t.json_tokens == best_tokens;
                best_tokens = t.json_tokens;
                f.json_tokens = Some(t.json_tokens);
                best = Some((b, f));
                if good || b >= ceiling {
                    break;
                }
                scaled(ratio.max(1.01))
            } else {
                stalled = t.json_tokens == over_tokens;
                over_tokens = t.json_tokens;
                over = over.min(b);
                scaled(ratio.min(0.99) * 0.995)
            };
            let low = best.as_ref().map_or(0, |(lb, _)| *lb);
            if low + 1 >= over || last {
                break;
            }
            // bounds this close are not worth halving further; but an output can jump inside
            // them (the next item is kept, cut inside, once a tenth of the bytes is left), so
            // the largest byte budget not known to be over is tried once
            if low > 0 && over <= ceiling && over - low <= low / CLOSE {
                last = true;
                b = over - 1;
                continue;
            }
            // within the bounds found (every try became one of them, so this is a new one), and
            // halfway when the scale creeps along a step
            b = match stalled {
                true => (low + over) / 2,
                false => next.clamp(low + 1, over - 1),
            };
        }
        if best.is_none() {
            let mut f = self.at(0);
            if judge(&mut f).fits {
                return Some(f);
            }
        }
        best.map(|(_, f)| f)
    }
}

/// The few blocks' shares of `bytes`: small ones whole, the rest equal shares of what is left
/// (as an object's values share its room).
fn shares(sizes: &[usize], bytes: usize) -> Vec<Option<usize>> {
    share(sizes, bytes)
        .into_iter()
        .zip(sizes)
        .map(|(alloc, &size)| match alloc {
            Alloc::Cut(n) => Some(n),
            _ => Some(size),
        })
        .collect()
}

/// Records: whole blocks from the head while they fit; the next cut to what is left when
/// that is worth a tenth; at least the first one, cut to all of it.
fn records_plan(sizes: &[usize], bytes: usize) -> Vec<Option<usize>> {
    let mut out = vec![None; sizes.len()];
    let mut left = bytes;
    for (i, &s) in sizes.iter().enumerate() {
        if s <= left {
            out[i] = Some(s);
            left -= s;
        } else {
            if i == 0 || left >= bytes / 10 {
                out[i] = Some(left);
            }
            break;
        }
    }
    out
}

/// The least of `limits` over `size` in the units they bound (infinite when they bound none).
pub(super) fn size_ratio(limits: &super::super::SizeLimits, size: Size) -> f64 {
    let ratio = |limit: Option<usize>, v: usize| {
        limit.map_or(f64::INFINITY, |l| l as f64 / v.max(1) as f64)
    };
    ratio(limits.bytes, size.bytes)
        .min(ratio(limits.chars, size.chars))
        .min(ratio(limits.lines, size.lines))
}

/// The size of the JSON texts of `work` (and its structuredContent) with `note`.
pub(super) fn json_size(work: &Work, note: &str) -> Size {
    work.parts
        .iter()
        .filter_map(|p| match p {
            Part::Json { text, .. } => Some(Size::of(text)),
            _ => None,
        })
        .chain(
            work.structured
                .as_ref()
                .map(|s| Size::of(&compact(s.value()))),
        )
        .fold(Size::of(note), |a, b| a + b)
}

#[cfg(test)]
mod tests {
    use super::super::json_stage::json_texts;
    use super::*;
    use crate::budget::parts::prefix::PrefixCounter;
    use crate::ground::tokens::Tokenizer;
    use serde_json::json;

    /// Items of 600 bytes that never fit 7 whole (the seventh is cut inside only when what is
    /// left is a tenth of the bytes): between 6 items (94.7% of the room) and 7, nothing. The
    /// search used to creep a byte a try along that step until its 12 tries ran out.
    #[test]
    fn a_step_of_whole_items_ends_the_search_in_a_few_tries() {
        let item = format!("{{\"t\":\"{}\"}}", "x".repeat(591));
        assert_eq!(item.len() + 1, 600);
        let text = format!("[{}]", vec![item.as_str(); 40].join(","));
        let result = json!({"content": [{"type": "text", "text": text}]});
        let counter = PrefixCounter::new(Tokenizer::Cl100k);
        let work = Work::parse(&result, &counter);
        let mut fill = JsonFill::new(&work, None, Caps::default()).expect("JSON");
        // a stand-in count: a token per 4 bytes, 950 tokens of room (3,800 bytes)
        let mut tries = Vec::new();
        let filled = fill
            .search(3_000, |f| {
                let bytes: usize = json_texts(&f.work).iter().map(|t| t.len()).sum();
                tries.push(bytes);
                Try {
                    fits: bytes / 4 <= 950,
                    json_tokens: bytes / 4,
                    room: 950,
                    size_ratio: f64::INFINITY,
                }
            })
            .expect("six items fit");
        let list = filled.list.expect("a list was cut");
        assert_eq!((list.whole, list.inside, list.total), (6, 0, 40));
        assert!(tries.len() <= 7, "{} tries: {tries:?}", tries.len());
    }
}
