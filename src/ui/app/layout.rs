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
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};

use super::App;
use super::overlays::OverlayContext;
use crate::ui::text::truncate;
use crate::ui::tool_panel::ToolStatus;

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

/// The areas of the last frame (to route mouse events and size pages) and how the screen is
/// drawn.
#[derive(Debug, Clone)]
pub struct Screen {
    /// Where the chat was drawn.
    pub chat_area: Rect,
    /// Where the tool panel was drawn; empty while it is folded.
    pub panel_area: Rect,
    /// Ctrl+B: the tool panel drawn over the chat when the screen is too narrow for it.
    pub panel_overlay: bool,
    /// Draw without colours (`NO_COLOR`); read once when the app starts.
    pub no_color: bool,
}

impl Default for Screen {
    fn default() -> Self {
        Screen {
            chat_area: Rect::default(),
            panel_area: Rect::default(),
            panel_overlay: false,
            no_color: crate::ui::theme::no_color_requested(),
        }
    }
}

impl Screen {
    /// Whether the cell at column `x`, row `y` is on the tool panel.
    pub fn over_panel(&self, x: u16, y: u16) -> bool {
        let rect = self.panel_area;
        x >= rect.x && x < rect.x + rect.width && y >= rect.y && y < rect.y + rect.height
    }
}

/// The rows and columns of one frame.
struct Areas {
    /// The chat and, when wide, the panel beside it.
    top: Rect,
    chat: Rect,
    panel: Option<Rect>,
    queue: Rect,
    strip: Rect,
    status: Rect,
    composer: Rect,
}

impl App {
    /// Draws the whole screen.
    pub fn render(&mut self, frame: &mut Frame<'_>) {
        let area = frame.area();
        let wide = area.width >= WIDE;
        let areas = self.areas(area, wide);
        self.screen.chat_area = areas.chat;
        self.input.composer.notice = self.status_notice();
        let buf = frame.buffer_mut();
        let chat_inner = Rect {
            x: areas.chat.x + 1,
            width: areas.chat.width.saturating_sub(2),
            ..areas.chat
        };
        Widget::render(&self.chat, chat_inner, buf);
        match areas.panel {
            Some(panel) => self.render_panel(panel, buf),
            None if self.screen.panel_overlay => {
                let width = (PANEL_WIDTH + 10).min(area.width);
                let panel = Rect {
                    x: area.x + area.width - width,
                    width,
                    ..areas.top
                };
                Clear.render(panel, buf);
                self.render_panel(panel, buf);
            }
            None => self.screen.panel_area = Rect::default(),
        }
        self.render_queue(areas.queue, buf);
        if !wide {
            self.render_strip(areas.strip, buf);
        }
        Widget::render(&self.status, areas.status, buf);
        // The cache timer's next label (`warm 3m`, then `cold`) wants a frame of its own.
        if let Some((_, Some(at))) = self.status.cache_timer(std::time::Instant::now()) {
            self.requests.wake = Some(self.requests.wake.map_or(at, |w| w.min(at)));
        }
        Widget::render(&self.input.composer, areas.composer, buf);
        self.render_popups(area, &areas, buf);
        let around = OverlayContext {
            chat_height: self.screen.chat_area.height,
            saved_files: &self.records.saved_files,
            models: &self.session.models,
            dynamic_commands: &self.session.dynamic_commands,
            provider: &self.status.provider,
            model: &self.status.model,
        };
        self.overlays.render(&around, area, buf);
        if self.screen.no_color {
            crate::ui::text::strip_colors(buf);
        }
    }

    /// Where each part goes on a screen of `area` (`wide`: the panel fits beside the chat).
    fn areas(&mut self, area: Rect, wide: bool) -> Areas {
        // The composer may take a third of the screen, borders included, never the chat's rows.
        let room = area
            .height
            .saturating_sub(MIN_CHAT_ROWS + 1 + u16::from(!wide));
        self.input.composer.max_rows = (area.height / 3).saturating_sub(2).max(1);
        let composer_height = self.input.composer.height(area.width).min(room.max(3));
        let queue_height = (self.input.queue.len() as u16).min(3).min(
            area.height
                .saturating_sub(MIN_CHAT_ROWS + composer_height + 1 + u16::from(!wide)),
        );
        let strip = u16::from(!wide);
        let [top, queue, strip, status, composer] = Layout::default()
            .direction(Direction::Vertical)
            .constraints([
                Constraint::Min(1),
                Constraint::Length(queue_height),
                Constraint::Length(strip),
                Constraint::Length(1),
                Constraint::Length(composer_height),
            ])
            .areas(area);
        let (chat, panel) = if wide {
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
        Areas {
            top,
            chat,
            panel,
            queue,
            strip,
            status,
            composer,
        }
    }

    /// The composer's popup and the Ctrl+R search line, on the chat's bottom edge: the strip
    /// and the status bar stay visible.
    fn render_popups(&self, area: Rect, areas: &Areas, buf: &mut Buffer) {
        let above = areas.queue.y;
        if let Some(popup) = &self.input.popup {
            let height = popup.height().min(areas.top.height);
            let rect = Rect {
                x: areas.composer.x,
                y: above.saturating_sub(height),
                width: areas.composer.width.min(90),
                height,
            };
            Widget::render(popup, rect, buf);
        }
        if let Some((query, found)) = &self.input.history_search {
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
    }

    fn render_panel(&mut self, area: Rect, buf: &mut Buffer) {
        let (panel, chart) = if self.chart.shown && area.height >= 16 {
            let [panel, chart] = Layout::default()
                .direction(Direction::Vertical)
                .constraints([Constraint::Min(6), Constraint::Length(8)])
                .areas(area);
            (panel, Some(chart))
        } else {
            (area, None)
        };
        self.screen.panel_area = panel;
        Widget::render(&self.tools, panel, buf);
        if let Some(chart) = chart {
            Widget::render(&self.chart, chart, buf);
        }
    }

    /// The prompts waiting for the running turn to end, dimmed.
    fn render_queue(&self, area: Rect, buf: &mut Buffer) {
        let dim = Style::new().fg(Color::DarkGray);
        let queue = &self.input.queue;
        let shown = queue.len().min(area.height as usize);
        let skip = queue.len() - shown;
        for (row, (text, _, _)) in queue.iter().skip(skip).enumerate() {
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
        let key = if self.screen.panel_overlay {
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
                self.requests.wake =
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
                let queued = match self.input.queue.len() {
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
}
