//! SSE bodies in each wire family's shape, for wiremock servers.
#![allow(dead_code)]

use serde_json::{Value, json};

fn sse(events: &[(Option<&str>, Value)]) -> String {
    let mut out = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            out.push_str(&format!("event: {name}\n"));
        }
        out.push_str(&format!("data: {data}\n\n"));
    }
    out
}

/// Anthropic: an optional text block, then an optional tool_use, with usage split start/delta.
pub fn anthropic(
    text: &str,
    call: Option<(&str, &str, &str)>,
    input: u64,
    read: u64,
    write: u64,
    output: u64,
) -> String {
    let mut events = vec![(
        Some("message_start"),
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [],
            "usage": {"input_tokens": input, "cache_read_input_tokens": read, "cache_creation_input_tokens": write, "output_tokens": 1}}}),
    )];
    let mut index = 0;
    if !text.is_empty() {
        events.push((Some("content_block_start"), json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})));
        let (a, b) = text.split_at(text.len() / 2);
        for piece in [a, b] {
            events.push((Some("content_block_delta"), json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}})));
        }
        events.push((
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    if let Some((id, name, args)) = call {
        events.push((Some("content_block_start"), json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
        let (a, b) = args.split_at(args.len() / 2);
        for piece in ["", a, b] {
            events.push((Some("content_block_delta"), json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}})));
        }
        events.push((
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    let stop = if call.is_some() {
        "tool_use"
    } else {
        "end_turn"
    };
    events.push((Some("message_delta"), json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": output}})));
    events.push((Some("message_stop"), json!({"type": "message_stop"})));
    sse(&events)
}

/// OpenAI Chat Completions: text deltas or one tool call in fragments, then the usage chunk.
pub fn openai_chat(
    text: &str,
    call: Option<(&str, &str, &str)>,
    prompt: u64,
    cached: u64,
    completion: u64,
) -> String {
    let chunk = |delta: Value, finish: Value| json!({"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    let mut events = vec![(
        None,
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
    )];
    for word in text.split_inclusive(' ') {
        events.push((None, chunk(json!({"content": word}), Value::Null)));
    }
    if let Some((id, name, args)) = call {
        events.push((None, chunk(json!({"tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}), Value::Null)));
        let (a, b) = args.split_at(args.len() / 2);
        for piece in [a, b] {
            events.push((
                None,
                chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
                    Value::Null,
                ),
            ));
        }
    }
    let finish = if call.is_some() { "tool_calls" } else { "stop" };
    events.push((None, chunk(json!({}), json!(finish))));
    events.push((None, json!({"id": "c1", "object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                  "prompt_tokens_details": {"cached_tokens": cached}}})));
    let mut body = sse(&events);
    body.push_str("data: [DONE]\n\n");
    body
}

/// OpenAI Responses: text deltas or one function call, then `response.completed` with usage.
pub fn responses(
    text: &str,
    call: Option<(&str, &str, &str)>,
    input: u64,
    cached: u64,
    output: u64,
) -> String {
    let mut events = vec![(
        Some("response.created"),
        json!({"type": "response.created", "response": {"id": "r1", "status": "in_progress", "output": []}}),
    )];
    let mut items = Vec::new();
    if !text.is_empty() {
        for word in text.split_inclusive(' ') {
            events.push((
                Some("response.output_text.delta"),
                json!({"type": "response.output_text.delta", "output_index": 0, "delta": word}),
            ));
        }
        items.push(json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}));
    }
    if let Some((id, name, args)) = call {
        let item = json!({"type": "function_call", "id": "fc_1", "call_id": id, "name": name, "arguments": args, "status": "completed"});
        events.push((Some("response.output_item.added"), json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": id, "name": name, "arguments": ""}})));
        events.push((Some("response.function_call_arguments.delta"), json!({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": args})));
        events.push((
            Some("response.output_item.done"),
            json!({"type": "response.output_item.done", "output_index": 1, "item": item.clone()}),
        ));
        items.push(item);
    }
    events.push((Some("response.completed"), json!({"type": "response.completed", "response": {"id": "r1", "status": "completed", "output": items,
        "usage": {"input_tokens": input, "input_tokens_details": {"cached_tokens": cached}, "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 0}}}})));
    sse(&events)
}

/// Gemini: whole chunks as `data:` lines; a function call whole in one part; cumulative usage.
pub fn gemini(
    text: &str,
    call: Option<(&str, &str)>,
    prompt: u64,
    cached: u64,
    output: u64,
) -> String {
    let usage = json!({"promptTokenCount": prompt, "cachedContentTokenCount": cached, "candidatesTokenCount": output});
    let mut chunks = Vec::new();
    if !text.is_empty() {
        let (a, b) = text.split_at(text.len() / 2);
        for piece in [a, b] {
            chunks.push(json!({"candidates": [{"content": {"role": "model", "parts": [{"text": piece}]}}], "usageMetadata": usage}));
        }
    }
    if let Some((name, args)) = call {
        let args: Value = serde_json::from_str(args).unwrap_or(json!({}));
        chunks.push(json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": name, "args": args}, "thoughtSignature": "c2lnLTE="}]}}], "usageMetadata": usage}));
    }
    chunks.push(json!({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP"}], "usageMetadata": usage}));
    sse(&chunks.into_iter().map(|c| (None, c)).collect::<Vec<_>>())
}

/// Ollama: NDJSON frames; a whole tool call; the final `done` frame with counts.
pub fn ollama(text: &str, call: Option<(&str, &str)>, prompt: u64, output: u64) -> String {
    let mut lines = Vec::new();
    for word in text.split_inclusive(' ') {
        lines.push(json!({"model": "llama3.2", "message": {"role": "assistant", "content": word}, "done": false}));
    }
    if let Some((name, args)) = call {
        let args: Value = serde_json::from_str(args).unwrap_or(json!({}));
        lines.push(json!({"model": "llama3.2", "message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": name, "arguments": args}}]}, "done": false}));
    }
    lines.push(json!({"model": "llama3.2", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": prompt, "eval_count": output}));
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// Bedrock ConverseStream: AWS event-stream frames, metadata with the usage last.
pub fn bedrock(
    text: &str,
    call: Option<(&str, &str, &str)>,
    input: u64,
    read: u64,
    output: u64,
) -> Vec<u8> {
    use chatcli::provider::bedrock::encode_frame;
    let frame = |kind: &str, payload: Value| {
        encode_frame(
            &[
                (":event-type", kind),
                (":content-type", "application/json"),
                (":message-type", "event"),
            ],
            payload.to_string().as_bytes(),
        )
    };
    let mut out = frame("messageStart", json!({"role": "assistant", "p": "abc"}));
    if !text.is_empty() {
        out.extend(frame(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"text": text}, "p": "ab"}),
        ));
        out.extend(frame("contentBlockStop", json!({"contentBlockIndex": 0})));
    }
    if let Some((id, name, args)) = call {
        out.extend(frame(
            "contentBlockStart",
            json!({"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": id, "name": name}}}),
        ));
        let (a, b) = args.split_at(args.len() / 2);
        for piece in [a, b] {
            out.extend(frame(
                "contentBlockDelta",
                json!({"contentBlockIndex": 1, "delta": {"toolUse": {"input": piece}}}),
            ));
        }
        out.extend(frame("contentBlockStop", json!({"contentBlockIndex": 1})));
    }
    let stop = if call.is_some() {
        "tool_use"
    } else {
        "end_turn"
    };
    out.extend(frame("messageStop", json!({"stopReason": stop})));
    out.extend(frame("metadata", json!({"usage": {"inputTokens": input, "outputTokens": output, "cacheReadInputTokens": read, "cacheWriteInputTokens": 0}, "metrics": {"latencyMs": 10}})));
    out
}
