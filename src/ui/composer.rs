//! The composer: a multi-line editor (ratatui-textarea) where prompts are written.
//!
//! Enter sends; Shift+Enter, Alt+Enter and Ctrl+J insert a newline (many terminals report
//! Shift+Enter as plain Enter unless keyboard enhancement is on, so Ctrl+J is the one that always
//! works). The composer grows with its text up to `MAX_ROWS` lines.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders, Widget};
use ratatui_textarea::{TextArea, WrapMode};

/// Text rows the composer grows to before it scrolls.
pub const MAX_ROWS: u16 = 6;

/// What a key did to the composer.
#[derive(Debug, Clone, PartialEq)]
pub enum ComposerAction {
    /// The user sent this text.
    Submit(String),
    /// The key was handled (or ignored); nothing to do.
    None,
}

/// The prompt editor.
pub struct Composer {
    textarea: TextArea<'static>,
}

impl Default for Composer {
    fn default() -> Self {
        let mut textarea = TextArea::default();
        textarea.set_placeholder_text("Ask anything · Enter to send · F1 for help");
        textarea.set_placeholder_style(Style::new().fg(Color::DarkGray));
        textarea.set_cursor_line_style(Style::new());
        textarea.set_wrap_mode(WrapMode::WordOrGlyph);
        Composer { textarea }
    }
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
        self.textarea.input(key);
        ComposerAction::None
    }

    /// Inserts pasted text as it is, newlines included.
    pub fn paste(&mut self, text: &str) {
        self.textarea
            .insert_str(text.replace("\r\n", "\n").replace('\r', "\n"));
    }

    /// The whole text.
    pub fn text(&self) -> String {
        self.textarea.lines().join("\n")
    }

    /// Empties the composer (after a prompt was accepted).
    pub fn clear(&mut self) {
        self.textarea.select_all();
        self.textarea.cut();
    }

    /// Whether nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.textarea.is_empty()
    }

    /// Rows the composer needs, borders included.
    pub fn height(&self) -> u16 {
        (self.textarea.lines().len() as u16).clamp(1, MAX_ROWS) + 2
    }
}

impl Widget for &Composer {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let block = Block::new()
            .borders(Borders::TOP | Borders::BOTTOM)
            .border_style(Style::new().fg(Color::DarkGray))
            .title(Span::styled(
                " ❯ ",
                Style::new()
                    .fg(Color::LightGreen)
                    .add_modifier(Modifier::BOLD),
            ));
        let inner = block.inner(area);
        block.render(area, buf);
        self.textarea.render(inner, buf);
    }
}
