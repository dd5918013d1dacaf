//! Recorded real provider responses, parsed into normalised events and usage.
//!
//! Expected values were read off each fixture by hand (see `../shared/fixtures/providers/SOURCES.md`).
//! Streams are replayed in small odd-sized chunks so SSE events straddle reads, as on a network.

use chatcli::provider::anthropic::{self, AnthropicParser};
use chatcli::provider::http::{StreamParser, replay};
use chatcli::provider::openai_chat::{self, ChatParser, Preset};
use chatcli::provider::openai_responses::{self, ResponsesParser};
use chatcli::provider::{ProviderEvent, StopReason, UsageRecord};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::common::{fixture_json, fixture_sse, provider_fixtures};

async fn run(name: &str, parser: impl StreamParser) -> Option<Vec<ProviderEvent>> {
    let dir = provider_fixtures()?;
    let body = fixture_sse(&dir, name);
    Some(
        replay(&body, 37, parser)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}")),
    )
}

fn text(events: &[ProviderEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn reasoning(events: &[ProviderEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::ReasoningDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn calls(events: &[ProviderEvent]) -> Vec<(String, String, serde_json::Value)> {
    events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::ToolCall { id, name, args } => {
                Some((id.clone(), name.clone(), args.clone()))
            }
            _ => None,
        })
        .collect()
}

fn usage(events: &[ProviderEvent]) -> UsageRecord {
    let all: Vec<UsageRecord> = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Usage(u) => Some(*u),
            _ => None,
        })
        .collect();
    assert_eq!(all.len(), 1, "exactly one usage per response");
    all[0]
}

fn stop(events: &[ProviderEvent]) -> StopReason {
    match events.last() {
        Some(ProviderEvent::Stop(reason)) => reason.clone(),
        other => panic!("the stream must end with Stop, got {other:?}"),
    }
}

fn record(uncached: u64, read: u64, write: u64, output: u64, reasoning: u64) -> UsageRecord {
    UsageRecord {
        uncached_input: uncached,
        cache_read: read,
        cache_write_5m: write,
        cache_write_1h: 0,
        output,
        reasoning,
        estimated: false,
        reported_cost: None,
        cache_reported: true,
    }
}

#[tokio::test]
async fn anthropic_a1_usage_is_overwritten_by_message_delta_and_server_tools_are_not_client_calls()
{
    let Some(events) = run(
        "anthropic/a1-sse-data-cache-read-6289-server-tool-use-sonnet.jsonl",
        AnthropicParser::new("anthropic"),
    )
    .await
    else {
        return;
    };
    assert_eq!(usage(&events), record(6, 6289, 3337, 198, 0));
    assert_eq!(
        text(&events),
        "The sum of the squares of the numbers 1 through 12 is **650**."
    );
    assert!(
        calls(&events).is_empty(),
        "server_tool_use runs on Anthropic's side"
    );
    assert_eq!(stop(&events), StopReason::EndTurn);
}

#[tokio::test]
async fn anthropic_a2_client_tool_use_arguments_are_parsed_when_whole() {
    let Some(events) = run(
        "anthropic/a2-sse-data-client-tool-use-haiku-4-5.jsonl",
        AnthropicParser::new("anthropic"),
    )
    .await
    else {
        return;
    };
    assert_eq!(
        calls(&events),
        vec![(
            "toolu_01KFbKqPYSuAKujiL6mTfzYA".to_string(),
            "json".to_string(),
            json!({"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]})
        )]
    );
    assert_eq!(usage(&events), record(849, 0, 0, 47, 0));
    assert_eq!(stop(&events), StopReason::ToolUse);
}

#[tokio::test]
async fn anthropic_a3_message_delta_input_tokens_override_message_start() {
    let Some(events) = run(
        "anthropic/a3-sse-data-message-delta-carries-input-tokens.jsonl",
        AnthropicParser::new("anthropic"),
    )
    .await
    else {
        return;
    };
    assert_eq!(text(&events), "pong");
    assert_eq!(usage(&events), record(61, 0, 0, 2, 0));
}

#[tokio::test]
async fn anthropic_a4_tool_use_without_arguments_is_an_empty_object() {
    let Some(events) = run(
        "anthropic/a4-sse-data-tool-use-no-args.jsonl",
        AnthropicParser::new("anthropic"),
    )
    .await
    else {
        return;
    };
    assert_eq!(text(&events), "I'll update the issue list for you.");
    assert_eq!(
        calls(&events),
        vec![(
            "toolu_01QE1WLsSVp5hy5Q3GmGTmjP".to_string(),
            "updateIssueList".to_string(),
            json!({})
        )]
    );
    assert_eq!(usage(&events), record(565, 0, 0, 48, 0));
    assert_eq!(stop(&events), StopReason::ToolUse);
}

#[tokio::test]
async fn anthropic_a5_raw_event_lines_and_compaction_iterations_are_summed() {
    let Some(events) = run(
        "anthropic/a5-raw-sse-event-lines-cache-read-55096-sonnet-4-6.sse",
        AnthropicParser::new("anthropic"),
    )
    .await
    else {
        return;
    };
    assert_eq!(text(&events), "Hello! 👋");
    // Two billed iterations: compaction (100 in, 55,096 read, 83 out) and the message (181 in, 8 out).
    assert_eq!(usage(&events), record(281, 55_096, 0, 91, 0));
}

#[test]
fn anthropic_a6_non_streamed_usage_maps_cache_write_and_read() {
    let Some(dir) = provider_fixtures() else {
        return;
    };
    let cassette = fixture_json(
        &dir,
        "anthropic/a6-nonstream-cache-write-then-read-sonnet-4-5.json",
    );
    let second = anthropic::usage_from_json(&cassette[1]["response"]["body"]["usage"]);
    assert_eq!(second, record(3, 1111, 418, 33, 0));
    assert_eq!(second.total_input(), 1532);
    // The request placed its marker on the top-level cache_control with a 5-minute TTL.
    assert_eq!(cassette[0]["request"]["body"]["cache_control"]["ttl"], "5m");
}

#[tokio::test]
async fn openai_c1_parallel_tool_calls_and_the_usage_chunk() {
    let Some(events) = run(
        "openai-chat/c1-chat-raw-sse-gpt-4o-parallel-tool_calls-usage-chunk.sse",
        ChatParser::new(Preset::OPENAI, String::new()),
    )
    .await
    else {
        return;
    };
    assert_eq!(
        calls(&events),
        vec![
            (
                "call_q2UyBRP7eXNTzAoR8lEhjc9Z".to_string(),
                "get_country".to_string(),
                json!({})
            ),
            (
                "call_b51ijcpFkDiTQG1bQzsrmtW5".to_string(),
                "get_product_name".to_string(),
                json!({})
            ),
        ]
    );
    assert_eq!(usage(&events), record(364, 0, 0, 40, 0));
    assert_eq!(stop(&events), StopReason::ToolUse);
}

#[test]
fn openai_c2_prompt_tokens_include_cached_and_written() {
    let Some(dir) = provider_fixtures() else {
        return;
    };
    let cassette = fixture_json(
        &dir,
        "openai-chat/c2-chat-nonstream-prompt_cache_key-cached-4012.json",
    );
    let first =
        openai_chat::usage_from_json(&cassette[0]["response"]["body"]["usage"], &Preset::OPENAI);
    let second =
        openai_chat::usage_from_json(&cassette[1]["response"]["body"]["usage"], &Preset::OPENAI);
    assert_eq!(first, record(8, 0, 4012, 4, 0));
    assert_eq!(second, record(8, 4012, 0, 4, 0));
    assert_eq!(second.total_input(), 4020);
    assert!(cassette[0]["request"]["body"]["prompt_cache_key"].is_string());
}

#[tokio::test]
async fn openai_c4_text_stream_with_obfuscation_fields() {
    let Some(events) = run(
        "openai-chat/c4-chat-sse-data-text-gpt-4-1-nano.jsonl",
        ChatParser::new(Preset::OPENAI, String::new()),
    )
    .await
    else {
        return;
    };
    assert!(text(&events).len() > 100);
    let u = usage(&events);
    assert_eq!((u.uncached_input, u.output), (16, 300));
    assert_eq!(stop(&events), StopReason::EndTurn);
}

#[tokio::test]
async fn responses_r1_function_call_and_terminal_usage() {
    let Some(events) = run(
        "openai-responses/r1-raw-sse-function_call-gpt-4o.sse",
        ResponsesParser::new("openai-responses"),
    )
    .await
    else {
        return;
    };
    assert_eq!(
        calls(&events),
        vec![(
            "call_kL0PCQV7M2WMoVX8V8OtYSAL".to_string(),
            "get_capital".to_string(),
            json!({"country": "France"})
        )]
    );
    let u = usage(&events);
    assert!(u.total_input() > 0 && u.output > 0);
    assert_eq!(stop(&events), StopReason::ToolUse);
}

#[tokio::test]
async fn responses_r2_cached_and_reasoning_tokens() {
    let Some(events) = run(
        "openai-responses/r2-raw-sse-web-search-response.completed-cached-8320.sse",
        ResponsesParser::new("openai-responses"),
    )
    .await
    else {
        return;
    };
    assert_eq!(usage(&events), record(1143, 8320, 0, 582, 512));
    assert!(!text(&events).is_empty());
    assert_eq!(stop(&events), StopReason::EndTurn);
}

#[test]
fn responses_r3_non_streamed_cached_tokens() {
    let Some(dir) = provider_fixtures() else {
        return;
    };
    let cassette = fixture_json(
        &dir,
        "openai-responses/r3-nonstream-prompt_cache_key-cached-4012.json",
    );
    let second = openai_responses::usage_from_json(&cassette[1]["response"]["body"]["usage"]);
    assert_eq!(second, record(8, 4012, 0, 5, 0));
}

#[tokio::test]
async fn xai_x1_reasoning_is_outside_completion_tokens() {
    let Some(events) = run(
        "xai/x1-chat-sse-data-tool-call-cached-290-reasoning-excluded.jsonl",
        ChatParser::new(Preset::XAI, String::new()),
    )
    .await
    else {
        return;
    };
    assert_eq!(
        calls(&events),
        vec![(
            "call_55117580".to_string(),
            "weather".to_string(),
            json!({"location": "San Francisco"})
        )]
    );
    // completion 26 + reasoning 196 = 222 billed output; 290 of 291 prompt tokens cached.
    assert_eq!(usage(&events), record(1, 290, 0, 222, 196));
    assert!(reasoning(&events).starts_with("First"));
}

#[tokio::test]
async fn xai_x2_responses_stream() {
    let Some(events) = run(
        "xai/x2-responses-sse-data-reasoning.jsonl",
        ResponsesParser::new("xai"),
    )
    .await
    else {
        return;
    };
    assert!(text(&events).starts_with("### Overview of Sonoran Cuisine"));
    assert!(usage(&events).output > 0);
}

#[tokio::test]
async fn zai_z1_reasoning_content_and_usage_on_the_finish_chunk() {
    let Some(events) = run(
        "zai/z1-raw-sse-glm-4-7-reasoning_content-usage-in-final-chunk.sse",
        ChatParser::new(Preset::ZAI, String::new()),
    )
    .await
    else {
        return;
    };
    // Z.ai counts reasoning inside completion_tokens: output stays 564.
    assert_eq!(usage(&events), record(13, 0, 0, 564, 561));
    assert!(!reasoning(&events).is_empty());
    assert_eq!(stop(&events), StopReason::EndTurn);
}

#[test]
fn zai_z2_and_moonshot_m1_non_streamed_usage() {
    let Some(dir) = provider_fixtures() else {
        return;
    };
    let z2 = fixture_json(&dir, "zai/z2-nonstream-glm.json");
    let body = if z2.is_array() {
        &z2[0]["response"]["body"]
    } else {
        &z2
    };
    assert_eq!(
        openai_chat::usage_from_json(&body["usage"], &Preset::ZAI),
        record(13, 0, 0, 437, 427)
    );
    let m1 = fixture_json(
        &dir,
        "moonshot/m1-SYNTHETIC-nonstream-top-level-cached_tokens.json",
    );
    assert_eq!(
        openai_chat::usage_from_json(&m1["usage"], &Preset::MOONSHOT),
        record(10, 10, 0, 30, 22)
    );
}

#[test]
fn openrouter_or1_cache_writes_then_reads_and_its_own_cost() {
    let Some(dir) = provider_fixtures() else {
        return;
    };
    let cassette = fixture_json(
        &dir,
        "openrouter/or1-cache_control-passthrough-cache_write-then-cached.json",
    );
    let first = openai_chat::usage_from_json(
        &cassette[0]["response"]["body"]["usage"],
        &Preset::OPENROUTER,
    );
    let second = openai_chat::usage_from_json(
        &cassette[1]["response"]["body"]["usage"],
        &Preset::OPENROUTER,
    );
    assert_eq!(
        (first.uncached_input, first.cache_write_5m, first.cache_read),
        (3, 3211, 0)
    );
    assert_eq!(
        (
            second.uncached_input,
            second.cache_write_5m,
            second.cache_read
        ),
        (3, 115, 3211)
    );
    assert_eq!(first.reported_cost, Some(0.01355025));
}

#[tokio::test]
async fn openrouter_or2_comment_lines_are_ignored_and_cost_is_read() {
    let Some(events) = run(
        "openrouter/or2-raw-sse-stream-usage-cache_write_tokens.sse",
        ChatParser::new(Preset::OPENROUTER, String::new()),
    )
    .await
    else {
        return;
    };
    let u = usage(&events);
    assert_eq!((u.uncached_input, u.output), (254, 5));
    assert_eq!(u.reported_cost, Some(0.000837));
}

#[tokio::test]
async fn a_stream_cut_before_its_terminal_event_is_an_error_not_an_answer() {
    let Some(dir) = provider_fixtures() else {
        return;
    };
    let body = fixture_sse(
        &dir,
        "anthropic/a2-sse-data-client-tool-use-haiku-4-5.jsonl",
    );
    let cut = &body[..body.len() / 2];
    let result = replay(cut, 64, AnthropicParser::new("anthropic")).await;
    assert!(
        matches!(
            result,
            Err(chatcli::provider::ProviderError::Truncated { .. })
        ),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_server_that_reports_no_usage_gets_a_local_o200k_estimate() {
    let body = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hello world\"},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n"
    );
    let request = r#"{"messages":[{"role":"user","content":"say hello world"}]}"#.to_string();
    let expected_input = chatcli::tokens::count(&request);
    let events = replay(
        body.as_bytes(),
        16,
        ChatParser::new(Preset::OPENAI, request),
    )
    .await
    .expect("parsed");
    let u = usage(&events);
    assert!(u.estimated);
    assert_eq!((u.uncached_input, u.output), (expected_input, 2));
}

#[tokio::test]
async fn gemini_g1_whole_function_call_with_its_thought_signature() {
    let Some(events) = run(
        "gemini/g1-stream-data-function-call-gemini3-thoughtsTokenCount.jsonl",
        chatcli::provider::gemini::GeminiParser::new(),
    )
    .await
    else {
        return;
    };
    assert_eq!(
        calls(&events),
        vec![(
            "call_1".to_string(),
            "weather".to_string(),
            json!({"location": "San Francisco"})
        )]
    );
    assert!(events.iter().any(|e| matches!(e, ProviderEvent::ReasoningBlock { signature: Some(s), .. } if s.starts_with("EqUCCqIC"))));
    // 15 candidates + 45 thoughts billed as output.
    assert_eq!(usage(&events), record(29, 0, 0, 60, 45));
    assert_eq!(
        stop(&events),
        StopReason::ToolUse,
        "finishReason STOP, but a function was called"
    );
}

#[tokio::test]
async fn gemini_g2_vertex_partial_args_are_assembled_per_call() {
    let Some(events) = run(
        "gemini/g2-vertex-stream-data-partialArgs-gemini-3-1.jsonl",
        chatcli::provider::gemini::GeminiParser::new(),
    )
    .await
    else {
        return;
    };
    let got: Vec<(String, serde_json::Value)> =
        calls(&events).into_iter().map(|(_, n, a)| (n, a)).collect();
    assert_eq!(
        got,
        vec![
            ("getWeather".to_string(), json!({"location": "Boston"})),
            (
                "getWeather".to_string(),
                json!({"location": "San Francisco"})
            ),
        ]
    );
    assert_eq!(usage(&events), record(26, 0, 0, 155, 132));
}

#[tokio::test]
async fn gemini_g3_cumulative_usage_keeps_the_last_never_sums() {
    let Some(events) = run(
        "gemini/g3-raw-sse-usageMetadata-cumulative-every-chunk.sse",
        chatcli::provider::gemini::GeminiParser::new(),
    )
    .await
    else {
        return;
    };
    assert_eq!(usage(&events), record(18, 0, 0, 80 + 35, 35));
    assert!(text(&events).starts_with("1\n2\n3"));
    assert_eq!(stop(&events), StopReason::EndTurn);
}

#[tokio::test]
async fn gemini_g6_raw_sse_function_call() {
    let Some(events) = run(
        "gemini/g6-raw-sse-streamGenerateContent-functionCall.sse",
        chatcli::provider::gemini::GeminiParser::new(),
    )
    .await
    else {
        return;
    };
    assert_eq!(calls(&events)[0].2, json!({"country": "France"}));
    assert_eq!(usage(&events), record(52, 0, 0, 5, 0));
}

#[test]
fn gemini_g5_implicit_cache_is_inside_prompt_tokens() {
    let Some(dir) = provider_fixtures() else {
        return;
    };
    let cassette = fixture_json(
        &dir,
        "gemini/g5-implicit-cache-cachedContentTokenCount-204-function-response.json",
    );
    let usage = chatcli::provider::gemini::usage_from_json(
        &cassette[1]["response"]["body"]["usageMetadata"],
    );
    assert_eq!(usage, record(373 - 204, 204, 0, 89 + 167, 167));
    assert_eq!(usage.total_input(), 373);
}

#[test]
fn ollama_o1_tool_calls_arrive_whole_and_usage_has_no_cache_counts() {
    let Some(dir) = provider_fixtures() else {
        return;
    };
    let text = std::fs::read_to_string(
        dir.join("ollama/o1-DOCS-EXAMPLE-api-chat-ndjson-stream-tool_calls.ndjson"),
    )
    .expect("read");
    let mut parser = chatcli::provider::ollama::OllamaParser::default();
    let mut events = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        events.extend(
            parser
                .feed(&chatcli::provider::http::SseEvent {
                    event: String::new(),
                    data: line.into(),
                })
                .expect("parsed"),
        );
    }
    assert_eq!(
        calls(&events),
        vec![(
            "call_1".to_string(),
            "get_weather".to_string(),
            json!({"city": "Tokyo"})
        )]
    );
    let u = usage(&events);
    assert_eq!(
        (u.uncached_input, u.output, u.cache_reported),
        (169, 15, false)
    );
    assert!(
        !u.figures().cache_reported,
        "the usage event says null, not 0"
    );
    assert_eq!(stop(&events), StopReason::ToolUse);
}

fn bedrock_bin(name: &str) -> Option<Vec<u8>> {
    let dir = provider_fixtures()?;
    Some(std::fs::read(dir.join("bedrock").join(name)).expect("fixture"))
}

fn decode_all(bytes: &[u8]) -> Vec<chatcli::provider::bedrock::Frame> {
    let mut frames = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let (frame, used) = chatcli::provider::bedrock::decode_frame(&bytes[at..])
            .expect("valid frame")
            .expect("whole frame");
        frames.push(frame);
        at += used;
    }
    frames
}

fn bedrock_events(bytes: &[u8]) -> Vec<ProviderEvent> {
    use chatcli::provider::http::Decoder;
    let mut decoder = chatcli::provider::bedrock::EventStreamDecoder::default();
    let mut parser = chatcli::provider::bedrock::BedrockParser::default();
    let mut events = Vec::new();
    // Odd-sized pieces: frames straddle reads, as on a network.
    for chunk in bytes.chunks(53) {
        for e in decoder.push(chunk).expect("decoded") {
            events.extend(parser.feed(&e).expect("parsed"));
        }
    }
    events.extend(parser.finish().expect("finished"));
    events
}

#[test]
fn bedrock_b2_frames_decode_with_their_crcs_to_the_recorded_events() {
    let Some(bytes) = bedrock_bin("b2-converse-stream-tooluse-nova-micro.eventstream.bin") else {
        return;
    };
    let Some(dir) = provider_fixtures() else {
        return;
    };
    let decoded: Vec<serde_json::Value> =
        std::fs::read_to_string(dir.join("bedrock/b2-decoded.jsonl"))
            .expect("read")
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
    let frames = decode_all(&bytes);
    assert_eq!(frames.len(), decoded.len());
    for (frame, expected) in frames.iter().zip(&decoded) {
        assert_eq!(
            frame.header(":event-type"),
            expected["headers"][":event-type"].as_str()
        );
        let payload: serde_json::Value = serde_json::from_slice(&frame.payload).expect("payload");
        assert_eq!(payload, expected["payload"]);
    }
    let events = bedrock_events(&bytes);
    let got = calls(&events);
    assert_eq!(got.len(), 1);
    assert!(text(&events).starts_with("<thinking> To find the temperature"));
    assert_eq!(stop(&events), StopReason::ToolUse);
    let u = usage(&events);
    assert!(u.uncached_input > 0 && u.output > 0);
    let mut flipped = bytes.clone();
    flipped[40] ^= 0x20;
    let err = chatcli::provider::bedrock::decode_frame(&flipped)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("CRC mismatch"), "{err}");
}

#[test]
fn bedrock_b3_claude_text_stream() {
    let Some(bytes) = bedrock_bin("b3-converse-stream-claude-sonnet-4-5.eventstream.bin") else {
        return;
    };
    let events = bedrock_events(&bytes);
    assert!(!text(&events).is_empty());
    assert_eq!(stop(&events), StopReason::EndTurn);
}

#[test]
fn bedrock_b5_message_stop_then_metadata() {
    let Some(dir) = provider_fixtures() else {
        return;
    };
    let text_lines = std::fs::read_to_string(
        dir.join("bedrock/b5-converse-stream-decoded-claude-text-messageStop-then-metadata.jsonl"),
    )
    .expect("read");
    let mut parser = chatcli::provider::bedrock::BedrockParser::default();
    let mut events = Vec::new();
    for line in text_lines.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).expect("json");
        let (name, payload) = v
            .as_object()
            .and_then(|o| o.iter().next())
            .expect("one key");
        events.extend(
            parser
                .feed(&chatcli::provider::http::SseEvent {
                    event: name.clone(),
                    data: payload.to_string(),
                })
                .expect("parsed"),
        );
    }
    assert!(text(&events).starts_with("Let me count"));
    assert!(matches!(
        events.last(),
        Some(ProviderEvent::Stop(StopReason::EndTurn))
    ));
    assert!(usage(&events).output > 0);
}

#[test]
fn bedrock_b1_second_request_reads_1322_from_cache() {
    let Some(dir) = provider_fixtures() else {
        return;
    };
    let cassette = fixture_json(
        &dir,
        "bedrock/b1-converse-cachePoint-write-then-read-sonnet-4-5.json",
    );
    let first =
        chatcli::provider::bedrock::usage_from_json(&cassette[0]["response"]["body"]["usage"]);
    let second =
        chatcli::provider::bedrock::usage_from_json(&cassette[1]["response"]["body"]["usage"]);
    assert_eq!((first.cache_write_5m, first.cache_read), (1322, 0));
    assert_eq!(
        (second.uncached_input, second.cache_read, second.output),
        (2, 1322, 5)
    );
    assert!(
        cassette[0]["request"]["body"]
            .to_string()
            .contains("cachePoint")
    );
}
