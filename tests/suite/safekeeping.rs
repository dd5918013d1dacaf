//! Nothing lost, nothing leaked: planted secrets never reach the provider, the screen or a file;
//! a crash never repeats a tool call; storage failures are loud; hostile values are refused
//! clearly; and everything chatcli creates is private whatever the umask.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use chatcli::agent::{self, AgentHandle, AgentOptions, ApprovalPolicy};
use chatcli::memory::MemorySettings;
use chatcli::memory::embedder::Embedder;
use chatcli::protocol::{AgentEvent, Mode, Op};
use chatcli::secrets::Secrets;
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::events_until;
use crate::common::scripted::{Scripted, respond};

/// A key with a quote and a backslash: invisible to masking done on serialised JSON.
const QUOTED_KEY: &str = r#"priv"ate\key-PLANTED-0042"#;

fn chatcli(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chatcli"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("CHATCLI_HOME", home)
        .current_dir(home);
    cmd
}

fn all_files(dir: &Path) -> Vec<PathBuf> {
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

/// `value` in any of the forms a file or a line could hold it: raw or JSON-escaped.
fn holds(haystack: &str, value: &str) -> bool {
    let escaped = serde_json::to_string(value).unwrap_or_default();
    haystack.contains(value) || haystack.contains(escaped.trim_matches('"'))
}

/// An OpenAI Chat Completions stream of `text` in pieces of `size` characters, or of one call.
fn chat_stream(text: &str, size: usize, call: Option<(&str, &str, serde_json::Value)>) -> String {
    let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
        json!({"id": "c1", "object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        json!(null),
    )];
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(size) {
        let piece: String = piece.iter().collect();
        events.push(chunk(json!({"content": piece}), json!(null)));
    }
    if let Some((id, name, args)) = &call {
        events.push(chunk(
            json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                   "function": {"name": name, "arguments": args.to_string()}}]}),
            json!(null),
        ));
    }
    let finish = if call.is_some() { "tool_calls" } else { "stop" };
    events.push(chunk(json!({}), json!(finish)));
    events.push(
        json!({"id": "c1", "object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}),
    );
    let mut body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    body
}

fn sse_ok(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .insert_header("content-type", "text/event-stream")
        .set_body_string(body)
}

#[tokio::test]
async fn planted_keys_are_masked_in_env_output_streamed_answers_and_every_file() {
    let planted = [
        ("MY_PRIVATE_KEY", QUOTED_KEY),
        ("STRIPE_KEY", "stripe-PLANTED-value-0001"),
        ("GITHUB_PAT", "ghp_PLANTED_value_0002"),
        ("DB_PASSWD", "passwd-PLANTED-0003"),
        (
            "DATABASE_URL",
            "postgres://app:dbpass-PLANTED-0004@db.invalid:5432/app",
        ),
    ];
    let secret_parts = [
        QUOTED_KEY,
        "stripe-PLANTED-value-0001",
        "ghp_PLANTED_value_0002",
        "passwd-PLANTED-0003",
        "dbpass-PLANTED-0004",
    ];
    let server = MockServer::start().await;
    // First the model runs `env`; then it echoes a key in 7-character deltas.
    Mock::given(method("POST"))
        .respond_with(sse_ok(chat_stream(
            "",
            7,
            Some(("call_1", "run_command", json!({"cmd": "env"}))),
        )))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(sse_ok(chat_stream(
            &format!("Your key is {QUOTED_KEY} and the password dbpass-PLANTED-0004, done."),
            7,
            None,
        )))
        .with_priority(2)
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tempdir");
    for json_mode in [true, false] {
        let mut cmd = chatcli(home.path());
        cmd.env("OPENAI_API_KEY", "sk-local-key")
            .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
            .env("CHATCLI_AGENT_SMART_ROUTE", "off");
        for (name, value) in planted {
            cmd.env(name, value);
        }
        cmd.args(["exec", "--yes", "--mode", "agent"]);
        if json_mode {
            cmd.arg("--json");
        }
        cmd.arg(format!("show me the environment {}", u8::from(json_mode)));
        let out = tokio::task::spawn_blocking(move || cmd.output())
            .await
            .expect("join")
            .expect("run");
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{stderr}");
        assert!(stdout.contains("Your key is"), "{stdout}");
        for part in secret_parts {
            assert!(!holds(&stdout, part), "stdout shows {part}: {stdout}");
            assert!(!holds(&stderr, part), "stderr shows {part}");
        }
        if json_mode {
            // The text deltas put back together never rebuild a key.
            let joined: String = stdout
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter(|e| e["type"] == "text_delta")
                .filter_map(|e| e["text"].as_str().map(str::to_string))
                .collect();
            assert!(joined.contains("Your key is pri…0042"), "{joined}");
        }
    }
    // What `env` printed reached the provider masked.
    let requests = crate::common::posts(&server).await;
    assert!(requests.len() >= 2);
    let second = String::from_utf8_lossy(&requests[1].body).to_string();
    assert!(second.contains("PATH="), "env output was sent: {second}");
    for part in secret_parts {
        assert!(!holds(&second, part), "the provider was sent {part}");
    }
    let files = all_files(home.path());
    assert!(
        files
            .iter()
            .any(|f| f.extension().is_some_and(|e| e == "jsonl"))
    );
    for file in files {
        let text = String::from_utf8_lossy(&std::fs::read(&file).expect("read")).to_string();
        for part in secret_parts {
            assert!(!holds(&text, part), "{} holds {part}", file.display());
        }
    }
}

struct Session {
    handle: AgentHandle,
    provider: Arc<Scripted>,
    dir: tempfile::TempDir,
}

fn session(provider: Arc<Scripted>, tune: impl FnOnce(&mut AgentOptions, &Path)) -> Session {
    let dir = tempfile::tempdir().expect("tempdir");
    let workspace = dir.path().join("work");
    std::fs::create_dir_all(&workspace).expect("mkdir");
    let mut options = AgentOptions::new("s".into(), Mode::Agent, workspace);
    options.smart_route = chatcli::agent::routing::RouteMode::Off;
    options.approval = ApprovalPolicy::AutoApprove;
    options.sessions_dir = Some(dir.path().join("sessions"));
    options.scratch = chatcli::tools::Scratch::private(dir.path().join("scratch"));
    tune(&mut options, dir.path());
    let handle = agent::spawn(provider.clone(), options);
    Session {
        handle,
        provider,
        dir,
    }
}

async fn prompt(s: &mut Session, text: &str) -> Vec<AgentEvent> {
    s.handle
        .ops
        .send(Op::Submit {
            text: text.into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    events_until(&mut s.handle, |e| matches!(e, AgentEvent::Cost { .. })).await
}

const KEY: &str = "sk-live-PLANTED-key-77aa";

#[tokio::test]
async fn tool_results_memory_facts_and_microcompact_originals_hold_no_key() {
    let provider = Scripted::new(
        vec![
            respond(
                "",
                &[(
                    "1",
                    "run_command",
                    json!({"cmd": format!("echo token={KEY}")}),
                )],
            ),
            respond(
                "",
                &[(
                    "2",
                    "memory",
                    json!({"action": "add", "content": format!("the deploy key is {KEY}"), "category": "project"}),
                )],
            ),
            respond("", &[("3", "run_command", json!({"cmd": "echo third"}))]),
            respond("All done.", &[]),
        ],
        Duration::ZERO,
    );
    let mut s = session(provider, |o, home| {
        o.secrets = Secrets::of(&[KEY]);
        o.compaction = chatcli::agent::compaction::Settings {
            min_content: 1,
            truncate_turns: 1,
            summarize_turns: 1,
            head_chars: 10,
            tail_chars: 10,
            schedule: chatcli::agent::compaction::Schedule::Eager,
            ..Default::default()
        };
        o.memory = Some(MemorySettings {
            dir: home.join("memory"),
            mode: chatcli::memory::MemoryMode::Index,
            retrieval_budget: 4000,
            autorecall: false,
            hyde: false,
            embedder: Embedder::Local,
        });
    });
    let events = prompt(&mut s, "remember the deploy key").await;
    let lines: String = events
        .iter()
        .map(|e| serde_json::to_string(e).expect("json"))
        .collect();
    assert!(!lines.contains(KEY), "an event shows the key: {lines}");
    let requests = s.provider.requests();
    assert_eq!(requests.len(), 4);
    let sent = serde_json::to_string(&requests[1].messages).expect("json");
    assert!(sent.contains("token=sk-…77aa"), "{sent}");
    // The model's own words go back as it said them; what tools returned is masked.
    for request in &requests {
        for message in &request.messages {
            for block in &message.content {
                if let chatcli::conversation::ContentBlock::ToolResult { content, .. } = block {
                    assert!(!content.contains(KEY), "a tool result carries the key");
                }
            }
        }
    }
    let files = all_files(s.dir.path());
    for name in ["facts.jsonl", "MEMORY.md"] {
        assert!(
            files
                .iter()
                .any(|f| f.file_name().is_some_and(|n| n == name)),
            "{name} written: {files:?}"
        );
    }
    assert!(
        files
            .iter()
            .any(|f| f.to_string_lossy().contains("toolresult_")),
        "microcompact saved an original: {files:?}"
    );
    for file in files {
        let text = String::from_utf8_lossy(&std::fs::read(&file).expect("read")).to_string();
        assert!(!text.contains(KEY), "{} holds the key", file.display());
    }
}

#[tokio::test]
async fn web_fetch_auto_saves_hold_no_key() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/plain")
                .set_body_string(format!("config dump\napi_key = {KEY}\nend\n")),
        )
        .mount(&server)
        .await;
    let provider = Scripted::new(
        vec![
            respond(
                "",
                &[(
                    "1",
                    "web_fetch",
                    json!({"url": format!("{}/config.txt", server.uri()), "save_to_file": true}),
                )],
            ),
            respond("Saved.", &[]),
        ],
        Duration::ZERO,
    );
    let mut s = session(provider, |o, _| o.secrets = Secrets::of(&[KEY]));
    let events = prompt(&mut s, "fetch the config").await;
    let saved = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolResult { saved_path, .. } => saved_path.clone(),
            _ => None,
        })
        .expect("the page was saved");
    let text = std::fs::read_to_string(&saved).expect("read the saved page");
    assert!(text.contains("api_key = sk-…77aa"), "{text}");
    assert!(!text.contains(KEY));
}

#[tokio::test]
async fn killed_during_a_command_then_resumed_the_command_is_not_run_again() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse_ok(chat_stream(
            "",
            7,
            Some((
                "call_run",
                "run_command",
                json!({"cmd": "echo ran >> runs.txt; sleep 20"}),
            )),
        )))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(sse_ok(chat_stream(
            "I will check runs.txt first.",
            50,
            None,
        )))
        .with_priority(2)
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tempdir");
    let setup = |cmd: &mut Command| {
        cmd.env("OPENAI_API_KEY", "sk-local-key")
            .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
            .env("CHATCLI_AGENT_SMART_ROUTE", "off");
    };
    let mut first = chatcli(home.path());
    setup(&mut first);
    first
        .args([
            "exec",
            "--yes",
            "--json",
            "--mode",
            "agent",
            "deploy the thing",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = first.spawn().expect("spawn");
    let runs = home.path().join("runs.txt");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !runs.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child.kill().expect("kill -9");
    let _ = child.wait();

    let mut second = chatcli(home.path());
    setup(&mut second);
    second.args(["exec", "--json", "--resume", "latest", "did it work?"]);
    let out = tokio::task::spawn_blocking(move || second.output())
        .await
        .expect("join")
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("call_run had no result"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&runs)
            .expect("runs")
            .lines()
            .count(),
        1,
        "the command ran once"
    );
    let requests = crate::common::posts(&server).await;
    assert_eq!(
        requests.len(),
        2,
        "no request went out between the kill and the resume"
    );
    let last: serde_json::Value = serde_json::from_slice(&requests[1].body).expect("json body");
    let messages = last["messages"].as_array().expect("messages");
    let call_at = messages
        .iter()
        .position(|m| m["tool_calls"][0]["id"] == "call_run")
        .expect("the call is in the resumed history");
    let answer = &messages[call_at + 1];
    assert_eq!(answer["role"], "tool");
    assert_eq!(answer["tool_call_id"], "call_run");
    assert!(
        answer["content"]
            .as_str()
            .is_some_and(|c| c.contains("outcome is unknown")),
        "{answer}"
    );
    assert!(last.to_string().contains("did it work?"));
}

#[cfg(unix)]
#[test]
fn a_stray_non_utf8_variable_never_stops_chatcli_but_one_it_reads_is_named() {
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"caf\xe9");
    let home = tempfile::tempdir().expect("tempdir");
    let out = chatcli(home.path())
        .env("LC_LEGACY", bad)
        .args(["exec", "--provider", "demo", "hello"])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = chatcli(home.path())
        .env("CHATCLI_MODE", bad)
        .args(["exec", "--provider", "demo", "hello"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "chatcli: CHATCLI_MODE is not valid UTF-8: give it a UTF-8 value or unset it"
    );
}

#[test]
fn an_empty_chatcli_home_is_refused() {
    let home = tempfile::tempdir().expect("tempdir");
    let out = chatcli(home.path())
        .env("CHATCLI_HOME", "")
        .env("HOME", home.path())
        .args(["exec", "--provider", "demo", "hello"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("CHATCLI_HOME must be a directory path"),
        "{stderr}"
    );
}

#[test]
fn a_huge_retention_never_panics_on_the_second_run() {
    let home = tempfile::tempdir().expect("tempdir");
    for _run in 0..2 {
        let out = chatcli(home.path())
            .env("CHATCLI_SESSION_RETENTION_DAYS", u64::MAX.to_string())
            .args(["exec", "--provider", "demo", "hello"])
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_negative_price_override_is_refused_naming_file_model_and_field() {
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        home.path().join("pricing.toml"),
        "[models.demo]\ninput = -30.0\noutput = 15.0\n",
    )
    .expect("write");
    let out = chatcli(home.path())
        .args(["exec", "--provider", "demo", "hello"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("pricing.toml: models.demo.input must be a price in USD per million tokens, zero or more (got -30)"),
        "{stderr}"
    );
}

/// Makes every file the child writes fail past `bytes` (EFBIG, the way a full disk fails with
/// ENOSPC): a full disk without mounting anything.
#[cfg(unix)]
fn disk_full_after(cmd: &mut Command, bytes: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec only async-signal-safe calls (signal, setrlimit) are made.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: bytes as libc::rlim_t,
                rlim_max: bytes as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

fn count_mentions(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

#[cfg(unix)]
#[test]
fn a_disk_that_fills_mid_answer_is_said_once_and_the_answer_goes_on() {
    let home = tempfile::tempdir().expect("tempdir");
    let mut cmd = chatcli(home.path());
    cmd.args(["exec", "--provider", "demo", "hello"]);
    disk_full_after(&mut cmd, 700);
    let out = cmd.output().expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("offline"),
        "the answer is printed: {stdout}"
    );
    assert_eq!(
        count_mentions(&stderr, "the session log stopped being written"),
        1,
        "{stderr}"
    );
    assert!(out.status.success(), "part of the log was saved: {stderr}");
}

#[cfg(unix)]
#[test]
fn a_disk_full_from_the_start_makes_exec_fail_after_answering() {
    let home = tempfile::tempdir().expect("tempdir");
    let mut cmd = chatcli(home.path());
    cmd.args(["exec", "--json", "--provider", "demo", "hello"]);
    disk_full_after(&mut cmd, 0);
    let out = cmd.output().expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("turn_finished"),
        "the answer goes on: {stdout}"
    );
    assert_eq!(
        count_mentions(&stderr, "the session log could not be written"),
        1,
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(1));
}

#[cfg(unix)]
#[test]
fn a_read_only_home_is_said_once_and_exec_fails() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().expect("tempdir");
    // SAFETY: geteuid has no side effects.
    if unsafe { libc::geteuid() } == 0 {
        // Root writes through any mode bits: make the sessions folder impossible to create
        // instead (a file stands where it goes), which fails the same way a read-only home does.
        std::fs::write(home.path().join("sessions"), "not a folder").expect("write");
    }
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o555)).expect("chmod");
    let mut cmd = chatcli(home.path());
    cmd.args(["exec", "--provider", "demo", "hello"]);
    let out = cmd.output().expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    assert!(
        stdout.contains("offline"),
        "the answer is printed: {stdout} {stderr}"
    );
    assert_eq!(
        count_mentions(&stderr, "the session log could not be written"),
        1,
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(1));
}

#[cfg(unix)]
#[test]
fn memory_add_on_a_full_disk_leaves_no_temporary_file() {
    let home = tempfile::tempdir().expect("tempdir");
    let mut cmd = chatcli(home.path());
    cmd.args([
        "memory",
        "add",
        "a fact long enough to overflow a tiny file size limit",
    ]);
    disk_full_after(&mut cmd, 16);
    let out = cmd.output().expect("run");
    assert!(!out.status.success(), "a failed write is an error");
    // The store's `.lock` file stays (an empty file the system locks; the lock itself is gone
    // with the process), so only temporary files count.
    let leftovers: Vec<PathBuf> = all_files(&home.path().join("memory"))
        .into_iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains("tmp"))
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Every directory under `root` is 0700 and every file 0600; returns the offenders.
#[cfg(unix)]
fn not_private(root: &Path) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mode = std::fs::symlink_metadata(&dir)
            .expect("meta")
            .permissions()
            .mode()
            & 0o777;
        if mode != 0o700 {
            out.push(format!("{} {mode:o}", dir.display()));
        }
        for entry in std::fs::read_dir(&dir).expect("dir").flatten() {
            let meta = entry.metadata().expect("meta");
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                let mode = meta.permissions().mode() & 0o777;
                if mode != 0o600 {
                    out.push(format!("{} {mode:o}", entry.path().display()));
                }
            }
        }
    }
    out
}

#[cfg(unix)]
#[tokio::test]
async fn a_fresh_home_under_umask_000_holds_only_private_files_and_directories() {
    use std::os::unix::process::CommandExt;
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/plain")
                .set_body_string("a page worth saving\n"),
        )
        .mount(&server)
        .await;
    // Each run: a web_fetch saved to a file, then the answer.
    let fetch = chat_stream(
        "",
        7,
        Some((
            "call_fetch",
            "web_fetch",
            json!({"url": format!("{}/page.txt", server.uri()), "save_to_file": true}),
        )),
    );
    let answer = chat_stream("Saved it.", 50, None);
    let count = std::sync::atomic::AtomicUsize::new(0);
    Mock::given(method("POST"))
        .respond_with(move |_: &wiremock::Request| {
            let n = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            sse_ok(if n.is_multiple_of(2) {
                fetch.clone()
            } else {
                answer.clone()
            })
        })
        .mount(&server)
        .await;
    let root = tempfile::tempdir().expect("tempdir");
    let home = root.path().join("fresh").join("chatcli-home");
    let tmpdir = root.path().join("agent-tmp").join("scratch");
    let uri = server.uri();
    let run = move |agent_tmpdir: Option<PathBuf>, args: Vec<String>| {
        let mut cmd = chatcli(&home);
        cmd.current_dir(std::env::temp_dir())
            .env("OPENAI_API_KEY", "sk-local-key")
            .env("OPENAI_BASE_URL", format!("{uri}/v1"))
            .env("CHATCLI_AGENT_SMART_ROUTE", "off")
            .env("RUST_LOG", "debug")
            .args(args);
        if let Some(dir) = agent_tmpdir {
            cmd.env("CHATCLI_AGENT_TMPDIR", dir);
        }
        // SAFETY: umask is async-signal-safe and only changes the child's own mask.
        unsafe {
            cmd.pre_exec(|| {
                libc::umask(0);
                Ok(())
            });
        }
        cmd.output().expect("run")
    };
    let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let out = tokio::task::spawn_blocking({
        let run = run.clone();
        move || {
            let first = run(None, args(&["exec", "--mode", "agent", "save that page"]));
            let memory = run(None, args(&["memory", "add", "Fresh homes are private"]));
            let second = run(
                Some(tmpdir),
                args(&["exec", "--mode", "agent", "save it again"]),
            );
            (first, memory, second)
        }
    })
    .await
    .expect("join");
    for output in [&out.0, &out.1, &out.2] {
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let home = root.path().join("fresh").join("chatcli-home");
    let made: Vec<String> = all_files(&home)
        .iter()
        .map(|p| p.strip_prefix(&home).unwrap_or(p).display().to_string())
        .collect();
    for expected in [
        "sessions/",
        "logs/chatcli.log.",
        "memory/facts.jsonl",
        "/scratch/webfetch_",
    ] {
        assert!(
            made.iter().any(|p| p.contains(expected)),
            "{expected} missing from {made:?}"
        );
    }
    assert!(
        all_files(&root.path().join("agent-tmp")).len() == 1,
        "the second run saved into CHATCLI_AGENT_TMPDIR"
    );
    // The parents chatcli had to create (`fresh`, `agent-tmp`) are checked too.
    let mut offenders = not_private(&root.path().join("fresh"));
    offenders.extend(not_private(&root.path().join("agent-tmp")));
    assert!(offenders.is_empty(), "not private: {offenders:#?}");
}

#[tokio::test]
async fn a_log_that_cannot_be_created_is_one_notice_to_the_front_end() {
    let provider = Scripted::new(vec![respond("An answer anyway.", &[])], Duration::ZERO);
    let mut s = session(provider, |o, home| {
        // A regular file where the sessions directory should go: nothing can be created there.
        let blocker = home.join("not-a-dir");
        std::fs::write(&blocker, "x").expect("write");
        o.sessions_dir = Some(blocker.join("sessions"));
    });
    let mut events = prompt(&mut s, "hello").await;
    events.extend(prompt(&mut s, "again").await);
    let notices: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Notice { message }
                if message.starts_with(chatcli::session_log::LOG_NOT_WRITTEN) =>
            {
                Some(message)
            }
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 1, "said once: {notices:?}");
    assert!(notices[0].contains("the answer goes on"), "{}", notices[0]);
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::TurnFinished { text, .. } if text.contains("An answer anyway.")
    )));
}
