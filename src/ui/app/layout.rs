//! Where everything goes on screen, at any size.
//!
//! From the top: the chat (with the tool panel and cache chart beside it at 100 columns and
//! more), queued prompts, at narrower widths a one-line strip that folds the tool panel, the
//! status bar, and the composer (which grows to a third of the screen). Below 100 columns the
//! chat takes the whole width and Ctrl+B draws the full panel over it. The chat always keeps at
//! least `MIN_CHAT_ROWS` rows (40×12 included); popups and overlays are drawn last, over the rest.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};

use super::{App, Overlay};
use crate::ui::text::truncate;
use crate::ui::tool_panel::ToolStatus;
use crate::ui::{cost, files, help};

/// Width of the tool panel beside the chat at 100 columns; it grows with the terminal.
pub const PANEL_WIDTH: u16 = 34;
/// The widest the panel gets.
pub const PANEL_MAX_WIDTH: u16 = 72;

/// The panel's width on a terminal `width` columns wide: 34 at 100 columns, then a third of
/// what is past 100 (commands and paths get room on wide screens), at most `PANEL_MAX_WIDTH`.
pub fn panel_width(width: u16) -> u16 {
    (PANEL_WIDTH + width.saturating_sub(WIDE) / 3).min(PANEL_MAX_WIDTH)
}
/// Below this many columns the panel folds into a strip.
pub const WIDE: u16 = 100;
/// Rows the chat keeps however small the screen.
pub const MIN_CHAT_ROWS: u16 = 5;

impl App {
    /// Draws the whole screen.
    pub fn render(&mut self, frame: &mut Frame<'_>) {
        let area = frame.area();
        let wide = area.width >= WIDE;
        // The composer may take a third of the screen, borders included, never the chat's rows.
        let room = area
            .height
            .saturating_sub(MIN_CHAT_ROWS + 1 + u16::from(!wide));
        self.composer.max_rows = (area.height / 3).saturating_sub(2).max(1);
        let composer_height = self.composer.height(area.width).min(room.max(3));
        let queue_height = (self.queue.len() as u16).min(3).min(
            area.height
                .saturating_sub(MIN_CHAT_ROWS + composer_height + 1 + u16::from(!wide)),
        );
        let strip = u16::from(!wide);
        let [top, queue_row, strip_row, status_row, composer_row] = Layout::default()
            .direction(Direction::Vertical)
            .constraints([
                Constraint::Min(1),
                Constraint::Length(queue_height),
                Constraint::Length(strip),
                Constraint::Length(1),
                Constraint::Length(composer_height),
            ])
            .areas(area);
        let (chat_area, panel_area) = if wide {
            let [chat, panel] = Layout::default()
                .direction(Direction::Horizontal)
                .constraints([
                    Constraint::Min(40),
                    Constraint::Length(panel_width(area.width)),
                ])
                .areas(top);
            (chat, Some(panel))
        } else {
            (top, None)
        };
        self.chat_area = chat_area;
        self.composer.notice = self.status_notice();
        let buf = frame.buffer_mut();
        let chat_inner = Rect {
            x: chat_area.x + 1,
            width: chat_area.width.saturating_sub(2),
            ..chat_area
        };
        Widget::render(&self.chat, chat_inner, buf);
        match panel_area {
            Some(panel) => self.render_panel(panel, buf),
            None if self.panel_overlay => {
                let width = (PANEL_WIDTH + 10).min(area.width);
                let panel = Rect {
                    x: area.x + area.width - width,
                    width,
                    ..top
                };
                Clear.render(panel, buf);
                self.render_panel(panel, buf);
            }
            None => self.panel_area = Rect::default(),
        }
        self.render_queue(queue_row, buf);
        if !wide {
            self.render_strip(strip_row, buf);
        }
        Widget::render(&self.status, status_row, buf);
        Widget::render(&self.composer, composer_row, buf);
        // Popups sit on the chat's bottom edge: the strip and the status bar stay visible.
        let above = queue_row.y;
        if let Some(popup) = &self.popup {
            let height = popup.height().min(top.height);
            let rect = Rect {
                x: composer_row.x,
                y: above.saturating_sub(height),
                width: composer_row.width.min(90),
                height,
            };
            Widget::render(popup, rect, buf);
        }
        if let Some((query, found)) = &self.history_search {
            let text = match found {
                Some((_, entry)) => {
                    format!(" search history: {query}▏ → {}", entry.replace('\n', " ⏎ "))
                }
                None if query.is_empty() => {
                    " search history: type to search · Ctrl+R older · Enter take · Esc cancel"
                        .into()
                }
                None => format!(" search history: {query}▏ (no match)"),
            };
            let y = above.saturating_sub(1);
            let line = Line::styled(
                truncate(&text, area.width as usize),
                Style::new().fg(Color::Black).bg(Color::LightYellow),
            );
            buf.set_line(area.x, y, &line, area.width);
        }
        self.render_overlay(area, buf);
        if self.no_color {
            crate::ui::text::strip_colors(buf);
        }
    }

    fn render_panel(&mut self, area: Rect, buf: &mut Buffer) {
        let (panel, chart) = if self.show_chart && area.height >= 16 {
            let [panel, chart] = Layout::default()
                .direction(Direction::Vertical)
                .constraints([Constraint::Min(6), Constraint::Length(8)])
                .areas(area);
            (panel, Some(chart))
        } else {
            (area, None)
        };
        self.panel_area = panel;
        Widget::render(&self.tools, panel, buf);
        if let Some(chart) = chart {
            cost::render_chart(&self.requests, chart, buf);
        }
    }

    /// The prompts waiting for the running turn to end, dimmed.
    fn render_queue(&self, area: Rect, buf: &mut Buffer) {
        let dim = Style::new().fg(Color::DarkGray);
        let shown = self.queue.len().min(area.height as usize);
        let skip = self.queue.len() - shown;
        for (row, (text, _, _)) in self.queue.iter().skip(skip).enumerate() {
            let text = format!(" ⏳ queued: {}", text.replace('\n', " ⏎ "));
            buf.set_line(
                area.x,
                area.y + row as u16,
                &Line::styled(truncate(&text, area.width as usize), dim),
                area.width,
            );
        }
    }

    /// The folded tool panel: how many calls, the newest one, and the key that opens the panel.
    fn render_strip(&self, area: Rect, buf: &mut Buffer) {
        let entries = self.tools.entries();
        let calls = entries
            .iter()
            .filter(|e| e.status != ToolStatus::Note)
            .count();
        let newest = entries
            .iter()
            .rev()
            .find(|e| e.status != ToolStatus::Note)
            .map(|e| {
                let state = match &e.status {
                    ToolStatus::Ok => "✓",
                    ToolStatus::Failed(_) => "✗",
                    ToolStatus::AwaitingApproval => "? awaiting approval",
                    ToolStatus::Running => "running",
                    ToolStatus::Receiving(_) => "receiving",
                    ToolStatus::Note => "",
                };
                format!(" · {state} {} {}", e.name, e.summary)
            })
            .unwrap_or_default();
        let key = if self.panel_overlay {
            " · Esc/Ctrl+B close"
        } else {
            " · Ctrl+B panel"
        };
        let head = format!(" tools {calls}{newest}");
        let room = (area.width as usize).saturating_sub(key.chars().count());
        let line = Line::from(vec![
            Span::styled(truncate(&head, room), Style::new().fg(Color::Gray)),
            Span::styled(key, Style::new().fg(Color::DarkGray)),
        ]);
        buf.set_line(area.x, area.y, &line, area.width);
    }

    /// The working notice or a transient one, for the composer's top border.
    fn status_notice(&mut self) -> Option<(String, Color)> {
        let now = std::time::Instant::now();
        if let Some((until, rest)) = &self.status.retry {
            if *until > now {
                let left = until.saturating_duration_since(now);
                let secs = left.as_secs() + u64::from(left.subsec_nanos() > 0);
                let text = format!("retrying in {secs}s {rest}");
                // The next frame shows the next second.
                self.wake_at =
                    Some(now + (left - std::time::Duration::from_secs(secs - 1)).min(left));
                return Some((text, Color::Yellow));
            }
            self.status.retry = None;
        }
        match &self.status.notice {
            Some((text, until)) if *until > std::time::Instant::now() => {
                Some((text.clone(), Color::Yellow))
            }
            _ if self.running => {
                let queued = match self.queue.len() {
                    0 => String::new(),
                    n => format!(" · {n} queued"),
                };
                Some((
                    format!("● working · Esc to interrupt{queued}"),
                    Color::LightYellow,
                ))
            }
            _ => None,
        }
    }

    fn render_overlay(&mut self, area: Rect, buf: &mut Buffer) {
        match self.overlay {
            Some(Overlay::Help) => {
                help::render(area, buf, &self.dynamic_commands, &mut self.help_scroll)
            }
            Some(Overlay::Files) => files::render(&self.files_view, &self.saved_files, area, buf),
            Some(Overlay::Cache) => crate::ui::cache::render(self.cache_view.as_ref(), area, buf),
            Some(Overlay::Resume) => files::render_sessions(self.resume_picker.as_ref(), area, buf),
            Some(Overlay::Cost) => cost::render_summary(self.cost_view.as_ref(), area, buf),
            Some(Overlay::Approval) => {
                if let Some(pending) = self.pending_approval.as_mut() {
                    crate::ui::approval::render(pending, area, buf);
                }
            }
            Some(Overlay::Transcript) => {
                if let Some(pager) = &self.transcript_view {
                    files::render_pager(pager, area, buf);
                }
            }
            Some(Overlay::Rewind) => self.render_rewind(area, buf),
            Some(Overlay::Models) => {
                crate::ui::models::render(
                    &self.model_picker,
                    &self.models,
                    &self.status.provider,
                    &self.status.model,
                    area,
                    buf,
                );
            }
            Some(Overlay::Config) => {
                let lines: Vec<Line> = self
                    .config_report
                    .iter()
                    .map(|l| Line::raw(l.clone()))
                    .collect();
                list_overlay(" Configuration · Esc to close ", lines, area, buf);
            }
            None => {}
        }
    }

    fn render_rewind(&self, area: Rect, buf: &mut Buffer) {
        let Some((prompts, selected)) = &self.rewind_picker else {
            return;
        };
        let mut lines: Vec<Line> = prompts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let text = format!("{:>3}. {}", i + 1, p.replace('\n', " ⏎ "));
                let style = if i == *selected {
                    Style::new().fg(Color::Black).bg(Color::LightBlue)
                } else {
                    Style::new()
                };
                Line::styled(text, style)
            })
            .collect();
        if lines.is_empty() {
            lines.push(Line::styled(
                "No prompt in this session yet.",
                Style::new().fg(Color::Gray),
            ));
        }
        lines.push(Line::default());
        lines.push(Line::styled(
            "Enter: go back to before this prompt (its text returns to the composer; files the tools changed since are restored) · Esc close",
            Style::new().fg(Color::DarkGray).add_modifier(Modifier::ITALIC),
        ));
        list_overlay(" Rewind · pick a prompt ", lines, area, buf);
    }
}

/// A centred box with `lines`, wrapped, at most the whole area.
fn list_overlay(title: &str, lines: Vec<Line<'_>>, area: Rect, buf: &mut Buffer) {
    let width = 100.min(area.width);
    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = help::centered(area, width, height);
    Clear.render(rect, buf);
    ratatui::widgets::Paragraph::new(lines)
        .wrap(ratatui::widgets::Wrap { trim: false })
        .block(help::overlay_frame(title, Color::LightBlue))
        .render(rect, buf);
}
