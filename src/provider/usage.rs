//! Normalised token usage: one record per response, whatever the provider's convention.
//!
//! Invariant: `total_input() == uncached_input + cache_read + cache_write_5m + cache_write_1h`.
//! Providers disagree on whether their "input" count includes cached tokens (Anthropic's does
//! not, OpenAI's `prompt_tokens` does); each wire client maps into this record so nothing above
//! the provider layer has to know. Reasoning tokens are informational and already inside `output`.

use serde::{Deserialize, Serialize};

use crate::protocol::UsageFigures;

/// Token usage of one response.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct UsageRecord {
    pub uncached_input: u64,
    pub cache_read: u64,
    pub cache_write_5m: u64,
    pub cache_write_1h: u64,
    pub output: u64,
    pub reasoning: u64,
    /// True when chatcli counted the tokens itself because the provider reported nothing.
    pub estimated: bool,
    /// The price the provider itself reported for this response (OpenRouter's `usage.cost`).
    #[serde(default)]
    pub reported_cost: Option<f64>,
    /// False for providers with no prompt cache at all (Ollama): their cache counts mean nothing.
    #[serde(default = "reported")]
    pub cache_reported: bool,
}

fn reported() -> bool {
    true
}

impl Default for UsageRecord {
    fn default() -> Self {
        UsageRecord {
            uncached_input: 0,
            cache_read: 0,
            cache_write_5m: 0,
            cache_write_1h: 0,
            output: 0,
            reasoning: 0,
            estimated: false,
            reported_cost: None,
            cache_reported: true,
        }
    }
}

impl UsageRecord {
    /// All input of the request: uncached, read from cache and written to cache.
    pub fn total_input(&self) -> u64 {
        self.uncached_input + self.cache_read + self.cache_write()
    }

    /// Input written to the cache, both TTLs.
    pub fn cache_write(&self) -> u64 {
        self.cache_write_5m + self.cache_write_1h
    }

    /// The figures the `usage` event carries.
    pub fn figures(&self) -> UsageFigures {
        UsageFigures {
            input_tokens: self.total_input(),
            output_tokens: self.output,
            cache_read_tokens: self.cache_read,
            cache_creation_tokens: self.cache_write(),
            reasoning_tokens: self.reasoning,
            estimated: self.estimated,
            cache_reported: self.cache_reported,
        }
    }

    /// Adds another record's counts to this one (session totals).
    pub fn add(&mut self, other: &UsageRecord) {
        self.uncached_input += other.uncached_input;
        self.cache_read += other.cache_read;
        self.cache_write_5m += other.cache_write_5m;
        self.cache_write_1h += other.cache_write_1h;
        self.output += other.output;
        self.reasoning += other.reasoning;
        self.estimated |= other.estimated;
        self.reported_cost = match (self.reported_cost, other.reported_cost) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn total_input_sums_every_part() {
        let u = UsageRecord {
            uncached_input: 3,
            cache_read: 6289,
            cache_write_5m: 3337,
            cache_write_1h: 1,
            output: 10,
            reasoning: 4,
            estimated: false,
            reported_cost: None,
            cache_reported: true,
        };
        assert_eq!(u.total_input(), 9630);
        let f = u.figures();
        assert_eq!(f.cache_creation_tokens, 3338);
        assert_eq!(f.input_tokens, 9630);
    }
}
