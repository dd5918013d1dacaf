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

fn usages(events: &[serde_json::Value]) -> Vec<&serde_json::Value> {
    events.iter().filter(|e| e["type"] == "usage").collect()
}

#[tokio::test]
async fn a_session_whose_provider_reports_usage_never_loads_the_tokenizer() {
    let args = r#"{"file":"notes.txt"}"#;
    let wires: Vec<(&str, &str, fn(&str) -> String, String, String)> = vec![
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
