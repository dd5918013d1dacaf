//! `App`: all UI state, the key map, and how agent events change what is shown.
//!
//! Mental model: `App` is a state machine fed by two inputs, terminal events and agent events;
//! it answers with `Op`s sent on its channel and with frame requests. It never blocks and never
//! draws outside `render`. The only clock it reads is for the Ctrl+C double-press window and for
//! notice expiry; everything else on screen is a function of the events it was fed.

// Every key and paste goes through the key map: no index that could panic on them (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};
use ratatui::layout::Rect;

use super::approval::{ApprovalKey, PendingApproval};
use super::cache::CacheView;
use super::chat::{CellKind, ChatPane, ToolLine, ToolOutcome};
use super::commands;
use super::composer::Composer;
use super::cost::CostView;
use super::files::{FilesView, Pager, SavedFile};
use super::history::PromptHistory;
use super::popup::{FileIndex, Popup};
use super::status::StatusBar;
use super::tool_panel::ToolPanel;
use super::transcript::{RecordOutcome, Transcript};
use crate::protocol::{AgentEvent, Mode, Op};

mod agents;
mod events;
mod input;
mod layout;
mod submit;

/// How long a second Ctrl+C still quits.
const QUIT_WINDOW: Duration = Duration::from_secs(2);
/// How long a status notice stays.
const NOTICE_TIME: Duration = Duration::from_secs(3);

/// An overlay drawn over the panes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlay {
    Help,
    Files,
    /// A tool call waits for approval (see `App::pending_approval`).
    Approval,
    /// `/cache`: the prompt-cache report.
    Cache,
    /// `/cost`: the session's bill.
    Cost,
    /// `/resume`: the recent sessions.
    Resume,
    /// Ctrl+T: the full results of tool calls (of the picked one, when a call is picked).
    Transcript,
    /// `/rewind`: this session's prompts, to return to before one.
    Rewind,
    /// `/config`: every effective setting and where it came from.
    Config,
    /// `/model`: the models it can switch to.
    Models,
}

/// The whole UI state.
pub struct App {
    pub chat: ChatPane,
    pub tools: ToolPanel,
    pub status: StatusBar,
    pub composer: Composer,
    pub overlay: Option<Overlay>,
    pub pending_approval: Option<PendingApproval>,
    /// Slash commands added at run time: the MCP servers' prompts (`/SERVER:PROMPT`).
    pub dynamic_commands: Vec<commands::DynamicCommand>,
    pub cache_view: Option<CacheView>,
    pub cost_view: Option<CostView>,
    /// Every request's usage, for the cache chart.
    pub requests: Vec<crate::protocol::UsageFigures>,
    /// Whether the cache chart is shown under the tool panel (Ctrl+G).
    pub show_chart: bool,
    /// Lines of F1's help scrolled off the top.
    pub help_scroll: usize,
    ops: crate::protocol::OpSender,
    running: bool,
    quit_armed: Option<Instant>,
    quit: bool,
    pub saved_files: Vec<SavedFile>,
    pub files_view: FilesView,
    /// Every tool call's full record, for the transcript pager.
    pub transcript: Transcript,
    /// The transcript pager, while open.
    pub transcript_view: Option<Pager>,
    /// What each running call was about (its URL or path), for the saved-files list.
    call_sources: std::collections::HashMap<String, String>,
    /// The areas of the last frame, to route mouse events.
    chat_area: Rect,
    panel_area: Rect,
    /// When the next frame is wanted, if later than now (notice expiry).
    wake_at: Option<Instant>,
    /// Where session logs are, for `/resume`.
    pub sessions_dir: Option<std::path::PathBuf>,
    /// The sessions `/resume` lists, and which is selected.
    pub resume_picker: Option<(Vec<crate::session_log::SessionInfo>, usize)>,
    resume_request: Option<std::path::PathBuf>,
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
    /// Ctrl+B: the tool panel drawn over the chat when the screen is too narrow for it.
    pub panel_overlay: bool,
    /// When Esc was last pressed, to swallow an escape sequence the terminal split (`[5~`).
    esc_at: Option<Instant>,
    /// Inside such a split sequence: the characters seen after `[`.
    esc_sequence: Option<String>,
    /// Ctrl+X: the draft to open in `$VISUAL`/`$EDITOR`, taken by the front end.
    editor_request: Option<String>,
    /// Bytes for the terminal itself (an OSC 52 clipboard write, a notification), sent between
    /// frames.
    terminal_write: Option<String>,
    /// Whether the terminal has the focus (focus events; assumed until told otherwise).
    pub focused: bool,
    /// How to notify when a turn ends or an approval waits while unfocused.
    pub notify: crate::ui::notify::Notify,
    /// `/new`: start a fresh session, taken by the front end.
    new_session_request: bool,
    /// `/rewind`: the prompts of this session and which is selected.
    pub rewind_picker: Option<(Vec<String>, usize)>,
    /// What `/config` shows, given by the front end (settings and where each came from).
    pub config_report: Vec<String>,
    /// The working directory's name and git branch, for the status bar.
    pub workspace_label: String,
    /// The models `/model` lists.
    pub models: crate::session::models::ModelList,
    /// The `/model` picker's filter and selection.
    pub model_picker: crate::ui::models::ModelPicker,
    /// `/provider NAME` or `/model ID`: (provider, model) to switch to, taken by the front end.
    switch_request: Option<(Option<String>, Option<String>)>,
    /// Draw without colours (`NO_COLOR`); read once when the app starts.
    pub no_color: bool,
    /// The OS sandbox commands run under, for `/sandbox` and the approval dialog.
    pub sandbox: Option<crate::sandbox::SandboxSettings>,
}

impl App {
    /// A fresh UI for a session; `ops` reaches the agent task.
    pub fn new(
        ops: crate::protocol::OpSender,
        mode: Mode,
        provider: String,
        model: String,
    ) -> Self {
        App {
            chat: ChatPane::default(),
            tools: ToolPanel::default(),
            status: StatusBar::new(mode, provider, model),
            composer: Composer::default(),
            overlay: None,
            pending_approval: None,
            dynamic_commands: Vec::new(),
            cache_view: None,
            cost_view: None,
            requests: Vec::new(),
            show_chart: true,
            help_scroll: 0,
            ops,
            running: false,
            quit_armed: None,
            quit: false,
            saved_files: Vec::new(),
            files_view: FilesView::default(),
            transcript: Transcript::default(),
            transcript_view: None,
            call_sources: Default::default(),
            chat_area: Rect::default(),
            panel_area: Rect::default(),
            wake_at: None,
            sessions_dir: None,
            resume_picker: None,
            resume_request: None,
            history: PromptHistory::default(),
            history_search: None,
            popup: None,
            popup_closed_at: None,
            files_index: FileIndex::default(),
            queue: Vec::new(),
            panel_overlay: false,
            esc_at: None,
            esc_sequence: None,
            editor_request: None,
            terminal_write: None,
            focused: true,
            notify: Default::default(),
            new_session_request: false,
            rewind_picker: None,
            config_report: Vec::new(),
            workspace_label: String::new(),
            models: Default::default(),
            model_picker: Default::default(),
            switch_request: None,
            no_color: super::theme::no_color_requested(),
            sandbox: None,
        }
    }

    /// Sets the session's sandbox: `/sandbox`, the approval dialog and the status bar show it.
    pub fn set_sandbox(&mut self, sandbox: crate::sandbox::SandboxSettings) {
        self.status.sandbox = if sandbox.policy == crate::sandbox::Policy::Off {
            "sandbox off".into()
        } else if !sandbox.enforced() {
            "sandbox not enforced".into()
        } else {
            String::new()
        };
        self.sandbox = Some(sandbox);
    }

    /// The provider and/or model `/provider` or `/model` asked for, taken once.
    pub fn take_switch_request(&mut self) -> Option<(Option<String>, Option<String>)> {
        self.switch_request.take()
    }

    /// The draft Ctrl+X asked to edit in an external editor, taken once.
    pub fn take_terminal_write(&mut self) -> Option<String> {
        self.terminal_write.take()
    }

    /// Queues `bytes` for the terminal after what is already queued.
    pub(crate) fn write_terminal(&mut self, bytes: String) {
        self.terminal_write
            .get_or_insert_with(String::new)
            .push_str(&bytes);
    }

    /// Gets the user's attention for `message` when the terminal is not focused.
    pub(crate) fn notify_unfocused(&mut self, message: &str) {
        if self.focused {
            return;
        }
        if let Some(bytes) = self.notify.sequence(message) {
            self.write_terminal(bytes);
        }
    }

    /// The draft to open in the editor, taken once.
    pub fn take_editor_request(&mut self) -> Option<String> {
        self.editor_request.take()
    }

    /// Puts back what the external editor saved.
    pub fn editor_done(&mut self, text: String) {
        self.composer.set_text(text.trim_end_matches('\n'));
        self.refresh_popup();
    }

    /// Whether `/new` asked for a fresh session, taken once.
    pub fn take_new_session_request(&mut self) -> bool {
        std::mem::take(&mut self.new_session_request)
    }

    /// What the front end prints on the normal screen when the TUI ends.
    pub fn exit_summary(&self, session_id: &str) -> String {
        let cost = match self.status.cost_usd {
            Some(c) => format!("${c:.4}"),
            None => "cost unknown".into(),
        };
        format!(
            "chatcli session {session_id}\n  resume with: chatcli --resume {session_id}\n  tokens: {} in ({}% from cache) · {} out · {cost}\n",
            super::cost::thousands(self.status.input_tokens),
            self.status.cache_percent(),
            super::cost::thousands(self.status.output_tokens),
        )
    }

    /// Whether the user asked to quit.
    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// Whether a prompt is running (the spinner wants frames).
    pub fn is_busy(&self) -> bool {
        self.running
    }

    /// The session `/resume` picked, taken once.
    pub fn take_resume_request(&mut self) -> Option<std::path::PathBuf> {
        self.resume_request.take()
    }

    /// Asks the session to go on with model `id`, warning when no list chatcli has knows it.
    pub(crate) fn switch_model(&mut self, id: String) {
        let entries = &self.models.entries;
        if !entries.is_empty() && !entries.iter().any(|m| m.id == id) {
            self.chat.push(CellKind::Notice(format!(
                "{id} is not a model chatcli knows (see /model): switching anyway; the provider answers whether it serves it, and its price and window are estimated"
            )));
        }
        self.switch_request = Some((None, Some(id)));
    }

    /// Shows an error line in the transcript.
    pub fn notice_error(&mut self, message: String) {
        self.chat.push(CellKind::Error(message));
    }

    /// Shows a line in the transcript that says something went as asked (never drawn as an
    /// error).
    pub fn notice_done(&mut self, message: String) {
        self.chat.push(CellKind::Notice(message));
    }

    /// Rebuilds the screen of a resumed session from its logged events.
    pub fn replay(&mut self, events: Vec<AgentEvent>) {
        for event in events {
            match event {
                AgentEvent::Prompt { text, .. } => self.chat.push(CellKind::User(text)),
                // A resumed session is idle: nothing is waiting for an answer.
                AgentEvent::ApprovalRequest { .. } => {}
                AgentEvent::Scoped { ref event, .. }
                    if matches!(**event, AgentEvent::ApprovalRequest { .. }) => {}
                other => self.handle_agent_event(other),
            }
        }
        self.running = false;
        self.status.busy = false;
        self.tools.cancel_running();
        self.chat.push(CellKind::Notice(
            "resumed: the conversation goes on from here".into(),
        ));
    }

    /// A later instant at which a frame is wanted, taken once.
    pub fn take_wake(&mut self) -> Option<Instant> {
        self.wake_at.take()
    }

    /// Advances the spinner and the running rows' clock.
    pub fn tick(&mut self) {
        self.tick_at(Instant::now());
    }

    /// `tick`, at `now`.
    pub fn tick_at(&mut self, now: Instant) {
        self.tools.spinner = self.tools.spinner.wrapping_add(1);
        self.tools.now = Some(now);
        self.settle_at(now);
    }

    /// Decides a held approval key at `now` (nothing followed it: it was pressed on its own).
    pub fn settle_at(&mut self, now: Instant) {
        if let Some(pending) = self.pending_approval.as_mut() {
            let outcome = pending.tick(now);
            self.approval_outcome(outcome);
        }
    }

    /// Applies what a key (or the held key's time running out) did to the approval dialog.
    fn approval_outcome(&mut self, outcome: ApprovalKey) {
        match outcome {
            ApprovalKey::Answer(decision) => {
                let Some(pending) = self.pending_approval.take() else {
                    return;
                };
                self.overlay = None;
                self.tools
                    .answered(pending.panel_key.as_deref().unwrap_or(&pending.id));
                self.send(Op::Approve {
                    id: pending.id,
                    decision,
                });
            }
            ApprovalKey::Typed(keys) => {
                for key in keys {
                    // Typing, not a command: an Enter never came this way, so nothing is sent.
                    let _ = self.composer.handle_key(key);
                }
            }
            ApprovalKey::Stay => {}
        }
    }

    fn send(&mut self, op: Op) {
        // A closed channel means the agent task ended; the UI sees that through its events.
        if let Err(e @ crate::protocol::OpError::Full) = self.ops.send(op) {
            self.notice_error(format!("not sent: {e}; try again in a moment"));
        }
    }

    fn notice(&mut self, text: impl Into<String>) {
        let until = Instant::now() + NOTICE_TIME;
        self.status.notice = Some((text.into(), until));
        self.wake_at = Some(until);
    }

    /// Handles a terminal event.
    pub fn handle_terminal_event(&mut self, event: Event) {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.handle_key(key),
            Event::Paste(text) if self.overlay.is_none() => self.composer.paste(&text),
            Event::FocusGained => self.focused = true,
            Event::FocusLost => self.focused = false,
            Event::Mouse(mouse) => {
                let over_panel = rect_contains(self.panel_area, mouse.column, mouse.row);
                match mouse.kind {
                    MouseEventKind::ScrollUp if over_panel => self.tools.scroll_up(1),
                    MouseEventKind::ScrollDown if over_panel => self.tools.scroll_down(1),
                    MouseEventKind::ScrollUp => self.chat.scroll_up(3),
                    MouseEventKind::ScrollDown => self.chat.scroll_down(3),
                    MouseEventKind::Down(crossterm::event::MouseButton::Left)
                        if over_panel && self.overlay.is_none() =>
                    {
                        // A click on a saved body's line opens it.
                        let saved = self
                            .tools
                            .entry_at(self.panel_area, mouse.row)
                            .and_then(|e| e.saved_path.clone());
                        if let Some(path) = saved {
                            self.open_saved(&path);
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// Handles a key press.
    pub fn handle_key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        // Ctrl+C first, matched by the CONTROL bit being present (crossterm may add ALT).
        if ctrl && matches!(key.code, KeyCode::Char('c') | KeyCode::Char('C')) {
            self.ctrl_c();
            return;
        }
        if let Some(pending) = self.pending_approval.as_mut() {
            // While a call waits, the dialog hears keys first; what was typing goes to the
            // composer (the sentence the user was writing stays whole), never to an answer.
            let now = Instant::now();
            let outcome = pending.handle_key(key, now);
            let wake = pending.wake_at();
            self.approval_outcome(outcome);
            if let Some(at) = wake {
                self.wake_at = Some(at);
            }
            return;
        }
        if self.overlay == Some(Overlay::Transcript) {
            let page = self.page();
            let open = self
                .transcript_view
                .as_mut()
                .is_some_and(|pager| pager.handle_key(key, page));
            if !open {
                self.transcript_view = None;
                self.overlay = None;
            }
            return;
        }
        if self.overlay == Some(Overlay::Resume) {
            if let Some((sessions, selected)) = self.resume_picker.as_mut() {
                match key.code {
                    KeyCode::Esc | KeyCode::Char('q') => self.overlay = None,
                    KeyCode::Down | KeyCode::Char('j') => {
                        *selected = (*selected + 1).min(sessions.len().saturating_sub(1))
                    }
                    KeyCode::Up | KeyCode::Char('k') => *selected = selected.saturating_sub(1),
                    KeyCode::Enter => {
                        if let Some(session) = sessions.get(*selected) {
                            self.resume_request = Some(session.path.clone());
                        }
                        self.overlay = None;
                    }
                    _ => {}
                }
            } else {
                self.overlay = None;
            }
            return;
        }
        if self.overlay == Some(Overlay::Rewind) {
            self.rewind_key(key);
            return;
        }
        if self.overlay == Some(Overlay::Models) {
            use crate::ui::models::PickerKey;
            let provider = &self.status.provider;
            match self
                .model_picker
                .handle_key(key, &self.models.entries, provider)
            {
                PickerKey::Stay => {}
                PickerKey::Close => self.overlay = None,
                PickerKey::Choose(id) => {
                    self.overlay = None;
                    self.switch_model(id);
                }
            }
            return;
        }
        if self.overlay == Some(Overlay::Files) {
            let page = (self.chat_area.height as usize).saturating_sub(4).max(1);
            if !self.files_view.handle_key(key, &self.saved_files, page) {
                self.overlay = None;
            }
            return;
        }
        if let Some(overlay) = self.overlay {
            let page = self.page();
            match key.code {
                KeyCode::Esc | KeyCode::Char('q') => self.overlay = None,
                KeyCode::F(1) if overlay == Overlay::Help => self.overlay = None,
                KeyCode::Down if overlay == Overlay::Help => self.help_scroll += 1,
                KeyCode::Up if overlay == Overlay::Help => {
                    self.help_scroll = self.help_scroll.saturating_sub(1)
                }
                KeyCode::PageDown if overlay == Overlay::Help => self.help_scroll += page,
                KeyCode::PageUp if overlay == Overlay::Help => {
                    self.help_scroll = self.help_scroll.saturating_sub(page)
                }
                KeyCode::Home if overlay == Overlay::Help => self.help_scroll = 0,
                KeyCode::End if overlay == Overlay::Help => self.help_scroll = usize::MAX / 2,
                // Typing over a read-only overlay closes it and goes on in the composer.
                KeyCode::Char(_) if !ctrl => {
                    self.overlay = None;
                    self.main_key(key);
                }
                _ => {}
            }
            return;
        }
        if let Some(id) = self.tools.selected_entry().map(|e| e.id.clone()) {
            match key.code {
                KeyCode::Enter => {
                    self.open_call(&id);
                    return;
                }
                KeyCode::Char('t') if ctrl => {
                    self.pick_none();
                    self.open_transcript(Some(&id));
                    return;
                }
                KeyCode::Esc => {
                    self.pick_none();
                    return;
                }
                KeyCode::Up | KeyCode::Down if ctrl => {}
                // Reading a long open record keeps the call picked, to fold it after.
                KeyCode::PageUp | KeyCode::PageDown | KeyCode::End => {}
                _ => self.pick_none(),
            }
        }
        self.main_key(key);
    }

    /// Ctrl+↑/↓: picks the previous (`-1`) or next call, in the panel and on its chat line.
    fn pick_call(&mut self, step: isize) {
        self.tools.select(step);
        let id = self.tools.selected_entry().map(|e| e.id.clone());
        self.chat.select_call(id.as_deref());
    }

    /// Lets go of the picked call.
    fn pick_none(&mut self) {
        self.tools.selected = None;
        self.chat.select_call(None);
    }

    /// Enter on a picked call: its full record opens (or folds) under its line in the chat; a
    /// call with no line there (a specialist's) opens in the pager.
    fn open_call(&mut self, id: &str) {
        match self.transcript.detail(id) {
            Some(detail) if self.chat.shows_call(id) => {
                self.chat.toggle_call(id, detail);
            }
            _ => {
                self.pick_none();
                self.open_transcript(Some(id));
            }
        }
    }

    /// Opens the transcript pager on one call, or on every call of the session.
    fn open_transcript(&mut self, id: Option<&str>) {
        self.transcript_view = Some(self.transcript.pager(id));
        self.overlay = Some(Overlay::Transcript);
    }

    fn open_files(&mut self) {
        self.files_view = FilesView::default();
        self.overlay = Some(Overlay::Files);
    }

    /// Opens a saved file straight in the pager.
    pub fn open_saved(&mut self, path: &str) {
        self.files_view = FilesView {
            selected: 0,
            pager: Some(Pager::open(path)),
        };
        self.overlay = Some(Overlay::Files);
    }

    fn page(&self) -> usize {
        (self.chat_area.height as usize).saturating_sub(2).max(1)
    }

    fn ctrl_c(&mut self) {
        // A draft goes first: Ctrl+C clears what is typed before it interrupts or quits.
        if self.overlay.is_none() && (!self.composer.is_empty() || self.history_search.is_some()) {
            self.composer.clear();
            self.history_search = None;
            self.popup = None;
            self.history.stop_walking();
            return;
        }
        if self.running {
            self.send(Op::Interrupt);
            self.notice("interrupting…");
            return;
        }
        if self.overlay.take().is_some() {
            return;
        }
        match self.quit_armed {
            Some(at) if at.elapsed() <= QUIT_WINDOW => self.quit = true,
            _ => {
                self.quit_armed = Some(Instant::now());
                self.notice("press Ctrl+C again to quit");
            }
        }
    }

    fn set_mode(&mut self, mode: Mode) {
        self.status.mode = mode;
        self.send(Op::SetMode { mode });
    }
}

/// An answer frame that got no text, reasoning or tool call (the request failed or was cut).
fn is_empty_answer(cell: &CellKind) -> bool {
    matches!(cell, CellKind::Assistant { text, reasoning, tool_calls, usage: None }
        if text.trim().is_empty() && reasoning.trim().is_empty() && tool_calls.is_empty())
}

fn rect_contains(rect: Rect, x: u16, y: u16) -> bool {
    x >= rect.x && x < rect.x + rect.width && y >= rect.y && y < rect.y + rect.height
}
