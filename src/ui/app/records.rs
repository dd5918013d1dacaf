//! What tool calls leave behind for later reading: each call's full record (the transcript
//! pager, a call opened in place) and the files their outputs were saved to (Ctrl+O).
//!
//! Keys are the call's id, or `TASK:AGENT/ID` for a specialist's call (ids are only unique
//! within one agent). What a call was about is kept from its start to its end, where it becomes
//! the saved file's source line.

use std::collections::HashMap;

use crate::protocol::AgentEvent;
use crate::ui::chat::ToolOutcome;
use crate::ui::files::SavedFile;
use crate::ui::transcript::{RecordOutcome, Transcript};

/// The session's tool-call records.
#[derive(Debug, Default)]
pub struct CallRecords {
    /// Every tool call's full record, for the transcript pager.
    pub transcript: Transcript,
    /// The files tool outputs were saved to, oldest first.
    pub saved_files: Vec<SavedFile>,
    /// What each running call was about (its URL or path), for the saved-files list.
    sources: HashMap<String, String>,
}

impl CallRecords {
    /// Books a call that started under `key`; `summary` says what it is about.
    pub(super) fn started(
        &mut self,
        key: &str,
        name: &str,
        args: &serde_json::Value,
        summary: String,
    ) {
        self.sources.insert(key.to_string(), summary);
        self.transcript.started(key, name, args);
    }

    /// Books a finished call under `key`: its transcript record and the file its output was
    /// saved to. Returns the outcome to show and the saved path; `None` for any other event.
    pub(super) fn finished(
        &mut self,
        key: &str,
        result: AgentEvent,
    ) -> Option<(ToolOutcome, Option<String>)> {
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
                source: self.sources.remove(key).unwrap_or_default(),
                saved_at: std::time::SystemTime::now(),
            });
        }
        Some((outcome, saved_path))
    }
}
