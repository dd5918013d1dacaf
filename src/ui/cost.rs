//! `/cost` and the cache chart.
//!
//! The summary shows the session's bill in the reference system's lines and order (provider and
//! model, input and output tokens, cache read, cache creation, total cost), then chatcli's
//! breakdown: uncached input, requests, what the cache saved, the budget, and each model's and
//! agent's share when there is more than one. The chart (Ctrl+G) draws one column per request, stacked from the
//! bottom: cache read (green █), cache write (yellow ▒), uncached input (red ░), so a user sees the
//! cache warm up turn by turn and spots a miss at a glance.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

use super::help::{centered, overlay_frame};
use crate::protocol::ModelCost;
use crate::protocol::UsageFigures;

/// What the agent reported for `/cost`.
#[derive(Debug, Clone, PartialEq)]
pub struct CostView {
    pub provider: String,
    pub model: String,
    pub requests: u32,
    /// All input, uncached + cache read + cache write: what the status bar's `↑` counts.
    pub input_tokens: u64,
    pub uncached_input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_creation_tokens: u64,
    pub cost_usd: Option<f64>,
    pub saved_usd: f64,
    pub budget_usd: Option<f64>,
    pub by_model: Vec<ModelCost>,
    /// Each agent's share (`main` and the dispatched specialists).
    pub by_agent: Vec<crate::protocol::AgentCost>,
    /// Images sent this session and their tokens by the provider's formula.
    pub images: (u64, u64),
    /// The session's cache expiries, in the explainer's words.
    pub expiries: Vec<String>,
}

/// `12,345`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn money(cost: Option<f64>) -> String {
    cost.map(|c| format!("${c:.4}"))
        .unwrap_or_else(|| "unknown (model not in the price catalog)".into())
}

/// The summary's lines: the reference system's first (provider and model, input, output, cache
/// read, cache creation, total cost: users and their scripts look for these words), then
/// chatcli's breakdown.
pub fn summary_lines(view: &CostView) -> Vec<String> {
    let rule = "──────────────────────────────".to_string();
    let row = |label: &str, n: u64| format!("  {label:<16}{:>12}", thousands(n));
    let mut lines = vec![
        "Session cost summary".to_string(),
        format!("  Provider: {} | Model: {}", view.provider, view.model),
        row("Input tokens:", view.input_tokens),
        row("Output tokens:", view.output_tokens),
        row("Cache read:", view.cache_read_tokens),
        row("Cache creation:", view.cache_creation_tokens),
        format!("  Total cost: {}", money(view.cost_usd)),
        format!("  {rule}"),
        row("Uncached input:", view.uncached_input_tokens),
        format!("  Requests: {}", view.requests),
        format!(
            "  Cache saved: ${:.4} against paying full input price",
            view.saved_usd
        ),
    ];
    if view.images.0 > 0 {
        lines.push(format!(
            "  images: {}, ~{} tokens est. (within the input above)",
            view.images.0,
            thousands(view.images.1)
        ));
    }
    if let Some(budget) = view.budget_usd {
        lines.push(format!(
            "  Budget: ${budget:.2} (change with /budget AMOUNT)"
        ));
    }
    // What pauses cost: each expiry that wrote the prefix again.
    for expiry in &view.expiries {
        lines.push(format!("  {expiry}"));
    }
    if view.by_model.len() > 1 {
        lines.push(String::new());
        lines.push("  By model:".into());
        for m in &view.by_model {
            lines.push(format!(
                "    {:<24} {:>3} req  {:>9}↑ {:>8}↓  {}",
                m.model,
                m.requests,
                thousands(m.input_tokens),
                thousands(m.output_tokens),
                money(m.cost_usd)
            ));
        }
    }
    // `main` alone says nothing the totals do not.
    if view.by_agent.iter().any(|a| a.agent != "main") {
        lines.push(String::new());
        lines.push("  By agent:".into());
        for a in &view.by_agent {
            lines.push(format!(
                "    {:<24} {:>3} req  {:>9}↑ {:>8}↓  {}",
                a.agent,
                a.requests,
                thousands(a.input_tokens),
                thousands(a.output_tokens),
                money(a.cost_usd)
            ));
        }
    }
    lines
}

/// Draws the summary over `area`; `None` while the report is on its way.
pub fn render_summary(view: Option<&CostView>, area: Rect, buf: &mut Buffer) {
    let lines: Vec<String> = match view {
        Some(view) => summary_lines(view),
        None => vec!["asking the agent…".into()],
    };
    let width = 72.min(area.width);
    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = centered(area, width, height);
    Clear.render(rect, buf);
    Paragraph::new(lines.into_iter().map(Line::raw).collect::<Vec<_>>())
        .block(overlay_frame(" Cost · Esc to close ", Color::LightBlue))
        .render(rect, buf);
}

/// The cache chart beside the tool panel: every request's usage, and whether it is shown
/// (Ctrl+G).
#[derive(Debug, Clone)]
pub struct CacheChart {
    /// Every request's usage, oldest first.
    pub requests: Vec<UsageFigures>,
    /// Whether the chart is drawn under the tool panel.
    pub shown: bool,
}

impl Default for CacheChart {
    fn default() -> Self {
        CacheChart {
            requests: Vec::new(),
            shown: true,
        }
    }
}

impl Widget for &CacheChart {
    fn render(self, area: Rect, buf: &mut Buffer) {
        render_chart(&self.requests, area, buf);
    }
}

/// Draws the per-request cache chart in `area`.
pub fn render_chart(requests: &[UsageFigures], area: Rect, buf: &mut Buffer) {
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(Style::new().fg(Color::DarkGray))
        .title(Line::from(vec![
            Span::styled(" Cache: ", Style::new().fg(Color::LightBlue)),
            Span::styled("█ read ", Style::new().fg(Color::Green)),
            Span::styled("▒ write ", Style::new().fg(Color::Yellow)),
            Span::styled("░ new ", Style::new().fg(Color::Red)),
        ]));
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    if requests.is_empty() {
        buf.set_string(
            inner.x,
            inner.y,
            "no requests yet",
            Style::new().fg(Color::DarkGray),
        );
        return;
    }
    // One column per request and a gap, newest on the right.
    let fits = (inner.width as usize).div_ceil(2);
    let shown = &requests[requests.len().saturating_sub(fits)..];
    let max = shown
        .iter()
        .map(|u| u.input_tokens)
        .max()
        .unwrap_or(1)
        .max(1);
    let rows = inner.height as u64;
    for (i, usage) in shown.iter().enumerate() {
        let x = inner.x + (i * 2) as u16;
        let scale = |tokens: u64| (tokens * rows).div_ceil(max).min(rows);
        let read = scale(usage.cache_read_tokens);
        let write = scale(usage.cache_creation_tokens).min(rows - read);
        let uncached = usage
            .input_tokens
            .saturating_sub(usage.cache_read_tokens + usage.cache_creation_tokens);
        let new = scale(uncached).min(rows - read - write);
        let mut y = inner.y + inner.height;
        // Distinct glyphs as well as colours, so the split reads without colour too.
        for (count, glyph, color) in [
            (read, "█", Color::Green),
            (write, "▒", Color::Yellow),
            (new, "░", Color::Red),
        ] {
            for _ in 0..count {
                y -= 1;
                buf.set_string(x, y, glyph, Style::new().fg(color));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(12_345), "12,345");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
