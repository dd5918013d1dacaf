//! The session log: every `AgentEvent` of a session and every change to its history, one JSON
//! object per line, as it happens; and reading it back to resume.
//!
//! Lives at `CHATCLI_HOME/sessions/<session id>.jsonl`, in a directory only the user can read
//! (0700), in a file created exclusively (0600, never through a planted symlink). Each line is
//! flushed when written and the file is synced at the end of every prompt, so a crash loses at
//! most the line in flight; a torn last line is skipped on resume with a warning, never a refusal.
//! Event lines are exactly what `exec --json` prints; history lines (`history`, `history_reset`)
//! carry the conversation the agent needs to go on. Known secrets are masked in every line, on
//! the raw strings (a masked serialised line would miss a key holding `"` or `\`).
//! Writing the log never stops the session: a failure is logged once.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::conversation::Message;
use crate::logging::create_private_dir;
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

/// An open session log.
pub struct SessionLog {
    path: PathBuf,
    file: BufWriter<File>,
    secrets: Secrets,
    failed: bool,
}

fn open_options(create_new: bool) -> OpenOptions {
    let mut options = OpenOptions::new();
    if create_new {
        options.write(true).create_new(true);
    } else {
        options.append(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_CREAT|O_EXCL fails on any existing path, a planted symlink included; appending to a
        // resumed log never follows a symlink either (O_NOFOLLOW).
        options.mode(0o600);
        if !create_new {
            options.custom_flags(libc::O_NOFOLLOW);
        }
    }
    options
}

impl SessionLog {
    /// Creates `dir/<id>.jsonl`; fails if it already exists.
    pub fn create(dir: &Path, id: &str, secrets: Secrets) -> std::io::Result<SessionLog> {
        create_private_dir(dir)?;
        let path = dir.join(format!("{id}.jsonl"));
        let file = open_options(true).open(&path)?;
        Ok(SessionLog {
            path,
            file: BufWriter::new(file),
            secrets,
            failed: false,
        })
    }

    /// Opens an existing log to go on appending (resume).
    pub fn reopen(path: &Path, secrets: Secrets) -> std::io::Result<SessionLog> {
        let file = open_options(false).open(path)?;
        Ok(SessionLog {
            path: path.to_path_buf(),
            file: BufWriter::new(file),
            secrets,
            failed: false,
        })
    }

    /// Where the log is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write_line(&mut self, line: std::io::Result<String>, sync: bool) {
        let result = line
            .and_then(|line| writeln!(self.file, "{line}"))
            .and_then(|()| self.file.flush())
            .and_then(|()| {
                if sync {
                    self.file.get_ref().sync_data()
                } else {
                    Ok(())
                }
            });
        if let Err(e) = result
            && !self.failed
        {
            self.failed = true;
            tracing::warn!(path = %self.path.display(), error = %e, "session log write failed; continuing without it");
        }
    }

    /// Appends one event and flushes it; syncs to disk when a prompt finishes.
    pub fn append(&mut self, event: &AgentEvent) {
        let sync = matches!(event, AgentEvent::TurnFinished { .. });
        let line = self
            .secrets
            .to_masked_json(event)
            .map_err(std::io::Error::other);
        self.write_line(line, sync);
    }

    /// Appends a history change.
    pub fn append_history(&mut self, record: &HistoryRecord) {
        let line = self
            .secrets
            .to_masked_json(record)
            .map_err(std::io::Error::other);
        self.write_line(line, false);
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
}

/// Reads a session log; unreadable lines are skipped and counted.
pub fn load(path: &Path) -> std::io::Result<Resumed> {
    let file = File::open(path)?;
    let id = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let mut resumed = Resumed {
        id,
        path: path.to_path_buf(),
        ..Resumed::default()
    };
    for line in BufReader::new(file).lines() {
        let line = match line {
            Ok(line) => line,
            Err(_) => {
                resumed.skipped += 1;
                continue;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        if let Ok(record) = serde_json::from_str::<HistoryRecord>(&line) {
            match record {
                HistoryRecord::History { index, message } => {
                    if index < resumed.history.len() {
                        resumed.history[index] = message;
                        resumed.history.truncate(index + 1);
                    } else {
                        resumed.history.push(message);
                    }
                }
                HistoryRecord::HistoryReset { messages } => resumed.history = messages,
            }
            continue;
        }
        match serde_json::from_str::<AgentEvent>(&line) {
            Ok(event) => resumed.events.push(event),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "skipping an unreadable session line");
                resumed.skipped += 1;
            }
        }
    }
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
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut sessions: Vec<SessionInfo> = entries
        .flatten()
        .filter_map(|e| {
            let path = e.path();
            let id = path.file_stem()?.to_string_lossy().to_string();
            if path.extension()? != "jsonl" {
                return None;
            }
            let modified = e.metadata().ok()?.modified().ok()?;
            let first_prompt = File::open(&path)
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
        assert_eq!(lines.len(), 2);
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
            message: Message::user_text("b"),
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
}
