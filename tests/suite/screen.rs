//! Whole-screen snapshots at 100x30: what a user sees at each step that matters.

use std::time::Duration;

use chatcli::protocol::{AgentEvent, Mode, UsageFigures};
use chatcli::ui::App;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;

use crate::common::{demo_agent, draw, events_until, screen_text, settle_approval};

fn app(mode: Mode) -> (App, crate::common::keys::Ops) {
    let (tx, rx) = crate::common::keys::ui_channel();
    (
        App::new(tx, mode, "demo (offline)".into(), "demo".into()),
        rx,
    )
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

#[test]
fn empty_start() {
    let (mut app, _ops) = app(Mode::Agent);
    let screen = screen_text(&draw(&mut app));
    assert!(
        screen.contains("0↑ 0↓"),
        "the meter shows from the first frame"
    );
    assert_snapshot!(screen);
}

#[tokio::test]
async fn streamed_answer_with_its_envelope_meter() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut handle, _) = demo_agent(dir.path(), Mode::Agent, Duration::ZERO);
    let (mut app, mut ops) = app(Mode::Agent);
    for c in "hello".chars() {
        app.handle_key(key(KeyCode::Char(c)));
    }
    app.handle_key(key(KeyCode::Enter));
    let op = ops.try_recv().expect("Enter sends the prompt");
    handle.ops.send(op).expect("agent alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    for event in events {
        app.handle_agent_event(event);
    }
    let screen = screen_text(&draw(&mut app));
    assert!(screen.contains("❯ hello"));
    // The workspace path (a temp dir) is in the prompt, so token counts move by a token or two
    // from run to run: the meters are masked here and checked by the channel tests.
    let meter = regex::Regex::new(r"\d+(\.\d+)?k?↑ \d+(\.\d+)?k?↓").expect("regex");
    assert_eq!(
        meter.find_iter(&screen).count(),
        2,
        "the envelope and the status bar show a meter"
    );
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"\d+(\.\d+)?k?↑ \d+(\.\d+)?k?↓", "[N↑ M↓]");
    // The meter's width moves with its digits (the prompt carries the temp directory): the
    // border before it is masked too.
    settings.add_filter(r"─+ \[N↑ M↓\]", "── [N↑ M↓]");
    settings.add_filter(r"\$\d+\.\d{4}", "[$cost]");
    settings.bind(|| assert_snapshot!(screen));
}

#[test]
fn running_tool_call_in_the_panel() {
    let (mut app, _ops) = app(Mode::Coder);
    app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
    app.handle_agent_event(AgentEvent::TextDelta {
        text: "Let me look at the manifest.".into(),
    });
    app.handle_agent_event(AgentEvent::Usage {
        turn: 1,
        usage: UsageFigures {
            input_tokens: 12_345,
            output_tokens: 42,
            cache_read_tokens: 10_000,
            cache_creation_tokens: 2_345,
            reasoning_tokens: 0,
            estimated: false,
            cache_reported: true,
        },
        cost_usd: Some(0.0125),
    });
    app.handle_agent_event(AgentEvent::ToolCall {
        id: "c1".into(),
        name: "read_file".into(),
        args: serde_json::json!({"file": "Cargo.toml"}),
    });
    app.handle_agent_event(AgentEvent::ToolResult {
        id: "c1".into(),
        name: "read_file".into(),
        ok: true,
        chars: 1_842,
        saved_path: None,
        duration_ms: 3,
        error: None,
        exit_code: None,
        output: "[package]".into(),
        diff: None,
    });
    app.handle_agent_event(AgentEvent::ToolCall {
        id: "c2".into(),
        name: "read_file".into(),
        args: serde_json::json!({"file": "src/main.rs"}),
    });
    let screen = screen_text(&draw(&mut app));
    assert!(screen.contains("running"));
    assert!(screen.contains("12.3k↑ 42↓"));
    assert_snapshot!(screen);
    // At the next frame tick the running call says how long it has run.
    app.tick_at(std::time::Instant::now() + std::time::Duration::from_secs(12));
    let screen = screen_text(&draw(&mut app));
    assert!(screen.contains("running 12s"), "{screen}");
}

#[test]
fn mode_after_shift_tab() {
    let (mut app, mut ops) = app(Mode::Agent);
    app.handle_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    assert_eq!(
        ops.try_recv().ok(),
        Some(chatcli::protocol::Op::SetMode { mode: Mode::Coder })
    );
    let screen = screen_text(&draw(&mut app));
    assert!(screen.contains("CODER MODE"));
    assert_snapshot!(screen);
    app.handle_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    assert!(screen_text(&draw(&mut app)).contains("PLAN MODE"));
    app.handle_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    assert!(screen_text(&draw(&mut app)).contains("CHAT MODE"));
}

#[test]
fn help_overlay_opens_on_f1_and_closes_on_esc() {
    let (mut app, _ops) = app(Mode::Agent);
    app.handle_key(key(KeyCode::F(1)));
    let screen = screen_text(&draw(&mut app));
    assert_snapshot!(screen);
    app.handle_key(key(KeyCode::Esc));
    assert!(!screen_text(&draw(&mut app)).contains("Help · Esc to close"));
}

#[test]
fn saved_files_browser_says_why_it_is_empty() {
    let (mut app, _ops) = app(Mode::Agent);
    app.handle_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    let screen = screen_text(&draw(&mut app));
    assert!(screen.contains("No saved files in this session yet."));
}

#[test]
fn slash_commands_switch_mode_and_unknown_ones_say_so() {
    let (mut app, mut ops) = app(Mode::Agent);
    for c in "/chat".chars() {
        app.handle_key(key(KeyCode::Char(c)));
    }
    app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        ops.try_recv().ok(),
        Some(chatcli::protocol::Op::SetMode { mode: Mode::Chat })
    );
    for c in "/frobnicate".chars() {
        app.handle_key(key(KeyCode::Char(c)));
    }
    app.handle_key(key(KeyCode::Enter));
    let screen = screen_text(&draw(&mut app));
    assert!(screen.contains("CHAT MODE"));
    assert!(screen.contains("unknown command /frobnicate: try /help"));
}

#[test]
fn ctrl_c_interrupts_a_running_prompt_and_quits_only_when_idle() {
    let (mut app, mut ops) = app(Mode::Agent);
    for c in "hi".chars() {
        app.handle_key(key(KeyCode::Char(c)));
    }
    app.handle_key(key(KeyCode::Enter));
    assert!(matches!(
        ops.try_recv(),
        Ok(chatcli::protocol::Op::Submit { .. })
    ));
    // Ctrl+C can arrive with ALT as well; the CONTROL bit is what counts.
    let ctrl_c = KeyEvent::new(
        KeyCode::Char('c'),
        KeyModifiers::CONTROL | KeyModifiers::ALT,
    );
    app.handle_key(ctrl_c);
    assert_eq!(ops.try_recv().ok(), Some(chatcli::protocol::Op::Interrupt));
    assert!(!app.should_quit());
    app.handle_agent_event(AgentEvent::TurnFinished {
        text: String::new(),
        stop_reason: "interrupted".into(),
    });
    app.handle_key(ctrl_c);
    assert!(!app.should_quit(), "the first Ctrl+C when idle only arms");
    assert!(screen_text(&draw(&mut app)).contains("press Ctrl+C again to quit"));
    app.handle_key(ctrl_c);
    assert!(app.should_quit());
}

#[test]
fn shift_enter_and_ctrl_j_insert_newlines_enter_sends() {
    let (mut app, mut ops) = app(Mode::Agent);
    app.handle_key(key(KeyCode::Char('a')));
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT));
    app.handle_key(key(KeyCode::Char('b')));
    app.handle_key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::CONTROL));
    app.handle_key(key(KeyCode::Char('c')));
    assert!(ops.try_recv().is_err(), "nothing sent yet");
    app.handle_key(key(KeyCode::Enter));
    match ops.try_recv() {
        Ok(chatcli::protocol::Op::Submit { text, mode }) => {
            assert_eq!(text, "a\nb\nc");
            assert_eq!(mode, Mode::Agent);
        }
        other => panic!("expected a submit, got {other:?}"),
    }
}

#[test]
fn long_transcript_scrolls_with_page_keys_and_end_follows_again() {
    let (mut app, _ops) = app(Mode::Chat);
    for i in 0..60 {
        app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
        app.handle_agent_event(AgentEvent::TextDelta {
            text: format!("answer number {i}"),
        });
    }
    let bottom = screen_text(&draw(&mut app));
    assert!(bottom.contains("answer number 59"));
    app.handle_key(key(KeyCode::PageUp));
    let up = screen_text(&draw(&mut app));
    assert!(!up.contains("answer number 59"));
    assert!(up.contains("more · End"));
    app.handle_key(key(KeyCode::End));
    assert!(screen_text(&draw(&mut app)).contains("answer number 59"));
}

#[test]
fn approval_modal_asks_and_answers_through_the_channel() {
    let (mut app, mut ops) = app(Mode::Coder);
    app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
    app.handle_agent_event(AgentEvent::ToolCall {
        id: "w1".into(),
        name: "write_file".into(),
        args: serde_json::json!({"file": "notes.txt", "content": "hello\nworld"}),
    });
    app.handle_agent_event(AgentEvent::ApprovalRequest {
        id: "w1".into(),
        name: "write_file".into(),
        args: serde_json::json!({"file": "notes.txt", "content": "hello\nworld"}),
        preview: Some("new file notes.txt (2 lines)\n1 │ hello\n2 │ world\n".into()),
    });
    let screen = screen_text(&draw(&mut app));
    assert_snapshot!(screen);
    settle_approval(&mut app);
    crate::common::press_alone(&mut app, key(KeyCode::Char('n')));
    assert_eq!(
        ops.try_recv().ok(),
        Some(chatcli::protocol::Op::Approve {
            id: "w1".into(),
            decision: chatcli::protocol::ApprovalDecision::Deny
        })
    );
    assert!(!screen_text(&draw(&mut app)).contains("Approve tool call?"));
}

/// A notice of several lines (`/skill show`, `/context`) keeps its lines, at both sizes.
#[test]
fn a_multi_line_notice_keeps_its_lines() {
    let (mut app, _ops) = app(Mode::Agent);
    app.handle_agent_event(AgentEvent::Notice {
        message: "skill deploy (15 tokens)\nHow to deploy\n1. Run the tests.\n2. Tag the release."
            .into(),
    });
    for (width, height) in [(80, 24), (200, 60)] {
        let screen = crate::common::screen_at(&mut app, width, height);
        let rows: Vec<&str> = screen.lines().collect();
        let lines = [
            "skill deploy (15 tokens)",
            "How to deploy",
            "1. Run the tests.",
            "2. Tag the release.",
        ];
        for line in lines {
            let row = rows
                .iter()
                .find(|r| r.contains(line))
                .unwrap_or_else(|| panic!("{line:?} is shown:\n{screen}"));
            let others = lines
                .iter()
                .filter(|l| **l != line && row.contains(**l))
                .count();
            assert_eq!(others, 0, "{line:?} on its own line:\n{screen}");
        }
        assert_snapshot!(format!("multi_line_notice_{width}x{height}"), screen);
    }
}

/// Typed text of any script never crashes the key handler and the command parser.
#[test]
fn unicode_after_a_slash_or_an_at_sign_is_handled() {
    for line in ["/ é", "/é", "@é", "/é é", "@ é", "/ü/é"] {
        let (mut app, _ops) = app(Mode::Agent);
        for c in line.chars() {
            app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        draw(&mut app);
        app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        draw(&mut app);
    }
}

/// F1 at 80×24 scrolls to every command and lists the keys people look for first.
#[test]
fn help_scrolls_to_every_command_and_lists_the_keys() {
    let (mut app, _ops) = app(Mode::Agent);
    app.handle_key(KeyEvent::new(KeyCode::F(1), KeyModifiers::NONE));
    let first = crate::common::screen_at(&mut app, 80, 24);
    assert!(first.contains("more below"), "{first}");
    assert_snapshot!("help_80x24_top", first.clone());
    let mut seen = first;
    for _ in 0..20 {
        app.handle_key(KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE));
        let screen = crate::common::screen_at(&mut app, 80, 24);
        seen.push_str(&screen);
        if screen.contains("Help · end") {
            break;
        }
    }
    assert!(seen.contains("Help · end"), "the end is reached and said");
    for command in chatcli::ui::commands::COMMANDS {
        assert!(
            seen.contains(&format!("/{}", command.name)),
            "/{} in help",
            command.name
        );
    }
    for key in ["Ctrl+R", "Ctrl+X", "Ctrl+B", "Esc", "↑ / ↓", "@"] {
        assert!(seen.contains(key), "{key} in help");
    }
    let wide = crate::common::screen_at(&mut app, 200, 60);
    assert_snapshot!("help_200x60", wide);
}

/// Esc interrupts first, the queue waits after an interrupt, and Enter on an empty prompt
/// sends the next queued prompt.
#[test]
fn esc_interrupts_first_and_the_queue_waits() {
    let (mut app, mut ops) = app(Mode::Agent);
    for c in "first".chars() {
        app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    for c in "second".chars() {
        app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    while ops.try_recv().is_ok() {}
    app.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    assert_eq!(ops.try_recv().ok(), Some(chatcli::protocol::Op::Interrupt));
    app.handle_agent_event(AgentEvent::TurnFinished {
        text: String::new(),
        stop_reason: "interrupted".into(),
    });
    assert!(
        ops.try_recv().is_err(),
        "the queued prompt waits after an interrupt"
    );
    let screen = screen_text(&draw(&mut app));
    assert!(screen.contains("queued prompt(s) wait"), "{screen}");
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert!(
        matches!(ops.try_recv(), Ok(chatcli::protocol::Op::Submit { text, .. }) if text == "second"),
        "Enter on an empty prompt sends it"
    );
}

/// The retry countdown counts and ends with the work; "interrupting…" ends with the turn.
#[test]
fn transient_notices_count_down_and_end_with_the_work() {
    let (mut app, _ops) = app(Mode::Agent);
    for c in "go".chars() {
        app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    app.handle_agent_event(AgentEvent::Retrying {
        attempt: 1,
        max: 3,
        wait_ms: 2_500,
        reason: "529 overloaded".into(),
    });
    let screen = screen_text(&draw(&mut app));
    assert!(screen.contains("retrying in 3s"), "{screen}");
    std::thread::sleep(Duration::from_millis(1_100));
    let screen = screen_text(&draw(&mut app));
    assert!(
        screen.contains("retrying in 2s"),
        "the countdown counts: {screen}"
    );
    app.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    app.handle_agent_event(AgentEvent::TurnFinished {
        text: String::new(),
        stop_reason: "interrupted".into(),
    });
    let screen = screen_text(&draw(&mut app));
    assert!(!screen.contains("retrying in"), "{screen}");
    assert!(!screen.contains("interrupting…"), "{screen}");
}

fn type_line(app: &mut App, text: &str) {
    app.input.composer.set_text(text);
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
}

/// `/copy` sends the answer's text (or a code block) through OSC 52, without any frame;
/// `/export` writes the transcript as Markdown.
#[test]
fn copy_and_export_take_the_text_not_the_screen() {
    let (mut app, _ops) = app(Mode::Agent);
    app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
    app.handle_agent_event(AgentEvent::TextDelta {
        text: "Run this:\n```sh\ncargo test\n```\nThen commit.".into(),
    });
    app.handle_agent_event(AgentEvent::TurnFinished {
        text: String::new(),
        stop_reason: "end_turn".into(),
    });
    draw(&mut app);
    type_line(&mut app, "/copy");
    let written = app.take_terminal_write().expect("an OSC 52 write");
    assert_eq!(
        written,
        chatcli::ui::export::osc52("Run this:\n```sh\ncargo test\n```\nThen commit.")
    );
    type_line(&mut app, "/copy 1");
    assert_eq!(
        app.take_terminal_write(),
        Some(chatcli::ui::export::osc52("cargo test"))
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("t.md");
    type_line(&mut app, &format!("/export {}", file.display()));
    let text = std::fs::read_to_string(&file).expect("exported");
    assert!(
        text.contains("## Assistant\n\nRun this:\n```sh\ncargo test\n```"),
        "{text}"
    );
    assert!(!text.contains('│'), "no frame characters: {text}");
}

/// While the terminal is unfocused, a finished answer and a waiting approval ring the bell
/// (or the chosen notification); while focused, nothing.
#[test]
fn an_unfocused_terminal_is_notified_when_a_turn_ends_or_an_approval_waits() {
    use crossterm::event::Event;
    let (mut app, _ops) = app(Mode::Agent);
    app.handle_agent_event(AgentEvent::TurnFinished {
        text: String::new(),
        stop_reason: "end_turn".into(),
    });
    assert_eq!(app.take_terminal_write(), None, "focused: no bell");
    app.handle_terminal_event(Event::FocusLost);
    app.handle_agent_event(AgentEvent::TurnFinished {
        text: String::new(),
        stop_reason: "end_turn".into(),
    });
    assert_eq!(app.take_terminal_write().as_deref(), Some("\x07"));
    app.attention.notify = chatcli::ui::notify::Notify::Osc9;
    app.handle_agent_event(AgentEvent::ApprovalRequest {
        id: "c1".into(),
        name: "run_command".into(),
        args: serde_json::json!({"cmd": "ls"}),
        preview: None,
    });
    assert_eq!(
        app.take_terminal_write().as_deref(),
        Some("\x1b]9;chatcli: run_command waits for your approval\x07")
    );
    app.handle_terminal_event(Event::FocusGained);
    app.attention.notify = chatcli::ui::notify::Notify::Off;
    app.handle_terminal_event(Event::FocusLost);
    app.handle_agent_event(AgentEvent::TurnFinished {
        text: String::new(),
        stop_reason: "end_turn".into(),
    });
    assert_eq!(app.take_terminal_write(), None, "off means off");
}

fn pager_screen(pager: &chatcli::ui::files::Pager, width: u16, height: u16) -> String {
    let area = ratatui::layout::Rect::new(0, 0, width, height);
    let mut buf = ratatui::buffer::Buffer::empty(area);
    chatcli::ui::files::render_pager(pager, area, &mut buf);
    let mut out = String::new();
    for y in 0..height {
        for x in 0..width {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

/// The pager wraps long lines instead of cutting them, marks matches, and says when there are
/// no more.
#[test]
fn the_pager_wraps_long_lines_and_says_when_no_match_is_left() {
    let long = format!("start {} needle-at-the-end", "x".repeat(150));
    let mut pager = chatcli::ui::files::Pager::text(
        "output",
        vec!["first".into(), long, "last".into()],
        Vec::new(),
    );
    let screen = pager_screen(&pager, 80, 24);
    assert!(
        screen.contains("needle-at-the-end"),
        "wrapped, not cut:\n{screen}"
    );
    assert!(!screen.contains('…'), "{screen}");
    assert!(screen.contains("· end"), "the end is said:\n{screen}");
    pager.handle_key(KeyEvent::new(KeyCode::Char('/'), KeyModifiers::NONE), 20);
    for c in "needle".chars() {
        pager.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE), 20);
    }
    pager.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), 20);
    assert!(pager.status.contains("line 2"), "{}", pager.status);
    pager.handle_key(KeyEvent::new(KeyCode::Char('n'), KeyModifiers::NONE), 20);
    assert!(pager.status.contains("no more matches"), "{}", pager.status);
    assert_snapshot!("pager_wrapped_80x24", pager_screen(&pager, 80, 24));
    assert_snapshot!("pager_wrapped_200x60", pager_screen(&pager, 200, 60));
}

/// A resumed session that was rewound shows what the model has, not what was rewound away.
#[test]
fn a_resumed_rewound_session_does_not_redraw_the_rewound_prompts() {
    let (mut app, _ops) = app(Mode::Agent);
    let turn = |text: &str, answer: &str| {
        vec![
            AgentEvent::Prompt {
                text: text.into(),
                mode: Mode::Agent,
            },
            AgentEvent::TurnStarted { turn: 1 },
            AgentEvent::TextDelta {
                text: answer.into(),
            },
            AgentEvent::TurnFinished {
                text: answer.into(),
                stop_reason: "end_turn".into(),
            },
        ]
    };
    let mut events = turn("kept prompt", "kept answer");
    events.extend(turn("rewound prompt", "rewound answer"));
    events.push(AgentEvent::Rewound { prompt: 1 });
    events.extend(turn("after the rewind", "new answer"));
    app.replay(events);
    let screen = screen_text(&draw(&mut app));
    assert!(
        screen.contains("kept prompt") && screen.contains("after the rewind"),
        "{screen}"
    );
    assert!(
        !screen.contains("rewound prompt") && !screen.contains("rewound answer"),
        "{screen}"
    );
}

fn model(
    id: &str,
    provider: &str,
    window: u64,
    price: (f64, f64),
    listed: bool,
) -> chatcli::ui::models::ModelEntry {
    chatcli::ui::models::ModelEntry {
        id: id.into(),
        provider: provider.into(),
        window: Some(window),
        price: Some(price),
        listed,
    }
}

/// `/model` is a picker: what the provider lists first, then the catalog's models of the same
/// provider, then the rest, with window and price and where the list came from; typing narrows,
/// Enter switches; an id no list knows is switched to with a warning.
#[test]
fn the_model_picker_filters_and_switches() {
    let (tx, _rx) = chatcli::protocol::op_channel();
    let mut app = App::new(
        tx,
        Mode::Agent,
        "anthropic".into(),
        "claude-sonnet-4-5".into(),
    );
    app.session.models = chatcli::session::models::ModelList {
        entries: vec![
            model(
                "claude-sonnet-4-7",
                "anthropic",
                1_000_000,
                (3.0, 15.0),
                true,
            ),
            model("claude-sonnet-4-5", "anthropic", 200_000, (3.0, 15.0), true),
            model("gpt-4.1", "openai", 1_047_576, (2.0, 8.0), false),
            model("claude-haiku-4-5", "anthropic", 200_000, (1.0, 5.0), false),
            model("gemini-2.5-pro", "googleai", 1_048_576, (1.25, 10.0), false),
        ],
        note: "2 models listed by anthropic now, with the catalog".into(),
    };
    app.input.composer.set_text("/model");
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    for (width, height) in [(80, 24), (200, 60)] {
        let screen = crate::common::screen_at(&mut app, width, height);
        assert_snapshot!(format!("model_picker_{width}x{height}"), screen);
    }
    let screen = crate::common::screen_at(&mut app, 120, 40);
    let newest = screen.find("claude-sonnet-4-7").expect("listed");
    let haiku = screen.find("claude-haiku-4-5").expect("listed");
    let gpt = screen.find("gpt-4.1").expect("listed");
    assert!(
        newest < haiku && haiku < gpt,
        "what the provider lists, then its catalog models, then the rest:\n{screen}"
    );
    assert!(
        screen.contains("2 models listed by anthropic now") && screen.contains("anthropic listed"),
        "{screen}"
    );
    assert!(
        screen.contains("200k") && screen.contains("$3.00 / $15.00"),
        "{screen}"
    );
    for c in "haiku".chars() {
        app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(
        app.take_switch_request(),
        Some((None, Some("claude-haiku-4-5".to_string())))
    );
    app.input.composer.set_text("/model claude-sonnet-9");
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let screen = screen_text(&draw(&mut app));
    assert!(screen.contains("is not a model chatcli knows"), "{screen}");
    assert_eq!(
        app.take_switch_request(),
        Some((None, Some("claude-sonnet-9".to_string())))
    );
}

/// A model priced from its family (newer than the catalog) has its cost marked `est.` in the
/// meter; a catalog price is not marked.
#[test]
fn an_estimated_price_is_marked_in_the_meter() {
    let configured = |estimated: bool| AgentEvent::SessionConfigured {
        session_id: "s".into(),
        provider: "anthropic".into(),
        model: "claude-sonnet-4-7".into(),
        mode: Mode::Agent,
        context_window: 200_000,
        price_estimated: estimated,
    };
    for (estimated, marked) in [(true, true), (false, false)] {
        let (tx, _rx) = chatcli::protocol::op_channel();
        let mut app = App::new(
            tx,
            Mode::Agent,
            "anthropic".into(),
            "claude-sonnet-4-7".into(),
        );
        app.handle_agent_event(configured(estimated));
        let screen = crate::common::screen_at(&mut app, 120, 24);
        assert_eq!(screen.contains("$0.0000 est."), marked, "{screen}");
        assert!(screen.contains("$0.0000"), "{screen}");
    }
}
