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
use crate::ui::App;

/// Shortest time between two frames.
const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// Spinner step while a prompt runs.
const SPINNER_INTERVAL: Duration = Duration::from_millis(120);

/// Builds the provider and options for another provider and/or model (`/provider`, `/model`).
pub type Switch = Arc<
    dyn Fn(Option<String>, Option<String>) -> anyhow::Result<(Arc<dyn Provider>, AgentOptions)>
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
) -> anyhow::Result<()> {
    install_panic_hook();
    let enhanced = enter()?;
    let result = event_loop(provider, options, &setup, enhanced).await;
    leave(enhanced);
    let summary = result?;
    print!("{summary}");
    Ok(())
}

async fn event_loop(
    mut provider: Arc<dyn Provider>,
    mut options: AgentOptions,
    setup: &Setup,
    enhanced: bool,
) -> anyhow::Result<String> {
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    terminal.clear()?;
    let mut models = setup.models.clone();
    let (mut handle, mut app) = start_session(&provider, options.clone(), setup, &models);
    // The provider's model list arrives when it is read; one from a provider left since is dropped.
    let (models_tx, mut models_rx) = tokio::sync::mpsc::unbounded_channel::<(u64, ModelList)>();
    let mut listing = 0u64;
    let list_models = |provider: &Arc<dyn Provider>, generation: u64| {
        if let Some(lister) = &setup.lister {
            let read = lister(Arc::clone(provider));
            let tx = models_tx.clone();
            tokio::spawn(async move {
                let _ = tx.send((generation, read.await));
            });
        }
    };
    list_models(&provider, listing);
    let mut terminal_events = EventStream::new();
    let mut signals = Signals::new();

    let mut next_frame: Option<Instant> = Some(Instant::now());
    let mut last_frame = Instant::now() - FRAME_INTERVAL;
    let request = |next: &mut Option<Instant>, at: Instant, last: Instant| {
        let at = at.max(last + FRAME_INTERVAL);
        *next = Some(next.map_or(at, |n| n.min(at)));
    };

    while !app.should_quit() {
        // `/resume` picked a session: end this agent and go on with that one.
        if let Some(path) = app.take_resume_request() {
            match crate::session_log::load(&path) {
                Ok(resumed) => {
                    let _ = handle.ops.send(Op::Shutdown);
                    options.session_id = resumed.id.clone();
                    options.resume = Some(resumed);
                    (handle, app) = start_session(&provider, options.clone(), setup, &models);
                }
                Err(e) => app.notice_error(format!("cannot resume {}: {e}", path.display())),
            }
            request(&mut next_frame, Instant::now(), last_frame);
        }
        // `/new`: end this agent (its log stays resumable) and start a fresh session.
        if app.take_new_session_request() {
            let _ = handle.ops.send(Op::Shutdown);
            let old = options.session_id.clone();
            options.session_id = crate::session::new_session_id();
            options.resume = None;
            (handle, app) = start_session(&provider, options.clone(), setup, &models);
            app.notice_done(format!(
                "new session; the previous one is resumable with chatcli --resume {old}"
            ));
            request(&mut next_frame, Instant::now(), last_frame);
        }
        // `/provider NAME`, `/model ID`: the same session (its log, history and screen) goes on
        // with another provider or model, through the resume path.
        if let Some((kind, model)) = app.take_switch_request() {
            match switch_session(&options, setup, kind, model) {
                Ok((next_provider, next_options)) => {
                    let _ = handle.ops.send(Op::Shutdown);
                    let _ =
                        tokio::time::timeout(Duration::from_millis(500), &mut handle.join).await;
                    let other_endpoint = next_provider.model_list() != provider.model_list();
                    provider = next_provider;
                    options = next_options;
                    if other_endpoint {
                        listing += 1;
                        list_models(&provider, listing);
                    }
                    (handle, app) = start_session(&provider, options.clone(), setup, &models);
                    app.notice_done(format!(
                        "now on {} · {}: the conversation goes on; this provider's prompt cache starts cold",
                        provider.label(),
                        provider.model()
                    ));
                }
                Err(e) => app.notice_error(format!("cannot switch: {e}")),
            }
            request(&mut next_frame, Instant::now(), last_frame);
        }
        // `/copy`: OSC 52 goes to the terminal itself, between frames.
        if let Some(bytes) = app.take_terminal_write() {
            use std::io::Write;
            let mut out = std::io::stdout();
            let _ = out.write_all(bytes.as_bytes()).and_then(|()| out.flush());
        }
        // Ctrl+X: the draft in $VISUAL/$EDITOR, with the terminal handed over meanwhile.
        if let Some(draft) = app.take_editor_request() {
            leave(enhanced);
            let edited = crate::ui::editor::edit(&draft);
            enter()?;
            terminal.clear()?;
            match edited {
                Ok(text) => app.editor_done(text),
                Err(e) => app.notice_error(e.to_string()),
            }
            request(&mut next_frame, Instant::now(), last_frame);
        }
        let deadline = next_frame.map(tokio::time::Instant::from_std);
        tokio::select! {
            event = terminal_events.next() => match event {
                Some(Ok(event)) => {
                    app.handle_terminal_event(event);
                    request(&mut next_frame, Instant::now(), last_frame);
                }
                Some(Err(e)) => return Err(e.into()),
                None => break,
            },
            event = handle.events.recv() => match event {
                Some(event) => {
                    app.handle_agent_event(event);
                    request(&mut next_frame, Instant::now(), last_frame);
                }
                None => break,
            },
            _ = sleep_until_opt(deadline) => {
                next_frame = None;
                app.settle_at(Instant::now());
                terminal.draw(|frame| app.render(frame))?;
                last_frame = Instant::now();
                if app.is_busy() {
                    app.tick();
                    request(&mut next_frame, last_frame + SPINNER_INTERVAL, last_frame);
                }
                if let Some(at) = app.take_wake() {
                    request(&mut next_frame, at, last_frame);
                }
            }
            Some((generation, list)) = models_rx.recv() => {
                if generation == listing {
                    models = list;
                    app.session.models = models.clone();
                    request(&mut next_frame, Instant::now(), last_frame);
                }
            }
            _ = signals.recv() => break,
        }
    }
    let _ = handle.ops.send(Op::Shutdown);
    // Give the agent a moment to finish cleanly; it must not hold the terminal hostage.
    let _ = tokio::time::timeout(Duration::from_millis(500), &mut handle.join).await;
    Ok(app.exit_summary(&options.session_id))
}

/// The provider and options for the same session on another provider or model, its log read
/// back so the history goes on.
fn switch_session(
    current: &AgentOptions,
    setup: &Setup,
    kind: Option<String>,
    model: Option<String>,
) -> anyhow::Result<(Arc<dyn Provider>, AgentOptions)> {
    let switch = setup
        .switch
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("switching is not available in this session"))?;
    let (provider, mut options) = switch(kind, model)?;
    options.session_id = current.session_id.clone();
    options.mode = current.mode;
    let log = current
        .sessions_dir
        .as_ref()
        .map(|d| d.join(format!("{}.jsonl", current.session_id)))
        .ok_or_else(|| anyhow::anyhow!("this session keeps no log to go on from"))?;
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
