//! Real models on local servers, without the server: a tool call cut off mid-arguments never
//! breaks a session (scripted provider, every wire's body checked), a server error that names
//! the request is reported at once (and on stderr with `--json`), and an unknown model on a
//! loopback server gets the server's name and window and costs $0 (wiremock as the server).

use std::time::Duration;

use chatcli::agent;
use chatcli::conversation::{ContentBlock, Role};
use chatcli::protocol::{AgentEvent, Mode, Op};
use chatcli::provider::anthropic::CacheTtl;
use chatcli::provider::{ProviderEvent, StopReason, UsageRecord};
use serde_json::{Value, json};

use crate::common::scripted::{Scripted, respond};
use crate::common::{events_until, options};

async fn prompt(handle: &mut agent::AgentHandle, text: &str) -> Vec<AgentEvent> {
    handle
        .ops
        .send(Op::Submit {
            text: text.into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    events_until(handle, |e| matches!(e, AgentEvent::Cost { .. })).await
}

fn usage() -> ProviderEvent {
    ProviderEvent::Usage(UsageRecord {
        uncached_input: 100,
        output: 10,
        ..UsageRecord::default()
    })
}

#[tokio::test]
async fn a_call_cut_off_by_max_tokens_never_runs_and_goes_back_as_empty_arguments_on_every_wire() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("notes.md"), "secret plans").expect("write");
    let cut = "{\"path\": \"notes.m";
    // As the Chat Completions parser reports it: no id while streaming, `call_0` at the end.
    let provider = Scripted::new(
        vec![
            vec![
                ProviderEvent::ToolCallStarted {
                    index: 0,
                    id: String::new(),
                    name: "read_file".into(),
                },
                ProviderEvent::ToolCallArgs {
                    index: 0,
                    fragment: cut.into(),
                },
                ProviderEvent::ToolCall {
                    id: "call_0".into(),
                    name: "read_file".into(),
                    args: Value::String(cut.into()),
                },
                usage(),
                ProviderEvent::Stop(StopReason::MaxTokens),
            ],
            respond("I could not read it.", &[]),
        ],
        Duration::ZERO,
    );
    let mut opts = options(dir.path(), Mode::Agent);
    opts.smart_route = chatcli::agent::routing::RouteMode::Off;
    let mut handle = agent::spawn(provider.clone(), opts);
    let events = prompt(&mut handle, "read the notes").await;

    let started = events
        .iter()
        .position(|e| matches!(e, AgentEvent::ToolCallStarted { name, .. } if name == "read_file"));
    let call = events
        .iter()
        .position(|e| matches!(e, AgentEvent::ToolCall { .. }));
    let (Some(started), Some(call)) = (started, call) else {
        panic!("tool_call_started then tool_call: {events:#?}");
    };
    assert!(started < call, "announced before it completed");
    let id_of = |e: &AgentEvent| match e {
        AgentEvent::ToolCallStarted { id, .. } | AgentEvent::ToolCall { id, .. } => id.clone(),
        _ => String::new(),
    };
    assert_eq!(
        id_of(&events[started]),
        id_of(&events[call]),
        "one id from start to end"
    );
    let result = events.iter().find_map(|e| match e {
        AgentEvent::ToolResult { ok, output, .. } => Some((*ok, output.clone())),
        _ => None,
    });
    let (ok, output) = result.expect("a result for the cut-off call");
    assert!(!ok);
    assert!(
        output.contains("cut off by the output limit (max_tokens)"),
        "{output}"
    );
    assert!(
        !output.contains("secret plans"),
        "the call never ran: {output}"
    );
    assert!(
        !events.iter().any(|e| matches!(e, AgentEvent::Error { .. })),
        "{events:#?}"
    );

    let requests = provider.requests();
    assert_eq!(requests.len(), 2, "the loop went on with the error result");
    let next = &requests[1];
    let input = next
        .messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(|m| m.tool_uses())
        .map(|(_, _, input)| input.clone())
        .next();
    assert_eq!(input, Some(json!({})), "the history carries {{}} for it");
    let answered = next.messages.iter().flat_map(|m| &m.content).any(|b| {
        matches!(b, ContentBlock::ToolResult { content, is_error: true, .. } if content.contains("max_tokens"))
    });
    assert!(answered, "the model reads why the call did not run");

    // Every wire sends `{}`, never the partial text a server refuses to parse.
    let chat = chatcli::provider::openai_chat::build_body(
        next,
        &chatcli::provider::openai_chat::Preset::compatible("openai"),
    );
    let calls: Vec<&Value> = chat["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["function"]["arguments"], "{}");
    let responses = chatcli::provider::openai_responses::build_body(next);
    let item = responses["input"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|i| i["type"] == "function_call")
        .cloned()
        .unwrap_or_default();
    assert_eq!(item["arguments"], "{}", "{responses}");
    let anthropic = chatcli::provider::anthropic::build_body(next, CacheTtl::default());
    let tool_use = anthropic["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .find(|b| b["type"] == "tool_use")
        .cloned()
        .unwrap_or_default();
    assert_eq!(tool_use["input"], json!({}));
    let _ = handle.ops.send(Op::Shutdown);
}

#[tokio::test]
async fn a_stream_dropped_mid_call_closes_the_call_and_the_next_prompt_works() {
    let dir = tempfile::tempdir().expect("tempdir");
    let provider = Scripted::new(
        vec![
            vec![
                ProviderEvent::ToolCallStarted {
                    index: 0,
                    id: "toolu_1".into(),
                    name: "list_dir".into(),
                },
                ProviderEvent::ToolCallArgs {
                    index: 0,
                    fragment: "{\"pa".into(),
                },
                // The stream ends here: no ToolCall, no Stop.
            ],
            respond("Hello again.", &[]),
        ],
        Duration::ZERO,
    );
    let mut opts = options(dir.path(), Mode::Agent);
    opts.smart_route = chatcli::agent::routing::RouteMode::Off;
    let mut handle = agent::spawn(provider.clone(), opts);
    let events = prompt(&mut handle, "list the files").await;
    assert!(events.iter().any(
        |e| matches!(e, AgentEvent::ToolCallStarted { id, name } if id == "toolu_1" && name == "list_dir")
    ));
    let closed = events.iter().find_map(|e| match e {
        AgentEvent::ToolResult { id, ok, error, .. } if id == "toolu_1" => {
            Some((*ok, error.clone().unwrap_or_default()))
        }
        _ => None,
    });
    let (ok, error) = closed.expect("the started call is closed: {events:#?}");
    assert!(!ok && error.contains("dropped stream"), "{error}");
    assert!(events.iter().any(|e| matches!(e, AgentEvent::Error { .. })));

    let events = prompt(&mut handle, "say hello").await;
    assert!(
        !events.iter().any(|e| matches!(e, AgentEvent::Error { .. })),
        "{events:#?}"
    );
    let finished = events.iter().find_map(|e| match e {
        AgentEvent::TurnFinished { stop_reason, .. } => Some(stop_reason.clone()),
        _ => None,
    });
    assert_eq!(finished.as_deref(), Some("end_turn"));
    // The scripted provider checks each history is valid; the dropped call is not in it.
    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[1]
            .messages
            .iter()
            .flat_map(|m| m.tool_uses())
            .count(),
        0
    );
    let _ = handle.ops.send(Op::Shutdown);
}

#[tokio::test]
async fn a_resumed_history_with_unparsable_arguments_is_repaired() {
    let dir = tempfile::tempdir().expect("tempdir");
    let history = vec![
        chatcli::conversation::Message::user_text("read it"),
        chatcli::conversation::Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: "call_0".into(),
                name: "read_file".into(),
                input: Value::String("{\"path\": \"a".into()),
            }],
        },
        chatcli::conversation::Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "call_0".into(),
                content: "error".into(),
                is_error: true,
            }],
        },
        chatcli::conversation::Message {
            role: Role::Assistant,
            content: vec![ContentBlock::Text {
                text: "Sorry.".into(),
            }],
        },
    ];
    let provider = Scripted::new(vec![respond("Fine.", &[])], Duration::ZERO);
    let mut opts = options(dir.path(), Mode::Chat);
    opts.resume = Some(chatcli::session_log::Resumed {
        id: "old".into(),
        path: dir.path().join("old.jsonl"),
        events: Vec::new(),
        history,
        skipped: 0,
        repairs: Vec::new(),
    });
    let mut handle = agent::spawn(provider.clone(), opts);
    handle
        .ops
        .send(Op::Submit {
            text: "again".into(),
            mode: Mode::Chat,
        })
        .expect("agent alive");
    events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    let requests = provider.requests();
    let inputs: Vec<Value> = requests[0]
        .messages
        .iter()
        .flat_map(|m| m.tool_uses())
        .map(|(_, _, input)| input.clone())
        .collect();
    assert_eq!(inputs, vec![json!({})]);
    let _ = handle.ops.send(Op::Shutdown);
}

#[tokio::test]
async fn an_unknown_window_is_never_zero_and_is_said_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let provider = Scripted::new(vec![respond("Hi.", &[])], Duration::ZERO);
    let mut opts = agent::AgentOptions::new("w".into(), Mode::Chat, dir.path().to_path_buf());
    opts.pricing = None;
    let mut handle = agent::spawn(provider, opts);
    let events = prompt(&mut handle, "hello").await;
    let window = events.iter().find_map(|e| match e {
        AgentEvent::SessionConfigured { context_window, .. } => Some(*context_window),
        _ => None,
    });
    assert_eq!(window, Some(agent::FALLBACK_CONTEXT_WINDOW));
    let said: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Notice { message } if message.contains("context window") => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(said.len(), 1, "{events:#?}");
    assert!(said[0].contains("8192"), "{}", said[0]);
    let _ = handle.ops.send(Op::Shutdown);
}

fn chatcli_exec(home: &std::path::Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_chatcli"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("CHATCLI_HOME", home)
        .current_dir(home);
    cmd
}

#[tokio::test]
async fn a_server_error_that_names_the_request_is_not_retried_and_json_mode_says_it_on_stderr() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(500).set_body_json(json!({"error": {
            "code": 500,
            "message": "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 1, column 12",
            "type": "server_error"}})))
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tempdir");
    let mut cmd = chatcli_exec(home.path());
    cmd.env("OPENAI_API_KEY", "sk-none")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
        .env("OPENAI_MODEL", "local")
        .args(["exec", "--json", "--mode", "chat", "hello"]);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run chatcli");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    assert!(
        lines[0].starts_with("chatcli: openai returned HTTP 500: Failed to parse")
            && lines[0].contains("not retried"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("\"retrying\""), "{stdout}");
    let posts = server
        .received_requests()
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.method.as_str() == "POST")
        .count();
    assert_eq!(posts, 1, "sent once, never again");
}

#[tokio::test]
async fn an_unknown_model_on_a_loopback_server_is_named_by_it_gets_its_window_and_costs_nothing() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"object": "list",
            "data": [{"id": "smol-local.gguf", "object": "model", "meta": {"n_ctx": 3000, "n_ctx_train": 8192}}]})))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(crate::common::sse::openai_chat(
                    "Hi from a small model.",
                    None,
                    900,
                    0,
                    7,
                )),
        )
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tempdir");
    let mut cmd = chatcli_exec(home.path());
    cmd.env("OPENAI_API_KEY", "sk-none")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
        .args(["exec", "--json", "--mode", "chat", "hello"]);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run chatcli");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let configured = events
        .iter()
        .find(|e| e["type"] == "session_configured")
        .expect("session_configured");
    assert_eq!(configured["model"], "smol-local.gguf");
    assert_eq!(configured["context_window"], 3000);
    let usage = events.iter().find(|e| e["type"] == "usage").expect("usage");
    assert_eq!(usage["cost_usd"], 0.0, "{usage}");
    assert!(
        !events.iter().any(|e| e["type"] == "notice"
            && e["message"]
                .as_str()
                .unwrap_or_default()
                .contains("cost unknown")),
        "{stdout}"
    );
    let requests = server.received_requests().await.unwrap_or_default();
    let post = requests
        .iter()
        .find(|r| r.method.as_str() == "POST")
        .expect("a chat request");
    let body: Value = serde_json::from_slice(&post.body).expect("json body");
    assert_eq!(body["model"], "smol-local.gguf");
    let max = body["max_completion_tokens"]
        .as_u64()
        .or_else(|| body["max_tokens"].as_u64())
        .unwrap_or(u64::MAX);
    assert!(
        max < 3000,
        "max_tokens fits what the window has left: {max}"
    );
}

#[test]
fn a_streaming_call_shows_in_the_tool_panel_with_its_bytes_and_the_meter_counts_it() {
    use crate::common::{draw, screen_text};
    let (tx, _ops) = chatcli::protocol::op_channel();
    let mut app = chatcli::ui::App::new(tx, Mode::Agent, "openai".into(), "smol".into());
    app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
    app.handle_agent_event(AgentEvent::ToolCallStarted {
        id: "call_7".into(),
        name: "write_file".into(),
    });
    app.handle_agent_event(AgentEvent::ToolCallProgress {
        id: "call_7".into(),
        bytes: 4000,
    });
    let screen = screen_text(&draw(&mut app));
    assert!(screen.contains("write_file"), "{screen}");
    assert!(screen.contains("receiving 4kB"), "{screen}");
    // 4 + 10 bytes streamed, about 1,004 tokens, before any usage arrived.
    assert!(screen.contains("0↑ 1k↓"), "{screen}");
    assert!(!screen.contains("no tool calls yet"), "{screen}");

    // The finished call takes the same line, not a second one.
    app.handle_agent_event(AgentEvent::ToolCall {
        id: "call_7".into(),
        name: "write_file".into(),
        args: json!({"path": "notes.md", "content": "x"}),
    });
    let screen = screen_text(&draw(&mut app));
    assert!(screen.contains("Tools (1)"), "{screen}");
    assert!(
        screen.contains("notes.md") && !screen.contains("receiving"),
        "{screen}"
    );

    // The usage replaces the estimate.
    app.handle_agent_event(AgentEvent::Usage {
        turn: 1,
        usage: chatcli::protocol::UsageFigures {
            input_tokens: 500,
            output_tokens: 1100,
            ..Default::default()
        },
        cost_usd: Some(0.0),
    });
    let screen = screen_text(&draw(&mut app));
    assert!(screen.contains("500↑ 1.1k↓"), "{screen}");
}
