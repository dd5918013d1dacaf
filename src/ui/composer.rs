//! The composer: a multi-line editor (ratatui-textarea) where prompts are written.
//!
//! Enter sends; Shift+Enter, Alt+Enter and Ctrl+J insert a newline (many terminals report
//! Shift+Enter as plain Enter unless keyboard enhancement is on, so Ctrl+J is the one that always
//! works). The composer grows with its wrapped text up to the rows the app allows (a third of the
//! screen). Invariants: the cursor only ever rests on a grapheme boundary (textarea counts chars,
//! so 👨‍👩‍👧 or a combining accent would otherwise be split), and a paste of more than
//! `PASTE_FOLD_LINES` lines shows as a `[pasted N lines]` placeholder while `expanded` gives the
//! text that is sent.

// Typed and pasted text: no index that could panic on it (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders, Widget};
use ratatui_textarea::{CursorMove, TextArea, WrapMode};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Text rows the composer grows to when the app sets no other limit.
pub const MAX_ROWS: u16 = 6;
/// A paste of more lines than this is folded into a placeholder.
pub const PASTE_FOLD_LINES: usize = 10;

/// What a key did to the composer.
#[derive(Debug, Clone, PartialEq)]
pub enum ComposerAction {
    /// The user sent this text (placeholders still folded; see `expanded`).
    Submit(String),
    /// The key was handled (or ignored); nothing to do.
    None,
}

/// The prompt editor.
pub struct Composer {
    textarea: TextArea<'static>,
    /// Folded pastes: (placeholder, full text).
    pastes: Vec<(String, String)>,
    /// Text rows the composer may grow to.
    pub max_rows: u16,
    /// A notice drawn on the composer's top border (working…, a transient message).
    pub notice: Option<(String, Color)>,
}

impl Default for Composer {
    fn default() -> Self {
        Composer {
            textarea: new_textarea(Vec::new()),
            pastes: Vec::new(),
            max_rows: MAX_ROWS,
            notice: None,
        }
    }
}

fn new_textarea(lines: Vec<String>) -> TextArea<'static> {
    let mut textarea = TextArea::new(lines);
    textarea.set_placeholder_text("Ask anything · Enter to send · / commands · @ files · F1 help");
    textarea.set_placeholder_style(Style::new().fg(Color::DarkGray));
    textarea.set_cursor_line_style(Style::new());
    textarea.set_wrap_mode(WrapMode::WordOrGlyph);
    textarea
}

impl Composer {
    /// Handles a key.
    pub fn handle_key(&mut self, key: KeyEvent) -> ComposerAction {
        let newline = matches!(key.code, KeyCode::Enter)
            && (key.modifiers.contains(KeyModifiers::SHIFT)
                || key.modifiers.contains(KeyModifiers::ALT))
            || (key.code == KeyCode::Char('j') && key.modifiers.contains(KeyModifiers::CONTROL));
        if newline {
            self.textarea.insert_newline();
            return ComposerAction::None;
        }
        if key.code == KeyCode::Enter && key.modifiers.is_empty() {
            let text = self.text();
            if text.trim().is_empty() {
                return ComposerAction::None;
            }
            return ComposerAction::Submit(text);
        }
        let plain = key.modifiers.is_empty() || key.modifiers == KeyModifiers::SHIFT;
        match key.code {
            KeyCode::Left if plain => self.move_graphemes(-1),
            KeyCode::Right if plain => self.move_graphemes(1),
            KeyCode::Backspace if plain => self.delete_grapheme(-1),
            KeyCode::Delete if plain => self.delete_grapheme(1),
            // Alt+letter is a shortcut, not text: an Esc glued to the next key must not type.
            KeyCode::Char(_) if key.modifiers.contains(KeyModifiers::ALT) => {}
            _ => {
                self.textarea.input(key);
                if matches!(key.code, KeyCode::Up | KeyCode::Down) {
                    self.snap_to_grapheme();
                }
            }
        }
        ComposerAction::None
    }

    /// The current line and the cursor's char index in it.
    fn line_and_col(&self) -> (usize, usize, &str) {
        let cursor = self.textarea.cursor();
        let line = self
            .textarea
            .lines()
            .get(cursor.0)
            .map(String::as_str)
            .unwrap_or_default();
        (cursor.0, cursor.1, line)
    }

    /// Char indices where graphemes of `line` start, and its length in chars.
    fn boundaries(line: &str) -> Vec<usize> {
        let mut out = Vec::new();
        let mut chars = 0;
        for g in line.graphemes(true) {
            out.push(chars);
            chars += g.chars().count();
        }
        out.push(chars);
        out
    }

    fn move_graphemes(&mut self, step: isize) {
        let (row, col, line) = self.line_and_col();
        let bounds = Self::boundaries(line);
        let target = if step < 0 {
            match bounds.iter().rev().find(|&&b| b < col) {
                Some(&b) => Some(b),
                None => {
                    // At the start of a line: to the end of the previous one.
                    self.textarea.move_cursor(CursorMove::Back);
                    return;
                }
            }
        } else {
            match bounds.iter().find(|&&b| b > col) {
                Some(&b) => Some(b),
                None => {
                    self.textarea.move_cursor(CursorMove::Forward);
                    return;
                }
            }
        };
        if let Some(col) = target {
            self.jump(row, col);
        }
    }

    fn delete_grapheme(&mut self, direction: isize) {
        let (_, col, line) = self.line_and_col();
        let bounds = Self::boundaries(line);
        if direction < 0 {
            match bounds.iter().rev().find(|&&b| b < col) {
                Some(&start) => {
                    for _ in start..col {
                        self.textarea.delete_char();
                    }
                }
                None => {
                    self.textarea.delete_char();
                }
            }
        } else {
            match bounds.iter().find(|&&b| b > col) {
                Some(&end) => {
                    for _ in col..end {
                        self.textarea.delete_next_char();
                    }
                }
                None => {
                    self.textarea.delete_next_char();
                }
            }
        }
    }

    /// After a vertical move, the column may sit inside a grapheme: move it to its start.
    fn snap_to_grapheme(&mut self) {
        let (row, col, line) = self.line_and_col();
        let bounds = Self::boundaries(line);
        if !bounds.contains(&col)
            && let Some(&b) = bounds.iter().rev().find(|&&b| b < col)
        {
            self.jump(row, b);
        }
    }

    fn jump(&mut self, row: usize, col: usize) {
        let row = u16::try_from(row).unwrap_or(u16::MAX);
        let col = u16::try_from(col).unwrap_or(u16::MAX);
        self.textarea.move_cursor(CursorMove::Jump(row, col));
    }

    /// The cursor as (row, column in chars).
    pub fn cursor(&self) -> (usize, usize) {
        let c = self.textarea.cursor();
        (c.0, c.1)
    }

    /// Whether the cursor is on the first line (Up walks history from there).
    pub fn on_first_line(&self) -> bool {
        self.textarea.cursor().0 == 0
    }

    /// Whether the cursor is on the last line (Down walks history from there).
    pub fn on_last_line(&self) -> bool {
        self.textarea.cursor().0 + 1 >= self.textarea.lines().len()
    }

    /// Inserts pasted text: up to `PASTE_FOLD_LINES` lines as they are, more as a placeholder.
    pub fn paste(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        let lines = text.lines().count();
        if lines <= PASTE_FOLD_LINES {
            self.textarea.insert_str(text);
            return;
        }
        let mut placeholder = format!("[pasted {lines} lines]");
        let mut n = 2;
        while self.pastes.iter().any(|(p, _)| *p == placeholder) {
            placeholder = format!("[pasted {lines} lines #{n}]");
            n += 1;
        }
        self.textarea.insert_str(&placeholder);
        self.pastes.push((placeholder, text));
    }

    /// The text as shown (folded pastes as their placeholders).
    pub fn text(&self) -> String {
        self.textarea.lines().join("\n")
    }

    /// `text` with every placeholder of this composer's folded pastes replaced by what was pasted.
    pub fn expanded(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (placeholder, full) in &self.pastes {
            out = out.replacen(placeholder.as_str(), full, 1);
        }
        out
    }

    /// Replaces the whole text, cursor at the end.
    pub fn set_text(&mut self, text: &str) {
        self.textarea = new_textarea(text.split('\n').map(str::to_string).collect());
        self.textarea.move_cursor(CursorMove::Bottom);
        self.textarea.move_cursor(CursorMove::End);
    }

    /// The word the cursor ends (from the last whitespace before it), and the char column where
    /// it starts.
    pub fn word_at_cursor(&self) -> (usize, String) {
        let (_, col, line) = self.line_and_col();
        let before: Vec<char> = line.chars().take(col).collect();
        let start = before
            .iter()
            .rposition(|c| c.is_whitespace())
            .map_or(0, |i| i + 1);
        (start, before.iter().skip(start).collect())
    }

    /// Replaces the word the cursor ends with `text`.
    pub fn replace_word_at_cursor(&mut self, text: &str) {
        let (start, word) = self.word_at_cursor();
        let (row, _, _) = self.line_and_col();
        self.jump(row, start + word.chars().count());
        for _ in 0..word.chars().count() {
            self.textarea.delete_char();
        }
        self.textarea.insert_str(text);
    }

    /// Empties the composer (after a prompt was accepted).
    pub fn clear(&mut self) {
        self.textarea = new_textarea(Vec::new());
        self.pastes.clear();
    }

    /// Whether nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.textarea.is_empty()
    }

    /// Rows the composer needs at `width` columns, borders included: its wrapped text, at least
    /// one row and at most `max_rows`.
    pub fn height(&self, width: u16) -> u16 {
        let inner = width.max(1) as usize;
        let rows: usize = self
            .textarea
            .lines()
            .iter()
            .map(|l| l.width().max(1).div_ceil(inner))
            .sum();
        (rows as u16).clamp(1, self.max_rows.max(1)) + 2
    }
}

impl Widget for &Composer {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let mut block = Block::new()
            .borders(Borders::TOP | Borders::BOTTOM)
            .border_style(Style::new().fg(Color::DarkGray))
            .title(Span::styled(
                " ❯ ",
                Style::new()
                    .fg(Color::LightGreen)
                    .add_modifier(Modifier::BOLD),
            ));
        if let Some((text, color)) = &self.notice {
            let room = area.width.saturating_sub(6) as usize;
            block = block.title_top(
                ratatui::text::Line::from(Span::styled(
                    super::text::truncate(&format!(" {text} "), room),
                    Style::new().fg(*color),
                ))
                .right_aligned(),
            );
        }
        let inner = block.inner(area);
        block.render(area, buf);
        self.textarea.render(inner, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn the_cursor_never_splits_a_grapheme() {
        let mut c = Composer::default();
        c.set_text("a👨‍👩‍👧b");
        c.handle_key(key(KeyCode::Left));
        c.handle_key(key(KeyCode::Left));
        assert_eq!(c.cursor(), (0, 1), "one step over the whole family");
        c.handle_key(key(KeyCode::Char('x')));
        assert_eq!(c.text(), "ax👨‍👩‍👧b");
        c.handle_key(key(KeyCode::Right));
        c.handle_key(key(KeyCode::Backspace));
        assert_eq!(c.text(), "axb", "backspace removes the whole grapheme");
        c.set_text("e\u{301}t\u{e9}");
        c.handle_key(key(KeyCode::Left));
        c.handle_key(key(KeyCode::Left));
        c.handle_key(key(KeyCode::Delete));
        assert_eq!(c.text(), "e\u{301}\u{e9}");
        c.set_text("日本語");
        c.handle_key(key(KeyCode::Left));
        c.handle_key(key(KeyCode::Char('x')));
        assert_eq!(c.text(), "日本x語");
    }

    #[test]
    fn a_long_paste_is_folded_and_sent_whole() {
        let mut c = Composer::default();
        let body: String = (1..=300).map(|i| format!("line {i}\n")).collect();
        c.handle_key(key(KeyCode::Char('x')));
        c.paste(&body);
        assert_eq!(c.text(), "x[pasted 300 lines]");
        assert_eq!(c.expanded(&c.text()), format!("x{body}"));
        c.paste("short\npaste");
        assert!(c.text().ends_with("short\npaste"));
    }

    #[test]
    fn the_composer_grows_with_wrapped_text_up_to_its_limit() {
        let mut c = Composer {
            max_rows: 8,
            ..Composer::default()
        };
        c.set_text(&"word ".repeat(40));
        assert_eq!(c.height(50), 4 + 2, "200 columns wrap to 4 rows at 50");
        c.max_rows = 3;
        assert_eq!(c.height(50), 3 + 2);
    }
}
