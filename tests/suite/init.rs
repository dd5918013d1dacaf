//! `/init` (#38): the model is sent instructions to survey the repository and write a first
//! `AGENTS.md`; the write asks before it lands; an existing `AGENTS.md` is refined with the
//! user's approval, never clobbered without asking (`exec --yes` and auto-edit refuse instead).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chatcli::agent::{self, AgentHandle, AgentOptions};
use chatcli::conversation::{ContentBlock, ModelRequest};
use chatcli::protocol::{AgentEvent, ApprovalDecision, Mode, Op, Permission};
use serde_json::json;
use wiremock::MockServer;

use crate::common::events_until;
use crate::common::scripted::{Scripted, respond};

/// An agent over `provider` in `dir`, asking for approvals as the TUI does.
fn spawn(provider: Arc<Scripted>, dir: &Path) -> AgentHandle {
    let options = AgentOptions::new("s".into(), Mode::Chat, dir.to_path_buf());
    agent::spawn(provider, options)
}

/// A model that writes AGENTS.md at once, then says it is done.
fn writes_agents_md() -> Arc<Scripted> {
    let write = respond(
        "",
        &[(
            "w1",
            "write_file",
            json!({"file": "AGENTS.md", "content": "# Repository Guidelines\n"}),
        )],
    );
    Scripted::new(vec![write, respond("done", &[])], Duration::ZERO)
}

/// The text of the newest user message of `request`.
fn user_text(request: &ModelRequest) -> String {
    request
        .messages
        .last()
        .map(|m| {
            m.content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Sends `/init` and waits for the write's approval request; returns its call's arguments.
async fn init_until_asked(handle: &mut AgentHandle) -> serde_json::Value {
    handle
        .ops
        .send(Op::Submit {
            text: "/init".into(),
            mode: Mode::Chat,
        })
        .expect("agent alive");
    let asked = events_until(handle, |e| matches!(e, AgentEvent::ApprovalRequest { .. })).await;
    assert!(
        asked
            .iter()
            .any(|e| matches!(e, AgentEvent::Prompt { text, .. } if text == "/init")),
        "the transcript shows what the user typed"
    );
    match asked.last() {
        Some(AgentEvent::ApprovalRequest { name, args, .. }) if name == "write_file" => {
            args.clone()
        }
        other => panic!("expected write_file's approval, got {other:?}"),
    }
}

async fn answer(handle: &mut AgentHandle, decision: ApprovalDecision) -> Vec<AgentEvent> {
    handle
        .ops
        .send(Op::Approve {
            id: "w1".into(),
            decision,
        })
        .expect("agent alive");
    events_until(handle, |e| matches!(e, AgentEvent::Cost { .. })).await
}

#[tokio::test]
async fn init_sends_the_survey_instructions_and_asks_before_writing_agents_md() {
    let dir = tempfile::tempdir().expect("tempdir");
    let provider = writes_agents_md();
    let mut handle = spawn(provider.clone(), dir.path());
    let args = init_until_asked(&mut handle).await;
    assert_eq!(args["file"], "AGENTS.md");
    assert!(
        !dir.path().join("AGENTS.md").exists(),
        "nothing is written before the answer"
    );
    let first = &provider.requests()[0];
    let text = user_text(first);
    assert!(
        text.contains("Write a first AGENTS.md") && text.contains("read-only tools"),
        "{text}"
    );
    assert!(
        first.tools.iter().any(|t| t.name == "write_file"),
        "/init typed in chat mode still runs with the tools (coder mode)"
    );
    answer(&mut handle, ApprovalDecision::AllowOnce).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("AGENTS.md")).expect("written"),
        "# Repository Guidelines\n"
    );
}

#[tokio::test]
async fn an_existing_agents_md_is_refined_and_not_clobbered_without_asking() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("AGENTS.md"), "run make test\n").expect("write");
    let provider = writes_agents_md();
    let mut handle = spawn(provider.clone(), dir.path());
    init_until_asked(&mut handle).await;
    let text = user_text(&provider.requests()[0]);
    assert!(
        text.contains("AGENTS.md already exists") && text.contains("refine it"),
        "{text}"
    );
    answer(&mut handle, ApprovalDecision::Deny).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("AGENTS.md")).expect("kept"),
        "run make test\n",
        "a denied refinement leaves the file as it was"
    );
}

#[tokio::test]
async fn where_writes_run_unasked_an_existing_agents_md_is_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("AGENTS.md"), "run make test\n").expect("write");
    let provider = writes_agents_md();
    let mut handle = spawn(provider.clone(), dir.path());
    handle
        .ops
        .send(Op::SetPermission {
            permission: Permission::AutoEdit,
        })
        .expect("agent alive");
    handle
        .ops
        .send(Op::Submit {
            text: "/init".into(),
            mode: Mode::Coder,
        })
        .expect("agent alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    let error = events.iter().find_map(|e| match e {
        AgentEvent::Error { message } => Some(message.as_str()),
        _ => None,
    });
    assert!(
        error.is_some_and(|m| m.contains("already exists") && m.contains("auto-edit")),
        "{events:?}"
    );
    assert!(provider.requests().is_empty(), "nothing is sent");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("AGENTS.md")).expect("kept"),
        "run make test\n"
    );
}

/// `chatcli exec [--yes] /init` in `ws` against a server whose model writes AGENTS.md; returns
/// the exit code, stderr and how many model requests were made.
async fn exec_init(ws: &Path, yes: bool) -> (i32, String, usize) {
    let home = tempfile::tempdir().expect("tempdir");
    let server = MockServer::start().await;
    let args = json!({"file": "AGENTS.md", "content": "# Repository Guidelines\n"}).to_string();
    crate::common::mount_calls_then_answer(&server, &[("write_file", args)], "done").await;
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_chatcli"));
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("CHATCLI_HOME", home.path())
        .env("OPENAI_API_KEY", "sk-test-openai-0123456789")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
        .current_dir(ws)
        .args(["exec", "--provider", "openai"]);
    if yes {
        command.arg("--yes");
    }
    command.arg("/init");
    let out = tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("join")
        .expect("chatcli runs");
    let requests = crate::common::posts(&server).await.len();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        requests,
    )
}

#[tokio::test]
async fn exec_writes_agents_md_only_with_yes_and_never_over_an_existing_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, stderr, requests) = exec_init(dir.path(), false).await;
    assert_eq!((code, requests), (1, 0), "{stderr}");
    assert!(stderr.contains("--yes"), "{stderr}");
    assert!(!dir.path().join("AGENTS.md").exists());

    let (code, stderr, requests) = exec_init(dir.path(), true).await;
    assert_eq!((code, requests), (0, 2), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("AGENTS.md")).expect("written"),
        "# Repository Guidelines\n"
    );

    std::fs::write(dir.path().join("AGENTS.md"), "run make test\n").expect("write");
    let (code, stderr, requests) = exec_init(dir.path(), true).await;
    assert_eq!((code, requests), (1, 0), "{stderr}");
    assert!(stderr.contains("already exists"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("AGENTS.md")).expect("kept"),
        "run make test\n"
    );
}
