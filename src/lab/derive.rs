//! `lab --derive`: a client's rules found by bisection on the lab server's synthetic results.
//! Per shape: from where the client's profile puts the boundary (else from 4,000 characters),
//! step away from it, doubling the step, until the client's answer changes, then bisect to 1%; at the first size that is not whole, read
//! what was kept (head, tail), the client's marker and whether it saved a file. The unit is the
//! one in which the shapes' thresholds agree (`wide` tells bytes from characters, `lines` tells
//! tokens from both), and the threshold the round number the bisection's interval holds.

use serde::{Deserialize, Serialize};

use super::probe::{Delivery, ProbeOutcome, Sent, Sizes};
use super::shapes::Shape;
pub use hint::{hints, Hint};

/// The size a derive starts at, and the bounds it searches within (characters).
const START: usize = 4_000;
pub const SMALLEST: usize = 125;
/// How far up a second rule is looked for (characters).
pub const ESCALATE_MAX: usize = 1_000_000;

/// What one shape's bisection found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ShapeRule {
    pub shape: Shape,
    /// 1: where the client stops delivering the shape whole; 2: where what it does then
    /// changes again.
    pub stage: u8,
    /// chars, bytes, tokens or lines; None when nothing was cut (or only one size was tried).
    pub unit: Option<String>,
    /// Other units the same runs fit as well (chars and bytes on ASCII text alike): the unit is
    /// a guess between them until a shape that parts them (`wide`) is cut too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unit_also: Vec<String>,
    /// The largest size delivered whole, in `unit`.
    pub threshold: Option<usize>,
    /// The largest result delivered whole, and the smallest that was not, in every unit.
    pub whole_up_to: Option<Sizes>,
    pub cut_from: Option<Sizes>,
    /// What happened at `cut_from`.
    pub delivery: Option<Delivery>,
    /// Characters kept from the start and the end at `cut_from`.
    pub head: usize,
    pub tail: usize,
    /// The whole result was saved to a file.
    pub file: bool,
    /// What the client wrote in place of what it cut.
    pub marker: String,
    /// Which part of the result was sent (the `structured` shape tells).
    pub sent: Option<Sent>,
    /// Client runs it took.
    pub runs: usize,
}

/// A size tried and what it became.
type Sized = (usize, ProbeOutcome);

/// Whether the client delivered an outcome whole.
fn whole(o: &ProbeOutcome) -> bool {
    o.delivery == Delivery::Whole
}

/// The client's runs of one shape: each run tries up to `batch` sizes, one call after another
/// (`run(sizes)` gives the outcomes of a prefix of them, at least one); a size tried once is
/// not run again.
struct Runs<F> {
    run: F,
    batch: usize,
    tried: std::collections::BTreeMap<usize, ProbeOutcome>,
    runs: usize,
}

impl<F, Fut> Runs<F>
where
    F: FnMut(Vec<usize>) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<ProbeOutcome>, String>>,
{
    /// The outcomes of `sizes` (in their order), in one run for those not tried yet, with
    /// `ahead` (sizes a later step will ask for) in the same run while it has room; a prefix
    /// of `sizes` when the run ended early.
    async fn at(&mut self, sizes: &[usize], ahead: &[usize]) -> Result<Vec<Sized>, String> {
        let mut new: Vec<usize> = Vec::new();
        for &c in sizes {
            if !self.tried.contains_key(&c) && !new.contains(&c) {
                new.push(c);
            }
        }
        if !new.is_empty() {
            for &c in ahead {
                if new.len() < self.batch && !self.tried.contains_key(&c) && !new.contains(&c) {
                    new.push(c);
                }
            }
            self.runs += 1;
            let got = (self.run)(new.clone()).await?;
            if got.is_empty() {
                return Err("the run measured nothing".into());
            }
            self.tried.extend(new.into_iter().zip(got));
        }
        Ok(sizes
            .iter()
            .map_while(|c| self.tried.get(c).map(|o| (*c, o.clone())))
            .collect())
    }
}

/// Bisect one shape: `run(sizes)` runs the client once on the shape at those sizes, one call
/// after another (at most `batch` a run; a client whose earlier results change what it does with
/// the next gets 1). The first rule is where the client stops delivering it whole; a second,
/// where what it does then changes again (a preview that becomes an error, as Claude Code's
/// token cap does), searched up to [`ESCALATE_MAX`]. `hints`: where the client's profile puts
/// the two boundaries, tried first (a profile that holds is confirmed in one run a boundary
/// with a batch of three or more, two with one a run).
pub async fn bisect<F, Fut>(
    shape: Shape,
    max_chars: usize,
    hints: Option<(Hint, Option<Hint>)>,
    batch: usize,
    run: F,
) -> Result<Vec<ShapeRule>, String>
where
    F: FnMut(Vec<usize>) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<ProbeOutcome>, String>>,
{
    let mut runs = Runs {
        run,
        batch: batch.max(1),
        tried: Default::default(),
        runs: 0,
    };
    let top = ESCALATE_MAX.min(max_chars);
    let batch = runs.batch;
    let (first, step) = start_of(hints.map(|h| h.0), START, max_chars);
    let sizes = first_sizes(hints.map(|h| h.0), first, step, SMALLEST, max_chars, batch);
    // where the second search will start (past a first boundary where the hint puts it), asked
    // in the first run while it has room
    let ahead: Vec<usize> = match hints.and_then(|h| h.1) {
        Some(h2) => {
            let (from, step2) = start_of(Some(h2), first, top);
            first_sizes(Some(h2), from, step2, first, top, batch)
        }
        None => Vec::new(),
    };
    let (lo, hi) = search(
        &mut runs, first, &sizes, step, SMALLEST, max_chars, &whole, &ahead,
    )
    .await?;
    let mut rules = vec![rule(
        shape,
        lo.map(|x| x.1),
        hi.as_ref().map(|x| x.1.clone()),
        1,
    )];
    if let Some((h, cut)) = hi {
        let kind = class(&cut);
        let same = move |o: &ProbeOutcome| class(o) == kind;
        let top = top.max(h);
        // past the first boundary: from the hint, else from it, doubling
        let (lo2, hi2) = match start_of(hints.and_then(|h| h.1), h, top) {
            (from, step) if from == h => walk(&mut runs, (h, cut), step, h, top, &same).await?,
            (from, step) => {
                let hint = hints.and_then(|h| h.1);
                let sizes = first_sizes(hint, from, step, h, top, batch);
                search(&mut runs, from, &sizes, step, h, top, &same, &[]).await?
            }
        };
        if let Some((_, o)) = hi2 {
            rules.push(rule(shape, lo2.map(|x| x.1), Some(o), 2));
        }
    }
    for r in &mut rules {
        r.runs = runs.runs;
    }
    Ok(rules)
}

/// What a client does with a result it does not deliver whole, for telling one rule from
/// the next: how, whether anything of it is kept, whether its end is (a preview of the head
/// alone, or a head and a tail: Qwen Code files a text over 28,000 characters with a preview,
/// and cuts one over 500,000 to a head and a tail), whether it is saved.
fn class(o: &ProbeOutcome) -> (Delivery, bool, bool, bool) {
    (
        o.delivery,
        o.head_chars + o.tail_chars > 0,
        o.tail_chars > 0,
        o.file.as_ref().is_some_and(|f| f.whole),
    )
}

/// The sizes a search tries first: `first` and, from a hint of a boundary with a batch of three
/// or more, a step either side of it in the same run (a hint that holds is then settled in one
/// run), within `[floor, max]`.
fn first_sizes(
    hint: Option<Hint>,
    first: usize,
    step: usize,
    floor: usize,
    max: usize,
    batch: usize,
) -> Vec<usize> {
    let mut sizes = vec![first];
    if batch >= 3 && matches!(hint, Some(Hint::At(_))) {
        let step = step.max(1);
        sizes = vec![
            first.saturating_sub(step).max(floor),
            first,
            (first + step).min(max),
        ];
        sizes.dedup();
    }
    sizes
}

/// The boundary of `below` from `first`, trying `sizes` first (ascending, within `[floor,
/// max]`: see [`first_sizes`]): between two of them where it lies there, else [`walk`] on from
/// the side it lies, `step` from `first`.
#[allow(clippy::too_many_arguments)]
async fn search<F, Fut>(
    runs: &mut Runs<F>,
    first: usize,
    sizes: &[usize],
    step: usize,
    floor: usize,
    max: usize,
    below: &dyn Fn(&ProbeOutcome) -> bool,
    ahead: &[usize],
) -> Result<(Option<Sized>, Option<Sized>), String>
where
    F: FnMut(Vec<usize>) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<ProbeOutcome>, String>>,
{
    let got = runs.at(sizes, ahead).await?;
    if let Some(w) = got.windows(2).find(|w| below(&w[0].1) && !below(&w[1].1)) {
        return narrow(runs, w[0].clone(), w[1].clone(), below).await;
    }
    // all on one side: walk on from the outermost, the step doubled past each size tried
    let up = below(&got[0].1);
    let from = match up {
        true => got[got.len() - 1].clone(),
        false => got[0].clone(),
    };
    let step = step.max(1);
    let step = if from.0 == first { step } else { step * 2 };
    walk(runs, from, step, floor, max, below).await
}

/// The boundary of `below` from `start`: steps away from it (up where `below` holds there,
/// down where it does not), `step` first and doubling, until it is crossed or `max` (or
/// `floor`) is reached; then bisection to 1%. A run tries the next `batch` steps at once. From
/// a plain start with `step` its size this doubles the size; from a profile's hint with a step
/// of 1%, a hint that holds costs one run past it, one a little off two or three.
async fn walk<F, Fut>(
    runs: &mut Runs<F>,
    start: Sized,
    step: usize,
    floor: usize,
    max: usize,
    below: &dyn Fn(&ProbeOutcome) -> bool,
) -> Result<(Option<Sized>, Option<Sized>), String>
where
    F: FnMut(Vec<usize>) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<ProbeOutcome>, String>>,
{
    let up = below(&start.1);
    let (mut last, mut step) = (start, step.max(1));
    loop {
        // the walk's next steps, each double the one before
        let mut sizes = Vec::new();
        let (mut at, mut s) = (last.0, step);
        while sizes.len() < runs.batch {
            let next = match up {
                true => (at + s).min(max),
                false => at.saturating_sub(s).max(floor),
            };
            if next == at {
                break;
            }
            sizes.push(next);
            (at, s) = (next, s * 2);
        }
        if sizes.is_empty() {
            // a bound reached on the same side: no boundary within it
            return Ok(if up {
                (Some(last), None)
            } else {
                (None, Some(last))
            });
        }
        for (next, o) in runs.at(&sizes, &[]).await? {
            if below(&o) != up {
                let (lo, hi) = if up {
                    (last, (next, o))
                } else {
                    ((next, o), last)
                };
                return narrow(runs, lo, hi, below).await;
            }
            last = (next, o);
            step *= 2;
        }
    }
}

/// Where to start a search: the size `hint` names (the largest size, for `Never`) and a step
/// of 1% of it, or `plain` and a step of its own size.
fn start_of(hint: Option<Hint>, plain: usize, max: usize) -> (usize, usize) {
    match hint {
        Some(Hint::At(h)) => {
            let first = h.clamp(SMALLEST, max);
            (first, (first / 100).max(100))
        }
        Some(Hint::Never) => (max, (max / 100).max(100)),
        None => (plain, plain),
    }
}

/// Narrow the interval between a size where `below` holds and a larger one where it does not
/// to 1%: each run tries up to `batch` sizes spread evenly inside it (one: the middle).
async fn narrow<F, Fut>(
    runs: &mut Runs<F>,
    lo: Sized,
    hi: Sized,
    below: &dyn Fn(&ProbeOutcome) -> bool,
) -> Result<(Option<Sized>, Option<Sized>), String>
where
    F: FnMut(Vec<usize>) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<ProbeOutcome>, String>>,
{
    let (mut lo, mut hi) = (lo, hi);
    loop {
        let tolerance = (lo.0 / 100).max(100);
        let span = hi.0 - lo.0;
        if span <= tolerance {
            return Ok((Some(lo), Some(hi)));
        }
        // no more parts than the tolerance needs
        let parts = (runs.batch + 1).min(span.div_ceil(tolerance)).max(2);
        let mut sizes: Vec<usize> = (1..parts).map(|j| lo.0 + span * j / parts).collect();
        sizes.dedup();
        for (size, o) in runs.at(&sizes, &[]).await? {
            if below(&o) {
                lo = (size, o);
            } else {
                hi = (size, o);
                break;
            }
        }
    }
}

fn rule(shape: Shape, lo: Option<ProbeOutcome>, hi: Option<ProbeOutcome>, stage: u8) -> ShapeRule {
    let cut = hi.as_ref();
    ShapeRule {
        shape,
        stage,
        unit: None,
        unit_also: Vec::new(),
        threshold: None,
        whole_up_to: lo.as_ref().map(|o| o.raw),
        cut_from: cut.map(|o| o.raw),
        delivery: cut.map(|o| o.delivery),
        head: cut.map_or(0, |o| o.head_chars),
        tail: cut.map_or(0, |o| o.tail_chars),
        file: cut.is_some_and(|o| o.file.as_ref().is_some_and(|f| f.whole)),
        marker: cut.map_or(String::new(), |o| o.added.clone()),
        sent: lo.as_ref().or(cut).map(|o| o.sent),
        runs: 0,
    }
}

/// The units a threshold may be counted in, in the order ties are broken.
const UNITS: [&str; 4] = ["chars", "bytes", "tokens", "lines"];

/// Give each bisected shape its unit and threshold: the unit in which the most other shapes'
/// intervals (whole up to, cut from) overlap its own; ties, and a shape alone, go to the unit
/// whose interval holds the roundest number, then to the order of [`UNITS`].
pub fn settle_units(rules: &mut [ShapeRule]) {
    let intervals: Vec<Option<(Sizes, Sizes)>> = rules
        .iter()
        .map(|r| r.whole_up_to.zip(r.cut_from))
        .collect();
    let stages: Vec<u8> = rules.iter().map(|r| r.stage).collect();
    for (i, rule) in rules.iter_mut().enumerate() {
        let Some((lo, hi)) = intervals[i] else {
            continue;
        };
        let score = |unit: &str| {
            let (a, b) = (lo.in_unit(unit), hi.in_unit(unit));
            let agree = intervals
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i && stages[*j] == stages[i])
                .filter_map(|(_, x)| *x)
                .filter(|(l, h)| l.in_unit(unit).max(a) < h.in_unit(unit).min(b))
                .count();
            (agree, roundness(a, b))
        };
        let best = UNITS
            .iter()
            .copied()
            .filter(|u| lo.in_unit(u) < hi.in_unit(u))
            .max_by_key(|u| {
                (
                    score(u),
                    std::cmp::Reverse(UNITS.iter().position(|x| x == u)),
                )
            });
        if let Some(unit) = best {
            // the shapes that agree narrow the interval the threshold lies in
            let (mut a, mut b) = (lo.in_unit(unit), hi.in_unit(unit));
            let same_stage = intervals
                .iter()
                .zip(&stages)
                .filter(|(_, s)| **s == stages[i]);
            for (l, h) in same_stage.filter_map(|(x, _)| x.as_ref()) {
                let (l, h) = (l.in_unit(unit), h.in_unit(unit));
                if l.max(a) < h.min(b) {
                    (a, b) = (l.max(a), h.min(b));
                }
            }
            // a unit the same evidence cannot tell from the one chosen: every interval of the
            // stage that agrees reads the same in both
            let same_stage: Vec<&(Sizes, Sizes)> = intervals
                .iter()
                .zip(&stages)
                .filter(|(_, s)| **s == stages[i])
                .filter_map(|(x, _)| x.as_ref())
                .collect();
            rule.unit_also = UNITS
                .iter()
                .filter(|u| **u != unit)
                .filter(|u| {
                    same_stage.iter().all(|(l, h)| {
                        l.in_unit(u) == l.in_unit(unit) && h.in_unit(u) == h.in_unit(unit)
                    })
                })
                .map(|u| u.to_string())
                .collect();
            rule.unit = Some(unit.to_string());
            rule.threshold = Some(round_in(a, b));
        }
    }
}

/// How round the roundest number in `[lo, hi)` is: the power of ten (or of two, for sizes in
/// KiB) that divides it, as an exponent-like score.
fn roundness(lo: usize, hi: usize) -> u32 {
    let n = round_in(lo, hi);
    let tens = (0..)
        .take_while(|k| n > 0 && n.is_multiple_of(10usize.pow(*k + 1)))
        .count() as u32;
    let twos = if n >= 1024 && n.is_multiple_of(1024) {
        3 + (n / 1024).trailing_zeros().min(3)
    } else {
        0
    };
    tens.max(twos)
}

/// The roundest number in `[lo, hi)` (the largest power-of-ten step, then multiples of 1024),
/// or `lo` when the interval holds none rounder.
pub fn round_in(lo: usize, hi: usize) -> usize {
    let mut best = lo;
    let mut step = 10;
    while step <= hi {
        let n = hi.saturating_sub(1) / step * step;
        if n >= lo && n > 0 {
            best = n;
        }
        step *= 10;
    }
    let kib = hi.saturating_sub(1) / 1024 * 1024;
    if kib >= lo && kib > 0 && !best.is_multiple_of(1000) {
        best = kib;
    }
    best
}

mod hint;
#[cfg(test)]
mod tests;
