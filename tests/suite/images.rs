//! Images (#38): `@shot.png` attaches the picture to that prompt, in each wire's own shape
//! (Anthropic image blocks, OpenAI Chat `image_url` and Responses `input_image` data URLs,
//! Gemini `inline_data`, Bedrock image bytes); a provider without images says it was not
//! attached; an image over the limit is refused with what to do.

use std::sync::Arc;

use chatcli::agent;
use chatcli::protocol::{AgentEvent, Mode, Op};
use chatcli::provider::Provider;
use chatcli::provider::http::Http;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::{events_until, options, sse};

/// A PNG of 640×480 as far as any header reader goes (signature, IHDR), and some bytes after.
fn png() -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    bytes.extend(640u32.to_be_bytes());
    bytes.extend(480u32.to_be_bytes());
    bytes.extend([8, 6, 0, 0, 0, 1, 2, 3, 4]);
    bytes
}

fn png_base64() -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(png())
}

/// Sends "what is in @shot.png?" in chat mode to `provider` (answered by `answer` at `route`);
/// returns the events and the one request body.
async fn ask_about_the_shot(
    provider: Arc<dyn Provider>,
    server: &MockServer,
    route: &str,
    answer: ResponseTemplate,
) -> (Vec<AgentEvent>, Value) {
    Mock::given(method("POST"))
        .and(path(route))
        .respond_with(answer)
        .mount(server)
        .await;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("shot.png"), png()).expect("write");
    let mut handle = agent::spawn(provider, options(dir.path(), Mode::Chat));
    handle
        .ops
        .send(Op::Submit {
            text: "what is in @shot.png?".into(),
            mode: Mode::Chat,
        })
        .expect("alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    let body = crate::common::posts(server)
        .await
        .first()
        .map(|r| serde_json::from_slice(&r.body).expect("json"))
        .unwrap_or_default();
    (events, body)
}

fn sse_of(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .insert_header("content-type", "text/event-stream")
        .set_body_string(body)
}

/// The parts of the last message whose `key` equals `kind`.
fn parts_of<'a>(messages: &'a Value, parts: &str, key: &str, kind: &str) -> Vec<&'a Value> {
    messages
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m[parts].as_array())
        .map(|parts| parts.iter().filter(|p| p[key] == kind).collect())
        .unwrap_or_default()
}

fn notices(events: &[AgentEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Notice { message } => Some(message.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn anthropic_gets_an_image_block() {
    let server = MockServer::start().await;
    let provider = Arc::new(chatcli::provider::anthropic::Anthropic::new(
        Http::default(),
        "anthropic",
        server.uri(),
        "test-key".into(),
        "claude-sonnet-4-5".into(),
        chatcli::provider::anthropic::CacheTtl::FiveMinutes,
    ));
    let answer = sse_of(sse::anthropic("A test card.", None, 900, 0, 0, 5));
    let (events, body) = ask_about_the_shot(provider, &server, "/v1/messages", answer).await;
    let images = parts_of(&body["messages"], "content", "type", "image");
    assert_eq!(
        images,
        [
            &json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png_base64()}})
        ],
        "{body}"
    );
    // Anthropic's formula: 640×480 / 750 = 410 tokens.
    assert!(
        notices(&events).contains("640×480 px"),
        "{}",
        notices(&events)
    );
    assert!(notices(&events).contains("~410 tokens by anthropic's formula"));
}

#[tokio::test]
async fn openai_chat_gets_an_image_url_data_url() {
    let server = MockServer::start().await;
    let provider = Arc::new(chatcli::provider::openai_chat::OpenAiChat::new(
        Http::default(),
        chatcli::provider::openai_chat::Preset::OPENAI,
        format!("{}/v1", server.uri()),
        "sk-test".into(),
        "gpt-4.1".into(),
    ));
    let answer = sse_of(sse::openai_chat("A test card.", None, 900, 0, 5));
    let (_, body) = ask_about_the_shot(provider, &server, "/v1/chat/completions", answer).await;
    let images = parts_of(&body["messages"], "content", "type", "image_url");
    let url = format!("data:image/png;base64,{}", png_base64());
    assert_eq!(
        images,
        [&json!({"type": "image_url", "image_url": {"url": url}})],
        "{body}"
    );
}

#[tokio::test]
async fn openai_responses_gets_an_input_image_data_url() {
    let server = MockServer::start().await;
    let provider = Arc::new(chatcli::provider::openai_responses::OpenAiResponses::new(
        Http::default(),
        "openai-responses",
        format!("{}/v1", server.uri()),
        "sk-test".into(),
        "gpt-5-mini".into(),
    ));
    let answer = sse_of(sse::responses("A test card.", None, 900, 0, 5));
    let (_, body) = ask_about_the_shot(provider, &server, "/v1/responses", answer).await;
    let images = parts_of(&body["input"], "content", "type", "input_image");
    let url = format!("data:image/png;base64,{}", png_base64());
    assert_eq!(
        images,
        [&json!({"type": "input_image", "image_url": url})],
        "{body}"
    );
}

#[tokio::test]
async fn gemini_gets_inline_data() {
    let server = MockServer::start().await;
    let provider = Arc::new(chatcli::provider::gemini::Gemini::new(
        Http::default(),
        server.uri(),
        "g-key".into(),
        "gemini-2.5-flash".into(),
    ));
    let answer = sse_of(sse::gemini("A test card.", None, 900, 0, 5));
    let route = "/v1beta/models/gemini-2.5-flash:streamGenerateContent";
    let (events, body) = ask_about_the_shot(provider, &server, route, answer).await;
    let contents = body["contents"].as_array().cloned().unwrap_or_default();
    let parts = contents
        .last()
        .and_then(|c| c["parts"].as_array())
        .cloned()
        .unwrap_or_default();
    let inline: Vec<&Value> = parts
        .iter()
        .filter(|p| p.get("inline_data").is_some())
        .collect();
    assert_eq!(
        inline,
        [&json!({"inline_data": {"mime_type": "image/png", "data": png_base64()}})],
        "{body}"
    );
    // Gemini's formula: 640×480 is one 768-px tile, 258 tokens.
    assert!(notices(&events).contains("~258 tokens by googleai's formula"));
}

#[tokio::test]
async fn bedrock_gets_image_bytes() {
    let server = MockServer::start().await;
    let route = "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream";
    let answer = ResponseTemplate::new(200).set_body_raw(
        sse::bedrock("A test card.", None, 900, 0, 5),
        "application/vnd.amazon.eventstream",
    );
    let provider = Arc::new(chatcli::provider::bedrock::Bedrock::new(
        Http::default(),
        server.uri(),
        "eu-west-1".into(),
        chatcli::provider::bedrock::Auth::SigV4 {
            access_key: "AKIDEXAMPLE".into(),
            secret_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
            session_token: None,
        },
        "anthropic.claude-sonnet-4-5-20250929-v1:0".into(),
    ));
    let (_, body) = ask_about_the_shot(provider, &server, route, answer).await;
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let parts = messages
        .last()
        .and_then(|m| m["content"].as_array())
        .cloned()
        .unwrap_or_default();
    let images: Vec<&Value> = parts.iter().filter(|p| p.get("image").is_some()).collect();
    assert_eq!(
        images,
        [&json!({"image": {"format": "png", "source": {"bytes": png_base64()}}})],
        "{body}"
    );
}

#[tokio::test]
async fn a_provider_without_images_says_the_image_was_not_attached() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("shot.png"), png()).expect("write");
    let (mut handle, _) =
        crate::common::demo_agent(dir.path(), Mode::Chat, std::time::Duration::ZERO);
    handle
        .ops
        .send(Op::Submit {
            text: "what is in @shot.png?".into(),
            mode: Mode::Chat,
        })
        .expect("alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    let said = notices(&events);
    assert!(
        said.contains("shot.png not attached: demo") && said.contains("takes no images"),
        "{said}"
    );
}

#[test]
fn exec_sends_an_at_mentioned_png_to_anthropic_as_an_image_block() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let server = runtime.block_on(MockServer::start());
    runtime.block_on(
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .respond_with(sse_of(sse::anthropic("A test card.", None, 900, 0, 0, 5)))
            .mount(&server),
    );
    let home = tempfile::tempdir().expect("tempdir");
    let ws = tempfile::tempdir().expect("tempdir");
    std::fs::write(ws.path().join("shot.png"), png()).expect("write");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chatcli"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("CHATCLI_HOME", home.path())
        .env("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
        .env("ANTHROPIC_BASE_URL", server.uri())
        .current_dir(ws.path())
        .args([
            "exec",
            "--json",
            "--provider",
            "anthropic",
            "describe @shot.png",
        ])
        .output()
        .expect("chatcli runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bodies = runtime.block_on(crate::common::posts(&server));
    let body: Value =
        serde_json::from_slice(&bodies.last().expect("a request").body).expect("json");
    let images = parts_of(&body["messages"], "content", "type", "image");
    assert_eq!(images.len(), 1, "{body}");
    assert_eq!(images[0]["source"]["media_type"], "image/png");
    assert_eq!(images[0]["source"]["data"], png_base64());
}

/// Runs one prompt in coder mode on `provider` in a workspace holding shot.png, against
/// `answers` mounted at `route` one per request; returns the events and the request bodies.
async fn run_with_shot(
    provider: Arc<dyn Provider>,
    server: &MockServer,
    route: &str,
    answers: Vec<String>,
    prompt: &str,
) -> (Vec<AgentEvent>, Vec<Value>) {
    let count = answers.len();
    for (i, body) in answers.into_iter().enumerate() {
        let mock = Mock::given(method("POST"))
            .and(path(route))
            .respond_with(sse_of(body));
        let mock = if i + 1 < count {
            mock.up_to_n_times(1)
        } else {
            mock
        };
        mock.mount(server).await;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("shot.png"), png()).expect("write");
    let mut handle = agent::spawn(provider, options(dir.path(), Mode::Coder));
    handle
        .ops
        .send(Op::Submit {
            text: prompt.into(),
            mode: Mode::Coder,
        })
        .expect("alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    let bodies = crate::common::posts(server)
        .await
        .iter()
        .map(|r| serde_json::from_slice(&r.body).expect("json"))
        .collect();
    (events, bodies)
}

fn anthropic_provider(server: &MockServer) -> Arc<dyn Provider> {
    Arc::new(chatcli::provider::anthropic::Anthropic::new(
        Http::default(),
        "anthropic",
        server.uri(),
        "test-key".into(),
        "claude-sonnet-4-5".into(),
        chatcli::provider::anthropic::CacheTtl::FiveMinutes,
    ))
}

fn openai_provider(server: &MockServer, model: &str) -> Arc<dyn Provider> {
    Arc::new(chatcli::provider::openai_chat::OpenAiChat::new(
        Http::default(),
        chatcli::provider::openai_chat::Preset::OPENAI,
        format!("{}/v1", server.uri()),
        "sk-test".into(),
        model.into(),
    ))
}

const READ_SHOT: (&str, &str, &str) = ("call_1", "read_file", r#"{"file":"shot.png"}"#);

#[tokio::test]
async fn read_file_of_an_image_reaches_anthropic_inside_the_tool_result() {
    let server = MockServer::start().await;
    let answers = vec![
        sse::anthropic("", Some(READ_SHOT), 900, 0, 0, 5),
        sse::anthropic("A test card.", None, 900, 0, 0, 5),
    ];
    let provider = anthropic_provider(&server);
    let (_, bodies) = run_with_shot(
        provider,
        &server,
        "/v1/messages",
        answers,
        "look at shot.png",
    )
    .await;
    let results = parts_of(&bodies[1]["messages"], "content", "type", "tool_result");
    let content = &results[0]["content"];
    assert!(
        content[0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("640×480 px") && t.contains("~410 tokens")),
        "{content}"
    );
    assert_eq!(
        content[1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png_base64()}}),
        "{content}"
    );
}

#[tokio::test]
async fn read_file_of_an_image_reaches_openai_chat_in_a_user_message_after_the_tool_message() {
    let server = MockServer::start().await;
    let answers = vec![
        sse::openai_chat("", Some(READ_SHOT), 900, 0, 5),
        sse::openai_chat("A test card.", None, 900, 0, 5),
    ];
    let provider = openai_provider(&server, "gpt-4.1");
    let (_, bodies) = run_with_shot(
        provider,
        &server,
        "/v1/chat/completions",
        answers,
        "look at shot.png",
    )
    .await;
    let messages = bodies[1]["messages"].as_array().expect("messages");
    let tool = messages
        .iter()
        .position(|m| m["role"] == "tool")
        .expect("a tool message");
    assert!(
        messages[tool]["content"]
            .as_str()
            .is_some_and(|t| t.contains("image itself follows")),
        "{}",
        messages[tool]
    );
    let next = &messages[tool + 1];
    assert_eq!(next["role"], "user", "{next}");
    let url = format!("data:image/png;base64,{}", png_base64());
    assert_eq!(
        next["content"][0],
        json!({"type": "image_url", "image_url": {"url": url}}),
        "{next}"
    );
}

#[tokio::test]
async fn a_model_without_vision_gets_a_one_line_refusal_and_no_image() {
    let server = MockServer::start().await;
    let answers = vec![
        sse::openai_chat("", Some(READ_SHOT), 900, 0, 5),
        sse::openai_chat("I cannot see it.", None, 900, 0, 5),
    ];
    let provider = openai_provider(&server, "gpt-3.5-turbo");
    let (events, bodies) = run_with_shot(
        provider,
        &server,
        "/v1/chat/completions",
        answers,
        "what is in @shot.png? read it",
    )
    .await;
    let said = notices(&events);
    let line = said
        .lines()
        .find(|l| l.starts_with("shot.png not attached"))
        .unwrap_or_default();
    assert!(
        line.contains("gpt-3.5-turbo does not take images"),
        "{said}"
    );
    let sent = serde_json::to_string(&bodies).expect("json");
    assert!(!sent.contains("image_url"), "nothing is sent as an image");
    assert!(!sent.contains(&png_base64()), "nor as bytes");
    let refusal = events.iter().find_map(|e| match e {
        AgentEvent::ToolResult {
            ok: false, output, ..
        } => Some(output.clone()),
        _ => None,
    });
    assert!(
        refusal.is_some_and(|r| r.contains("is an image, and gpt-3.5-turbo does not take images")),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_pasted_image_path_outside_the_workspace_reaches_the_model() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(sse_of(sse::anthropic("A test card.", None, 900, 0, 0, 5)))
        .mount(&server)
        .await;
    let outside = tempfile::tempdir().expect("tempdir");
    let shot = outside.path().join("my shot.png");
    std::fs::write(&shot, png()).expect("write");
    let workspace = tempfile::tempdir().expect("tempdir");
    // The terminal pastes the dragged file as a quoted path.
    let (mut app, mut ops) =
        crate::common::keys::app_for(Mode::Chat, "anthropic", "claude-sonnet-4-5");
    app.handle_terminal_event(crossterm::event::Event::Paste(format!(
        "'{}'",
        shot.display()
    )));
    let sent = crate::common::keys::drain(&mut ops);
    assert_eq!(
        sent,
        [Op::AttachImage {
            path: shot.display().to_string()
        }],
        "the paste is an attachment, not text"
    );
    assert!(
        app.input.composer.text().is_empty(),
        "nothing is typed into the prompt"
    );
    let mut handle = agent::spawn(
        anthropic_provider(&server),
        options(workspace.path(), Mode::Chat),
    );
    for op in sent {
        handle.ops.send(op).expect("alive");
    }
    handle
        .ops
        .send(Op::Submit {
            text: "what is in this picture?".into(),
            mode: Mode::Chat,
        })
        .expect("alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    assert!(
        notices(&events).contains("as an image (640×480 px"),
        "{}",
        notices(&events)
    );
    let body: Value = crate::common::posts(&server)
        .await
        .first()
        .map(|r| serde_json::from_slice(&r.body).expect("json"))
        .unwrap_or_default();
    let images = parts_of(&body["messages"], "content", "type", "image");
    assert_eq!(images.len(), 1, "{body}");
    assert_eq!(images[0]["source"]["data"], png_base64());
}

#[test]
fn pasted_text_that_is_not_an_image_path_stays_text() {
    let (mut app, mut ops) =
        crate::common::keys::app_for(Mode::Chat, "anthropic", "claude-sonnet-4-5");
    app.handle_terminal_event(crossterm::event::Event::Paste(
        "/nowhere/missing.png".into(),
    ));
    assert!(crate::common::keys::drain(&mut ops).is_empty());
    assert_eq!(app.input.composer.text(), "/nowhere/missing.png");
}

/// A fake clipboard tool in a folder of its own: `xclip` printing `out` on stdout and `err` on
/// stderr, exiting `code`.
fn fake_xclip(out: &[u8], err: &str, code: i32) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("clipboard.bin");
    std::fs::write(&data, out).expect("write");
    let script = dir.path().join("xclip");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat '{}'\necho '{err}' >&2\nexit {code}\n",
            data.display()
        ),
    )
    .expect("write");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

#[tokio::test]
async fn the_clipboard_image_is_read_with_xclip_through_the_process_door() {
    use chatcli::agent::paste::{clipboard_tool, read_clipboard_png};
    let dir = fake_xclip(&png(), "", 0);
    let tool = clipboard_tool(Some(dir.path().as_os_str()), false, true).expect("xclip found");
    assert_eq!(tool.program, dir.path().join("xclip"));
    assert_eq!(read_clipboard_png(&tool).await, Ok(png()));

    let empty = fake_xclip(b"", "Error: target image/png not available", 1);
    let tool = clipboard_tool(Some(empty.path().as_os_str()), false, true).expect("xclip found");
    let why = read_clipboard_png(&tool).await.unwrap_err().to_string();
    assert!(
        why.contains("holds no PNG image") && why.contains("target image/png not available"),
        "{why}"
    );
    let nothing = tempfile::tempdir().expect("tempdir");
    let none = clipboard_tool(Some(nothing.path().as_os_str()), true, true)
        .unwrap_err()
        .to_string();
    assert!(
        none.contains("neither wl-paste") && none.contains("xclip"),
        "{none}"
    );
}

#[tokio::test]
async fn cost_counts_the_images_sent_and_their_tokens_by_the_formula() {
    let server = MockServer::start().await;
    let answers = vec![
        sse::anthropic("", Some(READ_SHOT), 900, 0, 0, 5),
        sse::anthropic("Two test cards.", None, 900, 0, 0, 5),
    ];
    for (i, body) in answers.into_iter().enumerate() {
        let mock = Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .respond_with(sse_of(body));
        let mock = if i == 0 { mock.up_to_n_times(1) } else { mock };
        mock.mount(&server).await;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("shot.png"), png()).expect("write");
    let mut handle = agent::spawn(
        anthropic_provider(&server),
        options(dir.path(), Mode::Coder),
    );
    handle
        .ops
        .send(Op::Submit {
            text: "compare @shot.png with what read_file gives".into(),
            mode: Mode::Coder,
        })
        .expect("alive");
    events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    handle.ops.send(Op::CostReport).expect("alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::CostReport { .. })).await;
    let Some(
        report @ AgentEvent::CostReport {
            images,
            image_tokens,
            ..
        },
    ) = events.last()
    else {
        panic!("no report");
    };
    // One attached, one read: 640×480 / 750 = 410 tokens each by Anthropic's formula.
    assert_eq!((*images, *image_tokens), (2, 820));
    let (mut app, _ops) =
        crate::common::keys::app_for(Mode::Coder, "anthropic", "claude-sonnet-4-5");
    crate::common::keys::type_text(&mut app, "/cost");
    app.handle_key(crate::common::keys::key(crossterm::event::KeyCode::Enter));
    app.handle_agent_event(report.clone());
    let screen = crate::common::screen_text(&crate::common::draw(&mut app));
    assert!(screen.contains("images: 2, ~820 tokens est."), "{screen}");
}

/// `chatcli exec --json "what is in @shot.png?"` against a loopback llama-server whose `/props`
/// says `props`; returns the notices and whether the request carried an image.
async fn ask_a_local_server(props: Value) -> (String, bool) {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"object": "list",
            "data": [{"id": "gemma3.gguf", "object": "model", "owned_by": "llamacpp", "meta": {"n_ctx": 8192}}]})))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/props"))
        .respond_with(ResponseTemplate::new(200).set_body_json(props))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(sse_of(sse::openai_chat("A card.", None, 900, 0, 7)))
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::write(home.path().join("shot.png"), png()).expect("write");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_chatcli"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("CHATCLI_HOME", home.path())
        .env("OPENAI_API_KEY", "sk-none")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
        .current_dir(home.path())
        .args(["exec", "--json", "--mode", "chat", "what is in @shot.png?"]);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run chatcli");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}");
    let said: Vec<String> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "notice")
        .filter_map(|e| e["message"].as_str().map(str::to_string))
        .collect();
    let sent = crate::common::posts(&server)
        .await
        .iter()
        .any(|r| String::from_utf8_lossy(&r.body).contains("image_url"));
    (said.join("\n"), sent)
}

#[tokio::test]
async fn a_local_server_model_sees_images_only_when_the_server_says_it_is_multimodal() {
    let (said, sent) = ask_a_local_server(json!({"default_generation_settings": {"n_ctx": 8192},
        "modalities": {"vision": false, "audio": false}}))
    .await;
    assert!(!sent, "nothing is sent as an image");
    let line = said
        .lines()
        .find(|l| l.starts_with("shot.png not attached"))
        .unwrap_or_default();
    assert!(
        line.contains("gemma3.gguf") && line.contains("--mmproj"),
        "{said}"
    );
    let (said, sent) = ask_a_local_server(json!({"default_generation_settings": {"n_ctx": 8192},
        "modalities": {"vision": true, "audio": false}}))
    .await;
    assert!(sent, "{said}");
    assert!(said.contains("attached shot.png as an image"), "{said}");
}
