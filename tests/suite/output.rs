//! How answers look: markdown tables with aligned columns, highlighted code in a labelled frame,
//! coloured diffs (in answers, in the transcript pager, in the approval dialog), and NO_COLOR.
//! Snapshots at 80x24, 120x40 and 200x60; the snapshot text has no colours, so the colours are
//! asserted on the cells' styles.

use chatcli::protocol::{AgentEvent, Mode};
use chatcli::ui::App;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use ratatui::style::Color;
use serde_json::json;

use crate::common::{draw_at, screen_text, settle_approval, style_at};

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 60)];

const TABLE: &str = "Here is how they compare:

| Concept | Rust | C++ | Go |
|---|---|---|---|
| Memory | ownership and borrowing, checked at compile time | manual, RAII, smart pointers | garbage collector |
| Errors | `Result<T, E>` | exceptions | multiple return values |
| Generics | traits, monomorphized | templates | type parameters (1.18+) |
";

const RUST: &str = "A word counter:

```rust
use std::collections::HashMap;

/// Counts each word of `text`.
fn count(text: &str) -> HashMap<&str, usize> {
    let mut counts = HashMap::new();
    for word in text.split_whitespace() {
        *counts.entry(word).or_insert(0) += 1; // a comment long enough to run past the frame of a narrow pane
    }
    counts
}
```
";

const DIFF: &str = "The change:

```diff
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,3 +1,3 @@
 fn main() {
-    println!(\"hello\");
+    println!(\"hello, world\");
 }
```
";

/// An app whose transcript is one answer with `text`.
fn answered(text: &str) -> App {
    let (tx, _rx) = chatcli::protocol::op_channel();
    let mut app = App::new(tx, Mode::Agent, "demo (offline)".into(), "demo".into());
    app.screen.no_color = false;
    app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
    app.handle_agent_event(AgentEvent::TextDelta { text: text.into() });
    app
}

#[test]
fn a_markdown_table_has_aligned_columns_a_bold_header_and_a_rule() {
    let mut app = answered(TABLE);
    for (w, h) in SIZES {
        let terminal = draw_at(&mut app, w, h);
        let screen = screen_text(&terminal);
        assert!(!screen.contains("ConceptRust"), "{screen}");
        assert!(screen.contains("Concept  │ Rust"), "{screen}");
        assert!(screen.contains("─┼─"), "the header has a rule: {screen}");
        let header = style_at(&terminal, "Concept").expect("the header is shown");
        assert!(header.add_modifier.contains(ratatui::style::Modifier::BOLD));
        if w == 80 {
            assert!(screen.contains('…'), "a narrow pane cuts cells: {screen}");
        } else if w == 200 {
            assert!(
                screen.contains("ownership and borrowing, checked at compile time │"),
                "a wide pane shows whole cells: {screen}"
            );
        }
        assert_snapshot!(format!("table_{w}x{h}"), screen);
    }
}

#[test]
fn rust_code_is_highlighted_in_a_frame_labelled_with_its_language() {
    let mut app = answered(RUST);
    for (w, h) in SIZES {
        let terminal = draw_at(&mut app, w, h);
        let screen = screen_text(&terminal);
        assert!(screen.contains("╭─ rust ─"), "{screen}");
        assert!(
            screen.contains("    for word in text.split_whit"),
            "indentation is kept: {screen}"
        );
        if w < 200 {
            // The long line is cut inside the frame, not wrapped onto a line of its own.
            assert!(screen.contains("…"), "{screen}");
            assert!(!screen.contains("narrow pane"), "{screen}");
        }
        let keyword = style_at(&terminal, "fn count").and_then(|s| s.fg);
        let variable = style_at(&terminal, "counts = ").and_then(|s| s.fg);
        let prose = style_at(&terminal, "A word counter").and_then(|s| s.fg);
        assert!(
            keyword.is_some_and(|c| c != Color::Reset),
            "keywords are coloured"
        );
        assert_ne!(keyword, variable, "keywords stand out from identifiers");
        assert_ne!(keyword, prose, "keywords stand out from the prose");
        assert_snapshot!(format!("rust_{w}x{h}"), screen);
    }
}

#[test]
fn a_diff_block_colours_additions_deletions_and_hunks() {
    let mut app = answered(DIFF);
    for (w, h) in SIZES {
        let terminal = draw_at(&mut app, w, h);
        let screen = screen_text(&terminal);
        assert!(screen.contains("╭─ diff ─"), "{screen}");
        let fg = |needle: &str| style_at(&terminal, needle).and_then(|s| s.fg);
        assert_eq!(fg("+    println!"), Some(Color::Green));
        assert_eq!(fg("-    println!"), Some(Color::Red));
        assert_eq!(fg("@@ -1,3"), Some(Color::Cyan));
        assert_snapshot!(format!("diff_{w}x{h}"), screen);
    }
}

#[test]
fn a_git_diff_result_is_coloured_in_the_transcript_pager() {
    let mut app = answered("Let me look.");
    app.handle_agent_event(AgentEvent::ToolCall {
        id: "g1".into(),
        name: "git_diff".into(),
        args: json!({}),
    });
    let output =
        "diff --git a/x.rs b/x.rs\n--- a/x.rs\n+++ b/x.rs\n@@ -1 +1 @@\n-old line\n+new line\n";
    app.handle_agent_event(AgentEvent::ToolResult {
        id: "g1".into(),
        name: "git_diff".into(),
        ok: true,
        chars: output.len() as u64,
        saved_path: None,
        duration_ms: 20,
        error: None,
        exit_code: None,
        output: output.into(),
        diff: None,
    });
    app.handle_key(KeyEvent::new(KeyCode::Char('t'), KeyModifiers::CONTROL));
    let terminal = draw_at(&mut app, 100, 30);
    let fg = |needle: &str| style_at(&terminal, needle).and_then(|s| s.fg);
    assert_eq!(
        fg("+new line"),
        Some(Color::Green),
        "{}",
        screen_text(&terminal)
    );
    assert_eq!(fg("-old line"), Some(Color::Red));
    assert_eq!(fg("@@ -1 +1 @@"), Some(Color::Cyan));
}

#[test]
fn the_approval_dialog_colours_a_patch_diff() {
    let (tx, _rx) = chatcli::protocol::op_channel();
    let mut app = App::new(tx, Mode::Coder, "demo (offline)".into(), "demo".into());
    app.screen.no_color = false;
    app.handle_agent_event(AgentEvent::TurnStarted { turn: 1 });
    let args = json!({"path": "x.rs", "search": "old", "replace": "new"});
    app.handle_agent_event(AgentEvent::ToolCall {
        id: "p1".into(),
        name: "patch_file".into(),
        args: args.clone(),
    });
    app.handle_agent_event(AgentEvent::ApprovalRequest {
        id: "p1".into(),
        name: "patch_file".into(),
        args,
        preview: Some("--- a/x.rs\n+++ b/x.rs\n@@ -1 +1 @@\n-old\n+new\n".into()),
    });
    settle_approval(&mut app);
    let terminal = draw_at(&mut app, 100, 30);
    let fg = |needle: &str| style_at(&terminal, needle).and_then(|s| s.fg);
    assert_eq!(fg("+new"), Some(Color::Green), "{}", screen_text(&terminal));
    assert_eq!(fg("-old"), Some(Color::Red));
}

#[test]
fn no_color_leaves_every_cell_without_colour() {
    let mut app = answered(&format!("{RUST}\n{DIFF}\n{TABLE}"));
    let coloured = |app: &mut App| {
        let terminal = draw_at(app, 120, 60);
        let buffer = terminal.backend().buffer().clone();
        buffer
            .content
            .iter()
            .filter(|c| c.fg != Color::Reset || c.bg != Color::Reset)
            .count()
    };
    assert!(coloured(&mut app) > 0, "colours are drawn by default");
    app.screen.no_color = true;
    assert_eq!(coloured(&mut app), 0);
    // The text is the same, without colour.
    let screen = screen_text(&draw_at(&mut app, 120, 60));
    assert!(screen.contains("╭─ rust ─") && screen.contains("Concept"));
}

proptest::proptest! {
    /// Whatever the table cells, code and pane width, no drawn line is wider than the pane (a
    /// line that overflowed would push the frame's right border off).
    #[test]
    fn rendered_markdown_never_exceeds_the_width(
        cells in proptest::collection::vec("[a-z `*日本|-]{0,30}", 1..6),
        code in "[ -~\t日]{0,80}",
        lang in "(rust|diff|python|)",
        width in 2usize..70,
    ) {
        let rule = vec!["---"; cells.len()].join("|");
        let reversed: Vec<&str> = cells.iter().rev().map(String::as_str).collect();
        let md = format!(
            "> | {} |\n> |{rule}|\n> | {} |\n\n- item\n\n  ```{lang}\n  {code}\n  ```\n",
            cells.join(" | "),
            reversed.join(" | "),
        );
        for line in chatcli::ui::markdown::render(&md, width, ratatui::style::Style::new()) {
            proptest::prop_assert!(line.width() <= width, "{width}: {line:?}");
        }
    }
}
