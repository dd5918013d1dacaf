//! OpenAI Chat Completions (`POST {base}/chat/completions`, streamed), and the family of
//! compatible services that speak it with small differences (one `Preset` each).
//!
//! Streaming always asks for usage (`stream_options.include_usage`), which arrives in a last
//! chunk with empty `choices`, after the `finish_reason` chunk and before `[DONE]`. Tool-call
//! deltas are accumulated per `index`; id and name come only in the first delta, some servers send
//! a whole call at once, and some omit or reuse the index, so a new id always starts a new call.
//! `prompt_tokens` includes cached tokens (and cache writes where reported): uncached is what is
//! left, never negative.

use serde_json::{Value, json};

use super::anthropic::parse_arguments;
use super::http::{Http, HttpRequest, SseEvent, StreamParser, json_at, json_str, set_field};
use super::listing::{ListRequest, ListShape};
use super::{Provider, ProviderError, ProviderEvent, ProviderStream, StopReason, UsageRecord};
use crate::conversation::{ContentBlock, MarkerPlaces, Message, ModelRequest, Role};

/// How one service differs from OpenAI's own Chat Completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    pub name: &'static str,
    /// Send `prompt_cache_key` (the session id).
    pub prompt_cache_key: bool,
    /// Send `x-grok-conv-id: <session id>` (xAI's cache routing).
    pub conversation_header: bool,
    /// Reasoning tokens are reported beside `completion_tokens`, not inside it (xAI).
    pub reasoning_outside_completion: bool,
    /// Put `cache_control` on content parts for models that need explicit markers (OpenRouter).
    pub cache_control_passthrough: bool,
    /// Extra headers (GitHub Models' API version).
    pub headers: &'static [(&'static str, &'static str)],
    /// Send `max_completion_tokens` instead of `max_tokens`.
    pub max_completion_tokens: bool,
}

impl Preset {
    /// OpenAI itself.
    pub const OPENAI: Preset = Preset {
        name: "openai",
        prompt_cache_key: true,
        conversation_header: false,
        reasoning_outside_completion: false,
        cache_control_passthrough: false,
        headers: &[],
        max_completion_tokens: true,
    };
    /// A plain compatible server.
    pub const fn compatible(name: &'static str) -> Preset {
        Preset {
            name,
            prompt_cache_key: false,
            conversation_header: false,
            reasoning_outside_completion: false,
            cache_control_passthrough: false,
            headers: &[],
            max_completion_tokens: false,
        }
    }
    pub const XAI: Preset = Preset {
        conversation_header: true,
        reasoning_outside_completion: true,
        ..Preset::compatible("xai")
    };
    pub const ZAI: Preset = Preset::compatible("zai");
    pub const MOONSHOT: Preset = Preset::compatible("moonshot");
    pub const OPENROUTER: Preset = Preset {
        cache_control_passthrough: true,
        ..Preset::compatible("openrouter")
    };
    pub const GITHUB_MODELS: Preset = Preset {
        headers: &[
            ("Accept", "application/vnd.github+json"),
            ("X-GitHub-Api-Version", "2022-11-28"),
        ],
        ..Preset::compatible("github-models")
    };
}

/// A Chat Completions client.
pub struct OpenAiChat {
    http: Http,
    preset: Preset,
    base_url: String,
    api_key: String,
    model: String,
    /// Ask for `24h` retention where the model offers it (`CHATCLI_PROMPT_CACHE_TTL`).
    extended_retention: bool,
}

impl OpenAiChat {
    /// A client for `preset` at `base_url` (which includes any `/v1`).
    pub fn new(
        http: Http,
        preset: Preset,
        base_url: String,
        api_key: String,
        model: String,
    ) -> Self {
        OpenAiChat {
            http,
            preset,
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key,
            model,
            extended_retention: true,
        }
    }

    /// Asks for OpenAI's `24h` retention (where the model offers it) unless `ttl` is `5m`.
    pub fn with_cache_ttl(mut self, ttl: crate::provider::anthropic::CacheTtl) -> Self {
        self.extended_retention =
            crate::provider::cache_policy::PausePolicy::new(ttl).extended_retention();
        self
    }
}

impl Provider for OpenAiChat {
    fn name(&self) -> &str {
        self.preset.name
    }

    fn accepts_images(&self) -> bool {
        true
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn model_list(&self) -> Option<ListRequest> {
        let mut headers = vec![(
            "Authorization".to_string(),
            format!("Bearer {}", self.api_key),
        )];
        for (name, value) in self.preset.headers {
            headers.push((name.to_string(), value.to_string()));
        }
        // GitHub Models lists its catalog beside the inference path, with each model's limits.
        let github_catalog = (self.preset.name == "github-models")
            .then(|| self.base_url.strip_suffix("/inference"))
            .flatten();
        let (url, shape) = match github_catalog {
            Some(root) => (format!("{root}/catalog/models"), ListShape::GithubCatalog),
            None => (format!("{}/models", self.base_url), ListShape::OpenAi),
        };
        Some(ListRequest {
            provider: self.preset.name.to_string(),
            url,
            headers,
            shape,
        })
    }

    fn cache_lifetime(&self) -> Option<u64> {
        (self.preset == Preset::OPENAI).then(|| {
            crate::provider::cache_policy::openai_lifetime(&self.model, self.extended_retention)
        })
    }

    fn stream(&self, request: ModelRequest) -> ProviderStream {
        let mut body = build_body(&request, &self.preset);
        if !self.extended_retention
            && let Some(map) = body.as_object_mut()
        {
            map.remove("prompt_cache_retention");
        }
        let mut headers = vec![(
            "Authorization".to_string(),
            format!("Bearer {}", self.api_key),
        )];
        for (name, value) in self.preset.headers {
            headers.push((name.to_string(), value.to_string()));
        }
        if self.preset.conversation_header {
            headers.push(("x-grok-conv-id".to_string(), request.session_id.clone()));
        }
        let request_text = body.to_string();
        self.http.stream_sse(
            HttpRequest {
                provider: self.preset.name.to_string(),
                url: format!("{}/chat/completions", self.base_url),
                headers,
                body,
            },
            ChatParser::new(self.preset, request_text),
        )
    }
}

/// Whether a model behind a router needs explicit cache markers (Anthropic and Gemini models).
fn needs_markers(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    m.starts_with("anthropic/")
        || m.contains("claude")
        || m.starts_with("google/")
        || m.contains("gemini")
}

/// The request body.
pub fn build_body(request: &ModelRequest, preset: &Preset) -> Value {
    let markers = preset.cache_control_passthrough && needs_markers(&request.model);
    let mut messages: Vec<Value> = system_message(request, markers).into_iter().collect();
    let mut places = MarkerPlaces::new(request);
    for (i, message) in request.messages.iter().enumerate() {
        match message.role {
            Role::Assistant => messages.push(assistant_message(message)),
            Role::User => push_user_messages(message, &mut messages),
        }
        // Only a message with content can carry the marker (an assistant turn that only calls
        // tools has none): the last such one at or before the settled end.
        if let Some(last) = messages.last()
            && (last["content"].is_string() || last["content"].is_array())
        {
            places.sent(i, messages.len() - 1);
        }
    }
    if markers {
        mark_for_cache(&mut messages, places.places());
    }
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    let limit_key = if preset.max_completion_tokens {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    set_field(&mut body, limit_key, json!(request.max_output_tokens));
    // OpenAI's own reasoning models take an effort; other servers may reject the key.
    if preset.max_completion_tokens
        && super::openai_responses::is_reasoning_model(&request.model)
        && let Some(effort) = request.effort
    {
        set_field(&mut body, "reasoning_effort", json!(effort.as_str()));
    }
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
            .collect();
        set_field(&mut body, "tools", Value::Array(tools));
    }
    if preset.prompt_cache_key {
        set_field(&mut body, "prompt_cache_key", json!(request.session_id));
    }
    // OpenAI's own models with extended retention keep the prefix through a pause (#39).
    if *preset == Preset::OPENAI
        && super::openai_responses::offers_extended_retention(&request.model)
    {
        set_field(&mut body, "prompt_cache_retention", json!("24h"));
    }
    body
}

/// The system blocks as one system message (none when they are empty), marked for the cache
/// when `markers`.
fn system_message(request: &ModelRequest, markers: bool) -> Option<Value> {
    let system: Vec<&str> = request
        .system
        .iter()
        .filter(|b| !b.text.is_empty())
        .map(|b| b.text.as_str())
        .collect();
    if system.is_empty() {
        return None;
    }
    let text = system.join("\n\n");
    Some(if markers {
        json!({"role": "system", "content": [
            {"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}
        ]})
    } else {
        json!({"role": "system", "content": text})
    })
}

/// An assistant message: its text (`null` when it only calls tools) and its tool calls.
fn assistant_message(message: &Message) -> Value {
    let text: String = message.text();
    let calls: Vec<Value> = message
        .tool_uses()
        .map(|(id, name, input)| {
            let arguments = match input {
                Value::String(raw) => raw.clone(),
                other => other.to_string(),
            };
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
        })
        .collect();
    let mut m = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { Value::String(text) }});
    if !calls.is_empty() {
        set_field(&mut m, "tool_calls", Value::Array(calls));
    }
    m
}

/// A user message on the wire: a `tool` message per result, then one user message with its
/// texts (a plain string when there is one).
fn push_user_messages(message: &Message, messages: &mut Vec<Value>) {
    let mut parts: Vec<Value> = Vec::new();
    for block in &message.content {
        match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => messages
                .push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": content})),
            ContentBlock::Text { text } if !text.is_empty() => {
                parts.push(json!({"type": "text", "text": text}));
            }
            ContentBlock::Image { media_type, data } => parts.push(json!({
                "type": "image_url",
                "image_url": {"url": format!("data:{media_type};base64,{data}")}
            })),
            _ => {}
        }
    }
    let content = match parts.as_slice() {
        [] => return,
        [one] if one["type"] == "text" => one["text"].clone(),
        _ => Value::Array(parts),
    };
    messages.push(json!({"role": "user", "content": content}));
}

/// The rolling marker: the last part of the last message the next request sends unchanged, so
/// the conversation is read next time; the bridge where the previous request's was, so that
/// write stays in reach. A plain-string content becomes one text part to carry it.
fn mark_for_cache(messages: &mut [Value], places: impl Iterator<Item = usize>) {
    for m in places {
        let Some(last) = messages.get_mut(m) else {
            continue;
        };
        if let Some(text) = last["content"].as_str().map(str::to_string) {
            last["content"] = json!([{"type": "text", "text": text}]);
        }
        if let Some(part) = last["content"]
            .as_array_mut()
            .and_then(|parts| parts.last_mut())
        {
            part["cache_control"] = json!({"type": "ephemeral"});
        }
    }
}

/// Usage from a Chat Completions `usage` object, for this preset.
pub fn usage_from_json(usage: &Value, preset: &Preset) -> UsageRecord {
    let get = |path: &str| usage.pointer(path).and_then(Value::as_u64);
    let prompt = get("/prompt_tokens").unwrap_or(0);
    let cached = get("/prompt_tokens_details/cached_tokens")
        .or_else(|| get("/cached_tokens"))
        .unwrap_or(0)
        .min(prompt);
    let written = get("/prompt_tokens_details/cache_write_tokens")
        .unwrap_or(0)
        .min(prompt - cached);
    let completion = get("/completion_tokens").unwrap_or(0);
    let reasoning = get("/completion_tokens_details/reasoning_tokens").unwrap_or(0);
    let output = if preset.reasoning_outside_completion {
        completion + reasoning
    } else {
        completion
    };
    UsageRecord {
        uncached_input: prompt - cached - written,
        cache_read: cached,
        cache_write_5m: written,
        cache_write_1h: 0,
        output,
        reasoning,
        estimated: false,
        reported_cost: usage.get("cost").and_then(Value::as_f64),
        cache_reported: true,
    }
}

struct PartialCall {
    index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
}

/// Parses the Chat Completions SSE stream.
pub struct ChatParser {
    preset: Preset,
    calls: Vec<PartialCall>,
    usage: Option<UsageRecord>,
    finish: Option<StopReason>,
    /// Everything generated, kept only to count it if the server reports no usage.
    output: String,
    /// The request as sent, likewise.
    request_text: String,
    done: bool,
}

impl ChatParser {
    /// A parser for one response; `request_text` is counted (o200k) only if the server reports
    /// no usage.
    pub fn new(preset: Preset, request_text: String) -> Self {
        ChatParser {
            preset,
            calls: Vec::new(),
            usage: None,
            finish: None,
            output: String::new(),
            request_text,
            done: false,
        }
    }

    fn call_for(&mut self, index: Option<u64>, id: Option<&str>) -> usize {
        let existing = self
            .calls
            .iter()
            .rposition(|c| index.is_none() || c.index == index);
        match (existing, id) {
            (Some(i), Some(id))
                if self
                    .calls
                    .get(i)
                    .is_some_and(|c| c.id.is_empty() || c.id == id) =>
            {
                i
            }
            (Some(i), None) => i,
            _ => {
                self.calls.push(PartialCall {
                    index,
                    id: id.unwrap_or_default().to_string(),
                    name: String::new(),
                    arguments: String::new(),
                });
                self.calls.len() - 1
            }
        }
    }

    fn end(&mut self) -> Vec<ProviderEvent> {
        self.done = true;
        let mut out = Vec::new();
        for (n, call) in self.calls.drain(..).enumerate() {
            let id = if call.id.is_empty() {
                format!("call_{n}")
            } else {
                call.id
            };
            out.push(ProviderEvent::ToolCall {
                id,
                name: call.name,
                args: parse_arguments(&call.arguments),
            });
        }
        // `unwrap_or_else`: counting loads the o200k encoder (0.24 s in a release build), which
        // a server that reports usage never needs.
        let usage = self.usage.unwrap_or_else(|| UsageRecord {
            uncached_input: crate::tokens::count(&self.request_text),
            output: crate::tokens::count(&self.output),
            estimated: true,
            ..UsageRecord::default()
        });
        out.push(ProviderEvent::Usage(usage));
        let has_calls = out
            .iter()
            .any(|e| matches!(e, ProviderEvent::ToolCall { .. }));
        let stop = match self.finish.clone() {
            Some(StopReason::EndTurn) | None if has_calls => StopReason::ToolUse,
            Some(reason) => reason,
            None => StopReason::EndTurn,
        };
        out.push(ProviderEvent::Stop(stop));
        out
    }
}

fn finish_reason(reason: &str) -> StopReason {
    match reason {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        "content_filter" => StopReason::Refusal,
        other => StopReason::Other(other.to_string()),
    }
}

impl StreamParser for ChatParser {
    fn feed(&mut self, event: &SseEvent) -> Result<Vec<ProviderEvent>, ProviderError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(if self.done { Vec::new() } else { self.end() });
        }
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| ProviderError::Protocol {
            provider: self.preset.name.to_string(),
            message: format!(
                "chunk is not JSON ({e}): {}",
                data.chars().take(120).collect::<String>()
            ),
        })?;
        if let Some(error) = chunk.get("error") {
            let message = error["message"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| error.to_string());
            return Err(ProviderError::Remote {
                provider: self.preset.name.to_string(),
                message,
                retryable: false,
            });
        }
        let mut out = Vec::new();
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(usage_from_json(usage, &self.preset));
        }
        for choice in json_at(&chunk, "/choices").as_array().into_iter().flatten() {
            let delta = &choice["delta"];
            for key in ["reasoning_content", "reasoning"] {
                if let Some(text) = delta[key].as_str().filter(|t| !t.is_empty()) {
                    out.push(ProviderEvent::ReasoningDelta(text.to_string()));
                }
            }
            for key in ["content", "refusal"] {
                if let Some(text) = delta[key].as_str().filter(|t| !t.is_empty()) {
                    self.output.push_str(text);
                    out.push(ProviderEvent::TextDelta(text.to_string()));
                }
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = call["index"].as_u64();
                let id = call["id"].as_str().filter(|s| !s.is_empty());
                let slot = self.call_for(index, id);
                // `call_for` gives an existing slot or the one it just pushed.
                let Some(entry) = self.calls.get_mut(slot) else {
                    continue;
                };
                if let Some(name) = json_str(call, "/function/name").filter(|s| !s.is_empty()) {
                    entry.name = name.to_string();
                    out.push(ProviderEvent::ToolCallStarted {
                        index: slot,
                        id: entry.id.clone(),
                        name: name.to_string(),
                    });
                }
                if let Some(fragment) =
                    json_str(call, "/function/arguments").filter(|s| !s.is_empty())
                {
                    self.output.push_str(fragment);
                    entry.arguments.push_str(fragment);
                    out.push(ProviderEvent::ToolCallArgs {
                        index: slot,
                        fragment: fragment.to_string(),
                    });
                }
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                self.finish = Some(finish_reason(reason));
            }
        }
        Ok(out)
    }

    fn finish(&mut self) -> Result<Vec<ProviderEvent>, ProviderError> {
        if self.done {
            return Ok(Vec::new());
        }
        // Some servers close without `[DONE]`; a finish_reason is proof the answer is whole.
        if self.finish.is_some() {
            return Ok(self.end());
        }
        Err(ProviderError::Truncated {
            provider: self.preset.name.to_string(),
        })
    }
}
