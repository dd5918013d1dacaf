//! The saved-files browser (Ctrl+O, `/files`) and its pager: files the session saved instead of
//! inlining them into the conversation, newest first, with size, source URL and time.
//!
//! The list comes from tool results that reported a `saved_path` (with the URL of their call).
//! Enter opens a file in a pager: PageUp/PageDown, arrows, Home/End, `/` to search (Enter finds,
//! `n` finds the next), `q` or Esc to go back.

// Saved pages and files: no index that could panic on them (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use std::path::PathBuf;
use std::time::SystemTime;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

use super::help::{centered, overlay_frame};
use super::text::truncate;

/// Bytes of a file the pager loads at most.
const PAGER_CAP: u64 = 5 * 1024 * 1024;

/// One saved file.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedFile {
    pub path: String,
    pub source: String,
    pub saved_at: SystemTime,
}

/// A file open in the pager.
#[derive(Debug, Clone, PartialEq)]
pub struct Pager {
    pub path: String,
    pub lines: Vec<String>,
    pub top: usize,
    /// The search being typed after `/`.
    pub typing: Option<String>,
    /// The last search, for `n`.
    pub query: Option<String>,
    pub status: String,
    /// Lines to colour as a diff (same length as `lines`, or empty for none).
    pub diff_lines: Vec<bool>,
}

impl Pager {
    /// Loads a file (up to 5 MB, invalid UTF-8 replaced).
    pub fn open(path: &str) -> Pager {
        let (lines, status) = match load(path) {
            Ok(text) => (
                text.lines().map(str::to_string).collect::<Vec<_>>(),
                String::new(),
            ),
            Err(e) => (Vec::new(), format!("cannot open {path}: {e}")),
        };
        Pager {
            path: path.to_string(),
            lines,
            top: 0,
            typing: None,
            query: None,
            status,
            diff_lines: Vec::new(),
        }
    }

    /// A pager over text that is not a file (the transcript of tool calls), titled `title`;
    /// `diff_lines` marks the lines to colour as a diff.
    pub fn text(title: &str, lines: Vec<String>, diff_lines: Vec<bool>) -> Pager {
        Pager {
            path: title.to_string(),
            lines,
            top: 0,
            typing: None,
            query: None,
            status: String::new(),
            diff_lines,
        }
    }

    fn find_next(&mut self, from: usize) {
        let Some(query) = self.query.clone().filter(|q| !q.is_empty()) else {
            return;
        };
        let needle = query.to_lowercase();
        // Forward only: at the last match the pager says so instead of wrapping silently.
        let hit = self
            .lines
            .iter()
            .enumerate()
            .skip(from)
            .find(|(_, line)| line.to_lowercase().contains(&needle))
            .map(|(i, _)| i);
        match hit {
            Some(i) => {
                self.top = i;
                let count = self
                    .lines
                    .iter()
                    .filter(|l| l.to_lowercase().contains(&needle))
                    .count();
                self.status = format!("/{query}: line {} ({count} matching lines; n next)", i + 1);
            }
            None if from > 0 => {
                self.status = format!("/{query}: no more matches below (g goes to the top)")
            }
            None => self.status = format!("/{query}: not found"),
        }
    }

    /// Handles a key; returns false when the pager should close.
    pub fn handle_key(&mut self, key: KeyEvent, page: usize) -> bool {
        if let Some(typing) = self.typing.as_mut() {
            match key.code {
                KeyCode::Enter => {
                    self.query = self.typing.take();
                    self.find_next(self.top);
                }
                KeyCode::Esc => self.typing = None,
                KeyCode::Backspace => {
                    typing.pop();
                }
                KeyCode::Char(c) => typing.push(c),
                _ => {}
            }
            return true;
        }
        let last = self.lines.len().saturating_sub(1);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return false,
            KeyCode::Char('/') => self.typing = Some(String::new()),
            KeyCode::Char('n') => self.find_next(self.top + 1),
            KeyCode::PageDown | KeyCode::Char(' ') => self.top = (self.top + page).min(last),
            KeyCode::PageUp => self.top = self.top.saturating_sub(page),
            KeyCode::Down | KeyCode::Char('j') => self.top = (self.top + 1).min(last),
            KeyCode::Up | KeyCode::Char('k') => self.top = self.top.saturating_sub(1),
            KeyCode::Home | KeyCode::Char('g') => self.top = 0,
            KeyCode::End | KeyCode::Char('G') => self.top = last,
            _ => {}
        }
        true
    }
}

fn load(path: &str) -> std::io::Result<String> {
    // A saved file is chatcli's own, in the scratch folder: read through no link planted at its
    // path, never waiting on a FIFO, at most `PAGER_CAP` bytes.
    let read = crate::files::read_bounded(std::path::Path::new(path), PAGER_CAP)?;
    Ok(String::from_utf8_lossy(&read.bytes).into_owned())
}

/// The browser: the list and, when one is open, the pager.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FilesView {
    pub selected: usize,
    pub pager: Option<Pager>,
}

impl FilesView {
    /// Handles a key; returns false when the browser should close.
    pub fn handle_key(&mut self, key: KeyEvent, files: &[SavedFile], page: usize) -> bool {
        if let Some(pager) = self.pager.as_mut() {
            if !pager.handle_key(key, page) {
                self.pager = None;
            }
            return true;
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return false,
            KeyCode::Down | KeyCode::Char('j') => {
                self.selected = (self.selected + 1).min(files.len().saturating_sub(1))
            }
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Enter => {
                if let Some(file) = newest_first(files).get(self.selected) {
                    self.pager = Some(Pager::open(&file.path));
                }
            }
            _ => {}
        }
        true
    }
}

fn newest_first(files: &[SavedFile]) -> Vec<&SavedFile> {
    files.iter().rev().collect()
}

fn size_of(path: &str) -> String {
    match crate::files::metadata(&PathBuf::from(path)) {
        Ok(meta) => {
            let bytes = meta.len();
            if bytes < 1024 {
                format!("{bytes} B")
            } else if bytes < 1024 * 1024 {
                format!("{:.1} KB", bytes as f64 / 1024.0)
            } else {
                format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
            }
        }
        Err(_) => "missing".to_string(),
    }
}

fn clock(time: SystemTime) -> String {
    let secs = time
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let seconds = secs % 86_400;
    format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        (seconds % 3600) / 60,
        seconds % 60
    )
}

/// Draws the browser (or its pager) over `area`.
pub fn render(view: &FilesView, files: &[SavedFile], area: Rect, buf: &mut Buffer) {
    if let Some(pager) = &view.pager {
        render_pager(pager, area, buf);
        return;
    }
    let width = 90.min(area.width);
    let height = (files.len() as u16 + 6)
        .clamp(9, area.height.saturating_sub(2).max(9))
        .min(area.height);
    let rect = centered(area, width, height);
    Clear.render(rect, buf);
    let inner = width.saturating_sub(4) as usize;
    let lines: Vec<Line> = if files.is_empty() {
        vec![
            Line::styled(
                "No saved files in this session yet.",
                Style::new().fg(Color::Gray),
            ),
            Line::default(),
            Line::styled(
                "When web_fetch gets a page larger than CHATCLI_WEBFETCH_AUTOSAVE_BYTES, the whole text is saved here and the model gets a preview and the path instead of the page.",
                Style::new().fg(Color::DarkGray),
            ),
        ]
    } else {
        let mut lines: Vec<Line> = newest_first(files)
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let style = if i == view.selected {
                    Style::new().fg(Color::Black).bg(Color::LightBlue)
                } else {
                    Style::new()
                };
                let text = format!(
                    "{}  {:>9}  {}",
                    clock(f.saved_at),
                    size_of(&f.path),
                    f.source
                );
                Line::styled(truncate(&text, inner), style)
            })
            .collect();
        lines.push(Line::default());
        if let Some(file) = newest_first(files).get(view.selected) {
            lines.push(Line::styled(
                truncate(&file.path, inner),
                Style::new().fg(Color::DarkGray),
            ));
        }
        lines.push(Line::styled(
            "↑/↓ select · Enter open · Esc close",
            Style::new().fg(Color::DarkGray),
        ));
        lines
    };
    Paragraph::new(lines)
        .wrap(Wrap { trim: true })
        .block(overlay_frame(
            " Saved files · newest first ",
            Color::LightBlue,
        ))
        .render(rect, buf);
}

/// Draws a pager over the whole of `area`.
pub fn render_pager(pager: &Pager, area: Rect, buf: &mut Buffer) {
    let rect = area;
    Clear.render(rect, buf);
    let name = std::path::Path::new(&pager.path)
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let title = format!(
        " {name} · line {}/{} · / search, n next · q back ",
        (pager.top + 1).min(pager.lines.len().max(1)),
        pager.lines.len()
    );
    let body_rows = rect.height.saturating_sub(3) as usize;
    let number_width = pager.lines.len().max(1).to_string().len();
    let text_width = (rect.width as usize)
        .saturating_sub(2)
        .max(number_width + 2);
    let needle = pager
        .query
        .as_deref()
        .filter(|q| !q.is_empty())
        .map(str::to_lowercase);
    // Long lines wrap (nothing is cut with `…`): each continuation row keeps the gutter blank.
    let mut lines: Vec<Line> = Vec::with_capacity(body_rows);
    let mut shown_to = pager.top;
    for (i, l) in pager.lines.iter().enumerate().skip(pager.top) {
        if lines.len() >= body_rows {
            break;
        }
        let style = pager
            .diff_lines
            .get(i)
            .filter(|d| **d)
            .and_then(|_| super::text::diff_style(l))
            .unwrap_or_default();
        let mut spans = vec![Span::styled(
            format!("{:>number_width$} ", i + 1),
            Style::new().fg(Color::DarkGray),
        )];
        spans.extend(highlighted(l, needle.as_deref(), style));
        let wrapped = super::text::wrap_spans(&spans, text_width, number_width + 1);
        let room = body_rows - lines.len();
        lines.extend(wrapped.into_iter().take(room));
        shown_to = i + 1;
    }
    let title = if shown_to >= pager.lines.len() {
        format!("{title}· end ")
    } else {
        title
    };
    while lines.len() < body_rows {
        lines.push(Line::default());
    }
    let footer = match &pager.typing {
        Some(typing) => Line::styled(
            format!("/{typing}▏"),
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
        ),
        None => Line::styled(pager.status.clone(), Style::new().fg(Color::Yellow)),
    };
    lines.push(footer);
    Paragraph::new(lines)
        .block(overlay_frame(&title, Color::LightBlue))
        .render(rect, buf);
}

/// `line` as spans in `style`, with every case-insensitive match of `needle` reversed.
fn highlighted(line: &str, needle: Option<&str>, style: Style) -> Vec<Span<'static>> {
    let lower = line.to_lowercase();
    // Matches are found in the lowercase text; its byte offsets fit the line only when
    // lowercasing kept every length (it does for almost all text; otherwise no highlight).
    let Some(needle) = needle.filter(|_| lower.len() == line.len()) else {
        return vec![Span::styled(line.to_string(), style)];
    };
    let mut spans = Vec::new();
    let mut at = 0;
    for (start, found) in lower.match_indices(needle) {
        let end = start + found.len();
        let (Some(before), Some(hit)) = (line.get(at..start), line.get(start..end)) else {
            return vec![Span::styled(line.to_string(), style)];
        };
        spans.push(Span::styled(before.to_string(), style));
        spans.push(Span::styled(
            hit.to_string(),
            style.add_modifier(Modifier::REVERSED),
        ));
        at = end;
    }
    spans.push(Span::styled(
        line.get(at..).unwrap_or_default().to_string(),
        style,
    ));
    spans
}

/// The `/resume` picker: recent sessions, newest first, with their first prompt.
pub fn render_sessions(
    picker: Option<&(Vec<crate::session_log::SessionInfo>, usize)>,
    area: Rect,
    buf: &mut Buffer,
) {
    let width = 90.min(area.width);
    let sessions = picker.map(|(s, _)| s.as_slice()).unwrap_or_default();
    let selected = picker.map(|(_, i)| *i).unwrap_or(0);
    let height = (sessions.len() as u16 + 4).clamp(6, area.height);
    let rect = centered(area, width, height);
    Clear.render(rect, buf);
    let inner = width.saturating_sub(4) as usize;
    let mut lines: Vec<Line> = sessions
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let style = if i == selected {
                Style::new().fg(Color::Black).bg(Color::LightBlue)
            } else {
                Style::new()
            };
            Line::styled(
                truncate(
                    &format!("{}  {}", s.id, s.first_prompt.replace('\n', " ")),
                    inner,
                ),
                style,
            )
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::styled(
            "No saved sessions yet.",
            Style::new().fg(Color::Gray),
        ));
    }
    lines.push(Line::styled(
        "↑/↓ select · Enter resume · Esc close",
        Style::new().fg(Color::DarkGray),
    ));
    Paragraph::new(lines)
        .block(overlay_frame(" Resume a session ", Color::LightBlue))
        .render(rect, buf);
}
