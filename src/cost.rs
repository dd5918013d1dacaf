//! Prices per model and the cost of a usage record.
//!
//! The catalog is data (`assets/pricing.toml`, embedded at build time), not code. A model with no
//! entry has no price: callers show "cost unknown" rather than a guessed figure. Cache writes
//! without a listed write price are billed as plain input; OpenAI-style cached tokens are billed
//! once, at the cache-read rate.

use std::collections::HashMap;

use serde::Deserialize;

use crate::provider::UsageRecord;

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

/// A pricing file that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("pricing catalog {origin}: {message}")]
pub struct CatalogError {
    pub origin: String,
    pub message: String,
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
        let file: CatalogFile = toml::from_str(text).map_err(|e| CatalogError {
            origin: origin.to_string(),
            message: e
                .to_string()
                .lines()
                .next()
                .unwrap_or("invalid TOML")
                .to_string(),
        })?;
        Ok(Catalog {
            models: file.models,
        })
    }

    /// Adds or replaces the entries of `other`.
    pub fn merge(&mut self, other: Catalog) {
        self.models.extend(other.models);
    }

    /// The price of a model, by id, alias, or id without its date suffix.
    pub fn lookup(&self, model: &str) -> Option<&Pricing> {
        let model = model.trim();
        let base = strip_date_suffix(model);
        self.models
            .get(model)
            .or_else(|| self.models.get(base))
            .or_else(|| {
                self.models
                    .values()
                    .find(|p| p.aliases.iter().any(|a| a == model || a == base))
            })
    }
}

/// `claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`; `gpt-4.1-2025-04-14` → `gpt-4.1`.
fn strip_date_suffix(model: &str) -> &str {
    let bytes = model.as_bytes();
    let is_digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    if bytes.len() > 9 && bytes[bytes.len() - 9] == b'-' && is_digits(&bytes[bytes.len() - 8..]) {
        return &model[..model.len() - 9];
    }
    if bytes.len() > 11 {
        let tail = &bytes[bytes.len() - 11..];
        if tail[0] == b'-'
            && is_digits(&tail[1..5])
            && tail[5] == b'-'
            && is_digits(&tail[6..8])
            && tail[8] == b'-'
            && is_digits(&tail[9..11])
        {
            return &model[..model.len() - 11];
        }
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
            reasoning: 0,
            estimated: false,
            reported_cost: None,
        };
        let cost = sonnet.cost(&usage);
        assert!((cost - (3.0 + 0.30 + 3.75 + 15.0)).abs() < 1e-9, "{cost}");
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
