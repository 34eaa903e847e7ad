//! Where the credentials of URLs are in text: the one rule that the display of a URL
//! ([`super::redact_url`]), the redaction of free text (`redact_urls_in`) and the secret finder
//! (`secrets::url_secrets`) all follow.
//!
//! - userinfo ends at the last `@` before the path (`https://u:p@ss9876@h`: the password is
//!   `p@ss9876`); its password is a credential, and so is a username that could be a token,
//!   with or without a password (`https://TOKEN@github.com`,
//!   `https://TOKEN:x-oauth-basic@github.com`), see [`could_be_token`];
//! - after the first `?` or `#`, parameters are separated by `&` or `;`, and the value of one
//!   whose name is secret ([`secret_param`]: `api_key`, `token`, `sig`, ...) is a credential; it
//!   ends before `&`, `;`, `#` or the end of the URL;
//! - before the query, a path parameter `;name=value` (`;jsessionid=`, `;sig=`) whose name is
//!   secret is a credential too; its value ends before `;`, `/`, `?` or `#`.
//!
//! A URL in text ends at whitespace, a quote, `<`, `>`, a backtick or a backslash (of a JSON
//! escape), and punctuation that ends a sentence (`.`, `,`, `)`, ...) is not part of it.

use std::ops::Range;

use super::names::{secret_param, MIN_SECRET_CHARS};

/// What a credential found in a URL is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlPart<'a> {
    /// `scheme://user:PASSWORD@host`
    Password,
    /// `scheme://TOKEN@host`: a username without a password that could be a token
    Username,
    /// `?api_key=VALUE`, `&token=VALUE`, `#access_token=VALUE`: the parameter's name
    Param(&'a str),
}

impl<'a> UrlPart<'a> {
    /// What the credential is reported under: `password`, `username` or the parameter's name.
    pub fn name(self) -> &'a str {
        match self {
            UrlPart::Password => "password",
            UrlPart::Username => "username",
            UrlPart::Param(name) => name,
        }
    }
}

/// A credential in a URL: what it is, and where its value is in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlSecret<'a> {
    pub part: UrlPart<'a>,
    /// The value's bytes in the text; never empty.
    pub span: Range<usize>,
}

/// Every credential of every URL in `text` (one URL, or free text with URLs in it), in the
/// order they start. Spans may nest (a URL with a password as the value of a secret
/// parameter); none is empty.
pub fn url_secret_spans(text: &str) -> Vec<UrlSecret<'_>> {
    let mut out = Vec::new();
    for run in runs(text) {
        userinfo(text, run.clone(), &mut out);
        path_params(text, run.clone(), &mut out);
        params(text, run, &mut out);
    }
    out.sort_by_key(|s| (s.span.start, s.span.end));
    out
}

/// Whether a username given without a password could be a token rather than a login: as
/// long as a value the redactor would replace ([`MIN_SECRET_CHARS`]), with a digit in it
/// (`ghp_...`, `tok123456`), or 20 characters or more. `git`, `postgres`, `deploy` or
/// `x-access-token` stay shown, and are not replaced wherever else they appear.
pub fn could_be_token(user: &str) -> bool {
    let chars = user.chars().count();
    chars >= MIN_SECRET_CHARS && (user.bytes().any(|b| b.is_ascii_digit()) || chars >= 20)
}

/// The username and password of a URL's userinfo, percent-decoded, when it has one: what an
/// HTTP client sends as `Authorization: Basic base64(user:password)` (as reqwest does; `None`
/// when either part does not decode to UTF-8, which it then does not send).
pub fn userinfo_login(url: &str) -> Option<(String, Option<String>)> {
    let start = url.find("://")? + 3;
    let authority = &url[start..];
    let authority = &authority[..authority.find(['/', '?', '#']).unwrap_or(authority.len())];
    let user_info = &authority[..authority.rfind('@')?];
    let (user, password) = match user_info.split_once(':') {
        Some((u, p)) => (u, Some(p)),
        None => (user_info, None),
    };
    let password = match password {
        Some(p) => Some(percent_decoded(p)?),
        None => None,
    };
    Some((percent_decoded(user)?, password))
}

/// `s` with `%XX` escapes decoded, if the result is UTF-8.
pub fn percent_decoded(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = (bytes[i] == b'%')
            .then(|| s.get(i + 1..i + 3))
            .flatten()
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Whether `c` ends a URL in text.
fn ends_url(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`' | '\\')
}

/// Punctuation that, last, ends the sentence rather than the URL.
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '}'];

/// The stretches of `text` that may hold a URL: between the characters that end one, without
/// the punctuation that ends a sentence.
fn runs(text: &str) -> Vec<Range<usize>> {
    let mut runs = Vec::new();
    let mut push = |start: usize, end: usize| {
        let len = text[start..end].trim_end_matches(TRAILING).len();
        if len > 0 {
            runs.push(start..start + len);
        }
    };
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if ends_url(c) {
            push(start, i);
            start = i + c.len_utf8();
        }
    }
    push(start, text.len());
    runs
}

/// The password (or a token given as the username) of each `scheme://userinfo@host` in the run.
fn userinfo<'a>(text: &'a str, run: Range<usize>, out: &mut Vec<UrlSecret<'a>>) {
    let s = &text[run.clone()];
    for (at, _) in s.match_indices("://") {
        let start = at + 3;
        let authority = match s[start..].find(['/', '?', '#']) {
            Some(end) => &s[start..start + end],
            None => &s[start..],
        };
        let Some(end) = authority.rfind('@') else {
            continue;
        };
        let user_info = &authority[..end];
        let base = run.start + start;
        let mut push = |part, span: Range<usize>| {
            if !span.is_empty() {
                out.push(UrlSecret {
                    part,
                    span: base + span.start..base + span.end,
                });
            }
        };
        match user_info.find(':') {
            Some(colon) => {
                // GitHub's `https://TOKEN:x-oauth-basic@github.com`: the token is the username
                if could_be_token(&user_info[..colon]) {
                    push(UrlPart::Username, 0..colon);
                }
                push(UrlPart::Password, colon + 1..end);
            }
            None if could_be_token(user_info) => push(UrlPart::Username, 0..end),
            None => {}
        }
    }
}

/// The values of secret-named path parameters before the run's first `?` or `#`
/// (`/app;jsessionid=VALUE/x`, `/blob;sig=VALUE`): each ends before `;`, `/` or the query.
fn path_params<'a>(text: &'a str, run: Range<usize>, out: &mut Vec<UrlSecret<'a>>) {
    let s = &text[run.clone()];
    let path = &s[..s.find(['?', '#']).unwrap_or(s.len())];
    for (semi, _) in path.match_indices(';') {
        let rest = &path[semi + 1..];
        let piece = &rest[..rest.find([';', '/']).unwrap_or(rest.len())];
        if let Some((name, value)) = piece.split_once('=') {
            if !name.is_empty() && !value.is_empty() && secret_param(name) {
                let at = run.start + semi + 1 + name.len() + 1;
                out.push(UrlSecret {
                    part: UrlPart::Param(name),
                    span: at..at + value.len(),
                });
            }
        }
    }
}

/// The values of secret-named parameters after the run's first `?` or `#`.
fn params<'a>(text: &'a str, run: Range<usize>, out: &mut Vec<UrlSecret<'a>>) {
    let s = &text[run.clone()];
    let Some(first) = s.find(['?', '#']) else {
        return;
    };
    let mut start = first + 1;
    for piece in s[first + 1..].split(['&', ';', '#']) {
        if let Some((name, value)) = piece.split_once('=') {
            if !name.is_empty() && !value.is_empty() && secret_param(name) {
                let at = run.start + start + name.len() + 1;
                out.push(UrlSecret {
                    part: UrlPart::Param(name),
                    span: at..at + value.len(),
                });
            }
        }
        start += piece.len() + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each text, and what of it is a credential (by name and value).
    #[test]
    fn one_rule_finds_the_credentials_of_urls() {
        let cases: &[(&str, &[(&str, &str)])] = &[
            // a token as the username (GitHub's token URL) is a credential
            ("https://tok123456@github.com", &[("username", "tok123456")]),
            (
                "https://tok123456@github.com/o/r.git",
                &[("username", "tok123456")],
            ),
            (
                "https://ghp_abcdefghijklmnopqrstuvwxyz@github.com",
                &[("username", "ghp_abcdefghijklmnopqrstuvwxyz")],
            ),
            // beside a password too (GitHub's `TOKEN:x-oauth-basic@`), while a login is not
            (
                "https://ghp_tok5551234:x-oauth-basic@github.com/o/r",
                &[
                    ("username", "ghp_tok5551234"),
                    ("password", "x-oauth-basic"),
                ],
            ),
            ("https://bob:pw-7777@h/x", &[("password", "pw-7777")]),
            // a login is not
            ("ssh://git@github.com/o/r.git", &[]),
            ("postgres://postgres@localhost/db", &[]),
            ("https://x-access-token@github.com", &[]),
            // userinfo ends at the last `@` before the host
            ("https://u:p@ss9876@h/x", &[("password", "p@ss9876")]),
            (
                "https://bob:hunter2@mcp.example.com/sse?apiKey=k1&page=2",
                &[("password", "hunter2"), ("apiKey", "k1")],
            ),
            // `;` separates parameters too
            (
                "https://h/x?a=1;token=tok-semi-77&b=2",
                &[("token", "tok-semi-77")],
            ),
            // a value ends before the fragment
            (
                "https://h/x?token=tok-frag-55#top",
                &[("token", "tok-frag-55")],
            ),
            // a fragment's parameters (OAuth's implicit flow)
            (
                "https://h/cb#access_token=tok-impl-33&state=s",
                &[("access_token", "tok-impl-33")],
            ),
            // path parameters (`;name=value`), with or without a scheme
            (
                "https://h/app;jsessionid=js-5566AB;lang=en/x?page=2",
                &[("jsessionid", "js-5566AB")],
            ),
            (
                "GET /blob/a.txt;sig=sig-778899;v=1 HTTP/1.1",
                &[("sig", "sig-778899")],
            ),
            ("https://h/a;b/c;lang=en;x", &[]),
            // a path and query without a scheme (an echoed request line)
            (
                "POST /err500?api_key=sk-9&page=2 HTTP/1.1",
                &[("api_key", "sk-9")],
            ),
            // prose: the URL ends before the closing punctuation
            (
                "see https://h.example/x?sig=abc123def). Then retry.",
                &[("sig", "abc123def")],
            ),
            (
                "(see https://u:pw@h.example/x), or https://ghp_tok9876543@github.com.",
                &[("password", "pw"), ("username", "ghp_tok9876543")],
            ),
            // JSON text
            (
                r#"{"url":"https://u:pw-json-1@h/x?token=t0k","n":1}"#,
                &[("password", "pw-json-1"), ("token", "t0k")],
            ),
            // plain URLs and text stay untouched
            ("https://mcp.example.com/sse", &[]),
            ("http://localhost:8080/mcp", &[]),
            (
                "http://localhost:8080/mcp?page=2&q=keyword&lang_code=en#top",
                &[],
            ),
            ("http://[::1]:3000/mcp", &[]),
            ("http://[::1]:3000/mcp?x=1", &[]),
            (
                "https://registry.npmjs.org/@scope/pkg?email=a@b.example",
                &[],
            ),
            ("Connect to http://localhost:8080/mcp, then retry.", &[]),
            ("a=b & c=d, warning; token = none", &[]),
            ("https://h/x?token=&a=1", &[]),
            ("", &[]),
        ];
        for (text, expected) in cases {
            let found: Vec<(&str, &str)> = url_secret_spans(text)
                .iter()
                .map(|s| (s.part.name(), &text[s.span.clone()]))
                .collect();
            assert_eq!(found, *expected, "{text}");
        }
    }

    #[test]
    fn a_url_inside_a_secret_parameter_nests() {
        let text = "https://h/login?next_token=https://u:pw123456@b/y";
        let found: Vec<&str> = url_secret_spans(text)
            .iter()
            .map(|s| &text[s.span.clone()])
            .collect();
        assert_eq!(found, ["https://u:pw123456@b/y", "pw123456"]);
    }

    #[test]
    fn the_login_of_a_url_is_decoded_as_a_client_sends_it() {
        assert_eq!(
            userinfo_login("https://bob:p%40ss%3A1@h/x?a=b@c"),
            Some(("bob".into(), Some("p@ss:1".into())))
        );
        assert_eq!(
            userinfo_login("https://tok123456@h/x"),
            Some(("tok123456".into(), None))
        );
        assert_eq!(userinfo_login("https://h/x?u=a@b"), None);
        assert_eq!(userinfo_login("https://bob:%ff@h/"), None);
    }

    #[test]
    fn tokens_are_told_from_logins() {
        for user in [
            "tok123456",
            "ghp_0123456789abcdef",
            "abcdefghijklmnopqrstuvwxyz",
        ] {
            assert!(could_be_token(user), "{user}");
        }
        for user in [
            "git",
            "postgres",
            "deploy",
            "ubuntu",
            "x-access-token",
            "ab1",
        ] {
            assert!(!could_be_token(user), "{user}");
        }
    }
}
