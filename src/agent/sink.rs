//! The one way out of the agent: every `AgentEvent` is masked, logged and forwarded here.
//!
//! Mental model: the session log, `exec --json` and the TUI must never disagree about what
//! happened, so there is exactly one function that emits an event (`EventSink::emit`), and the
//! tool runner, which works on several calls at once, holds a clone of the same sink rather than
//! a channel of its own. History changes go to the same log through `append_history`, so the log
//! keeps its order. The thing a newcomer gets wrong: sending on the raw channel "just for this
//! one event" — that is how tool events once missed the log and `--resume` showed `…`.

use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use crate::protocol::AgentEvent;
use crate::secrets::Secrets;
use crate::session_log::{HistoryRecord, SessionLog};

/// Where the agent's events go: masking, the session log, then the front end.
#[derive(Clone)]
pub struct EventSink {
    inner: Arc<Inner>,
}

struct Inner {
    secrets: Secrets,
    log: Mutex<Option<SessionLog>>,
    front: mpsc::UnboundedSender<AgentEvent>,
}

impl EventSink {
    /// A sink writing to `log` (if any) and forwarding to `front`.
    pub fn new(
        secrets: Secrets,
        log: Option<SessionLog>,
        front: mpsc::UnboundedSender<AgentEvent>,
    ) -> Self {
        EventSink {
            inner: Arc::new(Inner {
                secrets,
                log: Mutex::new(log),
                front,
            }),
        }
    }

    /// Masks known secrets in the event's free text, appends it to the log, and forwards it.
    pub fn emit(&self, event: AgentEvent) {
        let event = mask_event(&self.inner.secrets, event);
        self.with_log(|log| log.append(&event));
        // The receiver gone means the front end is shutting down; there is nobody left to tell.
        let _ = self.inner.front.send(event);
    }

    /// Appends a history change to the log, in order with the events.
    pub fn append_history(&self, record: &HistoryRecord) {
        self.with_log(|log| log.append_history(record));
    }

    fn with_log(&self, f: impl FnOnce(&mut SessionLog)) {
        // A poisoned lock means a writer panicked mid-line; the log is best effort, go on.
        let mut guard = match self.inner.log.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(log) = guard.as_mut() {
            f(log);
        }
    }
}

/// The event with known secrets masked in every field that carries free text.
fn mask_event(secrets: &Secrets, event: AgentEvent) -> AgentEvent {
    let mask = |s: String| secrets.mask(&s);
    match event {
        AgentEvent::Error { message } => AgentEvent::Error {
            message: mask(message),
        },
        AgentEvent::Notice { message } => AgentEvent::Notice {
            message: mask(message),
        },
        AgentEvent::Retrying {
            attempt,
            max,
            wait_ms,
            reason,
        } => AgentEvent::Retrying {
            attempt,
            max,
            wait_ms,
            reason: mask(reason),
        },
        AgentEvent::ToolResult {
            id,
            name,
            ok,
            chars,
            saved_path,
            duration_ms,
            error,
            exit_code,
            output,
            diff,
        } => AgentEvent::ToolResult {
            id,
            name,
            ok,
            chars,
            saved_path,
            duration_ms,
            error: error.map(mask),
            exit_code,
            output: mask(output),
            diff: diff.map(mask),
        },
        other => other,
    }
}
