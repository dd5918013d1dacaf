//! The benchmark's model: scripted turns, usage from the cache model of the request bytes.
//!
//! It never looks at what it is asked beyond counting it: each request gets the next scripted
//! turn (text and tool calls); when the script runs out it answers "done". Every request's usage
//! and its floor (perfect prefix caching) are logged for the report.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use futures_util::stream;
use serde_json::Value;

use super::cache_model::{CacheModel, Segment, Semantics, chain};
use crate::conversation::ModelRequest;
use crate::provider::{Provider, ProviderEvent, ProviderStream, StopReason, UsageRecord};

/// One scripted model turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub text: String,
    pub calls: Vec<(String, Value)>,
}

impl Turn {
    /// A turn that only answers.
    pub fn answer(text: &str) -> Turn {
        Turn {
            text: text.to_string(),
            calls: Vec::new(),
        }
    }

    /// A turn that calls tools.
    pub fn calls(calls: Vec<(&str, Value)>) -> Turn {
        Turn {
            text: String::new(),
            calls: calls.into_iter().map(|(n, a)| (n.to_string(), a)).collect(),
        }
    }
}

/// What one request cost, and what it would have under perfect caching.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Logged {
    pub usage: UsageRecord,
    pub floor_read: u64,
    pub floor_write: u64,
}

struct State {
    script: VecDeque<Turn>,
    cache: CacheModel,
    memo: HashMap<u64, u64>,
    log: Vec<Logged>,
    calls: u64,
}

/// The benchmark's provider.
pub struct FakeModel {
    model: String,
    markers: bool,
    state: Mutex<State>,
}

/// Seconds the virtual clock moves per request (well inside the 5-minute TTL).
const SECONDS_PER_REQUEST: u64 = 12;

impl FakeModel {
    /// A model that plays `script` under `semantics`; `markers` says whether the client places
    /// cache markers (off for the naive client).
    pub fn new(model: &str, semantics: Semantics, markers: bool, script: Vec<Turn>) -> Self {
        FakeModel {
            model: model.to_string(),
            markers,
            state: Mutex::new(State {
                script: script.into(),
                cache: CacheModel::new(semantics),
                memo: HashMap::new(),
                log: Vec::new(),
                calls: 0,
            }),
        }
    }

    /// Every request's usage and floor so far.
    pub fn log(&self) -> Vec<Logged> {
        self.state.lock().map(|s| s.log.clone()).unwrap_or_default()
    }
}

fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

fn count(memo: &mut HashMap<u64, u64>, hash: u64, text: &str) -> u64 {
    *memo
        .entry(hash)
        .or_insert_with(|| crate::tokens::count(text))
}

/// The request as cache segments (tools, system blocks, messages) and where markers go.
pub fn segments(
    request: &ModelRequest,
    memo: &mut HashMap<u64, u64>,
    markers: bool,
) -> (Vec<Segment>, Vec<usize>) {
    let mut units = Vec::new();
    for tool in &request.tools {
        let text = serde_json::to_string(tool).unwrap_or_default();
        let h = hash_bytes(text.as_bytes());
        units.push((h, count(memo, h, &text)));
    }
    for block in &request.system {
        let h = hash_bytes(block.text.as_bytes());
        units.push((h, count(memo, h, &block.text)));
    }
    for message in &request.messages {
        let text = serde_json::to_string(message).unwrap_or_default();
        let h = hash_bytes(text.as_bytes());
        units.push((h, count(memo, h, &text)));
    }
    let mut at = Vec::new();
    if markers {
        let tools = request.tools.len();
        if tools > 0 {
            at.push(tools - 1);
        }
        if let Some(i) = request.system.iter().rposition(|b| b.stable) {
            at.push(tools + i);
        }
        if !request.messages.is_empty() {
            at.push(units.len() - 1);
        }
    }
    (chain(&units), at)
}

impl Provider for FakeModel {
    fn name(&self) -> &str {
        "bench"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn stream(&self, request: ModelRequest) -> ProviderStream {
        let mut events = Vec::new();
        if let Ok(mut state) = self.state.lock() {
            let state = &mut *state;
            let (segs, markers) = segments(&request, &mut state.memo, self.markers);
            state.cache.now += SECONDS_PER_REQUEST;
            let mut usage = state.cache.account(&segs, &markers);
            let (floor_read, floor_write) = state.cache.floor(&segs);
            let turn = state
                .script
                .pop_front()
                .unwrap_or_else(|| Turn::answer("done"));
            let mut output = turn.text.clone();
            if !turn.text.is_empty() {
                events.push(ProviderEvent::TextDelta(turn.text.clone()));
            }
            for (name, args) in &turn.calls {
                state.calls += 1;
                output.push_str(name);
                output.push_str(&args.to_string());
                events.push(ProviderEvent::ToolCall {
                    id: format!("call_{}", state.calls),
                    name: name.clone(),
                    args: args.clone(),
                });
            }
            let h = hash_bytes(output.as_bytes());
            usage.output = count(&mut state.memo, h, &output).max(1);
            state.log.push(Logged {
                usage,
                floor_read,
                floor_write,
            });
            events.push(ProviderEvent::Usage(usage));
            let stop = if turn.calls.is_empty() {
                StopReason::EndTurn
            } else {
                StopReason::ToolUse
            };
            events.push(ProviderEvent::Stop(stop));
        }
        Box::pin(stream::iter(events.into_iter().map(Ok)))
    }
}
