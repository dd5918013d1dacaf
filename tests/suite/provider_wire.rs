//! Whole conversations against a mock server, one per wire family: a tool call, its result sent
//! back in the family's shape, the final text, and usage summed over the two requests.

use std::sync::Arc;
use std::time::Duration;

use chatcli::agent;
use chatcli::protocol::{AgentEvent, Mode, Op};
use chatcli::provider::Provider;
use chatcli::provider::anthropic::{Anthropic, CacheTtl};
use chatcli::provider::http::Http;
use chatcli::provider::openai_chat::{OpenAiChat, Preset};
use chatcli::provider::openai_responses::OpenAiResponses;
use pretty_assertions::assert_eq;
use serde_json::Value;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::{count_markers, events_until, options, sse};

const NOTES: &str = "alpha\nbeta\n";

fn sse_response(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .insert_header("content-type", "text/event-stream")
        .set_body_string(body)
}

/// Mounts the two answers at `route`: first the tool call, then the final text.
async fn mount_two(server: &MockServer, route: &str, first: String, second: String) {
    Mock::given(method("POST"))
        .and(path(route))
        .respond_with(sse_response(first))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(server)
        .await;
    Mock::given(method("POST"))
        .and(path(route))
        .respond_with(sse_response(second))
        .with_priority(2)
        .mount(server)
        .await;
}

/// Runs one prompt through the real agent on `provider`; returns its events and request bodies.
async fn converse(
    provider: Arc<dyn Provider>,
    server: &MockServer,
) -> (Vec<AgentEvent>, Vec<Value>) {
    converse_with(provider, server, |_| {}).await
}

async fn converse_with(
    provider: Arc<dyn Provider>,
    server: &MockServer,
    tune: impl FnOnce(&mut chatcli::agent::AgentOptions),
) -> (Vec<AgentEvent>, Vec<Value>) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("notes.txt"), NOTES).expect("write");
    let mut opts = options(dir.path(), Mode::Agent);
    tune(&mut opts);
    let mut handle = agent::spawn(provider, opts);
    handle
        .ops
        .send(Op::Submit {
            text: "read notes.txt and tell me".into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    let bodies = server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).expect("request bodies are JSON"))
        .collect();
    (events, bodies)
}

fn final_text(events: &[AgentEvent]) -> (String, String) {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::TurnFinished { text, stop_reason } => {
                Some((text.clone(), stop_reason.clone()))
            }
            _ => None,
        })
        .expect("turn_finished")
}

/// (input, output, cache read) summed over usage events, and the session cost event's totals.
fn usage_sums(events: &[AgentEvent]) -> ((u64, u64, u64), (u64, u64, u64)) {
    let mut sum = (0, 0, 0);
    for e in events {
        if let AgentEvent::Usage { usage, .. } = e {
            sum.0 += usage.input_tokens;
            sum.1 += usage.output_tokens;
            sum.2 += usage.cache_read_tokens;
        }
    }
    let cost = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Cost {
                input_tokens,
                output_tokens,
                cache_read_tokens,
                ..
            } => Some((*input_tokens, *output_tokens, *cache_read_tokens)),
            _ => None,
        })
        .expect("cost");
    (sum, cost)
}

fn no_errors(events: &[AgentEvent]) {
    let errors: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Error { .. }))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[tokio::test]
async fn anthropic_tool_round_trip() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", "test-key"))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(sse_response(sse::anthropic(
            "Reading.",
            Some(("toolu_1", "read_file", r#"{"file":"notes.txt"}"#)),
            1500,
            0,
            1200,
            20,
        )))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(sse_response(sse::anthropic(
            "The notes say alpha, beta.",
            None,
            40,
            1200,
            60,
            12,
        )))
        .with_priority(2)
        .mount(&server)
        .await;
    let provider = Arc::new(Anthropic::new(
        Http::default(),
        "anthropic",
        server.uri(),
        "test-key".into(),
        "claude-sonnet-4-5".into(),
        CacheTtl::FiveMinutes,
    ));
    let (events, bodies) = converse(provider, &server).await;
    no_errors(&events);
    assert_eq!(
        final_text(&events),
        ("The notes say alpha, beta.".into(), "end_turn".into())
    );
    assert_eq!(bodies.len(), 2);
    let second = &bodies[1];
    let messages = second["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[1]["content"][1]["type"], "tool_use");
    assert_eq!(messages[1]["content"][1]["input"]["file"], "notes.txt");
    let result = &messages[2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_1");
    assert_eq!(result["content"], "1  alpha\n2  beta\n");
    for body in &bodies {
        assert!(count_markers(body) <= 4);
        let tools = body["tools"].as_array().expect("tools");
        assert!(tools.last().expect("a tool").get("cache_control").is_some());
        assert_eq!(body["stream"], true);
    }
    assert!(
        second["system"]
            .as_array()
            .expect("system blocks")
            .last()
            .expect("block")
            .get("cache_control")
            .is_some()
    );
    // Input = uncached + read + written, per request, summed.
    let (sum, cost) = usage_sums(&events);
    assert_eq!(sum, (1500 + 1200 + 40 + 1200 + 60, 20 + 12, 1200));
    assert_eq!(cost, sum);
}

#[tokio::test]
async fn openai_chat_tool_round_trip() {
    let server = MockServer::start().await;
    mount_two(
        &server,
        "/v1/chat/completions",
        sse::openai_chat(
            "",
            Some(("call_1", "read_file", r#"{"file":"notes.txt"}"#)),
            1000,
            0,
            15,
        ),
        sse::openai_chat("The notes say alpha, beta.", None, 1100, 1024, 9),
    )
    .await;
    let provider = Arc::new(OpenAiChat::new(
        Http::default(),
        Preset::OPENAI,
        format!("{}/v1", server.uri()),
        "sk-test".into(),
        "gpt-4.1".into(),
    ));
    let (events, bodies) = converse(provider, &server).await;
    no_errors(&events);
    assert_eq!(
        final_text(&events),
        ("The notes say alpha, beta.".into(), "end_turn".into())
    );
    let second = &bodies[1];
    assert_eq!(second["stream_options"]["include_usage"], true);
    assert_eq!(second["prompt_cache_key"], "test-session");
    let messages = second["messages"].as_array().expect("messages");
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["arguments"],
        r#"{"file":"notes.txt"}"#
    );
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], "call_1");
    assert_eq!(messages[3]["content"], "1  alpha\n2  beta\n");
    let (sum, cost) = usage_sums(&events);
    assert_eq!(sum, (2100, 24, 1024));
    assert_eq!(cost, sum);
}

#[tokio::test]
async fn openai_responses_tool_round_trip() {
    let server = MockServer::start().await;
    mount_two(
        &server,
        "/v1/responses",
        sse::responses(
            "",
            Some(("call_r1", "read_file", r#"{"file":"notes.txt"}"#)),
            900,
            0,
            18,
        ),
        sse::responses("The notes say alpha, beta.", None, 980, 896, 10),
    )
    .await;
    let provider = Arc::new(OpenAiResponses::new(
        Http::default(),
        "openai-responses",
        format!("{}/v1", server.uri()),
        "sk-test".into(),
        "gpt-4.1".into(),
    ));
    let (events, bodies) = converse(provider, &server).await;
    no_errors(&events);
    assert_eq!(
        final_text(&events),
        ("The notes say alpha, beta.".into(), "end_turn".into())
    );
    let second = &bodies[1];
    assert_eq!(second["prompt_cache_key"], "test-session");
    assert_eq!(second["store"], false);
    let input = second["input"].as_array().expect("input");
    assert_eq!(input[0]["type"], "message");
    assert_eq!(input[1]["type"], "function_call");
    assert_eq!(input[1]["call_id"], "call_r1");
    assert_eq!(input[2]["type"], "function_call_output");
    assert_eq!(input[2]["output"], "1  alpha\n2  beta\n");
    let (sum, cost) = usage_sums(&events);
    assert_eq!(sum, (1880, 28, 896));
    assert_eq!(cost, sum);
}

#[tokio::test]
async fn compatible_presets_send_their_own_headers() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .and(header("x-grok-conv-id", "test-session"))
        .respond_with(sse_response(sse::openai_chat("ok", None, 10, 0, 1)))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/inference/chat/completions"))
        .and(header("X-GitHub-Api-Version", "2022-11-28"))
        .and(header("Accept", "application/vnd.github+json"))
        .respond_with(sse_response(sse::openai_chat("ok", None, 10, 0, 1)))
        .mount(&server)
        .await;
    let xai = Arc::new(OpenAiChat::new(
        Http::default(),
        Preset::XAI,
        server.uri(),
        "k".into(),
        "grok-4".into(),
    ));
    let (events, _) = converse(xai, &server).await;
    no_errors(&events);
    let github = Arc::new(OpenAiChat::new(
        Http::default(),
        Preset::GITHUB_MODELS,
        format!("{}/inference", server.uri()),
        "k".into(),
        "openai/gpt-4.1".into(),
    ));
    let (events, _) = converse(github, &server).await;
    no_errors(&events);
}

#[tokio::test]
async fn openrouter_passes_cache_markers_through_for_anthropic_models() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(sse_response(sse::openai_chat("ok", None, 10, 0, 1)))
        .mount(&server)
        .await;
    let router = Arc::new(OpenAiChat::new(
        Http::default(),
        Preset::OPENROUTER,
        server.uri(),
        "k".into(),
        "anthropic/claude-sonnet-4.5".into(),
    ));
    let (_, bodies) = converse(router, &server).await;
    let body = &bodies[0];
    let markers = count_markers(body);
    assert!((1..=4).contains(&markers), "{markers} markers");
    assert!(
        body["messages"][0]["content"][0]
            .get("cache_control")
            .is_some()
    );
}

#[tokio::test]
async fn provider_errors_surface_their_own_message_and_end_the_turn() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(401).set_body_string(
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
        ))
        .mount(&server)
        .await;
    let provider = Arc::new(Anthropic::new(
        Http::new(Duration::from_secs(5), Duration::from_secs(5)),
        "anthropic",
        server.uri(),
        "bad".into(),
        "claude-sonnet-4-5".into(),
        CacheTtl::FiveMinutes,
    ));
    let (events, _) = converse(provider, &server).await;
    let message = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Error { message } => Some(message.clone()),
            _ => None,
        })
        .expect("an error event");
    assert_eq!(message, "anthropic returned HTTP 401: invalid x-api-key");
    assert_eq!(final_text(&events).1, "error");
}

#[tokio::test]
async fn anthropic_says_once_when_the_prefix_is_below_the_cache_minimum() {
    let server = MockServer::start().await;
    mount_two(
        &server,
        "/v1/messages",
        sse::anthropic(
            "",
            Some(("toolu_1", "read_file", r#"{"file":"notes.txt"}"#)),
            700,
            0,
            0,
            10,
        ),
        sse::anthropic("Done.", None, 760, 0, 0, 3),
    )
    .await;
    let provider = Arc::new(Anthropic::new(
        Http::default(),
        "anthropic",
        server.uri(),
        "k".into(),
        "claude-opus-4-5".into(),
        CacheTtl::FiveMinutes,
    ));
    let (events, _) = converse(provider, &server).await;
    let notices: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Notice { message } => Some(message.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].starts_with("prefix below the cache minimum for claude-opus-4-5"),
        "{}",
        notices[0]
    );
}

#[tokio::test]
async fn a_server_that_sends_nothing_hits_the_first_byte_timeout() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            sse_response(sse::openai_chat("late", None, 1, 0, 1)).set_delay(Duration::from_secs(5)),
        )
        .mount(&server)
        .await;
    let provider = Arc::new(OpenAiChat::new(
        Http::new(Duration::from_millis(200), Duration::from_millis(200)),
        Preset::OPENAI,
        server.uri(),
        "k".into(),
        "gpt-4.1".into(),
    ));
    // A missing first byte is retried (the reliability suite tests that); here once is enough.
    let (events, _) = converse_with(provider, &server, |o| o.max_retries = 0).await;
    let message = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Error { message } => Some(message.clone()),
            _ => None,
        })
        .expect("an error event");
    assert_eq!(message, "openai: no data for 200 ms (idle timeout)");
}

#[tokio::test]
async fn gemini_tool_round_trip_echoes_the_thought_signature() {
    let server = MockServer::start().await;
    mount_two(
        &server,
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
        sse::gemini(
            "",
            Some(("read_file", r#"{"file":"notes.txt"}"#)),
            1200,
            0,
            12,
        ),
        sse::gemini("The notes say alpha, beta.", None, 1300, 1024, 9),
    )
    .await;
    let provider = Arc::new(chatcli::provider::gemini::Gemini::new(
        Http::default(),
        server.uri(),
        "g-key".into(),
        "gemini-2.5-flash".into(),
    ));
    let (events, bodies) = converse(provider, &server).await;
    no_errors(&events);
    assert_eq!(
        final_text(&events),
        ("The notes say alpha, beta.".into(), "end_turn".into())
    );
    let requests = server.received_requests().await.unwrap_or_default();
    assert_eq!(
        requests[0]
            .headers
            .get("x-goog-api-key")
            .and_then(|v| v.to_str().ok()),
        Some("g-key")
    );
    assert_eq!(requests[0].url.query(), Some("alt=sse"));
    let second = &bodies[1];
    assert!(
        second["systemInstruction"]["parts"][0]["text"]
            .as_str()
            .is_some()
    );
    let contents = second["contents"].as_array().expect("contents");
    assert_eq!(contents[1]["role"], "model");
    assert_eq!(contents[1]["parts"][0]["functionCall"]["name"], "read_file");
    assert_eq!(
        contents[1]["parts"][0]["thoughtSignature"], "c2lnLTE=",
        "the signature goes back on its part"
    );
    assert_eq!(
        contents[2]["parts"][0]["functionResponse"]["name"],
        "read_file"
    );
    assert_eq!(
        contents[2]["parts"][0]["functionResponse"]["response"]["content"],
        "1  alpha\n2  beta\n"
    );
    assert!(
        second["tools"][0]["functionDeclarations"]
            .as_array()
            .is_some_and(|d| !d.is_empty())
    );
    let (sum, cost) = usage_sums(&events);
    assert_eq!(sum, (2500, 21, 1024));
    assert_eq!(cost, sum);
}

#[tokio::test]
async fn ollama_tool_round_trip_over_ndjson() {
    let server = MockServer::start().await;
    let ndjson = |body: String| {
        ResponseTemplate::new(200)
            .insert_header("content-type", "application/x-ndjson")
            .set_body_string(body)
    };
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(ndjson(sse::ollama(
            "",
            Some(("read_file", r#"{"file":"notes.txt"}"#)),
            500,
            20,
        )))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(ndjson(sse::ollama(
            "The notes say alpha, beta.",
            None,
            560,
            9,
        )))
        .with_priority(2)
        .mount(&server)
        .await;
    let provider = Arc::new(chatcli::provider::ollama::Ollama::new(
        Http::default(),
        &server.uri().replace("http://", ""),
        "llama3.2".into(),
    ));
    let (events, bodies) = converse(provider, &server).await;
    no_errors(&events);
    assert_eq!(final_text(&events).0, "The notes say alpha, beta.");
    let messages = bodies[1]["messages"].as_array().expect("messages");
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["name"],
        "read_file"
    );
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_name"], "read_file");
    let usage: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Usage { usage, .. } => Some(*usage),
            _ => None,
        })
        .collect();
    assert!(
        usage.iter().all(|u| !u.cache_reported),
        "Ollama reports no cache counts"
    );
    let line = serde_json::to_string(
        &events
            .iter()
            .find(|e| matches!(e, AgentEvent::Usage { .. }))
            .expect("usage"),
    )
    .expect("json");
    assert!(line.contains("\"cache_read_tokens\":null"), "{line}");
}

#[tokio::test]
async fn bedrock_tool_round_trip_signed_with_sigv4() {
    let server = MockServer::start().await;
    let stream = |body: Vec<u8>| {
        ResponseTemplate::new(200).set_body_raw(body, "application/vnd.amazon.eventstream")
    };
    let route = "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream";
    Mock::given(method("POST"))
        .and(path(route))
        .respond_with(stream(sse::bedrock(
            "",
            Some(("tooluse_1", "read_file", r#"{"file":"notes.txt"}"#)),
            900,
            0,
            20,
        )))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(route))
        .respond_with(stream(sse::bedrock(
            "The notes say alpha, beta.",
            None,
            40,
            1024,
            9,
        )))
        .with_priority(2)
        .mount(&server)
        .await;
    let provider = Arc::new(chatcli::provider::bedrock::Bedrock::new(
        Http::default(),
        server.uri(),
        "eu-west-1".into(),
        chatcli::provider::bedrock::Auth::SigV4 {
            access_key: "AKIDEXAMPLE".into(),
            secret_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
            session_token: Some("session-token-xyz".into()),
        },
        "anthropic.claude-sonnet-4-5-20250929-v1:0".into(),
    ));
    let (events, bodies) = converse(provider, &server).await;
    no_errors(&events);
    assert_eq!(final_text(&events).0, "The notes say alpha, beta.");
    let requests = server.received_requests().await.unwrap_or_default();
    let header = |name: &str| {
        requests[0]
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let auth = header("authorization");
    let re = regex::Regex::new(r"^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/\d{8}/eu-west-1/bedrock/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=[0-9a-f]{64}$").expect("regex");
    let signed = re
        .captures(&auth)
        .unwrap_or_else(|| panic!("malformed Authorization: {auth}"))[1]
        .to_string();
    assert!(
        signed.split(';').any(|h| h == "host") && signed.contains("x-amz-date"),
        "{signed}"
    );
    assert_eq!(header("x-amz-security-token"), "session-token-xyz");
    let host = server.uri().replace("http://", "");
    assert_eq!(
        header("host"),
        host,
        "the signed host is the one requested, port included"
    );
    let second = &bodies[1];
    let messages = second["messages"].as_array().expect("messages");
    assert_eq!(
        messages[1]["content"][0]["toolUse"]["toolUseId"],
        "tooluse_1"
    );
    assert_eq!(
        messages[2]["content"][0]["toolResult"]["content"][0]["text"],
        "1  alpha\n2  beta\n"
    );
    let markers = second.to_string().matches("cachePoint").count();
    assert!((1..=4).contains(&markers), "{markers} cachePoints");
    assert!(
        second["toolConfig"]["tools"]
            .as_array()
            .and_then(|t| t.last())
            .is_some_and(|t| t.get("cachePoint").is_some())
    );
    let (sum, cost) = usage_sums(&events);
    assert_eq!(sum, (900 + 40 + 1024, 29, 1024));
    assert_eq!(cost, sum);
}

#[tokio::test]
async fn copilot_exchanges_its_token_and_refreshes_it_before_expiry() {
    use wiremock::matchers::header as has_header;
    let server = MockServer::start().await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    // A token that expires within the refresh margin: every request exchanges again.
    Mock::given(method("GET"))
        .and(path("/copilot_internal/v2/token"))
        .and(has_header("authorization", "token gho_oauth"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "token": "tid=short-lived", "expires_at": now + 30, "endpoints": {"api": server.uri()}
        })))
        .expect(2)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .and(has_header("authorization", "Bearer tid=short-lived"))
        .and(has_header("copilot-integration-id", "vscode-chat"))
        .respond_with(sse_response(sse::openai_chat(
            "Hi from Copilot.",
            None,
            20,
            0,
            4,
        )))
        .mount(&server)
        .await;
    let provider = Arc::new(chatcli::provider::copilot::Copilot::new(
        Http::default(),
        server.uri(),
        "gho_oauth".into(),
        "gpt-4.1".into(),
    ));
    let dir = tempfile::tempdir().expect("tempdir");
    let mut handle = agent::spawn(provider, options(dir.path(), Mode::Chat));
    for text in ["one", "two"] {
        handle
            .ops
            .send(Op::Submit {
                text: text.into(),
                mode: Mode::Chat,
            })
            .expect("alive");
        let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
        no_errors(&events);
        assert_eq!(final_text(&events).0, "Hi from Copilot.");
    }
}

#[tokio::test]
async fn copilot_device_flow_stores_the_token_privately() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/login/device/code"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "device_code": "dev-1", "user_code": "ABCD-1234", "verification_uri": "https://github.com/login/device", "interval": 1, "expires_in": 60
        })))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/login/oauth/access_token"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"error": "authorization_pending"})),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/login/oauth/access_token"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"access_token": "gho_device"})),
        )
        .with_priority(2)
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tempdir");
    let mut out = Vec::new();
    chatcli::provider::copilot::device_login(&server.uri(), home.path(), &mut out)
        .await
        .expect("signed in");
    let printed = String::from_utf8_lossy(&out);
    assert!(printed.contains("enter the code ABCD-1234"), "{printed}");
    assert_eq!(
        chatcli::provider::copilot::stored_token(home.path()).as_deref(),
        Some("gho_device")
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(chatcli::provider::copilot::token_path(home.path()))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[tokio::test]
async fn stackspot_token_then_chat_keeps_the_conversation_and_runs_as_chat_only() {
    use wiremock::matchers::{body_string_contains, header as has_header};
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/my-realm/oidc/oauth/token"))
        .and(body_string_contains("grant_type=client_credentials"))
        .and(body_string_contains("client_id=cid"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(serde_json::json!({"access_token": "ss-token", "expires_in": 1200})),
        )
        .expect(1)
        .mount(&server)
        .await;
    let answer = "data: {\"message\": \"Hel\"}\n\ndata: {\"message\": \"lo.\"}\n\ndata: {\"message\": \"\", \"conversation_id\": \"conv-1\", \"tokens\": {\"user\": 5, \"enrichment\": 10, \"input\": 15, \"output\": 3}}\n\n";
    Mock::given(method("POST"))
        .and(path("/v1/agent/agent-7/chat"))
        .and(has_header("authorization", "Bearer ss-token"))
        .respond_with(sse_response(answer.to_string()))
        .mount(&server)
        .await;
    let provider = Arc::new(chatcli::provider::stackspot::StackSpot::new(
        Http::default(),
        chatcli::provider::stackspot::Settings {
            idm: server.uri(),
            inference: server.uri(),
            realm: "my-realm".into(),
            client_id: "cid".into(),
            client_secret: "csecret".into(),
            agent_id: "agent-7".into(),
        },
    ));
    let dir = tempfile::tempdir().expect("tempdir");
    let mut handle = agent::spawn(provider, options(dir.path(), Mode::Agent));
    let mut all = Vec::new();
    for text in ["first", "second"] {
        handle
            .ops
            .send(Op::Submit {
                text: text.into(),
                mode: Mode::Agent,
            })
            .expect("alive");
        let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
        no_errors(&events);
        assert_eq!(final_text(&events).0, "Hello.");
        all.extend(events);
    }
    assert!(all.iter().any(|e| matches!(e, AgentEvent::Notice { message } if message.starts_with("stackspot runs as chat only"))));
    let usage = all.iter().find_map(|e| match e {
        AgentEvent::Usage { usage, .. } => Some((usage.input_tokens, usage.output_tokens)),
        _ => None,
    });
    assert_eq!(usage, Some((15, 3)));
    let chats: Vec<serde_json::Value> = server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter(|r| r.url.path().ends_with("/chat"))
        .map(|r| serde_json::from_slice(&r.body).expect("json"))
        .collect();
    assert_eq!(
        chats[0]["user_prompt"]
            .as_str()
            .map(|s| s.starts_with("first")),
        Some(true)
    );
    assert!(chats[0].get("conversation_id").is_none());
    assert_eq!(
        chats[1]["conversation_id"], "conv-1",
        "the second prompt continues the server's conversation"
    );
    assert_eq!(chats[1]["streaming"], true);
}

/// Runs the Anthropic round trip with `CHATCLI_PROMPT_CACHE` on or off; returns the bodies.
async fn anthropic_bodies(prompt_cache: bool) -> Vec<Value> {
    let server = MockServer::start().await;
    mount_two(
        &server,
        "/v1/messages",
        sse::anthropic(
            "Reading.",
            Some(("toolu_1", "read_file", r#"{"file":"notes.txt"}"#)),
            1500,
            0,
            1200,
            20,
        ),
        sse::anthropic("alpha, beta.", None, 40, 1200, 60, 12),
    )
    .await;
    let mut http = Http::default();
    http.prompt_cache = prompt_cache;
    let provider = Arc::new(Anthropic::new(
        http,
        "anthropic",
        server.uri(),
        "test-key".into(),
        "claude-sonnet-4-5".into(),
        CacheTtl::OneHour,
    ));
    let (events, bodies) = converse(provider, &server).await;
    no_errors(&events);
    let headers = server.received_requests().await.unwrap_or_default();
    for request in &headers {
        assert_eq!(
            request.headers.contains_key("anthropic-beta"),
            prompt_cache,
            "the extended-TTL beta header only steers the cache"
        );
    }
    bodies
}

#[tokio::test]
async fn prompt_cache_off_sends_the_same_request_without_cache_hints() {
    let on = anthropic_bodies(true).await;
    let off = anthropic_bodies(false).await;
    assert_eq!((on.len(), off.len()), (2, 2));
    // The two runs differ only in their workspace folder and, across a minute, the clock.
    let dir = regex::Regex::new(r"/tmp/\.tmp\w+").expect("regex");
    let time = regex::Regex::new(r"\d\d:\d\d local time").expect("regex");
    for (on, off) in on.iter().zip(&off) {
        assert!(count_markers(on) > 0);
        assert_eq!(count_markers(off), 0, "{off}");
        let mut stripped = on.clone();
        chatcli::provider::cache_markers::strip_body(&mut stripped);
        let normal = |v: &Value| {
            let text = dir.replace_all(&v.to_string(), "[dir]").to_string();
            time.replace_all(&text, "[time]").to_string()
        };
        for field in ["model", "tools", "messages", "max_tokens", "stream"] {
            assert_eq!(normal(&stripped[field]), normal(&off[field]), "{field}");
        }
    }
}
