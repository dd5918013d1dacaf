//! The approval modal: a tool call that writes or executes waits here for the user's answer.
//!
//! `y` or Enter allows it once, `a` allows that tool for the rest of the session, `n` or Esc
//! denies it (the model is told). Ctrl+C interrupts the whole prompt instead.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

use super::help::{centered, overlay_frame};
use super::text::truncate;

/// A call waiting for approval.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingApproval {
    pub id: String,
    pub name: String,
    pub args: serde_json::Value,
}

/// Draws the modal for `pending` over `area`.
pub fn render(pending: &PendingApproval, area: Rect, buf: &mut Buffer) {
    let width = 76.min(area.width);
    let inner_width = width.saturating_sub(4) as usize;
    let pretty = serde_json::to_string_pretty(&pending.args).unwrap_or_default();
    let mut lines = vec![
        Line::from(vec![
            Span::raw("The model wants to run "),
            Span::styled(
                pending.name.clone(),
                Style::new()
                    .fg(Color::LightYellow)
                    .add_modifier(Modifier::BOLD),
            ),
            Span::raw(":"),
        ]),
        Line::default(),
    ];
    let arg_lines: Vec<&str> = pretty.lines().collect();
    for line in arg_lines.iter().take(10) {
        lines.push(Line::styled(
            truncate(line, inner_width),
            Style::new().fg(Color::Gray),
        ));
    }
    if arg_lines.len() > 10 {
        lines.push(Line::styled(
            format!("… {} more lines", arg_lines.len() - 10),
            Style::new().fg(Color::DarkGray),
        ));
    }
    lines.push(Line::default());
    let key = |k: &'static str| {
        Span::styled(
            k,
            Style::new()
                .fg(Color::LightCyan)
                .add_modifier(Modifier::BOLD),
        )
    };
    lines.push(Line::from(vec![
        key("[y]"),
        Span::raw(" allow once   "),
        key("[a]"),
        Span::raw(" allow always (this session)   "),
        key("[n]"),
        Span::raw(" deny"),
    ]));
    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = centered(area, width, height);
    Clear.render(rect, buf);
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(overlay_frame(" Approve tool call? ", Color::LightYellow))
        .render(rect, buf);
}
