//! `chatcli bench --replay`: a session recorded by the real binary against a local server is
//! replayed through the bench's rows, with the user's pauses taken from the log.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn chatcli(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chatcli"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("CHATCLI_HOME", home)
        .current_dir(home);
    cmd
}

/// An OpenAI Chat Completions stream answering `text`, or asking for one call.
fn chat_stream(text: &str, call: Option<(&str, Value)>) -> ResponseTemplate {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "c1", "object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": text}),
        json!(null),
    )];
    if let Some((name, args)) = &call {
        events.push(chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                   "function": {"name": name, "arguments": args.to_string()}}]}),
            json!(null),
        ));
    }
    let finish = if call.is_some() { "tool_calls" } else { "stop" };
    events.push(chunk(json!({}), json!(finish)));
    let mut body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    ResponseTemplate::new(200)
        .insert_header("content-type", "text/event-stream")
        .set_body_string(body)
}

/// Records two prompts (the first reads a file) with the real binary; the log's path.
async fn record(home: &Path) -> PathBuf {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(chat_stream(
            "",
            Some(("read_file", json!({"file": "notes.txt"}))),
        ))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(chat_stream("The notes say hello.", None))
        .with_priority(2)
        .mount(&server)
        .await;
    std::fs::write(home.join("notes.txt"), "hello from the notes\n".repeat(200)).expect("notes");
    for args in [
        vec![
            "exec",
            "--yes",
            "--json",
            "--mode",
            "coder",
            "read my notes",
        ],
        vec!["exec", "--json", "--resume", "latest", "thanks"],
    ] {
        let mut cmd = chatcli(home);
        cmd.env("OPENAI_API_KEY", "sk-local-key")
            .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
            .args(args);
        let out = tokio::task::spawn_blocking(move || cmd.output())
            .await
            .expect("join")
            .expect("run");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let logs: Vec<PathBuf> = std::fs::read_dir(home.join("sessions"))
        .expect("sessions")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    logs.into_iter().next().expect("a log")
}

/// `(mode, requests, cost)` of every anthropic row of `bench --replay log --json`.
fn replay(home: &Path, log: &Path, out: &Path) -> Vec<(String, u64, f64)> {
    let mut bench = chatcli(home);
    bench
        .args([
            "bench",
            "--json",
            "--provider-model",
            "anthropic",
            "--replay",
        ])
        .arg(log)
        .arg("--out")
        .arg(out);
    crate::common::bench_rows(bench)
        .iter()
        .map(|r| {
            assert!(
                r["name"]
                    .as_str()
                    .unwrap_or_default()
                    .starts_with("replay-")
            );
            (
                r["mode"].as_str().unwrap_or_default().to_string(),
                r["requests"].as_u64().unwrap_or_default(),
                r["cost_usd"].as_f64().unwrap_or_default(),
            )
        })
        .collect()
}

fn row<'a>(rows: &'a [(String, u64, f64)], mode: &str) -> &'a (String, u64, f64) {
    rows.iter()
        .find(|r| r.0 == mode)
        .unwrap_or_else(|| panic!("no {mode} row in {rows:?}"))
}

#[tokio::test]
async fn a_recorded_session_replays_through_the_rows_and_its_pauses_are_honoured() {
    let home = tempfile::tempdir().expect("home");
    let log = record(home.path()).await;
    let out = tempfile::tempdir().expect("out");
    let rows = replay(home.path(), &log, out.path());
    // The recorded requests: the call, its answer, then the second prompt's answer.
    assert_eq!(row(&rows, "ttl:5m").1, 3, "{rows:?}");
    assert_eq!(row(&rows, "optimised").1, 3, "{rows:?}");
    // Back to back, the 5-minute cache never lapses: the 1-hour lifetime only costs more.
    assert!(row(&rows, "ttl:5m").2 <= row(&rows, "ttl:1h").2, "{rows:?}");

    // The same session with the user away 12 minutes between the prompts.
    let text = std::fs::read_to_string(&log).expect("log");
    let mut stamp = 0;
    let paused: Vec<String> = text
        .lines()
        .map(|line| {
            if !line.starts_with(r#"{"type":"at""#) {
                return line.to_string();
            }
            // Start and end of each prompt: 0 s, 20 s, then 12 min later 740 s, 760 s.
            let at = [0, 20, 740, 760].get(stamp).copied().unwrap_or(800);
            stamp += 1;
            format!(r#"{{"type":"at","unix_secs":{}}}"#, 1_800_000_000 + at)
        })
        .collect();
    assert_eq!(stamp, 4, "a start and an end stamp per prompt: {text}");
    let gap = out.path().join("gap.jsonl");
    std::fs::write(&gap, paused.join("\n")).expect("write");
    let rows = replay(home.path(), &gap, out.path());
    assert!(row(&rows, "ttl:5m").2 > row(&rows, "ttl:1h").2, "{rows:?}");
}

#[test]
fn a_missing_log_is_one_clear_line() {
    let home = tempfile::tempdir().expect("home");
    for what in ["nothing/here.jsonl", "no-such-id"] {
        let output = chatcli(home.path())
            .args(["bench", "--json", "--replay", what])
            .output()
            .expect("run");
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("here.jsonl") || stderr.contains("no-such-id"),
            "{stderr}"
        );
    }
}
