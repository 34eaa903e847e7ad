//! Limits in a client's own units, met beside the token budget: the bytes, characters and lines
//! of the text a result shows the model (text blocks, embedded resource text, links as JSON,
//! structuredContent as compact JSON, and the note; images are not text). A client that cuts at
//! 10,000 bytes or 256 lines is not protected by a token budget alone: the tightest limit wins.

use std::ops::Add;

use crate::ground::text::{char_count, floor_char_boundary, line_count};

/// The size of some text in the units clients cut by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Size {
    pub bytes: usize,
    pub chars: usize,
    pub lines: usize,
}

impl Size {
    /// The size of one text: `lines` as `str::lines` counts them.
    pub fn of(text: &str) -> Size {
        Size {
            bytes: text.len(),
            chars: char_count(text),
            lines: line_count(text),
        }
    }
}

impl Add for Size {
    type Output = Size;
    fn add(self, o: Size) -> Size {
        Size {
            bytes: self.bytes + o.bytes,
            chars: self.chars + o.chars,
            lines: self.lines + o.lines,
        }
    }
}

/// Upper bounds on a result's [`Size`]; `None`: no bound in that unit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SizeLimits {
    pub bytes: Option<usize>,
    pub chars: Option<usize>,
    pub lines: Option<usize>,
}

impl SizeLimits {
    /// No bound at all (the engine then never measures sizes).
    pub fn is_unbounded(&self) -> bool {
        self.bytes.is_none() && self.chars.is_none() && self.lines.is_none()
    }

    pub fn fits(&self, s: Size) -> bool {
        let ok = |limit: Option<usize>, v: usize| limit.is_none_or(|l| v <= l);
        ok(self.bytes, s.bytes) && ok(self.chars, s.chars) && ok(self.lines, s.lines)
    }

    /// The tighter of the two bounds in every unit.
    pub fn tightened(self, other: SizeLimits) -> SizeLimits {
        let min = crate::ground::units::tighter;
        SizeLimits {
            bytes: min(self.bytes, other.bytes),
            chars: min(self.chars, other.chars),
            lines: min(self.lines, other.lines),
        }
    }

    /// What is left of these bounds once `used` is spent (`None` when it is already over).
    pub fn room(&self, used: Size) -> Option<SizeLimits> {
        let left = |limit: Option<usize>, v: usize| match limit {
            Some(l) => l.checked_sub(v).map(Some),
            None => Some(None),
        };
        Some(SizeLimits {
            bytes: left(self.bytes, used.bytes)?,
            chars: left(self.chars, used.chars)?,
            lines: left(self.lines, used.lines)?,
        })
    }

    /// These bounds scaled by `share` (rounded down), for a part that may take only a share.
    pub fn share(&self, share: f64) -> SizeLimits {
        let s = |l: Option<usize>| l.map(|l| (l as f64 * share) as usize);
        SizeLimits {
            bytes: s(self.bytes),
            chars: s(self.chars),
            lines: s(self.lines),
        }
    }

    /// The longest prefix of `text[..len]` (a byte length at a char boundary) that fits: cut at
    /// a character boundary, and after the last line break that keeps the line count.
    pub fn prefix_len(&self, text: &str, len: usize) -> usize {
        let mut end = len.min(text.len());
        if let Some(b) = self.bytes {
            end = floor_char_boundary(text, end.min(b));
        }
        if let Some(c) = self.chars {
            if let Some((i, _)) = text[..end].char_indices().nth(c) {
                end = i;
            }
        }
        if let Some(l) = self.lines {
            if line_count(&text[..end]) > l {
                // `l` whole lines end at the l-th line break (none at all: nothing fits)
                end = match l {
                    0 => 0,
                    l => memchr::memchr_iter(b'\n', &text.as_bytes()[..end])
                        .nth(l - 1)
                        .map_or(end, |i| i + 1),
                };
            }
        }
        end
    }

    /// [`Self::prefix_len`] for a text sent as a JSON string (a resource a client sends as its
    /// block's JSON): each character measured as written escaped (a quote, a backslash or a
    /// line break is two, another control character six). The string has no line breaks.
    pub fn prefix_len_escaped(&self, text: &str, len: usize) -> usize {
        let end = floor_char_boundary(text, len.min(text.len()));
        let (mut bytes, mut chars) = (0, 0);
        for (i, c) in text[..end].char_indices() {
            // (bytes, characters) as serde_json writes it
            let (b, n) = match c {
                '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => (2, 2),
                c if (c as u32) < 0x20 => (6, 6),
                c => (c.len_utf8(), 1),
            };
            let over = |limit: Option<usize>, used: usize| limit.is_some_and(|l| used > l);
            if over(self.bytes, bytes + b) || over(self.chars, chars + n) {
                return i;
            }
            (bytes, chars) = (bytes + b, chars + n);
        }
        end
    }

    /// "10,000 bytes and 256 lines", or `None` when unbounded.
    pub fn describe(&self) -> Option<String> {
        let parts: Vec<String> = [
            (self.bytes, "bytes"),
            (self.chars, "characters"),
            (self.lines, "lines"),
        ]
        .iter()
        .filter_map(|(v, unit)| v.map(|v| format!("{} {unit}", crate::ground::units::thousands(v))))
        .collect();
        match parts.as_slice() {
            [] => None,
            [one] => Some(one.clone()),
            [init @ .., last] => Some(format!("{} and {last}", init.join(", "))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes_and_limits() {
        let s = Size::of("héllo\nwörld\n\nlast");
        assert_eq!((s.bytes, s.chars, s.lines), (19, 17, 4));
        assert_eq!(s.lines, "héllo\nwörld\n\nlast".lines().count());
        let l = SizeLimits {
            bytes: Some(19),
            chars: None,
            lines: Some(4),
        };
        assert!(l.fits(s));
        assert!(!l.fits(s + Size::of("x")));
        assert_eq!(
            l.describe().as_deref(),
            Some("19 bytes and 4 lines"),
            "the note names every bound"
        );
        assert_eq!(SizeLimits::default().describe(), None);
        let t = l.tightened(SizeLimits {
            bytes: Some(30),
            chars: Some(5),
            lines: None,
        });
        assert_eq!((t.bytes, t.chars, t.lines), (Some(19), Some(5), Some(4)));
        assert_eq!(l.room(Size::of("ab\n")).unwrap().bytes, Some(16));
        assert!(l.room(Size::of(&"x".repeat(20))).is_none());
    }

    proptest! {
        #[test]
        fn the_prefix_is_the_longest_that_fits(
            text in "([a-zé€😀 ]{0,6}\n?){0,40}",
            bytes in proptest::option::of(0usize..200),
            chars in proptest::option::of(0usize..200),
            lines in proptest::option::of(0usize..30),
        ) {
            let l = SizeLimits { bytes, chars, lines };
            let end = l.prefix_len(&text, text.len());
            prop_assert!(text.is_char_boundary(end));
            prop_assert!(l.fits(Size::of(&text[..end])));
            // one character more would not fit (or there is none)
            if let Some(c) = text[end..].chars().next() {
                prop_assert!(!l.fits(Size::of(&text[..end + c.len_utf8()])));
            }
        }
    }
}
