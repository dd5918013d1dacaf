//! A scripted in-process provider: answers each request with the next scripted response (the
//! last one repeats when the script runs out) and keeps every request it was sent.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chatcli::conversation::{ContentBlock, Message, ModelRequest, Role};
use chatcli::provider::{Provider, ProviderEvent, ProviderStream, StopReason, UsageRecord};
use futures_util::stream;
use serde_json::Value;

/// One scripted response.
pub type Script = Vec<ProviderEvent>;

/// A response with optional text and the given tool calls.
pub fn respond(text: &str, calls: &[(&str, &str, Value)]) -> Script {
    respond_with(
        text,
        calls,
        UsageRecord {
            uncached_input: 100,
            output: 10,
            ..UsageRecord::default()
        },
    )
}

/// A response with optional text, the given tool calls and this usage.
pub fn respond_with(text: &str, calls: &[(&str, &str, Value)], usage: UsageRecord) -> Script {
    let mut events = Vec::new();
    if !text.is_empty() {
        for piece in text.split_inclusive(' ') {
            events.push(ProviderEvent::TextDelta(piece.to_string()));
        }
    }
    for (id, name, args) in calls {
        events.push(ProviderEvent::ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            args: args.clone(),
        });
    }
    events.push(ProviderEvent::Usage(usage));
    let stop = if calls.is_empty() {
        StopReason::EndTurn
    } else {
        StopReason::ToolUse
    };
    events.push(ProviderEvent::Stop(stop));
    events
}

/// The scripted provider.
pub struct Scripted {
    script: Mutex<VecDeque<Script>>,
    last: Mutex<Option<Script>>,
    pub requests: Arc<Mutex<Vec<ModelRequest>>>,
    delay: Duration,
    /// The cache lifetime it names (`Provider::cache_lifetime`), if any.
    cache_lifetime: Option<u64>,
    /// The lifetime a lapse's rewrite would ask for (`Provider::lapse_lifetime`), if named.
    lapse_lifetime: Option<u64>,
    /// Keep-warm pings, kept apart from the requests; each is answered by a cache read.
    pub pings: Arc<Mutex<Vec<ModelRequest>>>,
}

impl Scripted {
    /// A provider that plays `script`, pausing `delay` between events.
    pub fn new(script: Vec<Script>, delay: Duration) -> Arc<Self> {
        Self::caching(script, delay, None)
    }

    /// `new`, for a provider whose cache entries live `cache_lifetime` seconds.
    pub fn caching(script: Vec<Script>, delay: Duration, cache_lifetime: Option<u64>) -> Arc<Self> {
        Arc::new(Self::build(script, delay, (cache_lifetime, None)))
    }

    /// `caching`, for a provider that writes its entries again for `lapse` seconds after they
    /// lapse (Anthropic's `auto`: 5-minute entries, an hour after a pause).
    pub fn lapsing(script: Vec<Script>, delay: Duration, lifetime: u64, lapse: u64) -> Arc<Self> {
        Arc::new(Self::build(script, delay, (Some(lifetime), Some(lapse))))
    }

    fn build(
        script: Vec<Script>,
        delay: Duration,
        (cache_lifetime, lapse_lifetime): (Option<u64>, Option<u64>),
    ) -> Self {
        Scripted {
            script: Mutex::new(script.into()),
            last: Mutex::new(None),
            requests: Arc::new(Mutex::new(Vec::new())),
            delay,
            cache_lifetime,
            lapse_lifetime,
            pings: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Every keep-warm ping so far.
    pub fn pings(&self) -> Vec<ModelRequest> {
        self.pings.lock().expect("lock").clone()
    }

    /// Appends responses to the script.
    pub fn script_more(&self, more: Vec<Script>) {
        self.script.lock().expect("lock").extend(more);
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().expect("lock").clone()
    }
}

impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    fn model(&self) -> &str {
        "scripted-model"
    }

    fn cache_lifetime(&self) -> Option<u64> {
        self.cache_lifetime
    }

    fn lapse_lifetime(&self) -> Option<u64> {
        self.lapse_lifetime
    }

    fn keep_warm(&self, request: ModelRequest) -> ProviderStream {
        self.pings.lock().expect("lock").push(request);
        let usage = UsageRecord {
            cache_read: 1_000,
            output: 1,
            ..UsageRecord::default()
        };
        let events = vec![
            ProviderEvent::Usage(usage),
            ProviderEvent::Stop(StopReason::MaxTokens),
        ];
        Box::pin(stream::iter(events.into_iter().map(Ok)))
    }

    fn stream(&self, request: ModelRequest) -> ProviderStream {
        assert_valid_history(&request.messages);
        self.requests.lock().expect("lock").push(request);
        let next = self.script.lock().expect("lock").pop_front();
        let events = match next {
            Some(events) => {
                *self.last.lock().expect("lock") = Some(events.clone());
                events
            }
            None => self
                .last
                .lock()
                .expect("lock")
                .clone()
                .unwrap_or_else(|| respond("(script ended)", &[])),
        };
        let delay = self.delay;
        Box::pin(stream::unfold(
            events.into_iter(),
            move |mut it| async move {
                let next = it.next()?;
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                Some((Ok(next), it))
            },
        ))
    }
}

/// Every tool call in an assistant message is answered, in order, by the next user message,
/// roles alternate, and the history ends on a user message.
pub fn assert_valid_history(messages: &[Arc<Message>]) {
    for (i, message) in messages.iter().enumerate() {
        if i > 0 {
            assert_ne!(
                messages[i - 1].role,
                message.role,
                "roles alternate at {i}: {messages:#?}"
            );
        }
        if message.role == Role::Assistant {
            let calls: Vec<&str> = message.tool_uses().map(|(id, _, _)| id).collect();
            if calls.is_empty() {
                continue;
            }
            let next = messages
                .get(i + 1)
                .unwrap_or_else(|| panic!("tool calls at {i} have no answer"));
            let answered: Vec<&str> = next
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(calls, answered, "every call answered in order at {i}");
        }
    }
    assert_eq!(
        messages.last().map(|m| m.role),
        Some(Role::User),
        "a request ends on a user message"
    );
}

/// How `ByContent` answers one request: the response, and whether it first waits at the latch.
pub struct Answer {
    pub script: Script,
    /// Wait at the provider's latch before streaming (proves that requests overlap: the latch
    /// opens only when every party is waiting at it, so requests made one after another hang).
    pub latch: bool,
    /// Never answer (until the request is cancelled).
    pub hang: bool,
}

impl Answer {
    /// Answers at once with `script`.
    pub fn now(script: Script) -> Answer {
        Answer {
            script,
            latch: false,
            hang: false,
        }
    }

    /// Answers with `script` once every party waits at the latch.
    pub fn at_latch(script: Script) -> Answer {
        Answer {
            script,
            latch: true,
            hang: false,
        }
    }

    /// Never answers.
    pub fn hang() -> Answer {
        Answer {
            script: Vec::new(),
            latch: false,
            hang: true,
        }
    }
}

type Rule = dyn Fn(&ModelRequest) -> Answer + Send + Sync;

/// A provider that answers each request by what it contains, keeping every request.
pub struct ByContent {
    rule: Box<Rule>,
    latch: Arc<tokio::sync::Barrier>,
    pub requests: Arc<Mutex<Vec<ModelRequest>>>,
}

impl ByContent {
    /// A provider answering by `rule`; its latch opens when `parties` requests wait at it.
    pub fn new(
        parties: usize,
        rule: impl Fn(&ModelRequest) -> Answer + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(ByContent {
            rule: Box::new(rule),
            latch: Arc::new(tokio::sync::Barrier::new(parties.max(1))),
            requests: Arc::new(Mutex::new(Vec::new())),
        })
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().expect("lock").clone()
    }
}

impl Provider for ByContent {
    fn name(&self) -> &str {
        "scripted"
    }

    fn model(&self) -> &str {
        "scripted-model"
    }

    fn stream(&self, request: ModelRequest) -> ProviderStream {
        assert_valid_history(&request.messages);
        let answer = (self.rule)(&request);
        self.requests.lock().expect("lock").push(request);
        if answer.hang {
            return Box::pin(stream::pending());
        }
        let latch = answer.latch.then(|| Arc::clone(&self.latch));
        Box::pin(stream::unfold(
            (latch, answer.script.into_iter()),
            |(latch, mut it)| async move {
                if let Some(latch) = latch {
                    latch.wait().await;
                }
                let next = it.next()?;
                Some((Ok(next), (None, it)))
            },
        ))
    }
}

/// The system prompt of a request, as one text.
pub fn system_text(request: &ModelRequest) -> String {
    request
        .system
        .iter()
        .map(|b| b.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Whether the request carries a tool result yet (the model already called a tool).
pub fn has_tool_result(request: &ModelRequest) -> bool {
    request.messages.iter().any(|m| {
        m.content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolResult { .. }))
    })
}

/// Every tool result's text in the request, in order.
pub fn tool_results(request: &ModelRequest) -> Vec<String> {
    request
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            ContentBlock::ToolResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect()
}
