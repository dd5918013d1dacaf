//! Faults: what a user sees when providers misbehave, when chatcli is killed mid-answer, and
//! whether a key ever reaches the disk or the screen.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use chatcli::agent::{self, AgentOptions};
use chatcli::protocol::{AgentEvent, Mode, Op};
use chatcli::provider::anthropic::{Anthropic, CacheTtl};
use chatcli::provider::http::Http;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::{events_until, sse};

fn anthropic(base: String, http: Http) -> Arc<Anthropic> {
    Arc::new(Anthropic::new(
        http,
        "anthropic",
        base,
        "k".into(),
        "claude-sonnet-4-5".into(),
        CacheTtl::FiveMinutes,
    ))
}

async fn prompt(provider: Arc<Anthropic>, text: &str) -> (Vec<AgentEvent>, agent::AgentHandle) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut options = AgentOptions::new("s".into(), Mode::Chat, dir.path().to_path_buf());
    options.smart_route = chatcli::agent::routing::RouteMode::Off;
    let mut handle = agent::spawn(provider, options);
    handle
        .ops
        .send(Op::Submit {
            text: text.into(),
            mode: Mode::Chat,
        })
        .expect("alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    (events, handle)
}

fn stop(events: &[AgentEvent]) -> String {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::TurnFinished { stop_reason, .. } => Some(stop_reason.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

fn errors(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Error { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

fn sse_ok(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .insert_header("content-type", "text/event-stream")
        .set_body_string(body)
}

#[tokio::test]
async fn a_429_with_retry_after_is_retried_after_the_wait() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_string(
                    r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
                ),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(sse_ok(sse::anthropic("Recovered.", None, 10, 0, 0, 3)))
        .with_priority(2)
        .mount(&server)
        .await;
    let started = std::time::Instant::now();
    let (events, _) = prompt(anthropic(server.uri(), Http::default()), "hi").await;
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "waited for Retry-After"
    );
    let retry = events.iter().find_map(|e| match e {
        AgentEvent::Retrying {
            attempt,
            max,
            wait_ms,
            reason,
        } => Some((*attempt, *max, *wait_ms, reason.clone())),
        _ => None,
    });
    let (attempt, max, wait_ms, reason) = retry.expect("a retrying event");
    assert_eq!((attempt, max, wait_ms), (1, 4, 1000));
    assert_eq!(reason, "anthropic returned HTTP 429: slow down");
    assert_eq!(stop(&events), "end_turn");
    assert!(errors(&events).is_empty());
}

#[tokio::test]
async fn a_529_twice_then_success_backs_off_and_answers() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(529).set_body_string(
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(sse_ok(sse::anthropic("Finally.", None, 10, 0, 0, 3)))
        .with_priority(2)
        .mount(&server)
        .await;
    let (events, _) = prompt(anthropic(server.uri(), Http::default()), "hi").await;
    let waits: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Retrying { wait_ms, .. } => Some(*wait_ms),
            _ => None,
        })
        .collect();
    assert_eq!(waits.len(), 2);
    assert!(
        (800..1200).contains(&waits[0]) && (1600..2400).contains(&waits[1]),
        "{waits:?}"
    );
    assert_eq!(stop(&events), "end_turn");
}

#[tokio::test]
async fn a_400_is_not_retried_and_shows_the_providers_message() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_string(r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 99999999 > 64000"}}"#))
        .expect(1)
        .mount(&server)
        .await;
    let (events, _) = prompt(anthropic(server.uri(), Http::default()), "hi").await;
    assert_eq!(
        errors(&events),
        vec!["anthropic returned HTTP 400: max_tokens: 99999999 > 64000".to_string()]
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::Retrying { .. }))
    );
}

#[tokio::test]
async fn an_html_page_instead_of_a_stream_is_named_as_such() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            "<!DOCTYPE html>\n<html><body>Corporate proxy: sign in</body></html>",
            "text/html",
        ))
        .mount(&server)
        .await;
    let (events, _) = prompt(anthropic(server.uri(), Http::default()), "hi").await;
    assert_eq!(
        errors(&events),
        vec!["anthropic: unreadable response: HTTP 200 with an HTML page instead of a stream (a proxy in the way?): <!DOCTYPE html>".to_string()]
    );
}

/// A raw server: answers one request with `head` and then `events`, then closes or stalls.
async fn raw_server(events: Vec<String>, stall: bool) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let events = events.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let _ = socket.read(&mut buf).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                let _ = socket.write_all(head.as_bytes()).await;
                for e in events {
                    let _ = socket.write_all(e.as_bytes()).await;
                    let _ = socket.flush().await;
                }
                if stall {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                }
            });
        }
    });
    base
}

fn start_events() -> Vec<String> {
    vec![
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n".into(),
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n".into(),
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Half an ans\"}}\n\n".into(),
    ]
}

#[tokio::test]
async fn a_connection_dropped_mid_stream_ends_the_turn_clearly_and_the_next_prompt_works() {
    let base = raw_server(start_events(), false).await;
    let (events, mut handle) = prompt(anthropic(base, Http::default()), "hi").await;
    assert_eq!(stop(&events), "error");
    let errs = errors(&events);
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].contains("ended before the answer was complete") || errs[0].contains("connection"),
        "{errs:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::Retrying { .. })),
        "output had begun: no retry"
    );
    // The session goes on.
    handle
        .ops
        .send(Op::Submit {
            text: "again".into(),
            mode: Mode::Chat,
        })
        .expect("alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::TurnFinished { .. }))
    );
}

#[tokio::test]
async fn a_stream_that_never_ends_hits_the_idle_timeout() {
    let base = raw_server(start_events(), true).await;
    let started = std::time::Instant::now();
    let (events, _) = prompt(
        anthropic(
            base,
            Http::new(Duration::from_secs(5), Duration::from_millis(400)),
        ),
        "hi",
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        errors(&events),
        vec!["anthropic: no data for 400 ms (idle timeout)".to_string()]
    );
}

#[tokio::test]
async fn a_request_over_the_body_cap_is_refused_before_sending() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_ok(String::new()))
        .expect(0)
        .mount(&server)
        .await;
    let mut http = Http::default();
    http.max_request_bytes = 200;
    let (events, _) = prompt(anthropic(server.uri(), http), &"long question ".repeat(40)).await;
    let errs = errors(&events);
    assert!(
        errs[0].contains("over the cap of") && errs[0].contains("CHATCLI_MAX_REQUEST_BYTES"),
        "{errs:?}"
    );
}

fn chatcli(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chatcli"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("CHATCLI_HOME", home)
        .current_dir(home);
    cmd
}

fn all_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let p = entry.path();
            if p.is_dir() {
                out.extend(all_files(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[tokio::test]
async fn a_planted_key_is_never_written_or_shown() {
    const KEY: &str = "sk-test-PLANTED-SECRET-9f3a";
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_string(format!(
            r#"{{"error":{{"message":"Incorrect API key provided: {KEY}."}}}}"#
        )))
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tempdir");
    let mut cmd = chatcli(home.path());
    cmd.env("OPENAI_API_KEY", KEY)
        .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
        .env("RUST_LOG", "debug")
        .args(["exec", "--json", "hello"]);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));
    assert!(
        stdout.contains("Incorrect API key provided: sk-…9f3a."),
        "{stdout}"
    );
    let files = all_files(home.path());
    assert!(
        files
            .iter()
            .any(|f| f.extension().is_some_and(|e| e == "jsonl")),
        "a session log was written"
    );
    for file in files {
        let bytes = std::fs::read(&file).expect("read");
        assert!(
            !String::from_utf8_lossy(&bytes).contains(KEY),
            "{} holds the key",
            file.display()
        );
    }
}

#[tokio::test]
async fn killed_mid_answer_then_resumed_the_conversation_goes_on() {
    let server = MockServer::start().await;
    // The first answer never comes: the process is killed while waiting for it.
    Mock::given(method("POST"))
        .respond_with(
            sse_ok(crate::common::sse::openai_chat("late", None, 10, 0, 1))
                .set_delay(Duration::from_secs(60)),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(sse_ok(crate::common::sse::openai_chat(
            "Both questions answered.",
            None,
            40,
            0,
            5,
        )))
        .with_priority(2)
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tempdir");
    let setup = |cmd: &mut Command| {
        cmd.env("OPENAI_API_KEY", "sk-local")
            .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()));
    };
    let mut first = chatcli(home.path());
    setup(&mut first);
    first
        .args(["exec", "--json", "first question about lifetimes"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = first.spawn().expect("spawn");
    let sessions = home.path().join("sessions");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let logged = std::fs::read_dir(&sessions)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .and_then(|e| std::fs::read_to_string(e.path()).ok())
            .unwrap_or_default();
        if logged.contains("turn_started") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the first run never started its request"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child.kill().expect("kill -9");
    let _ = child.wait();

    let mut second = chatcli(home.path());
    setup(&mut second);
    second.args([
        "exec",
        "--json",
        "--resume",
        "latest",
        "and a second one about traits",
    ]);
    let out = tokio::task::spawn_blocking(move || second.output())
        .await
        .expect("join")
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.received_requests().await.unwrap_or_default();
    let last: serde_json::Value =
        serde_json::from_slice(&requests.last().expect("a request").body).expect("json");
    let text = last["messages"].to_string();
    assert!(
        text.contains("first question about lifetimes"),
        "the resumed request carries the earlier prompt: {text}"
    );
    assert!(text.contains("and a second one about traits"));
    let logs: Vec<_> = std::fs::read_dir(&sessions)
        .expect("dir")
        .flatten()
        .collect();
    assert_eq!(logs.len(), 1, "the resumed session appends to the same log");
}
