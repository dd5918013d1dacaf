//! A tool call's full output, or the diff it applied, opens in place from its line in the chat:
//! Ctrl+↑/↓ picks a call (its line is highlighted and says which keys act on it), Enter opens
//! its whole record under the line, wrapped rather than cut, and Enter again folds it. Ctrl+T
//! pages through the picked call alone.

use chatcli::protocol::{AgentEvent, Mode};
use chatcli::ui::App;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use serde_json::json;

use crate::common::keys::{app_for, ctrl, key};
use crate::common::{screen_at, screen_text};

/// The end of a long output line: only on screen when the line is wrapped, not cut.
const LONG_TAIL: &str = "the-end-of-a-very-long-line";

fn ctrl_up() -> KeyEvent {
    KeyEvent::new(KeyCode::Up, KeyModifiers::CONTROL)
}

/// A finished turn: an answer that ran the tests (a long log) and then edited a file.
fn session() -> App {
    let (app, _ops) = app_for(Mode::Coder, "demo (offline)", "demo");
    let mut app = app;
    app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
    app.handle_agent_event(AgentEvent::TextDelta {
        text: "I ran the tests, then fixed the typo they found.".into(),
    });
    let mut log: Vec<String> = (1..=12)
        .map(|i| format!("test parser::case_{i:02} ... ok"))
        .collect();
    log.push(format!(
        "warning: {} {LONG_TAIL}",
        "unused import in src/lib.rs, line 3, column 5: `std::collections::HashMap` is never used;"
            .repeat(2)
    ));
    log.push("test result: ok. 12 passed; 0 failed".into());
    let log = log.join("\n");
    app.handle_agent_event(AgentEvent::ToolCall {
        id: "c1".into(),
        name: "run_command".into(),
        args: json!({"cmd": "cargo test --workspace --all-features -- --test-threads=1 parser"}),
    });
    app.handle_agent_event(AgentEvent::ToolResult {
        id: "c1".into(),
        name: "run_command".into(),
        ok: true,
        chars: log.chars().count() as u64,
        saved_path: None,
        duration_ms: 4_200,
        error: None,
        exit_code: Some(0),
        output: log,
        diff: None,
    });
    app.handle_agent_event(AgentEvent::ToolCall {
        id: "c2".into(),
        name: "patch_file".into(),
        args: json!({"path": "src/parser.rs", "old": "recieve", "new": "receive"}),
    });
    app.handle_agent_event(AgentEvent::ToolResult {
        id: "c2".into(),
        name: "patch_file".into(),
        ok: true,
        chars: 22,
        saved_path: None,
        duration_ms: 3,
        error: None,
        exit_code: None,
        output: "patched src/parser.rs".into(),
        diff: Some(
            "--- a/src/parser.rs\n+++ b/src/parser.rs\n@@ -10,3 +10,3 @@\n fn read(input: &str) {\n-    recieve(input)\n+    receive(input)\n }\n"
                .into(),
        ),
    });
    app.handle_agent_event(AgentEvent::TurnFinished {
        text: String::new(),
        stop_reason: "end_turn".into(),
    });
    app
}

#[test]
fn a_call_opens_in_place_from_its_line_and_folds_again() {
    for (width, height) in [(80, 24), (200, 60)] {
        let mut app = session();
        let before = screen_at(&mut app, width, height);
        assert!(!before.contains("Enter: open it here"), "{before}");

        // Ctrl+↑ picks the newest call, Ctrl+↑ again the one before: the test run.
        app.handle_key(ctrl_up());
        app.handle_key(ctrl_up());
        let picked = screen_at(&mut app, width, height);
        assert!(
            picked.contains("Enter: open it here (full output and diff)"),
            "the picked line says what Enter does:\n{picked}"
        );
        assert!(!picked.contains(LONG_TAIL), "{picked}");
        assert_snapshot!(format!("call_picked_{width}x{height}"), picked);

        app.handle_key(key(KeyCode::Enter));
        let open = screen_at(&mut app, width, height);
        assert!(
            open.contains("$ cargo test --workspace --all-features -- --test-threads=1 parser"),
            "the whole command, though its line cuts it:\n{open}"
        );
        assert!(open.contains("Enter: fold it"), "{open}");
        assert_snapshot!(format!("call_open_{width}x{height}"), open);
        // What does not fit below the line is a page away, and a long line is wrapped whole.
        let mut shown = open;
        for _ in 0..3 {
            if shown.contains(LONG_TAIL) {
                break;
            }
            app.handle_key(key(KeyCode::PageDown));
            shown = screen_at(&mut app, width, height);
        }
        assert!(
            shown.contains(LONG_TAIL) && shown.contains("test result: ok. 12 passed"),
            "a long output line is wrapped, not cut:\n{shown}"
        );

        // Enter again folds it; the line stays picked.
        app.handle_key(key(KeyCode::Enter));
        let folded = screen_at(&mut app, width, height);
        assert!(!folded.contains(LONG_TAIL), "{folded}");
        assert!(folded.contains("Enter: open it here"), "{folded}");
    }
}

#[test]
fn an_edit_opens_its_applied_diff_in_place() {
    for (width, height) in [(80, 24), (200, 60)] {
        let mut app = session();
        app.handle_key(ctrl_up());
        app.handle_key(key(KeyCode::Enter));
        let terminal = crate::common::draw_at(&mut app, width, height);
        let open = screen_text(&terminal);
        assert!(open.contains("── applied"), "{open}");
        assert!(open.contains("+    receive(input)"), "{open}");
        // The diff is coloured like one.
        let added = crate::common::style_at(&terminal, "+    receive(input)").expect("shown");
        assert_eq!(added.fg, Some(ratatui::style::Color::Green));
        assert_snapshot!(format!("diff_open_{width}x{height}"), open);
    }
}

#[test]
fn esc_lets_go_and_ctrl_t_pages_through_the_picked_call_alone() {
    let mut app = session();
    app.handle_key(ctrl_up());
    app.handle_key(key(KeyCode::Esc));
    let screen = screen_at(&mut app, 100, 30);
    assert!(!screen.contains("Enter: open it here"), "{screen}");

    app.handle_key(ctrl_up());
    app.handle_key(ctrl_up());
    app.handle_key(ctrl('t'));
    let pager = screen_at(&mut app, 100, 30);
    assert!(pager.contains("$ cargo test"), "{pager}");
    assert!(
        !pager.contains("patch_file"),
        "only the picked call:\n{pager}"
    );

    // Typing lets go of the pick and goes to the prompt.
    app.handle_key(key(KeyCode::Esc));
    app.handle_key(ctrl_up());
    app.handle_key(key(KeyCode::Char('h')));
    let screen = screen_at(&mut app, 100, 30);
    assert!(!screen.contains("Enter: open it here"), "{screen}");
    assert_eq!(app.input.composer.text(), "h");
}

#[test]
fn an_open_running_call_shows_its_result_when_it_ends() {
    let (mut app, _ops) = app_for(Mode::Agent, "demo (offline)", "demo");
    app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
    app.handle_agent_event(AgentEvent::ToolCall {
        id: "c1".into(),
        name: "run_command".into(),
        args: json!({"cmd": "make"}),
    });
    app.handle_key(ctrl_up());
    app.handle_key(key(KeyCode::Enter));
    let running = screen_at(&mut app, 100, 30);
    assert!(running.contains("still running"), "{running}");
    app.handle_agent_event(AgentEvent::ToolResult {
        id: "c1".into(),
        name: "run_command".into(),
        ok: true,
        chars: 10,
        saved_path: None,
        duration_ms: 900,
        error: None,
        exit_code: Some(0),
        output: "built all".into(),
        diff: None,
    });
    let done = screen_at(&mut app, 100, 30);
    assert!(
        done.contains("built all") && !done.contains("still running"),
        "{done}"
    );
}
