//! Anthropic Messages (`POST /v1/messages`, streamed), also used for Anthropic-compatible APIs
//! (MiniMax).
//!
//! Request: system as a list of text blocks, native tools, thinking blocks sent back unchanged
//! with their signature, and at most 4 `cache_control` markers (last tool, end of the stable
//! system prefix, the last message the next request sends unchanged, and a bridge where the
//! previous request's rolling marker was). Response: SSE whose usage comes first in
//! `message_start` and is then overwritten field by field by `message_delta` (cumulative; it can
//! change input and cache counts). `input_tokens` excludes both cache counts. With server-side
//! compaction the usage carries `iterations`, each billed: their sum is the response's usage.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use super::cache_policy::{Lifetime, PausePolicy};
use super::http::{Http, HttpRequest, SseEvent, StreamParser, json_at, json_str, set_field};
use super::listing::{ListRequest, ListShape};
use super::{Provider, ProviderError, ProviderEvent, ProviderStream, StopReason, UsageRecord};
use crate::conversation::{ContentBlock, Effort, MarkerPlaces, Message, ModelRequest, Role};

/// How long cache entries written by the markers live (`CHATCLI_PROMPT_CACHE_TTL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheTtl {
    /// Pause-aware: 5 minutes until the session has been idle past them, then 1 hour; OpenAI's
    /// `24h` where offered (`cache_policy`).
    #[default]
    Auto,
    /// Anthropic 5 minutes; OpenAI in memory.
    FiveMinutes,
    /// Anthropic 1 hour; OpenAI `24h` where offered.
    OneHour,
}

impl CacheTtl {
    /// The value `CHATCLI_PROMPT_CACHE_TTL` takes for it.
    pub fn name(self) -> &'static str {
        match self {
            CacheTtl::Auto => "auto",
            CacheTtl::FiveMinutes => "5m",
            CacheTtl::OneHour => "1h",
        }
    }

    /// Parses `auto`, `5m` (or `in_memory`) and `1h` (or `24h`).
    pub fn parse(value: &str) -> Option<CacheTtl> {
        match value.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(CacheTtl::Auto),
            "5m" | "in_memory" | "in-memory" => Some(CacheTtl::FiveMinutes),
            "1h" | "24h" => Some(CacheTtl::OneHour),
            _ => None,
        }
    }
}

/// An Anthropic Messages client.
pub struct Anthropic {
    http: Http,
    name: &'static str,
    base_url: String,
    api_key: String,
    model: String,
    /// The lifetime each request's markers ask for (`cache_policy`).
    policy: std::sync::Mutex<PausePolicy>,
    warned_minimum: Arc<AtomicBool>,
}

impl Anthropic {
    /// A client for `name` (`anthropic` or an Anthropic-compatible preset) at `base_url`.
    pub fn new(
        http: Http,
        name: &'static str,
        base_url: String,
        api_key: String,
        model: String,
        ttl: CacheTtl,
    ) -> Self {
        Anthropic {
            http,
            name,
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key,
            model,
            policy: std::sync::Mutex::new(PausePolicy::new(ttl)),
            warned_minimum: Arc::new(AtomicBool::new(false)),
        }
    }
}

impl Provider for Anthropic {
    fn name(&self) -> &str {
        self.name
    }

    fn accepts_images(&self) -> bool {
        true
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn model_list(&self) -> Option<ListRequest> {
        Some(ListRequest {
            provider: self.name.to_string(),
            url: format!("{}/v1/models", self.base_url),
            headers: vec![
                ("x-api-key".to_string(), self.api_key.clone()),
                ("anthropic-version".to_string(), "2023-06-01".to_string()),
            ],
            shape: ListShape::Anthropic,
        })
    }

    fn stream(&self, request: ModelRequest) -> ProviderStream {
        let lifetime = self
            .policy
            .lock()
            .map(|mut p| p.lifetime(crate::clock::now_secs()))
            .unwrap_or(Lifetime::Short);
        self.send(request, lifetime)
    }

    fn cache_lifetime(&self) -> Option<u64> {
        if !self.http.prompt_cache {
            return None;
        }
        let policy = self.policy.lock().ok()?;
        policy.last_lifetime().map(Lifetime::anthropic_secs)
    }

    /// `auto` asks for 1 hour after any pause past 2 minutes, and a lapse takes 5.
    fn lapse_lifetime(&self) -> Option<u64> {
        if !self.http.prompt_cache {
            return None;
        }
        let policy = self.policy.lock().ok()?;
        policy.after_lapse().map(Lifetime::anthropic_secs)
    }

    fn keep_warm(&self, request: ModelRequest) -> ProviderStream {
        let lifetime = self
            .policy
            .lock()
            .ok()
            .and_then(|p| p.last_lifetime())
            .unwrap_or(Lifetime::Short);
        self.send(request, lifetime)
    }
}

impl Anthropic {
    /// Sends `request` with markers of `lifetime`.
    fn send(&self, request: ModelRequest, lifetime: Lifetime) -> ProviderStream {
        let ttl = match lifetime {
            Lifetime::Short => CacheTtl::FiveMinutes,
            Lifetime::Long => CacheTtl::OneHour,
        };
        let body = build_body(&request, ttl);
        let prefix = crate::tokens::rough(
            body.get("tools").map(|t| t.to_string().len()).unwrap_or(0)
                + body.get("system").map(|s| s.to_string().len()).unwrap_or(0),
        );
        let mut headers = vec![
            ("x-api-key".to_string(), self.api_key.clone()),
            ("anthropic-version".to_string(), "2023-06-01".to_string()),
        ];
        if ttl == CacheTtl::OneHour {
            headers.push((
                "anthropic-beta".to_string(),
                "extended-cache-ttl-2025-04-11".to_string(),
            ));
        }
        let parser = AnthropicParser::new(self.name).with_minimum_check(
            &self.model,
            prefix,
            Arc::clone(&self.warned_minimum),
        );
        self.http.stream_sse(
            HttpRequest {
                provider: self.name.to_string(),
                url: format!("{}/v1/messages", self.base_url),
                headers,
                body,
            },
            parser,
        )
    }
}

/// The smallest prefix Anthropic caches for a model, in tokens.
pub fn cache_minimum(model: &str) -> u64 {
    let m = model.to_ascii_lowercase();
    if m.contains("haiku-3") || m.contains("3-haiku") || m.contains("3-5-haiku") {
        2048
    } else if m.contains("haiku-4") || is_opus_45_or_later(&m) {
        4096
    } else {
        1024
    }
}

fn is_opus_45_or_later(model: &str) -> bool {
    let Some(rest) = model.split("opus-").nth(1) else {
        return false;
    };
    let mut parts = rest.split(['-', '.']);
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor: u32 = parts
        .next()
        .filter(|p| p.len() <= 2)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    major > 4 || (major == 4 && minor >= 5)
}

fn cache_control(ttl: CacheTtl) -> Value {
    match ttl {
        CacheTtl::Auto | CacheTtl::FiveMinutes => json!({"type": "ephemeral"}),
        CacheTtl::OneHour => json!({"type": "ephemeral", "ttl": "1h"}),
    }
}

/// The request body, with cache markers placed.
pub fn build_body(request: &ModelRequest, ttl: CacheTtl) -> Value {
    let marker = cache_control(ttl);
    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(
            |t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}),
        )
        .collect();
    if let Some(last) = tools.last_mut() {
        last["cache_control"] = marker.clone();
    }
    let blocks: Vec<_> = request
        .system
        .iter()
        .filter(|b| !b.text.is_empty())
        .collect();
    let mut system: Vec<Value> = blocks
        .iter()
        .map(|b| json!({"type": "text", "text": b.text}))
        .collect();
    let last_stable = blocks.iter().rposition(|b| b.stable);
    if let Some(block) = last_stable.and_then(|i| system.get_mut(i)) {
        block["cache_control"] = marker.clone();
    }
    // The rolling marker goes on the last message the next request sends again unchanged: a
    // result about to be compacted is never written to the cache (it would never be read).
    // The bridge (the fourth marker) goes where the last request's rolling marker was, so that
    // write is found however many blocks the last turn added.
    let mut places = MarkerPlaces::new(request);
    let mut messages: Vec<Value> = Vec::new();
    for (i, message) in request.messages.iter().enumerate() {
        if let Some(json) = message_json(message) {
            messages.push(json);
            places.sent(i, messages.len() - 1);
        }
    }
    for m in places.places() {
        if let Some(block) = messages
            .get_mut(m)
            .and_then(|m| m["content"].as_array_mut())
            .and_then(|c| c.last_mut())
        {
            block["cache_control"] = marker.clone();
        }
    }
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_output_tokens,
        "stream": true,
        "messages": messages,
    });
    if !system.is_empty() {
        set_field(&mut body, "system", Value::Array(system));
    }
    if !tools.is_empty() {
        set_field(&mut body, "tools", Value::Array(tools));
    }
    if let Some(budget) = thinking_budget(&request.model, request.effort) {
        set_field(
            &mut body,
            "thinking",
            json!({"type": "enabled", "budget_tokens": budget}),
        );
        // The budget is part of `max_tokens`: leave room for the answer after the thinking.
        let max = request.max_output_tokens.max(budget + THINKING_ANSWER_ROOM);
        set_field(&mut body, "max_tokens", json!(max));
    }
    body
}

/// Output tokens kept for the answer above a thinking budget.
pub const THINKING_ANSWER_ROOM: u32 = 4_096;

/// Anthropic's reasoning setting for an effort: extended thinking with a token budget. `low`
/// keeps thinking off (mechanical work, the cheapest), as does no effort (the provider's
/// default) and a model without extended thinking (before Claude 3.7, or not a Claude model, as
/// on a local server speaking this wire).
pub fn thinking_budget(model: &str, effort: Option<Effort>) -> Option<u32> {
    let budget = match effort? {
        Effort::Low => return None,
        Effort::Medium => 2_048,
        Effort::High => 8_192,
    };
    let model = model.to_ascii_lowercase();
    let before_thinking = ["claude-2", "claude-instant", "claude-3-5", "claude-3-opus"]
        .iter()
        .chain(&["claude-3-sonnet", "claude-3-haiku"])
        .any(|old| model.contains(old));
    (model.contains("claude") && !before_thinking).then_some(budget)
}

fn message_json(message: &Message) -> Option<Value> {
    let content: Vec<Value> = message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } if text.is_empty() => None,
            ContentBlock::Text { text } => Some(json!({"type": "text", "text": text})),
            ContentBlock::Thinking {
                text,
                signature: Some(signature),
                ..
            } => Some(json!({"type": "thinking", "thinking": text, "signature": signature})),
            ContentBlock::Thinking { .. } => None,
            ContentBlock::Image { media_type, data } => Some(json!({
                "type": "image",
                "source": {"type": "base64", "media_type": media_type, "data": data}
            })),
            ContentBlock::ToolUse { id, name, input } => {
                let input = if input.is_object() {
                    input.clone()
                } else {
                    json!({})
                };
                Some(json!({"type": "tool_use", "id": id, "name": name, "input": input}))
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": tool_use_id, "content": content});
                if *is_error {
                    set_field(&mut block, "is_error", Value::Bool(true));
                }
                Some(block)
            }
        })
        .collect();
    let content = images_into_results(content);
    if content.is_empty() {
        return None;
    }
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    Some(json!({"role": role, "content": content}))
}

/// An image right after a `tool_result` (`read_file` of a picture) goes inside it: Anthropic's
/// `tool_result` content may hold image blocks, so the model reads it as the tool's output.
fn images_into_results(blocks: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(blocks.len());
    for block in blocks {
        let kind = |v: &Value| v.get("type").and_then(Value::as_str).map(str::to_string);
        let result = out.last_mut().filter(|last| {
            kind(&block).as_deref() == Some("image") && kind(last).as_deref() == Some("tool_result")
        });
        match result {
            Some(result) => {
                if let Some(content) = result.get_mut("content") {
                    if let Some(text) = content.as_str().map(str::to_string) {
                        *content = json!([{"type": "text", "text": text}]);
                    }
                    if let Some(parts) = content.as_array_mut() {
                        parts.push(block);
                    }
                }
            }
            None => out.push(block),
        }
    }
    out
}

/// Anthropic's usage counters as they stand.
#[derive(Debug, Default, Clone, Copy)]
struct RawUsage {
    input: u64,
    cache_read: u64,
    cache_creation: u64,
    ephemeral_1h: u64,
    output: u64,
    thinking: u64,
}

impl RawUsage {
    /// Overwrites every counter `usage` carries; a sum of `iterations` when it has them.
    fn merge(&mut self, usage: &Value) {
        if let Some(iterations) = usage.get("iterations").and_then(Value::as_array)
            && !iterations.is_empty()
        {
            let mut sum = RawUsage::default();
            for it in iterations {
                let mut one = RawUsage::default();
                one.merge_fields(it);
                sum.input += one.input;
                sum.cache_read += one.cache_read;
                sum.cache_creation += one.cache_creation;
                sum.ephemeral_1h += one.ephemeral_1h;
                sum.output += one.output;
                sum.thinking += one.thinking;
            }
            *self = sum;
            return;
        }
        self.merge_fields(usage);
    }

    fn merge_fields(&mut self, usage: &Value) {
        let get = |path: &str| usage.pointer(path).and_then(Value::as_u64);
        if let Some(v) = get("/input_tokens") {
            self.input = v;
        }
        if let Some(v) = get("/cache_read_input_tokens") {
            self.cache_read = v;
        }
        if let Some(v) = get("/cache_creation_input_tokens") {
            self.cache_creation = v;
        }
        if let Some(v) = get("/cache_creation/ephemeral_1h_input_tokens") {
            self.ephemeral_1h = v;
        }
        if let Some(v) = get("/output_tokens") {
            self.output = v;
        }
        if let Some(v) = get("/output_tokens_details/thinking_tokens") {
            self.thinking = v;
        }
    }

    fn record(&self) -> UsageRecord {
        let one_hour = self.ephemeral_1h.min(self.cache_creation);
        UsageRecord {
            uncached_input: self.input,
            cache_read: self.cache_read,
            cache_write_5m: self.cache_creation - one_hour,
            cache_write_1h: one_hour,
            output: self.output,
            reasoning: self.thinking,
            estimated: false,
            reported_cost: None,
            cache_reported: true,
        }
    }
}

/// Usage of a non-streamed Messages response body (or of one `usage` object).
pub fn usage_from_json(usage: &Value) -> UsageRecord {
    let mut raw = RawUsage::default();
    raw.merge(usage);
    raw.record()
}

enum Block {
    Text,
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    Thinking {
        text: String,
        signature: Option<String>,
    },
    Other,
}

/// Parses the Messages SSE stream.
pub struct AnthropicParser {
    provider: String,
    blocks: HashMap<u64, Block>,
    usage: RawUsage,
    stop: Option<StopReason>,
    ended: bool,
    minimum: Option<(String, u64, Arc<AtomicBool>)>,
}

impl AnthropicParser {
    /// A parser for one response of `provider`.
    pub fn new(provider: &str) -> Self {
        AnthropicParser {
            provider: provider.to_string(),
            blocks: HashMap::new(),
            usage: RawUsage::default(),
            stop: None,
            ended: false,
            minimum: None,
        }
    }

    /// Warn once (through `warned`) when nothing was cached because the prefix is too short.
    pub fn with_minimum_check(
        mut self,
        model: &str,
        prefix_tokens: u64,
        warned: Arc<AtomicBool>,
    ) -> Self {
        self.minimum = Some((model.to_string(), prefix_tokens, warned));
        self
    }

    fn protocol(&self, message: String) -> ProviderError {
        ProviderError::Protocol {
            provider: self.provider.clone(),
            message,
        }
    }
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" | "stop_sequence" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "refusal" => StopReason::Refusal,
        "model_context_window_exceeded" => StopReason::ContextExceeded,
        other => StopReason::Other(other.to_string()),
    }
}

/// Parses tool arguments that arrived whole; an empty string means `{}`.
pub fn parse_arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return json!({});
    }
    // Arguments that are not JSON stay a string: the agent answers the call with an error.
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// One method per event of the stream, each adding what it yields to `out`.
impl AnthropicParser {
    /// A content block opens: text may come with it, a tool call is announced.
    fn block_start(&mut self, data: &Value, index: u64, out: &mut Vec<ProviderEvent>) {
        let block = json_at(data, "/content_block");
        let entry = match block["type"].as_str().unwrap_or_default() {
            "text" => {
                if let Some(text) = block["text"].as_str().filter(|t| !t.is_empty()) {
                    out.push(ProviderEvent::TextDelta(text.to_string()));
                }
                Block::Text
            }
            "tool_use" => {
                let id = block["id"].as_str().unwrap_or_default().to_string();
                let name = block["name"].as_str().unwrap_or_default().to_string();
                out.push(ProviderEvent::ToolCallStarted {
                    index: index as usize,
                    id: id.clone(),
                    name: name.clone(),
                });
                Block::ToolUse {
                    id,
                    name,
                    json: String::new(),
                }
            }
            "thinking" => Block::Thinking {
                text: block["thinking"].as_str().unwrap_or_default().to_string(),
                signature: block["signature"].as_str().map(str::to_string),
            },
            _ => Block::Other,
        };
        self.blocks.insert(index, entry);
    }

    /// More of an open block: text, a call's arguments, thinking or its signature.
    fn block_delta(&mut self, data: &Value, index: u64, out: &mut Vec<ProviderEvent>) {
        let delta = json_at(data, "/delta");
        match (
            delta["type"].as_str().unwrap_or_default(),
            self.blocks.get_mut(&index),
        ) {
            ("text_delta", _) => {
                if let Some(text) = delta["text"].as_str() {
                    out.push(ProviderEvent::TextDelta(text.to_string()));
                }
            }
            ("input_json_delta", Some(Block::ToolUse { json, .. })) => {
                let fragment = delta["partial_json"].as_str().unwrap_or_default();
                json.push_str(fragment);
                out.push(ProviderEvent::ToolCallArgs {
                    index: index as usize,
                    fragment: fragment.to_string(),
                });
            }
            ("thinking_delta", Some(Block::Thinking { text, .. })) => {
                let piece = delta["thinking"].as_str().unwrap_or_default();
                text.push_str(piece);
                out.push(ProviderEvent::ReasoningDelta(piece.to_string()));
            }
            ("signature_delta", Some(Block::Thinking { signature, .. })) => {
                *signature = delta["signature"].as_str().map(str::to_string);
            }
            _ => {}
        }
    }

    /// A block closes: a tool call is complete, a thinking block whole.
    fn block_stop(&mut self, index: u64, out: &mut Vec<ProviderEvent>) {
        match self.blocks.remove(&index) {
            Some(Block::ToolUse { id, name, json }) => out.push(ProviderEvent::ToolCall {
                id,
                name,
                args: parse_arguments(&json),
            }),
            Some(Block::Thinking { text, signature }) => {
                out.push(ProviderEvent::ReasoningBlock { text, signature })
            }
            _ => {}
        }
    }

    /// The message ends: its usage (with the one cache-minimum notice), then its stop reason.
    fn message_stop(&mut self, out: &mut Vec<ProviderEvent>) {
        self.ended = true;
        let usage = self.usage.record();
        if let Some((model, prefix, warned)) = &self.minimum {
            let minimum = cache_minimum(model);
            if usage.cache_read == 0
                && usage.cache_write() == 0
                && *prefix < minimum
                && !warned.swap(true, Ordering::Relaxed)
            {
                out.push(ProviderEvent::Notice(format!(
                    "prefix below the cache minimum for {model} (~{prefix} of {minimum} tokens): nothing is cached until the conversation grows"
                )));
            }
        }
        out.push(ProviderEvent::Usage(usage));
        out.push(ProviderEvent::Stop(
            self.stop.clone().unwrap_or(StopReason::EndTurn),
        ));
    }

    /// An `error` event: retryable when the server is overloaded or limiting.
    fn remote_error(&self, data: &Value) -> ProviderError {
        let kind = json_str(data, "/error/type").unwrap_or("error");
        let message = json_str(data, "/error/message").unwrap_or(kind).to_string();
        ProviderError::Remote {
            provider: self.provider.clone(),
            message: format!("{kind}: {message}"),
            retryable: matches!(kind, "overloaded_error" | "api_error" | "rate_limit_error"),
        }
    }
}

impl StreamParser for AnthropicParser {
    fn feed(&mut self, event: &SseEvent) -> Result<Vec<ProviderEvent>, ProviderError> {
        let data: Value = serde_json::from_str(&event.data).map_err(|e| {
            self.protocol(format!(
                "event is not JSON ({e}): {}",
                event.data.chars().take(120).collect::<String>()
            ))
        })?;
        let kind = json_str(&data, "/type").unwrap_or(event.event.as_str());
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        let mut out = Vec::new();
        match kind {
            "message_start" => {
                self.usage.merge(json_at(&data, "/message/usage"));
                out.push(ProviderEvent::PartialUsage(self.usage.record()));
            }
            "content_block_start" => self.block_start(&data, index, &mut out),
            "content_block_delta" => self.block_delta(&data, index, &mut out),
            "content_block_stop" => self.block_stop(index, &mut out),
            "message_delta" => {
                if let Some(reason) = json_str(&data, "/delta/stop_reason") {
                    self.stop = Some(stop_reason(reason));
                }
                if let Some(usage) = data.get("usage").filter(|u| u.is_object()) {
                    self.usage.merge(usage);
                }
            }
            "message_stop" => self.message_stop(&mut out),
            "error" => return Err(self.remote_error(&data)),
            _ => {}
        }
        Ok(out)
    }

    fn finish(&mut self) -> Result<Vec<ProviderEvent>, ProviderError> {
        if self.ended {
            Ok(Vec::new())
        } else {
            Err(ProviderError::Truncated {
                provider: self.provider.clone(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_specialists_effort_is_a_thinking_budget_on_claude_models_that_think() {
        let mut request = ModelRequest {
            model: "claude-sonnet-4-5".into(),
            system: Vec::new(),
            tools: Vec::new(),
            messages: crate::conversation::shared([Message::user_text("hi")]),
            max_output_tokens: 8_192,
            session_id: "s".into(),
            effort: Some(Effort::High),
            settled_messages: None,
            bridge_message: None,
        };
        let body = build_body(&request, CacheTtl::FiveMinutes);
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 8_192})
        );
        assert_eq!(body["max_tokens"], json!(8_192 + 4_096));
        request.effort = Some(Effort::Medium);
        let body = build_body(&request, CacheTtl::FiveMinutes);
        assert_eq!(body["thinking"]["budget_tokens"], json!(2_048));
        assert_eq!(body["max_tokens"], json!(8_192));
        // Low effort, no effort, an older Claude or a local model: no thinking at all.
        for (model, effort) in [
            ("claude-sonnet-4-5", Some(Effort::Low)),
            ("claude-sonnet-4-5", None),
            ("claude-3-5-haiku-latest", Some(Effort::High)),
            ("qwen2.5-coder", Some(Effort::High)),
        ] {
            request.model = model.into();
            request.effort = effort;
            let body = build_body(&request, CacheTtl::FiveMinutes);
            assert!(body.get("thinking").is_none(), "{model} {effort:?}");
            assert_eq!(body["max_tokens"], json!(8_192));
        }
    }

    #[test]
    fn cache_minimums_by_model() {
        assert_eq!(cache_minimum("claude-sonnet-4-5-20250929"), 1024);
        assert_eq!(cache_minimum("claude-opus-4-5"), 4096);
        assert_eq!(cache_minimum("claude-opus-4-1"), 1024);
        assert_eq!(cache_minimum("claude-haiku-4-5"), 4096);
        assert_eq!(cache_minimum("claude-3-5-haiku-latest"), 2048);
    }

    #[test]
    fn arguments_parse_with_empty_meaning_an_empty_object() {
        assert_eq!(parse_arguments(""), json!({}));
        assert_eq!(parse_arguments("{\"a\":1}"), json!({"a": 1}));
        assert_eq!(parse_arguments("{\"a\":"), Value::String("{\"a\":".into()));
    }
}
