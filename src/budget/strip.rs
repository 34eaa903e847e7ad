//! The strip stage: noise that costs tokens and carries nothing a model can use, removed from
//! prose (never from JSON): data-URI images, URLs over a length, tracking query parameters,
//! long base64 runs, and runs of blank lines. Counts of each go into the note.

pub(super) mod chunks;
pub(super) mod prefix_strip;

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::policy::{StripRules, ToolPolicy};

/// Query parameters that only track clicks; kept as data.
pub const TRACKING_PARAMS: &[&str] = &[
    "fbclid",
    "gclid",
    "gclsrc",
    "dclid",
    "msclkid",
    "mc_eid",
    "mc_cid",
    "igshid",
    "yclid",
    "twclid",
    "li_fat_id",
    "_hsenc",
    "_hsmi",
    "mkt_tok",
    "ref_src",
    "s_cid",
    "wickedid",
    "oly_anon_id",
    "oly_enc_id",
    "vero_id",
    "_ga",
    "_gl",
    "spm",
];

static MD_DATA_IMAGE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"!\[([^\]\n]*)\]\(\s*data:[^)\s]*\s*\)").expect("valid regex"));
static HTML_DATA_IMAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)<img\b[^>]*?\bsrc\s*=\s*["']data:[^"']*["'][^>]*>"#).expect("valid regex")
});
static DATA_URI: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"data:[a-zA-Z]+/[a-zA-Z0-9.+-]+;base64,[A-Za-z0-9+/=]{64,}").expect("valid regex")
});
static URL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"https?://[^\s<>"')\]]+"#).expect("valid regex"));
/// Runs of base64 characters at least this long are removed from prose.
const BASE64_RUN_CHARS: usize = 400;
static BLANK_RUN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\n[ \t]*(?:\n[ \t]*){2,}").expect("valid regex"));

/// What the strip stage removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StripCounts {
    pub data_uri_images: usize,
    pub long_urls: usize,
    pub tracking_params: usize,
    pub base64_runs: usize,
    pub blank_runs: usize,
}

impl StripCounts {
    pub fn is_empty(&self) -> bool {
        *self == StripCounts::default()
    }

    /// "14 data-URI images removed, 40 long URLs shortened, ..."
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut add = |n: usize, what: &str| {
            if n > 0 {
                out.push(format!("{} {what}", crate::ground::units::thousands(n)));
            }
        };
        add(self.data_uri_images, "data-URI images removed");
        add(self.long_urls, "long URLs shortened");
        add(self.tracking_params, "tracking parameters removed");
        add(self.base64_runs, "base64 runs removed");
        add(self.blank_runs, "runs of blank lines collapsed");
        out
    }
}

/// Strip `text` by the policy's rules.
pub fn strip(text: &str, policy: &ToolPolicy) -> (String, StripCounts) {
    let rules: StripRules = policy.strip;
    let mut c = StripCounts::default();
    let mut out: Cow<str> = Cow::Borrowed(text);
    if rules.data_uris {
        out = replace(out, &MD_DATA_IMAGE, &mut c.data_uri_images, |m| {
            // `![alt](data:...)`: the alt text is what the pattern matched inside `![` and `]`
            let alt = m[2..].split(']').next().unwrap_or("");
            format!(
                "[image removed: {}]",
                if alt.is_empty() { "data URI" } else { alt }
            )
        });
        out = replace(out, &HTML_DATA_IMAGE, &mut c.data_uri_images, |_| {
            "[image removed: data URI]".into()
        });
        out = replace(out, &DATA_URI, &mut c.data_uri_images, |_| {
            "data:[removed]".into()
        });
    }
    if rules.long_urls || rules.tracking_params {
        let (text, long, tracking) = rewrite_urls(&out, rules, policy.url_max_chars);
        if let Some(t) = text {
            out = Cow::Owned(t);
        }
        c.long_urls += long;
        c.tracking_params += tracking;
    }
    if rules.base64_runs {
        if let Some(t) = remove_base64_runs(&out, &mut c.base64_runs) {
            out = Cow::Owned(t);
        }
    }
    if rules.blank_lines {
        out = replace(out, &BLANK_RUN, &mut c.blank_runs, |_| "\n\n".into());
    }
    (out.into_owned(), c)
}

/// Replace every match of `re` by what `f` makes of the matched text. Matches are found by
/// the regex's DFA alone: no capture groups are resolved (a data URI of 50 KB made the capture
/// engine the strip's main cost).
fn replace<'a>(
    text: Cow<'a, str>,
    re: &Regex,
    count: &mut usize,
    f: impl Fn(&str) -> String,
) -> Cow<'a, str> {
    let mut matches = re.find_iter(&text).peekable();
    if matches.peek().is_none() {
        drop(matches);
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for m in matches {
        out.push_str(&text[last..m.start()]);
        out.push_str(&f(m.as_str()));
        last = m.end();
        *count += 1;
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

/// Shorten long URLs and drop tracking parameters; `None` when nothing changed. Only URLs that
/// change are copied, so a page of a thousand clean links costs one scan.
fn rewrite_urls(text: &str, rules: StripRules, max: usize) -> (Option<String>, usize, usize) {
    let (mut long, mut tracking) = (0, 0);
    let mut out = String::new();
    let mut last = 0;
    for m in URL.find_iter(text) {
        let url = m.as_str();
        let may_track = rules.tracking_params && url.contains('?');
        let is_long = rules.long_urls && url.len() > max;
        if !may_track && !is_long {
            continue;
        }
        let (clean, removed) = if may_track {
            drop_tracking(url)
        } else {
            (url.to_string(), 0)
        };
        let shorten_it = rules.long_urls && clean.len() > max;
        if removed == 0 && !shorten_it {
            continue;
        }
        tracking += removed;
        out.push_str(&text[last..m.start()]);
        if shorten_it {
            long += 1;
            out.push_str(&shorten(&clean));
        } else {
            out.push_str(&clean);
        }
        last = m.end();
    }
    if last == 0 {
        return (None, long, tracking);
    }
    out.push_str(&text[last..]);
    (Some(out), long, tracking)
}

/// Replace runs of [`BASE64_RUN_CHARS`]+ base64 characters; `None` when there are none.
fn remove_base64_runs(text: &str, count: &mut usize) -> Option<String> {
    let bytes = text.as_bytes();
    let is_b64 = |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/';
    let mut out: Option<String> = None;
    let (mut last, mut i) = (0, 0);
    while i < bytes.len() {
        if !is_b64(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_b64(bytes[i]) {
            i += 1;
        }
        if i - start < BASE64_RUN_CHARS {
            continue;
        }
        let mut pad = 0;
        while pad < 2 && i < bytes.len() && bytes[i] == b'=' {
            i += 1;
            pad += 1;
        }
        let o = out.get_or_insert_with(String::new);
        o.push_str(&text[last..start]);
        o.push_str(&format!("[base64 removed: {} chars]", i - start));
        last = i;
        *count += 1;
    }
    let mut o = out?;
    o.push_str(&text[last..]);
    Some(o)
}

/// The URL without tracking parameters, and how many were removed.
fn drop_tracking(url: &str) -> (String, usize) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), 0);
    };
    let (query, fragment) = match query.split_once('#') {
        Some((q, f)) => (q, Some(f)),
        None => (query, None),
    };
    let mut removed = 0;
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| {
            let key = pair.split('=').next().unwrap_or("").to_ascii_lowercase();
            let tracking = key.starts_with("utm_") || TRACKING_PARAMS.contains(&key.as_str());
            removed += tracking as usize;
            !tracking
        })
        .collect();
    if removed == 0 {
        return (url.to_string(), 0);
    }
    let mut out = base.to_string();
    if !kept.is_empty() {
        out.push('?');
        out.push_str(&kept.join("&"));
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    (out, removed)
}

/// `https://host/first-path-part…`: where it pointed, without the long tail.
fn shorten(url: &str) -> String {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let host_end = url[after_scheme..]
        .find('/')
        .map_or(url.len(), |i| after_scheme + i);
    let path_end = url[host_end..]
        .char_indices()
        .skip(1)
        .find(|(_, c)| matches!(c, '/' | '?' | '#'))
        .map_or(url.len(), |(i, _)| host_end + i);
    let keep = path_end.min(host_end + 40);
    let mut keep = keep.min(url.len());
    while !url.is_char_boundary(keep) {
        keep -= 1;
    }
    format!("{}…", &url[..keep])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_each_kind_of_noise_and_counts_it() {
        let b64 = "iVBORw0KGgo".repeat(40);
        let long = format!(
            "https://cdn.example.com/images/dims?quality=85&image_uri={}&signature=abc",
            "x".repeat(220)
        );
        let text = format!(
            "# Title\n![logo](data:image/png;base64,{b64})\n<img alt=\"x\" src=\"data:image/gif;base64,R0lGOD\">\n\
             See [deal](https://shop.example/p/1?id=7&utm_source=news&utm_medium=email&fbclid=abc#top) and [pic]({long}).\n\n\n\n\nEnd {b64}\n"
        );
        let (out, c) = strip(&text, &ToolPolicy::default());
        assert_eq!(c.data_uri_images, 2);
        assert_eq!(c.tracking_params, 3);
        assert_eq!(c.long_urls, 1);
        assert_eq!(c.base64_runs, 1);
        assert_eq!(c.blank_runs, 1);
        assert!(out.contains("[image removed: logo]"));
        assert!(out.contains("https://shop.example/p/1?id=7#top"));
        assert!(out.contains("(https://cdn.example.com/images…)"), "{out}");
        assert!(!out.contains("\n\n\n"));
        assert!(out.len() < text.len() / 3);
    }

    #[test]
    fn rules_can_be_turned_off_and_clean_text_is_untouched() {
        let mut p = ToolPolicy::default();
        p.strip.blank_lines = false;
        let text = "a\n\n\n\nb https://x.example/?utm_source=y\n";
        let (out, c) = strip(text, &p);
        assert!(out.contains("\n\n\n\n") && c.tracking_params == 1);
        let clean = "plain text, nothing to strip\n";
        assert_eq!(
            strip(clean, &ToolPolicy::default()),
            (clean.to_string(), StripCounts::default())
        );
    }
}
