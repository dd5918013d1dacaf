//! The session's bill: usage and cost per request, totals per model, what the cache saved, and
//! the session budget.
//!
//! Usage belongs to the response it came with; the book only adds records up. A price the
//! provider reported (OpenRouter's `usage.cost`) beats the catalog's. Once any request has no
//! known price the session total is unknown too, rather than silently low.

use serde::{Deserialize, Serialize};

use crate::cost::Pricing;
use crate::provider::UsageRecord;

/// Share of the budget at which the user is warned once.
pub const BUDGET_WARNING: f64 = 0.80;

/// One model's share of the session.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ModelCost {
    pub model: String,
    pub requests: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_creation_tokens: u64,
    pub cost_usd: Option<f64>,
}

/// The running bill.
#[derive(Debug, Clone, Default)]
pub struct CostBook {
    pub totals: UsageRecord,
    pub requests: u32,
    /// `None` once a request had no known price.
    pub cost_usd: Option<f64>,
    /// What cache reads saved against full input price, net of the writes' premium.
    pub saved_usd: f64,
    pub by_model: Vec<ModelCost>,
    pub budget_usd: Option<f64>,
    warned: bool,
}

impl CostBook {
    /// A book with an optional session budget.
    pub fn new(budget_usd: Option<f64>) -> Self {
        CostBook {
            cost_usd: Some(0.0),
            budget_usd,
            ..CostBook::default()
        }
    }

    /// Adds one response; returns its cost and, the first time 80% of the budget is passed, a warning.
    pub fn record(
        &mut self,
        model: &str,
        usage: &UsageRecord,
        pricing: Option<&Pricing>,
    ) -> (Option<f64>, Option<String>) {
        self.totals.add(usage);
        self.requests += 1;
        let cost = usage
            .reported_cost
            .or_else(|| pricing.map(|p| p.cost(usage)));
        if let Some(p) = pricing {
            self.saved_usd += p.cache_savings(usage);
        }
        self.cost_usd = match (self.cost_usd, cost) {
            (Some(total), Some(c)) => Some(total + c),
            _ => None,
        };
        let entry = match self.by_model.iter().position(|m| m.model == model) {
            Some(i) => &mut self.by_model[i],
            None => {
                self.by_model.push(ModelCost {
                    model: model.to_string(),
                    cost_usd: Some(0.0),
                    ..ModelCost::default()
                });
                let last = self.by_model.len() - 1;
                &mut self.by_model[last]
            }
        };
        entry.requests += 1;
        entry.input_tokens += usage.total_input();
        entry.output_tokens += usage.output;
        entry.cache_read_tokens += usage.cache_read;
        entry.cache_creation_tokens += usage.cache_write();
        entry.cost_usd = match (entry.cost_usd, cost) {
            (Some(total), Some(c)) => Some(total + c),
            _ => None,
        };
        let warning = match (self.budget_usd, self.cost_usd) {
            (Some(budget), Some(spent))
                if !self.warned && spent >= budget * BUDGET_WARNING && spent < budget =>
            {
                self.warned = true;
                Some(format!(
                    "{:.0}% of the session budget used (${spent:.4} of ${budget:.2})",
                    spent / budget * 100.0
                ))
            }
            _ => None,
        };
        (cost, warning)
    }

    /// `Some(message)` when the budget is spent and no new request may start.
    pub fn over_budget(&self) -> Option<String> {
        match (self.budget_usd, self.cost_usd) {
            (Some(budget), Some(spent)) if spent >= budget => Some(format!(
                "session budget of ${budget:.2} reached (${spent:.4} spent): no new request is sent; raise it with /budget AMOUNT"
            )),
            _ => None,
        }
    }

    /// Sets a new budget (`None` removes it); the 80% warning may fire again.
    pub fn set_budget(&mut self, budget: Option<f64>) {
        self.budget_usd = budget;
        self.warned = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::Catalog;

    #[test]
    fn totals_savings_and_the_budget() {
        let catalog = Catalog::builtin();
        let sonnet = catalog.lookup("claude-sonnet-4-5");
        let mut book = CostBook::new(Some(0.01));
        let usage = UsageRecord {
            uncached_input: 100,
            cache_read: 10_000,
            cache_write_5m: 500,
            output: 200,
            ..UsageRecord::default()
        };
        let (cost, warning) = book.record("claude-sonnet-4-5", &usage, sonnet);
        // 100×3 + 10,000×0.30 + 500×3.75 + 200×15 per million = $0.008175
        assert!((cost.unwrap_or_default() - 0.008175).abs() < 1e-9);
        assert!(warning.is_some_and(|w| w.starts_with("82% of the session budget")));
        assert!((book.saved_usd - (10_000.0 * 2.70 - 500.0 * 0.75) / 1e6).abs() < 1e-12);
        assert!(book.over_budget().is_none());
        book.record("claude-sonnet-4-5", &usage, sonnet);
        assert!(book.over_budget().is_some());
        book.set_budget(Some(1.0));
        assert!(book.over_budget().is_none());
        book.record("other", &usage, None);
        assert_eq!(
            book.cost_usd, None,
            "an unpriced request makes the total unknown"
        );
        assert_eq!(book.by_model.len(), 2);
        assert_eq!(book.by_model[0].requests, 2);
    }
}
