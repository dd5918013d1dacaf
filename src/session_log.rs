//! The session log: every `AgentEvent` of a session, one JSON object per line, as it happens.
//!
//! Lives at `CHATCLI_HOME/sessions/<session id>.jsonl`, in a directory only the user can read
//! (0700), in a file created exclusively (0600, never through a planted symlink). Each line is
//! flushed when written and the file is synced at the end of every prompt, so a crash loses at
//! most the event in flight. Writing the log never stops the session: a failure is logged once.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::logging::create_private_dir;
use crate::protocol::AgentEvent;

/// An open session log.
pub struct SessionLog {
    path: PathBuf,
    file: BufWriter<File>,
    failed: bool,
}

impl SessionLog {
    /// Creates `dir/<id>.jsonl`; fails if it already exists.
    pub fn create(dir: &Path, id: &str) -> std::io::Result<SessionLog> {
        create_private_dir(dir)?;
        let path = dir.join(format!("{id}.jsonl"));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // O_CREAT|O_EXCL fails on any existing path, a planted symlink included.
            options.mode(0o600);
        }
        let file = options.open(&path)?;
        Ok(SessionLog {
            path,
            file: BufWriter::new(file),
            failed: false,
        })
    }

    /// Where the log is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one event and flushes it; syncs to disk when a prompt finishes.
    pub fn append(&mut self, event: &AgentEvent) {
        let result = serde_json::to_string(event)
            .map_err(std::io::Error::other)
            .and_then(|line| writeln!(self.file, "{line}"))
            .and_then(|()| self.file.flush())
            .and_then(|()| match event {
                AgentEvent::TurnFinished { .. } => self.file.get_ref().sync_data(),
                _ => Ok(()),
            });
        if let Err(e) = result
            && !self.failed
        {
            self.failed = true;
            tracing::warn!(path = %self.path.display(), error = %e, "session log write failed; continuing without it");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_events_as_json_lines_in_a_private_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let sessions = dir.path().join("sessions");
        let mut log = SessionLog::create(&sessions, "s1").expect("create");
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
            SessionLog::create(&sessions, "s1").is_err(),
            "never reopened or overwritten"
        );
    }
}
