//! `App`: all UI state, the key map, and how agent events change what is shown.
//!
//! Mental model: `App` is a state machine fed by two inputs, terminal events and agent events;
//! it answers with `Op`s sent on its channel and with frame requests. It never blocks and never
//! draws outside `render`. The only clock it reads is for the Ctrl+C double-press window and for
//! notice expiry; everything else on screen is a function of the events it was fed.

use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};
use ratatui::layout::Rect;
use tokio::sync::mpsc::UnboundedSender;

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
    /// Ctrl+T, or Enter on a selected call: the full results of tool calls.
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
    ops: UnboundedSender<Op>,
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
    /// `/new`: start a fresh session, taken by the front end.
    new_session_request: bool,
    /// `/rewind`: the prompts of this session and which is selected.
    pub rewind_picker: Option<(Vec<String>, usize)>,
    /// What `/config` shows, given by the front end (settings and where each came from).
    pub config_report: Vec<String>,
    /// The working directory's name and git branch, for the status bar.
    pub workspace_label: String,
    /// The models `/model` lists.
    pub models: Vec<String>,
    /// `/provider NAME` or `/model ID`: (provider, model) to switch to, taken by the front end.
    switch_request: Option<(Option<String>, Option<String>)>,
    /// Draw without colours (`NO_COLOR`); read once when the app starts.
    pub no_color: bool,
    /// The OS sandbox commands run under, for `/sandbox` and the approval dialog.
    pub sandbox: Option<crate::sandbox::SandboxSettings>,
}

impl App {
    /// A fresh UI for a session; `ops` reaches the agent task.
    pub fn new(ops: UnboundedSender<Op>, mode: Mode, provider: String, model: String) -> Self {
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
            new_session_request: false,
            rewind_picker: None,
            config_report: Vec::new(),
            workspace_label: String::new(),
            models: Vec::new(),
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

    /// Shows an error line in the transcript.
    pub fn notice_error(&mut self, message: String) {
        self.chat.push(CellKind::Error(message));
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

    /// Advances the spinner.
    pub fn tick(&mut self) {
        self.tools.spinner = self.tools.spinner.wrapping_add(1);
    }

    fn send(&self, op: Op) {
        // A closed channel means the agent task ended; the UI sees that through its events.
        let _ = self.ops.send(op);
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
            // While a call waits, only the dialog hears keys: no other overlay, no composer.
            if let ApprovalKey::Answer(decision) = pending.handle_key(key, Instant::now()) {
                let id = pending.id.clone();
                let panel_key = pending.panel_key.clone();
                self.pending_approval = None;
                self.overlay = None;
                self.tools.answered(panel_key.as_deref().unwrap_or(&id));
                self.send(Op::Approve { id, decision });
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
        if self.overlay == Some(Overlay::Files) {
            let page = (self.chat_area.height as usize).saturating_sub(4).max(1);
            if !self.files_view.handle_key(key, &self.saved_files, page) {
                self.overlay = None;
            }
            return;
        }
        if let Some(overlay) = self.overlay {
            match key.code {
                KeyCode::Esc | KeyCode::Char('q') => self.overlay = None,
                KeyCode::F(1) if overlay == Overlay::Help => self.overlay = None,
                _ => {}
            }
            return;
        }
        if self.tools.selected.is_some() {
            match key.code {
                KeyCode::Enter => {
                    let id = self.tools.selected_entry().map(|e| e.id.clone());
                    self.tools.selected = None;
                    if let Some(id) = id {
                        self.open_transcript(Some(&id));
                    }
                    return;
                }
                KeyCode::Esc => {
                    self.tools.selected = None;
                    return;
                }
                KeyCode::Up | KeyCode::Down if ctrl => {}
                _ => self.tools.selected = None,
            }
        }
        self.main_key(key);
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

    /// Updates the panes from an agent event.
    pub fn handle_agent_event(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::SessionConfigured {
                provider,
                model,
                mode,
                context_window,
                ..
            } => {
                self.status.provider = provider;
                self.status.model = model;
                self.status.mode = mode;
                self.status.context_window = context_window;
            }
            AgentEvent::ModeChanged { mode } => self.status.mode = mode,
            // The UI showed the prompt when it was sent.
            AgentEvent::Prompt { .. } => {}
            AgentEvent::TurnStarted { .. } => self.chat.push(CellKind::Assistant {
                text: String::new(),
                reasoning: String::new(),
                tool_calls: Vec::new(),
                usage: None,
            }),
            AgentEvent::TextDelta { text } => {
                self.status.streamed(text.len());
                self.with_assistant(|t, _, _| t.push_str(&text))
            }
            AgentEvent::ReasoningDelta { text } => {
                self.status.streamed(text.len());
                self.with_assistant(|_, r, _| r.push_str(&text))
            }
            AgentEvent::ToolCallStarted { id, name } => {
                self.status.streamed(name.len());
                self.tools.receiving(&id, &name);
            }
            AgentEvent::ToolCallProgress { id, bytes } => {
                let new = self.tools.progress(&id, bytes);
                self.status.streamed(new as usize);
            }
            AgentEvent::ToolCall { id, name, args } => {
                let summary = super::tool_panel::summarize_args(&args);
                self.call_sources.insert(id.clone(), summary.clone());
                self.tools.started(&id, &name, &args);
                self.transcript.started(&id, &name, &args);
                self.with_assistant(|_, _, calls| {
                    calls.push(ToolLine {
                        id,
                        name,
                        summary,
                        outcome: None,
                    })
                });
            }
            AgentEvent::ApprovalRequest {
                id,
                name,
                args,
                preview,
            } => {
                self.tools.awaiting(&id);
                let mut pending = PendingApproval::new(id, name, args, preview);
                if pending.name == "run_command" {
                    pending.policy = self.sandbox.as_ref().map(|s| s.describe());
                }
                self.pending_approval = Some(pending);
                self.overlay = Some(Overlay::Approval);
            }
            result @ AgentEvent::ToolResult { .. } => {
                if let AgentEvent::ToolResult { id, .. } = &result {
                    let id = id.clone();
                    if let Some(outcome) = self.finish_call(&id, result) {
                        self.set_tool_outcome(&id, outcome);
                    }
                }
            }
            AgentEvent::Usage {
                usage,
                cost_usd,
                turn: 0,
            } => {
                // Housekeeping (a compaction summary, HyDE): it counts, but belongs to no answer.
                self.status.add_usage(&usage, cost_usd);
                self.requests.push(usage);
            }
            AgentEvent::Usage {
                usage, cost_usd, ..
            } => {
                self.status.add_usage(&usage, cost_usd);
                self.requests.push(usage);
                let figures = (usage.input_tokens, usage.output_tokens);
                self.chat.update_last(|cell| {
                    if let CellKind::Assistant { usage, .. } = cell {
                        *usage = Some(figures);
                    }
                });
            }
            AgentEvent::CacheMiss {
                block,
                rewritten_tokens,
                ..
            } => {
                let summary = format!(
                    "{block}: ~{} re-written",
                    super::text::compact(rewritten_tokens)
                );
                self.tools.note("cache miss", summary);
            }
            AgentEvent::CostReport {
                provider,
                model,
                requests,
                uncached_input_tokens,
                input_tokens,
                output_tokens,
                cache_read_tokens,
                cache_creation_tokens,
                cost_usd,
                saved_usd,
                budget_usd,
                by_model,
                by_agent,
            } => {
                self.cost_view = Some(CostView {
                    by_agent,
                    provider,
                    model,
                    requests,
                    input_tokens,
                    uncached_input_tokens,
                    output_tokens,
                    cache_read_tokens,
                    cache_creation_tokens,
                    cost_usd,
                    saved_usd,
                    budget_usd,
                    by_model,
                });
            }
            AgentEvent::CacheReport {
                mode,
                tools_tokens,
                system_tokens,
                mcp_catalog_tokens,
                blocks,
            } => {
                self.cache_view = Some(CacheView {
                    mode,
                    tools_tokens,
                    system_tokens,
                    mcp_catalog_tokens,
                    blocks,
                });
            }
            // Only a reroute changes what happens; the signals stay in the JSON events and the log.
            AgentEvent::Route {
                decision: Mode::Chat,
                reason,
            } => {
                self.chat.push(CellKind::Notice(format!(
                    "answered as chat (one request, no tools): {reason}"
                )));
            }
            AgentEvent::Route { .. } => {}
            AgentEvent::EarlyExit {
                repeats,
                kind,
                fingerprint,
            } => {
                let what = if kind == "cycle" {
                    format!("two tool batches alternated {repeats} times")
                } else {
                    format!("the same tool calls came {repeats} times in a row")
                };
                self.chat.push(CellKind::Notice(format!(
                    "stopped early: {what} without progress (fingerprint {fingerprint}); the last batch was not run. Send a new prompt to go on."
                )));
            }
            AgentEvent::Error { message } => {
                self.chat.pop_last_if(is_empty_answer);
                self.chat.push(CellKind::Error(message))
            }
            AgentEvent::Retrying {
                attempt,
                max,
                wait_ms,
                reason,
            } => {
                let secs = (wait_ms as f64 / 1000.0).ceil() as u64;
                let until = Instant::now() + Duration::from_millis(wait_ms);
                self.status.notice = Some((
                    format!("retrying in {secs}s (attempt {attempt}/{max}): {reason}"),
                    until,
                ));
                self.wake_at = Some(until);
            }
            AgentEvent::Notice { message } => self.chat.push(CellKind::Notice(message)),
            AgentEvent::McpPrompts { commands } => self.dynamic_commands = commands,
            AgentEvent::TurnFinished { stop_reason, .. } => {
                self.chat.pop_last_if(is_empty_answer);
                self.running = false;
                if self.pending_approval.take().is_some() {
                    self.overlay = None;
                }
                self.status.busy = false;
                self.status.streamed_bytes = 0;
                self.tools.cancel_running();
                if stop_reason == "interrupted" {
                    self.chat.push(CellKind::Notice("interrupted".into()));
                }
                if !self.queue.is_empty() {
                    let (shown, full, mode) = self.queue.remove(0);
                    self.start_prompt(shown, full, mode);
                }
            }
            AgentEvent::Cost { cost_usd, .. } => {
                // The agent's totals are authoritative; keep the live sum in step with them.
                if cost_usd.is_none() {
                    self.status.cost_usd = None;
                }
            }
            // Only ever sent scoped; handled there.
            AgentEvent::AgentFinished { .. } => {}
            AgentEvent::Scoped { agent, task, event } => {
                self.handle_specialist_event(&agent, task, *event)
            }
        }
    }

    /// Puts a finished call's outcome on its line in the transcript.
    /// Books a finished call under `key` (its id, or a specialist's `TASK:AGENT/ID`): the
    /// transcript record, a saved file, the panel row. Returns the outcome it showed; `None` for
    /// any other event.
    pub(super) fn finish_call(&mut self, key: &str, result: AgentEvent) -> Option<ToolOutcome> {
        let AgentEvent::ToolResult {
            ok,
            chars,
            saved_path,
            duration_ms,
            error,
            exit_code,
            output,
            diff,
            ..
        } = result
        else {
            return None;
        };
        let outcome = ToolOutcome {
            ok,
            exit_code,
            duration_ms,
            chars,
            error,
            saved: saved_path.is_some(),
        };
        self.transcript.finished(
            key,
            RecordOutcome {
                ok,
                exit_code,
                duration_ms,
                output,
                diff,
                saved_path: saved_path.clone(),
            },
        );
        if let Some(path) = &saved_path {
            self.saved_files.push(SavedFile {
                path: path.clone(),
                source: self.call_sources.remove(key).unwrap_or_default(),
                saved_at: std::time::SystemTime::now(),
            });
        }
        self.tools.finished(key, &outcome, saved_path);
        Some(outcome)
    }

    fn set_tool_outcome(&mut self, id: &str, outcome: ToolOutcome) {
        let index = self.chat.cells().iter().rposition(|cell| {
            matches!(cell.kind(), CellKind::Assistant { tool_calls, .. }
                if tool_calls.iter().any(|c| c.id == id))
        });
        if let Some(index) = index {
            self.chat.update_at(index, |cell| {
                if let CellKind::Assistant { tool_calls, .. } = cell
                    && let Some(call) = tool_calls.iter_mut().rev().find(|c| c.id == id)
                {
                    call.outcome = Some(outcome);
                }
            });
        }
    }

    /// Edits the assistant cell of the current request (made by `TurnStarted`).
    fn with_assistant(&mut self, f: impl FnOnce(&mut String, &mut String, &mut Vec<ToolLine>)) {
        let is_assistant = matches!(
            self.chat.cells().last().map(|c| c.kind()),
            Some(CellKind::Assistant { .. })
        );
        if !is_assistant {
            self.chat.push(CellKind::Assistant {
                text: String::new(),
                reasoning: String::new(),
                tool_calls: Vec::new(),
                usage: None,
            });
        }
        self.chat.update_last(|cell| {
            if let CellKind::Assistant {
                text,
                reasoning,
                tool_calls,
                ..
            } = cell
            {
                f(text, reasoning, tool_calls);
            }
        });
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
