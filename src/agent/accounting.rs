//! The session's bill: usage and cost per request, totals per model, what the cache saved, and
//! the session budget.
//!
//! Usage belongs to the response it came with; the book only adds records up. A price the
//! provider reported (OpenRouter's `usage.cost`) beats the catalog's. Once any request has no
//! known price the session total is unknown too, rather than silently low.
//!
//! Every record is booked to one agent too: `main` (the session's own loop) or the dispatched
//! specialist that made the request, so the per-agent rows of `/cost` always add up to the total.
//! A session and its specialists share one book (`SharedBook`), so the budget counts them all.

use crate::cost::Pricing;
use crate::protocol::{AgentCost, ModelCost};
use crate::provider::UsageRecord;

/// Share of the budget at which the user is warned once.
pub const BUDGET_WARNING: f64 = 0.80;

/// The agent the session's own loop books its requests to.
pub const MAIN_AGENT: &str = "main";

/// The book a session and its specialists write to.
pub type SharedBook = std::sync::Arc<std::sync::Mutex<CostBook>>;

/// The book, even if a writer panicked while holding it (the figures stay usable).
pub fn lock(book: &SharedBook) -> std::sync::MutexGuard<'_, CostBook> {
    match book.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// The accounting part of the agent: the session's bill (shared with the specialists it
/// dispatches: one budget for all), the cache ledger that explains misses, and the last
/// request's input for the context share.
pub struct Accounts {
    pub book: SharedBook,
    pub ledger: crate::prompt::ledger::CacheLedger,
    /// All input of the last request, for the context share.
    pub last_input: u64,
    /// The last request's usage (what a keep-warm ping would carry).
    pub last_usage: crate::provider::UsageRecord,
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
    /// Each agent's share, in the order they first made a request.
    pub by_agent: Vec<AgentCost>,
    /// The session's cache expiries, in the explainer's words.
    pub expiries: Vec<String>,
    pub budget_usd: Option<f64>,
    warned: bool,
    /// The cost of every request with a known price: what the budget counts, even once the
    /// session total is unknown.
    known_cost_usd: f64,
    /// Models already reported as invisible to the budget.
    unpriced: Vec<String>,
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

    /// Adds one response; returns its cost and the warnings it raised (80% of the budget passed,
    /// a model the budget cannot price), each given once.
    pub fn record(
        &mut self,
        model: &str,
        usage: &UsageRecord,
        pricing: Option<&Pricing>,
    ) -> (Option<f64>, Vec<String>) {
        self.record_for(MAIN_AGENT, model, usage, pricing)
    }

    /// `record`, booked to `agent`.
    pub fn record_for(
        &mut self,
        agent: &str,
        model: &str,
        usage: &UsageRecord,
        pricing: Option<&Pricing>,
    ) -> (Option<f64>, Vec<String>) {
        self.totals.add(usage);
        self.requests += 1;
        let cost = usage
            .reported_cost
            .or_else(|| pricing.map(|p| p.cost(usage)));
        if let Some(p) = pricing {
            self.saved_usd += p.cache_savings(usage);
        }
        self.cost_usd = add_cost(self.cost_usd, cost);
        self.known_cost_usd += cost.unwrap_or(0.0);
        let unpriced_warning = match cost {
            None => self.unpriced_warning(model),
            Some(_) => None,
        };
        self.book_model(model, usage, cost);
        self.book_agent(agent, usage, cost);
        let warning = self.budget_warning();
        (cost, unpriced_warning.into_iter().chain(warning).collect())
    }

    /// The warning, once per model, that the budget cannot count a model without a price.
    fn unpriced_warning(&mut self, model: &str) -> Option<String> {
        if self.budget_usd.is_none() || self.unpriced.iter().any(|m| m == model) {
            return None;
        }
        self.unpriced.push(model.to_string());
        Some(format!(
            "the session budget cannot count {model}: it has no known price (add it to CHATCLI_HOME/pricing.toml); the budget goes on counting the requests it can price"
        ))
    }

    /// Adds a request to `model`'s line of the bill.
    fn book_model(&mut self, model: &str, usage: &UsageRecord, cost: Option<f64>) {
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
        entry.cost_usd = add_cost(entry.cost_usd, cost);
    }

    /// Adds a request to `agent`'s share of the bill.
    fn book_agent(&mut self, agent: &str, usage: &UsageRecord, cost: Option<f64>) {
        let share = match self.by_agent.iter().position(|a| a.agent == agent) {
            Some(i) => &mut self.by_agent[i],
            None => {
                self.by_agent.push(AgentCost {
                    agent: agent.to_string(),
                    cost_usd: Some(0.0),
                    ..AgentCost::default()
                });
                let last = self.by_agent.len() - 1;
                &mut self.by_agent[last]
            }
        };
        share.requests += 1;
        share.input_tokens += usage.total_input();
        share.output_tokens += usage.output;
        share.cost_usd = add_cost(share.cost_usd, cost);
    }

    /// The warning, once per budget, that `BUDGET_WARNING` of it is spent.
    fn budget_warning(&mut self) -> Option<String> {
        let spent = self.known_cost_usd;
        match self.budget_usd {
            Some(budget) if !self.warned && spent >= budget * BUDGET_WARNING && spent < budget => {
                self.warned = true;
                Some(format!(
                    "{:.0}% of the session budget used (${spent:.4} of ${budget:.2})",
                    spent / budget * 100.0
                ))
            }
            _ => None,
        }
    }

    /// `Some(message)` when the budget is spent and no new request may start.
    pub fn over_budget(&self) -> Option<String> {
        let spent = self.known_cost_usd;
        match self.budget_usd {
            Some(budget) if spent >= budget => Some(format!(
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

/// A running total plus one more cost: unknown once either is.
fn add_cost(total: Option<f64>, cost: Option<f64>) -> Option<f64> {
    match (total, cost) {
        (Some(total), Some(c)) => Some(total + c),
        _ => None,
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
        assert!(
            warning
                .first()
                .is_some_and(|w| w.starts_with("82% of the session budget"))
        );
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

    #[test]
    fn an_unpriced_model_does_not_switch_the_budget_off() {
        let catalog = crate::cost::Catalog::builtin();
        let sonnet = catalog.lookup("claude-sonnet-4-5");
        let mut book = CostBook::new(Some(0.01));
        let usage = UsageRecord {
            uncached_input: 1_000,
            output: 100,
            ..UsageRecord::default()
        };
        let (_, warnings) = book.record("local-thing", &usage, None);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("cannot count local-thing"));
        let (_, again) = book.record("local-thing", &usage, None);
        assert!(again.is_empty(), "warned once: {again:?}");
        assert_eq!(book.cost_usd, None);
        for _ in 0..3 {
            book.record("claude-sonnet-4-5", &usage, sonnet);
        }
        assert!(
            book.over_budget().is_some(),
            "the priced requests still trip the budget"
        );
    }
}
