//! The saved-files browser (Ctrl+O, `/files`): files the session saved instead of inlining them.
//!
//! Files are listed from the tool results that reported a `saved_path`, newest first.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

use super::help::{centered, overlay_frame};
use super::text::truncate;

/// Draws the browser over `area`, listing `paths` (oldest first as given).
pub fn render(paths: &[String], area: Rect, buf: &mut Buffer) {
    let width = 72.min(area.width);
    let height = 12.min(area.height);
    let rect = centered(area, width, height);
    Clear.render(rect, buf);
    let lines: Vec<Line> = if paths.is_empty() {
        vec![
            Line::styled(
                "No saved files in this session.",
                Style::new().fg(Color::Gray),
            ),
            Line::default(),
            Line::styled(
                "Tools that fetch large bodies save them here instead of inlining them into the \
                 conversation. This build has no such tool yet (web_fetch is coming), so the list \
                 stays empty for now.",
                Style::new().fg(Color::DarkGray),
            ),
        ]
    } else {
        paths
            .iter()
            .rev()
            .map(|p| Line::raw(truncate(p, width.saturating_sub(4) as usize)))
            .collect()
    };
    Paragraph::new(lines)
        .wrap(Wrap { trim: true })
        .block(overlay_frame(
            " Saved files · Esc to close ",
            Color::LightBlue,
        ))
        .render(rect, buf);
}
