//! The router: least destructive stage first, stop as soon as the result and its note fit.

pub(super) mod client;
mod fill_stage;
mod json_stage;
pub(super) mod note;
mod spill_stage;

use spill_stage::{spill_content, spill_ext};

use std::borrow::Cow;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::parts::{Part, Work};
use super::strip::{strip, StripCounts};
use crate::budget::engine::note::{render, NoteFacts};
use crate::budget::shape::compaction::compact_text;
use crate::budget::strip::prefix_strip::strip_prefix;
use crate::budget::{Policy, PrefixCounter, Scan, SpillHandle, SpillStore, ToolPolicy};
use crate::ground::tokens::Tokenizer;

/// How a result was made to fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    PassThrough,
    Stripped,
    /// JSON written without the whitespace between its tokens: nothing else changed.
    Compacted,
    /// JSON re-encoded as TOON: the same value in fewer tokens.
    Toon,
    Projected,
    Shrunk,
    Spilled,
}

impl Strategy {
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::PassThrough => "pass_through",
            Strategy::Stripped => "stripped",
            Strategy::Compacted => "compacted",
            Strategy::Toon => "toon",
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
    /// Why the full original could not be saved (the result then says so, and the caller must
    /// make it loud: nothing cut may go unnoticed).
    pub spill_error: Option<String>,
    /// The largest list the engine cut: how many of its items reached the model whole.
    pub list: Option<crate::measure::facts::ItemsKept>,
}

/// Which call a result came from (the server and tool name the spill file).
#[derive(Debug, Clone, Copy)]
pub struct CallInfo<'a> {
    pub server: &'a str,
    pub tool: &'a str,
    /// The exact JSON text of the result as the server sent it, when known: a spilled whole
    /// result is saved as these bytes (else as the result's compact JSON).
    pub raw: Option<&'a str>,
    /// The tool declares an `outputSchema`: its structuredContent is kept (shrunk if need be)
    /// even where it repeats the text, since a client validates that it is there (the MCP
    /// specification: a server with an output schema MUST return it).
    pub output_schema: bool,
}

/// The engine: a policy, a counter and a spill store.
#[derive(Debug, Clone)]
pub struct Engine {
    policy: Policy,
    counter: PrefixCounter,
    store: SpillStore,
    /// Notes name `mcp_budget_read` (set by the proxy).
    reader_tool: bool,
}

/// Where a run is: the call, its policy and budget, the work so far, the note's facts.
struct Run<'a> {
    /// What the spill file holds (its hash names the file).
    spill_bytes: Cow<'a, [u8]>,
    policy: ToolPolicy,
    limit: usize,
    original: &'a Work<'a>,
    work: Work<'a>,
    facts: NoteFacts,
    stages: Vec<Stage>,
    clock: Instant,
    /// Where the prefix strip of the first prose text cut its chunks (see
    /// [`crate::budget::strip::prefix_strip::StrippedPrefix::chunks`]), for mapping the preview's end back.
    prose_chunks: Vec<(usize, usize)>,
    /// The largest list a fill cut, in the work as it stands.
    list: Option<crate::measure::facts::ItemsKept>,
}

impl Engine {
    pub fn new(policy: Policy, tokenizer: Tokenizer, store: SpillStore) -> Self {
        Engine {
            policy,
            counter: PrefixCounter::new(tokenizer),
            store,
            reader_tool: false,
        }
    }

    /// Notes point to the proxy's `mcp_budget_read` tool instead of the file.
    pub fn with_reader_tool(mut self) -> Self {
        self.reader_tool = true;
        self
    }

    /// A copy whose every tool's limits are tightened to a client's: a token cap and bounds in
    /// bytes, characters and lines (see [`Policy::tighten_to`]).
    pub fn tightened(
        &self,
        tokens: Option<usize>,
        size: super::SizeLimits,
        note_first: bool,
    ) -> Engine {
        let mut e = self.clone();
        e.policy.tighten_to(tokens, size);
        e.policy.set_note_first(note_first);
        e
    }

    /// This engine measuring embedded resources as their blocks' JSON (a client that sends
    /// them so, and holds that to its limits).
    pub(crate) fn with_resources_json(mut self, json: bool) -> Engine {
        self.policy.set_resources_json(json);
        self
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub fn store(&self) -> &SpillStore {
        &self.store
    }

    /// The cost of `result` before the engine ran: known from a pass-through run, counted in
    /// full otherwise (outside the engine pass, which stops reading once over the budget).
    pub fn tokens_before(&self, out: &Budgeted, result: &Value) -> usize {
        self.tokens_before_of(out.strategy, out.tokens_after, result)
    }

    /// [`Self::tokens_before`] from the two facts it needs (when the `Budgeted` is gone).
    pub fn tokens_before_of(
        &self,
        strategy: Strategy,
        tokens_after: usize,
        result: &Value,
    ) -> usize {
        match strategy {
            Strategy::PassThrough => tokens_after,
            _ => self.cost(result),
        }
    }

    /// The exact model-view cost of a result (what the engine measures against the budget).
    /// Of a result that was over the budget (`tokens_before`), the share of the budget the
    /// model is sent.
    pub fn fill(out: &Budgeted, tokens_before: usize) -> Option<f64> {
        (tokens_before > out.budget && out.budget > 0)
            .then(|| out.tokens_after as f64 / out.budget as f64)
    }

    pub fn cost(&self, result: &Value) -> usize {
        self.counter
            .units(Work::parse(result, &self.counter).cost(&self.counter))
    }

    /// Make `result` (a `CallToolResult` as JSON) fit its tool's budget; an example is in
    /// the module's doc ([`crate::budget`]).
    pub fn run(&self, call: &CallInfo, result: &Value) -> Budgeted {
        let mut policy = self.policy.for_tool(call.tool);
        if call.output_schema {
            policy.drop_duplicate_structured = false;
        }
        let limit = self.counter.bpe_budget(policy.budget);
        let clock = Instant::now();
        let mut original = Work::parse(result, &self.counter);
        original.verify_json();
        // A large text is stripped first and counted once: where the stripped text still
        // shares the beginning of the original, its count proves the original over budget too.
        let large = original.text_bytes() > limit * 8;
        // a copy of the parts, borrowing their texts: a stage replaces what it changes
        let mut work = original.clone();
        let mut cuts = Vec::new();
        let mut prose_chunks = Vec::new();
        if large {
            (cuts, prose_chunks) =
                self.strip_work(&mut work, Some(&original), &policy, limit, call);
            let _ = work.cost_up_to(&self.counter, limit);
            original.adopt_scans(&work);
        }
        let fits = original
            .cost_up_to(&self.counter, limit)
            .filter(|_| policy.size.is_unbounded() || policy.size.fits(original.size()));
        if let Some(n) = fits {
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
                spill_error: None,
                list: None,
            };
        }
        if !large {
            (cuts, _) = self.strip_work(&mut work, None, &policy, limit, call);
        }
        let spill_bytes = spill_content(&original, result, call.raw);
        let facts = NoteFacts {
            reader_tool: self.reader_tool,
            budget: policy.budget,
            size: policy.size.describe(),
            original_bytes: original.payload_bytes(),
            spill: Some(self.store.plan(
                call.server,
                call.tool,
                spill_ext(&original),
                &spill_bytes,
            )),
            cuts,
            ..NoteFacts::default()
        };
        let mut run = Run {
            spill_bytes,
            policy,
            limit,
            original: &original,
            work,
            facts,
            stages: Vec::new(),
            clock,
            prose_chunks,
            list: None,
        };
        run.stage("measure+strip");
        if let Some(done) = self.try_finish(&mut run, Strategy::Stripped) {
            return done;
        }
        if compact_json(&mut run) {
            run.stage("compact");
            if let Some(done) = self.try_finish(&mut run, Strategy::Compacted) {
                return done;
            }
        }
        if let Some(done) = self.json_stages(&mut run) {
            return done;
        }
        self.spill_stage(&mut run)
    }

    /// Strip prose, drop a duplicate structuredContent, save oversized images; returns the cuts,
    /// and where the prefix strip of the first prose text cut its chunks. With the `original`
    /// (a prefix strip), prose is read from it and stripped and counted only until it passes the budget.
    fn strip_work<'a>(
        &self,
        work: &mut Work<'a>,
        original: Option<&Work<'a>>,
        policy: &ToolPolicy,
        limit: usize,
        call: &CallInfo,
    ) -> (Vec<String>, Vec<(usize, usize)>) {
        let mut cuts = Vec::new();
        let mut first_chunks = None;
        if work.structured_duplicate && policy.drop_duplicate_structured {
            work.structured = None;
            cuts.push("structuredContent dropped: it repeats the text content".into());
        }
        let mut counts = StripCounts::default();
        let mut partial: Option<usize> = None;
        for (i, part) in work.parts.iter_mut().enumerate() {
            if let Part::Prose { text, scan } = part {
                if let Some(original) = original {
                    let Some(Part::Prose { text: whole, .. }) = original.parts.get(i) else {
                        unreachable!(
                            "the prefix-stripped copy keeps the original's parts in order"
                        );
                    };
                    let p = strip_prefix(whole, policy, &self.counter, limit);
                    if !p.complete {
                        partial = Some(partial.unwrap_or(0) + p.read_bytes);
                    }
                    (*text, *scan) = (Cow::Owned(p.text), p.scan);
                    counts.add(&p.counts);
                    first_chunks.get_or_insert(p.chunks);
                    continue;
                }
                let (s, c) = strip(text, policy);
                if !c.is_empty() {
                    *scan = Scan::rebase(text, scan, &s);
                    *text = Cow::Owned(s);
                }
                counts.add(&c);
            }
        }
        let read = partial.map_or(String::new(), |b| {
            format!(
                " (in the first {} bytes read)",
                crate::ground::units::thousands(b)
            )
        });
        cuts.extend(counts.describe().into_iter().map(|c| format!("{c}{read}")));
        let mut spilled_images = 0;
        for part in work.parts.iter_mut() {
            if let Part::Image { block, tokens } = part {
                if *tokens > limit / 2 {
                    *part = Part::Prose {
                        text: Cow::Owned(self.spill_image(call, block, *tokens)),
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
        (cuts, first_chunks.unwrap_or_default())
    }

    /// Save an image's bytes and say where in place of it.
    fn spill_image(&self, call: &CallInfo, block: &Value, tokens: usize) -> String {
        let mime = block["mimeType"].as_str().unwrap_or("image/png");
        let data = block["data"].as_str().unwrap_or("");
        // data that is no image is kept as the text it is (decoding it would lose it)
        let (bytes, ext, what) = match crate::ground::tokens::decode_image(data) {
            Some((bytes, _)) => (bytes, mime.rsplit('/').next().unwrap_or("bin"), "image"),
            None => (
                data.as_bytes().to_vec(),
                "txt",
                "image data that is no valid image",
            ),
        };
        match self.store.save(call.server, call.tool, ext, &bytes) {
            Ok(h) => format!(
                "[{what} of ~{tokens} tokens saved to {} ({})]",
                h.path.display(),
                h.uri()
            ),
            Err(e) => format!("[{what} of ~{tokens} tokens removed; saving it failed: {e}]"),
        }
    }

    /// Finish with `strategy` if the work and its note fit.
    fn try_finish(&self, run: &mut Run, strategy: Strategy) -> Option<Budgeted> {
        run.facts.strategy = strategy.name();
        let text = render(&run.facts);
        if !run.fits_size(&text) {
            return None;
        }
        let note = self.counter.count(&text);
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
        match self.store.write(&planned, &run.spill_bytes) {
            Ok(h) => run.facts.spill = Some(h),
            Err(e) => {
                run.facts.spill = None;
                run.facts.spill_error = Some(format!("{}: {e}", planned.path.display()));
            }
        }
        let note = render(&run.facts);
        let mut tokens = bpe_tokens;
        if run.facts.spill.is_none() || bpe_tokens == usize::MAX {
            tokens = run.work.cost(&self.counter) + self.counter.count(&note);
        }
        run.stage("spill");
        Budgeted {
            result: if run.policy.note_first {
                run.work.to_result_after(std::slice::from_ref(&note))
            } else {
                run.work.to_result(std::slice::from_ref(&note))
            },
            budget: run.policy.budget,
            tokens_after: self.counter.units(tokens),
            strategy,
            stages: std::mem::take(&mut run.stages),
            spill: run.facts.spill.clone(),
            note: Some(note),
            spill_error: run.facts.spill_error.clone(),
            list: run.list.take(),
        }
    }
}

/// Write each JSON text without whitespace between its tokens; whether any had some.
fn compact_json(run: &mut Run) -> bool {
    let mut bytes = 0;
    // no token of cl100k_base or o200k_base is over 128 bytes: a JSON text whose tokens alone
    // pass that many bytes per token of the budget cannot fit compacted (the fill writes what
    // it keeps compactly anyway), so it is not copied whole for nothing
    let hopeless = run.limit.saturating_mul(128);
    for part in &mut run.work.parts {
        if let Part::Json { text, value } = part {
            let b = text.as_bytes();
            let start = crate::budget::shape::fill::scan::skip_ws(b, 0);
            if b.len() > hopeless
                && crate::budget::shape::fill::scan::compact_len(b, (start, b.len()), hopeless)
                    > hopeless
            {
                continue;
            }
            if let Some(c) = compact_text(text) {
                bytes += text.len() - c.len();
                *value = value.for_new_text();
                *text = Cow::Owned(c);
            }
        }
    }
    if bytes > 0 {
        run.facts.cuts.push(format!(
            "JSON written compactly: {} bytes of whitespace between tokens removed, nothing else",
            crate::ground::units::thousands(bytes)
        ));
    }
    bytes > 0
}

impl Run<'_> {
    /// The work and a note `note` long are within the policy's bytes, characters and lines.
    fn fits_size(&self, note: &str) -> bool {
        let size = &self.policy.size;
        size.is_unbounded()
            || size.fits(self.work.size_as(
                Some(note),
                self.policy.note_first,
                self.policy.resources_json,
            ))
    }

    fn stage(&mut self, name: &str) {
        let micros = self.clock.elapsed().as_micros() as u64;
        let spent: u64 = self.stages.iter().map(|s| s.micros).sum();
        self.stages.push(Stage {
            name: name.into(),
            micros: micros.saturating_sub(spent),
        });
    }
}
