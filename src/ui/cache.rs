//! The `/cache` overlay: the fixed part every request pays for, and how the last request's
//! blocks were billed (read from cache, written to it, or uncached).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget};

use super::help::{centered, overlay_frame};
use super::text::{compact, truncate};
use crate::protocol::BlockReport;
use crate::protocol::Mode;

/// What the agent reported.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheView {
    pub mode: Mode,
    pub tools_tokens: u64,
    pub system_tokens: u64,
    /// Of `system_tokens`, the MCP catalog's (deferred MCP schemas).
    pub mcp_catalog_tokens: u64,
    pub blocks: Vec<BlockReport>,
}

/// Draws the overlay; `None` while the report is on its way.
pub fn render(view: Option<&CacheView>, area: Rect, buf: &mut Buffer) {
    let width = 80.min(area.width);
    let height = area.height.saturating_sub(4).clamp(6, 24);
    let rect = centered(area, width, height);
    Clear.render(rect, buf);
    let inner = width.saturating_sub(4) as usize;
    let mut lines: Vec<Line> = Vec::new();
    match view {
        None => lines.push(Line::styled(
            "asking the agent…",
            Style::new().fg(Color::DarkGray),
        )),
        Some(view) => {
            lines.push(Line::from(vec![
                Span::styled(
                    format!("Fixed part of a {} request: ", view.mode),
                    Style::new().add_modifier(Modifier::BOLD),
                ),
                Span::raw(format!(
                    "tools {} + system {} = {} tokens (o200k)",
                    view.tools_tokens,
                    view.system_tokens,
                    view.tools_tokens + view.system_tokens
                )),
            ]));
            if view.mcp_catalog_tokens > 0 {
                lines.push(Line::raw(format!(
                    "  of which MCP catalog {} tokens (schemas deferred, fetched by mcp_describe)",
                    view.mcp_catalog_tokens
                )));
            }
            lines.push(Line::default());
            if view.blocks.is_empty() {
                lines.push(Line::styled(
                    "No request sent yet.",
                    Style::new().fg(Color::DarkGray),
                ));
            } else {
                lines.push(Line::styled(
                    "Last request, block by block (≈ tokens):",
                    Style::new().fg(Color::Gray),
                ));
                let rows = (height as usize).saturating_sub(6);
                let skipped = view.blocks.len().saturating_sub(rows);
                if skipped > 0 {
                    lines.push(Line::styled(
                        format!("  … {skipped} earlier blocks"),
                        Style::new().fg(Color::DarkGray),
                    ));
                }
                for block in view.blocks.iter().skip(skipped) {
                    let color = match block.state.as_str() {
                        "read" => Color::Green,
                        "written" => Color::Yellow,
                        _ => Color::Red,
                    };
                    let name = truncate(&block.name, inner.saturating_sub(20));
                    lines.push(Line::from(vec![
                        Span::raw(format!(
                            "  {name:<width$}",
                            width = inner.saturating_sub(20)
                        )),
                        Span::raw(format!("{:>7} ", compact(block.tokens))),
                        Span::styled(format!("{:<8}", block.state), Style::new().fg(color)),
                    ]));
                }
            }
        }
    }
    Paragraph::new(lines)
        .block(overlay_frame(
            " Prompt cache · Esc to close ",
            Color::LightBlue,
        ))
        .render(rect, buf);
}
