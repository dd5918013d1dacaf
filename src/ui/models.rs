//! `/model`: a picker over the models chatcli knows, the current provider's first, each with its
//! context window and price, narrowed by fuzzy typing; Enter switches, Esc closes.
//!
//! The list comes from the front end (`session::models`: the provider's own list, asked at most
//! once a day, merged with the price catalog); the picker never asks the network itself. The
//! provider's listed models come first, then the catalog's of the same provider, then the rest. A model typed with
//! `/model ID` that the list does not hold is switched to all the same, with a warning: the
//! provider, not the catalog, decides what it serves.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph, Widget};

use super::help::{centered, overlay_frame};
use crate::session::models::ModelList;

pub use crate::session::models::{ModelEntry, provider_of};
use crate::session::models::{price_text, window_text};

/// The picker's state: what is typed and which row is selected.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelPicker {
    pub query: String,
    pub selected: usize,
}

/// What a key did to the picker.
#[derive(Debug, Clone, PartialEq)]
pub enum PickerKey {
    /// Stay open.
    Stay,
    /// Close without switching.
    Close,
    /// Switch to this model.
    Choose(String),
}

impl ModelPicker {
    /// The entries matching the query: what the provider lists, then the catalog's models of
    /// the current provider, then the rest, each group best match first (list order for an
    /// empty query).
    pub fn visible<'a>(&self, entries: &'a [ModelEntry], provider: &str) -> Vec<&'a ModelEntry> {
        let group = |e: &ModelEntry| match (e.listed, e.provider == provider) {
            (true, _) => 0u8,
            (false, true) => 1,
            (false, false) => 2,
        };
        let mut scored: Vec<(u8, u32, usize, &ModelEntry)> = if self.query.is_empty() {
            entries
                .iter()
                .enumerate()
                .map(|(i, e)| (group(e), 0, i, e))
                .collect()
        } else {
            let mut matcher = Matcher::new(Config::DEFAULT);
            let pattern = Pattern::parse(&self.query, CaseMatching::Ignore, Normalization::Smart);
            let mut buf = Vec::new();
            entries
                .iter()
                .enumerate()
                .filter_map(|(i, e)| {
                    pattern
                        .score(Utf32Str::new(&e.id, &mut buf), &mut matcher)
                        .map(|s| (group(e), u32::MAX - s, i, e))
                })
                .collect()
        };
        scored.sort_by_key(|(group, score, index, _)| (*group, *score, *index));
        scored.into_iter().map(|(_, _, _, e)| e).collect()
    }

    /// Handles a key over `entries`.
    pub fn handle_key(
        &mut self,
        key: KeyEvent,
        entries: &[ModelEntry],
        provider: &str,
    ) -> PickerKey {
        let count = self.visible(entries, provider).len();
        match key.code {
            KeyCode::Esc => return PickerKey::Close,
            KeyCode::Enter => {
                let visible = self.visible(entries, provider);
                return match visible.get(self.selected) {
                    Some(entry) => PickerKey::Choose(entry.id.clone()),
                    // Nothing matches: the typed id itself, as `/model ID` would take it.
                    None if !self.query.trim().is_empty() => {
                        PickerKey::Choose(self.query.trim().to_string())
                    }
                    None => PickerKey::Stay,
                };
            }
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down => self.selected = (self.selected + 1).min(count.saturating_sub(1)),
            KeyCode::Backspace => {
                self.query.pop();
                self.selected = 0;
            }
            KeyCode::Char(c)
                if !key
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                self.query.push(c);
                self.selected = 0;
            }
            _ => {}
        }
        PickerKey::Stay
    }
}

/// Draws the picker over `area`: the filter line, where the list came from, then the rows.
pub fn render(
    picker: &ModelPicker,
    list: &ModelList,
    provider: &str,
    current: &str,
    area: Rect,
    buf: &mut Buffer,
) {
    let entries = &list.entries;
    let width = 100.min(area.width);
    let height = area.height.saturating_sub(2).clamp(6, 30).min(area.height);
    let rect = centered(area, width, height);
    Clear.render(rect, buf);
    let visible = picker.visible(entries, provider);
    let rows = (height as usize).saturating_sub(5).max(1);
    let start = picker.selected.saturating_sub(rows.saturating_sub(1));
    let id_width = (width as usize).saturating_sub(50).clamp(14, 44);
    let mut lines = vec![
        Line::styled(
            format!(
                "filter: {}▏  (type to narrow, ↑↓, Enter switches)",
                picker.query
            ),
            Style::new().fg(Color::Yellow),
        ),
        Line::styled(
            super::text::truncate(&list.note, (width as usize).saturating_sub(2)),
            Style::new().fg(Color::DarkGray),
        ),
        Line::styled(
            format!(
                "  {:<id_width$} {:>7}  {:<18} {}",
                "model", "window", "$/Mtok in / out", "provider"
            ),
            Style::new().fg(Color::DarkGray),
        ),
    ];
    if visible.is_empty() {
        lines.push(Line::raw(format!(
            "  no known model matches; Enter switches to \"{}\" anyway (the provider decides)",
            picker.query.trim()
        )));
    }
    for (i, entry) in visible.iter().enumerate().skip(start).take(rows) {
        let mark = if entry.id == current { "▸ " } else { "  " };
        let text = format!(
            "{mark}{:<id_width$} {:>7}  {:<18} {}",
            super::text::truncate(&entry.id, id_width),
            window_text(entry.window),
            price_text(entry.price),
            if entry.listed {
                format!("{} listed", entry.provider)
            } else {
                entry.provider.clone()
            }
        );
        let style = if i == picker.selected {
            Style::new().fg(Color::Black).bg(Color::LightBlue)
        } else if entry.listed || entry.provider == provider {
            Style::new().add_modifier(Modifier::BOLD)
        } else {
            Style::new()
        };
        lines.push(Line::styled(text, style));
    }
    let title = format!(" Models · now {provider} · {current} · Esc to close ");
    Paragraph::new(lines)
        .block(overlay_frame(&title, Color::LightBlue))
        .render(rect, buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, provider: &str) -> ModelEntry {
        ModelEntry {
            id: id.into(),
            provider: provider.into(),
            window: Some(200_000),
            price: Some((3.0, 15.0)),
            listed: false,
        }
    }

    #[test]
    fn the_current_providers_models_come_first_and_typing_narrows() {
        let entries = vec![
            entry("gpt-4.1", "openai"),
            entry("claude-sonnet-4-5", "anthropic"),
            entry("gpt-4.1-mini", "openai"),
            entry("claude-haiku-4-5", "anthropic"),
        ];
        let mut picker = ModelPicker::default();
        let ids: Vec<&str> = picker
            .visible(&entries, "anthropic")
            .iter()
            .map(|e| e.id.as_str())
            .collect();
        assert_eq!(
            ids,
            vec![
                "claude-sonnet-4-5",
                "claude-haiku-4-5",
                "gpt-4.1",
                "gpt-4.1-mini"
            ]
        );
        for c in "mini".chars() {
            picker.handle_key(KeyEvent::from(KeyCode::Char(c)), &entries, "anthropic");
        }
        assert_eq!(
            picker.handle_key(KeyEvent::from(KeyCode::Enter), &entries, "anthropic"),
            PickerKey::Choose("gpt-4.1-mini".into())
        );
    }
}
