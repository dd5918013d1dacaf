//! The terminal front end: owns the screen, runs the UI event loop, restores the terminal.
//!
//! One `tokio::select!` over the crossterm event stream, the agent's events and a frame timer.
//! Frames are drawn on request, merged, at most one per `FRAME_INTERVAL` (~60 fps); nothing ticks
//! while idle. The terminal is restored on every way out: normal exit, error, panic (the hook is
//! installed before raw mode is entered) and SIGTERM/SIGHUP.

use std::io::{self, Stdout};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    EventStream, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
    supports_keyboard_enhancement,
};
use futures_util::StreamExt;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use crate::agent::{self, AgentOptions};
use crate::protocol::Op;
use crate::provider::Provider;
use crate::session::models::ModelList;
use crate::ui::{App, UiError};

/// Shortest time between two frames.
const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// Spinner step while a prompt runs.
const SPINNER_INTERVAL: Duration = Duration::from_millis(120);

/// Builds the provider and options for another provider and/or model (`/provider`, `/model`).
pub type Switch = Arc<
    dyn Fn(
            Option<String>,
            Option<String>,
        ) -> Result<(Arc<dyn Provider>, AgentOptions), crate::session::SetupError>
        + Send
        + Sync,
>;

/// Reads the models `/model` offers for a provider (its own list, kept a day, with the catalog).
pub type Lister = Arc<
    dyn Fn(
            Arc<dyn Provider>,
        ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ModelList> + Send>>
        + Send
        + Sync,
>;

/// What the TUI needs besides the agent's options.
#[derive(Clone, Default)]
pub struct Setup {
    /// How a finished turn or a waiting approval is notified while unfocused (`CHATCLI_NOTIFY`).
    pub notify: crate::ui::notify::Notify,
    /// Where the prompt history is kept (`CHATCLI_HOME/history.jsonl`).
    pub history_path: Option<std::path::PathBuf>,
    /// What `/config` shows.
    pub config_report: Vec<String>,
    /// The models `/model` offers until the provider's list is read (the price catalog's).
    pub models: ModelList,
    /// Reads the provider's list in the background, at the start and after `/provider`.
    pub lister: Option<Lister>,
    /// How to switch provider or model mid-session; `None` disables `/model ID` and `/provider`.
    pub switch: Option<Switch>,
}

/// Runs the TUI until the user quits; then prints the session's summary on the normal screen.
pub async fn run(
    provider: Arc<dyn Provider>,
    options: AgentOptions,
    setup: Setup,
) -> Result<(), UiError> {
    install_panic_hook();
    let enhanced = enter()?;
    let result = event_loop(provider, options, &setup, enhanced).await;
    leave(enhanced);
    let summary = result?;
    print!("{summary}");
    Ok(())
}

/// The UI loop until the user quits: terminal input, the agent's events, frames when asked for,
/// model lists as they are read, and SIGTERM/SIGHUP. Returns the exit summary.
async fn event_loop(
    provider: Arc<dyn Provider>,
    options: AgentOptions,
    setup: &Setup,
    enhanced: bool,
) -> Result<String, UiError> {
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    terminal.clear()?;
    // The provider's model list arrives when it is read; one from a provider left since is dropped.
    let (models_tx, mut models_rx) = tokio::sync::mpsc::unbounded_channel::<(u64, ModelList)>();
    let mut session = LiveSession::start(provider, options, setup, models_tx);
    let mut terminal_events = EventStream::new();
    let mut signals = Signals::new();
    let mut frames = FrameClock::new();
    while !session.app.should_quit() {
        if session.take_session_request().await {
            frames.request();
        }
        // `/copy`: OSC 52 goes to the terminal itself, between frames.
        if let Some(bytes) = session.app.take_terminal_write() {
            use std::io::Write;
            let mut out = std::io::stdout();
            let _ = out.write_all(bytes.as_bytes()).and_then(|()| out.flush());
        }
        if let Some(draft) = session.app.take_editor_request() {
            edit_draft(&mut terminal, &mut session.app, &draft, enhanced)?;
            frames.request();
        }
        if session.app.take_suspend_request() {
            suspend(&mut terminal, enhanced)?;
            frames.request();
        }
        let deadline = frames.next.map(tokio::time::Instant::from_std);
        tokio::select! {
            event = terminal_events.next() => match event {
                Some(Ok(event)) => {
                    session.app.handle_terminal_event(event);
                    frames.request();
                }
                Some(Err(e)) => return Err(e.into()),
                None => break,
            },
            event = session.handle.events.recv() => match event {
                Some(event) => {
                    session.app.handle_agent_event(event.msg);
                    frames.request();
                }
                None => break,
            },
            _ = sleep_until_opt(deadline) => draw_frame(&mut terminal, &mut session.app, &mut frames)?,
            Some((generation, list)) = models_rx.recv() => {
                if session.take_models(generation, list) {
                    frames.request();
                }
            }
            _ = signals.recv() => break,
        }
    }
    let _ = session.handle.ops.send(Op::Shutdown);
    // Give the agent a moment to finish cleanly; it must not hold the terminal hostage.
    let _ = tokio::time::timeout(Duration::from_millis(500), &mut session.handle.join).await;
    Ok(session.app.exit_summary(&session.options.session_id))
}

/// When the next frame is drawn: requests merge into the earliest, and no two frames are closer
/// than `FRAME_INTERVAL`.
struct FrameClock {
    /// The next frame's time; `None` while nothing asked for one.
    next: Option<Instant>,
    last: Instant,
}

impl FrameClock {
    /// A frame due now.
    fn new() -> Self {
        FrameClock {
            next: Some(Instant::now()),
            last: Instant::now() - FRAME_INTERVAL,
        }
    }

    /// Asks for a frame as soon as may be.
    fn request(&mut self) {
        self.request_at(Instant::now());
    }

    /// Asks for a frame at `at`, or as soon after as may be.
    fn request_at(&mut self, at: Instant) {
        let at = at.max(self.last + FRAME_INTERVAL);
        self.next = Some(self.next.map_or(at, |n| n.min(at)));
    }
}

/// Draws a frame, then asks for the next one the screen needs (the spinner's step, a wake-up).
fn draw_frame(
    terminal: &mut Terminal<CrosstermBackend<Stdout>>,
    app: &mut App,
    frames: &mut FrameClock,
) -> io::Result<()> {
    frames.next = None;
    app.settle_at(Instant::now());
    terminal.draw(|frame| app.render(frame))?;
    frames.last = Instant::now();
    if app.is_busy() {
        app.tick();
        frames.request_at(frames.last + SPINNER_INTERVAL);
    }
    if let Some(at) = app.take_wake() {
        frames.request_at(at);
    }
    Ok(())
}

/// Ctrl+Z: the terminal put back as it was, the whole process stopped as job control expects
/// (the agent with it), and the screen redrawn whole once the shell's `fg` continues it.
fn suspend(terminal: &mut Terminal<CrosstermBackend<Stdout>>, enhanced: bool) -> io::Result<()> {
    leave(enhanced);
    #[cfg(unix)]
    // SAFETY: `raise` only signals this process; SIGTSTP's default action stops it until
    // SIGCONT, and then `raise` returns.
    unsafe {
        libc::raise(libc::SIGTSTP);
    }
    enter()?;
    terminal.clear()?;
    Ok(())
}

/// Ctrl+X: the draft in $VISUAL/$EDITOR, with the terminal handed over meanwhile.
fn edit_draft(
    terminal: &mut Terminal<CrosstermBackend<Stdout>>,
    app: &mut App,
    draft: &str,
    enhanced: bool,
) -> io::Result<()> {
    leave(enhanced);
    let edited = crate::ui::editor::edit(draft);
    enter()?;
    terminal.clear()?;
    match edited {
        Ok(text) => app.editor_done(text),
        Err(e) => app.notice_error(e.to_string()),
    }
    Ok(())
}

/// The session on screen: its agent, the `App` showing it, and what starting another needs.
struct LiveSession<'a> {
    provider: Arc<dyn Provider>,
    options: AgentOptions,
    setup: &'a Setup,
    handle: agent::AgentHandle,
    app: App,
    /// The models `/model` offers, kept across the sessions this front end starts.
    models: ModelList,
    /// Which reading of the model list is current: one from a provider left since is dropped.
    listing: u64,
    models_tx: tokio::sync::mpsc::UnboundedSender<(u64, ModelList)>,
}

impl<'a> LiveSession<'a> {
    /// The first session, and the reading of its provider's model list.
    fn start(
        provider: Arc<dyn Provider>,
        options: AgentOptions,
        setup: &'a Setup,
        models_tx: tokio::sync::mpsc::UnboundedSender<(u64, ModelList)>,
    ) -> Self {
        let models = setup.models.clone();
        let (handle, app) = start_session(&provider, options.clone(), setup, &models);
        let session = LiveSession {
            provider,
            options,
            setup,
            handle,
            app,
            models,
            listing: 0,
            models_tx,
        };
        session.list_models();
        session
    }

    /// Reads the provider's model list in the background, tagged with the current `listing`.
    fn list_models(&self) {
        if let Some(lister) = &self.setup.lister {
            let read = lister(Arc::clone(&self.provider));
            let tx = self.models_tx.clone();
            let generation = self.listing;
            tokio::spawn(async move {
                let _ = tx.send((generation, read.await));
            });
        }
    }

    /// A model list read in the background; whether it is the current provider's (and shown).
    fn take_models(&mut self, generation: u64, list: ModelList) -> bool {
        if generation != self.listing {
            return false;
        }
        self.models = list;
        self.app.session.models = self.models.clone();
        true
    }

    /// Acts on what the user asked of the session (`/resume`, `/new`, `/provider`, `/model`);
    /// returns whether anything was asked, so the screen is redrawn.
    async fn take_session_request(&mut self) -> bool {
        let mut asked = false;
        if let Some(path) = self.app.take_resume_request() {
            self.resume(&path);
            asked = true;
        }
        if self.app.take_new_session_request() {
            self.new_session();
            asked = true;
        }
        if let Some((kind, model)) = self.app.take_switch_request() {
            self.switch(kind, model).await;
            asked = true;
        }
        asked
    }

    /// `/resume` picked a session: end this agent and go on with that one.
    fn resume(&mut self, path: &std::path::Path) {
        match crate::session_log::load(path) {
            Ok(resumed) => {
                let _ = self.handle.ops.send(Op::Shutdown);
                self.options.session_id = resumed.id.clone();
                self.options.resume = Some(resumed);
                self.restart();
            }
            Err(e) => self
                .app
                .notice_error(format!("cannot resume {}: {e}", path.display())),
        }
    }

    /// `/new`: end this agent (its log stays resumable) and start a fresh session.
    fn new_session(&mut self) {
        let _ = self.handle.ops.send(Op::Shutdown);
        let old = self.options.session_id.clone();
        self.options.session_id = crate::session::new_session_id();
        self.options.resume = None;
        self.restart();
        self.app.notice_done(format!(
            "new session; the previous one is resumable with chatcli --resume {old}"
        ));
    }

    /// `/provider NAME`, `/model ID`: the same session (its log, history and screen) goes on
    /// with another provider or model, through the resume path.
    async fn switch(&mut self, kind: Option<String>, model: Option<String>) {
        let (provider, options) = match switch_session(&self.options, self.setup, kind, model) {
            Ok(next) => next,
            Err(e) => {
                self.app.notice_error(format!("cannot switch: {e}"));
                return;
            }
        };
        let _ = self.handle.ops.send(Op::Shutdown);
        let _ = tokio::time::timeout(Duration::from_millis(500), &mut self.handle.join).await;
        let other_endpoint = provider.model_list() != self.provider.model_list();
        self.provider = provider;
        self.options = options;
        if other_endpoint {
            self.listing += 1;
            self.list_models();
        }
        self.restart();
        self.app.notice_done(format!(
            "now on {} · {}: the conversation goes on; this provider's prompt cache starts cold",
            self.provider.label(),
            self.provider.model()
        ));
    }

    /// A new agent and `App` for the current provider and options.
    fn restart(&mut self) {
        (self.handle, self.app) = start_session(
            &self.provider,
            self.options.clone(),
            self.setup,
            &self.models,
        );
    }
}

/// The provider and options for the same session on another provider or model, its log read
/// back so the history goes on.
fn switch_session(
    current: &AgentOptions,
    setup: &Setup,
    kind: Option<String>,
    model: Option<String>,
) -> Result<(Arc<dyn Provider>, AgentOptions), UiError> {
    let switch = setup.switch.as_ref().ok_or(UiError::NoSwitch)?;
    let (provider, mut options) = switch(kind, model)?;
    options.session_id = current.session_id.clone();
    options.mode = current.mode;
    let log = current
        .sessions_dir
        .as_ref()
        .map(|d| d.join(format!("{}.jsonl", current.session_id)))
        .ok_or(UiError::NoLog)?;
    options.resume = Some(crate::session_log::load(&log)?);
    Ok((provider, options))
}

/// Spawns the agent for `options` and an `App` showing it (a resumed session replayed).
fn start_session(
    provider: &Arc<dyn Provider>,
    options: AgentOptions,
    setup: &Setup,
    models: &ModelList,
) -> (agent::AgentHandle, App) {
    let label = provider.label();
    let model = provider.model().to_string();
    let mode = options.mode;
    let replay = options
        .resume
        .as_ref()
        .map(|r| (r.events.clone(), r.skipped));
    let sessions_dir = options.sessions_dir.clone();
    let workspace = options.workspace.clone();
    let secrets = options.secrets.clone();
    let sandbox = options.sandbox.clone();
    let handle = agent::spawn(Arc::clone(provider), options);
    let mut app = App::new(handle.ops.clone(), mode, label, model);
    app.set_sandbox(sandbox);
    app.attention.notify = setup.notify;
    app.session.sessions_dir = sessions_dir;
    if let Some(path) = &setup.history_path {
        app.input.history = crate::ui::history::PromptHistory::load(path, secrets);
    }
    app.input.files_index = crate::ui::popup::FileIndex::new(&workspace);
    app.overlays.config_report = setup.config_report.clone();
    app.session.models = models.clone();
    app.status.workspace = crate::ui::status::workspace_label(&workspace);
    if let Some((events, skipped)) = replay {
        app.replay(events);
        if skipped > 0 {
            app.notice_done(format!("resumed: skipped {skipped} unreadable line(s) of the session log (a crash mid-write)"));
        }
    }
    (handle, app)
}

async fn sleep_until_opt(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// SIGTERM and SIGHUP, as one stream that ends the loop.
struct Signals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn new() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Signals {
                term: signal(SignalKind::terminate()).ok(),
                hup: signal(SignalKind::hangup()).ok(),
            }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    async fn recv(&mut self) {
        #[cfg(unix)]
        {
            let term = async {
                match self.term.as_mut() {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending().await,
                }
            };
            let hup = async {
                match self.hup.as_mut() {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = term => {}
                _ = hup => {}
            }
        }
        #[cfg(not(unix))]
        std::future::pending::<()>().await
    }
}

/// Raw mode, alternate screen, mouse and paste; returns whether keyboard enhancement was pushed.
fn enter() -> io::Result<bool> {
    enable_raw_mode()?;
    let mut out: Stdout = io::stdout();
    execute!(
        out,
        EnterAlternateScreen,
        EnableMouseCapture,
        EnableBracketedPaste,
        crossterm::event::EnableFocusChange
    )?;
    // With enhancement on, terminals that support it report Shift+Enter apart from Enter.
    let enhanced = supports_keyboard_enhancement().unwrap_or(false)
        && execute!(
            out,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )
        .is_ok();
    Ok(enhanced)
}

/// Puts the terminal back exactly as it was; safe to call twice.
fn leave(enhanced: bool) {
    let mut out = io::stdout();
    if enhanced {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        out,
        crossterm::event::DisableFocusChange,
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = disable_raw_mode();
}

fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        leave(true);
        previous(info);
    }));
}
