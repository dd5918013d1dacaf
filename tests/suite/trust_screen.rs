//! What the user approves and sees is exactly what happens: the approval dialog shows the whole
//! request and answers only to y / a / n / Esc, tool outcomes reach the transcript and its pager,
//! slash commands do what the reference system documents, and a resumed session looks the same.

use std::sync::Arc;
use std::time::Duration;

use chatcli::agent;
use chatcli::protocol::{AgentEvent, ApprovalDecision, Mode, Op};
use chatcli::ui::App;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use serde_json::json;

use crate::common::keys::{app_for, ctrl, drain, key, type_text};
use crate::common::scripted::{Scripted, respond};
use crate::common::{draw, events_until, options, screen_text, settle_approval};

fn app(mode: Mode) -> (App, crate::common::keys::Ops) {
    app_for(mode, "demo (offline)", "demo")
}

const LONG_COMMAND: &str = "echo 'building the project with every optional feature enabled so that the whole thing is tested' && cargo build --all-features && cargo test --all-features && rm -rf ~/.ssh";

fn ask(app: &mut App, name: &str, args: serde_json::Value, preview: Option<String>) {
    app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
    app.handle_agent_event(AgentEvent::ToolCall {
        id: "c1".into(),
        name: name.into(),
        args: args.clone(),
    });
    app.handle_agent_event(AgentEvent::ApprovalRequest {
        id: "c1".into(),
        name: name.into(),
        args,
        preview,
    });
}

#[test]
fn a_long_command_is_shown_whole_and_the_panel_says_awaiting_approval() {
    let (mut app, _ops) = app(Mode::Agent);
    ask(&mut app, "run_command", json!({"cmd": LONG_COMMAND}), None);
    let screen = screen_text(&draw(&mut app));
    assert!(
        screen.contains("rm -rf ~/.ssh"),
        "the dangerous tail is on screen:\n{screen}"
    );
    assert!(screen.contains("awaiting approval"), "{screen}");
    assert!(!screen.contains("running"), "{screen}");
    assert_snapshot!(screen);
}

#[tokio::test]
async fn a_sixty_line_write_shows_its_diff_and_scrolls() {
    // The preview is the agent's: run a real agent that asks to overwrite a 60-line file.
    let dir = tempfile::tempdir().expect("tempdir");
    let old: String = (1..=60).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.path().join("big.txt"), &old).expect("write");
    let new: String = (1..=60)
        .map(|i| {
            if i % 10 == 0 {
                format!("LINE {i} CHANGED\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    let provider = Scripted::new(
        vec![
            respond(
                "",
                &[(
                    "w1",
                    "write_file",
                    json!({"file": "big.txt", "content": new}),
                )],
            ),
            respond("done", &[]),
        ],
        Duration::ZERO,
    );
    let mut handle = agent::spawn(provider, options(dir.path(), Mode::Coder));
    handle
        .ops
        .send(Op::Submit {
            text: "rewrite big.txt".into(),
            mode: Mode::Coder,
        })
        .expect("agent alive");
    let events = events_until(&mut handle, |e| {
        matches!(e, AgentEvent::ApprovalRequest { .. })
    })
    .await;
    let (mut app, mut ops) = app(Mode::Coder);
    for event in events {
        app.handle_agent_event(event);
    }
    let first = screen_text(&draw(&mut app));
    assert!(first.contains("--- a/big.txt"), "{first}");
    assert!(
        first.contains("-line 10") && first.contains("+LINE 10 CHANGED"),
        "{first}"
    );
    assert!(
        first.contains("more lines"),
        "it says how much is below:\n{first}"
    );
    assert!(!first.contains("+LINE 60 CHANGED"), "{first}");
    assert_snapshot!("sixty_line_write_top", first);
    settle_approval(&mut app);
    app.handle_key(key(KeyCode::End));
    let bottom = screen_text(&draw(&mut app));
    assert!(bottom.contains("+LINE 60 CHANGED"), "{bottom}");
    assert!(drain(&mut ops).is_empty(), "scrolling answers nothing");
    crate::common::press_alone(&mut app, key(KeyCode::Char('y')));
    let sent = drain(&mut ops);
    assert_eq!(
        sent,
        vec![Op::Approve {
            id: "w1".into(),
            decision: ApprovalDecision::AllowOnce
        }]
    );
    handle.ops.send(sent[0].clone()).expect("agent alive");
    let rest = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("big.txt")).expect("read"),
        new
    );
    let diff = rest.iter().find_map(|e| match e {
        AgentEvent::ToolResult { diff, .. } => diff.clone(),
        _ => None,
    });
    assert!(
        diff.is_some_and(|d| d.contains("+LINE 60 CHANGED")),
        "the applied diff goes with the result"
    );
}

#[test]
fn a_stray_key_never_answers_or_loses_the_dialog() {
    let (mut app, mut ops) = app(Mode::Agent);
    ask(&mut app, "run_command", json!({"cmd": "make deploy"}), None);
    draw(&mut app);
    settle_approval(&mut app);
    for k in [
        key(KeyCode::Up),
        key(KeyCode::F(1)),
        key(KeyCode::Enter),
        key(KeyCode::Tab),
    ] {
        crate::common::press_alone(&mut app, k);
    }
    // A printable key that is no answer is kept for the prompt, not lost.
    crate::common::press_alone(&mut app, key(KeyCode::Char('x')));
    assert!(drain(&mut ops).is_empty(), "no key but y/a/n/Esc answers");
    let screen = screen_text(&draw(&mut app));
    assert!(screen.contains("Approve tool call?"), "{screen}");
    assert_eq!(
        app.input.composer.text(),
        "x",
        "the stray letter waits in the composer"
    );
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(
        drain(&mut ops),
        vec![Op::Approve {
            id: "c1".into(),
            decision: ApprovalDecision::Deny
        }]
    );
}

/// Types `text` into the app as a person does: one key every 60 ms (well inside the burst gap),
/// with the held-key clock run as the frames would run it.
fn type_burst(app: &mut App, text: &str) {
    for c in text.chars() {
        app.handle_key(key(KeyCode::Char(c)));
        std::thread::sleep(Duration::from_millis(60));
        app.settle_at(std::time::Instant::now());
    }
}

#[test]
fn type_ahead_never_answers_and_is_kept_in_the_composer() {
    let (mut app, mut ops) = app(Mode::Agent);
    ask(&mut app, "run_command", json!({"cmd": "make deploy"}), None);
    // Keys before the first frame, and right after it, are the end of what the user was typing.
    type_text(&mut app, "an");
    draw(&mut app);
    type_text(&mut app, "any");
    // Then, with the dialog settled, a whole sentence full of a, y and n, typed at speed.
    settle_approval(&mut app);
    type_burst(
        &mut app,
        " please check the output carefully, yes any day now",
    );
    app.settle_at(std::time::Instant::now() + Duration::from_secs(1));
    assert!(
        drain(&mut ops).is_empty(),
        "no letter of the sentence answered the dialog"
    );
    assert_eq!(
        app.input.composer.text(),
        "anany please check the output carefully, yes any day now",
        "every key typed is kept, in order"
    );
    assert!(screen_text(&draw(&mut app)).contains("Approve tool call?"));
    // A deliberate `a` asks for a second one and says what it would allow.
    crate::common::press_alone(&mut app, key(KeyCode::Char('a')));
    assert!(drain(&mut ops).is_empty(), "one `a` does not allow always");
    let screen = screen_text(&draw(&mut app));
    assert!(
        screen.contains("again to allow every run_command call"),
        "{screen}"
    );
    for (width, height) in [(80, 24), (200, 60)] {
        let screen = crate::common::screen_at(&mut app, width, height);
        assert_snapshot!(format!("allow_always_confirm_{width}x{height}"), screen);
    }
    crate::common::press_alone(&mut app, key(KeyCode::Char('a')));
    assert_eq!(
        drain(&mut ops),
        vec![Op::Approve {
            id: "c1".into(),
            decision: ApprovalDecision::AllowAlways
        }]
    );
}

fn finished_command(app: &mut App, id: &str, cmd: &str, exit: i32, output: &str) {
    app.handle_agent_event(AgentEvent::ToolCall {
        id: id.into(),
        name: "run_command".into(),
        args: json!({"cmd": cmd}),
    });
    app.handle_agent_event(AgentEvent::ToolResult {
        id: id.into(),
        name: "run_command".into(),
        ok: true,
        chars: output.chars().count() as u64,
        saved_path: None,
        duration_ms: 1_200,
        error: None,
        exit_code: Some(exit),
        output: output.into(),
        diff: None,
    });
}

#[test]
fn each_call_gets_its_outcome_line_and_the_pager_shows_the_output() {
    let (mut app, _ops) = app(Mode::Agent);
    app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
    finished_command(
        &mut app,
        "c1",
        "cargo test",
        0,
        "exit code 0\ntest result: ok",
    );
    finished_command(
        &mut app,
        "c2",
        "cargo clippy",
        3,
        "exit code 3\nerror: unused variable `x` in src/lib.rs",
    );
    let screen = screen_text(&draw(&mut app));
    assert!(
        screen.contains("✓ run_command cargo test · exit 0 · 1.2s"),
        "{screen}"
    );
    assert!(
        screen.contains("✗ run_command cargo clippy · exit 3"),
        "{screen}"
    );
    assert_snapshot!(screen);

    app.handle_key(ctrl('t'));
    let pager = screen_text(&draw(&mut app));
    assert!(pager.contains("$ cargo clippy"), "{pager}");
    assert!(pager.contains("error: unused variable `x`"), "{pager}");
    // `/` searches the pager.
    app.handle_key(key(KeyCode::Char('/')));
    type_text(&mut app, "unused");
    app.handle_key(key(KeyCode::Enter));
    assert!(screen_text(&draw(&mut app)).contains("/unused: line"));
    app.handle_key(key(KeyCode::Esc));
    assert!(!screen_text(&draw(&mut app)).contains("$ cargo clippy"));

    // One call: pick it (Ctrl+↑) and press Enter: its record opens under its line.
    app.handle_key(KeyEvent::new(KeyCode::Up, KeyModifiers::CONTROL));
    app.handle_key(key(KeyCode::Enter));
    let one = screen_text(&draw(&mut app));
    assert!(
        one.contains("$ cargo clippy") && !one.contains("$ cargo test"),
        "{one}"
    );
}

#[test]
fn an_error_leaves_no_empty_answer_frame() {
    let (mut app, _ops) = app(Mode::Agent);
    app.handle_key(key(KeyCode::Char('h')));
    app.handle_key(key(KeyCode::Enter));
    app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
    app.handle_agent_event(AgentEvent::Error {
        message: "anthropic: HTTP 401: invalid x-api-key".into(),
    });
    app.handle_agent_event(AgentEvent::TurnFinished {
        text: String::new(),
        stop_reason: "error".into(),
    });
    let screen = screen_text(&draw(&mut app));
    assert!(screen.contains("invalid x-api-key"), "{screen}");
    assert!(
        !screen.contains("│ …"),
        "no empty frame above the error:\n{screen}"
    );
}

#[test]
fn a_mode_command_with_text_switches_and_sends_it() {
    let (mut app, mut ops) = app(Mode::Chat);
    type_text(&mut app, "/agent what is a channel in Go?");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        drain(&mut ops),
        vec![
            Op::SetMode { mode: Mode::Agent },
            Op::Submit {
                text: "what is a channel in Go?".into(),
                mode: Mode::Agent
            }
        ]
    );
    assert!(app.input.composer.is_empty());
}

#[test]
fn a_path_is_a_prompt_and_an_unknown_command_keeps_the_text() {
    let (mut app, mut ops) = app(Mode::Agent);
    type_text(&mut app, "/etc/hosts what does this file do?");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        drain(&mut ops),
        vec![Op::Submit {
            text: "/etc/hosts what does this file do?".into(),
            mode: Mode::Agent
        }]
    );
    app.handle_agent_event(AgentEvent::TurnFinished {
        text: "ok".into(),
        stop_reason: "end_turn".into(),
    });
    type_text(&mut app, "/frobnicate the widgets");
    app.handle_key(key(KeyCode::Enter));
    assert!(drain(&mut ops).is_empty());
    assert_eq!(app.input.composer.text(), "/frobnicate the widgets");
    let screen = screen_text(&draw(&mut app));
    assert!(screen.contains("unknown command /frobnicate"), "{screen}");
}

/// Runs a session with tool calls on a real agent and a session log; returns the events and the
/// log's path.
async fn logged_session(dir: &std::path::Path) -> (Vec<AgentEvent>, std::path::PathBuf) {
    std::fs::write(dir.join("notes.txt"), "alpha\nbeta\n").expect("write");
    let big: String = (0..2_000)
        .map(|i| format!("row {i} of the page\n"))
        .collect();
    std::fs::write(dir.join("big.txt"), &big).expect("write");
    let provider = Scripted::new(
        vec![
            respond(
                "Reading.",
                &[
                    ("r1", "read_file", json!({"file": "notes.txt"})),
                    ("r2", "list_directory", json!({})),
                ],
            ),
            respond("It says alpha and beta.", &[]),
        ],
        Duration::ZERO,
    );
    let sessions = dir.join("home").join("sessions");
    let mut opts = options(dir, Mode::Agent);
    opts.sessions_dir = Some(sessions.clone());
    let mut handle = agent::spawn(Arc::clone(&provider) as _, opts);
    handle
        .ops
        .send(Op::Submit {
            text: "what do the notes say?".into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    handle.ops.send(Op::Shutdown).expect("agent alive");
    let _ = handle.join.await;
    (events, sessions.join("test-session.jsonl"))
}

#[tokio::test]
async fn a_resumed_session_shows_the_same_screen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (events, log) = logged_session(dir.path()).await;
    let (mut live, _ops) = app(Mode::Agent);
    live.chat.push(chatcli::ui::chat::CellKind::User(
        "what do the notes say?".into(),
    ));
    for event in events {
        live.handle_agent_event(event);
    }
    let resumed = chatcli::session_log::load(&log).expect("the log reads back");
    let kinds: Vec<String> = resumed.events.iter().map(crate::common::kind).collect();
    for kind in ["tool_call", "tool_result"] {
        assert!(
            kinds.iter().any(|k| k == kind),
            "the log keeps {kind}: {kinds:?}"
        );
    }
    let (mut again, _ops2) = app(Mode::Agent);
    again.replay(resumed.events);
    let before = screen_text(&draw(&mut live));
    let after = screen_text(&draw(&mut again));
    let strip = |s: &str| {
        s.lines()
            .filter(|l| !l.contains("resumed: the conversation"))
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(after.contains("Tools (2)"), "{after}");
    assert!(after.contains("✓ read_file notes.txt"), "{after}");
    // The resume notice takes a line at the bottom; everything else is the same, row for row.
    let before_lines: Vec<&str> = before.lines().collect();
    let after_lines: Vec<&str> = after.lines().collect();
    assert_eq!(before_lines.len(), after_lines.len());
    assert_eq!(
        strip(&before).lines().filter(|l| l.contains('✓')).count(),
        strip(&after).lines().filter(|l| l.contains('✓')).count()
    );
    // The meters and cost are rebuilt from the logged usage.
    let status = |s: &str| {
        s.lines()
            .find(|l| l.contains("MODE"))
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(status(&before), status(&after));
    // Ctrl+T pages through the same records.
    again.handle_key(ctrl('t'));
    let pager = screen_text(&draw(&mut again));
    assert!(
        pager.contains("1  alpha") || pager.contains("alpha"),
        "{pager}"
    );
}
