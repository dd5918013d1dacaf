//! OpenAI Responses (`POST {base}/responses`, streamed, `store: false`).
//!
//! The conversation goes as `input` items: `message` (each with `"type": "message"`, which some
//! compatible servers require), `function_call`, `function_call_output`, and `reasoning` items
//! sent back with their `encrypted_content`. Usage arrives only in the terminal event
//! (`response.completed`, `.incomplete` or `.failed`); `input_tokens` includes cached tokens.
//! The stop reason comes from `status`, `incomplete_details` and whether calls were produced.

use serde_json::{Value, json};

use super::anthropic::parse_arguments;
use super::http::{Http, HttpRequest, SseEvent, StreamParser, json_at, json_str, set_field};
use super::listing::{ListRequest, ListShape};
use super::{Provider, ProviderError, ProviderEvent, ProviderStream, StopReason, UsageRecord};
use crate::conversation::{ContentBlock, Message, ModelRequest, Role};

/// A Responses API client.
pub struct OpenAiResponses {
    http: Http,
    name: &'static str,
    base_url: String,
    api_key: String,
    model: String,
    /// Ask for `24h` retention where the model offers it (`CHATCLI_PROMPT_CACHE_TTL`).
    extended_retention: bool,
}

impl OpenAiResponses {
    /// A client at `base_url` (which includes any `/v1`).
    pub fn new(
        http: Http,
        name: &'static str,
        base_url: String,
        api_key: String,
        model: String,
    ) -> Self {
        OpenAiResponses {
            http,
            name,
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

impl Provider for OpenAiResponses {
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
            url: format!("{}/models", self.base_url),
            headers: vec![(
                "Authorization".to_string(),
                format!("Bearer {}", self.api_key),
            )],
            shape: ListShape::OpenAi,
        })
    }

    fn stream(&self, request: ModelRequest) -> ProviderStream {
        self.http.stream_sse(
            HttpRequest {
                provider: self.name.to_string(),
                url: format!("{}/responses", self.base_url),
                headers: vec![(
                    "Authorization".to_string(),
                    format!("Bearer {}", self.api_key),
                )],
                body: {
                    let mut body = build_body(&request);
                    if !self.extended_retention
                        && let Some(map) = body.as_object_mut()
                    {
                        map.remove("prompt_cache_retention");
                    }
                    body
                },
            },
            ResponsesParser::new(self.name),
        )
    }

    fn cache_lifetime(&self) -> Option<u64> {
        Some(crate::provider::cache_policy::openai_lifetime(
            &self.model,
            self.extended_retention,
        ))
    }
}

/// Whether the model reasons (and so can return encrypted reasoning to send back).
pub(crate) fn is_reasoning_model(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    m.starts_with('o') && m.chars().nth(1).is_some_and(|c| c.is_ascii_digit())
        || m.starts_with("gpt-5")
}

/// Whether OpenAI offers extended (`24h`) prompt-cache retention for the model, at the
/// in-memory price: gpt-4.1 and the gpt-5 family (OpenAI's prompt-caching guide lists gpt-4.1,
/// gpt-5, gpt-5-codex, gpt-5.1 and its codex and chat variants, gpt-5.2, gpt-5.3-codex and
/// gpt-5.4; later models keep only `24h`). gpt-5-mini and -nano are not listed, nor gpt-4.1's.
pub(crate) fn offers_extended_retention(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    let m = m.rsplit('/').next().unwrap_or_default();
    let base = |name: &str| {
        m == name
            || m.strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|rest| {
                    rest.starts_with("20")
                        || rest == "codex"
                        || rest.starts_with("codex-")
                        || rest.starts_with("chat")
                })
    };
    base("gpt-4.1")
        || base("gpt-5")
        || m.strip_prefix("gpt-5.").is_some_and(|rest| {
            rest.chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit() && c != '0')
        })
}

/// The request body.
pub fn build_body(request: &ModelRequest) -> Value {
    let mut input: Vec<Value> = Vec::new();
    for message in &request.messages {
        push_input_items(message, &mut input);
    }
    let instructions: Vec<&str> = request
        .system
        .iter()
        .filter(|b| !b.text.is_empty())
        .map(|b| b.text.as_str())
        .collect();
    let mut body = json!({
        "model": request.model,
        "input": input,
        "stream": true,
        "store": false,
        "max_output_tokens": request.max_output_tokens,
        "prompt_cache_key": request.session_id,
    });
    if !instructions.is_empty() {
        set_field(&mut body, "instructions", json!(instructions.join("\n\n")));
    }
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters}))
            .collect();
        set_field(&mut body, "tools", Value::Array(tools));
    }
    // In-memory entries are usually gone after 5–10 minutes idle; a `24h` entry outlives the
    // user's pauses at the same price (issue #39's pause-aware policy).
    if offers_extended_retention(&request.model) {
        set_field(&mut body, "prompt_cache_retention", json!("24h"));
    }
    if is_reasoning_model(&request.model) {
        set_field(&mut body, "include", json!(["reasoning.encrypted_content"]));
        if let Some(effort) = request.effort {
            set_field(&mut body, "reasoning", json!({"effort": effort.as_str()}));
        }
    }
    body
}

/// One message as input items, in its blocks' order: consecutive texts as one `message` item,
/// each reasoning block (when it has its encrypted content), call and result as its own item.
fn push_input_items(message: &Message, input: &mut Vec<Value>) {
    let (role, text_type) = match message.role {
        Role::User => ("user", "input_text"),
        Role::Assistant => ("assistant", "output_text"),
    };
    let mut texts: Vec<Value> = Vec::new();
    let flush = |texts: &mut Vec<Value>, input: &mut Vec<Value>| {
        if !texts.is_empty() {
            input.push(json!({"type": "message", "role": role, "content": std::mem::take(texts)}));
        }
    };
    for block in &message.content {
        match block {
            ContentBlock::Text { text } if !text.is_empty() => {
                texts.push(json!({"type": text_type, "text": text}));
            }
            ContentBlock::Text { .. } => {}
            ContentBlock::Image { media_type, data } => texts.push(json!({
                "type": "input_image",
                "image_url": format!("data:{media_type};base64,{data}")
            })),
            ContentBlock::Thinking { text, signature } => {
                flush(&mut texts, input);
                let summary: Vec<Value> = if text.is_empty() {
                    Vec::new()
                } else {
                    vec![json!({"type": "summary_text", "text": text})]
                };
                if let Some(encrypted) = signature {
                    input.push(json!({"type": "reasoning", "summary": summary, "encrypted_content": encrypted}));
                }
            }
            ContentBlock::ToolUse {
                id,
                name,
                input: args,
            } => {
                flush(&mut texts, input);
                let arguments = match args {
                    Value::String(raw) => raw.clone(),
                    other => other.to_string(),
                };
                input.push(json!({"type": "function_call", "call_id": id, "name": name, "arguments": arguments}));
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => {
                flush(&mut texts, input);
                input.push(json!({"type": "function_call_output", "call_id": tool_use_id, "output": content}));
            }
        }
    }
    flush(&mut texts, input);
}

/// Usage from a Responses `usage` object.
pub fn usage_from_json(usage: &Value) -> UsageRecord {
    let get = |path: &str| usage.pointer(path).and_then(Value::as_u64);
    let input = get("/input_tokens").unwrap_or(0);
    let cached = get("/input_tokens_details/cached_tokens")
        .unwrap_or(0)
        .min(input);
    let written = get("/input_tokens_details/cache_write_tokens")
        .unwrap_or(0)
        .min(input - cached);
    UsageRecord {
        uncached_input: input - cached - written,
        cache_read: cached,
        cache_write_5m: written,
        output: get("/output_tokens").unwrap_or(0),
        reasoning: get("/output_tokens_details/reasoning_tokens").unwrap_or(0),
        ..UsageRecord::default()
    }
}

/// Parses the Responses SSE stream.
pub struct ResponsesParser {
    provider: String,
    calls_seen: bool,
    done: bool,
}

impl ResponsesParser {
    /// A parser for one response.
    pub fn new(provider: &str) -> Self {
        ResponsesParser {
            provider: provider.to_string(),
            calls_seen: false,
            done: false,
        }
    }

    fn terminal(&mut self, response: &Value) -> Result<Vec<ProviderEvent>, ProviderError> {
        self.done = true;
        let status = response["status"].as_str().unwrap_or("completed");
        if status == "failed" {
            let message = json_str(response, "/error/message")
                .unwrap_or("the response failed")
                .to_string();
            return Err(ProviderError::Remote {
                provider: self.provider.clone(),
                message,
                retryable: json_str(response, "/error/code") == Some("server_error"),
            });
        }
        let stop = match (status, json_str(response, "/incomplete_details/reason")) {
            ("incomplete", Some("max_output_tokens")) => StopReason::MaxTokens,
            ("incomplete", Some("content_filter")) => StopReason::Refusal,
            ("incomplete", Some(other)) => StopReason::Other(other.to_string()),
            _ if self.calls_seen => StopReason::ToolUse,
            _ => StopReason::EndTurn,
        };
        let usage = match response.get("usage").filter(|u| u.is_object()) {
            Some(usage) => usage_from_json(usage),
            None => UsageRecord {
                estimated: true,
                ..UsageRecord::default()
            },
        };
        Ok(vec![ProviderEvent::Usage(usage), ProviderEvent::Stop(stop)])
    }
}

impl ResponsesParser {
    /// An output item is complete: a function call, or a reasoning item to send back.
    fn item_done(&mut self, item: &Value, out: &mut Vec<ProviderEvent>) {
        match item["type"].as_str() {
            Some("function_call") => {
                self.calls_seen = true;
                out.push(ProviderEvent::ToolCall {
                    id: item["call_id"].as_str().unwrap_or_default().to_string(),
                    name: item["name"].as_str().unwrap_or_default().to_string(),
                    args: parse_arguments(item["arguments"].as_str().unwrap_or_default()),
                });
            }
            Some("reasoning") => {
                let text: String = item["summary"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n");
                let signature = item["encrypted_content"].as_str().map(str::to_string);
                if signature.is_some() {
                    out.push(ProviderEvent::ReasoningBlock { text, signature });
                }
            }
            _ => {}
        }
    }

    /// An `error` event (never retried).
    fn remote_error(&self, data: &Value) -> ProviderError {
        let message = json_str(data, "/message")
            .or_else(|| json_str(data, "/error/message"))
            .unwrap_or("error event")
            .to_string();
        ProviderError::Remote {
            provider: self.provider.clone(),
            message,
            retryable: false,
        }
    }
}

impl StreamParser for ResponsesParser {
    fn feed(&mut self, event: &SseEvent) -> Result<Vec<ProviderEvent>, ProviderError> {
        if event.data.trim() == "[DONE]" {
            return Ok(Vec::new());
        }
        let data: Value =
            serde_json::from_str(&event.data).map_err(|e| ProviderError::Protocol {
                provider: self.provider.clone(),
                message: format!(
                    "event is not JSON ({e}): {}",
                    event.data.chars().take(120).collect::<String>()
                ),
            })?;
        let kind = json_str(&data, "/type").unwrap_or(event.event.as_str());
        let index = data
            .get("output_index")
            .and_then(Value::as_u64)
            .unwrap_or(0) as usize;
        let delta = json_str(&data, "/delta");
        let mut out = Vec::new();
        match kind {
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(text) = delta {
                    out.push(ProviderEvent::TextDelta(text.to_string()));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(text) = delta {
                    out.push(ProviderEvent::ReasoningDelta(text.to_string()));
                }
            }
            "response.output_item.added"
                if json_str(&data, "/item/type") == Some("function_call") =>
            {
                out.push(ProviderEvent::ToolCallStarted {
                    index,
                    id: json_str(&data, "/item/call_id")
                        .unwrap_or_default()
                        .to_string(),
                    name: json_str(&data, "/item/name")
                        .unwrap_or_default()
                        .to_string(),
                });
            }
            "response.function_call_arguments.delta" => {
                if let Some(fragment) = delta {
                    out.push(ProviderEvent::ToolCallArgs {
                        index,
                        fragment: fragment.to_string(),
                    });
                }
            }
            "response.output_item.done" => self.item_done(json_at(&data, "/item"), &mut out),
            "response.completed" | "response.incomplete" | "response.failed" => {
                out.extend(self.terminal(json_at(&data, "/response"))?);
            }
            "error" => return Err(self.remote_error(&data)),
            _ => {}
        }
        Ok(out)
    }

    fn finish(&mut self) -> Result<Vec<ProviderEvent>, ProviderError> {
        if self.done {
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
    use crate::conversation::{Effort, Message};

    fn request(model: &str, effort: Option<Effort>) -> ModelRequest {
        ModelRequest {
            model: model.into(),
            system: Vec::new(),
            tools: Vec::new(),
            messages: crate::conversation::shared([Message::user_text("hi")]),
            max_output_tokens: 100,
            session_id: "s".into(),
            effort,
            settled_messages: None,
            bridge_message: None,
        }
    }

    #[test]
    fn models_with_extended_retention_ask_for_24h_on_both_openai_wires_and_others_do_not() {
        use crate::provider::openai_chat::{Preset, build_body as chat_body};
        for model in [
            "gpt-5.1",
            "gpt-5.1-codex-mini",
            "gpt-4.1",
            "gpt-5",
            "gpt-5.4",
            "gpt-4.1-2025-04-14",
        ] {
            let body = build_body(&request(model, None));
            assert_eq!(body["prompt_cache_retention"], json!("24h"), "{model}");
            let chat = chat_body(&request(model, None), &Preset::OPENAI);
            assert_eq!(chat["prompt_cache_retention"], json!("24h"), "{model}");
        }
        for model in [
            "gpt-4.1-mini",
            "gpt-5-mini",
            "gpt-4o",
            "o4-mini",
            "qwen2.5-0.5b",
        ] {
            let body = build_body(&request(model, None));
            assert!(body.get("prompt_cache_retention").is_none(), "{model}");
        }
        // Another server speaking Chat Completions is never sent the field.
        let other = chat_body(&request("gpt-5.1", None), &Preset::compatible("local"));
        assert!(other.get("prompt_cache_retention").is_none());
    }

    #[test]
    fn a_specialists_effort_is_the_reasoning_models_effort_on_both_openai_wires() {
        let body = build_body(&request("o4-mini", Some(Effort::Low)));
        assert_eq!(body["reasoning"], json!({"effort": "low"}));
        let chat = crate::provider::openai_chat::build_body(
            &request("gpt-5", Some(Effort::High)),
            &crate::provider::openai_chat::Preset::OPENAI,
        );
        assert_eq!(chat["reasoning_effort"], json!("high"));
        // A model without a reasoning setting, or no effort asked: nothing is sent.
        assert!(
            build_body(&request("gpt-4.1", Some(Effort::Low)))
                .get("reasoning")
                .is_none()
        );
        assert!(
            build_body(&request("o4-mini", None))
                .get("reasoning")
                .is_none()
        );
        let other = crate::provider::openai_chat::build_body(
            &request("gpt-4.1", Some(Effort::High)),
            &crate::provider::openai_chat::Preset::OPENAI,
        );
        assert!(other.get("reasoning_effort").is_none());
    }
}
