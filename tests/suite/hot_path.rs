//! Nothing slow on the hot path: a session whose provider reports usage never loads the o200k
//! tokenizer (observed in the session's own log, where its loading is recorded, since the
//! encoder is process-wide and only a separate process gives a clean observation).

use std::path::Path;
use std::process::Command;

use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::sse;

/// The line `tokens::count` logs when it loads the encoder.
const LOADED: &str = "loading the o200k tokenizer";

fn chatcli(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chatcli"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("CHATCLI_HOME", home)
        .current_dir(home);
    cmd
}

/// Everything under `home/logs`.
fn logs(home: &Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(home.join("logs"))
        .expect("the logs directory")
        .flatten()
    {
        text.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
    }
    text
}

/// Runs `chatcli exec --json --mode run` on `provider` against a server that answers a
/// `read_file` call, then `answer`; returns the JSON events and the log.
async fn exec_session(
    provider: &str,
    key: &str,
    base: impl Fn(&str) -> String,
    call: String,
    answer: String,
) -> (Vec<serde_json::Value>, String) {
    let server = MockServer::start().await;
    for body in [call, answer] {
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(200)
                    .insert_header("content-type", "text/event-stream")
                    .set_body_string(body),
            )
            .up_to_n_times(1)
            .mount(&server)
            .await;
    }
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::write(home.path().join("notes.txt"), "one\ntwo\n").expect("write");
    let mut cmd = chatcli(home.path());
    cmd.env(key, "sk-test").args([
        "exec",
        "--json",
        "--mode",
        "run",
        "--provider",
        provider,
        "--base-url",
        &base(&server.uri()),
        "read notes.txt",
    ]);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run chatcli");
    assert!(
        out.status.success(),
        "{provider}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect();
    (events, logs(home.path()))
}

/// A wire to test: provider, key variable, base URL from the server's, the call, the answer.
type Wire = (
    &'static str,
    &'static str,
    fn(&str) -> String,
    String,
    String,
);

fn usages(events: &[serde_json::Value]) -> Vec<&serde_json::Value> {
    events.iter().filter(|e| e["type"] == "usage").collect()
}

#[tokio::test]
async fn a_session_whose_provider_reports_usage_never_loads_the_tokenizer() {
    let args = r#"{"file":"notes.txt"}"#;
    let wires: Vec<Wire> = vec![
        (
            "openai",
            "OPENAI_API_KEY",
            |uri| format!("{uri}/v1"),
            sse::openai_chat("", Some(("call_1", "read_file", args)), 1200, 0, 20),
            sse::openai_chat("It has two lines.", None, 1300, 1100, 8),
        ),
        (
            "openai-responses",
            "OPENAI_API_KEY",
            |uri| format!("{uri}/v1"),
            sse::responses("", Some(("call_1", "read_file", args)), 1200, 0, 20),
            sse::responses("It has two lines.", None, 1300, 1100, 8),
        ),
        (
            "anthropic",
            "ANTHROPIC_API_KEY",
            |uri| uri.to_string(),
            sse::anthropic("", Some(("toolu_1", "read_file", args)), 1200, 0, 0, 20),
            sse::anthropic("It has two lines.", None, 200, 1100, 0, 8),
        ),
        (
            "gemini",
            "GEMINI_API_KEY",
            |uri| uri.to_string(),
            sse::gemini("", Some(("read_file", args)), 1200, 0, 20),
            sse::gemini("It has two lines.", None, 1300, 1100, 8),
        ),
    ];
    for (provider, key, base, call, answer) in wires {
        let (events, log) = exec_session(provider, key, base, call, answer).await;
        let usages = usages(&events);
        assert_eq!(usages.len(), 2, "{provider}: two requests, two usages");
        assert!(
            usages.iter().all(|u| u["estimated"] == false),
            "{provider}: the provider's own figures: {usages:?}"
        );
        assert!(
            events.iter().any(|e| e["type"] == "tool_result"),
            "{provider}: the read_file call ran"
        );
        assert!(
            !log.contains(LOADED),
            "{provider}: a usage-reporting session loaded the tokenizer:\n{log}"
        );
    }
}

#[tokio::test]
async fn a_provider_without_usage_gets_an_exact_estimate_and_the_load_is_logged() {
    // The other side of the test above: the observation works, and the estimate is still exact.
    let strip_usage = |body: String| -> String {
        body.lines()
            .filter(|l| !l.contains("\"usage\""))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    let (events, log) = exec_session(
        "openai",
        "OPENAI_API_KEY",
        |uri| format!("{uri}/v1"),
        strip_usage(sse::openai_chat(
            "",
            Some(("call_1", "read_file", r#"{"file":"notes.txt"}"#)),
            1,
            0,
            1,
        )),
        strip_usage(sse::openai_chat("It has two lines.", None, 1, 0, 1)),
    )
    .await;
    let usages = usages(&events);
    assert_eq!(usages.len(), 2);
    assert!(usages.iter().all(|u| u["estimated"] == true), "{usages:?}");
    // "It has two lines." is 5 o200k tokens.
    assert_eq!(usages[1]["output_tokens"], 5);
    assert!(log.contains(LOADED), "{log}");
}

#[test]
fn the_demo_provider_never_loads_the_tokenizer() {
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::write(home.path().join("notes.txt"), "one\ntwo\n").expect("write");
    let out = chatcli(home.path())
        .args(["exec", "--json", "--provider", "demo", "read notes.txt"])
        .output()
        .expect("run chatcli");
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\"type\":\"tool_result\""), "{stdout}");
    let log = logs(home.path());
    assert!(!log.contains(LOADED), "{log}");
}

/// Waits until the session log in `dir` holds `needle` (the agent's progress, seen without
/// reading a single event from the front end's channel); fails after a generous 60 s.
async fn wait_for_log(dir: &Path, needle: &str) -> String {
    for _ in 0..1200 {
        let text: String = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect();
        if text.contains(needle) {
            return text;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the session log never showed {needle}");
}

#[tokio::test]
async fn a_stalled_front_end_gets_merged_deltas_the_whole_text_and_every_other_event_in_order() {
    use chatcli::agent::{self, outbox::EVENT_CAPACITY};
    use chatcli::protocol::{AgentEvent, Mode, Op};
    use serde_json::json;

    use crate::common::scripted::{Scripted, respond};

    let words = |tag: &str| -> String { (0..10_000).map(|i| format!("{tag}{i} ")).collect() };
    let (first, second) = (words("a"), words("b"));
    let provider = Scripted::new(
        vec![
            respond(
                &first,
                &[("call_1", "read_file", json!({"file": "notes.txt"}))],
            ),
            respond(&second, &[]),
        ],
        std::time::Duration::ZERO,
    );
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("notes.txt"), "one\n").expect("write");
    let sessions = dir.path().join("sessions");
    let mut options = crate::common::options(dir.path(), Mode::Run);
    options.sessions_dir = Some(sessions.clone());
    let mut handle = agent::spawn(provider, options);
    handle
        .ops
        .send(Op::Submit {
            text: "read notes.txt".into(),
            mode: Mode::Run,
        })
        .expect("agent alive");
    // The front end reads nothing while the model streams 20,000 deltas and a tool runs: the
    // agent is not held up (the log shows the whole prompt, cost last).
    let logged = wait_for_log(&sessions, "{\"type\":\"cost\"").await;
    for _ in 0..1200 {
        if handle.events.len() == EVENT_CAPACITY {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        handle.events.len(),
        EVENT_CAPACITY,
        "the channel is full, not more"
    );
    let received =
        crate::common::events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;

    let logged: Vec<AgentEvent> = logged
        .lines()
        // History lines and the time stamps (`at`) are the log's own, not events.
        .filter(|l| !l.starts_with("{\"type\":\"history") && !l.starts_with("{\"type\":\"at\""))
        .map(|l| serde_json::from_str(l).expect("an event line"))
        .collect();
    let deltas = |events: &[AgentEvent]| {
        events
            .iter()
            .filter(|e| matches!(e, AgentEvent::TextDelta { .. }))
            .count()
    };
    assert_eq!(deltas(&logged), 20_000, "the log keeps every delta");
    // The exact bound (capacity + one merged delta per run) is `outbox`'s unit test, where the
    // forwarder's progress is deterministic; here it may still be catching up with the agent
    // when reading starts, and what it forwards then is not merged.
    assert!(
        deltas(&received) < 20_000 / 2,
        "deltas merged while the front end was stalled: {} of 20,000 reached it one by one",
        deltas(&received)
    );
    // The text arrives whole, once, per turn.
    let texts = |events: &[AgentEvent]| -> Vec<String> {
        let mut texts = Vec::new();
        for event in events {
            match event {
                AgentEvent::TurnStarted { .. } => texts.push(String::new()),
                AgentEvent::TextDelta { text } => texts.last_mut().expect("a turn").push_str(text),
                _ => {}
            }
        }
        texts
    };
    assert_eq!(texts(&received), vec![first, second]);
    // Every other event arrives, in the order the agent emitted it.
    let others = |events: &[AgentEvent]| -> Vec<AgentEvent> {
        events
            .iter()
            .filter(|e| !matches!(e, AgentEvent::TextDelta { .. }))
            .cloned()
            .collect()
    };
    assert_eq!(others(&received), others(&logged));
    assert!(
        others(&received)
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolResult { ok: true, .. }))
    );
}

/// A session with an MCP server: whether its schemas are offered directly or deferred is decided
/// from an estimate, so the encoder stays unloaded there too.
#[tokio::test]
async fn a_session_with_an_mcp_server_never_loads_the_tokenizer() {
    let python = std::process::Command::new("python3")
        .args(["-c", "import mcp.server.fastmcp"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !crate::common::needs("the Python MCP SDK", python) {
        return;
    }
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(sse::anthropic("Hello.", None, 1200, 0, 0, 5)),
        )
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tempdir");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/server.py");
    let servers = serde_json::json!({
        "mcpServers": {"fixture": {"command": "python3", "args": [script]}}
    });
    std::fs::write(home.path().join("mcp.json"), servers.to_string()).expect("write mcp.json");
    let mut cmd = chatcli(home.path());
    cmd.env("ANTHROPIC_API_KEY", "sk-test").args([
        "exec",
        "--json",
        "--mode",
        "agent",
        "--provider",
        "anthropic",
        "--base-url",
        &server.uri(),
        "say hello",
    ]);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run chatcli");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The server's tools reached the request: the decision was made.
    let requests = crate::common::posts(&server).await;
    let body = requests
        .first()
        .map(|r| String::from_utf8_lossy(&r.body).to_string())
        .unwrap_or_default();
    assert!(
        body.contains("mcp__fixture__"),
        "no MCP tool offered: {body}\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let log = logs(home.path());
    assert!(!log.contains(LOADED), "the encoder was loaded:\n{log}");
}
