//! Google Gemini (`POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse`).
//!
//! Each SSE `data:` is a whole `GenerateContentResponse` chunk (no event names, no `[DONE]`). A
//! function call usually arrives whole in one part; Vertex can stream it as `partialArgs`
//! (JSON-path pieces), finished by an empty `functionCall`. `finishReason` is `STOP` even when
//! the model called a function, so tool use is read from the parts. `usageMetadata` repeats,
//! cumulative, in every chunk: keep the last, never sum. `promptTokenCount` includes
//! `cachedContentTokenCount`; `thoughtsTokenCount` is billed as output beside the candidates.
//! A part's `thoughtSignature` must come back on the same part: it is kept as a signed empty
//! reasoning block just before the call it belongs to.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::anthropic::parse_arguments;
use super::http::{Http, HttpRequest, SseEvent, StreamParser, json_at, set_field};
use super::listing::{ListRequest, ListShape};
use super::{Provider, ProviderError, ProviderEvent, ProviderStream, StopReason, UsageRecord};
use crate::conversation::{ContentBlock, Effort, Message, ModelRequest, Role};

/// A Gemini client.
pub struct Gemini {
    http: Http,
    base_url: String,
    api_key: String,
    model: String,
}

impl Gemini {
    /// A client at `base_url` (scheme, host and port; the API path is appended).
    pub fn new(http: Http, base_url: String, api_key: String, model: String) -> Self {
        Gemini {
            http,
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key,
            model,
        }
    }
}

impl Provider for Gemini {
    fn name(&self) -> &str {
        "googleai"
    }

    fn accepts_images(&self) -> bool {
        true
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn model_list(&self) -> Option<ListRequest> {
        Some(ListRequest {
            provider: "googleai".into(),
            url: format!("{}/v1beta/models", self.base_url),
            headers: vec![("x-goog-api-key".into(), self.api_key.clone())],
            shape: ListShape::Gemini,
        })
    }

    fn stream(&self, request: ModelRequest) -> ProviderStream {
        let model = urlencode(&request.model);
        self.http.stream_sse(
            HttpRequest {
                provider: "googleai".into(),
                url: format!(
                    "{}/v1beta/models/{model}:streamGenerateContent?alt=sse",
                    self.base_url
                ),
                headers: vec![("x-goog-api-key".into(), self.api_key.clone())],
                body: build_body(&request),
            },
            GeminiParser::new(),
        )
    }
}

/// Percent-encodes what a path segment may not hold.
pub fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Gemini's reasoning setting for an effort: a thinking budget on the 2.5 models, a thinking
/// level on Gemini 3 (which has `low` and `high`). No effort, or a model that does not think,
/// leaves the provider's default.
pub fn thinking_config(model: &str, effort: Option<Effort>) -> Option<Value> {
    let effort = effort?;
    let model = model.to_ascii_lowercase();
    if model.contains("gemini-2.5") {
        let budget = match effort {
            Effort::Low => 512,
            Effort::Medium => 4_096,
            Effort::High => 16_384,
        };
        return Some(json!({"thinkingBudget": budget}));
    }
    if model.contains("gemini-3") {
        let level = match effort {
            Effort::Low => "low",
            Effort::Medium | Effort::High => "high",
        };
        return Some(json!({"thinkingLevel": level}));
    }
    None
}

/// The request body.
pub fn build_body(request: &ModelRequest) -> Value {
    // Gemini answers a call by name: find each call id's tool name in the history.
    let mut names: HashMap<&str, &str> = HashMap::new();
    for m in &request.messages {
        for (id, name, _) in m.tool_uses() {
            names.insert(id, name);
        }
    }
    let mut contents = Vec::new();
    for message in &request.messages {
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "model",
        };
        let parts = message_parts(message, &names);
        if !parts.is_empty() {
            contents.push(json!({"role": role, "parts": parts}));
        }
    }
    let mut body = json!({
        "contents": contents,
        "generationConfig": {"maxOutputTokens": request.max_output_tokens},
    });
    if let Some(thinking) = thinking_config(&request.model, request.effort)
        && let Some(config) = body.get_mut("generationConfig")
    {
        set_field(config, "thinkingConfig", thinking);
    }
    let system: Vec<Value> = request
        .system
        .iter()
        .filter(|b| !b.text.is_empty())
        .map(|b| json!({"text": b.text}))
        .collect();
    if !system.is_empty() {
        set_field(&mut body, "systemInstruction", json!({"parts": system}));
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "parameters": t.parameters}))
            .collect();
        set_field(
            &mut body,
            "tools",
            json!([{"functionDeclarations": declarations}]),
        );
    }
    body
}

/// A message's parts: a thought signature rides on the part after its thinking block, and a
/// result answers its call by the tool's name (`names`, by call id).
fn message_parts(message: &Message, names: &HashMap<&str, &str>) -> Vec<Value> {
    let mut parts: Vec<Value> = Vec::new();
    let mut signature: Option<&str> = None;
    for block in &message.content {
        match block {
            ContentBlock::Text { text } if !text.is_empty() => {
                let mut part = json!({"text": text});
                if let Some(sig) = signature.take() {
                    set_field(&mut part, "thoughtSignature", json!(sig));
                }
                parts.push(part);
            }
            ContentBlock::Text { .. } => {}
            ContentBlock::Image { media_type, data } => {
                parts.push(json!({"inline_data": {"mime_type": media_type, "data": data}}));
            }
            ContentBlock::Thinking { signature: sig, .. } => signature = sig.as_deref(),
            ContentBlock::ToolUse { name, input, .. } => {
                let args = if input.is_object() {
                    input.clone()
                } else {
                    json!({})
                };
                let mut part = json!({"functionCall": {"name": name, "args": args}});
                if let Some(sig) = signature.take() {
                    set_field(&mut part, "thoughtSignature", json!(sig));
                }
                parts.push(part);
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => {
                let name = names.get(tool_use_id.as_str()).copied().unwrap_or("tool");
                parts.push(
                    json!({"functionResponse": {"name": name, "response": {"content": content}}}),
                );
            }
        }
    }
    parts
}

/// Usage from a `usageMetadata` object.
pub fn usage_from_json(meta: &Value) -> UsageRecord {
    let get = |key: &str| meta.get(key).and_then(Value::as_u64).unwrap_or(0);
    let prompt = get("promptTokenCount");
    let cached = get("cachedContentTokenCount").min(prompt);
    let thoughts = get("thoughtsTokenCount");
    UsageRecord {
        uncached_input: prompt - cached,
        cache_read: cached,
        output: get("candidatesTokenCount") + thoughts,
        reasoning: thoughts,
        ..UsageRecord::default()
    }
}

/// A function call being streamed as `partialArgs`.
struct PartialCall {
    name: String,
    args: Map<String, Value>,
}

/// Parses Gemini's SSE stream.
pub struct GeminiParser {
    usage: Option<UsageRecord>,
    finish: Option<String>,
    calls: usize,
    partial: Option<PartialCall>,
    done: bool,
}

impl Default for GeminiParser {
    fn default() -> Self {
        GeminiParser::new()
    }
}

impl GeminiParser {
    /// A parser for one response.
    pub fn new() -> Self {
        GeminiParser {
            usage: None,
            finish: None,
            calls: 0,
            partial: None,
            done: false,
        }
    }

    fn call(&mut self, name: String, args: Value) -> ProviderEvent {
        self.calls += 1;
        ProviderEvent::ToolCall {
            id: format!("call_{}", self.calls),
            name,
            args,
        }
    }

    fn close_partial(&mut self, out: &mut Vec<ProviderEvent>) {
        if let Some(p) = self.partial.take() {
            let call = self.call(p.name, Value::Object(p.args));
            out.push(call);
        }
    }

    fn end(&mut self) -> Vec<ProviderEvent> {
        self.done = true;
        let mut out = Vec::new();
        self.close_partial(&mut out);
        out.push(ProviderEvent::Usage(self.usage.unwrap_or_else(|| {
            UsageRecord {
                estimated: true,
                ..UsageRecord::default()
            }
        })));
        let stop = match self.finish.as_deref() {
            _ if self.calls > 0 => StopReason::ToolUse,
            Some("MAX_TOKENS") => StopReason::MaxTokens,
            Some("SAFETY")
            | Some("RECITATION")
            | Some("PROHIBITED_CONTENT")
            | Some("BLOCKLIST") => StopReason::Refusal,
            Some("STOP") | None => StopReason::EndTurn,
            Some(other) => StopReason::Other(other.to_ascii_lowercase()),
        };
        out.push(ProviderEvent::Stop(stop));
        out
    }
}

/// Sets `value` at a `$.a.b` path in `args`; strings at the same path are concatenated.
fn set_path(args: &mut Map<String, Value>, path: &str, value: Value) {
    let keys: Vec<&str> = path
        .trim_start_matches('$')
        .split('.')
        .filter(|k| !k.is_empty())
        .collect();
    let Some((last, parents)) = keys.split_last() else {
        return;
    };
    let mut node = args;
    for key in parents {
        let entry = node.entry(key.to_string()).or_insert_with(|| json!({}));
        if !entry.is_object() {
            *entry = json!({});
        }
        let Some(next) = entry.as_object_mut() else {
            return;
        };
        node = next;
    }
    match (node.get_mut(*last), &value) {
        (Some(Value::String(existing)), Value::String(more)) => existing.push_str(more),
        _ => {
            node.insert(last.to_string(), value);
        }
    }
}

impl GeminiParser {
    /// One part of a chunk: a thought signature, text or thought, or (part of) a function call.
    fn take_part(&mut self, part: &Value, out: &mut Vec<ProviderEvent>) {
        if let Some(sig) = part["thoughtSignature"].as_str() {
            out.push(ProviderEvent::ReasoningBlock {
                text: String::new(),
                signature: Some(sig.to_string()),
            });
        }
        if let Some(text) = part["text"].as_str().filter(|t| !t.is_empty()) {
            if part["thought"].as_bool() == Some(true) {
                out.push(ProviderEvent::ReasoningDelta(text.to_string()));
            } else {
                out.push(ProviderEvent::TextDelta(text.to_string()));
            }
        }
        if let Some(call) = part.get("functionCall") {
            self.take_call(call, out);
        }
    }

    /// A `functionCall`: whole (with `args`), or streamed — its name opens it, `partialArgs`
    /// pieces fill it, an empty one closes it.
    fn take_call(&mut self, call: &Value, out: &mut Vec<ProviderEvent>) {
        let name = call["name"].as_str().map(str::to_string);
        if let Some(args) = call.get("args") {
            self.close_partial(out);
            let args = match args {
                Value::String(raw) => parse_arguments(raw),
                other => other.clone(),
            };
            let call = self.call(name.unwrap_or_default(), args);
            out.push(call);
            return;
        }
        if let Some(name) = name {
            self.close_partial(out);
            self.partial = Some(PartialCall {
                name,
                args: Map::new(),
            });
        }
        match call.get("partialArgs").and_then(Value::as_array) {
            Some(pieces) => {
                if let Some(p) = self.partial.as_mut() {
                    for piece in pieces {
                        let path = piece["jsonPath"].as_str().unwrap_or_default();
                        let value = ["stringValue", "numberValue", "boolValue"]
                            .iter()
                            .find_map(|k| piece.get(*k).cloned())
                            .unwrap_or(Value::Null);
                        set_path(&mut p.args, path, value);
                    }
                }
            }
            // An empty functionCall closes the streamed one.
            None if call.as_object().is_some_and(|o| o.is_empty()) => self.close_partial(out),
            None => {}
        }
    }
}

/// An `error` chunk: retryable for 429, 500 and 503.
fn remote_error(error: &Value) -> ProviderError {
    let message = error["message"].as_str().unwrap_or("error").to_string();
    let status = error["code"].as_u64().unwrap_or(0);
    ProviderError::Remote {
        provider: "googleai".into(),
        message,
        retryable: matches!(status, 429 | 500 | 503),
    }
}

impl StreamParser for GeminiParser {
    fn feed(&mut self, event: &SseEvent) -> Result<Vec<ProviderEvent>, ProviderError> {
        let data: Value =
            serde_json::from_str(&event.data).map_err(|e| ProviderError::Protocol {
                provider: "googleai".into(),
                message: format!(
                    "chunk is not JSON ({e}): {}",
                    event.data.chars().take(120).collect::<String>()
                ),
            })?;
        if let Some(error) = data.get("error") {
            return Err(remote_error(error));
        }
        if let Some(meta) = data
            .get("usageMetadata")
            .filter(|m| m.get("promptTokenCount").is_some())
        {
            // Cumulative in every chunk: the last one is the response's usage.
            self.usage = Some(usage_from_json(meta));
        }
        let mut out = Vec::new();
        let candidate = json_at(&data, "/candidates/0");
        for part in json_at(candidate, "/content/parts")
            .as_array()
            .into_iter()
            .flatten()
        {
            self.take_part(part, &mut out);
        }
        if let Some(reason) = candidate["finishReason"].as_str() {
            self.finish = Some(reason.to_string());
        }
        Ok(out)
    }

    fn finish(&mut self) -> Result<Vec<ProviderEvent>, ProviderError> {
        if self.done {
            return Ok(Vec::new());
        }
        if self.finish.is_some() {
            return Ok(self.end());
        }
        Err(ProviderError::Truncated {
            provider: "googleai".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Message;

    fn body(model: &str, effort: Option<Effort>) -> Value {
        build_body(&ModelRequest {
            model: model.into(),
            system: Vec::new(),
            tools: Vec::new(),
            messages: crate::conversation::shared([Message::user_text("hi")]),
            max_output_tokens: 1_000,
            session_id: "s".into(),
            effort,
            settled_messages: None,
            bridge_message: None,
        })
    }

    #[test]
    fn a_specialists_effort_is_geminis_thinking_budget_or_level() {
        let config =
            |model, effort| body(model, effort)["generationConfig"]["thinkingConfig"].clone();
        assert_eq!(
            config("gemini-2.5-flash", Some(Effort::Low)),
            json!({"thinkingBudget": 512})
        );
        assert_eq!(
            config("gemini-2.5-pro", Some(Effort::High)),
            json!({"thinkingBudget": 16_384})
        );
        assert_eq!(
            config("gemini-3-pro-preview", Some(Effort::Low)),
            json!({"thinkingLevel": "low"})
        );
        // No effort, or a model without thinking: the provider's default, no key at all.
        assert_eq!(config("gemini-2.5-flash", None), Value::Null);
        assert_eq!(config("gemini-2.0-flash", Some(Effort::High)), Value::Null);
        assert_eq!(
            body("gemini-2.5-flash", None)["generationConfig"]["maxOutputTokens"],
            1_000
        );
    }
}
