//! The JSON stages: the policy's projection, then the shrink ladder searched by bisection.

use std::borrow::Cow;

use serde_json::Value;

use super::super::exact::has_f64;
use super::super::note::render;
use super::super::parts::{compact, JsonValue, Part, Structured, Work, READ_SHRUNK_BYTES};
use super::super::shrink::{ladder, shrink, Caps, ShrinkReport};
use super::super::toon::{decode, encode, encode_exact};
use super::{Budgeted, Engine, Run, Strategy};

impl Engine {
    pub(super) fn json_stages(&self, run: &mut Run) -> Option<Budgeted> {
        let has_json = run.work.structured.is_some()
            || run
                .work
                .parts
                .iter()
                .any(|p| matches!(p, Part::Json { .. }));
        if !has_json {
            return None;
        }
        // when the prose alone is over the budget, no JSON cut can help: go to the preview
        let mut rest = run.work.clone();
        rest.parts.retain(|p| !matches!(p, Part::Json { .. }));
        rest.structured = None;
        rest.cost_up_to(&self.counter, run.limit)?;
        keep_unexact(
            &mut run.work,
            &mut run.facts.cuts,
            run.policy.project.is_some(),
        );
        let base_cuts = run.facts.cuts.clone();
        if run.policy.toon {
            if let Some(done) = self.toon_stage(run) {
                return Some(done);
            }
        }
        if let Some(projection) = run.policy.project.clone() {
            let mut applied = false;
            for_each_json(&mut run.work, |json| {
                let out = match json {
                    Json::Text(text) => projection.apply_text(text),
                    Json::Value(v) => projection.apply(v),
                }?;
                applied = true;
                Some(out)
            });
            if applied {
                run.facts
                    .cuts
                    .push(format!("projected with `{}`", projection.expression));
                run.stage("project");
                if let Some(done) = self.try_finish(run, Strategy::Projected) {
                    return Some(done);
                }
            }
        }
        let projected = run.work.clone();
        let cuts = run.facts.cuts.clone();
        let start = run.policy.shrink_caps();
        // the ladder only tightens, so the first step that fits is found by bisection, after
        // the first step alone (the least destructive, and the one that fits most often)
        let steps = ladder(start);
        let fits = |caps: Caps| -> Option<(Work, ShrinkReport)> {
            let (mut w, report) = shrunk(&projected, caps, start);
            let mut facts = run.facts.clone();
            facts.cuts = cuts.clone();
            facts.cuts.extend(report.describe());
            facts.strategy = Strategy::Shrunk.name();
            let text = render(&facts);
            let note = self.counter.count(&text);
            let size = &run.policy.size;
            let sized =
                size.is_unbounded() || size.fits(w.size_with(Some(&text), run.policy.note_first));
            run.limit
                .checked_sub(note)
                .filter(|_| sized)
                .and_then(|room| w.cost_up_to(&self.counter, room))
                .map(|_| (w, report))
        };
        let mut best = fits(steps[0]);
        if best.is_none() {
            let (mut lo, mut hi) = (1, steps.len());
            while lo < hi {
                let mid = (lo + hi) / 2;
                match fits(steps[mid]) {
                    Some(found) => {
                        best = Some(found);
                        hi = mid;
                    }
                    None => lo = mid + 1,
                }
            }
        }
        if let Some((w, report)) = best {
            run.work = w;
            run.facts.cuts = cuts.clone();
            run.facts.cuts.extend(report.describe());
            if let Some(done) = self.try_finish(run, Strategy::Shrunk) {
                return Some(done);
            }
        }
        run.work = projected;
        run.facts.cuts = if run.facts.cuts.is_empty() {
            base_cuts
        } else {
            cuts
        };
        run.stage("shrink");
        None
    }
}

impl Engine {
    /// Each JSON text that TOON writes in at least `toon_min_saving` fewer tokens, and that reads
    /// back to the same value, as TOON; done when that fits. Else the JSON is as it was.
    fn toon_stage(&self, run: &mut Run) -> Option<Budgeted> {
        let before = (run.work.clone(), run.facts.cuts.clone());
        let mut changed = false;
        for part in &mut run.work.parts {
            let Part::Json { text, value } = part else {
                continue;
            };
            let parsed = value.get(text);
            let toon = if has_f64(parsed) {
                value
                    .numbers(text)
                    .ok()
                    .and_then(|n| encode_exact(parsed, n))
            } else {
                encode(parsed)
            };
            let Some(toon) = toon else { continue };
            if decode(&toon).ok().as_ref() != Some(parsed) {
                continue;
            }
            // against the compact JSON, which the engine could send instead without losing
            // anything either (a pretty-printed text is no fair comparison)
            let json_tokens = self
                .counter
                .count(text)
                .min(self.counter.count(&compact(parsed)));
            let toon_tokens = self.counter.count(&toon);
            let saved = json_tokens.saturating_sub(toon_tokens);
            if (saved as f64) < run.policy.toon_min_saving * json_tokens as f64 || saved == 0 {
                continue;
            }
            run.facts.cuts.push(format!(
                "JSON written as TOON (the same value, tables of rows): {} -> {} tokens",
                crate::units::thousands(json_tokens),
                crate::units::thousands(toon_tokens)
            ));
            *part = Part::Prose {
                text: Cow::Owned(toon),
                scan: Default::default(),
            };
            changed = true;
        }
        if changed {
            run.stage("toon");
            if let Some(done) = self.try_finish(run, Strategy::Toon) {
                return Some(done);
            }
        }
        (run.work, run.facts.cuts) = before;
        None
    }
}

/// A JSON part as a stage is handed it: its text when its value has not been built.
enum Json<'v> {
    Text(&'v str),
    Value(&'v Value),
}

/// Replace each JSON part (and structuredContent) by `f`'s value, where it gives one.
fn for_each_json(work: &mut Work, mut f: impl FnMut(Json) -> Option<Value>) {
    for part in &mut work.parts {
        if let Part::Json { text, value } = part {
            let json = if value.is_parsed() {
                Json::Value(value.get(text))
            } else {
                Json::Text(text)
            };
            if let Some(new) = f(json) {
                // a number the projection passes through is written as the text had it; when
                // that cannot be told, the part is not projected
                if let Ok(written) = value.write(text, &new) {
                    *text = Cow::Owned(written);
                    *value = JsonValue::parsed(new);
                }
            }
        }
    }
    if let Some(s) = &mut work.structured {
        if let Some(new) = f(Json::Value(s.value())) {
            *s = Structured::owned(new);
        }
    }
}

/// `work` with every JSON part shrunk by `caps`, and what was cut.
pub(super) fn shrunk<'a>(work: &Work<'a>, caps: Caps, start: Caps) -> (Work<'a>, ShrinkReport) {
    let mut report = ShrinkReport {
        string_chars: caps.string_chars,
        depth: caps.depth,
        ..ShrinkReport::default()
    };
    // more JSON blocks than the policy keeps items of an array are records (the Python SDK
    // sends a list as one block per item): they are capped like an array's items, at least one
    // kept, and the note says how many; fewer are each kept and shrunk
    let blocks = work
        .parts
        .iter()
        .filter(|p| matches!(p, Part::Json { .. }))
        .count();
    let keep = if blocks > start.array_items {
        caps.array_items.max(1)
    } else {
        usize::MAX
    };
    if blocks > keep {
        report.arrays.insert("content".into(), (1, keep, blocks));
    }
    let mut seen = 0;
    // build the shrunk copy directly: cloning a large JSON value first would double the work
    let parts = work
        .parts
        .iter()
        .filter(|p| {
            let json = matches!(p, Part::Json { .. });
            seen += usize::from(json);
            !json || seen <= keep
        })
        .map(|p| match p {
            Part::Json { text, value: json } => {
                let (value, r) = shrink_json(text, json, caps, start);
                // its numbers as the text wrote them; kept whole when that cannot be told
                let Ok(written) = json.write(text, &value) else {
                    return p.clone();
                };
                report.merge(r);
                Part::Json {
                    text: Cow::Owned(written),
                    value: JsonValue::parsed(value),
                }
            }
            other => other.clone(),
        })
        .collect();
    let structured = work.structured.as_ref().map(|s| {
        let (s, r) = shrink(s.value(), caps);
        report.merge(r);
        Structured::owned(s)
    });
    let out = Work {
        parts,
        structured,
        structured_duplicate: work.structured_duplicate,
        rest: work.rest.clone(),
    };
    (out, report)
}

/// A JSON part shrunk by `caps`, the ladder starting at `start`: a large text not yet parsed is
/// read once with the loosest caps, and every step is made from what that kept.
fn shrink_json(text: &str, value: &JsonValue, caps: Caps, start: Caps) -> (Value, ShrinkReport) {
    if !value.is_parsed() && text.len() >= READ_SHRUNK_BYTES {
        if let Some(done) = value.capped(text, start).and_then(|c| c.shrink(caps)) {
            return done;
        }
    }
    shrink(value.get(text), caps)
}

pub(super) fn json_texts<'w>(work: &'w Work) -> Vec<Cow<'w, str>> {
    let mut out: Vec<Cow<str>> = work
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Json { text, .. } => Some(Cow::Borrowed(text.as_ref())),
            _ => None,
        })
        .collect();
    out.extend(
        work.structured
            .as_ref()
            .map(|s| Cow::Owned(compact(s.value()))),
    );
    out
}

/// Each JSON part a rewrite could not keep exactly (serde cannot read it, or an object repeats
/// a key, which serde resolves silently to the last value) becomes the text it is, and the
/// note says so. A large text a projection reads is checked by that read instead.
fn keep_unexact(work: &mut Work, cuts: &mut Vec<String>, projects: bool) {
    for p in &mut work.parts {
        let Part::Json { text, value } = p else {
            continue;
        };
        if projects && text.len() >= READ_SHRUNK_BYTES && !value.is_parsed() {
            continue;
        }
        let exact = value
            .rewritable(text)
            .and_then(|()| match value.is_parsed() {
                true if has_f64(value.get(text)) => value.numbers(text).map(|_| ()),
                _ => Ok(()),
            });
        if let Err(e) = exact {
            cuts.push(e.describe());
            *p = Part::Prose {
                text: text.clone(),
                scan: Default::default(),
            };
        }
    }
}
