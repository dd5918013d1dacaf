//! The session log: every `AgentEvent` of a session and every change to its history, one JSON
//! object per line, as it happens; and reading it back to resume.
//!
//! Lives at `CHATCLI_HOME/sessions/<session id>.jsonl`, in a directory only the user can read
//! (0700), in a file created exclusively (0600, never through a planted symlink). The agent never
//! writes it itself: its lines go to a writer thread ([`writer::LogWriter`]), which batches them
//! and writes at the boundaries that matter (a prompt accepted, a tool result, an approval asked,
//! an error, a prompt finished, its cost, every history change), else within
//! [`writer::IDLE_FLUSH`]; the file is synced at the end of every prompt and before any tool call
//! runs (the agent waits for that), so a crash loses at most the text streamed since the last
//! boundary; a torn last line is skipped on resume with a warning, never a refusal.
//! Event lines are exactly what `exec --json` prints; history lines (`history`, `history_reset`)
//! carry the conversation the agent needs to go on; an `at` line (`Stamp`) before each `prompt`
//! and `turn_finished` line says when it happened (for `bench --replay`). Known secrets are masked in every line, on
//! the raw strings (a masked serialised line would miss a key holding `"` or `\`).
//! Writing the log never stops the session, but a failure is never silent either: the first one
//! is kept for the agent to tell the user once (a notice; `exec` also says it on stderr and
//! exits 1 when not one line could be written), and nothing more is written after it.

// A log is read back from disk, where it may be torn or edited: no index that could panic on
// it (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod writer;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::conversation::Message;
use crate::files::File;
use crate::private_fs::{append_private, create_exclusive, create_private_dir};
use crate::protocol::AgentEvent;
use crate::secrets::Secrets;

/// A change to the history, as logged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HistoryRecord {
    /// `history[index] = message` (an append when `index` is the length).
    History { index: usize, message: Message },
    /// The whole history replaced (after `/compact`).
    HistoryReset { messages: Vec<Message> },
}

/// When a prompt started or finished, written just before its `prompt` and `turn_finished`
/// lines: `chatcli bench --replay` takes the user's pauses from them; resume skips them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "at")]
pub struct Stamp {
    /// Seconds since the Unix epoch.
    pub unix_secs: u64,
}

impl Stamp {
    fn now() -> Stamp {
        Stamp {
            unix_secs: crate::clock::now_secs(),
        }
    }
}

/// The start of the notice when not one line of the log could be written (`exec` then exits 1).
pub const LOG_NOT_WRITTEN: &str = "the session log could not be written";
/// The start of the notice when the log stopped being written part-way (a disk that filled).
pub const LOG_STOPPED: &str = "the session log stopped being written";

/// An open session log.
pub struct SessionLog {
    path: PathBuf,
    /// `None` when the file could not be created or opened.
    file: Option<File>,
    secrets: Secrets,
    /// Lines written so far.
    written: u64,
    /// Lines not yet written, each ending in a newline, and how many.
    pending: Vec<u8>,
    pending_lines: u64,
    /// Bytes the file holds (as far as this log knows): what a failed write left is measured
    /// against it.
    len: u64,
    /// Written since the last sync.
    unsynced: bool,
    /// Set at the first failure: nothing more is written (a torn line stays the last one).
    failed: bool,
    /// The failure, until the user has been told (`take_failure`).
    unreported: Option<String>,
}

impl SessionLog {
    /// Creates `dir/<id>.jsonl`; fails if it already exists.
    pub fn create(dir: &Path, id: &str, secrets: Secrets) -> std::io::Result<SessionLog> {
        create_private_dir(dir)?;
        let path = dir.join(format!("{id}.jsonl"));
        // O_CREAT|O_EXCL, 0600: fails on any existing path, a planted symlink included.
        let file = create_exclusive(&path)?;
        Ok(SessionLog::over(path, Some(file), secrets))
    }

    /// Opens an existing log to go on appending (resume).
    pub fn reopen(path: &Path, secrets: Secrets) -> std::io::Result<SessionLog> {
        // Appending to a resumed log never follows a symlink (O_NOFOLLOW) nor waits on a FIFO.
        let file = append_private(path, false)?;
        Ok(SessionLog::over(path.to_path_buf(), Some(file), secrets))
    }

    /// `create`, or `reopen` when `resume` names a log; a failure is kept to be reported once
    /// (`take_failure`) and the session goes on without a log.
    pub fn open_or_report(
        dir: &Path,
        id: &str,
        resume: Option<&Path>,
        secrets: Secrets,
    ) -> SessionLog {
        let (path, opened) = match resume {
            Some(path) => (
                path.to_path_buf(),
                SessionLog::reopen(path, secrets.clone()),
            ),
            None => (
                dir.join(format!("{id}.jsonl")),
                SessionLog::create(dir, id, secrets.clone()),
            ),
        };
        opened.unwrap_or_else(|e| {
            tracing::warn!(path = %path.display(), error = %e, "cannot open the session log");
            let mut log = SessionLog::over(path, None, secrets);
            log.fail(&e);
            log
        })
    }

    fn over(path: PathBuf, file: Option<File>, secrets: Secrets) -> SessionLog {
        let len = file
            .as_ref()
            .and_then(|f| f.metadata().ok())
            .map_or(0, |m| m.len());
        SessionLog {
            path,
            file,
            secrets,
            written: 0,
            pending: Vec::new(),
            pending_lines: 0,
            len,
            unsynced: false,
            failed: false,
            unreported: None,
        }
    }

    fn fail(&mut self, e: &std::io::Error) {
        if self.failed {
            return;
        }
        self.failed = true;
        self.file = None;
        self.pending = Vec::new();
        self.pending_lines = 0;
        let (what, consequence) = if self.written == 0 {
            (LOG_NOT_WRITTEN, "this session cannot be resumed")
        } else {
            (LOG_STOPPED, "what follows will not be resumed")
        };
        self.unreported = Some(format!(
            "{what} ({}: {e}): the answer goes on, but {consequence}",
            self.path.display()
        ));
    }

    /// The failure to tell the user about, once.
    pub fn take_failure(&mut self) -> Option<String> {
        self.unreported.take()
    }

    /// Whether no line could be written since the log was opened.
    pub fn nothing_written(&self) -> bool {
        self.written == 0
    }

    /// Where the log is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queues one line; nothing reaches the file before the next `flush`.
    fn push_line(&mut self, line: std::io::Result<String>) {
        if self.file.is_none() {
            return;
        }
        match line {
            Ok(line) => {
                self.pending.extend_from_slice(line.as_bytes());
                self.pending.push(b'\n');
                self.pending_lines += 1;
            }
            Err(e) => self.fail(&e),
        }
    }

    /// Whether lines are queued and not yet written.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Writes the queued lines in one go; with `sync`, then syncs what was written to disk.
    pub fn flush(&mut self, sync: bool) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        let mut result = Ok(());
        if !self.pending.is_empty() {
            result = file.write_all(&self.pending);
            match &result {
                Ok(()) => {
                    self.written += self.pending_lines;
                    self.len += self.pending.len() as u64;
                    self.unsynced = true;
                }
                Err(_) => {
                    // Part of the batch may have landed (a disk that filled mid-write): the
                    // complete lines in it count as written.
                    let now = file.metadata().map_or(self.len, |m| m.len());
                    let landed = now.saturating_sub(self.len) as usize;
                    let complete = self
                        .pending
                        .iter()
                        .take(landed)
                        .filter(|b| **b == b'\n')
                        .count();
                    self.written += complete as u64;
                }
            }
            self.pending.clear();
            self.pending_lines = 0;
        }
        if result.is_ok() && sync && self.unsynced {
            result = file.sync_data();
            self.unsynced = result.is_err();
        }
        if let Err(e) = result {
            tracing::warn!(path = %self.path.display(), error = %e, "session log write failed; continuing without it");
            self.fail(&e);
        }
    }

    /// Queues one event; writes the batch at a boundary that matters (a prompt accepted, a tool
    /// result, an approval asked, an error, a prompt finished, its cost) and syncs it to disk
    /// when a prompt finishes.
    pub fn append(&mut self, event: &AgentEvent) {
        if matches!(
            event,
            AgentEvent::Prompt { .. } | AgentEvent::TurnFinished { .. }
        ) {
            self.push_line(serde_json::to_string(&Stamp::now()).map_err(std::io::Error::other));
        }
        let line = self
            .secrets
            .to_masked_json(event)
            .map_err(std::io::Error::other);
        self.push_line(line);
        match event {
            AgentEvent::TurnFinished { .. } => self.flush(true),
            AgentEvent::Prompt { .. }
            | AgentEvent::ToolResult { .. }
            | AgentEvent::ApprovalRequest { .. }
            | AgentEvent::Error { .. }
            | AgentEvent::Cost { .. } => self.flush(false),
            _ => {}
        }
    }

    /// Appends a history change and writes it at once. A message holding tool calls is synced
    /// to disk too, before the tools run (the agent waits for it: `LogWriter::settled`), so a
    /// crash mid-tool never loses the call (resume then gives it an `INTERRUPTED` result).
    pub fn append_history(&mut self, record: &HistoryRecord) {
        let holds_calls = matches!(record, HistoryRecord::History { message, .. } if message.tool_uses().next().is_some());
        let line = self
            .secrets
            .to_masked_json(record)
            .map_err(std::io::Error::other);
        self.push_line(line);
        self.flush(holds_calls);
    }
}

impl Drop for SessionLog {
    /// Nothing queued is lost when the log is dropped (the writer thread ending, a resume repair).
    fn drop(&mut self) {
        self.flush(true);
    }
}

/// A session read back from its log.
#[derive(Debug, Clone, Default)]
pub struct Resumed {
    pub id: String,
    pub path: PathBuf,
    pub events: Vec<AgentEvent>,
    pub history: Vec<Message>,
    /// Lines that could not be read (a torn last line after a crash, or damage).
    pub skipped: usize,
    /// What resume changed so a provider accepts the history (one line each).
    pub repairs: Vec<String>,
}

/// The result given on resume to a call the log holds no result for.
pub const INTERRUPTED: &str = "interrupted: chatcli stopped while this call was running (a crash or a kill), so its outcome is unknown; check its effects before running it again";

/// Makes a history a valid request again after a crash: every call gets a result (the
/// `INTERRUPTED` one when the log has none), results without a call are dropped, and roles
/// alternate. Returns one line per change.
pub fn repair(history: &mut Vec<Message>) -> Vec<String> {
    let mut repairs = Vec::new();
    // Two messages of one role in a row (a crash between a prompt and its answer, then another
    // prompt) are one message to every wire; an empty one is nothing.
    let before = history.len();
    merge_neighbours(history);
    if history.len() < before {
        repairs.push(format!(
            "joined {} messages that followed one of the same role",
            before - history.len()
        ));
    }
    drop_results_without_calls(history, &mut repairs);
    if !repairs.is_empty() {
        merge_neighbours(history);
    }
    answer_every_call(history, &mut repairs);
    merge_neighbours(history);
    open_with_the_user(history, &mut repairs);
    repairs
}

/// Drops the results whose call is not in the assistant message just before, and repeated ones.
fn drop_results_without_calls(history: &mut [Message], repairs: &mut Vec<String>) {
    use crate::conversation::{ContentBlock, Role};
    let mut calls_before: Vec<String> = Vec::new();
    for message in history.iter_mut() {
        if message.role == Role::Assistant {
            calls_before = message
                .tool_uses()
                .map(|(id, _, _)| id.to_string())
                .collect();
            continue;
        }
        // A user message answers only the calls of an assistant message right before it.
        let calls = std::mem::take(&mut calls_before);
        let mut seen = std::collections::HashSet::new();
        message.content.retain(|block| match block {
            ContentBlock::ToolResult { tool_use_id, .. } => {
                let keep = calls.contains(tool_use_id) && seen.insert(tool_use_id.clone());
                if !keep {
                    repairs.push(format!("dropped a result without a call ({tool_use_id})"));
                }
                keep
            }
            _ => true,
        });
    }
}

/// Gives every call a result in the user message after it (put there when missing): its own,
/// in call order, or the `INTERRUPTED` one.
fn answer_every_call(history: &mut Vec<Message>, repairs: &mut Vec<String>) {
    use crate::conversation::Role;
    let mut i = 0;
    while let Some(message) = history.get(i) {
        let calls: Vec<String> = if message.role == Role::Assistant {
            message
                .tool_uses()
                .map(|(id, _, _)| id.to_string())
                .collect()
        } else {
            Vec::new()
        };
        if calls.is_empty() {
            i += 1;
            continue;
        }
        if history.get(i + 1).is_none_or(|m| m.role != Role::User) {
            history.insert(
                i + 1,
                Message {
                    role: Role::User,
                    content: Vec::new(),
                },
            );
        }
        // There is one now: it was there or was just put there.
        let Some(next) = history.get_mut(i + 1) else {
            break;
        };
        order_results(next, &calls, repairs);
        i += 2;
    }
}

/// Puts the results of `calls` first in `answer`, in call order, an `INTERRUPTED` one for each
/// call without; the rest of the message follows.
fn order_results(answer: &mut Message, calls: &[String], repairs: &mut Vec<String>) {
    use crate::conversation::ContentBlock;
    let (mut results, others): (Vec<ContentBlock>, Vec<ContentBlock>) = answer
        .content
        .drain(..)
        .partition(|b| matches!(b, ContentBlock::ToolResult { .. }));
    let mut ordered = Vec::with_capacity(calls.len() + others.len());
    for id in calls {
        let found = results.iter().position(
            |b| matches!(b, ContentBlock::ToolResult { tool_use_id, .. } if tool_use_id == id),
        );
        match found {
            Some(at) => ordered.push(results.remove(at)),
            None => {
                repairs.push(format!("call {id} had no result: marked as interrupted"));
                ordered.push(ContentBlock::ToolResult {
                    tool_use_id: id.clone(),
                    content: INTERRUPTED.to_string(),
                    is_error: true,
                });
            }
        }
    }
    ordered.extend(others);
    answer.content = ordered;
}

/// Every wire wants the conversation to open with the user: a placeholder prompt goes before a
/// history that begins with an answer.
fn open_with_the_user(history: &mut Vec<Message>, repairs: &mut Vec<String>) {
    use crate::conversation::{ContentBlock, Role};
    if history.first().is_some_and(|m| m.role == Role::Assistant) {
        history.insert(
            0,
            Message {
                role: Role::User,
                content: vec![ContentBlock::Text {
                    text: "(the start of this conversation was lost)".into(),
                }],
            },
        );
        repairs.push("the history began with an answer: a placeholder prompt was put first".into());
    }
}

/// Drops empty messages and joins the neighbours of the same role that this leaves.
fn merge_neighbours(history: &mut Vec<Message>) {
    let old = std::mem::take(history);
    for message in old {
        if message.content.is_empty() {
            continue;
        }
        match history.last_mut() {
            Some(last) if last.role == message.role => last.content.extend(message.content),
            _ => history.push(message),
        }
    }
}

/// Whether `path` is a regular file (never a directory, FIFO or device named `*.jsonl`).
fn is_regular_file(path: &Path) -> bool {
    crate::files::metadata(path).is_ok_and(|m| m.is_file())
}

/// Reads a session log; unreadable lines are skipped and counted, calls without results are
/// repaired (see `repair`). Only a regular file is read: a FIFO would block and a directory spin.
pub fn load(path: &Path) -> std::io::Result<Resumed> {
    if !is_regular_file(path) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    // Streamed line by line: a long session's log can be hundreds of MB, so it is never read
    // whole; the door refuses a link planted at the path and never waits on a FIFO.
    let file = crate::files::open_regular(path)?;
    let id = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let mut resumed = Resumed {
        id,
        path: path.to_path_buf(),
        ..Resumed::default()
    };
    let mut reader = BufReader::new(file);
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        match reader.read_until(b'\n', &mut bytes) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                // A read error repeats forever on some files: give up on the rest, once.
                tracing::warn!(path = %path.display(), error = %e, "stopped reading a session log");
                resumed.skipped += 1;
                break;
            }
        }
        let Ok(line) = std::str::from_utf8(&bytes) else {
            resumed.skipped += 1;
            continue;
        };
        let line = line.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            continue;
        }
        if let Ok(record) = serde_json::from_str::<HistoryRecord>(line) {
            match record {
                HistoryRecord::History { index, message } => {
                    if let Some(slot) = resumed.history.get_mut(index) {
                        *slot = message;
                        resumed.history.truncate(index + 1);
                    } else {
                        resumed.history.push(message);
                    }
                }
                HistoryRecord::HistoryReset { messages } => resumed.history = messages,
            }
            continue;
        }
        if serde_json::from_str::<Stamp>(line).is_ok() {
            continue;
        }
        match serde_json::from_str::<AgentEvent>(line) {
            Ok(event) => resumed.events.push(event),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "skipping an unreadable session line");
                resumed.skipped += 1;
            }
        }
    }
    resumed.repairs = repair(&mut resumed.history);
    Ok(resumed)
}

/// One session on disk, for the resume picker.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    pub id: String,
    pub path: PathBuf,
    pub modified: std::time::SystemTime,
    pub first_prompt: String,
}

/// The sessions in `dir`, newest first.
pub fn list(dir: &Path) -> Vec<SessionInfo> {
    let Ok(entries) = crate::files::list_dir(dir) else {
        return Vec::new();
    };
    let mut sessions: Vec<SessionInfo> = entries
        .into_iter()
        .filter_map(|e| {
            let path = e.path();
            let id = path.file_stem()?.to_string_lossy().to_string();
            // The entry itself: a link named `*.jsonl` is not listed, as `load` would refuse it.
            if path.extension()? != "jsonl" || !e.file_type().is_ok_and(|t| t.is_file()) {
                return None;
            }
            let modified = e.metadata().ok()?.modified().ok()?;
            // Streamed, and only the first 50 lines: the rest of a long log is never read here.
            let first_prompt = crate::files::open_regular(&path)
                .ok()
                .and_then(|f| {
                    BufReader::new(f)
                        .lines()
                        .map_while(Result::ok)
                        .take(50)
                        .find_map(|l| match serde_json::from_str::<AgentEvent>(&l) {
                            Ok(AgentEvent::Prompt { text, .. }) => Some(text),
                            _ => None,
                        })
                })
                .unwrap_or_default();
            Some(SessionInfo {
                id,
                path,
                modified,
                first_prompt,
            })
        })
        .collect();
    sessions.sort_by(|a, b| b.modified.cmp(&a.modified).then(b.id.cmp(&a.id)));
    sessions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_events_as_json_lines_in_a_private_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let sessions = dir.path().join("sessions");
        let mut log = SessionLog::create(&sessions, "s1", Secrets::default()).expect("create");
        log.append(&AgentEvent::TurnStarted { turn: 1 });
        log.append(&AgentEvent::TurnFinished {
            text: "done".into(),
            stop_reason: "end_turn".into(),
        });
        let text = std::fs::read_to_string(log.path()).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], r#"{"type":"turn_started","turn":1}"#);
        // The end of a prompt is stamped (for `bench --replay`), and resume skips the stamp.
        assert!(
            lines[1].starts_with(r#"{"type":"at","unix_secs":"#),
            "{}",
            lines[1]
        );
        assert_eq!(lines.len(), 3);
        let resumed = load(log.path()).expect("load");
        assert_eq!((resumed.events.len(), resumed.skipped), (2, 0));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(log.path())
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
            let dir_mode = std::fs::metadata(&sessions)
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(dir_mode & 0o777, 0o700);
        }
        assert!(
            SessionLog::create(&sessions, "s1", Secrets::default()).is_err(),
            "never reopened or overwritten"
        );
    }

    #[test]
    fn lines_wait_for_a_boundary_and_nothing_queued_is_lost_on_drop() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut log = SessionLog::create(dir.path(), "s", Secrets::default()).expect("create");
        let path = log.path().to_path_buf();
        let lines = || {
            std::fs::read_to_string(&path)
                .expect("read")
                .lines()
                .count()
        };
        log.append(&AgentEvent::TurnStarted { turn: 1 });
        for piece in ["a", "b", "c"] {
            log.append(&AgentEvent::TextDelta { text: piece.into() });
        }
        assert_eq!(lines(), 0, "deltas are batched, not written one by one");
        log.append(&AgentEvent::ToolResult {
            id: "call_1".into(),
            name: "read_file".into(),
            ok: true,
            chars: 1,
            saved_path: None,
            duration_ms: 0,
            error: None,
            exit_code: None,
            output: "x".into(),
            diff: None,
        });
        assert_eq!(lines(), 5, "a tool result writes the batch");
        log.append(&AgentEvent::TextDelta { text: "d".into() });
        drop(log);
        assert_eq!(lines(), 6, "dropping the log writes what was queued");
    }

    #[test]
    fn history_is_rebuilt_and_a_torn_last_line_is_skipped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut log = SessionLog::create(dir.path(), "s", Secrets::default()).expect("create");
        log.append_history(&HistoryRecord::History {
            index: 0,
            message: Message::user_text("a"),
        });
        log.append(&AgentEvent::TurnStarted { turn: 1 });
        log.append_history(&HistoryRecord::History {
            index: 0,
            message: Message::user_text("a, merged"),
        });
        log.append_history(&HistoryRecord::History {
            index: 1,
            message: answer("b"),
        });
        drop(log);
        let path = dir.path().join("s.jsonl");
        let mut text = std::fs::read_to_string(&path).expect("read");
        text.push_str("{\"type\":\"turn_fini");
        std::fs::write(&path, text).expect("write");
        let resumed = load(&path).expect("load");
        assert_eq!(resumed.history.len(), 2);
        assert_eq!(resumed.history[0].text(), "a, merged");
        assert_eq!(resumed.events, vec![AgentEvent::TurnStarted { turn: 1 }]);
        assert_eq!(resumed.skipped, 1);
    }

    fn call(id: &str) -> Message {
        use crate::conversation::{ContentBlock, Role};
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: id.into(),
                name: "run_command".into(),
                input: serde_json::json!({"cmd": "make deploy"}),
            }],
        }
    }

    fn result(id: &str) -> Message {
        use crate::conversation::{ContentBlock, Role};
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id.into(),
                content: "ok".into(),
                is_error: false,
            }],
        }
    }

    fn results_of(message: &Message) -> Vec<(String, String)> {
        use crate::conversation::ContentBlock;
        message
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } => Some((tool_use_id.clone(), content.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_call_logged_without_its_result_gets_an_interrupted_result_on_resume() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut log = SessionLog::create(dir.path(), "s", Secrets::default()).expect("create");
        log.append_history(&HistoryRecord::History {
            index: 0,
            message: Message::user_text("deploy it"),
        });
        log.append_history(&HistoryRecord::History {
            index: 1,
            message: call("c1"),
        });
        drop(log);
        let resumed = load(&dir.path().join("s.jsonl")).expect("load");
        assert_eq!(resumed.history.len(), 3);
        assert_eq!(
            results_of(&resumed.history[2]),
            vec![("c1".to_string(), INTERRUPTED.to_string())]
        );
        assert_eq!(resumed.repairs.len(), 1, "{:?}", resumed.repairs);
    }

    #[test]
    fn orphan_calls_and_orphan_results_are_repaired() {
        let mut history = vec![
            Message::user_text("a"),
            call("c1"),
            // A new prompt landed after a crash, before any result.
            Message::user_text("go on"),
            call("c2"),
            result("c2"),
            // A result whose call was lost.
            result("zz"),
        ];
        let repairs = repair(&mut history);
        // The two result messages are joined, the stray result dropped, the lost one marked.
        assert_eq!(repairs.len(), 3, "{repairs:?}");
        assert_eq!(history.len(), 5);
        assert_eq!(
            results_of(&history[2]),
            vec![("c1".to_string(), INTERRUPTED.to_string())]
        );
        assert_eq!(
            history[2].text(),
            "go on",
            "the prompt stays after the result"
        );
        assert_eq!(results_of(&history[4]), vec![("c2".into(), "ok".into())]);
        let mut again = history.clone();
        assert!(repair(&mut again).is_empty(), "a repaired history is valid");
        assert_eq!(again, history);
    }

    fn answer(text: &str) -> Message {
        Message {
            role: crate::conversation::Role::Assistant,
            content: vec![crate::conversation::ContentBlock::Text { text: text.into() }],
        }
    }

    #[test]
    fn a_repaired_history_alternates_roles_and_opens_with_the_user() {
        use crate::conversation::Role;
        let mut history = vec![
            answer("an answer whose prompt was lost"),
            Message::user_text("one"),
            Message::user_text("two, after a crash"),
            answer("a"),
            answer("b"),
        ];
        let repairs = repair(&mut history);
        assert!(!repairs.is_empty());
        let roles: Vec<Role> = history.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            vec![Role::User, Role::Assistant, Role::User, Role::Assistant]
        );
        assert_eq!(history[2].content.len(), 2, "both prompts are kept");
        let mut again = history.clone();
        assert!(repair(&mut again).is_empty(), "a repaired history is valid");
    }

    #[cfg(unix)]
    #[test]
    fn directories_and_fifos_named_jsonl_are_never_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("20990101-000000-aaaaaa.jsonl")).expect("mkdir");
        let fifo = dir.path().join("20990101-000000-bbbbbb.jsonl");
        let c_path = std::ffi::CString::new(fifo.display().to_string()).expect("path");
        // SAFETY: mkfifo reads a valid NUL-terminated path and touches nothing else.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let mut log = SessionLog::create(dir.path(), "20200101-000000-cccccc", Secrets::default())
            .expect("create");
        log.append(&AgentEvent::Prompt {
            text: "the real one".into(),
            mode: crate::protocol::Mode::Chat,
        });
        drop(log);
        let sessions = list(dir.path());
        assert_eq!(sessions.len(), 1, "{sessions:?}");
        assert_eq!(sessions[0].first_prompt, "the real one");
        assert!(load(&fifo).is_err(), "a FIFO is refused, not waited on");
        assert!(load(&dir.path().join("20990101-000000-aaaaaa.jsonl")).is_err());
    }
}
