//! Dollar cost: a table of model input prices (data, with a date and a source for each row),
//! the choice of one model (`--model`, `--price`), and the cost of every server's schema tax and
//! every probe's result in that model's tokens.

use std::sync::LazyLock;

use serde::Deserialize;

use crate::ground::tokens::DEFAULT_CLAUDE_FACTOR;
use crate::measure::facts::{PriceInfo, ProbeCost, Report, ServerCost};

/// The model priced when none is chosen.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4.5";

/// One row of the price table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    pub name: String,
    /// US dollars per million input tokens.
    pub input: f64,
    /// US dollars per million tokens read from the prompt cache.
    pub cached_input: f64,
    /// The tokenizer whose counts the price applies to.
    pub tokenizer: String,
    pub as_of: String,
    pub source: String,
}

#[derive(Deserialize)]
struct Table {
    model: Vec<ModelPrice>,
}

static TABLE: LazyLock<Vec<ModelPrice>> = LazyLock::new(|| {
    toml::from_str::<Table>(include_str!("data/pricing.toml"))
        .expect("the embedded price table parses (tested)")
        .model
});

/// Every model in the table.
pub fn models() -> &'static [ModelPrice] {
    &TABLE
}

/// A bad `--model` or `--price`.
#[derive(Debug, thiserror::Error)]
pub enum PricingError {
    #[error("unknown model `{0}` (known: {known})", known = known())]
    UnknownModel(String),
    #[error("invalid --price `{0}`: expected INPUT or INPUT,CACHED in US dollars per million tokens, e.g. 3 or 3,0.3")]
    BadPrice(String),
}

fn known() -> String {
    models()
        .iter()
        .map(|m| m.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The model and prices to use: `model` from the table (default [`DEFAULT_MODEL`]), with
/// `price` ("INPUT" or "INPUT,CACHED", $/Mtok) overriding its prices. A price without a known
/// model prices the primary tokenizer's counts under the name `custom`.
pub fn choose(model: Option<&str>, price: Option<&str>) -> Result<PriceInfo, PricingError> {
    let row = match model {
        Some(name) => models()
            .iter()
            .find(|m| m.name.eq_ignore_ascii_case(name))
            .cloned(),
        None if price.is_some() => None,
        None => models().iter().find(|m| m.name == DEFAULT_MODEL).cloned(),
    };
    let mut info = match (row, model) {
        (Some(m), _) => PriceInfo {
            model: m.name,
            input_usd_per_mtok: m.input,
            cached_input_usd_per_mtok: m.cached_input,
            tokenizer: m.tokenizer,
            as_of: m.as_of,
            source: m.source,
            overridden: false,
        },
        (None, Some(name)) if price.is_none() => {
            return Err(PricingError::UnknownModel(name.to_string()))
        }
        (None, name) => PriceInfo {
            model: name.unwrap_or("custom").to_string(),
            input_usd_per_mtok: 0.0,
            cached_input_usd_per_mtok: 0.0,
            tokenizer: String::new(),
            as_of: String::new(),
            source: "--price".into(),
            overridden: true,
        },
    };
    if let Some(p) = price {
        let bad = || PricingError::BadPrice(p.to_string());
        let mut parts = p.split(',').map(|x| x.trim().trim_start_matches('$'));
        let input: f64 = parts.next().ok_or_else(bad)?.parse().map_err(|_| bad())?;
        let cached: f64 = match parts.next() {
            Some(c) => c.parse().map_err(|_| bad())?,
            // without a cache price, the common 10% of the input price
            None => input / 10.0,
        };
        if parts.next().is_some()
            || !(input.is_finite() && cached.is_finite())
            || input < 0.0
            || cached < 0.0
        {
            return Err(bad());
        }
        info.input_usd_per_mtok = input;
        info.cached_input_usd_per_mtok = cached;
        info.source = "--price".into();
        info.overridden = true;
    }
    Ok(info)
}

/// Counts in the priced model's tokenizer, from the report's primary count and the others.
struct Recount<'a> {
    primary: &'a str,
    want: &'a str,
}

impl Recount<'_> {
    /// The text's count in the wanted tokenizer, given its `primary` count and the others
    /// counted; a Claude price with only cl100k counted uses the estimate's factor. None when
    /// the wanted tokenizer was not counted.
    fn exact(&self, primary: usize, others: &dyn Fn(&str) -> Option<usize>) -> Option<usize> {
        if self.want.is_empty() || self.primary.starts_with(self.want) {
            return Some(primary);
        }
        if let Some(n) = others(self.want) {
            return Some(n);
        }
        if self.want != "claude-estimate" {
            return None;
        }
        let cl100k = if self.primary == "cl100k_base" {
            Some(primary)
        } else {
            others("cl100k_base")
        };
        cl100k.map(|n| (n as f64 * DEFAULT_CLAUDE_FACTOR).round() as usize)
    }

    /// [`Self::exact`], or the primary count when the wanted tokenizer was not counted.
    fn tokens(&self, primary: usize, others: &dyn Fn(&str) -> Option<usize>) -> usize {
        self.exact(primary, others).unwrap_or(primary)
    }
}

fn usd(tokens: usize, per_mtok: f64) -> f64 {
    tokens as f64 * per_mtok / 1_000_000.0
}

/// Fill in `pricing` and every server's and probe's `cost`.
pub fn apply(report: &mut Report, mut info: PriceInfo) {
    let primary = report
        .tokenizers
        .first()
        .cloned()
        .unwrap_or_else(|| "cl100k_base".into());
    let re = Recount {
        primary: &primary,
        want: &info.tokenizer,
    };
    let counted_in_want = report.servers.iter().all(|s| {
        let others = |name: &str| s.by_tokenizer.get(name).map(|t| t.tools_model_tokens);
        re.exact(s.tools_list.model_tokens, &others).is_some()
    });
    for s in &mut report.servers {
        let others = |name: &str| s.by_tokenizer.get(name).map(|t| t.tools_model_tokens);
        let tokens = re.tokens(s.tools_list.model_tokens, &others);
        s.cost = (s.tools_list.tool_count > 0 || s.tools_list.model_tokens > 0).then(|| {
            // with caching, the first turn of every 1,000 writes the cache (at the input price
            // here; cache writes cost more on some models) and the other 999 read it
            let cached = usd(tokens, info.input_usd_per_mtok)
                + 999.0 * usd(tokens, info.cached_input_usd_per_mtok);
            ServerCost {
                model: info.model.clone(),
                tokens_per_turn: tokens,
                usd_per_turn: usd(tokens, info.input_usd_per_mtok),
                usd_per_1k_turns: 1000.0 * usd(tokens, info.input_usd_per_mtok),
                usd_per_1k_turns_cached: cached,
            }
        });
        for p in &mut s.probes {
            let Some(raw) = &p.raw else { continue };
            let others = |name: &str| raw.by_tokenizer.get(name).map(|t| t.model_tokens);
            let raw_tokens = re.tokens(raw.model_tokens, &others);
            // the budgeted count is in the primary tokenizer: scale it as the raw count scaled
            let budgeted_tokens = p.budgeted.as_ref().map(|b| {
                if raw.model_tokens == 0 {
                    b.tokens
                } else {
                    (b.tokens as f64 * raw_tokens as f64 / raw.model_tokens as f64).round() as usize
                }
            });
            p.cost = Some(ProbeCost {
                model: info.model.clone(),
                raw_tokens,
                raw_usd: usd(raw_tokens, info.input_usd_per_mtok),
                budgeted_tokens,
                budgeted_usd: budgeted_tokens.map(|t| usd(t, info.input_usd_per_mtok)),
            });
        }
    }
    if !counted_in_want {
        info.tokenizer = format!("{primary} (the model's {} was not counted)", info.tokenizer);
    } else if info.tokenizer.is_empty() {
        info.tokenizer = primary;
    } else if info.tokenizer == "claude-estimate" {
        info.tokenizer = format!("claude-estimate (cl100k x {DEFAULT_CLAUDE_FACTOR})");
    }
    report.pricing = Some(info);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::facts::{ProbeResult, RawCost, ServerReport};

    #[test]
    fn the_table_is_complete_data() {
        assert!(models().len() >= 6);
        for m in models() {
            assert!(
                m.input > 0.0 && m.cached_input > 0.0 && m.cached_input < m.input,
                "{m:?}"
            );
            assert!(m.source.starts_with("https://"), "{m:?}");
            assert_eq!(m.as_of.len(), 10, "a YYYY-MM-DD date: {m:?}");
            assert!(
                ["claude-estimate", "o200k_base", "cl100k_base"].contains(&m.tokenizer.as_str())
            );
        }
        assert!(models().iter().any(|m| m.name == DEFAULT_MODEL));
        assert!(models().iter().any(|m| m.name.starts_with("gpt-")));
    }

    #[test]
    fn choosing_and_overriding() {
        let d = choose(None, None).unwrap();
        assert_eq!(
            (d.model.as_str(), d.input_usd_per_mtok),
            (DEFAULT_MODEL, 3.0)
        );
        let o = choose(Some("GPT-5"), Some("2,0.2")).unwrap();
        assert_eq!(
            (
                o.model.as_str(),
                o.input_usd_per_mtok,
                o.cached_input_usd_per_mtok
            ),
            ("gpt-5", 2.0, 0.2)
        );
        assert!(o.overridden);
        let c = choose(None, Some("$4")).unwrap();
        assert_eq!(
            (
                c.model.as_str(),
                c.input_usd_per_mtok,
                c.cached_input_usd_per_mtok
            ),
            ("custom", 4.0, 0.4)
        );
        assert!(matches!(
            choose(Some("gpt-99"), None),
            Err(PricingError::UnknownModel(_))
        ));
        for bad in ["", "x", "1,2,3", "-1", "1,nan"] {
            assert!(
                matches!(choose(None, Some(bad)), Err(PricingError::BadPrice(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn costs_use_the_models_tokenizer() {
        let mut s = ServerReport::new("s", "stdio", "x", "t");
        s.tools_list.tool_count = 2;
        s.tools_list.model_tokens = 10_000;
        s.probes.push(ProbeResult {
            latency_ms: 1.0,
            raw: Some(RawCost {
                model_tokens: 100_000,
                ..RawCost::default()
            }),
            budgeted: None,
            ..ProbeResult::new("t")
        });
        let mut r = Report::new(vec!["cl100k_base".into()], vec![s]);
        apply(&mut r, choose(Some("claude-sonnet-4.5"), None).unwrap());
        let cost = r.servers[0].cost.clone().unwrap();
        // 10,000 cl100k tokens x 1.23 = 12,300 Claude tokens at $3/Mtok
        assert_eq!(cost.tokens_per_turn, 12_300);
        assert!((cost.usd_per_turn - 0.0369).abs() < 1e-9);
        assert!((cost.usd_per_1k_turns - 36.9).abs() < 1e-9);
        // 1 write + 999 reads at $0.30
        assert!((cost.usd_per_1k_turns_cached - (0.0369 + 999.0 * 0.00369)).abs() < 1e-9);
        let p = r.servers[0].probes[0].cost.clone().unwrap();
        assert_eq!(p.raw_tokens, 123_000);
        assert!((p.raw_usd - 0.369).abs() < 1e-9);
        assert!(r
            .pricing
            .as_ref()
            .unwrap()
            .tokenizer
            .starts_with("claude-estimate"));

        // an OpenAI price with only cl100k counted says so
        apply(&mut r, choose(Some("gpt-5"), None).unwrap());
        assert_eq!(r.servers[0].cost.as_ref().unwrap().tokens_per_turn, 10_000);
        assert!(r.pricing.unwrap().tokenizer.contains("not counted"));
    }
}
