//! The help overlay (F1): keys and slash commands. Esc closes it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

/// Keys and commands, as (key, what it does).
pub const KEYS: &[(&str, &str)] = &[
    ("Enter", "send the prompt"),
    ("Shift+Enter, Ctrl+J", "new line in the prompt"),
    ("Shift+Tab", "cycle mode: chat → agent → coder"),
    ("PageUp / PageDown", "scroll the chat (mouse wheel too)"),
    ("End", "back to the newest message"),
    ("Ctrl+C", "interrupt; twice within 2 s to quit"),
    ("Ctrl+D", "quit (on an empty prompt)"),
    ("Ctrl+O", "saved files browser"),
    ("Ctrl+G", "show or hide the per-request cache chart"),
    ("F1", "this help; Esc closes any overlay"),
    ("/chat /agent /coder /run", "switch mode"),
    ("/files", "saved files browser"),
    ("/cache", "prompt cache: fixed size, last request by block"),
    ("/compact", "fold older turns into a summary (one request)"),
    ("/context", "attached files: add PATH…, list, drop, refresh"),
    ("/cost", "session cost summary"),
    ("/budget AMOUNT", "set the session budget in USD (or off)"),
    ("/config memory", "memory mode and store size"),
    ("/resume", "reopen a recent session"),
    ("/help", "this help"),
    ("/quit", "quit"),
];

/// Draws the overlay centred in `area`.
pub fn render(area: Rect, buf: &mut Buffer) {
    let width = 76.min(area.width);
    let height = (KEYS.len() as u16 + 4).min(area.height);
    let rect = centered(area, width, height);
    Clear.render(rect, buf);
    let lines: Vec<Line> = KEYS
        .iter()
        .map(|(key, what)| {
            Line::from(vec![
                Span::styled(
                    format!(" {key:<26}"),
                    Style::new()
                        .fg(Color::LightCyan)
                        .add_modifier(Modifier::BOLD),
                ),
                Span::raw(*what),
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
