//! `App`: all UI state, the key map, and how agent events change what is shown.
//!
//! The state is held in parts that own it — the chat, the tool panel, the status bar, the cache
//! chart, the prompt input (`input`), the overlays (`overlays`), the call records (`records`),
//! the session's context (`session`), focus (`Attention`), the screen's areas (`layout`) and what
//! waits for the front end (`requests`) — and `App` composes them: a key or an event that
//! concerns one part is that part's method; `App` keeps what crosses parts.
//!
//! Mental model: `App` is a state machine fed by two inputs, terminal events and agent events;
//! it answers with `Op`s sent on its channel and with frame requests. It never blocks and never
//! draws outside `render`. The only clock it reads is for the Ctrl+C double-press window and for
//! notice expiry; everything else on screen is a function of the events it was fed.

// Every key and paste goes through the key map: no index that could panic on them (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};

use super::approval::ApprovalKey;
use super::chat::{CellKind, ChatPane, ToolLine, ToolOutcome};
use super::cost::CacheChart;
use super::notify::Attention;
use super::status::StatusBar;
use super::tool_panel::ToolPanel;
use crate::protocol::{AgentEvent, Mode, Op};

mod agents;
mod events;
mod input;
mod layout;
mod overlays;
mod records;
mod requests;
mod session;
mod submit;

pub use input::PromptInput;
pub use layout::Screen;
pub use overlays::{Overlay, Overlays};
pub use records::CallRecords;
pub use requests::Requests;
pub use session::SessionContext;

use overlays::{OverlayContext, OverlayKey};

/// How long a second Ctrl+C still quits.
const QUIT_WINDOW: Duration = Duration::from_secs(2);
/// How long a status notice stays.
const NOTICE_TIME: Duration = Duration::from_secs(3);

/// The whole UI state, as parts that own their own.
pub struct App {
    pub chat: ChatPane,
    pub tools: ToolPanel,
    pub status: StatusBar,
    /// The cache chart under the tool panel.
    pub chart: CacheChart,
    /// The composer with its popups, history, search and queue.
    pub input: PromptInput,
    /// The overlays and what each keeps.
    pub overlays: Overlays,
    /// Every tool call's full record and the files their outputs were saved to.
    pub records: CallRecords,
    /// What the front end and the agent told the UI about the session.
    pub session: SessionContext,
    /// Focus, and how to notify while unfocused.
    pub attention: Attention,
    /// The areas of the last frame and how the screen is drawn.
    pub screen: Screen,
    /// What waits for the front end.
    requests: Requests,
    ops: crate::protocol::OpSender,
    /// Whether a turn runs.
    running: bool,
    /// When Ctrl+C was pressed with nothing to clear or interrupt: a second one soon quits.
    quit_armed: Option<Instant>,
}

/// How often the screen is redrawn while the mention picker's walk goes on.
const FILE_WALK_REDRAW: std::time::Duration = std::time::Duration::from_millis(50);

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
            chart: CacheChart::default(),
            input: PromptInput::default(),
            overlays: Overlays::default(),
            records: CallRecords::default(),
            session: SessionContext::default(),
            attention: Attention::default(),
            screen: Screen::default(),
            requests: Requests::default(),
            ops,
            running: false,
            quit_armed: None,
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
        self.session.sandbox = Some(sandbox);
    }

    /// The provider and/or model `/provider` or `/model` asked for, taken once.
    pub fn take_switch_request(&mut self) -> Option<(Option<String>, Option<String>)> {
        self.requests.switch.take()
    }

    /// The draft Ctrl+X asked to edit in an external editor, taken once.
    pub fn take_terminal_write(&mut self) -> Option<String> {
        self.requests.terminal_write.take()
    }

    /// Queues `bytes` for the terminal after what is already queued.
    pub(crate) fn write_terminal(&mut self, bytes: String) {
        self.requests.write_terminal(bytes);
    }

    /// Gets the user's attention for `message` when the terminal is not focused.
    pub(crate) fn notify_unfocused(&mut self, message: &str) {
        if let Some(bytes) = self.attention.sequence(message) {
            self.write_terminal(bytes);
        }
    }

    /// Whether Ctrl+Z asked to suspend, taken once.
    pub fn take_suspend_request(&mut self) -> bool {
        std::mem::take(&mut self.requests.suspend)
    }

    /// The draft to open in the editor, taken once.
    pub fn take_editor_request(&mut self) -> Option<String> {
        self.requests.editor.take()
    }

    /// Puts back what the external editor saved.
    pub fn editor_done(&mut self, text: String) {
        self.input.set_text(text.trim_end_matches('\n'));
    }

    /// Whether `/new` asked for a fresh session, taken once.
    pub fn take_new_session_request(&mut self) -> bool {
        std::mem::take(&mut self.requests.new_session)
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
        self.requests.quit
    }

    /// Whether a prompt is running (the spinner wants frames).
    pub fn is_busy(&self) -> bool {
        self.running
    }

    /// The session `/resume` picked, taken once.
    pub fn take_resume_request(&mut self) -> Option<std::path::PathBuf> {
        self.requests.resume.take()
    }

    /// Asks the session to go on with model `id`, warning when no list chatcli has knows it.
    pub(crate) fn switch_model(&mut self, id: String) {
        let entries = &self.session.models.entries;
        if !entries.is_empty() && !entries.iter().any(|m| m.id == id) {
            self.chat.push(CellKind::Notice(format!(
                "{id} is not a model chatcli knows (see /model): switching anyway; the provider answers whether it serves it, and its price and window are estimated"
            )));
        }
        self.requests.switch = Some((None, Some(id)));
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
        self.requests.wake.take()
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
        if let Some(pending) = self.overlays.approval.as_mut() {
            let outcome = pending.tick(now);
            self.approval_outcome(outcome);
        }
        // The mention picker fills while the workspace is walked: redraw it as files arrive.
        if self.input.files_index.grew() {
            self.input.refresh_popup();
        }
        if self.input.files_index.walking() {
            let at = now + FILE_WALK_REDRAW;
            self.requests.wake = Some(self.requests.wake.map_or(at, |w| w.min(at)));
        }
    }

    /// Applies what a key (or the held key's time running out) did to the approval dialog.
    fn approval_outcome(&mut self, outcome: ApprovalKey) {
        match outcome {
            ApprovalKey::Answer(decision) => {
                let Some(pending) = self.overlays.take_approval() else {
                    return;
                };
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
                    let _ = self.input.composer.handle_key(key);
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
        self.requests.wake = Some(until);
    }

    /// Handles a terminal event.
    pub fn handle_terminal_event(&mut self, event: Event) {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.handle_key(key),
            Event::Paste(text) if self.overlays.open.is_none() => self.paste(&text),
            Event::FocusGained => self.attention.focused = true,
            Event::FocusLost => self.attention.focused = false,
            Event::Mouse(mouse) => {
                let over_panel = self.screen.over_panel(mouse.column, mouse.row);
                match mouse.kind {
                    MouseEventKind::ScrollUp if over_panel => self.tools.scroll_up(1),
                    MouseEventKind::ScrollDown if over_panel => self.tools.scroll_down(1),
                    MouseEventKind::ScrollUp => self.chat.scroll_up(3),
                    MouseEventKind::ScrollDown => self.chat.scroll_down(3),
                    MouseEventKind::Down(crossterm::event::MouseButton::Left)
                        if over_panel && self.overlays.open.is_none() =>
                    {
                        // A click on a saved body's line opens it.
                        let saved = self
                            .tools
                            .entry_at(self.screen.panel_area, mouse.row)
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

    /// Handles a key press: Ctrl+C first, then the approval dialog, an open overlay, a picked
    /// call, and last the main screen.
    pub fn handle_key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        // Ctrl+C first, matched by the CONTROL bit being present (crossterm may add ALT).
        if ctrl && matches!(key.code, KeyCode::Char('c') | KeyCode::Char('C')) {
            self.ctrl_c();
        } else if let Some(pending) = self.overlays.approval.as_mut() {
            // While a call waits, the dialog hears keys first; what was typing goes to the
            // composer (the sentence the user was writing stays whole), never to an answer.
            let outcome = pending.handle_key(key, Instant::now());
            let wake = pending.wake_at();
            self.approval_outcome(outcome);
            if let Some(at) = wake {
                self.requests.wake = Some(at);
            }
        } else if self.overlays.open.is_some() {
            self.overlay_key(key);
        } else if !self.picked_call_key(key) {
            self.main_key(key);
        }
    }

    /// A key for the open overlay, and what its answer asks of the rest.
    fn overlay_key(&mut self, key: KeyEvent) {
        let around = OverlayContext {
            chat_height: self.screen.chat_area.height,
            saved_files: &self.records.saved_files,
            models: &self.session.models,
            dynamic_commands: &self.session.dynamic_commands,
            provider: &self.status.provider,
            model: &self.status.model,
        };
        match self.overlays.handle_key(key, &around) {
            OverlayKey::Stay => {}
            OverlayKey::Resume(path) => self.requests.resume = Some(path),
            OverlayKey::Rewind { prompt, text } => {
                self.send(Op::Rewind { prompt });
                // The chat goes back to before that prompt; its text returns for editing.
                self.chat.cut_before_prompt(prompt);
                self.input.composer.set_text(&text);
            }
            OverlayKey::Model(id) => self.switch_model(id),
            // Typing over a read-only overlay closes it and goes on in the composer.
            OverlayKey::TypeThrough => self.main_key(key),
        }
    }

    /// Keys while a call is picked (Ctrl+↑/↓): Enter opens it, Ctrl+T pages it, Esc lets go,
    /// and any other key but scrolling lets go and goes on. Returns whether the key was used.
    fn picked_call_key(&mut self, key: KeyEvent) -> bool {
        let Some(id) = self.tools.selected_entry().map(|e| e.id.clone()) else {
            return false;
        };
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Enter => {
                self.open_call(&id);
                return true;
            }
            KeyCode::Char('t') if ctrl => {
                self.pick_none();
                self.open_transcript(Some(&id));
                return true;
            }
            KeyCode::Esc => {
                self.pick_none();
                return true;
            }
            KeyCode::Up | KeyCode::Down if ctrl => {}
            // Reading a long open record keeps the call picked, to fold it after.
            KeyCode::PageUp | KeyCode::PageDown | KeyCode::End => {}
            _ => self.pick_none(),
        }
        false
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
        match self.records.transcript.detail(id) {
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
        self.overlays
            .open_transcript(self.records.transcript.pager(id));
    }

    /// Opens a saved file straight in the pager.
    pub fn open_saved(&mut self, path: &str) {
        self.overlays.open_saved(path);
    }

    /// Rows of a page of the chat.
    fn page(&self) -> usize {
        (self.screen.chat_area.height as usize)
            .saturating_sub(2)
            .max(1)
    }

    fn ctrl_c(&mut self) {
        // A draft goes first: Ctrl+C clears what is typed before it interrupts or quits.
        if self.overlays.open.is_none() && self.input.has_draft() {
            self.input.clear_draft();
            return;
        }
        if self.running {
            self.send(Op::Interrupt);
            self.notice("interrupting…");
            return;
        }
        if self.overlays.open.take().is_some() {
            return;
        }
        match self.quit_armed {
            Some(at) if at.elapsed() <= QUIT_WINDOW => self.requests.quit = true,
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
