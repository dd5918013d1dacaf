//! AWS Bedrock ConverseStream (`POST {endpoint}/model/{model}/converse-stream`).
//!
//! Requests are signed with SigV4 (service `bedrock`, the region from `AWS_REGION`, the signed
//! `host` being the host actually requested, port included), or carry a Bedrock API key as a
//! bearer token. `cachePoint` blocks go where Anthropic's markers go: after the tools, after the
//! stable system prompt, after the last message the next request sends unchanged and after the
//! one the previous request's rolling marker followed (the bridge). The response is the AWS event-stream
//! binary framing — prelude (total and header lengths, CRC32), headers, JSON payload, message
//! CRC32 — decoded here with both CRCs checked: `messageStart`, `contentBlockStart`,
//! `contentBlockDelta`, `contentBlockStop`, `messageStop`, then `metadata` with the usage last.
//! `inputTokens` excludes the cache counts. Payloads carry a random `p` padding field.

use std::time::SystemTime;

use serde_json::{Value, json};

use super::anthropic::parse_arguments;
use super::http::{
    Decoder, Http, HttpRequest, SseEvent, StreamParser, json_at, json_str, set_field,
};
use super::{Provider, ProviderError, ProviderEvent, ProviderStream, StopReason, UsageRecord};
use crate::conversation::{ContentBlock, MarkerPlaces, ModelRequest, Role};

/// How requests are authorised.
#[derive(Debug, Clone)]
pub enum Auth {
    /// `AWS_BEARER_TOKEN_BEDROCK`.
    Bearer(String),
    /// SigV4 with these credentials.
    SigV4 {
        access_key: String,
        secret_key: String,
        session_token: Option<String>,
    },
}

/// A Bedrock ConverseStream client.
pub struct Bedrock {
    http: Http,
    endpoint: String,
    region: String,
    auth: Auth,
    model: String,
}

impl Bedrock {
    /// A client for `region` at `endpoint` (scheme, host and port).
    pub fn new(http: Http, endpoint: String, region: String, auth: Auth, model: String) -> Self {
        Bedrock {
            http,
            endpoint: endpoint.trim_end_matches('/').to_string(),
            region,
            auth,
            model,
        }
    }
}

/// The default endpoint for a region.
pub fn endpoint_for(region: &str) -> String {
    format!("https://bedrock-runtime.{region}.amazonaws.com")
}

impl Provider for Bedrock {
    fn name(&self) -> &str {
        "bedrock"
    }

    /// Bedrock's prompt cache keeps an entry five minutes from its last use ("a five minute
    /// TTL, which resets with each successful cache hit"); nothing is cached without markers.
    fn cache_lifetime(&self) -> Option<u64> {
        self.http.prompt_cache.then_some(300)
    }

    fn accepts_images(&self) -> bool {
        true
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn stream(&self, request: ModelRequest) -> ProviderStream {
        let url = format!(
            "{}/model/{}/converse-stream",
            self.endpoint,
            super::gemini::urlencode(&request.model)
        );
        let body = build_body(&request);
        let headers = match self.sign_headers(&url, &body) {
            Ok(headers) => headers,
            Err(e) => {
                return Box::pin(futures_util::stream::once(async move { Err(e) }));
            }
        };
        self.http.stream_decoded(
            HttpRequest {
                provider: "bedrock".into(),
                url,
                headers,
                body,
            },
            EventStreamDecoder::default(),
            BedrockParser::default(),
        )
    }
}

impl Bedrock {
    /// The authorisation headers for a POST of `body` to `url`.
    fn sign_headers(
        &self,
        url: &str,
        body: &Value,
    ) -> Result<Vec<(String, String)>, ProviderError> {
        let setup =
            |m: String| ProviderError::Setup(format!("bedrock: cannot sign the request: {m}"));
        match &self.auth {
            Auth::Bearer(token) => Ok(vec![("Authorization".into(), format!("Bearer {token}"))]),
            Auth::SigV4 {
                access_key,
                secret_key,
                session_token,
            } => {
                let parsed = reqwest::Url::parse(url).map_err(|e| setup(e.to_string()))?;
                // The host header the server sees: host, plus the port when it is not the default.
                let host = match (parsed.host_str(), parsed.port()) {
                    (Some(h), Some(p)) => format!("{h}:{p}"),
                    (Some(h), None) => h.to_string(),
                    (None, _) => return Err(setup("the endpoint has no host".into())),
                };
                let bytes = serde_json::to_vec(body).map_err(|e| setup(e.to_string()))?;
                let post = super::sigv4::Post {
                    path: parsed.path(),
                    host: &host,
                    content_type: "application/json",
                    body: &bytes,
                };
                let credentials = super::sigv4::Credentials {
                    access_key,
                    secret_key,
                    session_token: session_token.as_deref(),
                };
                let mut headers = super::sigv4::sign(
                    &post,
                    &credentials,
                    &self.region,
                    "bedrock",
                    SystemTime::now(),
                );
                headers.push(("host".into(), host));
                Ok(headers)
            }
        }
    }
}

fn cache_point() -> Value {
    json!({"cachePoint": {"type": "default"}})
}

/// The request body, with `cachePoint` blocks placed.
pub fn build_body(request: &ModelRequest) -> Value {
    let mut places = MarkerPlaces::new(request);
    let mut messages: Vec<Value> = Vec::new();
    for (i, message) in request.messages.iter().enumerate() {
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let content: Vec<Value> = message.content.iter().filter_map(wire_block).collect();
        if !content.is_empty() {
            messages.push(json!({"role": role, "content": content}));
            places.sent(i, messages.len() - 1);
        }
    }
    // As Anthropic's rolling marker and bridge: after the last message the next request sends
    // unchanged, and after the one the previous request's rolling marker followed.
    for m in places.places() {
        if let Some(content) = messages
            .get_mut(m)
            .and_then(|m| m["content"].as_array_mut())
        {
            content.push(cache_point());
        }
    }
    let mut body = json!({
        "messages": messages,
        "inferenceConfig": {"maxTokens": request.max_output_tokens},
    });
    add_thinking(&mut body, request);
    if let Some(system) = system_blocks(request) {
        set_field(&mut body, "system", system);
    }
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"toolSpec": {"name": t.name, "description": t.description, "inputSchema": {"json": t.parameters}}}))
            .collect();
        tools.push(cache_point());
        set_field(&mut body, "toolConfig", json!({"tools": tools}));
    }
    body
}

/// A content block as Converse writes it; none for empty text or thinking without its
/// signature.
fn wire_block(block: &ContentBlock) -> Option<Value> {
    match block {
        ContentBlock::Text { text } if text.is_empty() => None,
        ContentBlock::Text { text } => Some(json!({"text": text})),
        ContentBlock::Thinking {
            text,
            signature: Some(signature),
        } => Some(
            json!({"reasoningContent": {"reasoningText": {"text": text, "signature": signature}}}),
        ),
        ContentBlock::Thinking { .. } => None,
        // Converse takes the bytes base64-encoded in JSON, and the format by its short name.
        ContentBlock::Image { media_type, data } => Some(json!({"image": {
            "format": media_type.strip_prefix("image/").unwrap_or(media_type),
            "source": {"bytes": data}
        }})),
        ContentBlock::ToolUse { id, name, input } => {
            let input = if input.is_object() {
                input.clone()
            } else {
                json!({})
            };
            Some(json!({"toolUse": {"toolUseId": id, "name": name, "input": input}}))
        }
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => {
            let mut result = json!({"toolUseId": tool_use_id, "content": [{"text": content}]});
            if *is_error {
                set_field(&mut result, "status", json!("error"));
            }
            Some(json!({"toolResult": result}))
        }
    }
}

/// A Claude model's extended thinking, as on Anthropic's own wire (a specialist's effort), with
/// room for the answer after it.
fn add_thinking(body: &mut Value, request: &ModelRequest) {
    let Some(budget) = super::anthropic::thinking_budget(&request.model, request.effort) else {
        return;
    };
    set_field(
        body,
        "additionalModelRequestFields",
        json!({"thinking": {"type": "enabled", "budget_tokens": budget}}),
    );
    if let Some(config) = body.get_mut("inferenceConfig") {
        let max = request
            .max_output_tokens
            .max(budget + super::anthropic::THINKING_ANSWER_ROOM);
        set_field(config, "maxTokens", json!(max));
    }
}

/// The system blocks, a cache point after the last stable one; none when all are empty.
fn system_blocks(request: &ModelRequest) -> Option<Value> {
    let blocks: Vec<_> = request
        .system
        .iter()
        .filter(|b| !b.text.is_empty())
        .collect();
    if blocks.is_empty() {
        return None;
    }
    let mut system: Vec<Value> = Vec::new();
    let last_stable = blocks.iter().rposition(|b| b.stable);
    for (i, b) in blocks.iter().enumerate() {
        system.push(json!({"text": b.text}));
        if Some(i) == last_stable {
            system.push(cache_point());
        }
    }
    Some(Value::Array(system))
}

/// Usage from a Converse `usage` object (`inputTokens` excludes the cache counts).
pub fn usage_from_json(usage: &Value) -> UsageRecord {
    let get = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
    UsageRecord {
        uncached_input: get("inputTokens"),
        cache_read: get("cacheReadInputTokens"),
        cache_write_5m: get("cacheWriteInputTokens"),
        output: get("outputTokens"),
        ..UsageRecord::default()
    }
}

/// CRC-32 (IEEE), as the event-stream framing uses.
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// One decoded frame: its string headers and its payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub headers: Vec<(String, String)>,
    pub payload: Vec<u8>,
}

impl Frame {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

fn frame_error(message: String) -> ProviderError {
    ProviderError::Protocol {
        provider: "bedrock".into(),
        message,
    }
}

/// Decodes one frame from the front of `bytes`; `Ok(None)` when more bytes are needed.
pub fn decode_frame(bytes: &[u8]) -> Result<Option<(Frame, usize)>, ProviderError> {
    let Some((total, headers_len)) = checked_lengths(bytes)? else {
        return Ok(None);
    };
    let end = 12 + headers_len;
    let headers = decode_headers(bytes, end)?;
    let payload = bytes
        .get(end..total - 4)
        .ok_or_else(|| frame_error("truncated payload".into()))?
        .to_vec();
    Ok(Some((Frame { headers, payload }, total)))
}

/// The lengths of the frame at the front of `bytes` and of its headers, its prelude and message
/// CRCs checked; `Ok(None)` when more bytes are needed.
fn checked_lengths(bytes: &[u8]) -> Result<Option<(usize, usize)>, ProviderError> {
    // The prelude: the total length, the headers' length, and the CRC of those eight bytes.
    let Some((&[t0, t1, t2, t3, h0, h1, h2, h3], rest)) = bytes.split_first_chunk::<8>() else {
        return Ok(None);
    };
    let Some(&prelude_crc) = rest.first_chunk::<4>() else {
        return Ok(None);
    };
    let total = u32::from_be_bytes([t0, t1, t2, t3]) as usize;
    let headers_len = u32::from_be_bytes([h0, h1, h2, h3]) as usize;
    if crc32(&[t0, t1, t2, t3, h0, h1, h2, h3]) != u32::from_be_bytes(prelude_crc) {
        return Err(frame_error(
            "event-stream prelude CRC mismatch (corrupted stream)".into(),
        ));
    }
    if total < 16 || headers_len > total - 16 || total > 16 * 1024 * 1024 {
        return Err(frame_error(format!(
            "event-stream frame of impossible size {total}"
        )));
    }
    // The message CRC covers everything before its own last four bytes.
    let Some((covered, message_crc)) = bytes
        .get(..total)
        .and_then(|frame| frame.split_last_chunk::<4>())
    else {
        return Ok(None);
    };
    if crc32(covered) != u32::from_be_bytes(*message_crc) {
        return Err(frame_error(
            "event-stream message CRC mismatch (corrupted stream)".into(),
        ));
    }
    Ok(Some((total, headers_len)))
}

/// The headers between the prelude (12 bytes) and `end`, each a name and its value.
fn decode_headers(bytes: &[u8], end: usize) -> Result<Vec<(String, String)>, ProviderError> {
    let mut headers = Vec::new();
    let mut at = 12;
    while at < end {
        let name_len = *bytes
            .get(at)
            .ok_or_else(|| frame_error("truncated header".into()))? as usize;
        at += 1;
        let name = String::from_utf8_lossy(
            bytes
                .get(at..at + name_len)
                .ok_or_else(|| frame_error("truncated header".into()))?,
        )
        .to_string();
        at += name_len;
        let kind = *bytes
            .get(at)
            .ok_or_else(|| frame_error("truncated header".into()))?;
        at += 1;
        let value = header_value(bytes, &mut at, kind)?;
        headers.push((name, value));
    }
    Ok(headers)
}

/// The value of a header of type `kind` at `at`, which moves past it: strings and byte arrays as
/// text, booleans as `true` or `false`, the other types skipped (empty).
fn header_value(bytes: &[u8], at: &mut usize, kind: u8) -> Result<String, ProviderError> {
    let skip = match kind {
        7 | 6 => {
            let len = match bytes.get(*at..*at + 2) {
                Some([hi, lo]) => u16::from_be_bytes([*hi, *lo]) as usize,
                _ => return Err(frame_error("truncated header".into())),
            };
            *at += 2;
            let v = String::from_utf8_lossy(
                bytes
                    .get(*at..*at + len)
                    .ok_or_else(|| frame_error("truncated header".into()))?,
            )
            .to_string();
            *at += len;
            return Ok(v);
        }
        0 | 1 => return Ok((kind == 0).to_string()),
        2 => 1,
        3 => 2,
        4 => 4,
        5 | 8 => 8,
        9 => 16,
        other => return Err(frame_error(format!("unknown header type {other}"))),
    };
    *at += skip;
    Ok(String::new())
}

/// Encodes a frame with string headers (for tests and tools that replay streams).
pub fn encode_frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut h = Vec::new();
    for (name, value) in headers {
        h.push(name.len() as u8);
        h.extend_from_slice(name.as_bytes());
        h.push(7);
        h.extend_from_slice(&(value.len() as u16).to_be_bytes());
        h.extend_from_slice(value.as_bytes());
    }
    let total = 12 + h.len() + payload.len() + 4;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(h.len() as u32).to_be_bytes());
    let prelude_crc = crc32(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&h);
    out.extend_from_slice(payload);
    let crc = crc32(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// Cuts the event-stream into events: `event` is the `:event-type` (or `exception:<type>`).
#[derive(Default)]
pub struct EventStreamDecoder {
    pending: Vec<u8>,
}

impl Decoder for EventStreamDecoder {
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, ProviderError> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some((frame, used)) = decode_frame(&self.pending)? {
            self.pending.drain(..used);
            let event = match frame.header(":message-type") {
                Some("exception") | Some("error") => format!(
                    "exception:{}",
                    frame
                        .header(":exception-type")
                        .or(frame.header(":error-code"))
                        .unwrap_or("error")
                ),
                _ => frame.header(":event-type").unwrap_or_default().to_string(),
            };
            out.push(SseEvent {
                event,
                data: String::from_utf8_lossy(&frame.payload).to_string(),
            });
        }
        Ok(out)
    }

    fn end(&mut self) -> Result<Vec<SseEvent>, ProviderError> {
        if self.pending.is_empty() {
            Ok(Vec::new())
        } else {
            Err(frame_error(format!(
                "the stream ended inside a frame ({} bytes left)",
                self.pending.len()
            )))
        }
    }
}

/// Parses ConverseStream events.
#[derive(Default)]
pub struct BedrockParser {
    tools: std::collections::HashMap<u64, (String, String, String)>,
    reasoning: std::collections::HashMap<u64, (String, Option<String>)>,
    stop: Option<StopReason>,
    usage: Option<UsageRecord>,
    calls: bool,
    done: bool,
}

impl BedrockParser {
    fn end(&mut self) -> Vec<ProviderEvent> {
        self.done = true;
        let usage = self.usage.unwrap_or_else(|| UsageRecord {
            estimated: true,
            ..UsageRecord::default()
        });
        let stop = match self.stop.clone() {
            Some(StopReason::EndTurn) | None if self.calls => StopReason::ToolUse,
            Some(s) => s,
            None => StopReason::EndTurn,
        };
        vec![ProviderEvent::Usage(usage), ProviderEvent::Stop(stop)]
    }

    /// More of a content block: text, a call's arguments, reasoning or its signature.
    fn block_delta(&mut self, delta: &Value, index: u64, out: &mut Vec<ProviderEvent>) {
        if let Some(text) = delta["text"].as_str() {
            out.push(ProviderEvent::TextDelta(text.to_string()));
        }
        if let Some(fragment) = json_str(delta, "/toolUse/input")
            && let Some((_, _, json)) = self.tools.get_mut(&index)
        {
            json.push_str(fragment);
            out.push(ProviderEvent::ToolCallArgs {
                index: index as usize,
                fragment: fragment.to_string(),
            });
        }
        let reasoning = &delta["reasoningContent"];
        if let Some(text) = reasoning["text"].as_str() {
            self.reasoning.entry(index).or_default().0.push_str(text);
            out.push(ProviderEvent::ReasoningDelta(text.to_string()));
        }
        if let Some(sig) = reasoning["signature"].as_str() {
            self.reasoning.entry(index).or_default().1 = Some(sig.to_string());
        }
    }

    /// A content block ends: a call is complete, a reasoning block whole.
    fn block_stop(&mut self, index: u64, out: &mut Vec<ProviderEvent>) {
        if let Some((id, name, json)) = self.tools.remove(&index) {
            self.calls = true;
            out.push(ProviderEvent::ToolCall {
                id,
                name,
                args: parse_arguments(&json),
            });
        }
        if let Some((text, signature)) = self.reasoning.remove(&index) {
            out.push(ProviderEvent::ReasoningBlock { text, signature });
        }
    }
}

/// An `exception:` event: retryable when Bedrock is throttling, unavailable or failed inside.
fn exception(kind: &str, data: &Value) -> ProviderError {
    let message = json_str(data, "/message")
        .or(json_str(data, "/Message"))
        .unwrap_or(kind)
        .to_string();
    ProviderError::Remote {
        provider: "bedrock".into(),
        message: format!("{kind}: {message}"),
        retryable: matches!(
            kind,
            "throttlingException"
                | "serviceUnavailableException"
                | "internalServerException"
                | "modelStreamErrorException"
        ),
    }
}

/// A `messageStop` event's stop reason.
fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" | "stop_sequence" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "content_filtered" | "guardrail_intervened" => StopReason::Refusal,
        other => StopReason::Other(other.to_string()),
    }
}

impl StreamParser for BedrockParser {
    fn feed(&mut self, event: &SseEvent) -> Result<Vec<ProviderEvent>, ProviderError> {
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|e| frame_error(format!("payload is not JSON ({e})")))?;
        if let Some(kind) = event.event.strip_prefix("exception:") {
            return Err(exception(kind, &data));
        }
        let index = data
            .get("contentBlockIndex")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let mut out = Vec::new();
        match event.event.as_str() {
            "contentBlockStart" => {
                let tool = json_at(&data, "/start/toolUse");
                if let Some(id) = tool["toolUseId"].as_str() {
                    let name = tool["name"].as_str().unwrap_or_default().to_string();
                    out.push(ProviderEvent::ToolCallStarted {
                        index: index as usize,
                        id: id.to_string(),
                        name: name.clone(),
                    });
                    self.tools
                        .insert(index, (id.to_string(), name, String::new()));
                }
            }
            "contentBlockDelta" => self.block_delta(json_at(&data, "/delta"), index, &mut out),
            "contentBlockStop" => self.block_stop(index, &mut out),
            "messageStop" => {
                self.stop = Some(stop_reason(
                    json_str(&data, "/stopReason").unwrap_or("end_turn"),
                ));
            }
            "metadata" => {
                self.usage = Some(usage_from_json(json_at(&data, "/usage")));
                if self.stop.is_some() {
                    out.extend(self.end());
                }
            }
            _ => {}
        }
        Ok(out)
    }

    fn finish(&mut self) -> Result<Vec<ProviderEvent>, ProviderError> {
        if self.done {
            return Ok(Vec::new());
        }
        // Metadata is last; a stream that stopped after messageStop without it is still whole.
        if self.stop.is_some() {
            return Ok(self.end());
        }
        Err(ProviderError::Truncated {
            provider: "bedrock".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_specialists_effort_is_claudes_thinking_on_bedrock_too() {
        let mut request = ModelRequest {
            model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0".into(),
            system: Vec::new(),
            tools: Vec::new(),
            messages: crate::conversation::shared([crate::conversation::Message::user_text("hi")]),
            max_output_tokens: 8_192,
            session_id: "s".into(),
            effort: Some(crate::conversation::Effort::High),
            settled_messages: None,
            bridge_message: None,
        };
        let body = build_body(&request);
        assert_eq!(
            body["additionalModelRequestFields"],
            json!({"thinking": {"type": "enabled", "budget_tokens": 8_192}})
        );
        assert_eq!(body["inferenceConfig"]["maxTokens"], json!(8_192 + 4_096));
        request.model = "amazon.nova-pro-v1:0".into();
        let body = build_body(&request);
        assert!(body.get("additionalModelRequestFields").is_none());
        assert_eq!(body["inferenceConfig"]["maxTokens"], json!(8_192));
    }

    #[test]
    fn a_string_header_whose_length_runs_past_the_frame_is_an_error() {
        // One header whose name length runs to the frame's last byte, so that byte (the last of
        // the checksum) is read as the header's type; a payload byte is varied until that type
        // is a string (7), whose 2-byte length would then be read past the end.
        let frame = (0u8..=255)
            .map(|p| {
                let headers = [0u8];
                let total = (12 + headers.len() + 1 + 4) as u32;
                let mut frame = Vec::new();
                frame.extend_from_slice(&total.to_be_bytes());
                frame.extend_from_slice(&(headers.len() as u32).to_be_bytes());
                let prelude = crc32(&frame);
                frame.extend_from_slice(&prelude.to_be_bytes());
                // name length: from byte 13 to the frame's second-to-last byte.
                frame.push(4);
                frame.push(p);
                let all = crc32(&frame);
                frame.extend_from_slice(&all.to_be_bytes());
                frame
            })
            .find(|f| f.last() == Some(&7))
            .expect("some payload byte gives a checksum ending in 7");
        assert!(decode_frame(&frame).is_err());
    }

    #[test]
    fn crc32_matches_the_standard_check_value() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn frames_round_trip_and_a_flipped_byte_is_an_error() {
        let frame = encode_frame(
            &[(":event-type", "messageStart"), (":message-type", "event")],
            br#"{"role":"assistant"}"#,
        );
        let (decoded, used) = decode_frame(&frame).expect("valid").expect("whole");
        assert_eq!(used, frame.len());
        assert_eq!(decoded.header(":event-type"), Some("messageStart"));
        assert!(
            decode_frame(&frame[..frame.len() - 1])
                .expect("valid so far")
                .is_none()
        );
        let mut bad = frame.clone();
        bad[20] ^= 0x01;
        let err = decode_frame(&bad)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("CRC mismatch"), "{err}");
    }
}
