//! The help overlay (F1): every key and every slash command. It scrolls (↑/↓, PgUp/PgDn,
//! Home/End) when the terminal is too short to show them all, and says so; Esc closes it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

/// Keys, as (key, what it does); the slash commands come from `commands::COMMANDS`.
pub const KEYS: &[(&str, &str)] = &[
    ("Enter", "send the prompt (while a turn runs: queue it)"),
    ("Shift+Enter, Ctrl+J", "new line in the prompt"),
    ("↑ / ↓", "earlier / later prompts (history)"),
    ("Ctrl+R", "search the prompt history"),
    ("/", "a slash command (Tab completes)"),
    ("@", "mention a file or folder (@git: status and diff)"),
    ("Esc", "interrupt; else drop the newest queued prompt"),
    ("Shift+Tab", "cycle mode: chat → agent → coder"),
    ("PageUp / PageDown", "scroll the chat (mouse wheel too)"),
    ("End", "back to the newest message"),
    ("Ctrl+C", "clear the prompt, interrupt; twice in 2 s quits"),
    ("Ctrl+D", "quit (on an empty prompt)"),
    ("Ctrl+X", "edit the prompt in $VISUAL / $EDITOR"),
    ("Ctrl+Z", "suspend to the shell; fg brings chatcli back"),
    ("Ctrl+V", "attach the clipboard's image to the next prompt"),
    ("Ctrl+B", "tool panel over the chat (narrow terminals)"),
    ("Ctrl+↑ / Ctrl+↓", "pick a tool call in the chat"),
    (
        "  then Enter",
        "open its full output or diff under it; again folds",
    ),
    (
        "Ctrl+T",
        "pager: every call's full result (the picked one's)",
    ),
    ("Ctrl+O", "saved files browser"),
    ("Ctrl+G", "show or hide the per-request cache chart"),
    (
        "y / a a / n, Esc",
        "approval: once / always (press twice) / deny",
    ),
    ("F1", "this help; Esc closes any overlay"),
];

/// Every line of the overlay: the keys, then each slash command.
fn entries(dynamic: &[super::commands::DynamicCommand]) -> Vec<(String, String)> {
    let keys = KEYS.iter().map(|(k, w)| (k.to_string(), w.to_string()));
    let key = |name: &str, args: &str| {
        if args.is_empty() {
            format!("/{name}")
        } else {
            format!("/{name} {args}")
        }
    };
    let commands = super::commands::COMMANDS
        .iter()
        .map(|c| (key(c.name, c.args), c.about.to_string()));
    let added = dynamic
        .iter()
        .map(|c| (key(&c.name, &c.args), format!("MCP prompt: {}", c.about)));
    keys.chain(commands).chain(added).collect()
}

/// Lines of the overlay: keys, then commands.
pub fn line_count(dynamic: &[super::commands::DynamicCommand]) -> usize {
    entries(dynamic).len()
}

/// Draws the overlay centred in `area`, from line `scroll` (clamped to what can scroll).
pub fn render(
    area: Rect,
    buf: &mut Buffer,
    dynamic: &[super::commands::DynamicCommand],
    scroll: &mut usize,
) {
    let width = 90.min(area.width);
    let entries = entries(dynamic);
    let height = (entries.len() as u16 + 2).min(area.height);
    let visible = (height as usize).saturating_sub(2).max(1);
    let max_scroll = entries.len().saturating_sub(visible);
    *scroll = (*scroll).min(max_scroll);
    let rect = centered(area, width, height);
    Clear.render(rect, buf);
    let lines: Vec<Line> = entries
        .into_iter()
        .skip(*scroll)
        .take(visible)
        .map(|(key, what)| {
            Line::from(vec![
                Span::styled(
                    format!(" {key:<21}"),
                    Style::new()
                        .fg(Color::LightCyan)
                        .add_modifier(Modifier::BOLD),
                ),
                Span::raw(what),
            ])
        })
        .collect();
    let title = if max_scroll == 0 {
        " Help · Esc to close ".to_string()
    } else if *scroll >= max_scroll {
        " Help · end · ↑/PgUp back · Esc to close ".to_string()
    } else {
        format!(
            " Help · {} more below: ↓/PgDn · Esc to close ",
            max_scroll - *scroll
        )
    };
    Paragraph::new(lines)
        .block(overlay_frame(&title, Color::LightBlue))
        .render(rect, buf);
}

/// The bordered frame every overlay is drawn in.
pub fn overlay_frame(title: &str, color: Color) -> Block<'_> {
    Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(color))
        .title(title)
}

/// A `width` x `height` rectangle in the middle of `area`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    Rect {
        x: area.x + area.width.saturating_sub(width) / 2,
        y: area.y + area.height.saturating_sub(height) / 2,
        width: width.min(area.width),
        height: height.min(area.height),
    }
}
