//! The router: least destructive stage first, stop as soon as the result and its note fit.

use std::time::Instant;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::lazy::strip_prefix;
use super::note::{render, NoteFacts};
use super::parts::{compact, Part, Work};
use super::shrink::{ladder, shrink, Caps, ShrinkReport};
use super::strip::{strip, StripCounts};
use super::{Policy, PrefixCounter, Scan, SpillHandle, SpillStore, ToolPolicy};
use crate::tokens::Tokenizer;

/// How a result was made to fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    PassThrough,
    Stripped,
    Projected,
    Shrunk,
    Spilled,
}

impl Strategy {
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::PassThrough => "pass_through",
            Strategy::Stripped => "stripped",
            Strategy::Projected => "projected",
            Strategy::Shrunk => "shrunk",
            Strategy::Spilled => "spilled",
        }
    }
}

/// One stage the engine ran, and how long it took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stage {
    pub name: String,
    pub micros: u64,
}

/// The engine's output: a valid MCP tool result and what was done to it.
#[derive(Debug, Clone)]
pub struct Budgeted {
    pub result: Value,
    pub budget: usize,
    /// Tokens of the result as sent to the model (in the budget's tokenizer).
    pub tokens_after: usize,
    pub strategy: Strategy,
    pub stages: Vec<Stage>,
    /// The full original, when anything was cut.
    pub spill: Option<SpillHandle>,
    /// The note appended to the result.
    pub note: Option<String>,
}

/// Which call a result came from (names the spill file).
#[derive(Debug, Clone, Copy)]
pub struct CallInfo<'a> {
    pub server: &'a str,
    pub tool: &'a str,
    pub arguments: &'a Map<String, Value>,
}

/// The engine: a policy, a counter and a spill store.
#[derive(Debug, Clone)]
pub struct Engine {
    policy: Policy,
    counter: PrefixCounter,
    store: SpillStore,
}

/// Where a run is: the call, its policy and budget, the work so far, the note's facts.
struct Run<'a> {
    result: &'a Value,
    policy: ToolPolicy,
    limit: usize,
    original: &'a Work,
    work: Work,
    facts: NoteFacts,
    stages: Vec<Stage>,
    clock: Instant,
}

impl Engine {
    pub fn new(policy: Policy, tokenizer: Tokenizer, store: SpillStore) -> Self {
        Engine {
            policy,
            counter: PrefixCounter::new(tokenizer),
            store,
        }
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub fn store(&self) -> &SpillStore {
        &self.store
    }

    /// The exact model-view cost of a result (what the engine measures against the budget).
    pub fn cost(&self, result: &Value) -> usize {
        self.counter
            .units(Work::parse(result, &self.counter).cost(&self.counter))
    }

    /// Make `result` fit its tool's budget.
    pub fn run(&self, call: &CallInfo, result: &Value) -> Budgeted {
        let policy = self.policy.for_tool(call.tool);
        let limit = self.counter.bpe_budget(policy.budget);
        let clock = Instant::now();
        let mut original = Work::parse(result, &self.counter);
        // A large text is stripped first and counted once: where the stripped text still
        // shares the beginning of the original, its count proves the original over budget too.
        let large = original.text_bytes() > limit * 8;
        let mut work = original.clone();
        let mut cuts = Vec::new();
        if large {
            cuts = self.strip_work(&mut work, &policy, limit, call, true);
            let _ = work.cost_up_to(&self.counter, limit);
            original.adopt_scans(&work);
        }
        if let Some(n) = original.cost_up_to(&self.counter, limit) {
            let stages = vec![Stage {
                name: "measure".into(),
                micros: clock.elapsed().as_micros() as u64,
            }];
            return Budgeted {
                result: result.clone(),
                budget: policy.budget,
                tokens_after: self.counter.units(n),
                strategy: Strategy::PassThrough,
                stages,
                spill: None,
                note: None,
            };
        }
        if !large {
            cuts = self.strip_work(&mut work, &policy, limit, call, false);
        }
        let facts = NoteFacts {
            budget: policy.budget,
            original_bytes: original.payload_bytes(),
            spill: Some(self.store.plan(
                call.server,
                call.tool,
                call.arguments,
                "",
                spill_ext(&original),
            )),
            cuts,
            ..NoteFacts::default()
        };
        let mut run = Run {
            result,
            policy,
            limit,
            original: &original,
            work,
            facts,
            stages: Vec::new(),
            clock,
        };
        run.stage("measure+strip");
        if let Some(done) = self.try_finish(&mut run, Strategy::Stripped) {
            return done;
        }
        if let Some(done) = self.json_stages(&mut run) {
            return done;
        }
        self.spill_stage(&mut run)
    }

    /// Strip prose, drop a duplicate structuredContent, save oversized images; returns the cuts.
    /// With `lazy`, prose is stripped and counted only until it passes the budget.
    fn strip_work(
        &self,
        work: &mut Work,
        policy: &ToolPolicy,
        limit: usize,
        call: &CallInfo,
        lazy: bool,
    ) -> Vec<String> {
        let mut cuts = Vec::new();
        if work.structured_duplicate && policy.drop_duplicate_structured {
            work.structured = None;
            cuts.push("structuredContent dropped: it repeats the text content".into());
        }
        let mut counts = StripCounts::default();
        let mut partial: Option<usize> = None;
        for part in &mut work.parts {
            if let Part::Prose { text, scan } = part {
                if lazy {
                    let p = strip_prefix(text, policy, &self.counter, limit);
                    if !p.complete {
                        partial = Some(partial.unwrap_or(0) + p.read_bytes);
                    }
                    (*text, *scan) = (p.text, p.scan);
                    counts.add(&p.counts);
                    continue;
                }
                let (s, c) = strip(text, policy);
                if !c.is_empty() {
                    *scan = Scan::rebase(text, scan, &s);
                    *text = s;
                }
                counts.add(&c);
            }
        }
        let read = partial.map_or(String::new(), |b| {
            format!(" (in the first {} bytes read)", super::note::thousands(b))
        });
        cuts.extend(counts.describe().into_iter().map(|c| format!("{c}{read}")));
        let mut spilled_images = 0;
        for (i, part) in work.parts.iter_mut().enumerate() {
            if let Part::Image { block, tokens } = part {
                if *tokens > limit / 2 {
                    *part = Part::Prose {
                        text: self.spill_image(call, i, block, *tokens),
                        scan: Scan::default(),
                    };
                    spilled_images += 1;
                }
            }
        }
        if spilled_images > 0 {
            cuts.push(format!(
                "{spilled_images} images over the budget saved to files"
            ));
        }
        cuts
    }

    /// Save an image's bytes and say where in place of it.
    fn spill_image(&self, call: &CallInfo, index: usize, block: &Value, tokens: usize) -> String {
        let mime = block["mimeType"].as_str().unwrap_or("image/png");
        let ext = mime.rsplit('/').next().unwrap_or("bin");
        let data = block["data"].as_str().unwrap_or("");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .unwrap_or_default();
        let handle = self.store.plan(
            call.server,
            call.tool,
            call.arguments,
            &format!("image{index}"),
            ext,
        );
        match self.store.write(&handle, &bytes) {
            Ok(h) => format!(
                "[image of ~{tokens} tokens saved to {} ({})]",
                h.path.display(),
                h.uri()
            ),
            Err(e) => format!("[image of ~{tokens} tokens removed; saving it failed: {e}]"),
        }
    }

    fn json_stages(&self, run: &mut Run) -> Option<Budgeted> {
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
                if let Some(out) = projection.apply(v) {
                    *v = out;
                    applied = true;
                }
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
            let (mut w, report) = shrunk(&projected, steps[mid]);
            let mut facts = run.facts.clone();
            facts.cuts = cuts.clone();
            facts.cuts.extend(report.describe());
            facts.strategy = Strategy::Shrunk.name();
            let note = self.counter.count(&render(&facts));
            match run
                .limit
                .checked_sub(note)
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

    fn spill_stage(&self, run: &mut Run) -> Budgeted {
        let cuts = run.facts.cuts.clone();
        // JSON: the loosest caps that leave half the budget for the rest
        let start = Caps {
            array_items: run.policy.max_array_items,
            string_chars: run.policy.max_string_chars,
            depth: run.policy.max_depth,
        };
        let projected = run.work.clone();
        let mut json_cuts = ShrinkReport::default();
        for caps in ladder(start) {
            let (w, r) = shrunk(&projected, caps);
            run.work = w;
            json_cuts = r;
            let json: usize = json_texts(&run.work)
                .iter()
                .map(|t| self.counter.count(t))
                .sum();
            let mut facts = run.facts.clone();
            facts.cuts = cuts.clone();
            facts.cuts.extend(json_cuts.describe());
            let note = self.counter.count(&render(&facts));
            if json + note <= run.limit / 2 {
                break;
            }
        }
        run.facts.cuts = cuts;
        run.facts.cuts.extend(json_cuts.describe());
        self.drop_extras(run);
        run.facts.strategy = Strategy::Spilled.name();
        // the first prose-like part carries the preview; the rest is in the spilled original
        let preview_at = run
            .work
            .parts
            .iter()
            .position(|p| matches!(p, Part::Prose { .. } | Part::Resource { .. }));
        let (full, mut full_scan) = preview_at
            .map(|i| match &run.work.parts[i] {
                Part::Prose { text, scan } | Part::Resource { text, scan, .. } => {
                    (text.clone(), scan.clone())
                }
                _ => Default::default(),
            })
            .unwrap_or_default();
        let original_text = preview_at.and_then(|i| same_text(&run.original.parts, i, &full));
        let exact_lines = original_text.is_some();
        let total_lines = original_text.map_or(0, lines);
        let mut shave = 0;
        for _ in 0..4 {
            if let Some(i) = preview_at {
                let allowance = self
                    .preview_allowance(run, i, &full, exact_lines.then_some(total_lines))
                    .saturating_sub(shave);
                let allowance = run
                    .policy
                    .preview_tokens
                    .map_or(allowance, |p| allowance.min(self.counter.bpe_budget(p)));
                let (len, n) = self
                    .counter
                    .prefix_scanned(&full, allowance, 0.1, &mut full_scan);
                set_prose(
                    &mut run.work.parts[i],
                    full[..len].to_string(),
                    Scan::known(len, n),
                );
                run.facts.preview_lines = exact_lines.then(|| (lines(&full[..len]), total_lines));
                if !exact_lines {
                    run.facts.cuts.retain(|c| !c.starts_with("preview:"));
                    run.facts.cuts.push(format!(
                        "preview: the beginning of the text after stripping ({} of {} bytes)",
                        len,
                        full.len()
                    ));
                }
            }
            run.stage("preview");
            match self.try_finish(run, Strategy::Spilled) {
                Some(done) => return done,
                None => shave = shave * 2 + 32,
            }
        }
        // nothing left fits beside the note: send a short note alone; all is in the spill
        run.work.parts.clear();
        run.work.structured = None;
        run.facts.cuts =
            vec!["every block left out: the budget leaves no room beside this note".into()];
        run.facts.preview_lines = None;
        self.finish(run, Strategy::Spilled, usize::MAX)
    }

    /// Drop extra prose blocks and fixed blocks that crowd out the preview.
    fn drop_extras(&self, run: &mut Run) {
        let mut seen_prose = false;
        let before = run.work.parts.len();
        let mut dropped_fixed = 0;
        let fixed: usize = run
            .work
            .parts
            .iter()
            .map(|p| {
                if let Part::Fixed { tokens, .. } | Part::Image { tokens, .. } = p {
                    *tokens
                } else {
                    0
                }
            })
            .sum();
        let keep_fixed = fixed <= run.limit / 4;
        run.work.parts.retain(|p| match p {
            Part::Prose { .. } | Part::Resource { .. } => !std::mem::replace(&mut seen_prose, true),
            Part::Fixed { .. } | Part::Image { .. } if !keep_fixed => {
                dropped_fixed += 1;
                false
            }
            _ => true,
        });
        let dropped_prose = before - run.work.parts.len() - dropped_fixed;
        if dropped_prose > 0 {
            run.facts
                .cuts
                .push(format!("{dropped_prose} more text blocks left out"));
        }
        if dropped_fixed > 0 {
            run.facts.cuts.push(format!(
                "{dropped_fixed} links, images or binary blocks left out"
            ));
        }
    }

    /// Tokens left for the preview once everything else and a worst-case note are counted.
    fn preview_allowance(
        &self,
        run: &mut Run,
        at: usize,
        full: &str,
        total_lines: Option<usize>,
    ) -> usize {
        let saved = std::mem::replace(
            &mut run.work.parts[at],
            Part::Prose {
                text: String::new(),
                scan: Scan::known(0, 0),
            },
        );
        let others = run.work.cost(&self.counter);
        run.work.parts[at] = saved;
        let mut facts = run.facts.clone();
        facts.preview_lines = total_lines.map(|t| (t, t));
        if total_lines.is_none() {
            facts.cuts.push(format!(
                "preview: the beginning of the text after stripping ({} of {} bytes)",
                full.len(),
                full.len()
            ));
        }
        let note = self.counter.count(&render(&facts));
        run.limit.saturating_sub(others + note + 1)
    }

    /// Finish with `strategy` if the work and its note fit.
    fn try_finish(&self, run: &mut Run, strategy: Strategy) -> Option<Budgeted> {
        run.facts.strategy = strategy.name();
        let note = self.counter.count(&render(&run.facts));
        let rest = run
            .work
            .cost_up_to(&self.counter, run.limit.checked_sub(note)?)?;
        Some(self.finish(run, strategy, rest + note))
    }

    /// Write the spill, append the note, and account.
    fn finish(&self, run: &mut Run, strategy: Strategy, bpe_tokens: usize) -> Budgeted {
        run.facts.strategy = strategy.name();
        let planned = run
            .facts
            .spill
            .clone()
            .expect("a reduced result has a planned spill");
        match self
            .store
            .write(&planned, &spill_content(run.original, run.result))
        {
            Ok(h) => run.facts.spill = Some(h),
            Err(e) => {
                run.facts.spill = None;
                run.facts.spill_error = Some(format!("{} ({e})", planned.path.display()));
            }
        }
        let note = render(&run.facts);
        let mut tokens = bpe_tokens;
        if run.facts.spill.is_none() || bpe_tokens == usize::MAX {
            tokens = run.work.cost(&self.counter) + self.counter.count(&note);
        }
        run.stage("spill");
        Budgeted {
            result: run.work.to_result(std::slice::from_ref(&note)),
            budget: run.policy.budget,
            tokens_after: self.counter.units(tokens),
            strategy,
            stages: std::mem::take(&mut run.stages),
            spill: run.facts.spill.clone(),
            note: Some(note),
        }
    }
}

impl Run<'_> {
    fn stage(&mut self, name: &str) {
        let micros = self.clock.elapsed().as_micros() as u64;
        let spent: u64 = self.stages.iter().map(|s| s.micros).sum();
        self.stages.push(Stage {
            name: name.into(),
            micros: micros.saturating_sub(spent),
        });
    }
}

fn for_each_json(work: &mut Work, mut f: impl FnMut(&mut Value)) {
    for part in &mut work.parts {
        if let Part::Json { text, value } = part {
            f(value);
            *text = compact(value);
        }
    }
    if let Some(s) = &mut work.structured {
        f(s);
    }
}

/// `work` with every JSON part shrunk by `caps`, and what was cut.
fn shrunk(work: &Work, caps: Caps) -> (Work, ShrinkReport) {
    let mut report = ShrinkReport {
        string_chars: caps.string_chars,
        depth: caps.depth,
        ..ShrinkReport::default()
    };
    let mut one = |v: &Value| {
        let (s, r) = shrink(v, caps);
        report.merge(r);
        s
    };
    // build the shrunk copy directly: cloning a large JSON value first would double the work
    let parts = work
        .parts
        .iter()
        .map(|p| match p {
            Part::Json { value, .. } => {
                let value = one(value);
                Part::Json {
                    text: compact(&value),
                    value,
                }
            }
            other => other.clone(),
        })
        .collect();
    let structured = work.structured.as_ref().map(&mut one);
    let out = Work {
        parts,
        structured,
        structured_duplicate: work.structured_duplicate,
        rest: work.rest.clone(),
    };
    (out, report)
}

fn json_texts(work: &Work) -> Vec<String> {
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
    out.extend(work.structured.as_ref().map(compact));
    out
}

fn set_prose(p: &mut Part, new: String, counted: Scan) {
    if let Part::Prose { text, scan } | Part::Resource { text, scan, .. } = p {
        *text = new;
        *scan = counted;
    }
}

/// Whether the preview text is the original's (no stripping changed it), so lines match.
fn same_text<'a>(original: &'a [Part], at: usize, text: &str) -> Option<&'a str> {
    let orig = match original.get(at)? {
        Part::Prose { text, .. } | Part::Resource { text, .. } => text.as_str(),
        _ => return None,
    };
    (original.len() == 1 && orig.starts_with(text)).then_some(orig)
}

fn lines(text: &str) -> usize {
    text.lines().count()
}

/// What the spill file holds: a single text as it is, else the whole result as JSON.
/// What the spill file holds: a single text as it is, else the whole result as compact JSON
/// (every field kept, in the order received).
fn spill_content(original: &Work, result: &Value) -> Vec<u8> {
    match single_text(original) {
        Some(text) => text.as_bytes().to_vec(),
        None => compact(result).into_bytes(),
    }
}

/// The one text of a result that has a single text part (and at most a structuredContent that
/// repeats it).
fn single_text(original: &Work) -> Option<&str> {
    if original.structured.is_some() && !original.structured_duplicate {
        return None;
    }
    match original.parts.as_slice() {
        [Part::Prose { text, .. }] | [Part::Json { text, .. }] | [Part::Resource { text, .. }] => {
            Some(text)
        }
        _ => None,
    }
}

fn spill_ext(original: &Work) -> &'static str {
    if single_text(original).is_none() {
        return "json";
    }
    match original.parts.as_slice() {
        [Part::Prose { .. }] => "md",
        [Part::Resource { block, .. }] => match block["resource"]["mimeType"].as_str() {
            Some(m) if m.contains("json") => "json",
            Some(m) if m.contains("markdown") => "md",
            _ => "txt",
        },
        _ => "json",
    }
}
