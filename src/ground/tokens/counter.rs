//! Exact token counters behind one enum, and a set of them with a primary.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::bpe::Encoding;

/// Published calibration of cl100k counts against Anthropic's `count_tokens` (7 servers).
pub const DEFAULT_CLAUDE_FACTOR: f64 = 1.23;

/// One way of turning text into a token count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tokenizer {
    /// OpenAI cl100k_base, exact (equal to tiktoken).
    Cl100k,
    /// OpenAI o200k_base, exact (equal to tiktoken).
    O200k,
    /// cl100k count times a calibration factor: an estimate of Claude's count, never exact.
    ClaudeEstimate { factor: f64 },
}

/// A tokenizer name that is not one we know.
#[derive(Debug, thiserror::Error)]
#[error("unknown tokenizer `{name}` (known: cl100k_base, o200k_base, claude-estimate)")]
pub struct TokenizerError {
    pub name: String,
}

impl Tokenizer {
    /// Every tokenizer's name, as [`Tokenizer::name`] gives it (what `--tokenizer` completes).
    pub const NAMES: [&'static str; 3] = ["cl100k_base", "o200k_base", "claude-estimate"];

    /// The name used on the command line and in reports.
    pub fn name(&self) -> &'static str {
        match self {
            Tokenizer::Cl100k => "cl100k_base",
            Tokenizer::O200k => "o200k_base",
            Tokenizer::ClaudeEstimate { .. } => "claude-estimate",
        }
    }

    /// Whether the count is an estimate rather than an exact tokenization.
    pub fn is_estimate(&self) -> bool {
        matches!(self, Tokenizer::ClaudeEstimate { .. })
    }

    /// Count the tokens of `text`, treating special-token strings as ordinary text: exactly
    /// what tiktoken's `encode_ordinary` gives, for cl100k_base and o200k_base.
    ///
    /// ```
    /// use mcp_budget::Tokenizer;
    ///
    /// assert_eq!(Tokenizer::Cl100k.count("hello world"), 2);
    /// let schema = r#"{"type":"object","properties":{"q":{"type":"string"}}}"#;
    /// assert_eq!(Tokenizer::O200k.count(schema), Tokenizer::O200k.count(schema));
    /// assert!(Tokenizer::Cl100k.count(schema) > 10);
    /// ```
    pub fn count(&self, text: &str) -> usize {
        match self {
            Tokenizer::Cl100k => cl100k(text),
            Tokenizer::O200k => Encoding::o200k().count(text),
            Tokenizer::ClaudeEstimate { factor } => scale(cl100k(text), *factor),
        }
    }

    /// Turn a count made by cl100k into this tokenizer's count, where that is possible without
    /// re-reading the text (the Claude estimate); `None` when the text must be counted again.
    pub fn from_cl100k(&self, cl100k_tokens: usize) -> Option<usize> {
        match self {
            Tokenizer::Cl100k => Some(cl100k_tokens),
            Tokenizer::ClaudeEstimate { factor } => Some(scale(cl100k_tokens, *factor)),
            Tokenizer::O200k => None,
        }
    }

    /// Parse a comma-separated list such as `cl100k_base,o200k_base,claude-estimate`.
    /// A comma-separated list; a list that names no tokenizer (`,,`) is an error too.
    pub fn parse_list(list: &str) -> Result<Vec<Tokenizer>, TokenizerError> {
        let parsed: Vec<Tokenizer> = list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(Tokenizer::from_str)
            .collect::<Result<_, _>>()?;
        if parsed.is_empty() {
            return Err(TokenizerError {
                name: list.to_string(),
            });
        }
        Ok(parsed)
    }
}

/// A `--tokenizer LIST`, parsed once (by clap, through `FromStr`): at least one tokenizer, the
/// first primary.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenizerList(pub Vec<Tokenizer>);

impl FromStr for TokenizerList {
    type Err = TokenizerError;
    fn from_str(list: &str) -> Result<TokenizerList, TokenizerError> {
        Tokenizer::parse_list(list).map(TokenizerList)
    }
}

fn cl100k(text: &str) -> usize {
    Encoding::cl100k().count(text)
}

fn scale(tokens: usize, factor: f64) -> usize {
    (tokens as f64 * factor).round() as usize
}

impl FromStr for Tokenizer {
    type Err = TokenizerError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // the form reports name it in (Display): `claude-estimate (cl100k x 1.23)`
        if let Some(factor) = s
            .strip_prefix("claude-estimate (cl100k x ")
            .and_then(|f| f.strip_suffix(')'))
            .and_then(|f| f.parse::<f64>().ok())
        {
            return Ok(Tokenizer::ClaudeEstimate { factor });
        }
        match s {
            "cl100k_base" | "cl100k" => Ok(Tokenizer::Cl100k),
            "o200k_base" | "o200k" => Ok(Tokenizer::O200k),
            "claude-estimate" | "claude" => Ok(Tokenizer::ClaudeEstimate {
                factor: DEFAULT_CLAUDE_FACTOR,
            }),
            other => Err(TokenizerError {
                name: other.to_string(),
            }),
        }
    }
}

impl fmt::Display for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tokenizer::ClaudeEstimate { factor } => {
                write!(f, "claude-estimate (cl100k x {factor})")
            }
            other => f.write_str(other.name()),
        }
    }
}

/// A count by the primary tokenizer, with the others beside it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Counts {
    pub primary: usize,
    /// Counts by every other tokenizer, keyed by name; empty when only one is in use.
    pub others: BTreeMap<String, usize>,
}

impl Counts {
    /// Add another count, tokenizer by tokenizer.
    pub fn add(&mut self, other: &Counts) {
        self.primary += other.primary;
        for (name, n) in &other.others {
            *self.others.entry(name.clone()).or_default() += n;
        }
    }
}

/// The tokenizers of one run: the first is primary, the rest are reported beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenizerSet {
    tokenizers: Vec<Tokenizer>,
}

impl Default for TokenizerSet {
    fn default() -> Self {
        TokenizerSet {
            tokenizers: vec![Tokenizer::Cl100k],
        }
    }
}

impl TokenizerSet {
    /// A set from a non-empty list; duplicates are dropped, order kept.
    pub fn new(list: Vec<Tokenizer>) -> Self {
        let mut tokenizers: Vec<Tokenizer> = Vec::new();
        for t in list {
            if !tokenizers.iter().any(|k| k.name() == t.name()) {
                tokenizers.push(t);
            }
        }
        if tokenizers.is_empty() {
            return TokenizerSet::default();
        }
        TokenizerSet { tokenizers }
    }

    pub fn primary(&self) -> Tokenizer {
        self.tokenizers[0]
    }

    pub fn all(&self) -> &[Tokenizer] {
        &self.tokenizers
    }

    /// Count `text` with every tokenizer of the set, encoding each distinct BPE only once.
    pub fn count(&self, text: &str) -> Counts {
        let mut cl100k_cache: Option<usize> = None;
        let mut one = |t: &Tokenizer| match t.from_cl100k(0) {
            Some(_) => {
                let base = *cl100k_cache.get_or_insert_with(|| cl100k(text));
                t.from_cl100k(base).expect("cl100k-derived tokenizer")
            }
            None => t.count(text),
        };
        let primary = one(&self.tokenizers[0]);
        let others = self.tokenizers[1..]
            .iter()
            .map(|t| (t.name().to_string(), one(t)))
            .collect();
        Counts { primary, others }
    }

    /// Counts of a number that is the same for every tokenizer (an image's model cost).
    pub fn uniform(&self, tokens: usize) -> Counts {
        Counts {
            primary: tokens,
            others: self.tokenizers[1..]
                .iter()
                .map(|t| (t.name().to_string(), tokens))
                .collect(),
        }
    }

    /// The names, primary first, as reports list them.
    pub fn names(&self) -> Vec<String> {
        self.tokenizers.iter().map(|t| t.to_string()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_name_parses_back_to_a_tokenizer_of_that_name() {
        for name in Tokenizer::NAMES {
            let t: Tokenizer = name.parse().unwrap();
            assert_eq!(t.name(), name);
        }
    }

    #[test]
    fn counts_known_strings_like_tiktoken() {
        // Values from Python tiktoken 0.14: enc.encode_ordinary(...)
        assert_eq!(Tokenizer::Cl100k.count("hello world"), 2);
        assert_eq!(Tokenizer::O200k.count("hello world"), 2);
        assert_eq!(Tokenizer::Cl100k.count(""), 0);
        // special-token text counts as ordinary text, not as one special token
        assert!(Tokenizer::Cl100k.count("<|endoftext|>") > 1);
    }

    #[test]
    fn claude_estimate_scales_cl100k() {
        let text = "The quick brown fox jumps over the lazy dog. ".repeat(20);
        let base = Tokenizer::Cl100k.count(&text);
        let est = Tokenizer::ClaudeEstimate { factor: 1.23 }.count(&text);
        assert_eq!(est, (base as f64 * 1.23).round() as usize);
        assert!(est > base);
    }

    #[test]
    fn parses_lists_and_rejects_unknown_names() {
        let list = Tokenizer::parse_list("o200k_base, cl100k_base,claude-estimate").unwrap();
        assert_eq!(list.len(), 3);
        assert_eq!(list[0], Tokenizer::O200k);
        let err = Tokenizer::parse_list("cl100k_base,gpt2").unwrap_err();
        assert!(err.to_string().contains("gpt2"));
    }

    #[test]
    fn the_name_a_report_gives_a_tokenizer_reads_back_as_that_tokenizer() {
        // audit.json's `tokenizers` holds the Display form; reading it back as cl100k_base
        // counted a report's deferred names unscaled
        for t in [
            Tokenizer::Cl100k,
            Tokenizer::O200k,
            Tokenizer::ClaudeEstimate { factor: 1.23 },
            Tokenizer::ClaudeEstimate { factor: 1.5 },
        ] {
            assert_eq!(t.to_string().parse::<Tokenizer>().unwrap(), t);
        }
        assert!("claude-estimate (cl100k x many)"
            .parse::<Tokenizer>()
            .is_err());
    }

    #[test]
    fn set_counts_primary_and_others() {
        let set = TokenizerSet::new(vec![
            Tokenizer::O200k,
            Tokenizer::Cl100k,
            Tokenizer::O200k,
            Tokenizer::ClaudeEstimate { factor: 2.0 },
        ]);
        assert_eq!(set.all().len(), 3);
        let text = "fn main() { println!(\"héllo, 世界\"); }";
        let c = set.count(text);
        assert_eq!(c.primary, Tokenizer::O200k.count(text));
        assert_eq!(c.others["cl100k_base"], Tokenizer::Cl100k.count(text));
        assert_eq!(
            c.others["claude-estimate"],
            Tokenizer::Cl100k.count(text) * 2
        );
    }
}
