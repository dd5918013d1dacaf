//! The approval modal: a tool call that writes or executes waits here for the user's answer.
//!
//! Invariants: nothing the user approves is hidden, and only a deliberate key answers. The body
//! is the whole request, wrapped and never cut (a command in full, a write as a diff against the
//! file on disk or the new file line-numbered, a patch as its diff in context); when it does not
//! fit it scrolls and says how much is below.
//!
//! Typing is never an answer. `y` (allow once), `a` (allow always) and `n` (deny) answer only
//! when pressed on their own: the dialog has been on screen for `TYPE_AHEAD_GUARD`, no key came
//! in the `BURST_GAP` before, and none comes in the `BURST_GAP` after (the key is held until
//! then, and `tick` decides). Printable keys that arrive as typing — a burst, or before the
//! dialog settled — are handed back (`ApprovalKey::Typed`) for the composer, so the sentence the
//! user was writing is kept whole. *Allow always* takes a second `a`, and the dialog says what it
//! will allow from then on. Esc denies at once (a deny is never harmful); Enter never answers.

// Keys typed during a dialog and the call it shows: no index that could panic on them (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget};

use super::help::{centered, overlay_frame};
use super::text::{diff_style, wrap_spans};
use crate::protocol::ApprovalDecision;

/// Keys that arrive this soon after the dialog is first drawn are typing, never an answer.
pub const TYPE_AHEAD_GUARD: Duration = Duration::from_millis(400);

/// Two keys closer than this are typing: an answer key needs this much quiet on both sides.
pub const BURST_GAP: Duration = Duration::from_millis(300);

/// A call waiting for approval.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingApproval {
    pub id: String,
    pub name: String,
    pub args: serde_json::Value,
    /// What the call would change (a diff, or the new file numbered), from the agent.
    pub preview: Option<String>,
    /// Body lines scrolled off the top.
    pub scroll: usize,
    /// When the dialog was first drawn; `None` until then (every key is discarded before).
    pub shown_at: Option<Instant>,
    /// Body rows visible in the last frame, for paging.
    pub page: usize,
    /// The sandbox the command will run under (`run_command`), shown under it.
    pub policy: Option<String>,
    /// The dispatched specialist that asks (`None`: the session's own loop).
    pub agent: Option<String>,
    /// The call's key in the tool panel when it is not `id` (a specialist's call).
    pub panel_key: Option<String>,
    /// When the last key reached the dialog.
    pub last_key_at: Option<Instant>,
    /// An answer key pressed after a quiet spell, waiting to see that no typing follows.
    pub held: Option<(KeyEvent, Instant)>,
    /// `a` was pressed once: a second `a` allows always.
    pub confirm_always: bool,
}

/// What a key did to the dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalKey {
    /// The user answered.
    Answer(ApprovalDecision),
    /// Scrolled, held or ignored: the dialog stays open.
    Stay,
    /// Keys that were typing, not answers: they belong to the composer, in order.
    Typed(Vec<KeyEvent>),
}

impl PendingApproval {
    /// A dialog for a call, not yet drawn.
    pub fn new(id: String, name: String, args: serde_json::Value, preview: Option<String>) -> Self {
        PendingApproval {
            id,
            name,
            args,
            preview,
            scroll: 0,
            shown_at: None,
            page: 1,
            policy: None,
            agent: None,
            panel_key: None,
            last_key_at: None,
            held: None,
            confirm_always: false,
        }
    }

    /// Handles a key at `now`: a scroll, a held answer, typing handed back, or Esc's deny.
    pub fn handle_key(&mut self, key: KeyEvent, now: Instant) -> ApprovalKey {
        use crossterm::event::KeyModifiers;
        let previous = self.last_key_at.replace(now);
        let settled = self
            .shown_at
            .is_some_and(|at| now.saturating_duration_since(at) >= TYPE_AHEAD_GUARD);
        let in_burst =
            !settled || previous.is_some_and(|p| now.saturating_duration_since(p) < BURST_GAP);
        let printable = matches!(key.code, KeyCode::Char(_))
            && !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        if printable {
            // A key right after a held one shows the held one was the start of a word.
            if in_burst || self.held.is_some() {
                let mut typed: Vec<KeyEvent> =
                    self.held.take().map(|(k, _)| k).into_iter().collect();
                typed.push(key);
                return ApprovalKey::Typed(typed);
            }
            let saves = self.confirm_always && matches!(key.code, KeyCode::Char('p' | 'u'));
            if saves || matches!(key.code, KeyCode::Char('y' | 'Y' | 'a' | 'A' | 'n' | 'N')) {
                self.held = Some((key, now));
                return ApprovalKey::Stay;
            }
            return ApprovalKey::Typed(vec![key]);
        }
        self.held = None;
        if key.code == KeyCode::Esc {
            return ApprovalKey::Answer(ApprovalDecision::Deny);
        }
        if in_burst {
            // The end of a sentence typed as the dialog appeared: editing keys go with it.
            return match key.code {
                KeyCode::Backspace => ApprovalKey::Typed(vec![key]),
                _ => ApprovalKey::Stay,
            };
        }
        let page = self.page.max(1);
        match key.code {
            KeyCode::Down => self.scroll += 1,
            KeyCode::Up => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::PageDown => self.scroll += page,
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(page),
            KeyCode::Home => self.scroll = 0,
            KeyCode::End => self.scroll = usize::MAX / 2,
            _ => {}
        }
        ApprovalKey::Stay
    }

    /// At `now`, the held answer key stands if nothing followed it within `BURST_GAP`.
    pub fn tick(&mut self, now: Instant) -> ApprovalKey {
        let Some((key, at)) = self.held else {
            return ApprovalKey::Stay;
        };
        if now.saturating_duration_since(at) < BURST_GAP {
            return ApprovalKey::Stay;
        }
        self.held = None;
        match key.code {
            KeyCode::Char('y' | 'Y') => ApprovalKey::Answer(ApprovalDecision::AllowOnce),
            KeyCode::Char('n' | 'N') => ApprovalKey::Answer(ApprovalDecision::Deny),
            KeyCode::Char('p') => ApprovalKey::Answer(ApprovalDecision::AllowAlwaysProject),
            KeyCode::Char('u') => ApprovalKey::Answer(ApprovalDecision::AllowAlwaysUser),
            _ if self.confirm_always => ApprovalKey::Answer(ApprovalDecision::AllowAlways),
            _ => {
                self.confirm_always = true;
                ApprovalKey::Stay
            }
        }
    }

    /// When `tick` has something to decide.
    pub fn wake_at(&self) -> Option<Instant> {
        self.held.map(|(_, at)| at + BURST_GAP)
    }

    /// The whole request as lines `width` columns wide: nothing is cut, long lines wrap.
    pub fn body(&self, width: usize) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        let plain = Style::new().fg(Color::Gray);
        let command = self
            .args
            .get("cmd")
            .and_then(|v| v.as_str())
            .filter(|_| self.name == "run_command");
        if let Some(cmd) = command {
            for (i, raw) in cmd.lines().enumerate() {
                let prefix = if i == 0 { "$ " } else { "  " };
                let spans = [
                    Span::styled(prefix, Style::new().fg(Color::DarkGray)),
                    Span::styled(raw.to_string(), Style::new().fg(Color::White)),
                ];
                lines.extend(wrap_spans(&spans, width, 2));
            }
            let rest = without(&self.args, "cmd");
            if !rest.is_empty() {
                lines.push(Line::default());
                lines.extend(json_lines(&rest, width, plain));
            }
            if let Some(policy) = &self.policy {
                lines.push(Line::default());
                let text = format!("sandbox: {policy}");
                let style = Style::new().fg(Color::DarkGray);
                lines.extend(wrap_spans(&[Span::styled(text, style)], width, 2));
            }
        } else if let Some(preview) = &self.preview {
            // The preview says what content, search and replace do; the rest is shown as is.
            let mut rest = without(&self.args, "content");
            rest.remove("search");
            rest.remove("replace");
            if !rest.is_empty() {
                lines.extend(json_lines(&rest, width, plain));
                lines.push(Line::default());
            }
            for raw in preview.lines() {
                let style = diff_style(raw).unwrap_or(plain);
                lines.extend(wrap_spans(
                    &[Span::styled(raw.to_string(), style)],
                    width,
                    0,
                ));
            }
        } else {
            let pretty = serde_json::to_string_pretty(&self.args).unwrap_or_default();
            for raw in pretty.lines() {
                lines.extend(wrap_spans(
                    &[Span::styled(raw.to_string(), plain)],
                    width,
                    2,
                ));
            }
        }
        lines
    }
}

/// The arguments without `key`, as a map.
fn without(args: &serde_json::Value, key: &str) -> serde_json::Map<String, serde_json::Value> {
    let mut map = args.as_object().cloned().unwrap_or_default();
    map.remove(key);
    map
}

fn json_lines(
    map: &serde_json::Map<String, serde_json::Value>,
    width: usize,
    style: Style,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for (key, value) in map {
        let value = match value {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let spans = [
            Span::styled(format!("{key}: "), Style::new().fg(Color::DarkGray)),
            Span::styled(value, style),
        ];
        lines.extend(wrap_spans(&spans, width, 2));
    }
    lines
}

/// Draws the modal for `pending` over `area`, recording when it was first shown and its page.
pub fn render(pending: &mut PendingApproval, area: Rect, buf: &mut Buffer) {
    if pending.shown_at.is_none() {
        pending.shown_at = Some(Instant::now());
    }
    let width = 100.min(area.width);
    let inner_width = width.saturating_sub(4) as usize;
    let body = pending.body(inner_width.max(1));
    // Title line + blank, body, blank + "more" line + keys lines + typing line, and the frame.
    let chrome = 2 + 5 + 2;
    let max_body = (area.height as usize).saturating_sub(chrome).max(1);
    let visible = body.len().min(max_body);
    let max_scroll = body.len().saturating_sub(visible);
    pending.scroll = pending.scroll.min(max_scroll);
    pending.page = visible.max(1);
    let below = body.len() - visible - pending.scroll;

    let mut lines = vec![title_line(pending), Line::default()];
    lines.extend(body.into_iter().skip(pending.scroll).take(visible));
    lines.push(Line::default());
    let dim = Style::new().fg(Color::DarkGray);
    lines.push(if below > 0 {
        Line::styled(format!("… {below} more lines (↓/PgDn to scroll)"), dim)
    } else if pending.scroll > 0 {
        Line::styled("(end; ↑/PgUp to scroll back)", dim)
    } else {
        Line::default()
    });
    lines.extend(wrap_spans(&keys_line(pending), inner_width.max(1), 0));
    lines.push(Line::styled(
        "typing goes to your prompt, not to this dialog",
        dim,
    ));
    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = centered(area, width, height);
    Clear.render(rect, buf);
    Paragraph::new(lines)
        .block(overlay_frame(" Approve tool call? ", Color::LightYellow))
        .render(rect, buf);
}

/// "The model wants to run NAME:" (or the specialist that asks).
fn title_line(pending: &PendingApproval) -> Line<'static> {
    let who = match &pending.agent {
        Some(agent) => format!("The {agent} agent wants to run "),
        None => "The model wants to run ".to_string(),
    };
    Line::from(vec![
        Span::raw(who),
        Span::styled(
            pending.name.clone(),
            Style::new()
                .fg(Color::LightYellow)
                .add_modifier(Modifier::BOLD),
        ),
        Span::raw(":"),
    ])
}

/// The keys that answer, before wrapping; after a first `a` only the confirmation.
fn keys_line(pending: &PendingApproval) -> Vec<Span<'static>> {
    let key = |k: &'static str| {
        Span::styled(
            k,
            Style::new()
                .fg(Color::LightCyan)
                .add_modifier(Modifier::BOLD),
        )
    };
    if pending.confirm_always {
        vec![
            Span::raw("Press "),
            key("[a]"),
            Span::raw(format!(
                " again to allow every {} call for the rest of this session without asking, ",
                pending.name
            )),
            key("[p]"),
            Span::raw(" to save a rule for calls like this one in the project's settings, "),
            key("[u]"),
            Span::raw(" in yours; "),
            key("[y]"),
            Span::raw(" once, "),
            key("[n]"),
            Span::raw(" deny"),
        ]
    } else {
        vec![
            key("[y]"),
            Span::raw(" allow once   "),
            key("[a]"),
            Span::raw(" allow always (press twice)   "),
            key("[n]"),
            Span::raw("/"),
            key("Esc"),
            Span::raw(" deny"),
        ]
    }
}
