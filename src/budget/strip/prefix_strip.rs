//! Stripping and counting a large text only as far as the budget needs. A 300 KB page that
//! is spilled anyway only shows its first few thousand tokens, so only that much is stripped
//! and counted; the original goes to the spill store untouched.

use super::chunks::chunk_end;
use crate::budget::parts::prefix::PrefixCounter;
use crate::budget::parts::prefix::Scan;
use crate::budget::policy::ToolPolicy;
use crate::budget::strip::{strip, StripCounts};
use crate::ground::tokens::cuts::segments;

/// Bytes of original text stripped at a time.
const CHUNK_BYTES: usize = 16 * 1024;
/// How far past [`CHUNK_BYTES`] a chunk may run when no place to cut comes sooner.
const MAX_CHUNK_SCAN: usize = 16 * CHUNK_BYTES;

/// The stripped beginning of a text.
#[derive(Debug, Clone)]
pub struct StrippedPrefix {
    pub text: String,
    pub scan: Scan,
    pub counts: StripCounts,
    /// Bytes of the original that were read.
    pub read_bytes: usize,
    /// The whole original was read (and `text` is all of it, stripped).
    pub complete: bool,
    /// After each chunk stripped: (bytes of `text`, bytes of the original) so far, what
    /// [`original_offset`] would strip again to find.
    pub chunks: Vec<(usize, usize)>,
}

/// Strip `text` chunk by chunk, counting as it goes, until the stripped text passes `limit`
/// tokens or the text ends. Chunks end where [`chunk_end`] finds a place that is a safe token cut
/// and that no strip rule matches across.
pub fn strip_prefix(
    text: &str,
    policy: &ToolPolicy,
    counter: &PrefixCounter,
    limit: usize,
) -> StrippedPrefix {
    let mut out = String::new();
    let mut bounds: Vec<(usize, usize)> = Vec::new();
    let mut counts = StripCounts::default();
    let mut chunks = Vec::new();
    let (mut pos, mut tokens) = (0, 0);
    while pos < text.len() {
        let end = chunk_end(text, pos, pos + CHUNK_BYTES, MAX_CHUNK_SCAN);
        let (stripped, c) = strip(&text[pos..end], policy);
        counts.add(&c);
        let base = out.len();
        out.push_str(&stripped);
        chunks.push((out.len(), end));
        let mut offset = base;
        for seg in segments(&stripped) {
            offset += seg.len();
            tokens += counter.count(seg);
            bounds.push((offset, tokens));
            if tokens > limit {
                // the whole chunk is stripped into `out` even when counting stops inside it
                let read_all = end == text.len();
                let done = read_all && offset == out.len();
                return StrippedPrefix {
                    text: out,
                    scan: Scan::from_bounds(bounds, done),
                    counts,
                    read_bytes: end,
                    complete: read_all,
                    chunks,
                };
            }
        }
        pos = end;
    }
    StrippedPrefix {
        text: out,
        scan: Scan::from_bounds(bounds, true),
        counts,
        read_bytes: text.len(),
        complete: true,
        chunks,
    }
}

/// Where in `text` the first `at` bytes of its stripped form end: the offset in the original
/// to continue reading from. Stripping works piece by piece between the safe boundaries that
/// [`strip_prefix`] cuts at, so whole pieces map exactly; a position inside a piece that
/// stripping changed maps to the piece's start (the reader re-reads at most that piece, never
/// skips), one inside an unchanged piece maps byte for byte. `known` is what
/// [`StrippedPrefix::chunks`] says of the same text and policy (or nothing): whole chunks it
/// covers are not stripped again.
pub fn original_offset(
    text: &str,
    policy: &ToolPolicy,
    at: usize,
    known: &[(usize, usize)],
) -> usize {
    let (mut out, mut pos) = known
        .iter()
        .take_while(|(stripped, _)| *stripped <= at)
        .last()
        .copied()
        .unwrap_or((0, 0));
    // whole chunks first, then the chunk that holds `at` line by line
    while pos < text.len() {
        let end = chunk_end(text, pos, pos + CHUNK_BYTES, MAX_CHUNK_SCAN);
        let n = strip(&text[pos..end], policy).0.len();
        if out + n > at {
            break;
        }
        (pos, out) = (end, out + n);
    }
    while pos < text.len() && out < at {
        let end = chunk_end(text, pos, pos + 1, MAX_CHUNK_SCAN);
        let piece = &text[pos..end];
        let stripped = strip(piece, policy).0;
        if out + stripped.len() > at {
            return if stripped == piece {
                pos + (at - out)
            } else {
                pos + offset_in_piece(piece, &stripped, policy, at - out)
            };
        }
        (pos, out) = (end, out + stripped.len());
    }
    pos
}

/// Where in `piece` the first `at` bytes of `stripped` (its strip) end, line by line: exact
/// when stripping its lines one at a time gives the same text as stripping it whole (no rule
/// matched across a line break, as in an indented page snapshot with long URLs), else 0 (the
/// piece's start: re-read, never skipped).
fn offset_in_piece(piece: &str, stripped: &str, policy: &ToolPolicy, at: usize) -> usize {
    let mut lines = Vec::new();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', piece.as_bytes())
        .map(|i| i + 1)
        .chain(std::iter::once(piece.len()))
    {
        if end > start {
            let line = &piece[start..end];
            lines.push((start, line, strip(line, policy).0));
        }
        start = end;
    }
    if lines.iter().map(|(_, _, s)| s.as_str()).collect::<String>() != stripped {
        return 0;
    }
    let mut out = 0;
    for (start, line, s) in &lines {
        if out + s.len() > at {
            return if s == line {
                start + (at - out)
            } else {
                *start
            };
        }
        out += s.len();
    }
    piece.len()
}

impl StripCounts {
    /// Add another chunk's counts.
    pub fn add(&mut self, o: &StripCounts) {
        self.data_uri_images += o.data_uri_images;
        self.long_urls += o.long_urls;
        self.tracking_params += o.tracking_params;
        self.base64_runs += o.base64_runs;
        self.blank_runs += o.blank_runs;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ground::tokens::Tokenizer;

    fn page() -> String {
        let mut s = String::new();
        for i in 0..3000 {
            s.push_str(&format!("## Section {i}\n\nSome text with a [link](https://ex.example/p?id={i}&utm_source=x).\n\n\n\n"));
            if i % 50 == 0 {
                s.push_str(&format!(
                    "![img](data:image/png;base64,{})\n",
                    "QUJD".repeat(200)
                ));
            }
        }
        s
    }

    #[test]
    fn a_text_read_whole_is_complete_even_when_counting_stops_early() {
        // indented lines: one chunk (no chunk boundary), many safe token cuts inside it
        let text = format!(
            "{}    see https://example.org/{}\n",
            "    alpha beta gamma delta\n".repeat(200),
            "x".repeat(300)
        );
        let c = PrefixCounter::new(Tokenizer::Cl100k);
        let p = ToolPolicy::default();
        let part = strip_prefix(&text, &p, &c, 50);
        let (whole, counts) = strip(&text, &p);
        assert_eq!(part.read_bytes, text.len());
        assert!(part.complete, "every byte was read and stripped");
        assert_eq!(part.text, whole);
        assert_eq!(part.counts, counts);
        let mut scan = part.scan.clone();
        assert_eq!(c.count_scanned(&part.text, 50, &mut scan), None);
    }

    #[test]
    fn a_complete_prefix_equals_the_whole_strip() {
        let text = page();
        let c = PrefixCounter::new(Tokenizer::Cl100k);
        let p = ToolPolicy::default();
        let all = strip_prefix(&text, &p, &c, usize::MAX);
        let (whole, counts) = strip(&text, &p);
        assert!(all.complete);
        assert_eq!(all.text, whole);
        assert_eq!(all.counts, counts);
        let mut scan = all.scan.clone();
        assert_eq!(
            c.count_scanned(&all.text, usize::MAX, &mut scan),
            Some(c.count(&whole))
        );
    }

    #[test]
    fn stripped_offsets_map_back_to_the_original() {
        let text = page();
        let p = ToolPolicy::default();
        let (whole, _) = strip(&text, &p);
        // what stripping chunk by chunk recorded: the same offsets, found without re-stripping
        let c = PrefixCounter::new(Tokenizer::Cl100k);
        let known = strip_prefix(&text, &p, &c, usize::MAX).chunks;
        assert!(known.len() > 2, "{}", known.len());
        // every line start of the stripped text maps to the start of the same line content
        let mut checked = 0;
        for (at, _) in whole.match_indices("## Section ").skip(1).step_by(97) {
            let o = original_offset(&text, &p, at, &[]);
            assert_eq!(original_offset(&text, &p, at, &known), o, "{at}");
            assert!(
                text[o..].starts_with(&whole[at..at + 16]),
                "{at} -> {o}: {:?} vs {:?}",
                &text[o..o + 16],
                &whole[at..at + 16]
            );
            assert_eq!(&text[o - 1..o], "\n", "a line start maps to a line start");
            checked += 1;
        }
        assert!(checked > 20);
        // inside a stripped line: back to its start, never past it
        let img = whole.find("[image removed: img]").unwrap();
        let o = original_offset(&text, &p, img + 5, &[]);
        assert!(
            text[o..].starts_with("![img](data:"),
            "{:?}",
            &text[o..o + 20]
        );
        assert_eq!(original_offset(&text, &p, whole.len(), &[]), text.len());
        // an indented snapshot is one piece: its lines still map one by one
        let snapshot: String = (0..400)
            .map(|i| {
                format!(
                    "  - link \"item {i}\" [ref=e{i}]:\n    - /url: https://cdn.example/{}\n",
                    "p".repeat(250)
                )
            })
            .collect();
        let (short, _) = strip(&snapshot, &p);
        let at = short.find("item 300").unwrap();
        let o = original_offset(&snapshot, &p, at, &[]);
        assert!(
            snapshot[o..].starts_with("item 300"),
            "{:?}",
            &snapshot[o..o + 20]
        );
        assert_eq!(original_offset(&text, &p, 0, &[]), 0);
    }

    #[test]
    fn stops_soon_after_the_limit_with_exact_counts() {
        let text = page();
        let c = PrefixCounter::new(Tokenizer::Cl100k);
        let part = strip_prefix(&text, &ToolPolicy::default(), &c, 2000);
        assert!(!part.complete);
        assert!(
            part.read_bytes < text.len() / 4,
            "read {} of {}",
            part.read_bytes,
            text.len()
        );
        let mut scan = part.scan.clone();
        assert_eq!(c.count_scanned(&part.text, 2000, &mut scan), None);
        let (len, n) = c.prefix_scanned(&part.text, 2000, 0.1, &mut scan);
        assert_eq!(n, c.count(&part.text[..len]));
    }
}
