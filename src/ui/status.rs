//! The status bar: mode, provider and model, the session meter, cache share, cost, context used.
//!
//! The numbers are the UI's copy of what `usage` and `cost` events said; nothing here computes
//! prices. Mode, model, `N↑ M↓`, cache share and cost are always drawn, first; the permission
//! mode, the working directory and git branch follow when there is room. Notices ("working…",
//! "press Ctrl+C again to quit") live on the composer's border, so they never hide the meters.

use std::time::Instant;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use unicode_width::UnicodeWidthStr;

use super::text::{meter, truncate};
use crate::protocol::{Mode, Permission, UsageFigures};

/// What the status bar shows.
#[derive(Debug, Clone)]
pub struct StatusBar {
    pub mode: Mode,
    pub provider: String,
    pub model: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Output bytes streamed since the last `usage` (text, reasoning, tool arguments): shown
    /// as an estimate on `↓` until the usage replaces it.
    pub streamed_bytes: u64,
    pub cache_read_tokens: u64,
    /// `None` once any request had no known price.
    pub cost_usd: Option<f64>,
    /// The price is estimated from the model's family: the cost is marked `est.`.
    pub price_estimated: bool,
    pub context_window: u64,
    pub last_input: u64,
    pub busy: bool,
    /// A transient notice and when it expires (drawn by the app on the composer's border).
    pub notice: Option<(String, Instant)>,
    /// A retry waiting: when it is sent, and what to say after the seconds left.
    pub retry: Option<(Instant, String)>,
    /// What tools may do without asking.
    pub permission: Permission,
    /// The working directory's name and git branch (`project ⎇ main`).
    pub workspace: String,
    /// `sandbox off` or `sandbox not enforced` when commands run unconfined; empty otherwise.
    pub sandbox: String,
    /// When the prompt cache's entries lapse, as the last `cache_warm` event said.
    pub cache_until: Option<Instant>,
}

impl StatusBar {
    /// A status bar for a session that has not sent anything yet.
    pub fn new(mode: Mode, provider: String, model: String) -> Self {
        StatusBar {
            mode,
            provider,
            model,
            input_tokens: 0,
            output_tokens: 0,
            streamed_bytes: 0,
            cache_read_tokens: 0,
            cost_usd: Some(0.0),
            price_estimated: false,
            context_window: 0,
            last_input: 0,
            busy: false,
            notice: None,
            retry: None,
            permission: Permission::Ask,
            sandbox: String::new(),
            workspace: String::new(),
            cache_until: None,
        }
    }

    /// Adds one request's usage.
    pub fn add_usage(&mut self, usage: &UsageFigures, cost: Option<f64>) {
        self.input_tokens += usage.input_tokens;
        self.output_tokens += usage.output_tokens;
        self.streamed_bytes = 0;
        self.cache_read_tokens += usage.cache_read_tokens;
        self.last_input = usage.input_tokens;
        self.cost_usd = match (self.cost_usd, cost) {
            (Some(total), Some(c)) => Some(total + c),
            _ => None,
        };
    }

    /// Output arrived that no usage counts yet.
    pub fn streamed(&mut self, bytes: usize) {
        self.streamed_bytes += bytes as u64;
    }

    /// Output tokens: the reported ones plus an estimate of what is streaming now.
    pub fn output_shown(&self) -> u64 {
        self.output_tokens + crate::tokens::rough(self.streamed_bytes as usize)
    }

    /// Share of all input read from the cache, in percent.
    pub fn cache_percent(&self) -> u64 {
        (self.cache_read_tokens * 100)
            .checked_div(self.input_tokens)
            .unwrap_or(0)
    }

    /// The cache's time left while idle, as drawn (`warm 4m`, `warm <1m`, `cold`), and when
    /// the label changes next; `None` while a request runs or no lifetime is known.
    pub fn cache_timer(&self, now: Instant) -> Option<(String, Option<Instant>)> {
        let until = self.cache_until.filter(|_| !self.busy)?;
        let left = until.saturating_duration_since(now).as_secs_f64();
        if left <= 0.0 {
            return Some(("cold".into(), None));
        }
        if left < 60.0 {
            return Some(("warm <1m".into(), Some(until)));
        }
        let minutes = (left / 60.0).ceil() as u64;
        let next = until - std::time::Duration::from_secs((minutes - 1) * 60);
        Some((format!("warm {minutes}m"), Some(next)))
    }

    /// Context used by the last request, in percent of the window.
    pub fn context_percent(&self) -> u64 {
        (self.last_input * 100)
            .checked_div(self.context_window)
            .unwrap_or(0)
    }

    /// `provider · model`, or just the provider when they share a name (the demo).
    fn provider_text(&self) -> String {
        if self.provider.split_whitespace().next() == Some(self.model.as_str()) {
            self.provider.clone()
        } else {
            format!("{} · {}", self.provider, self.model)
        }
    }

    fn segments(&self) -> Vec<Span<'static>> {
        let sep = Span::styled(" │ ", Style::new().fg(Color::DarkGray));
        let cost = match self.cost_usd {
            Some(c) if self.price_estimated => format!("${c:.4} est."),
            Some(c) => format!("${c:.4}"),
            None => "cost unknown".to_string(),
        };
        vec![
            Span::styled(
                format!(" {} MODE ", self.mode.as_str().to_uppercase()),
                Style::new()
                    .fg(Color::Black)
                    .bg(mode_color(self.mode))
                    .add_modifier(Modifier::BOLD),
            ),
            sep.clone(),
            Span::styled(self.provider_text(), Style::new().fg(Color::Gray)),
            sep.clone(),
            Span::styled(
                meter(self.input_tokens, self.output_shown()),
                Style::new().fg(Color::Yellow),
            ),
            sep.clone(),
            Span::styled(
                match self.cache_timer(Instant::now()) {
                    Some((timer, _)) => format!("cache {}% · {timer}", self.cache_percent()),
                    None => format!("cache {}%", self.cache_percent()),
                },
                Style::new().fg(Color::Green),
            ),
            sep.clone(),
            Span::styled(cost, Style::new().fg(Color::LightMagenta)),
            sep,
            Span::styled(
                format!("ctx {}%", self.context_percent()),
                Style::new().fg(Color::Cyan),
            ),
        ]
    }
}

/// `project ⎇ main`: the working directory's name and the git branch of its project, when it has
/// one (read from `.git/HEAD`, no git process).
pub fn workspace_label(workspace: &std::path::Path) -> String {
    let name = workspace
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| workspace.display().to_string());
    let root = crate::project::project_root(workspace);
    // `.git/HEAD` holds one ref name (tens of bytes): 64 KiB is far above any real one. Read
    // through no link at HEAD itself, never waiting on a FIFO planted there.
    let branch = crate::files::read_bounded(&root.join(".git").join("HEAD"), 64 << 10)
        .ok()
        .and_then(|read| String::from_utf8(read.bytes).ok())
        .and_then(|head| {
            head.trim()
                .strip_prefix("ref: refs/heads/")
                .map(str::to_string)
                .or_else(|| head.get(..7).map(|h| format!("detached {h}")))
        });
    match branch {
        Some(branch) => format!("{name} ⎇ {branch}"),
        None => name,
    }
}

fn mode_color(mode: Mode) -> Color {
    match mode {
        Mode::Chat => Color::LightBlue,
        Mode::Agent => Color::LightGreen,
        Mode::Coder => Color::LightMagenta,
        Mode::Run => Color::LightYellow,
        Mode::Plan => Color::LightCyan,
    }
}

impl Widget for &StatusBar {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.height == 0 {
            return;
        }
        let line = Line::from(self.segments());
        buf.set_line(area.x, area.y, &line, area.width);
        let used = line.width() as u16;
        let mut right = Vec::new();
        if !self.sandbox.is_empty() {
            right.push(self.sandbox.clone());
        }
        if self.permission != Permission::Ask {
            right.push(format!("perm {}", self.permission));
        }
        if !self.workspace.is_empty() {
            right.push(self.workspace.clone());
        }
        let text = format!(" {} ", right.join(" │ "));
        if !right.is_empty() && used + text.width() as u16 + 1 < area.width {
            let x = area.x + area.width - text.width() as u16;
            buf.set_string(x, area.y, text, Style::new().fg(Color::DarkGray));
        } else if self.permission != Permission::Ask && used + 12 < area.width {
            // The permission mode matters more than the directory: keep it when one fits.
            let text = format!(" perm {} ", self.permission);
            let text = truncate(&text, (area.width - used - 1) as usize);
            let x = area.x + area.width - text.width() as u16;
            buf.set_string(x, area.y, text, Style::new().fg(Color::DarkGray));
        }
    }
}
