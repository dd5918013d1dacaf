//! The one way out of the agent: every `AgentEvent` is masked, logged and forwarded here.
//!
//! Mental model: the session log, `exec --json` and the TUI must never disagree about what
//! happened, so there is exactly one function that emits an event (`EventSink::emit`), and the
//! tool runner, which works on several calls at once, holds a clone of the same sink rather than
//! a channel of its own. History changes go to the same log through `append_history`, so the log
//! keeps its order. The thing a newcomer gets wrong: sending on the raw channel "just for this
//! one event" — that is how tool events once missed the log and `--resume` showed `…`.
//!
//! A dispatched specialist gets a scoped clone (`EventSink::scoped`): its events go out through
//! the same log and front end wrapped as `AgentEvent::Scoped`, masked by a masker of its own (a
//! delta held back in one specialist's stream must not swallow another's), and its history never
//! enters the session log (the log's history is the orchestrator's conversation).
//!
//! Every event leaves stamped with the submission the agent is answering (`answering`), which
//! the agent sets when it takes an op; a tool runner's or specialist's events carry the id of
//! the prompt that started them, because they share this state.
//!
//! Emitting never waits: the log is written by its own thread (`session_log::writer`), and the
//! front end is fed through a bounded channel that merges text deltas when it lags (`outbox`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use crate::protocol::{AgentEvent, Event, SESSION_EVENT, SubmissionId};
use crate::secrets::{EventMasker, Secrets};
use crate::session_log::HistoryRecord;
use crate::session_log::writer::LogWriter;

/// Where the agent's events go: masking, the session log, then the front end.
#[derive(Clone)]
pub struct EventSink {
    inner: Arc<Inner>,
    scope: Option<Arc<Scope>>,
}

/// The specialist a scoped sink speaks for.
struct Scope {
    agent: String,
    task: u32,
    masker: Mutex<EventMasker>,
}

struct Inner {
    secrets: Secrets,
    /// The masker holds back a delta that may be the start of a key; the lock also keeps the
    /// log's order and the front end's the same when several tool runners emit at once.
    masker: Mutex<EventMasker>,
    /// The session log's writer thread, when there is a log.
    log: Option<LogWriter>,
    /// The forwarder to the front end (`outbox`): never blocks, never drops.
    front: mpsc::UnboundedSender<Event>,
    /// The submission being answered: the id every event leaves with.
    answering: AtomicU64,
}

impl EventSink {
    /// A sink writing to `log` (if any) and forwarding to `front`.
    pub fn new(
        secrets: Secrets,
        log: Option<LogWriter>,
        front: mpsc::UnboundedSender<Event>,
    ) -> Self {
        EventSink {
            inner: Arc::new(Inner {
                masker: Mutex::new(EventMasker::new(secrets.clone())),
                log,
                secrets,
                front,
                answering: AtomicU64::new(SESSION_EVENT),
            }),
            scope: None,
        }
    }

    /// A sink for specialist `agent` running task `task`: same log and front end, events wrapped
    /// as `Scoped`, no history records.
    pub fn scoped(&self, agent: &str, task: u32) -> EventSink {
        EventSink {
            inner: Arc::clone(&self.inner),
            scope: Some(Arc::new(Scope {
                agent: agent.to_string(),
                task,
                masker: Mutex::new(EventMasker::new(self.inner.secrets.clone())),
            })),
        }
    }

    /// From now on, events answer submission `id`.
    pub fn answering(&self, id: SubmissionId) {
        self.inner.answering.store(id, Ordering::Relaxed);
    }

    fn stamped(&self, msg: AgentEvent) -> Event {
        Event {
            id: self.inner.answering.load(Ordering::Relaxed),
            msg,
        }
    }

    /// Masks known secrets in the event (across text-delta boundaries), queues it for the log,
    /// and forwards it; a log that could not be written is said once, then the session goes on.
    pub fn emit(&self, event: AgentEvent) {
        // A specialist's events are masked by its own masker, then wrapped; the orchestrator's
        // go through the shared one below.
        let scoped = match &self.scope {
            Some(scope) => {
                let mut masker = match scope.masker.lock() {
                    Ok(guard) => guard,
                    Err(poisoned) => poisoned.into_inner(),
                };
                Ok(masker
                    .filter(event)
                    .into_iter()
                    .map(|e| e.scoped(&scope.agent, scope.task))
                    .collect::<Vec<_>>())
            }
            None => Err(event),
        };
        {
            let mut masker = self.lock();
            let events = match scoped {
                Ok(events) => events,
                Err(event) => masker.filter(event),
            };
            for event in events {
                if let Some(log) = &self.inner.log {
                    log.append(&event);
                }
                // The receiver gone means the front end is shutting down; nobody is left to tell.
                let _ = self.inner.front.send(self.stamped(event));
            }
        }
        self.report_log_failure();
    }

    /// Appends a history change to the log, in order with the events.
    pub fn append_history(&self, record: &HistoryRecord) {
        if self.scope.is_some() {
            return;
        }
        let _masker = self.lock();
        if let Some(log) = &self.inner.log {
            log.append_history(record);
        }
    }

    /// Waits (asynchronously: the task yields, nothing blocks) until everything emitted so far
    /// is written and synced, then says a failure if there was one. Used before tool calls run
    /// and when a prompt ends.
    pub async fn settled(&self) {
        if let Some(log) = &self.inner.log {
            log.settled().await;
        }
        self.report_log_failure();
    }

    fn report_log_failure(&self) {
        if let Some(message) = self.inner.log.as_ref().and_then(LogWriter::take_failure) {
            let _ = self.inner.front.send(self.stamped(AgentEvent::Notice {
                message: self.inner.secrets.mask(&message),
            }));
        }
    }

    /// `text` with every known secret masked (tool results, before they enter the conversation).
    pub fn mask(&self, text: &str) -> String {
        self.inner.secrets.mask(text)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, EventMasker> {
        // A poisoned lock means an emitter panicked mid-event; the masker is still usable.
        match self.inner.masker.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}
