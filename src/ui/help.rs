//! The help overlay (F1): keys and slash commands. Esc closes it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

/// Keys, as (key, what it does); the slash commands come from `commands::COMMANDS`.
pub const KEYS: &[(&str, &str)] = &[
    ("Enter", "send the prompt"),
    ("Shift+Enter, Ctrl+J", "new line in the prompt"),
    ("Shift+Tab", "cycle mode: chat → agent → coder"),
    ("PageUp / PageDown", "scroll the chat (mouse wheel too)"),
    ("End", "back to the newest message"),
    ("Ctrl+C", "interrupt; twice within 2 s to quit"),
    ("Ctrl+D", "quit (on an empty prompt)"),
    ("Ctrl+T", "transcript: every tool call's full result"),
    ("Ctrl+↑ / Ctrl+↓", "select a tool call; Enter opens it"),
    ("Ctrl+O", "saved files browser"),
    ("Ctrl+G", "show or hide the per-request cache chart"),
    ("y / a / n, Esc", "approval: once / always / deny"),
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

/// Draws the overlay centred in `area`.
pub fn render(area: Rect, buf: &mut Buffer, dynamic: &[super::commands::DynamicCommand]) {
    let width = 90.min(area.width);
    let entries = entries(dynamic);
    let height = (entries.len() as u16 + 2).min(area.height);
    let rect = centered(area, width, height);
    Clear.render(rect, buf);
    let lines: Vec<Line> = entries
        .into_iter()
        .map(|(key, what)| {
            Line::from(vec![
                Span::styled(
                    format!(" {key:<26}"),
                    Style::new()
                        .fg(Color::LightCyan)
                        .add_modifier(Modifier::BOLD),
                ),
                Span::raw(what),
            ])
        })
        .collect();
    Paragraph::new(lines)
        .block(overlay_frame(" Help · Esc to close ", Color::LightBlue))
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
