//! Plan mode and the model's plan (#38): `update_plan` offered and reported in `exec --json`,
//! the session log and the tool panel; `--mode plan` refusing writes whatever `--yes` says; and
//! plan → coder keeping the cached prefix byte for byte.

use std::path::Path;
use std::time::Duration;

use chatcli::agent::{self, AgentOptions};
use chatcli::protocol::{AgentEvent, Mode, Op, PlanStep, StepStatus};
use insta::assert_snapshot;
use serde_json::json;
use wiremock::MockServer;

use crate::common::events_until;
use crate::common::scripted::{Scripted, respond};

/// Runs `chatcli exec --json --yes --mode MODE go` in `ws` against a server that asks for
/// `calls` one after the other, then answers "done"; returns the events, the request bodies
/// and the session log.
async fn exec_json(
    mode: &str,
    calls: &[(&str, serde_json::Value)],
    ws: &Path,
) -> (Vec<serde_json::Value>, Vec<serde_json::Value>, String) {
    let home = tempfile::tempdir().expect("tempdir");
    let server = MockServer::start().await;
    let calls: Vec<(&str, String)> = calls.iter().map(|(n, a)| (*n, a.to_string())).collect();
    crate::common::mount_calls_then_answer(&server, &calls, "done").await;
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_chatcli"));
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("CHATCLI_HOME", home.path())
        .env("OPENAI_API_KEY", "sk-test-openai-0123456789")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
        .current_dir(ws)
        .args([
            "exec",
            "--json",
            "--yes",
            "--provider",
            "openai",
            "--mode",
            mode,
            "go",
        ]);
    let out = tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("join")
        .expect("chatcli runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let bodies = crate::common::posts(&server)
        .await
        .iter()
        .map(|r| serde_json::from_slice(&r.body).expect("json body"))
        .collect();
    let log = std::fs::read_dir(home.path().join("sessions"))
        .expect("sessions")
        .filter_map(Result::ok)
        .map(|e| std::fs::read_to_string(e.path()).expect("log"))
        .collect();
    (events, bodies, log)
}

fn tool_names(body: &serde_json::Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn coder_offers_update_plan_and_a_call_yields_plan_updated_with_its_steps() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = json!({
        "plan": [
            {"step": "Read the parser", "status": "completed"},
            {"step": "Fix the off-by-one", "status": "in_progress"},
            {"step": "Add a test", "status": "pending"}
        ],
        "explanation": "found the bug"
    });
    let (events, bodies, log) = exec_json("coder", &[("update_plan", plan)], dir.path()).await;
    assert!(
        tool_names(&bodies[0]).contains(&"update_plan".to_string()),
        "{:?}",
        tool_names(&bodies[0])
    );
    let updated: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["type"] == "plan_updated")
        .collect();
    assert_eq!(updated.len(), 1, "{events:?}");
    assert_eq!(
        updated[0]["plan"],
        json!([
            {"step": "Read the parser", "status": "completed"},
            {"step": "Fix the off-by-one", "status": "in_progress"},
            {"step": "Add a test", "status": "pending"}
        ])
    );
    assert_eq!(updated[0]["explanation"], "found the bug");
    assert!(
        log.contains("\"type\":\"plan_updated\""),
        "the session log keeps it"
    );
    // The model reads that the plan was taken.
    let second = bodies[1].to_string();
    assert!(
        second.contains("Plan updated: 1 of 3 steps completed."),
        "{second}"
    );
}

#[tokio::test]
async fn plan_mode_refuses_a_write_even_with_yes_and_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = json!({"file": "notes.txt", "content": "changed\n"});
    let command = json!({"cmd": "touch ran.txt"});
    let (events, bodies, _) = exec_json(
        "plan",
        &[("write_file", write), ("run_command", command)],
        dir.path(),
    )
    .await;
    assert!(!dir.path().join("notes.txt").exists(), "nothing is written");
    assert!(!dir.path().join("ran.txt").exists(), "nothing runs");
    let refusals: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_result" && e["ok"] == false)
        .collect();
    assert_eq!(refusals.len(), 2, "{events:?}");
    for refusal in refusals {
        assert!(
            refusal["output"]
                .as_str()
                .is_some_and(|o| o.contains("plan mode")),
            "{refusal}"
        );
    }
    // Plan mode sends coder's tools, and its rule rides in the turn's context.
    assert!(tool_names(&bodies[0]).contains(&"write_file".to_string()));
    assert!(bodies[0].to_string().contains("[plan mode]"));
}

#[tokio::test]
async fn switching_from_plan_to_coder_keeps_the_cached_prefix() {
    let ws = tempfile::tempdir().expect("tempdir");
    std::fs::write(ws.path().join("notes.txt"), "alpha\n").expect("write");
    let provider = Scripted::new(
        vec![
            respond("", &[("c1", "read_file", json!({"file": "notes.txt"}))]),
            respond("1. Change alpha to beta in notes.txt.", &[]),
            respond(
                "",
                &[(
                    "c2",
                    "write_file",
                    json!({"file": "notes.txt", "content": "beta\n"}),
                )],
            ),
            respond("Done.", &[]),
        ],
        Duration::ZERO,
    );
    let mut options = AgentOptions::new("plan".into(), Mode::Plan, ws.path().to_path_buf());
    options.sessions_dir = None;
    options.approval = agent::ApprovalPolicy::AutoApprove;
    let mut handle = agent::spawn(provider.clone(), options);
    for (text, mode) in [("plan it", Mode::Plan), ("go ahead", Mode::Coder)] {
        handle
            .ops
            .send(Op::Submit {
                text: text.into(),
                mode,
            })
            .expect("alive");
        events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    }
    let requests = provider.requests();
    assert_eq!(requests.len(), 4);
    let prefix = |r: &chatcli::conversation::ModelRequest| {
        serde_json::to_string(&json!({"system": r.system, "tools": r.tools})).expect("json")
    };
    for pair in requests.windows(2) {
        assert_eq!(
            prefix(&pair[0]),
            prefix(&pair[1]),
            "system and tools never change"
        );
        let before = serde_json::to_value(&pair[0].messages).expect("json");
        let after = serde_json::to_value(&pair[1].messages).expect("json");
        let (before, after) = (before.as_array().expect("a"), after.as_array().expect("a"));
        assert_eq!(
            before[..],
            after[..before.len()],
            "each request's messages start with the previous one's"
        );
    }
    // Through the model of Anthropic's cache: the first coder request reads everything the
    // last plan request sent, so the switch itself writes nothing again.
    use chatcli::provider::cache_model::{CacheModel, Semantics, segments};
    let mut cache = CacheModel::new(Semantics::Anthropic);
    let mut memo = std::collections::HashMap::new();
    let usage: Vec<_> = requests
        .iter()
        .map(|r| {
            let (segs, markers) = segments(r, &mut memo, true, chatcli::tokens::count);
            let total: u64 = segs.iter().map(|s| s.tokens).sum();
            (cache.account(&segs, &markers), total)
        })
        .collect();
    let (switch, _) = &usage[2];
    let (_, last_plan_total) = usage[1];
    eprintln!(
        "plan → coder: the first coder request reads {} of the {last_plan_total} tokens the last plan request sent, writes {}",
        switch.cache_read, switch.cache_write_5m
    );
    assert_eq!(switch.cache_read, last_plan_total, "{usage:?}");
    let coder = serde_json::to_string(&requests[2].messages).expect("json");
    assert!(coder.contains("Plan mode is over"), "{coder}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes.txt")).expect("read"),
        "beta\n"
    );
}

fn panel_app() -> chatcli::ui::App {
    let (mut app, _ops) = crate::common::keys::app_for(Mode::Coder, "demo", "demo-model");
    app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
    let step = |step: &str, status| PlanStep {
        step: step.into(),
        status,
    };
    app.handle_agent_event(AgentEvent::ToolCall {
        id: "c1".into(),
        name: "update_plan".into(),
        args: json!({"plan": [
            {"step": "Read the parser and its tests", "status": "completed"},
            {"step": "Fix the off-by-one in the tokenizer", "status": "in_progress"},
            {"step": "Add a regression test", "status": "pending"}
        ]}),
    });
    app.handle_agent_event(AgentEvent::ToolResult {
        id: "c1".into(),
        name: "update_plan".into(),
        ok: true,
        chars: 40,
        saved_path: None,
        duration_ms: 0,
        error: None,
        exit_code: None,
        output: "Plan updated: 1 of 3 steps completed.".into(),
        diff: None,
    });
    app.handle_agent_event(AgentEvent::PlanUpdated {
        plan: vec![
            step("Read the parser and its tests", StepStatus::Completed),
            step(
                "Fix the off-by-one in the tokenizer",
                StepStatus::InProgress,
            ),
            step("Add a regression test", StepStatus::Pending),
        ],
        explanation: Some("found the cause".into()),
    });
    app.handle_agent_event(
        AgentEvent::PlanUpdated {
            plan: vec![step("Edit src/lexer.rs", StepStatus::InProgress)],
            explanation: None,
        }
        .scoped("coder", 0),
    );
    app
}

#[test]
fn the_plan_checklist_in_the_panel_at_80x24() {
    let mut app = panel_app();
    // At 80 columns the panel is an overlay, opened with Ctrl+B.
    app.handle_key(crate::common::keys::ctrl('b'));
    let screen = crate::common::screen_at(&mut app, 80, 24);
    assert!(screen.contains("◐ Fix the off-by-one"), "{screen}");
    assert_snapshot!(screen);
}

#[test]
fn the_plan_checklist_in_the_panel_at_200x60() {
    let mut app = panel_app();
    let screen = crate::common::screen_at(&mut app, 200, 60);
    assert!(screen.contains("coder plan 0/1"), "{screen}");
    assert!(
        screen.contains("plan updated (1/3 done): found the cause"),
        "{screen}"
    );
    assert_snapshot!(screen);
}

#[test]
fn a_resumed_session_redraws_the_plan_from_its_log() {
    let (mut app, _ops) = crate::common::keys::app_for(Mode::Coder, "demo", "demo-model");
    let logged = [
        json!({"type": "prompt", "text": "fix the lexer", "mode": "coder"}),
        json!({"type": "plan_updated", "plan": [
            {"step": "Find the bug", "status": "completed"},
            {"step": "Fix it", "status": "pending"}
        ]}),
    ];
    let events: Vec<AgentEvent> = logged
        .iter()
        .map(|line| serde_json::from_value(line.clone()).expect("a logged event"))
        .collect();
    app.replay(events);
    let screen = crate::common::screen_at(&mut app, 200, 60);
    assert!(
        screen.contains("Plan 1/2"),
        "the panel's checklist:\n{screen}"
    );
    assert!(
        screen.contains("plan updated (1/2 done)") && screen.contains("☐ Fix it"),
        "the transcript line:\n{screen}"
    );
}
