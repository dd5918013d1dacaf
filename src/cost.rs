//! Prices per model and the cost of a usage record.
//!
//! The catalog is data (`assets/pricing.toml`, embedded at build time), not code. A model with no
//! entry has no price: callers show "cost unknown" rather than a guessed figure. Cache writes
//! without a listed write price are billed as plain input; OpenAI-style cached tokens are billed
//! once, at the cache-read rate. Which entry a session's model gets (the user's file, a local
//! server, the catalog, its family) is decided once, in [`rule`].

// `pricing.toml` is a hand-edited file: no index that could panic on what it holds (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use std::collections::HashMap;

use serde::Deserialize;

use crate::provider::UsageRecord;

pub mod family;
pub mod rule;

pub use rule::{Endpoint, Listed, PriceDecision, PriceRule};

const BUILTIN: &str = include_str!("../assets/pricing.toml");

/// USD per million tokens for one model, and its context window.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Pricing {
    pub input: f64,
    pub output: f64,
    #[serde(default)]
    pub cache_read: Option<f64>,
    #[serde(default)]
    pub cache_write_5m: Option<f64>,
    #[serde(default)]
    pub cache_write_1h: Option<f64>,
    #[serde(default)]
    pub context_window: Option<u64>,
    #[serde(default)]
    pub aliases: Vec<String>,
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub as_of: String,
}

impl Pricing {
    /// A price of zero (local models).
    pub fn free(context_window: Option<u64>) -> Pricing {
        Pricing {
            input: 0.0,
            output: 0.0,
            cache_read: Some(0.0),
            cache_write_5m: Some(0.0),
            cache_write_1h: Some(0.0),
            context_window,
            aliases: Vec::new(),
            source: "local model".into(),
            as_of: String::new(),
        }
    }

    /// What the cache saved against paying full input price for every token it read, net of
    /// what its writes cost above plain input (negative when writes were never read back).
    pub fn cache_savings(&self, usage: &UsageRecord) -> f64 {
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        let read = self.cache_read.unwrap_or(self.input);
        let write_5m = self.cache_write_5m.unwrap_or(self.input);
        let write_1h = self
            .cache_write_1h
            .or(self.cache_write_5m)
            .unwrap_or(self.input);
        per(usage.cache_read, self.input - read)
            - per(usage.cache_write_5m, write_5m - self.input)
            - per(usage.cache_write_1h, write_1h - self.input)
    }

    /// What writing `tokens` again cost in the request billed `usage`: at its 1-hour write price
    /// when it wrote 1-hour entries, else its 5-minute one, else (OpenAI) the input price.
    pub fn rewrite_cost(&self, tokens: u64, usage: &UsageRecord) -> f64 {
        let price = if usage.cache_write_1h > 0 {
            self.cache_write_1h.unwrap_or(self.input)
        } else if usage.cache_write_5m > 0 {
            self.cache_write_5m.unwrap_or(self.input)
        } else {
            self.input
        };
        tokens as f64 * price / 1_000_000.0
    }

    /// The cost in USD of one response's usage.
    pub fn cost(&self, usage: &UsageRecord) -> f64 {
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        per(usage.uncached_input, self.input)
            + per(usage.cache_read, self.cache_read.unwrap_or(self.input))
            + per(
                usage.cache_write_5m,
                self.cache_write_5m.unwrap_or(self.input),
            )
            + per(
                usage.cache_write_1h,
                self.cache_write_1h
                    .or(self.cache_write_5m)
                    .unwrap_or(self.input),
            )
            + per(usage.output, self.output)
    }
}

/// A pricing file chatcli cannot use; `origin` names the file.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The file is not valid TOML of the catalog's shape.
    #[error("pricing catalog {origin}: {message}")]
    Parse { origin: String, message: String },
    /// A price that is negative, NaN or infinite.
    #[error(
        "pricing catalog {origin}: models.{model}.{field} must be a price in USD per million tokens, zero or more (got {value})"
    )]
    Price {
        origin: String,
        model: String,
        field: &'static str,
        value: f64,
    },
}

#[derive(Deserialize)]
struct CatalogFile {
    #[serde(default)]
    models: HashMap<String, Pricing>,
}

/// Prices by model id.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    models: HashMap<String, Pricing>,
}

impl Catalog {
    /// The catalog shipped with chatcli.
    pub fn builtin() -> Catalog {
        // The embedded file is checked by a unit test, so a parse failure here is a build defect;
        // fall back to an empty catalog rather than panic at a user.
        Catalog::parse(BUILTIN, "assets/pricing.toml").unwrap_or_default()
    }

    /// Parses a catalog file; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Catalog, CatalogError> {
        let file: CatalogFile = toml::from_str(text).map_err(|e| CatalogError::Parse {
            origin: origin.to_string(),
            message: e
                .to_string()
                .lines()
                .next()
                .unwrap_or("invalid TOML")
                .to_string(),
        })?;
        // A negative, NaN or infinite price would make every cost (and the budget) meaningless.
        let mut entries: Vec<(&String, &Pricing)> = file.models.iter().collect();
        entries.sort_by_key(|(name, _)| *name);
        for (name, p) in entries {
            let fields = [
                ("input", Some(p.input)),
                ("output", Some(p.output)),
                ("cache_read", p.cache_read),
                ("cache_write_5m", p.cache_write_5m),
                ("cache_write_1h", p.cache_write_1h),
            ];
            for (field, value) in fields {
                if let Some(v) = value
                    && !(v.is_finite() && v >= 0.0)
                {
                    return Err(CatalogError::Price {
                        origin: origin.to_string(),
                        model: name.clone(),
                        field,
                        value: v,
                    });
                }
            }
        }
        Ok(Catalog {
            models: file.models,
        })
    }

    /// Adds or replaces the entries of `other`.
    pub fn merge(&mut self, other: Catalog) {
        self.models.extend(other.models);
    }

    /// The price of a model, by id, alias, or id without its date suffix (case-insensitive).
    pub fn lookup(&self, model: &str) -> Option<&Pricing> {
        let model = model.trim();
        let base = strip_date_suffix(model);
        let same = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
        self.models
            .get(model)
            .or_else(|| self.models.get(base))
            .or_else(|| {
                // Deterministic: the first matching id in sorted order.
                let mut entries: Vec<(&String, &Pricing)> = self.models.iter().collect();
                entries.sort_by_key(|(id, _)| *id);
                entries
                    .into_iter()
                    .map(|(_, p)| p)
                    .find(|p| p.aliases.iter().any(|a| same(a, model) || same(a, base)))
            })
            .or_else(|| {
                self.models
                    .iter()
                    .find(|(id, _)| same(id, model) || same(id, base))
                    .map(|(_, p)| p)
            })
    }

    /// Every model id in the catalog, sorted.
    pub fn ids(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = self.models.keys().map(String::as_str).collect();
        ids.sort();
        ids
    }
}

/// `claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`; `gpt-4.1-2025-04-14` → `gpt-4.1`.
fn strip_date_suffix(model: &str) -> &str {
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if let Some((base, date)) = model.rsplit_once('-')
        && !base.is_empty()
        && digits(date, 8)
    {
        return base;
    }
    let mut parts = model.rsplitn(4, '-');
    if let (Some(day), Some(month), Some(year), Some(base)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
        && !base.is_empty()
        && digits(year, 4)
        && digits(month, 2)
        && digits(day, 2)
    {
        return base;
    }
    model
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_catalog_parses_and_matches_dated_ids() {
        let catalog = Catalog::parse(BUILTIN, "builtin").expect("builtin catalog parses");
        assert!(catalog.lookup("claude-sonnet-4-5-20250929").is_some());
        assert!(catalog.lookup("gpt-4.1-2025-04-14").is_some());
        assert!(catalog.lookup("no-such-model").is_none());
    }

    #[test]
    fn cost_bills_each_part_at_its_rate() {
        let catalog = Catalog::builtin();
        let sonnet = catalog.lookup("claude-sonnet-4-5").expect("sonnet priced");
        let usage = UsageRecord {
            uncached_input: 1_000_000,
            cache_read: 1_000_000,
            cache_write_5m: 1_000_000,
            cache_write_1h: 0,
            output: 1_000_000,
            ..UsageRecord::default()
        };
        let cost = sonnet.cost(&usage);
        assert!((cost - (3.0 + 0.30 + 3.75 + 15.0)).abs() < 1e-9, "{cost}");
    }

    #[test]
    fn the_catalog_covers_the_current_families() {
        let catalog = Catalog::builtin();
        for model in [
            "claude-opus-4-5",
            "claude-sonnet-4-5-20250929",
            "claude-haiku-4-5",
            "gpt-4o",
            "gpt-4.1",
            "gpt-5",
            "gpt-5-mini",
            "o3",
            "o4-mini",
            "gemini-2.5-pro",
            "gemini-2.5-flash",
            "grok-4",
            "grok-3-mini",
            "kimi-k2-0905-preview",
            "glm-4.7",
            "MiniMax-M2",
            "anthropic/claude-sonnet-4.5",
        ] {
            assert!(catalog.lookup(model).is_some(), "{model} has no price");
        }
        let gpt41 = catalog.lookup("gpt-4.1").expect("priced");
        // OpenAI cached tokens are billed once, at the cached rate: 1M cached = $0.50, not $2.50.
        let cached = UsageRecord {
            cache_read: 1_000_000,
            ..UsageRecord::default()
        };
        assert!((gpt41.cost(&cached) - 0.50).abs() < 1e-9);
        assert!((gpt41.cache_savings(&cached) - 1.50).abs() < 1e-9);
    }

    #[test]
    fn negative_nan_and_infinite_prices_are_refused_naming_file_model_and_field() {
        for (value, shown) in [
            ("-0.5", "-0.5"),
            ("nan", "NaN"),
            ("inf", "inf"),
            ("-inf", "-inf"),
        ] {
            let text =
                format!("[models.my-model]\ninput = 1.0\noutput = 2.0\ncache_read = {value}\n");
            let err = Catalog::parse(&text, "/home/u/.chatcli/pricing.toml")
                .err()
                .unwrap_or_else(|| panic!("{value} accepted"))
                .to_string();
            assert_eq!(
                err,
                format!(
                    "pricing catalog /home/u/.chatcli/pricing.toml: models.my-model.cache_read must be a price in USD per million tokens, zero or more (got {shown})"
                )
            );
        }
        let err = Catalog::parse("[models.m]\ninput = -1.0\noutput = 2.0\n", "p.toml")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("models.m.input"), "{err}");
        assert!(Catalog::parse("[models.m]\ninput = 0.0\noutput = 0.0\n", "p.toml").is_ok());
    }

    #[test]
    fn bad_file_names_itself() {
        let err = Catalog::parse("[models.x]\ninput = \"cheap\"", "/tmp/pricing.toml")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.starts_with("pricing catalog /tmp/pricing.toml:"),
            "{err}"
        );
    }
}
