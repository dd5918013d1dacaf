//! The chat pane: the transcript as cells, wrapped once per width, drawn only where visible.
//!
//! Mental model: each cell caches its wrapped lines keyed by width, and the pane draws from the
//! bottom up, walking back only over the cells it needs, so a frame costs the visible rows, not
//! the transcript. Scroll is kept as "lines above the bottom"; while the user is scrolled up and
//! the last cell grows, the offset grows with it so the view stays where the user left it.
//!
//! A tool call's line can be picked (Ctrl+↑/↓ in the key map) and opened in place: its full
//! record (the command, the whole output, the diff it applied) is drawn under its line inside
//! the answer's frame, wrapped, and folded again with the same key. Both states live in the
//! call's `ToolLine`, so the cell's cached lines are rebuilt like for any other change.

// The model's and the user's text: no index that could panic on it (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use unicode_width::UnicodeWidthStr;

use super::markdown;
use super::text::{compact, diff_style, meter, truncate, wrap_spans};

/// What a cell shows.
#[derive(Debug, Clone, PartialEq)]
pub enum CellKind {
    /// A prompt the user sent.
    User(String),
    /// One response of the model: its text, the tools it called, and its request's meter.
    Assistant {
        text: String,
        reasoning: String,
        tool_calls: Vec<ToolLine>,
        usage: Option<(u64, u64)>,
    },
    /// A line from chatcli itself (route decisions, limits, hints).
    Notice(String),
    /// An error.
    Error(String),
}

/// A tool call as the transcript shows it: one line, with its outcome once it finished.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolLine {
    pub id: String,
    pub name: String,
    /// The argument the user recognises the call by (path, URL, command).
    pub summary: String,
    pub outcome: Option<ToolOutcome>,
    /// Picked with Ctrl+↑/↓: drawn highlighted, with the keys that act on it under it.
    pub selected: bool,
    /// Opened in place: the call's full record, drawn under its line (`true` marks the lines
    /// coloured as a diff).
    pub detail: Option<Vec<(String, bool)>>,
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    pub ok: bool,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub chars: u64,
    /// The first line of the error, when it failed.
    pub error: Option<String>,
    pub saved: bool,
}

impl ToolLine {
    /// Whether the call failed, a command's non-zero exit included.
    pub fn failed(&self) -> bool {
        self.outcome
            .as_ref()
            .is_some_and(|o| !o.ok || o.exit_code.is_some_and(|c| c != 0))
    }

    /// `✓ run_command cargo test · exit 0 · 1.2s · 4.1k chars`, fitted to `width` columns.
    fn line(&self, width: usize) -> Line<'static> {
        let Some(outcome) = &self.outcome else {
            let text = truncate(&format!("↳ {} {}", self.name, self.summary), width);
            return Line::from(Span::styled(text, Style::new().fg(Color::Magenta)));
        };
        let (icon, color) = if self.failed() {
            ("✗", Color::LightRed)
        } else {
            ("✓", Color::Green)
        };
        let mut tail = Vec::new();
        if let Some(code) = outcome.exit_code {
            tail.push(format!("exit {code}"));
        }
        if let (false, Some(error)) = (outcome.ok, &outcome.error) {
            tail.push(error.clone());
        }
        tail.push(super::tool_panel::format_duration(
            std::time::Duration::from_millis(outcome.duration_ms),
        ));
        tail.push(format!("{} chars", compact(outcome.chars)));
        if outcome.saved {
            tail.push("saved 💾".into());
        }
        let tail = format!(" · {}", tail.join(" · "));
        let head = format!("{icon} {}", self.name);
        let room = width.saturating_sub(head.width() + 1 + tail.width());
        let summary = if room >= 2 {
            format!(" {}", truncate(&self.summary, room))
        } else {
            String::new()
        };
        let line = truncate(&format!("{head}{summary}{tail}"), width);
        let split = line.char_indices().nth(1).map_or(line.len(), |(i, _)| i);
        let (icon, rest) = line.split_at(split);
        Line::from(vec![
            Span::styled(icon.to_string(), Style::new().fg(color)),
            Span::styled(rest.to_string(), Style::new().fg(Color::Gray)),
        ])
    }
}

/// A cell's lines at one width, and where each of its tool calls is among them.
#[derive(Debug)]
struct Rendered {
    width: u16,
    lines: Rc<Vec<Line<'static>>>,
    /// Each call's id with its first and last row (its line, hint and open record).
    calls: Vec<(String, usize, usize)>,
}

/// One entry of the transcript, with its wrapped lines cached for the last width.
#[derive(Debug)]
pub struct HistoryCell {
    kind: CellKind,
    cache: RefCell<Option<Rendered>>,
}

impl HistoryCell {
    /// A new cell.
    pub fn new(kind: CellKind) -> Self {
        HistoryCell {
            kind,
            cache: RefCell::new(None),
        }
    }

    /// What the cell shows.
    pub fn kind(&self) -> &CellKind {
        &self.kind
    }

    /// Changes the cell; its cached lines are dropped.
    pub fn update(&mut self, f: impl FnOnce(&mut CellKind)) {
        f(&mut self.kind);
        self.cache.get_mut().take();
    }

    /// The cell's lines at `width` columns, from the cache when the width matches.
    pub fn lines(&self, width: u16) -> Rc<Vec<Line<'static>>> {
        self.ensure(width);
        self.cache
            .borrow()
            .as_ref()
            .map(|r| Rc::clone(&r.lines))
            .unwrap_or_default()
    }

    /// The first and last row of call `id` in the cell's lines at `width` columns.
    fn call_rows(&self, width: u16, id: &str) -> Option<(usize, usize)> {
        self.ensure(width);
        let cache = self.cache.borrow();
        let (_, first, last) = cache.as_ref()?.calls.iter().find(|(c, ..)| c == id)?;
        Some((*first, *last))
    }

    /// Builds the cache for `width` unless it holds that width already.
    fn ensure(&self, width: u16) {
        if self
            .cache
            .borrow()
            .as_ref()
            .is_some_and(|r| r.width == width)
        {
            return;
        }
        let (lines, calls) = self.build(width as usize);
        *self.cache.borrow_mut() = Some(Rendered {
            width,
            lines: Rc::new(lines),
            calls,
        });
    }

    fn build(&self, width: usize) -> (Vec<Line<'static>>, Vec<(String, usize, usize)>) {
        let mut calls = Vec::new();
        let mut lines = match &self.kind {
            CellKind::User(text) => user_lines(text, width),
            CellKind::Assistant {
                text,
                reasoning,
                tool_calls,
                usage,
            } => assistant_lines(text, reasoning, tool_calls, *usage, width, &mut calls),
            CellKind::Notice(text) => match text.strip_prefix(crate::protocol::TIP_MARKER) {
                Some(tip) => prefixed(
                    tip,
                    crate::protocol::TIP_MARKER,
                    Style::new().fg(Color::DarkGray),
                    width,
                ),
                None => prefixed(text, "· ", Style::new().fg(Color::DarkGray), width),
            },
            CellKind::Error(text) => prefixed(text, "✗ ", Style::new().fg(Color::LightRed), width),
        };
        lines.push(Line::default());
        (lines, calls)
    }
}

/// A notice or an error: the prefix on its first line, every line of the text kept (a
/// `/skill show` body or a `/context` listing is several lines), each wrapped and indented.
fn prefixed(text: &str, prefix: &str, style: Style, width: usize) -> Vec<Line<'static>> {
    let indent = " ".repeat(prefix.width());
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let lead = if i == 0 { prefix } else { indent.as_str() };
        let spans = vec![Span::styled(format!("{lead}{raw}"), style)];
        lines.extend(wrap_spans(&spans, width, prefix.width()));
    }
    if lines.is_empty() {
        lines.push(Line::from(Span::styled(prefix.to_string(), style)));
    }
    lines
}

fn user_lines(text: &str, width: usize) -> Vec<Line<'static>> {
    let style = Style::new().fg(Color::White).add_modifier(Modifier::BOLD);
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let prefix = if i == 0 { "❯ " } else { "  " };
        let spans = vec![
            Span::styled(
                prefix,
                Style::new()
                    .fg(Color::LightGreen)
                    .add_modifier(Modifier::BOLD),
            ),
            Span::styled(raw.to_string(), style),
        ];
        lines.extend(wrap_spans(&spans, width, 2));
    }
    if lines.is_empty() {
        lines.push(Line::from(Span::styled("❯ ", style)));
    }
    lines
}

/// An answer in its frame; `calls` gets each call's first and last row.
fn assistant_lines(
    text: &str,
    reasoning: &str,
    tool_calls: &[ToolLine],
    usage: Option<(u64, u64)>,
    width: usize,
    calls: &mut Vec<(String, usize, usize)>,
) -> Vec<Line<'static>> {
    let border = Style::new().fg(Color::DarkGray);
    let inner = width.saturating_sub(4).max(1);
    let mut body: Vec<Line<'static>> = Vec::new();
    if !reasoning.trim().is_empty() {
        let style = Style::new()
            .fg(Color::DarkGray)
            .add_modifier(Modifier::ITALIC);
        for raw in reasoning.trim().lines() {
            body.extend(wrap_spans(
                &[Span::styled(raw.to_string(), style)],
                inner,
                0,
            ));
        }
    }
    if !text.trim().is_empty() {
        body.extend(markdown::render(text.trim_end(), inner, Style::new()));
    }
    for call in tool_calls {
        // Row 0 is the frame's top border.
        let first = body.len() + 1;
        if call.selected {
            body.push(
                call.line(inner)
                    .patch_style(Style::new().add_modifier(Modifier::REVERSED)),
            );
            body.extend(selected_hint(call.detail.is_some(), inner));
        } else {
            body.push(call.line(inner));
        }
        if let Some(detail) = &call.detail {
            body.extend(detail_lines(detail, inner));
        }
        calls.push((call.id.clone(), first, body.len()));
    }
    if body.is_empty() {
        body.push(Line::from(Span::styled(
            "…",
            Style::new().fg(Color::DarkGray),
        )));
    }

    let label = " assistant ";
    let meter_text = usage
        .map(|(i, o)| format!(" {} ", meter(i, o)))
        .unwrap_or_default();
    let fill = width.saturating_sub(2 + 1 + label.width() + meter_text.width() + 1);
    let mut lines = Vec::with_capacity(body.len() + 2);
    lines.push(Line::from(vec![
        Span::styled("╭─", border),
        Span::styled(label, Style::new().fg(Color::LightBlue)),
        Span::styled("─".repeat(fill), border),
        Span::styled(meter_text, Style::new().fg(Color::Yellow)),
        Span::styled("─╮", border),
    ]));
    for line in body {
        let pad = inner.saturating_sub(line.width());
        let mut spans = vec![Span::styled("│ ", border)];
        spans.extend(line.spans);
        spans.push(Span::raw(" ".repeat(pad)));
        spans.push(Span::styled(" │", border));
        lines.push(Line::from(spans));
    }
    lines.push(Line::from(Span::styled(
        format!("╰{}╯", "─".repeat(width.saturating_sub(2))),
        border,
    )));
    lines
}

/// The keys of the picked call, under its line.
fn selected_hint(open: bool, width: usize) -> Vec<Line<'static>> {
    let what = if open {
        "fold it"
    } else {
        "open it here (full output and diff)"
    };
    let text = format!("  ↳ Enter: {what} · Ctrl+T: pager · Esc: done");
    wrap_spans(
        &[Span::styled(text, Style::new().fg(Color::Yellow))],
        width,
        4,
    )
}

/// An open call's record, each line wrapped whole (nothing cut) behind a dim gutter.
fn detail_lines(detail: &[(String, bool)], width: usize) -> Vec<Line<'static>> {
    let gutter = Style::new().fg(Color::DarkGray);
    let room = width.saturating_sub(2).max(1);
    let mut out = Vec::new();
    for (text, is_diff) in detail {
        let style = if *is_diff {
            diff_style(text).unwrap_or_default()
        } else {
            Style::new()
        };
        // A tab would take one cell on screen: four spaces keep indented output readable.
        let text = text.replace('\t', "    ");
        for line in wrap_spans(&[Span::styled(text, style)], room, 0) {
            let mut spans = vec![Span::styled("┊ ", gutter)];
            spans.extend(line.spans);
            out.push(Line::from(spans));
        }
    }
    out.push(Line::from(Span::styled("┊ ── end", gutter)));
    out
}

/// The transcript and its scroll state.
#[derive(Debug, Default)]
pub struct ChatPane {
    cells: Vec<HistoryCell>,
    /// Lines between the bottom of the transcript and the bottom of the view.
    scroll: Cell<usize>,
    /// The width of the last render, to measure growth while scrolled up.
    last_width: Cell<u16>,
    /// The height of the last render, to bring a picked call into view.
    last_height: Cell<u16>,
    /// The call picked with Ctrl+↑/↓, by id.
    selected_call: Option<String>,
}

impl ChatPane {
    /// Appends a cell.
    pub fn push(&mut self, kind: CellKind) {
        let added = self.height_of(&HistoryCell::new(kind.clone()));
        if !self.following() {
            self.scroll.set(self.scroll.get() + added);
        }
        self.cells.push(HistoryCell::new(kind));
    }

    /// Changes the last cell, keeping a scrolled-up view still.
    pub fn update_last(&mut self, f: impl FnOnce(&mut CellKind)) {
        if let Some(index) = self.cells.len().checked_sub(1) {
            self.update_at(index, f);
        }
    }

    /// Changes the cell at `index`, keeping a scrolled-up view still.
    pub fn update_at(&mut self, index: usize, f: impl FnOnce(&mut CellKind)) {
        let following = self.following();
        let width = self.last_width.get();
        let Some(last) = self.cells.get_mut(index) else {
            return;
        };
        let before = if following || width == 0 {
            0
        } else {
            last.lines(width).len()
        };
        last.update(f);
        if !following && width > 0 {
            let after = last.lines(width).len();
            self.scroll
                .set((self.scroll.get() + after).saturating_sub(before));
        }
    }

    /// Removes the last cell when `pred` says so (an answer frame that never got content).
    pub fn pop_last_if(&mut self, pred: impl FnOnce(&CellKind) -> bool) {
        if self.cells.last().is_some_and(|c| pred(c.kind())) {
            let removed = self.cells.pop();
            if let Some(cell) = removed
                && !self.following()
            {
                let height = self.height_of(&cell);
                self.scroll.set(self.scroll.get().saturating_sub(height));
            }
        }
    }

    /// Drops every cell from `index` on (`/rewind`), back to following the bottom.
    pub fn truncate(&mut self, index: usize) {
        self.cells.truncate(index);
        self.scroll.set(0);
    }

    /// Drops the `prompt`-th prompt (from 0) and everything after it (`/rewind`); nothing when
    /// the chat holds fewer prompts.
    pub fn cut_before_prompt(&mut self, prompt: usize) {
        let cut = self
            .cells
            .iter()
            .enumerate()
            .filter(|(_, c)| matches!(c.kind, CellKind::User(_)))
            .nth(prompt)
            .map(|(i, _)| i);
        if let Some(cut) = cut {
            self.truncate(cut);
        }
    }

    /// The cells, oldest first.
    pub fn cells(&self) -> &[HistoryCell] {
        &self.cells
    }

    /// The index of the cell that shows call `id`.
    fn cell_of_call(&self, id: &str) -> Option<usize> {
        self.cells.iter().rposition(|cell| {
            matches!(&cell.kind, CellKind::Assistant { tool_calls, .. }
                if tool_calls.iter().any(|c| c.id == id))
        })
    }

    /// Changes call `id`'s line; false when the transcript shows no such call.
    fn update_call(&mut self, id: &str, f: impl FnOnce(&mut ToolLine)) -> bool {
        let Some(index) = self.cell_of_call(id) else {
            return false;
        };
        self.update_at(index, |cell| {
            if let CellKind::Assistant { tool_calls, .. } = cell
                && let Some(call) = tool_calls.iter_mut().rev().find(|c| c.id == id)
            {
                f(call);
            }
        });
        true
    }

    /// Whether the transcript has a line for call `id` (a specialist's calls have none).
    pub fn shows_call(&self, id: &str) -> bool {
        self.cell_of_call(id).is_some()
    }

    /// Picks call `id` (`None`: no call) and brings its line into view; false when the
    /// transcript has no line for it.
    pub fn select_call(&mut self, id: Option<&str>) -> bool {
        if let Some(old) = self.selected_call.take() {
            self.update_call(&old, |c| c.selected = false);
        }
        let Some(id) = id else {
            return false;
        };
        if !self.update_call(id, |c| c.selected = true) {
            return false;
        }
        self.selected_call = Some(id.to_string());
        self.reveal(id);
        true
    }

    /// Opens call `id` in place with `detail`, or folds it when it is open; returns whether it
    /// is open now. The view moves to show its line and as much of the record as fits.
    pub fn toggle_call(&mut self, id: &str, detail: Vec<(String, bool)>) -> bool {
        let mut open = false;
        self.update_call(id, |c| {
            c.detail = match c.detail {
                Some(_) => None,
                None => {
                    open = true;
                    Some(detail)
                }
            };
        });
        self.reveal(id);
        open
    }

    /// Whether call `id` is open in place.
    pub fn call_open(&self, id: &str) -> bool {
        let cell = self.cell_of_call(id).and_then(|i| self.cells.get(i));
        matches!(cell.map(|c| &c.kind), Some(CellKind::Assistant { tool_calls, .. })
            if tool_calls.iter().any(|c| c.id == id && c.detail.is_some()))
    }

    /// Replaces the record of call `id` while it is open (its result arrived).
    pub fn refresh_call(&mut self, id: &str, detail: Vec<(String, bool)>) {
        self.update_call(id, |c| {
            if c.detail.is_some() {
                c.detail = Some(detail);
            }
        });
    }

    /// Scrolls so that call `id`'s rows show: all of them when they fit, else from its line.
    fn reveal(&mut self, id: &str) {
        let (width, height) = (self.last_width.get(), self.last_height.get() as usize);
        if width == 0 || height == 0 {
            return;
        }
        let Some(index) = self.cell_of_call(id) else {
            return;
        };
        let Some((cell, after)) = self.cells.get(index).zip(self.cells.get(index + 1..)) else {
            return;
        };
        let Some((first, last)) = cell.call_rows(width, id) else {
            return;
        };
        // Rows between each end of the call and the end of the transcript; the view shows the
        // rows with `scroll` to `scroll + height - 1` rows below them.
        let below_cell: usize = after.iter().map(|c| c.lines(width).len()).sum();
        let bottom = cell.lines(width).len().saturating_sub(1);
        let below_first = below_cell + bottom.saturating_sub(first);
        let below_last = below_cell + bottom.saturating_sub(last);
        let mut scroll = self.scroll.get();
        for below in [below_last, below_first] {
            if below < scroll {
                scroll = below;
            } else if below >= scroll + height {
                scroll = below + 1 - height;
            }
        }
        self.scroll.set(scroll);
    }

    fn height_of(&self, cell: &HistoryCell) -> usize {
        match self.last_width.get() {
            0 => 0,
            w => cell.lines(w).len(),
        }
    }

    /// Whether the view sticks to the bottom.
    pub fn following(&self) -> bool {
        self.scroll.get() == 0
    }

    /// Scrolls up (towards older cells) by `lines`.
    pub fn scroll_up(&mut self, lines: usize) {
        self.scroll.set(self.scroll.get().saturating_add(lines));
    }

    /// Scrolls down by `lines`; reaching the bottom follows it again.
    pub fn scroll_down(&mut self, lines: usize) {
        self.scroll.set(self.scroll.get().saturating_sub(lines));
    }

    /// Back to following the bottom.
    pub fn follow(&mut self) {
        self.scroll.set(0);
    }
}

impl Widget for &ChatPane {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        self.last_width.set(area.width);
        self.last_height.set(area.height);
        if self.cells.is_empty() {
            render_welcome(area, buf);
            return;
        }
        let height = area.height as usize;
        // Walk back from the newest cell until the rows above the scroll offset fill the view.
        let wanted = self.scroll.get() + height;
        let mut rows: Vec<Rc<Vec<Line<'static>>>> = Vec::new();
        let mut collected = 0usize;
        for cell in self.cells.iter().rev() {
            if collected >= wanted {
                break;
            }
            let lines = cell.lines(area.width);
            collected += lines.len();
            rows.push(lines);
        }
        if collected < wanted {
            // Scrolled past the top: clamp so the first line sits at the top of the view.
            let max_scroll = collected.saturating_sub(height);
            self.scroll.set(self.scroll.get().min(max_scroll));
        }
        let skip_bottom = self.scroll.get();
        let all: Vec<&Line<'static>> = rows.iter().rev().flat_map(|r| r.iter()).collect();
        let end = all.len().saturating_sub(skip_bottom);
        let start = end.saturating_sub(height);
        for (row, line) in all.iter().take(end).skip(start).enumerate() {
            let y = area.y + row as u16;
            buf.set_line(area.x, y, line, area.width);
        }
        if !self.following() && area.width > 12 {
            let tag = truncate(
                &format!(" ↓ {} more · End ", self.scroll.get()),
                area.width as usize,
            );
            let x = area.x + area.width.saturating_sub(tag.width() as u16);
            buf.set_string(
                x,
                area.y + area.height - 1,
                tag,
                Style::new().fg(Color::Black).bg(Color::Yellow),
            );
        }
    }
}

const WELCOME: [&str; 4] = [
    "Welcome to chatcli.",
    "Type a prompt and press Enter; Shift+Tab switches mode.",
    "The meter below counts tokens sent ↑ and received ↓.",
    "F1 lists every key.",
];

fn render_welcome(area: Rect, buf: &mut Buffer) {
    let style = Style::new().fg(Color::DarkGray);
    let mut y = area.y + 1;
    for (i, text) in WELCOME.iter().enumerate() {
        let spans = vec![Span::styled(
            *text,
            if i == 0 {
                style.add_modifier(Modifier::BOLD)
            } else {
                style
            },
        )];
        for line in wrap_spans(&spans, area.width as usize, 0) {
            if y >= area.y + area.height {
                return;
            }
            buf.set_line(area.x, y, &line, area.width);
            y += 1;
        }
    }
}
