//! The tool activity panel: one line per tool call of the session, newest at the bottom.
//!
//! Each line shows status, tool name, its main argument, and once finished the duration and the
//! size of the result sent to the model (and a 💾 mark when the body was saved to a file instead
//! of being inlined). The panel scrolls independently of the chat. Above the calls, the model's
//! plan checklist (`checklist`), when it keeps one.

// Tool names and arguments the model sent: no index that could panic on them (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};
use unicode_width::UnicodeWidthStr;

use super::chat::ToolOutcome;
use super::text::{compact, truncate};

/// Where a call is.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolStatus {
    /// The model is still writing the call's arguments: this many bytes so far.
    Receiving(u64),
    /// Waiting for the user's answer in the approval dialog.
    AwaitingApproval,
    Running,
    Ok,
    Failed(String),
    /// Not a call: a note about the session (a cache miss), shown in the same timeline.
    Note,
}

/// One tool call as the panel shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolEntry {
    pub id: String,
    pub name: String,
    pub summary: String,
    pub status: ToolStatus,
    pub duration: Option<Duration>,
    pub chars: Option<u64>,
    pub saved_path: Option<String>,
    /// A dispatched specialist's row: its input and output tokens so far.
    pub tokens: Option<(u64, u64)>,
    /// 1 for a specialist's own call, drawn indented under its row.
    pub depth: u8,
    /// When it started running: a running row shows how long it has run.
    pub started: Option<Instant>,
}

/// The panel's entries and scroll.
#[derive(Debug, Default)]
pub struct ToolPanel {
    entries: Vec<ToolEntry>,
    scroll: usize,
    /// Frame of the running spinner.
    pub spinner: usize,
    /// The instant of the last frame tick: running rows show how long they have run at it
    /// (`None` until the first tick: no elapsed time is shown).
    pub now: Option<Instant>,
    /// The call picked with Ctrl+↑/↓ (an index into the entries), for Enter to open.
    pub selected: Option<usize>,
    /// The plans the model keeps with `update_plan`, drawn above the calls.
    pub plans: super::checklist::Checklists,
}

const SPINNER: [&str; 8] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧"];

/// The spinner's frame at tick `n`.
// in bounds: a number modulo the array's length.
#[allow(clippy::indexing_slicing)]
fn spinner_frame(n: usize) -> &'static str {
    SPINNER[n % SPINNER.len()]
}

impl ToolPanel {
    /// The model began a call whose arguments are still streaming.
    pub fn receiving(&mut self, id: &str, name: &str) {
        self.entries.push(ToolEntry {
            id: id.to_string(),
            name: name.to_string(),
            summary: String::new(),
            status: ToolStatus::Receiving(0),
            duration: None,
            chars: None,
            saved_path: None,
            tokens: None,
            depth: 0,
            started: None,
        });
        if self.scroll > 0 {
            self.scroll += 1;
        }
    }

    /// More of a streaming call's arguments arrived; returns how many bytes are new.
    pub fn progress(&mut self, id: &str, bytes: u64) -> u64 {
        match self.entries.iter_mut().rev().find(|e| e.id == id) {
            Some(entry) => match entry.status {
                ToolStatus::Receiving(before) => {
                    entry.status = ToolStatus::Receiving(bytes.max(before));
                    bytes.saturating_sub(before)
                }
                _ => 0,
            },
            None => 0,
        }
    }

    /// A call started (its line stays where it began streaming, if it did).
    pub fn started(&mut self, id: &str, name: &str, args: &serde_json::Value) {
        if let Some(entry) = self
            .entries
            .iter_mut()
            .rev()
            .find(|e| e.id == id && matches!(e.status, ToolStatus::Receiving(_)))
        {
            entry.summary = summarize_args(args);
            entry.status = ToolStatus::Running;
            entry.started = Some(Instant::now());
            return;
        }
        self.entries.push(ToolEntry {
            id: id.to_string(),
            name: name.to_string(),
            summary: summarize_args(args),
            status: ToolStatus::Running,
            duration: None,
            chars: None,
            saved_path: None,
            tokens: None,
            depth: 0,
            started: Some(Instant::now()),
        });
        if self.scroll > 0 {
            self.scroll += 1;
        }
    }

    /// A dispatched specialist started task `summary`; `key` names its row.
    pub fn agent_started(&mut self, key: &str, agent: &str, summary: &str) {
        self.entries.push(ToolEntry {
            id: key.to_string(),
            name: agent.to_string(),
            summary: summary.replace('\n', " "),
            status: ToolStatus::Running,
            duration: None,
            chars: None,
            saved_path: None,
            tokens: Some((0, 0)),
            depth: 0,
            started: Some(Instant::now()),
        });
        if self.scroll > 0 {
            self.scroll += 1;
        }
    }

    /// A specialist's request was billed: its row's `N↑ M↓` grows.
    pub fn agent_usage(&mut self, key: &str, input: u64, output: u64) {
        if let Some(entry) = self.agent_row(key)
            && let Some((i, o)) = entry.tokens.as_mut()
        {
            *i += input;
            *o += output;
        }
    }

    /// A specialist finished (`stop_reason` as its loop ended) after `duration`.
    pub fn agent_finished(&mut self, key: &str, stop_reason: &str, duration: Duration) {
        if let Some(entry) = self.agent_row(key) {
            entry.status = match stop_reason {
                "end_turn" | "stop" | "max_tokens" => ToolStatus::Ok,
                "interrupted" => ToolStatus::Failed("cancelled".into()),
                other => ToolStatus::Failed(other.replace('_', " ")),
            };
            entry.duration = Some(duration);
        }
    }

    fn agent_row(&mut self, key: &str) -> Option<&mut ToolEntry> {
        self.entries
            .iter_mut()
            .rev()
            .find(|e| e.id == key && e.tokens.is_some())
    }

    /// `receiving`, for a call of the specialist whose row is `parent`.
    pub fn receiving_in(&mut self, parent: &str, id: &str, name: &str) {
        self.receiving(id, name);
        self.nest_last(parent);
    }

    /// `started`, for a call of the specialist whose row is `parent`.
    pub fn started_in(&mut self, parent: &str, id: &str, name: &str, args: &serde_json::Value) {
        let streamed = self
            .entries
            .iter()
            .any(|e| e.id == id && matches!(e.status, ToolStatus::Receiving(_)));
        self.started(id, name, args);
        if !streamed {
            self.nest_last(parent);
        }
    }

    /// Moves the newest entry under the row `parent`, after that row's other calls, so each
    /// specialist's calls stay together while several run at once.
    fn nest_last(&mut self, parent: &str) {
        let Some(mut entry) = self.entries.pop() else {
            return;
        };
        entry.depth = 1;
        let prefix = format!("{parent}/");
        let at = match self
            .entries
            .iter()
            .rposition(|e| e.id == parent && e.tokens.is_some())
        {
            Some(row) => {
                let mut at = row + 1;
                while self
                    .entries
                    .get(at)
                    .is_some_and(|e| e.depth == 1 && e.id.starts_with(&prefix))
                {
                    at += 1;
                }
                at
            }
            None => self.entries.len(),
        };
        if let Some(selected) = self.selected.as_mut()
            && *selected >= at
        {
            *selected += 1;
        }
        self.entries.insert(at, entry);
    }

    /// A call waits for the user's approval.
    pub fn awaiting(&mut self, id: &str) {
        self.set_status(id, ToolStatus::AwaitingApproval);
    }

    /// A call the user answered runs (or is about to be reported denied): its time counts
    /// from now, not from when it asked.
    pub fn answered(&mut self, id: &str) {
        self.set_status(id, ToolStatus::Running);
        if let Some(entry) = self.entries.iter_mut().rev().find(|e| e.id == id) {
            entry.started = Some(Instant::now());
        }
    }

    fn set_status(&mut self, id: &str, status: ToolStatus) {
        if let Some(entry) = self.entries.iter_mut().rev().find(|e| e.id == id) {
            entry.status = status;
        }
    }

    /// A call finished; a command's non-zero exit code counts as a failure.
    pub fn finished(&mut self, id: &str, outcome: &ToolOutcome, saved_path: Option<String>) {
        if let Some(entry) = self.entries.iter_mut().rev().find(|e| e.id == id) {
            entry.status = match (outcome.ok, outcome.exit_code) {
                (false, _) => ToolStatus::Failed(outcome.error.clone().unwrap_or_default()),
                (true, Some(code)) if code != 0 => ToolStatus::Failed(format!("exit {code}")),
                (true, _) => ToolStatus::Ok,
            };
            entry.chars = Some(outcome.chars);
            entry.duration = Some(Duration::from_millis(outcome.duration_ms));
            entry.saved_path = saved_path;
        }
    }

    /// Adds a note line (a cache miss) to the timeline.
    pub fn note(&mut self, name: &str, summary: String) {
        self.entries.push(ToolEntry {
            id: String::new(),
            name: name.to_string(),
            summary,
            status: ToolStatus::Note,
            duration: None,
            chars: None,
            saved_path: None,
            tokens: None,
            depth: 0,
            started: None,
        });
        if self.scroll > 0 {
            self.scroll += 1;
        }
    }

    /// Marks every running call as cancelled (the prompt ended while they ran).
    pub fn cancel_running(&mut self) {
        for entry in &mut self.entries {
            if matches!(
                entry.status,
                ToolStatus::Running | ToolStatus::AwaitingApproval | ToolStatus::Receiving(_)
            ) {
                entry.status = ToolStatus::Failed("cancelled".into());
            }
        }
    }

    /// The entries, oldest first.
    pub fn entries(&self) -> &[ToolEntry] {
        &self.entries
    }

    /// Whether any call is running.
    pub fn any_running(&self) -> bool {
        self.entries
            .iter()
            .any(|e| matches!(e.status, ToolStatus::Running | ToolStatus::Receiving(_)))
    }

    /// Moves the selection among the calls (not the notes): `-1` older, `1` newer; starts at the
    /// newest.
    pub fn select(&mut self, step: isize) {
        let calls: Vec<usize> = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.status != ToolStatus::Note)
            .map(|(i, _)| i)
            .collect();
        let Some(&newest) = calls.last() else {
            return;
        };
        let at = self
            .selected
            .and_then(|s| calls.iter().position(|&i| i == s));
        let next = match at {
            None => newest,
            Some(p) => {
                let p = (p as isize + step).clamp(0, calls.len() as isize - 1) as usize;
                calls.get(p).copied().unwrap_or(newest)
            }
        };
        self.selected = Some(next);
        // Keep the selection in view: the panel shows the newest rows above `scroll`.
        let from_bottom = self.entries.len() - 1 - next;
        if from_bottom < self.scroll {
            self.scroll = from_bottom;
        }
    }

    /// The selected entry.
    pub fn selected_entry(&self) -> Option<&ToolEntry> {
        self.selected.and_then(|i| self.entries.get(i))
    }

    /// Scrolls towards older calls.
    pub fn scroll_up(&mut self, n: usize) {
        self.scroll = (self.scroll + n).min(self.entries.len().saturating_sub(1));
    }

    /// Scrolls towards newer calls.
    pub fn scroll_down(&mut self, n: usize) {
        self.scroll = self.scroll.saturating_sub(n);
    }

    /// Rows the plan checklist takes at the top of the panel's `inner` area: at most half of
    /// it when there are calls to show.
    fn plan_rows(&self, inner: Rect) -> u16 {
        if self.plans.is_empty() {
            return 0;
        }
        if self.entries.is_empty() {
            return self
                .plans
                .lines(inner.width as usize, inner.height as usize)
                .len() as u16;
        }
        // The calls keep up to half the panel; the checklist and its rule line take the rest.
        let calls = (self.entries.len() as u16).min(inner.height / 2).max(1);
        let share = inner.height.saturating_sub(calls + 1);
        let lines = self.plans.lines(inner.width as usize, share as usize).len() as u16;
        if lines == 0 { 0 } else { lines + 1 }
    }

    /// The entry drawn on screen row `y` when the panel was drawn in `area` (below the
    /// checklist, when there is one).
    pub fn entry_at(&self, area: Rect, y: u16) -> Option<&ToolEntry> {
        let inner = Rect {
            x: area.x + 1,
            y: area.y + 1,
            width: area.width.saturating_sub(2),
            height: area.height.saturating_sub(2),
        };
        let plans = self.plan_rows(inner);
        let top = inner.y + plans;
        let height = inner.height.saturating_sub(plans) as usize;
        if y < top || (y - top) as usize >= height {
            return None;
        }
        let end = self.entries.len().saturating_sub(self.scroll);
        let start = end.saturating_sub(height);
        self.entries.get(start..end)?.get((y - top) as usize)
    }

    /// `running`, and from a second on how long it has run at the last tick: `running 12s`.
    fn running(&self, entry: &ToolEntry) -> String {
        let elapsed = entry
            .started
            .zip(self.now)
            .map(|(started, now)| now.saturating_duration_since(started));
        match elapsed {
            Some(d) if d.as_secs() > 0 => format!("running {}", format_elapsed(d)),
            _ => "running".to_string(),
        }
    }

    fn line(&self, entry: &ToolEntry, width: usize) -> Line<'static> {
        let (icon, icon_style) = match &entry.status {
            ToolStatus::AwaitingApproval => ("?", Style::new().fg(Color::LightYellow)),
            ToolStatus::Receiving(_) => (spinner_frame(self.spinner), Style::new().fg(Color::Cyan)),
            ToolStatus::Running => (spinner_frame(self.spinner), Style::new().fg(Color::Yellow)),
            ToolStatus::Ok => ("✓", Style::new().fg(Color::Green)),
            ToolStatus::Failed(_) => ("✗", Style::new().fg(Color::Red)),
            ToolStatus::Note => ("⚠", Style::new().fg(Color::Yellow)),
        };
        let tail = match (&entry.status, entry.duration, entry.chars) {
            _ if entry.tokens.is_some() => {
                let (input, output) = entry.tokens.unwrap_or_default();
                let state = match (&entry.status, entry.duration) {
                    (ToolStatus::Running, _) => self.running(entry),
                    (ToolStatus::Failed(e), _) if e == "cancelled" => "cancelled".to_string(),
                    (ToolStatus::Failed(e), Some(d)) => format!("{e} {}", format_duration(d)),
                    (_, Some(d)) => format_duration(d),
                    _ => String::new(),
                };
                format!("{}↑ {}↓ {state}", compact(input), compact(output))
            }
            (ToolStatus::AwaitingApproval, _, _) => "awaiting approval".to_string(),
            (ToolStatus::Running, _, _) => self.running(entry),
            (ToolStatus::Receiving(bytes), _, _) => format!("receiving {}B", compact(*bytes)),
            (ToolStatus::Note, _, _) => String::new(),
            (ToolStatus::Failed(e), _, _) if e == "cancelled" => "cancelled".to_string(),
            (_, Some(d), Some(c)) => {
                let saved = if entry.saved_path.is_some() {
                    " 💾"
                } else {
                    ""
                };
                format!("{} {}{saved}", format_duration(d), compact(c))
            }
            _ => String::new(),
        };
        let name = entry.name.clone();
        let indent = if entry.depth > 0 { "  " } else { "" };
        let fixed = indent.width() + 2 + name.width() + 1 + tail.width() + 1;
        // One column kept free between the summary and the tail.
        let room = width.saturating_sub(fixed + 1);
        let summary = if room >= 2 {
            truncate(&entry.summary, room)
        } else {
            String::new()
        };
        let pad = width.saturating_sub(fixed + summary.width());
        let name_style = if entry.tokens.is_some() {
            Style::new()
                .fg(Color::LightMagenta)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        };
        Line::from(vec![
            Span::raw(indent),
            Span::styled(format!("{icon} "), icon_style),
            Span::styled(name, name_style),
            Span::raw(" "),
            Span::styled(summary, Style::new().fg(Color::Gray)),
            Span::raw(" ".repeat(pad)),
            Span::styled(tail, Style::new().fg(Color::DarkGray)),
            Span::raw(" "),
        ])
    }
}

impl Widget for &ToolPanel {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let calls = self
            .entries
            .iter()
            .filter(|e| e.status != ToolStatus::Note && e.tokens.is_none())
            .count();
        let title = format!(" Tools ({calls}) ");
        let block = Block::new()
            .borders(Borders::ALL)
            .border_style(Style::new().fg(Color::DarkGray))
            .title(Span::styled(title, Style::new().fg(Color::LightBlue)));
        let mut inner = block.inner(area);
        block.render(area, buf);
        if inner.height == 0 || inner.width == 0 {
            return;
        }
        let used = self.plan_rows(inner);
        if used > 0 {
            let rule = usize::from(!self.entries.is_empty());
            let lines = self.plans.lines(inner.width as usize, used as usize - rule);
            for (row, line) in lines.iter().enumerate() {
                buf.set_line(inner.x, inner.y + row as u16, line, inner.width);
            }
            // A rule between the checklist and the calls.
            if lines.len() < used as usize {
                buf.set_string(
                    inner.x,
                    inner.y + lines.len() as u16,
                    "─".repeat(inner.width as usize),
                    Style::new().fg(Color::DarkGray),
                );
            }
            inner.y += used;
            inner.height -= used;
            if self.entries.is_empty() || inner.height == 0 {
                return;
            }
        }
        if self.entries.is_empty() {
            buf.set_string(
                inner.x,
                inner.y,
                truncate("no tool calls yet", inner.width as usize),
                Style::new().fg(Color::DarkGray),
            );
            return;
        }
        let height = inner.height as usize;
        let end = self.entries.len().saturating_sub(self.scroll);
        let start = end.saturating_sub(height);
        for (row, entry) in self.entries.iter().take(end).skip(start).enumerate() {
            let mut line = self.line(entry, inner.width as usize);
            if self.selected == Some(start + row) {
                line = line.patch_style(Style::new().add_modifier(Modifier::REVERSED));
            }
            buf.set_line(inner.x, inner.y + row as u16, &line, inner.width);
        }
    }
}

/// `12ms`, `1.4s`, `2m03s`.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}m{:02}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

/// Whole seconds of a running call: `12s`, `2m03s` (a tenth of a second would change every
/// frame).
pub fn format_elapsed(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s}s")
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// The argument a user recognises a call by: the path, URL, query or command.
pub fn summarize_args(args: &serde_json::Value) -> String {
    const KEYS: [&str; 8] = [
        "file", "path", "url", "query", "cmd", "term", "dir", "action",
    ];
    let Some(obj) = args.as_object() else {
        return String::new();
    };
    // `update_plan`: how far the plan is (the checklist above the calls shows the steps).
    if let Some(plan) = obj.get("plan").and_then(|p| p.as_array()) {
        let done = plan
            .iter()
            .filter(|s| s.get("status").and_then(|s| s.as_str()) == Some("completed"))
            .count();
        return format!("{done}/{} steps done", plan.len());
    }
    // `dispatch`: the agents it runs, in task order.
    if let Some(tasks) = obj.get("tasks").and_then(|t| t.as_array()) {
        let agents: Vec<&str> = tasks
            .iter()
            .filter_map(|t| t.get("agent").and_then(|a| a.as_str()))
            .collect();
        return format!("{} tasks: {}", tasks.len(), agents.join(", "));
    }
    for key in KEYS {
        if let Some(v) = obj.get(key).and_then(|v| v.as_str()) {
            return v.replace('\n', " ");
        }
    }
    obj.iter()
        .next()
        .map(|(k, v)| format!("{k}={}", v.to_string().replace('\n', " ")))
        .unwrap_or_default()
}
