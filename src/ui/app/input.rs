//! The prompt being typed — the composer, its popups, history and search, the queue of prompts
//! waiting for the running turn — and the keys of the main screen when no overlay is open.
//!
//! Order matters and is the one thing to keep: a terminal's split escape sequence is swallowed
//! first, then Ctrl+R search, then an open popup, then Esc, history walking, the shortcuts, and
//! last the composer itself. Every edit of the composer recomputes which popup is open.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::App;
use crate::protocol::{Mode, Op};
use crate::ui::composer::{Composer, ComposerAction};
use crate::ui::history::PromptHistory;
use crate::ui::popup::{FileIndex, Popup, PopupKind};

/// An Esc this close before `[` is the start of an escape sequence the terminal split.
const ESC_SEQUENCE_WINDOW: Duration = Duration::from_millis(30);

/// The prompt being typed and what helps type it.
#[derive(Default)]
pub struct PromptInput {
    pub composer: Composer,
    /// Earlier prompts for Up/Down and Ctrl+R.
    pub history: PromptHistory,
    /// Ctrl+R: the search being typed and the entry it found (how far back, text).
    pub history_search: Option<(String, Option<(usize, String)>)>,
    /// The command palette or the mention picker, while open.
    pub popup: Option<Popup>,
    /// The composer text at which the user closed the popup (it stays closed until it changes).
    popup_closed_at: Option<String>,
    /// The workspace's files, for the mention picker.
    pub files_index: FileIndex,
    /// Prompts typed while a turn ran, sent in order when it ends: (shown text, full text, mode).
    pub queue: Vec<(String, String, Mode)>,
    /// An escape sequence the terminal split into keys, while it arrives.
    escape: SplitEscape,
    /// The commands added at run time, for the palette (a copy of the session's list).
    pub palette_extra: Vec<crate::ui::commands::DynamicCommand>,
}

/// What a key did to an open popup.
enum PopupKey {
    /// Not the popup's: it goes on to the composer.
    Pass,
    /// Handled by the popup.
    Handled,
    /// Enter on a command: run it.
    Run(String),
}

impl PromptInput {
    /// Whether there is something typed for Ctrl+C to clear first: a draft or a search.
    pub(super) fn has_draft(&self) -> bool {
        !self.composer.is_empty() || self.history_search.is_some()
    }

    /// Ctrl+C on a draft: the composer, the search and the popup go; history walking stops.
    pub(super) fn clear_draft(&mut self) {
        self.composer.clear();
        self.history_search = None;
        self.popup = None;
        self.history.stop_walking();
    }

    /// Takes `text` (as shown) out of the composer to send it: it goes into the history, and
    /// the full text (long pastes unfolded) is returned.
    pub(super) fn take_prompt(&mut self, text: &str) -> String {
        let full = self.composer.expanded(text);
        self.history.push(text);
        self.composer.clear();
        self.popup = None;
        full
    }

    /// The oldest queued prompt, taken: (shown text, full text, mode).
    pub(super) fn next_queued(&mut self) -> Option<(String, String, Mode)> {
        if self.queue.is_empty() {
            None
        } else {
            Some(self.queue.remove(0))
        }
    }

    /// Replaces the draft with `text` and opens the popup it calls for.
    pub(super) fn set_text(&mut self, text: &str) {
        self.composer.set_text(text);
        self.refresh_popup();
    }

    /// A key for the composer itself; returns the text the user sent, if they did.
    fn type_key(&mut self, key: KeyEvent) -> Option<String> {
        let before = self.composer.text();
        if let ComposerAction::Submit(text) = self.composer.handle_key(key) {
            return Some(text);
        }
        if self.composer.text() != before {
            self.history.stop_walking();
        }
        None
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

    /// Keys for an open popup.
    fn popup_key(&mut self, key: KeyEvent) -> PopupKey {
        let Some(popup) = self.popup.as_mut() else {
            return PopupKey::Pass;
        };
        match key.code {
            KeyCode::Up => popup.step(-1),
            KeyCode::Down => popup.step(1),
            KeyCode::Esc => {
                self.popup = None;
                self.popup_closed_at = Some(self.composer.text());
            }
            KeyCode::Tab => {
                self.accept_popup(false);
            }
            KeyCode::Enter if key.modifiers.is_empty() => {
                if let Some(command) = self.accept_popup(true) {
                    return PopupKey::Run(command);
                }
            }
            _ => return PopupKey::Pass,
        }
        PopupKey::Handled
    }

    /// Completes with the popup's selection; for a command with `run`, returns it to run.
    fn accept_popup(&mut self, run: bool) -> Option<String> {
        let popup = self.popup.take()?;
        let item = popup.chosen()?.clone();
        match popup.kind {
            PopupKind::Commands => {
                // The palette is open only while the first word is typed: the choice is whole.
                if run {
                    return Some(item.insert);
                }
                self.composer.set_text(&format!("{} ", item.insert));
                self.refresh_popup();
            }
            PopupKind::Files => {
                self.composer
                    .replace_word_at_cursor(&format!("{} ", item.insert));
                self.refresh_popup();
            }
        }
        None
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
            Popup::commands(query, &self.palette_extra)
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

/// Swallows the rest of an escape sequence whose Esc arrived as a key of its own (Esc then
/// PageUp at once can reach us as Esc, `[`, `5`, `~`): such a sequence acts as its key.
#[derive(Debug, Default)]
struct SplitEscape {
    /// When Esc was last pressed.
    at: Option<Instant>,
    /// Inside such a split sequence: the characters seen after `[`.
    sequence: Option<String>,
}

/// What a key meant to `SplitEscape`.
enum Escaped {
    /// An ordinary key.
    Pass,
    /// Part of a split sequence: nothing more to do.
    Swallowed,
    /// The sequence was PageUp.
    PageUp,
    /// The sequence was PageDown.
    PageDown,
}

impl SplitEscape {
    fn feed(&mut self, key: KeyEvent, now: Instant) -> Escaped {
        if let Some(seq) = self.sequence.as_mut() {
            if let KeyCode::Char(c) = key.code {
                seq.push(c);
                if c.is_ascii_digit() || c == ';' {
                    return Escaped::Swallowed;
                }
                let done = std::mem::take(seq);
                self.sequence = None;
                return match done.as_str() {
                    "5~" => Escaped::PageUp,
                    "6~" => Escaped::PageDown,
                    _ => Escaped::Swallowed,
                };
            }
            self.sequence = None;
        }
        if key.code == KeyCode::Esc {
            self.at = Some(now);
            return Escaped::Pass;
        }
        let recent_esc = self
            .at
            .take()
            .is_some_and(|at| now.saturating_duration_since(at) <= ESC_SEQUENCE_WINDOW);
        let bracket = matches!(key.code, KeyCode::Char('[') | KeyCode::Char('O'));
        if recent_esc && bracket {
            self.sequence = Some(String::new());
            return Escaped::Swallowed;
        }
        Escaped::Pass
    }
}

impl App {
    /// A key for the main screen.
    pub(super) fn main_key(&mut self, key: KeyEvent) {
        match self.input.escape.feed(key, Instant::now()) {
            Escaped::Pass => {}
            Escaped::Swallowed => return,
            Escaped::PageUp => return self.chat.scroll_up(self.page()),
            Escaped::PageDown => return self.chat.scroll_down(self.page()),
        }
        if self.input.history_search.is_some() {
            self.input.search_key(key);
            return;
        }
        match self.input.popup_key(key) {
            PopupKey::Pass => {}
            PopupKey::Handled => return,
            PopupKey::Run(command) => return self.submit(command),
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => self.esc(),
            KeyCode::F(1) => self.overlays.open_help(),
            KeyCode::Char('t') if ctrl => self.open_transcript(None),
            KeyCode::Up if ctrl => self.pick_call(-1),
            KeyCode::Down if ctrl => self.pick_call(1),
            KeyCode::Char('o') if ctrl => self.overlays.open_files(),
            KeyCode::Char('g') if ctrl => self.chart.shown = !self.chart.shown,
            KeyCode::Char('b') if ctrl => self.screen.panel_overlay = !self.screen.panel_overlay,
            KeyCode::Char('r') if ctrl => self.input.history_search = Some((String::new(), None)),
            KeyCode::Char('z') if ctrl => self.requests.suspend = true,
            KeyCode::Char('v') if ctrl => self.send(Op::PasteImage),
            KeyCode::Char('x') if ctrl => {
                let composer = &self.input.composer;
                self.requests.editor = Some(composer.expanded(&composer.text()))
            }
            KeyCode::Char('d') if ctrl => {
                if self.input.composer.is_empty() && !self.running {
                    self.requests.quit = true;
                }
            }
            KeyCode::BackTab => self.set_mode(self.status.mode.cycle()),
            // After an interrupt the queue waits for the user: Enter on an empty prompt sends it.
            KeyCode::Enter
                if key.modifiers.is_empty()
                    && self.input.composer.is_empty()
                    && !self.running
                    && !self.input.queue.is_empty() =>
            {
                if let Some((shown, full, mode)) = self.input.next_queued() {
                    self.start_prompt(shown, full, mode);
                }
            }
            KeyCode::PageUp => self.chat.scroll_up(self.page()),
            KeyCode::PageDown => self.chat.scroll_down(self.page()),
            KeyCode::End if !self.chat.following() => self.chat.follow(),
            KeyCode::Up if key.modifiers.is_empty() && self.input.composer.on_first_line() => {
                let input = &mut self.input;
                if let Some(older) = input.history.older(&input.composer.text()) {
                    input.composer.set_text(&older);
                }
            }
            KeyCode::Down
                if key.modifiers.is_empty()
                    && self.input.composer.on_last_line()
                    && self.input.history.walking() =>
            {
                if let Some(newer) = self.input.history.newer() {
                    self.input.composer.set_text(&newer);
                }
            }
            _ => {
                if let Some(text) = self.input.type_key(key) {
                    self.submit(text);
                }
                self.input.refresh_popup();
            }
        }
    }

    /// Esc: closes what is open, else interrupts the running turn (the queue waits), else drops
    /// the newest queued prompt.
    fn esc(&mut self) {
        if self.screen.panel_overlay {
            self.screen.panel_overlay = false;
        } else if self.running {
            self.send(Op::Interrupt);
            self.notice("interrupting…");
        } else if let Some((shown, _, _)) = self.input.queue.pop() {
            self.notice(format!("removed from the queue: {shown}"));
        }
    }
}
