//! `chatcli exec` as a script sees it: the binary, its stdout JSON lines, its exit code.

use std::process::Command;

fn chatcli(home: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chatcli"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("CHATCLI_HOME", home)
        .current_dir(home);
    cmd
}

#[test]
fn exec_json_prints_usage_then_turn_finished_then_cost_last() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = chatcli(home.path())
        .args(["exec", "--json", "--provider", "demo", "hello"])
        .output()
        .expect("run chatcli");
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    let events: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect();
    let types: Vec<&str> = events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or(""))
        .collect();
    let usage = types
        .iter()
        .position(|t| *t == "usage")
        .expect("a usage event");
    let finished = types
        .iter()
        .position(|t| *t == "turn_finished")
        .expect("turn_finished");
    assert!(usage < finished);
    assert_eq!(types.last(), Some(&"cost"));
    let u = &events[usage];
    for field in [
        "turn",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_creation_tokens",
        "reasoning_tokens",
        "estimated",
    ] {
        assert!(u.get(field).is_some(), "usage lacks {field}: {u}");
    }
    let cost = events.last().expect("cost");
    // The same events went to the session log, line for line.
    let sessions: Vec<_> = std::fs::read_dir(home.path().join("sessions"))
        .expect("sessions dir")
        .filter_map(Result::ok)
        .collect();
    assert_eq!(sessions.len(), 1);
    let logged = std::fs::read_to_string(sessions[0].path()).expect("session log");
    let events_logged: String = logged
        .lines()
        // History lines and the time stamps (`at`) are the log's own, not events.
        .filter(|l| !l.starts_with("{\"type\":\"history") && !l.starts_with("{\"type\":\"at\""))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(events_logged, stdout);
    assert!(
        logged.contains("{\"type\":\"history\",\"index\":0,"),
        "the conversation is logged for resume"
    );
    assert!(cost["cost_usd"].as_f64().is_some_and(|c| c > 0.0), "{cost}");
    assert_eq!(events[finished]["stop_reason"], "end_turn");
}

#[test]
fn exec_without_json_prints_the_answer() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = chatcli(home.path())
        .args(["exec", "hello"])
        .output()
        .expect("run chatcli");
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("Hello! I'm the **offline demo** model"),
        "{stdout}"
    );
}

#[test]
fn a_bad_mode_is_one_clear_line_and_a_failure() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = chatcli(home.path())
        .args(["exec", "--mode", "turbo", "hello"])
        .output()
        .expect("run chatcli");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim_end(),
        "chatcli: --mode must be one of: chat, agent, coder, plan, run (got \"turbo\")"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_bad_environment_value_names_the_variable() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = chatcli(home.path())
        .env("CHATCLI_AGENT_MAX_TURNS", "lots")
        .args(["exec", "hello"])
        .output()
        .expect("run chatcli");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "CHATCLI_AGENT_MAX_TURNS must be a whole number from 1 to 200 (got \"lots\")"
        ),
        "{stderr}"
    );
}

#[test]
fn the_tui_refuses_to_start_without_a_terminal() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = chatcli(home.path()).output().expect("run chatcli");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("use `chatcli exec PROMPT`"));
}

#[test]
fn a_provider_without_its_key_fails_at_once_naming_the_variable() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = chatcli(home.path())
        .args(["exec", "--provider", "claudeai", "hello"])
        .output()
        .expect("run chatcli");
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "chatcli: provider `anthropic` needs an API key: set ANTHROPIC_API_KEY (or CLAUDEAI_API_KEY)"
    );
}

#[tokio::test]
async fn a_key_in_the_environment_picks_the_provider_and_its_base_url_variable_is_honoured() {
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer sk-env"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(crate::common::sse::openai_chat(
                    "Hi from the mock.",
                    None,
                    30,
                    0,
                    5,
                )),
        )
        .expect(1)
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tempdir");
    let mut cmd = chatcli(home.path());
    cmd.env("OPENAI_API_KEY", "sk-env")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
        .env("OPENAI_MODEL", "gpt-4.1-mini")
        .args(["exec", "--json", "hello"]);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run chatcli");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let configured: serde_json::Value =
        serde_json::from_str(stdout.lines().next().unwrap_or_default()).expect("json");
    assert_eq!(configured["provider"], "openai");
    assert_eq!(configured["model"], "gpt-4.1-mini");
    assert!(stdout.contains("Hi from the mock."));
    // A loopback server is asked for its context window (GET /v1/models) before the chat.
    let requests = server.received_requests().await.unwrap_or_default();
    let post = requests
        .iter()
        .find(|r| r.method.as_str() == "POST")
        .expect("a chat request");
    let body: serde_json::Value = serde_json::from_slice(&post.body).expect("json body");
    assert_eq!(body["model"], "gpt-4.1-mini");
}

async fn run_routed(route: &str, prompt: &str) -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(crate::common::sse::openai_chat(
                    "A mutex is a lock.",
                    None,
                    30,
                    0,
                    5,
                )),
        )
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tempdir");
    let mut cmd = chatcli(home.path());
    cmd.env("OPENAI_API_KEY", "sk-env")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
        .env("CHATCLI_AGENT_SMART_ROUTE", route)
        .args(["exec", "--json", "--mode", "agent", prompt]);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run chatcli");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let bodies = server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter(|r| r.method.as_str() == "POST")
        .map(|r| serde_json::from_slice(&r.body).expect("json body"))
        .collect();
    (events, bodies)
}

#[tokio::test]
async fn smart_route_auto_answers_a_plain_question_with_one_request_without_tools() {
    let (events, bodies) = run_routed("auto", "what is a mutex?").await;
    assert_eq!(bodies.len(), 1);
    assert!(
        bodies[0].get("tools").is_none(),
        "no tool schemas sent: {}",
        bodies[0]
    );
    let route = events
        .iter()
        .find(|e| e["type"] == "route")
        .expect("a route event");
    assert_eq!(route["decision"], "chat");
    assert!(
        route["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("question lead \"what\"")
    );
}

#[tokio::test]
async fn smart_route_hint_keeps_the_loop_and_says_so_truthfully() {
    let (events, bodies) = run_routed("hint", "what is a mutex?").await;
    assert!(
        bodies[0].get("tools").is_some(),
        "the tool loop ran as asked"
    );
    let route = events
        .iter()
        .find(|e| e["type"] == "route")
        .expect("a route event");
    assert_eq!(route["decision"], "agent");
    let tip = events
        .iter()
        .find(|e| e["type"] == "notice")
        .and_then(|e| e["message"].as_str())
        .unwrap_or_default()
        .to_string();
    assert!(
        tip.starts_with("ℹ Tip: this query looks conversational")
            && tip.contains("/chat")
            && tip.contains("/run")
            && tip.contains("the /agent loop runs as asked"),
        "{tip}"
    );
}

#[tokio::test]
async fn a_task_is_never_rerouted() {
    let (events, bodies) = run_routed("auto", "fix the failing test").await;
    assert!(bodies[0].get("tools").is_some());
    let route = events
        .iter()
        .find(|e| e["type"] == "route")
        .expect("a route event");
    assert_eq!(route["decision"], "agent");
}

#[test]
fn a_named_ollama_with_no_server_is_a_clear_error_naming_ollama_host() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = chatcli(home.path())
        .env("OLLAMA_HOST", "127.0.0.1:9")
        .args(["exec", "--provider", "ollama", "hello"])
        .output()
        .expect("run chatcli");
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "chatcli: no Ollama server answers at http://127.0.0.1:9 (OLLAMA_HOST): start `ollama serve`, or point OLLAMA_HOST at it"
    );
}
