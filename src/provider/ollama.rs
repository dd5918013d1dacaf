//! Ollama's native chat API (`POST {host}/api/chat`, newline-delimited JSON stream).
//!
//! Frames carry `message.content`, `message.thinking`, and `message.tool_calls` complete in one
//! frame with `arguments` as an object (no ids: chatcli numbers them). The last frame,
//! `done: true`, carries `prompt_eval_count` and `eval_count`. Ollama has no prompt-cache counts
//! at all, so its usage says so (`cache_reported: false`, `null` in JSON) rather than claim 0.
//! Tool results go back as `{role: "tool", tool_name, content}`.

use std::time::Duration;

use serde_json::{Value, json};

use super::http::{Http, HttpRequest, SseEvent, StreamParser, json_at, json_str, set_field};
use super::listing::{ListRequest, ListShape};
use super::{Provider, ProviderError, ProviderEvent, ProviderStream, StopReason, UsageRecord};
use crate::conversation::{ContentBlock, ModelRequest, Role};

/// An Ollama client.
pub struct Ollama {
    http: Http,
    host: String,
    model: String,
}

/// `OLLAMA_HOST` may be `host:port` without a scheme, as Ollama itself accepts.
pub fn normalize_host(host: &str) -> String {
    let host = host.trim().trim_end_matches('/');
    if host.starts_with("http://") || host.starts_with("https://") {
        host.to_string()
    } else {
        format!("http://{host}")
    }
}

/// Whether an Ollama server answers at `host` within `wait`.
pub async fn answers(host: &str, wait: Duration) -> bool {
    let Ok(client) = reqwest::Client::builder().timeout(wait).build() else {
        return false;
    };
    client
        .get(format!("{}/api/version", normalize_host(host)))
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
}

impl Ollama {
    /// A client for the server at `host`.
    pub fn new(http: Http, host: &str, model: String) -> Self {
        Ollama {
            http,
            host: normalize_host(host),
            model,
        }
    }
}

impl Provider for Ollama {
    fn name(&self) -> &str {
        "ollama"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn model_list(&self) -> Option<ListRequest> {
        Some(ListRequest {
            provider: "ollama".into(),
            url: format!("{}/api/tags", self.host),
            headers: Vec::new(),
            shape: ListShape::Ollama,
        })
    }

    fn stream(&self, request: ModelRequest) -> ProviderStream {
        self.http.stream_decoded(
            HttpRequest {
                provider: "ollama".into(),
                url: format!("{}/api/chat", self.host),
                headers: Vec::new(),
                body: build_body(&request),
            },
            super::http::LineDecoder::default(),
            OllamaParser::default(),
        )
    }
}

/// The request body.
pub fn build_body(request: &ModelRequest) -> Value {
    let mut names: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    for m in &request.messages {
        for (id, name, _) in m.tool_uses() {
            names.insert(id, name);
        }
    }
    let mut messages = Vec::new();
    let system: Vec<&str> = request
        .system
        .iter()
        .filter(|b| !b.text.is_empty())
        .map(|b| b.text.as_str())
        .collect();
    if !system.is_empty() {
        messages.push(json!({"role": "system", "content": system.join("\n\n")}));
    }
    for message in &request.messages {
        match message.role {
            Role::Assistant => {
                let calls: Vec<Value> = message
                    .tool_uses()
                    .map(|(_, name, input)| {
                        let args = if input.is_object() {
                            input.clone()
                        } else {
                            json!({})
                        };
                        json!({"function": {"name": name, "arguments": args}})
                    })
                    .collect();
                let mut m = json!({"role": "assistant", "content": message.text()});
                if !calls.is_empty() {
                    set_field(&mut m, "tool_calls", Value::Array(calls));
                }
                messages.push(m);
            }
            Role::User => {
                let mut texts = Vec::new();
                for block in &message.content {
                    match block {
                        ContentBlock::ToolResult {
                            tool_use_id,
                            content,
                            ..
                        } => {
                            let name = names.get(tool_use_id.as_str()).copied().unwrap_or("tool");
                            messages.push(
                                json!({"role": "tool", "tool_name": name, "content": content}),
                            );
                        }
                        ContentBlock::Text { text } if !text.is_empty() => {
                            texts.push(text.as_str())
                        }
                        _ => {}
                    }
                }
                if !texts.is_empty() {
                    messages.push(json!({"role": "user", "content": texts.join("\n\n")}));
                }
            }
        }
    }
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": true,
        "options": {"num_predict": request.max_output_tokens},
    });
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
            .collect();
        set_field(&mut body, "tools", Value::Array(tools));
    }
    body
}

/// Parses Ollama's NDJSON stream.
#[derive(Default)]
pub struct OllamaParser {
    calls: usize,
    done: bool,
}

impl StreamParser for OllamaParser {
    fn feed(&mut self, event: &SseEvent) -> Result<Vec<ProviderEvent>, ProviderError> {
        let frame: Value =
            serde_json::from_str(&event.data).map_err(|e| ProviderError::Protocol {
                provider: "ollama".into(),
                message: format!(
                    "line is not JSON ({e}): {}",
                    event.data.chars().take(120).collect::<String>()
                ),
            })?;
        if let Some(error) = frame.get("error").and_then(Value::as_str) {
            return Err(ProviderError::Remote {
                provider: "ollama".into(),
                message: error.to_string(),
                retryable: false,
            });
        }
        let mut out = Vec::new();
        let message = json_at(&frame, "/message");
        if let Some(text) = message["thinking"].as_str().filter(|t| !t.is_empty()) {
            out.push(ProviderEvent::ReasoningDelta(text.to_string()));
        }
        if let Some(text) = message["content"].as_str().filter(|t| !t.is_empty()) {
            out.push(ProviderEvent::TextDelta(text.to_string()));
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            self.calls += 1;
            let args = match json_at(call, "/function/arguments") {
                Value::String(raw) => super::anthropic::parse_arguments(raw),
                Value::Null => json!({}),
                other => other.clone(),
            };
            out.push(ProviderEvent::ToolCall {
                id: call["id"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("call_{}", self.calls)),
                name: json_str(call, "/function/name")
                    .unwrap_or_default()
                    .to_string(),
                args,
            });
        }
        if frame.get("done").and_then(Value::as_bool) == Some(true) {
            self.done = true;
            let count = |key: &str| frame.get(key).and_then(Value::as_u64).unwrap_or(0);
            out.push(ProviderEvent::Usage(UsageRecord {
                uncached_input: count("prompt_eval_count"),
                output: count("eval_count"),
                cache_reported: false,
                ..UsageRecord::default()
            }));
            let stop = match json_str(&frame, "/done_reason") {
                _ if self.calls > 0 => StopReason::ToolUse,
                Some("length") => StopReason::MaxTokens,
                _ => StopReason::EndTurn,
            };
            out.push(ProviderEvent::Stop(stop));
        }
        Ok(out)
    }

    fn finish(&mut self) -> Result<Vec<ProviderEvent>, ProviderError> {
        if self.done {
            Ok(Vec::new())
        } else {
            Err(ProviderError::Truncated {
                provider: "ollama".into(),
            })
        }
    }
}
