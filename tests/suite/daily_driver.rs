//! The TUI as Claude Code and Codex users drive it: history, palette, mentions, the queue, Esc,
//! Ctrl+C, graphemes, `/rewind`, `/permissions`, and a layout that works from 40×12 to 200×60.

use std::sync::Arc;
use std::time::Duration;

use chatcli::agent;
use chatcli::protocol::{AgentEvent, Mode, Op, Permission};
use chatcli::provider::Provider;
use chatcli::ui::App;
use crossterm::event::KeyCode;
use insta::assert_snapshot;
use serde_json::json;

use crate::common::keys::{app_for, ctrl, drain, key, type_text};
use crate::common::scripted::{Scripted, respond};
use crate::common::{events_until, options, screen_at};

fn app(mode: Mode) -> (App, crate::common::keys::Ops) {
    app_for(mode, "anthropic", "claude-sonnet-4-5")
}

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 60)];

fn snapshot_sizes(name: &str, app: &mut App) {
    for (w, h) in SIZES {
        let screen = screen_at(app, w, h);
        assert_snapshot!(format!("{name}_{w}x{h}"), screen);
    }
}

#[test]
fn the_palette_after_co_lists_the_matching_commands() {
    let (mut app, _ops) = app(Mode::Agent);
    type_text(&mut app, "/co");
    let screen = screen_at(&mut app, 80, 24);
    for command in ["/coder", "/compact", "/context", "/cost", "/config"] {
        assert!(screen.contains(command), "{command} missing:\n{screen}");
    }
    assert!(!screen.contains("/resume"), "{screen}");
    snapshot_sizes("palette_co", &mut app);
}

#[test]
fn the_palette_completes_with_tab_and_runs_with_enter() {
    let (mut app, mut ops) = app(Mode::Agent);
    type_text(&mut app, "/cos");
    app.handle_key(key(KeyCode::Tab));
    assert_eq!(app.input.composer.text(), "/cost ");
    app.input.composer.clear();
    type_text(&mut app, "/co");
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(drain(&mut ops), vec![Op::CostReport], "Enter ran /cost");
}

#[test]
fn the_mention_picker_lists_workspace_files_and_inserts_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("src/ui")).expect("mkdir");
    for f in ["src/main.rs", "src/ui/app.rs", "README.md", "Cargo.toml"] {
        std::fs::write(dir.path().join(f), "x").expect("write");
    }
    let (mut app, _ops) = app(Mode::Coder);
    app.input.files_index = chatcli::ui::popup::FileIndex::new(dir.path());
    type_text(&mut app, "explain @uiap");
    // The walk runs beside the UI; the picker fills in as files arrive, at the next frame.
    app.input
        .files_index
        .wait(std::time::Duration::from_secs(10));
    app.settle_at(std::time::Instant::now());
    let screen = screen_at(&mut app, 80, 24);
    assert!(screen.contains("@src/ui/app.rs"), "{screen}");
    snapshot_sizes("mention_picker", &mut app);
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(app.input.composer.text(), "explain @src/ui/app.rs ");
    assert!(app.input.popup.is_none());
}

#[test]
fn the_mention_picker_offers_files_anywhere_in_a_50000_file_repository() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 50,000 files in 500 folders; the one to find sits in the last folder walked by name.
    for d in 0..500 {
        let folder = dir.path().join(format!("pkg{d:03}"));
        std::fs::create_dir_all(&folder).expect("mkdir");
        for f in 0..100 {
            std::fs::write(folder.join(format!("f{f:03}.rs")), "").expect("write");
        }
    }
    let deep = dir.path().join("zz/deep/inside");
    std::fs::create_dir_all(&deep).expect("mkdir");
    std::fs::write(deep.join("needle_config.toml"), "").expect("write");
    let (mut app, _ops) = app(Mode::Coder);
    app.input.files_index = chatcli::ui::popup::FileIndex::new(dir.path());
    type_text(&mut app, "@needle");
    app.input
        .files_index
        .wait(std::time::Duration::from_secs(60));
    app.settle_at(std::time::Instant::now());
    let screen = screen_at(&mut app, 80, 24);
    assert!(
        screen.contains("@zz/deep/inside/needle_config.toml"),
        "{screen}"
    );
    let all = app.input.files_index.matching("", usize::MAX);
    assert_eq!(
        all.len(),
        50_001,
        "every file is indexed, none hidden by a cap"
    );
    let pkg = app.input.files_index.matching("pkg499/f099", 1);
    assert_eq!(pkg, ["pkg499/f099.rs"], "the last folder is indexed too");
}

#[test]
fn enter_while_a_turn_runs_queues_and_esc_removes_the_newest() {
    let (mut app, mut ops) = app(Mode::Agent);
    type_text(&mut app, "first");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(drain(&mut ops).len(), 1);
    app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
    type_text(&mut app, "second");
    app.handle_key(key(KeyCode::Enter));
    type_text(&mut app, "third");
    app.handle_key(key(KeyCode::Enter));
    assert!(drain(&mut ops).is_empty(), "nothing sent while a turn runs");
    let screen = screen_at(&mut app, 80, 24);
    assert!(
        screen.contains("queued: second") && screen.contains("queued: third"),
        "{screen}"
    );
    snapshot_sizes("queued", &mut app);
    // Esc interrupts first; the queue is kept.
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(drain(&mut ops), vec![Op::Interrupt]);
    assert_eq!(app.input.queue.len(), 2, "the queue is kept");
    app.handle_agent_event(AgentEvent::TurnFinished {
        text: String::new(),
        stop_reason: "interrupted".into(),
    });
    assert!(
        drain(&mut ops).is_empty(),
        "after an interrupt the queue waits"
    );
    // Nothing runs now: Esc drops the newest queued prompt.
    app.handle_key(key(KeyCode::Esc));
    assert_eq!(
        app.input.queue.len(),
        1,
        "Esc removed the newest queued prompt"
    );
    // Enter on an empty prompt sends the next one.
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        drain(&mut ops),
        vec![Op::Submit {
            text: "second".into(),
            mode: Mode::Agent
        }]
    );
    assert!(app.input.queue.is_empty());
}

#[test]
fn ctrl_c_clears_a_draft_before_it_interrupts_or_quits() {
    let (mut app, mut ops) = app(Mode::Agent);
    type_text(&mut app, "half a thought");
    app.handle_key(ctrl('c'));
    assert!(app.input.composer.is_empty());
    assert!(!app.should_quit());
    app.handle_key(ctrl('c'));
    app.handle_key(ctrl('c'));
    assert!(app.should_quit(), "twice on an empty composer quits");
    assert!(drain(&mut ops).is_empty());
    let (mut busy, mut ops) = self::app(Mode::Agent);
    type_text(&mut busy, "go");
    busy.handle_key(key(KeyCode::Enter));
    drain(&mut ops);
    busy.handle_key(ctrl('d'));
    assert!(
        !busy.should_quit(),
        "Ctrl+D does not quit while a turn runs"
    );
}

#[test]
fn up_and_down_walk_history_keeping_the_draft_and_ctrl_r_searches() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("history.jsonl");
    std::fs::write(&path, "{\"text\":\"from an earlier session\"}\n").expect("write");
    let (mut app, _ops) = app(Mode::Agent);
    app.input.history = chatcli::ui::history::PromptHistory::load(&path, Default::default());
    for prompt in ["explain the parser", "fix the lexer"] {
        type_text(&mut app, prompt);
        app.handle_key(key(KeyCode::Enter));
        app.handle_agent_event(AgentEvent::TurnFinished {
            text: String::new(),
            stop_reason: "end_turn".into(),
        });
    }
    type_text(&mut app, "draft");
    app.handle_key(key(KeyCode::Up));
    assert_eq!(app.input.composer.text(), "fix the lexer");
    app.handle_key(key(KeyCode::Up));
    app.handle_key(key(KeyCode::Up));
    assert_eq!(app.input.composer.text(), "from an earlier session");
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Down));
    app.handle_key(key(KeyCode::Down));
    assert_eq!(app.input.composer.text(), "draft", "the draft comes back");
    app.handle_key(ctrl('r'));
    type_text(&mut app, "pars");
    let screen = screen_at(&mut app, 80, 24);
    assert!(screen.contains("explain the parser"), "{screen}");
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(app.input.composer.text(), "explain the parser");
    let saved = std::fs::read_to_string(&path).expect("read");
    assert!(saved.contains("fix the lexer"), "persisted: {saved}");
}

#[test]
fn the_cursor_moves_by_grapheme_in_the_app() {
    let (mut app, _ops) = app(Mode::Agent);
    type_text(&mut app, "a👨‍👩‍👧b");
    app.handle_key(key(KeyCode::Left));
    app.handle_key(key(KeyCode::Left));
    app.handle_key(key(KeyCode::Backspace));
    assert_eq!(app.input.composer.text(), "👨‍👩‍👧b");
    app.handle_key(key(KeyCode::Right));
    app.handle_key(key(KeyCode::Char('!')));
    assert_eq!(app.input.composer.text(), "👨‍👩‍👧!b");
}

#[test]
fn esc_then_page_up_never_types_an_escape_sequence() {
    let (mut app, _ops) = app(Mode::Agent);
    for i in 0..80 {
        app.chat
            .push(chatcli::ui::chat::CellKind::Notice(format!("line {i}")));
    }
    screen_at(&mut app, 80, 24);
    app.handle_key(key(KeyCode::Esc));
    type_text(&mut app, "[5~");
    assert!(
        app.input.composer.is_empty(),
        "got {:?}",
        app.input.composer.text()
    );
    assert!(!app.chat.following(), "the sequence scrolled up as PageUp");
}

#[test]
fn below_100_columns_the_panel_folds_into_a_strip() {
    let (mut app, _ops) = app(Mode::Agent);
    app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
    app.handle_agent_event(AgentEvent::ToolCall {
        id: "c1".into(),
        name: "read_file".into(),
        args: json!({"file": "src/main.rs"}),
    });
    app.handle_agent_event(AgentEvent::TextDelta {
        text: "A line of prose that is long enough to need more than one row at eighty columns, so it wraps.".into(),
    });
    let narrow = screen_at(&mut app, 80, 24);
    assert!(
        !narrow.contains("┌ Tools"),
        "no side panel at 80 columns:\n{narrow}"
    );
    assert!(
        narrow.contains("tools 1") && narrow.contains("Ctrl+B"),
        "{narrow}"
    );
    let chat_width = narrow
        .lines()
        .find(|l| l.contains("╭─ assistant"))
        .map(|l| l.trim_end().chars().count())
        .unwrap_or_default();
    assert!(
        chat_width >= 72,
        "the chat keeps 90% of 80 columns: {chat_width}"
    );
    snapshot_sizes("folded", &mut app);
    app.handle_key(ctrl('b'));
    assert!(
        screen_at(&mut app, 80, 24).contains("Tools (1)"),
        "Ctrl+B shows the panel"
    );
    let tiny = screen_at(&mut app, 40, 12);
    let chat_rows = tiny.lines().take_while(|l| !l.contains("MODE")).count();
    assert!(chat_rows >= 5, "the chat keeps 5 rows at 40×12:\n{tiny}");
}

#[test]
fn a_line_that_fills_the_width_keeps_its_border() {
    let (mut app, _ops) = app(Mode::Agent);
    app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
    // The frame at 80 columns: 1 margin each side, "│ " and " │": 74 columns of text.
    app.handle_agent_event(AgentEvent::TextDelta {
        text: "x".repeat(74),
    });
    let screen = screen_at(&mut app, 80, 24);
    for line in screen.lines().filter(|l| l.contains("xxxx")) {
        assert!(line.trim_end().ends_with('│'), "border lost: {line:?}");
    }
}

#[test]
fn the_status_bar_keeps_the_meters_while_working_and_names_the_branch() {
    let (mut app, _ops) = app(Mode::Agent);
    app.status.workspace = "chatcli ⎇ main".into();
    type_text(&mut app, "go");
    app.handle_key(key(KeyCode::Enter));
    let screen = screen_at(&mut app, 120, 40);
    let status = screen
        .lines()
        .find(|l| l.contains("MODE"))
        .unwrap_or_default();
    for part in [
        "AGENT MODE",
        "claude-sonnet-4-5",
        "0↑ 0↓",
        "cache 0%",
        "$0.0000",
        "chatcli ⎇ main",
    ] {
        assert!(status.contains(part), "{part} missing from {status:?}");
    }
    assert!(screen.contains("working · Esc to interrupt"), "{screen}");
}

#[test]
fn the_status_bar_counts_down_the_cache_s_life_while_idle() {
    let (mut app, _ops) = app(Mode::Agent);
    let status_line = |app: &mut App| {
        let screen = screen_at(app, 120, 40);
        screen
            .lines()
            .find(|l| l.contains("MODE"))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        !status_line(&mut app).contains("warm"),
        "no lifetime known yet"
    );
    app.handle_agent_event(AgentEvent::CacheWarm {
        lifetime_secs: 300,
        kept_warm: false,
    });
    let status = status_line(&mut app);
    assert!(status.contains("cache 0% · warm 5m"), "{status:?}");
    // Four and a half minutes on: under a minute left, then lapsed.
    let now = std::time::Instant::now();
    app.status.cache_until = Some(now + std::time::Duration::from_secs(30));
    assert!(status_line(&mut app).contains("warm <1m"));
    app.status.cache_until = now.checked_sub(std::time::Duration::from_secs(1));
    assert!(status_line(&mut app).contains("cache 0% · cold"));
    // While a request runs the timer is not shown: the request renews it.
    type_text(&mut app, "go");
    app.handle_key(key(KeyCode::Enter));
    let status = status_line(&mut app);
    assert!(
        status.contains("cache 0%") && !status.contains("cold"),
        "{status:?}"
    );
}

#[test]
fn the_exit_summary_names_the_session_and_its_bill() {
    let (mut app, _ops) = app(Mode::Agent);
    app.handle_agent_event(AgentEvent::Usage {
        turn: 1,
        usage: chatcli::protocol::UsageFigures {
            input_tokens: 12_000,
            output_tokens: 345,
            cache_read_tokens: 9_000,
            ..Default::default()
        },
        cost_usd: Some(0.0123),
    });
    assert_snapshot!(app.exit_summary("20261201-120000-abcd"));
}

#[test]
fn permissions_read_only_refuses_a_write_without_a_dialog() {
    let (mut ui, mut ops) = app(Mode::Coder);
    type_text(&mut ui, "/permissions read-only");
    ui.handle_key(key(KeyCode::Enter));
    assert_eq!(
        drain(&mut ops),
        vec![Op::SetPermission {
            permission: Permission::ReadOnly
        }]
    );
    assert!(screen_at(&mut ui, 120, 40).contains("perm read-only"));
}

#[tokio::test]
async fn the_agent_refuses_writes_in_read_only_mode_without_asking() {
    let dir = tempfile::tempdir().expect("tempdir");
    let provider = Scripted::new(
        vec![
            respond(
                "",
                &[("w1", "write_file", json!({"file": "a.txt", "content": "x"}))],
            ),
            respond("ok", &[]),
        ],
        Duration::ZERO,
    );
    let mut handle = agent::spawn(provider, options(dir.path(), Mode::Coder));
    handle
        .ops
        .send(Op::SetPermission {
            permission: Permission::ReadOnly,
        })
        .expect("agent alive");
    handle
        .ops
        .send(Op::Submit {
            text: "write a.txt".into(),
            mode: Mode::Coder,
        })
        .expect("agent alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::ApprovalRequest { .. })),
        "no dialog"
    );
    let error = events.iter().find_map(|e| match e {
        AgentEvent::ToolResult { error, .. } => error.clone(),
        _ => None,
    });
    assert!(error.is_some_and(|e| e.contains("read-only permission mode")));
    assert!(!dir.path().join("a.txt").exists());
}

#[tokio::test]
async fn rewind_returns_to_before_a_prompt_and_restores_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "original\n").expect("write");
    let provider = Scripted::new(
        vec![
            respond(
                "",
                &[(
                    "w1",
                    "write_file",
                    json!({"file": "a.txt", "content": "first edit\n"}),
                )],
            ),
            respond("done one", &[]),
            respond(
                "",
                &[(
                    "w2",
                    "write_file",
                    json!({"file": "a.txt", "content": "second edit\n"}),
                )],
            ),
            respond("done two", &[]),
            respond("after the rewind", &[]),
        ],
        Duration::ZERO,
    );
    let mut opts = options(dir.path(), Mode::Coder);
    opts.approval = chatcli::agent::ApprovalPolicy::AutoApprove;
    let mut handle = agent::spawn(Arc::clone(&provider) as Arc<dyn Provider>, opts);
    for prompt in ["edit a.txt once", "edit a.txt again"] {
        handle
            .ops
            .send(Op::Submit {
                text: prompt.into(),
                mode: Mode::Coder,
            })
            .expect("agent alive");
        events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).expect("read"),
        "second edit\n"
    );

    // The picker sends the prompt the user chose.
    let (mut ui, mut ops) = app(Mode::Coder);
    for prompt in ["edit a.txt once", "edit a.txt again"] {
        type_text(&mut ui, prompt);
        ui.handle_key(key(KeyCode::Enter));
        ui.handle_agent_event(AgentEvent::TurnFinished {
            text: String::new(),
            stop_reason: "end_turn".into(),
        });
    }
    drain(&mut ops);
    type_text(&mut ui, "/rewind");
    ui.handle_key(key(KeyCode::Esc));
    ui.handle_key(key(KeyCode::Enter));
    ui.handle_key(key(KeyCode::Up));
    ui.handle_key(key(KeyCode::Enter));
    let sent = drain(&mut ops);
    assert_eq!(sent, vec![Op::Rewind { prompt: 0 }]);
    assert_eq!(
        ui.input.composer.text(),
        "edit a.txt once",
        "the prompt returns for editing"
    );

    handle.ops.send(sent[0].clone()).expect("agent alive");
    let events = events_until(
        &mut handle,
        |e| matches!(e, AgentEvent::Notice { message } if message.starts_with("rewound")),
    )
    .await;
    let notice = format!("{:?}", events.last());
    assert!(notice.contains("restored a.txt"), "{notice}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).expect("read"),
        "original\n"
    );
    handle
        .ops
        .send(Op::Submit {
            text: "start over".into(),
            mode: Mode::Coder,
        })
        .expect("agent alive");
    events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    let last = provider.requests().pop().expect("a request");
    assert_eq!(last.messages.len(), 1, "the conversation starts over");
    assert!(last.messages[0].text().contains("start over"));
}
