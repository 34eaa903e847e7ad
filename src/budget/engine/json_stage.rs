//! The JSON stages: the policy's projection, then the shrink ladder searched by bisection.

use std::sync::Arc;

use serde_json::Value;

use super::super::note::render;
use super::super::parts::{compact, JsonValue, Part, Work};
use super::super::shrink::{ladder, shrink, Caps, ShrinkReport};
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
        let base_cuts = run.facts.cuts.clone();
        if let Some(projection) = run.policy.project.clone() {
            let mut applied = false;
            for_each_json(&mut run.work, |v| {
                let out = projection.apply(v)?;
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
        let start = Caps {
            array_items: run.policy.max_array_items,
            string_chars: run.policy.max_string_chars,
            depth: run.policy.max_depth,
        };
        // the ladder only tightens, so the first step that fits is found by bisection
        let steps = ladder(start);
        let (mut lo, mut hi) = (0, steps.len());
        let mut best: Option<(Work, ShrinkReport, usize)> = None;
        while lo < hi {
            let mid = (lo + hi) / 2;
            let (mut w, report) = shrunk(&projected, steps[mid], start);
            let mut facts = run.facts.clone();
            facts.cuts = cuts.clone();
            facts.cuts.extend(report.describe());
            facts.strategy = Strategy::Shrunk.name();
            let text = render(&facts);
            let note = self.counter.count(&text);
            let size = &run.policy.size;
            let sized =
                size.is_unbounded() || size.fits(w.size_with(Some(&text), run.policy.note_first));
            match run
                .limit
                .checked_sub(note)
                .filter(|_| sized)
                .and_then(|room| w.cost_up_to(&self.counter, room))
            {
                Some(_) => {
                    best = Some((w, report, mid));
                    hi = mid;
                }
                None => lo = mid + 1,
            }
        }
        if let Some((w, report, _)) = best {
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

/// Replace each JSON part (and structuredContent) by `f`'s value, where it gives one.
fn for_each_json(work: &mut Work, mut f: impl FnMut(&Value) -> Option<Value>) {
    for part in &mut work.parts {
        if let Part::Json { text, value } = part {
            if let Some(new) = f(value.get(text)) {
                *text = compact(&new);
                *value = JsonValue::parsed(new);
            }
        }
    }
    if let Some(s) = &mut work.structured {
        if let Some(new) = f(s) {
            *s = Arc::new(new);
        }
    }
}

/// JSON texts from this size on are shrunk while they are read, not parsed whole first.
const READ_SHRUNK_BYTES: usize = 64 * 1024;

/// `work` with every JSON part shrunk by `caps`, and what was cut.
pub(super) fn shrunk(work: &Work, caps: Caps, start: Caps) -> (Work, ShrinkReport) {
    let mut report = ShrinkReport {
        string_chars: caps.string_chars,
        depth: caps.depth,
        ..ShrinkReport::default()
    };
    // build the shrunk copy directly: cloning a large JSON value first would double the work
    let parts = work
        .parts
        .iter()
        .map(|p| match p {
            Part::Json { text, value } => {
                let (value, r) = shrink_json(text, value, caps, start);
                report.merge(r);
                Part::Json {
                    text: compact(&value),
                    value: JsonValue::parsed(value),
                }
            }
            other => other.clone(),
        })
        .collect();
    let structured = work.structured.as_ref().map(|s| {
        let (s, r) = shrink(s, caps);
        report.merge(r);
        Arc::new(s)
    });
    let out = Work {
        parts,
        structured,
        structured_duplicate: work.structured_duplicate,
        rest: work.rest.clone(),
        structured_counted: None,
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

pub(super) fn json_texts(work: &Work) -> Vec<String> {
    let mut out: Vec<String> = work
        .parts
        .iter()
        .filter_map(|p| {
            if let Part::Json { text, .. } = p {
                Some(text.clone())
            } else {
                None
            }
        })
        .collect();
    out.extend(work.structured.as_deref().map(compact));
    out
}
