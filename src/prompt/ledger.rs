//! The cache ledger: what each request was made of, and why a cache read fell short.
//!
//! A request is cut into the units a prefix cache sees, in wire order: each tool definition,
//! each system block, each message. The ledger keeps the blocks (hash and estimated tokens) of
//! the last request with its usage. When a request reads less from the cache than the previous
//! one had cached (read + written), the first block whose bytes differ is the culprit: the
//! explainer names it ("system/core changed", "tool results in message #3 rewritten") with the
//! tokens that had to be written again. With no block changed, the entry expired or was evicted.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::conversation::{ContentBlock, Message, ModelRequest, Role};
use crate::protocol::BlockReport;
use crate::provider::UsageRecord;

/// Below this many cached tokens a provider caches nothing anyway: no miss to explain.
const MIN_CACHED: u64 = 1024;
/// Providers count cached tokens in steps (OpenAI: 128); smaller shortfalls are not misses.
const TOLERANCE: u64 = 128;

/// One unit of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Shared: a message's block is copied into every request's list (`blocks_with`).
    pub label: Arc<str>,
    hash: u64,
    pub tokens: u64,
}

fn hash_of(value: &impl Serialize) -> (u64, u64) {
    let (hash, bytes) = sent_bytes(value);
    (hash, crate::tokens::rough(bytes))
}

/// The hash of `value` serialised, and its length in bytes: what a block is compared by.
pub fn sent_bytes(value: &impl Serialize) -> (u64, usize) {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    let mut hasher = DefaultHasher::new();
    bytes.hash(&mut hasher);
    (hasher.finish(), bytes.len())
}

/// The block of message `index`, from its `sent_bytes`.
pub fn message_block(index: usize, message: &Message, hash: u64, bytes: usize) -> Block {
    Block {
        label: message_label(index, message).into(),
        hash,
        tokens: crate::tokens::rough(bytes),
    }
}

fn message_label(index: usize, message: &Message) -> String {
    let results = message
        .content
        .iter()
        .any(|b| matches!(b, ContentBlock::ToolResult { .. }));
    match (message.role, results) {
        (Role::User, true) => format!("tool results in message #{}", index + 1),
        (Role::User, false) => format!("user message #{}", index + 1),
        (Role::Assistant, _) => format!("assistant message #{}", index + 1),
    }
}

/// The request cut into blocks, in wire order.
pub fn request_blocks(request: &ModelRequest) -> Vec<Block> {
    let messages = request.messages.iter().enumerate().map(|(i, message)| {
        let (hash, bytes) = sent_bytes(message);
        message_block(i, message, hash, bytes)
    });
    blocks_with(request, messages.collect())
}

/// The request cut into blocks, its messages' blocks already made (the compactor keeps each
/// message's block until the message changes: `compaction::Memo`).
pub fn blocks_with(request: &ModelRequest, messages: Vec<Block>) -> Vec<Block> {
    let mut blocks =
        Vec::with_capacity(request.tools.len() + request.system.len() + messages.len());
    for tool in &request.tools {
        let (hash, tokens) = hash_of(tool);
        blocks.push(Block {
            label: format!("tool {}", tool.name).into(),
            hash,
            tokens,
        });
    }
    for block in &request.system {
        let (hash, tokens) = hash_of(&block.text);
        blocks.push(Block {
            label: format!("system/{}", block.name).into(),
            hash,
            tokens,
        });
    }
    blocks.extend(messages);
    blocks
}

/// A cache read that fell short, explained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheMiss {
    /// What changed, in words.
    pub block: String,
    /// Tokens (estimated) that had to be written again from that block on.
    pub rewritten_tokens: u64,
    /// What the previous request had cached, and what this one read.
    pub expected_read: u64,
    pub actual_read: u64,
}

impl CacheMiss {
    /// The explainer's words: for an expiry, what it cost ("cache expired after 12 min idle:
    /// 31k tokens written again, $0.12"), the price left out when the model has none.
    pub fn expiry_words(&self, cost: Option<f64>) -> String {
        if !self.block.starts_with("cache expired") {
            return self.block.clone();
        }
        let tokens = if self.rewritten_tokens >= 1000 {
            format!("{}k", (self.rewritten_tokens + 500) / 1000)
        } else {
            self.rewritten_tokens.to_string()
        };
        match cost {
            Some(usd) => format!("{}: {tokens} tokens written again, ${usd:.2}", self.block),
            None => format!("{}: {tokens} tokens written again", self.block),
        }
    }
}

/// The last request's blocks and usage, and when it was recorded (seconds).
#[derive(Debug, Default, Clone)]
pub struct CacheLedger {
    last: Option<(Vec<Block>, UsageRecord, u64)>,
}

/// Idle seconds from which a miss with no block changed is called an expiry, in minutes: below a
/// minute no provider's entry lapses, so it was evicted.
const EXPIRY_MIN_IDLE_SECS: u64 = 60;

impl CacheLedger {
    /// Records a request and its usage at `now` (seconds); explains a shortfall against the
    /// previous request (with no block changed after a minute or more idle: an expiry, and
    /// how long the session was idle).
    pub fn record(
        &mut self,
        blocks: Vec<Block>,
        usage: &UsageRecord,
        now: u64,
    ) -> Option<CacheMiss> {
        let miss = self.last.as_ref().and_then(|(previous, before, then)| {
            let expected = before.cache_read + before.cache_write();
            if expected < MIN_CACHED || usage.cache_read + TOLERANCE >= expected || usage.estimated
            {
                return None;
            }
            let first_changed = previous
                .iter()
                .zip(&blocks)
                .enumerate()
                .find(|(_, (a, b))| a.hash != b.hash);
            let (block, rewritten) = match first_changed {
                Some((i, (was, now))) => {
                    let what = if was.label == now.label {
                        let verb = if now.label.starts_with("tool results") {
                            "rewritten"
                        } else {
                            "changed"
                        };
                        format!("{} {verb}", now.label)
                    } else {
                        format!("{} now stands where {} was", now.label, was.label)
                    };
                    (what, previous.iter().skip(i).map(|b| b.tokens).sum())
                }
                None if now.saturating_sub(*then) >= EXPIRY_MIN_IDLE_SECS => (
                    format!(
                        "cache expired after {} min idle",
                        now.saturating_sub(*then) / 60
                    ),
                    expected.saturating_sub(usage.cache_read),
                ),
                None => (
                    "no block changed: the cache entry expired (TTL) or was evicted".to_string(),
                    expected.saturating_sub(usage.cache_read),
                ),
            };
            Some(CacheMiss {
                block,
                rewritten_tokens: rewritten,
                expected_read: expected,
                actual_read: usage.cache_read,
            })
        });
        self.last = Some((blocks, *usage, now));
        miss
    }

    /// The last request's blocks with how each was billed (token counts are estimates, so the
    /// split between read, written and uncached is approximate at its edges).
    pub fn report(&self) -> Vec<BlockReport> {
        let Some((blocks, usage, _)) = &self.last else {
            return Vec::new();
        };
        // Scale estimates to the provider's total so the split lines up with its counts.
        let estimated: u64 = blocks.iter().map(|b| b.tokens).sum::<u64>().max(1);
        let total = usage.total_input().max(1);
        let mut position = 0u64;
        blocks
            .iter()
            .map(|b| {
                let tokens = b.tokens * total / estimated;
                let middle = position + tokens / 2;
                position += tokens;
                let state = if middle < usage.cache_read {
                    "read"
                } else if middle < usage.cache_read + usage.cache_write() {
                    "written"
                } else {
                    "uncached"
                };
                BlockReport {
                    name: b.label.to_string(),
                    tokens,
                    state: state.to_string(),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{SystemBlock, ToolSpec};

    fn request(core: &str, messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            model: "m".into(),
            system: vec![SystemBlock {
                name: "core".into(),
                text: core.into(),
                stable: true,
            }],
            tools: vec![ToolSpec {
                name: "read_file".into(),
                description: "d".into(),
                parameters: serde_json::json!({}),
            }],
            messages: crate::conversation::shared(messages),
            max_output_tokens: 1,
            session_id: "s".into(),
            effort: None,
            settled_messages: None,
            bridge_message: None,
        }
    }

    fn usage(read: u64, write: u64, uncached: u64) -> UsageRecord {
        UsageRecord {
            uncached_input: uncached,
            cache_read: read,
            cache_write_5m: write,
            ..UsageRecord::default()
        }
    }

    #[test]
    fn names_the_first_changed_block() {
        let mut ledger = CacheLedger::default();
        let long = "x".repeat(8000);
        let first = request(&long, vec![Message::user_text("hi")]);
        assert_eq!(
            ledger.record(request_blocks(&first), &usage(0, 2100, 0), 0),
            None
        );
        let second = request(&format!("{long}!"), vec![Message::user_text("hi")]);
        let miss = ledger
            .record(request_blocks(&second), &usage(10, 2100, 0), 0)
            .expect("a miss");
        assert_eq!(miss.block, "system/core changed");
        assert_eq!(miss.expected_read, 2100);
        assert!(miss.rewritten_tokens >= 2000);
    }

    #[test]
    fn a_full_read_is_not_a_miss_and_small_prompts_are_ignored() {
        let mut ledger = CacheLedger::default();
        let r = request(&"y".repeat(8000), vec![Message::user_text("hi")]);
        ledger.record(request_blocks(&r), &usage(0, 2100, 0), 0);
        assert_eq!(
            ledger.record(request_blocks(&r), &usage(2100, 30, 0), 0),
            None
        );
        let mut small = CacheLedger::default();
        small.record(request_blocks(&r), &usage(0, 500, 0), 0);
        assert_eq!(small.record(request_blocks(&r), &usage(0, 500, 0), 0), None);
    }

    #[test]
    fn unchanged_blocks_with_a_shortfall_mean_expiry() {
        let mut ledger = CacheLedger::default();
        let r = request(&"z".repeat(8000), vec![Message::user_text("hi")]);
        ledger.record(request_blocks(&r), &usage(0, 2100, 0), 0);
        let miss = ledger
            .record(request_blocks(&r), &usage(0, 2100, 0), 0)
            .expect("a miss");
        assert!(miss.block.starts_with("no block changed"));
        // Twelve minutes later, the same shortfall is an expiry, with the idle time.
        let miss = ledger
            .record(request_blocks(&r), &usage(0, 2100, 0), 12 * 60 + 30)
            .expect("a miss");
        assert_eq!(miss.block, "cache expired after 12 min idle");
        assert_eq!(miss.rewritten_tokens, 2100);
    }

    #[test]
    fn the_report_splits_blocks_by_how_they_were_billed() {
        let mut ledger = CacheLedger::default();
        let r = request(
            &"z".repeat(8000),
            vec![Message::user_text("q".repeat(4000))],
        );
        ledger.record(request_blocks(&r), &usage(2000, 1000, 0), 0);
        let report = ledger.report();
        let states: Vec<&str> = report.iter().map(|b| b.state.as_str()).collect();
        assert_eq!(states, vec!["read", "read", "written"]);
    }
}
