//! Secret redaction: the values [`super::secrets`] finds (secret-looking env variables of the
//! config and of the inherited environment, header values, URL credentials, secret flags) are
//! replaced before anything reaches a report, a log, an error message or a recording.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use aho_corasick::{AhoCorasick, MatchKind};

use super::names::MIN_SECRET_CHARS;
use super::urls::url_secret_spans;

/// What a redacted value is shown as.
pub const REDACTED: &str = "<redacted>";

/// What a value added without a name is counted under.
const UNNAMED: &str = "secret";

/// A secret value and the name it is reported under (never the value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    /// `FIELD_API_KEY`, `header Authorization`, `url api_key`, `arg --token`, `${VAR}`, ...
    pub name: String,
    pub value: String,
}

impl Secret {
    pub(crate) fn new(name: impl Into<String>, value: impl Into<String>) -> Secret {
        Secret {
            name: name.into(),
            value: value.into(),
        }
    }
}

/// Replaces known secret values in text (server stderr, error messages, recorded lines), each
/// also as it is written inside a JSON string.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Each form of each secret, and the name it is counted under (the first name given).
    forms: BTreeMap<String, String>,
    matcher: OnceLock<Option<Arc<Matcher>>>,
}

#[derive(Debug)]
struct Matcher {
    automaton: AhoCorasick,
    /// The name of each pattern, by pattern index.
    names: Vec<String>,
}

impl Redactor {
    /// A redactor of these named secrets.
    pub fn of(secrets: impl IntoIterator<Item = Secret>) -> Redactor {
        let mut r = Redactor::default();
        r.add_secrets(secrets);
        r
    }

    /// Remember unnamed secrets (counted as `secret`).
    pub fn add<I: IntoIterator<Item = String>>(&mut self, secrets: I) {
        for value in secrets {
            self.add_named(UNNAMED, &value);
        }
    }

    /// Remember named secrets.
    pub fn add_secrets(&mut self, secrets: impl IntoIterator<Item = Secret>) {
        for s in secrets {
            self.add_named(&s.name, &s.value);
        }
    }

    /// Remember `value` under `name`; values shorter than [`MIN_SECRET_CHARS`] are ignored. A
    /// header such as `Bearer abc...` also leaks as its bare token, so that is kept as well.
    pub fn add_named(&mut self, name: &str, value: &str) {
        let mut values = vec![value];
        if let Some((_, token)) = value.split_once(' ') {
            values.push(token);
        }
        for v in values {
            if v.chars().count() < MIN_SECRET_CHARS {
                continue;
            }
            for form in json_forms(v) {
                self.forms.entry(form).or_insert_with(|| name.to_string());
            }
        }
        self.matcher = OnceLock::new();
    }

    /// Whether no secret is known (nothing would be replaced).
    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    /// `text` with every known secret replaced, and credentials in any URL in it (passwords,
    /// secret-looking query values): for messages, where nothing needs to stay byte-exact.
    pub fn redact(&self, text: &str) -> String {
        redact_urls_in(&self.redact_counted(text).0)
    }

    /// How a message quotes text a server sent (an HTTP error body, a line it printed, the end
    /// of its stderr, a cursor): the WHOLE text redacted ([`Self::redact`]) first, then cut to
    /// its first `max_chars` characters as one safe line ([`crate::ground::text::preview`]). Cutting
    /// first would leave all but the last characters of a secret that straddles the cut, which
    /// no redaction afterwards can recognise. Every such preview goes through here.
    pub fn preview(&self, text: &str, max_chars: usize) -> String {
        crate::ground::text::preview(&self.redact(text), max_chars)
    }

    /// [`Self::preview`] with every run of whitespace made one space after the redaction (an
    /// HTML error page on one line).
    pub fn preview_words(&self, text: &str, max_chars: usize) -> String {
        let redacted = self.redact(text);
        let words: Vec<&str> = redacted.split_whitespace().collect();
        crate::ground::text::preview(&words.join(" "), max_chars)
    }

    /// The last `max_chars` characters of `text`, redacted whole first (see [`Self::preview`]),
    /// with `...` before them when the start was cut.
    pub fn tail(&self, text: &str, max_chars: usize) -> String {
        crate::ground::text::tail(&self.redact(text), max_chars)
    }

    /// `text` with every known secret replaced (nothing else), and how many were replaced.
    pub fn redact_counted(&self, text: &str) -> (String, usize) {
        let mut tally = BTreeMap::new();
        let out = self.redact_tallied(text, &mut tally);
        (out, tally.values().sum())
    }

    /// `text` with every known secret replaced (nothing else); each replacement is counted in
    /// `tally` under the secret's name.
    pub fn redact_tallied(&self, text: &str, tally: &mut BTreeMap<String, usize>) -> String {
        let Some(m) = self.matcher() else {
            return text.to_string();
        };
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for found in m.automaton.find_iter(text) {
            out.push_str(&text[last..found.start()]);
            out.push_str(REDACTED);
            *tally
                .entry(m.names[found.pattern().as_usize()].clone())
                .or_insert(0) += 1;
            last = found.end();
        }
        out.push_str(&text[last..]);
        out
    }

    fn matcher(&self) -> Option<&Matcher> {
        self.matcher
            .get_or_init(|| {
                if self.forms.is_empty() {
                    return None;
                }
                let (patterns, names): (Vec<&String>, Vec<String>) =
                    self.forms.iter().map(|(f, n)| (f, n.clone())).unzip();
                // longest first at each position: a secret that contains another goes whole
                let automaton = AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(patterns)
                    .ok()?;
                Some(Arc::new(Matcher { automaton, names }))
            })
            .as_deref()
    }
}

/// `value`, and how it is written inside a JSON string (escaped, and with non-ASCII as
/// `\uXXXX`, as Python's `json.dumps` writes it) when that differs; and each of those escaped
/// once more, as a JSON text inside a JSON string shows it (a tool's text that is JSON, in the
/// JSON-RPC line of a recording: `\\u00e4` for `ä`).
fn json_forms(value: &str) -> Vec<String> {
    let mut forms = vec![value.to_string()];
    let mut push = |form: String| {
        if !forms.contains(&form) {
            forms.push(form);
        }
    };
    let once = [json_escaped(value), ascii_escaped(&json_escaped(value))];
    for form in &once {
        push(form.clone());
    }
    for form in &once {
        let twice = json_escaped(form);
        push(ascii_escaped(&twice));
        push(twice);
    }
    forms
}

/// `s` as the contents of a JSON string.
fn json_escaped(s: &str) -> String {
    let json = serde_json::to_string(s).expect("a string serialises");
    json[1..json.len() - 1].to_string()
}

/// JSON string contents with every non-ASCII character as `\uXXXX`.
fn ascii_escaped(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// A URL with its credentials replaced (see [`super::urls`]: the password, a token given as
/// the username, the values of secret-named parameters), and nothing else changed.
pub fn redact_url(url: &str) -> String {
    redact_urls_in(url)
}

/// Free text with the credentials of every URL in it replaced (`scheme://user:PASSWORD@`,
/// `scheme://TOKEN@`, `?api_key=VALUE`, `&token=VALUE`), by the same rule as [`redact_url`].
pub fn redact_urls_in(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for found in url_secret_spans(text) {
        let span = found.span;
        if span.start < last {
            // inside one already replaced (a URL as a secret parameter's value)
            last = last.max(span.end);
            continue;
        }
        out.push_str(&text[last..span.start]);
        out.push_str(REDACTED);
        last = span.end;
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_known_secrets_and_bearer_tokens() {
        let mut r = Redactor::default();
        r.add(["Bearer abcd1234".to_string(), "xy".to_string()]);
        assert_eq!(
            r.redact("auth failed for abcd1234 (xy)"),
            "auth failed for <redacted> (xy)"
        );
        assert_eq!(
            r.redact_counted("abcd1234 Bearer abcd1234"),
            ("<redacted> <redacted>".to_string(), 2)
        );
    }

    /// A secret across the cut: redacted whole, then cut, so nothing of it is left.
    #[test]
    fn a_preview_redacts_before_it_cuts() {
        let mut r = Redactor::default();
        r.add(["sk-straddle-98765".to_string()]);
        let text = format!("{}sk-straddle-98765 more", "x".repeat(5));
        assert_eq!(r.preview(&text, 20), "xxxxx<redacted> more");
        assert_eq!(r.preview(&text, 8), "xxxxx<re...");
        assert_eq!(
            r.preview_words("a \n\n sk-straddle-98765", 20),
            "a <redacted>"
        );
        let tail = format!("sk-straddle-98765{}", "y".repeat(5));
        assert_eq!(r.tail(&tail, 8), "...ed>yyyyy");
        assert_eq!(r.tail("short", 8), "short");
    }

    #[test]
    fn short_values_are_never_replaced() {
        let mut r = Redactor::default();
        r.add_named("AUTH_MODE", "user");
        r.add_named("API_KEY", "abc123");
        assert_eq!(r.redact("user abc123 username"), "user <redacted> username");
    }

    #[test]
    fn counts_each_replacement_under_its_name() {
        let mut r = Redactor::default();
        r.add_named("FIELD_API_KEY", "sk-field-42");
        r.add_named("header Authorization", "Bearer tok-123456");
        let mut tally = BTreeMap::new();
        let out = r.redact_tallied(
            "sk-field-42 Bearer tok-123456 tok-123456 sk-field-42",
            &mut tally,
        );
        assert_eq!(out, "<redacted> <redacted> <redacted> <redacted>");
        assert_eq!(
            tally,
            BTreeMap::from([
                ("FIELD_API_KEY".to_string(), 2),
                ("header Authorization".to_string(), 2)
            ])
        );
    }

    #[test]
    fn replaces_escaped_forms_inside_json_lines() {
        let mut r = Redactor::default();
        r.add(vec!["pa\"ss-é".into()]);
        let line = r#"{"a":"pa\"ss-é","b":"pa\"ss-\u00e9"}"#;
        assert_eq!(
            r.redact_counted(line),
            (r#"{"a":"<redacted>","b":"<redacted>"}"#.to_string(), 2)
        );
    }

    /// A tool's text that is JSON, inside a JSON-RPC line: the secret's escapes are escaped
    /// again (`\\u00e4`, `\\\"`).
    #[test]
    fn replaces_forms_escaped_twice() {
        let mut r = Redactor::default();
        r.add(vec!["sk-p\u{e4}ss\"w\u{f6}rt-12".into()]);
        let inner = serde_json::json!({"api_key": "sk-p\u{e4}ss\"w\u{f6}rt-12"}).to_string();
        let ascii = ascii_escaped(&inner);
        for text in [&inner, &ascii] {
            let line = serde_json::json!({"result": {"text": text}}).to_string();
            for shown in [line.clone(), ascii_escaped(&line)] {
                let (out, n) = r.redact_counted(&shown);
                assert_eq!(n, 1, "{shown}");
                assert!(!out.contains("rt-12"), "{out}");
            }
        }
    }

    #[test]
    fn redacts_url_credentials() {
        assert_eq!(
            redact_url("https://bob:hunter2@mcp.example.com/sse?apiKey=k1&page=2"),
            "https://bob:<redacted>@mcp.example.com/sse?apiKey=<redacted>&page=2"
        );
        assert_eq!(
            redact_url("http://localhost:3000/mcp"),
            "http://localhost:3000/mcp"
        );
    }

    /// The cases where the display of a URL, the redaction of text and the secret finder
    /// disagreed (each used its own scanner), and URLs that are shown whole.
    #[test]
    fn a_url_is_shown_with_every_credential_replaced_and_nothing_else_changed() {
        for (url, shown) in [
            // a token as the username was shown, with a made-up `:<redacted>` after it
            (
                "https://tok123456@github.com",
                "https://<redacted>@github.com",
            ),
            (
                "ssh://git@github.com/o/r.git",
                "ssh://git@github.com/o/r.git",
            ),
            // the userinfo ends at the last `@`: `ss9876` was left by the text scanner
            ("https://u:p@ss9876@h/mcp", "https://u:<redacted>@h/mcp"),
            // `;` separates parameters: only the text scanner knew it
            (
                "https://h/mcp?a=1;token=tok-semi-77",
                "https://h/mcp?a=1;token=<redacted>",
            ),
            // the value ends before the fragment, which was swallowed
            (
                "https://h/mcp?token=tok-frag-55#top",
                "https://h/mcp?token=<redacted>#top",
            ),
            ("http://localhost:8080/mcp", "http://localhost:8080/mcp"),
            ("http://[::1]:3000/mcp", "http://[::1]:3000/mcp"),
            (
                "https://h/mcp?page=2&q=keyword#top",
                "https://h/mcp?page=2&q=keyword#top",
            ),
            (
                "https://h/login?next_token=https://u:pw123456@b/y&x=1",
                "https://h/login?next_token=<redacted>&x=1",
            ),
        ] {
            assert_eq!(redact_url(url), shown, "{url}");
            let text = format!("error: {url} did not answer (HTTP 500).");
            let expected = format!("error: {shown} did not answer (HTTP 500).");
            assert_eq!(redact_urls_in(&text), expected, "{text}");
        }
    }

    #[test]
    fn redacts_url_credentials_inside_free_text() {
        assert_eq!(
            redact_urls_in(
                "HTTP 500: no route for /err500?api_key=sk-9&page=2 (see https://u:pw@h.example/x)"
            ),
            "HTTP 500: no route for /err500?api_key=<redacted>&page=2 (see https://u:<redacted>@h.example/x)"
        );
        assert_eq!(redact_urls_in("a=b & c=d, warning"), "a=b & c=d, warning");
    }
}
