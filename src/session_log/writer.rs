//! The session log's writer thread: the agent hands it lines and never waits on the disk.
//!
//! One thread per session owns the [`SessionLog`] (opening it included). Lines arrive over a
//! channel in the order the agent emitted them; the log batches them and writes at its
//! boundaries, and the thread writes whatever is still queued once nothing has arrived for
//! [`IDLE_FLUSH`]. The agent waits only where durability is a promise — before a tool call runs
//! and at the end of a prompt — through [`LogWriter::settled`], which awaits the thread (an async
//! wait, never a blocked task). A failure is handed back through [`LogWriter::take_failure`] so
//! the agent can say it once. The thing to get right: the channel is never bounded or lossy — the
//! log is the record; it holds what the session produced, and the thread drains it on exit.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;

use super::{HistoryRecord, SessionLog};
use crate::protocol::AgentEvent;
use crate::secrets::Secrets;

/// The longest a queued line waits for a boundary before it is written anyway.
pub const IDLE_FLUSH: Duration = Duration::from_millis(200);

/// What the agent sends the writer thread.
enum Command {
    Event(Box<AgentEvent>),
    History(Box<HistoryRecord>),
    /// Write and sync everything sent before, then answer.
    Settle(oneshot::Sender<()>),
}

/// The agent's end of a session log written by its own thread.
pub struct LogWriter {
    commands: Sender<Command>,
    /// The failure to tell the user about, set by the thread.
    failure: Arc<Mutex<Option<String>>>,
}

/// Where the log goes: a new log `dir/<id>.jsonl`, or `resume` to append to.
pub struct LogTarget {
    pub dir: PathBuf,
    pub id: String,
    pub resume: Option<PathBuf>,
}

impl LogWriter {
    /// Starts the thread, which opens (or creates) the log; a failure to open it, or to start the
    /// thread, is reported through `take_failure` like any write failure.
    pub fn spawn(target: LogTarget, secrets: Secrets) -> LogWriter {
        let (tx, rx) = std::sync::mpsc::channel();
        let failure = Arc::new(Mutex::new(None));
        let shared = Arc::clone(&failure);
        let path = target
            .resume
            .clone()
            .unwrap_or_else(|| target.dir.join(format!("{}.jsonl", target.id)));
        let spawned = std::thread::Builder::new()
            .name("session-log".into())
            .spawn(move || {
                let log = SessionLog::open_or_report(
                    &target.dir,
                    &target.id,
                    target.resume.as_deref(),
                    secrets,
                );
                run(log, &rx, &shared);
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "cannot start the session log writer");
            *lock(&failure) = Some(format!(
                "{} ({}: cannot start its writer thread: {e}): the answer goes on, but this session cannot be resumed",
                super::LOG_NOT_WRITTEN,
                path.display()
            ));
        }
        LogWriter {
            commands: tx,
            failure,
        }
    }

    fn send(&self, command: Command) {
        // A thread that never started or has ended has already said why (`take_failure`).
        let _ = self.commands.send(command);
    }

    /// Queues one event (already masked by the log when written).
    pub fn append(&self, event: &AgentEvent) {
        self.send(Command::Event(Box::new(event.clone())));
    }

    /// Queues a history change.
    pub fn append_history(&self, record: &HistoryRecord) {
        self.send(Command::History(Box::new(record.clone())));
    }

    /// Waits (asynchronously) until everything queued so far is written and synced to disk.
    pub async fn settled(&self) {
        let (tx, rx) = oneshot::channel();
        self.send(Command::Settle(tx));
        // An error means the thread is gone; there is nothing left to wait for.
        let _ = rx.await;
    }

    /// The failure to tell the user about, once.
    pub fn take_failure(&self) -> Option<String> {
        lock(&self.failure).take()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock only means a panic elsewhere mid-update; the value is still usable.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// The thread: applies commands in order until every sender is gone, then writes what is left.
fn run(mut log: SessionLog, commands: &Receiver<Command>, failure: &Mutex<Option<String>>) {
    loop {
        let next = if log.has_pending() {
            commands.recv_timeout(IDLE_FLUSH)
        } else {
            commands.recv().map_err(|_| RecvTimeoutError::Disconnected)
        };
        let done = match next {
            Ok(Command::Event(event)) => {
                log.append(&event);
                false
            }
            Ok(Command::History(record)) => {
                log.append_history(&record);
                false
            }
            Ok(Command::Settle(answer)) => {
                log.flush(true);
                report(&mut log, failure);
                let _ = answer.send(());
                false
            }
            Err(RecvTimeoutError::Timeout) => {
                log.flush(false);
                false
            }
            Err(RecvTimeoutError::Disconnected) => {
                log.flush(true);
                true
            }
        };
        report(&mut log, failure);
        if done {
            return;
        }
    }
}

fn report(log: &mut SessionLog, failure: &Mutex<Option<String>>) {
    if let Some(message) = log.take_failure() {
        *lock(failure) = Some(message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(path: &std::path::Path) -> usize {
        std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
    }

    #[tokio::test]
    async fn a_line_without_a_boundary_is_written_soon_and_settled_means_on_disk() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.jsonl");
        let writer = LogWriter::spawn(
            LogTarget {
                dir: dir.path().to_path_buf(),
                id: "s".into(),
                resume: None,
            },
            Secrets::default(),
        );
        writer.append(&AgentEvent::TextDelta { text: "a".into() });
        // Not a boundary: the thread writes it once nothing more arrives (IDLE_FLUSH).
        let mut waited = 0;
        while lines(&path) == 0 && waited < 100 {
            tokio::time::sleep(Duration::from_millis(50)).await;
            waited += 1;
        }
        assert_eq!(lines(&path), 1);
        writer.append(&AgentEvent::TextDelta { text: "b".into() });
        writer.settled().await;
        assert_eq!(lines(&path), 2);
        assert!(writer.take_failure().is_none());
    }

    #[tokio::test]
    async fn a_log_that_cannot_be_created_is_reported_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "x").expect("write");
        let writer = LogWriter::spawn(
            LogTarget {
                dir: blocker.join("sessions"),
                id: "s".into(),
                resume: None,
            },
            Secrets::default(),
        );
        writer.append(&AgentEvent::TurnStarted { turn: 1 });
        writer.settled().await;
        let failure = writer.take_failure().expect("a failure");
        assert!(
            failure.starts_with(crate::session_log::LOG_NOT_WRITTEN),
            "{failure}"
        );
        assert!(writer.take_failure().is_none(), "said once");
    }
}
