//! The keys of the main screen when no overlay is open: the composer, its popups, history and
//! search, the queue, and the shortcuts around them.
//!
//! Order matters and is the one thing to keep: a terminal's split escape sequence is swallowed
//! first, then Ctrl+R search, then an open popup, then Esc, history walking, the shortcuts, and
//! last the composer itself. Every edit of the composer recomputes which popup is open.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{App, Overlay};
use crate::protocol::Op;
use crate::ui::composer::ComposerAction;
use crate::ui::popup::{Popup, PopupKind};

/// An Esc this close before `[` is the start of an escape sequence the terminal split.
const ESC_SEQUENCE_WINDOW: Duration = Duration::from_millis(30);

impl App {
    /// A key for the main screen.
    pub(super) fn main_key(&mut self, key: KeyEvent) {
        if self.escape_sequence(key) {
            return;
        }
        if self.history_search.is_some() {
            self.search_key(key);
            return;
        }
        if self.popup.is_some() && self.popup_key(key) {
            return;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => self.esc(),
            KeyCode::F(1) => {
                self.help_scroll = 0;
                self.overlay = Some(Overlay::Help);
            }
            KeyCode::Char('t') if ctrl => self.open_transcript(None),
            KeyCode::Up if ctrl => self.pick_call(-1),
            KeyCode::Down if ctrl => self.pick_call(1),
            KeyCode::Char('o') if ctrl => self.open_files(),
            KeyCode::Char('g') if ctrl => self.show_chart = !self.show_chart,
            KeyCode::Char('b') if ctrl => self.panel_overlay = !self.panel_overlay,
            KeyCode::Char('r') if ctrl => self.history_search = Some((String::new(), None)),
            KeyCode::Char('x') if ctrl => {
                self.editor_request = Some(self.composer.expanded(&self.composer.text()))
            }
            KeyCode::Char('d') if ctrl => {
                if self.composer.is_empty() && !self.running {
                    self.quit = true;
                }
            }
            KeyCode::BackTab => self.set_mode(self.status.mode.cycle()),
            // After an interrupt the queue waits for the user: Enter on an empty prompt sends it.
            KeyCode::Enter
                if key.modifiers.is_empty()
                    && self.composer.is_empty()
                    && !self.running
                    && !self.queue.is_empty() =>
            {
                let (shown, full, mode) = self.queue.remove(0);
                self.start_prompt(shown, full, mode);
            }
            KeyCode::PageUp => self.chat.scroll_up(self.page()),
            KeyCode::PageDown => self.chat.scroll_down(self.page()),
            KeyCode::End if !self.chat.following() => self.chat.follow(),
            KeyCode::Up if key.modifiers.is_empty() && self.composer.on_first_line() => {
                if let Some(older) = self.history.older(&self.composer.text()) {
                    self.composer.set_text(&older);
                }
            }
            KeyCode::Down
                if key.modifiers.is_empty()
                    && self.composer.on_last_line()
                    && self.history.walking() =>
            {
                if let Some(newer) = self.history.newer() {
                    self.composer.set_text(&newer);
                }
            }
            _ => {
                let before = self.composer.text();
                if let ComposerAction::Submit(text) = self.composer.handle_key(key) {
                    self.submit(text);
                } else if self.composer.text() != before {
                    self.history.stop_walking();
                }
                self.refresh_popup();
            }
        }
    }

    /// Swallows the rest of an escape sequence whose Esc arrived as a key of its own (Esc then
    /// PageUp at once can reach us as Esc, `[`, `5`, `~`): such a sequence acts as its key.
    fn escape_sequence(&mut self, key: KeyEvent) -> bool {
        let now = Instant::now();
        if let Some(seq) = self.esc_sequence.as_mut() {
            if let KeyCode::Char(c) = key.code {
                seq.push(c);
                if c.is_ascii_digit() || c == ';' {
                    return true;
                }
                let done = std::mem::take(seq);
                self.esc_sequence = None;
                match done.as_str() {
                    "5~" => self.chat.scroll_up(self.page()),
                    "6~" => self.chat.scroll_down(self.page()),
                    _ => {}
                }
                return true;
            }
            self.esc_sequence = None;
        }
        if key.code == KeyCode::Esc {
            self.esc_at = Some(now);
            return false;
        }
        let recent_esc = self
            .esc_at
            .take()
            .is_some_and(|at| now.saturating_duration_since(at) <= ESC_SEQUENCE_WINDOW);
        let bracket = matches!(key.code, KeyCode::Char('[') | KeyCode::Char('O'));
        if recent_esc && bracket {
            self.esc_sequence = Some(String::new());
            return true;
        }
        false
    }

    /// Esc: closes what is open, else interrupts the running turn (the queue waits), else drops
    /// the newest queued prompt.
    fn esc(&mut self) {
        if self.panel_overlay {
            self.panel_overlay = false;
        } else if self.running {
            self.send(Op::Interrupt);
            self.notice("interrupting…");
        } else if let Some((shown, _, _)) = self.queue.pop() {
            self.notice(format!("removed from the queue: {shown}"));
        }
    }

    /// Ctrl+R: typing narrows, Ctrl+R again finds an older match, Enter takes it into the
    /// composer (not sent), Esc leaves the composer as it was.
    fn search_key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let Some((query, found)) = self.history_search.as_mut() else {
            return;
        };
        match key.code {
            KeyCode::Esc => {
                self.history_search = None;
                return;
            }
            KeyCode::Enter | KeyCode::Tab => {
                if let Some((_, text)) = found.take() {
                    self.composer.set_text(&text);
                }
                self.history_search = None;
                self.refresh_popup();
                return;
            }
            KeyCode::Char('r') if ctrl => {
                let from = found.as_ref().map_or(0, |(back, _)| *back);
                if let Some(older) = self.history.search(query, from) {
                    *found = Some(older);
                }
                return;
            }
            KeyCode::Backspace => {
                query.pop();
            }
            KeyCode::Char(c) if !ctrl => query.push(c),
            _ => return,
        }
        let query = query.clone();
        let result = self.history.search(&query, 0);
        if let Some((_, found)) = self.history_search.as_mut() {
            *found = result;
        }
    }

    /// Keys for an open popup; `false` lets the key through to the composer.
    fn popup_key(&mut self, key: KeyEvent) -> bool {
        let Some(popup) = self.popup.as_mut() else {
            return false;
        };
        match key.code {
            KeyCode::Up => popup.step(-1),
            KeyCode::Down => popup.step(1),
            KeyCode::Esc => {
                self.popup = None;
                self.popup_closed_at = Some(self.composer.text());
            }
            KeyCode::Tab => self.accept_popup(false),
            KeyCode::Enter if key.modifiers.is_empty() => self.accept_popup(true),
            _ => return false,
        }
        true
    }

    /// Completes with the popup's selection; for a command with `run`, runs it.
    fn accept_popup(&mut self, run: bool) {
        let Some(popup) = self.popup.take() else {
            return;
        };
        let Some(item) = popup.chosen().cloned() else {
            return;
        };
        match popup.kind {
            PopupKind::Commands => {
                // The palette is open only while the first word is typed: the choice is whole.
                if run {
                    self.submit(item.insert.clone());
                } else {
                    self.composer.set_text(&format!("{} ", item.insert));
                    self.refresh_popup();
                }
            }
            PopupKind::Files => {
                self.composer
                    .replace_word_at_cursor(&format!("{} ", item.insert));
                self.refresh_popup();
            }
        }
    }

    /// Opens, narrows or closes the popup for what the composer holds now.
    pub(crate) fn refresh_popup(&mut self) {
        let text = self.composer.text();
        if self.popup_closed_at.as_deref() == Some(text.as_str()) {
            self.popup = None;
            return;
        }
        self.popup_closed_at = None;
        let selected = self.popup.as_ref().map_or(0, |p| p.selected);
        let popup = if let Some(query) = text
            .strip_prefix('/')
            .filter(|q| !q.contains(char::is_whitespace) && !text.contains('\n'))
        {
            Popup::commands(query)
        } else {
            let (_, word) = self.composer.word_at_cursor();
            match word.strip_prefix('@') {
                Some(query) => {
                    self.files_index.load();
                    Popup::files(query, &self.files_index)
                }
                None => None,
            }
        };
        self.popup = popup.map(|mut p| {
            p.selected = selected.min(p.items.len().saturating_sub(1));
            p
        });
    }
}
