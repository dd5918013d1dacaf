//! Prompt history: Up/Down in the composer walk earlier prompts, Ctrl+R searches them.
//!
//! Entries are this session's prompts first (newest first), then earlier sessions', read from
//! `CHATCLI_HOME/history.jsonl` (one `{"text": …}` object per line, 0600, secrets masked, capped
//! at `MAX_ENTRIES`). Walking keeps the draft being typed: going past the newest entry gives it
//! back. A history that cannot be read or written is an inconvenience, never an error: the
//! session goes on with what it has in memory.

// The history file is read back from disk: no index that could panic on it (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::secrets::Secrets;

/// Entries kept on disk.
pub const MAX_ENTRIES: usize = 5_000;

#[derive(Serialize, Deserialize)]
struct Entry {
    text: String,
}

/// The prompts the user can walk back to, oldest first.
#[derive(Debug, Default)]
pub struct PromptHistory {
    entries: Vec<String>,
    /// Where new entries are appended; `None` keeps them in memory only.
    path: Option<PathBuf>,
    secrets: Secrets,
    /// The walk: how many entries back from the newest (0 = the draft).
    walk: usize,
    /// The draft typed before walking began.
    draft: Option<String>,
}

impl PromptHistory {
    /// Loads `path` (missing or unreadable: empty), keeping at most `MAX_ENTRIES`.
    pub fn load(path: &Path, secrets: Secrets) -> Self {
        let (entries, over) = read_entries(path);
        let entries: Vec<String> = entries.into();
        if over {
            rewrite(path, &entries);
        }
        PromptHistory {
            entries,
            path: Some(path.to_path_buf()),
            secrets,
            walk: 0,
            draft: None,
        }
    }

    /// Adds a sent prompt (masked) and ends any walk.
    pub fn push(&mut self, text: &str) {
        self.walk = 0;
        self.draft = None;
        if text.trim().is_empty() {
            return;
        }
        let text = self.secrets.mask(text);
        if self.entries.last() == Some(&text) {
            return;
        }
        self.entries.push(text.clone());
        if let Some(path) = &self.path {
            append(path, &text);
            if self.entries.len() > MAX_ENTRIES + MAX_ENTRIES / 10 {
                self.entries.drain(..self.entries.len() - MAX_ENTRIES);
                rewrite(path, &self.entries);
            }
        }
    }

    /// The entry one step older than the current one; `draft` is what the composer holds.
    pub fn older(&mut self, draft: &str) -> Option<String> {
        if self.walk >= self.entries.len() {
            return None;
        }
        if self.walk == 0 {
            self.draft = Some(draft.to_string());
        }
        self.walk += 1;
        self.entries.get(self.entries.len() - self.walk).cloned()
    }

    /// The entry one step newer, or the saved draft past the newest; `None` when not walking.
    pub fn newer(&mut self) -> Option<String> {
        if self.walk == 0 {
            return None;
        }
        self.walk -= 1;
        if self.walk == 0 {
            return Some(self.draft.take().unwrap_or_default());
        }
        self.entries.get(self.entries.len() - self.walk).cloned()
    }

    /// Whether a walk is under way.
    pub fn walking(&self) -> bool {
        self.walk > 0
    }

    /// Ends the walk without changing the composer (the user edited the entry).
    pub fn stop_walking(&mut self) {
        self.walk = 0;
        self.draft = None;
    }

    /// The newest entry containing `query` (case-insensitive) older than `before` entries back;
    /// returns how far back it is and its text.
    pub fn search(&self, query: &str, before: usize) -> Option<(usize, String)> {
        let needle = query.to_lowercase();
        self.entries
            .iter()
            .rev()
            .enumerate()
            .skip(before)
            .find(|(_, e)| e.to_lowercase().contains(&needle))
            .map(|(i, e)| (i + 1, e.clone()))
    }

    /// The entries, oldest first.
    pub fn entries(&self) -> &[String] {
        &self.entries
    }
}

/// The last `MAX_ENTRIES` entries of the history file, and whether it held more. Streamed line by
/// line through the file door (a link planted at the path or a FIFO is refused, and reads as an
/// empty history): a history that grew past its trim is never held whole.
fn read_entries(path: &Path) -> (VecDeque<String>, bool) {
    let mut entries = VecDeque::new();
    let mut over = false;
    let Ok(file) = crate::files::open_regular(path) else {
        return (entries, over);
    };
    let mut reader = BufReader::new(file);
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        match reader.read_until(b'\n', &mut bytes) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "stopped reading the prompt history");
                break;
            }
        }
        let Some(entry) = std::str::from_utf8(&bytes)
            .ok()
            .and_then(|l| serde_json::from_str::<Entry>(l.trim_end_matches(['\n', '\r'])).ok())
        else {
            continue;
        };
        if entry.text.trim().is_empty() {
            continue;
        }
        entries.push_back(entry.text);
        if entries.len() > MAX_ENTRIES {
            entries.pop_front();
            over = true;
        }
    }
    (entries, over)
}

fn line(text: &str) -> String {
    serde_json::to_string(&Entry {
        text: text.to_string(),
    })
    .unwrap_or_default()
}

fn append(path: &Path, text: &str) {
    let result = crate::private_fs::append_private(path, true)
        .and_then(|mut f| writeln!(f, "{}", line(text)));
    if let Err(e) = result {
        tracing::warn!(path = %path.display(), error = %e, "cannot append to the prompt history");
    }
}

fn rewrite(path: &Path, entries: &[String]) {
    let body: String = entries.iter().map(|e| line(e) + "\n").collect();
    // `history.jsonl.tmp` beside it, 0600, renamed over it: never half a history, never through
    // a planted link.
    if let Err(e) = crate::private_fs::replace_private(path, body.as_bytes()) {
        tracing::warn!(path = %path.display(), error = %e, "cannot trim the prompt history");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_back_and_forth_keeping_the_draft() {
        let mut h = PromptHistory::default();
        h.push("first");
        h.push("second");
        assert_eq!(h.older("half typed").as_deref(), Some("second"));
        assert_eq!(h.older("ignored").as_deref(), Some("first"));
        assert_eq!(h.older("ignored"), None, "no older entry");
        assert_eq!(h.newer().as_deref(), Some("second"));
        assert_eq!(
            h.newer().as_deref(),
            Some("half typed"),
            "the draft comes back"
        );
        assert_eq!(h.newer(), None);
        assert_eq!(h.search("fir", 0), Some((2, "first".into())));
        assert_eq!(h.search("s", 1), Some((2, "first".into())));
    }

    #[test]
    fn persists_privately_masked_and_capped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("history.jsonl");
        let lines: String = (0..MAX_ENTRIES + 10)
            .map(|i| line(&format!("prompt {i}")) + "\n")
            .collect();
        std::fs::write(&path, lines).expect("write");
        let secrets = Secrets::of(&["sk-live-1234567890abcdef"]);
        let mut h = PromptHistory::load(&path, secrets);
        assert_eq!(h.entries().len(), MAX_ENTRIES);
        assert_eq!(h.entries()[0], "prompt 10");
        h.push("use key sk-live-1234567890abcdef please");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(!text.contains("sk-live-1234567890abcdef"), "masked on disk");
        assert_eq!(text.lines().count(), MAX_ENTRIES + 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let again = PromptHistory::load(&path, Secrets::default());
        assert!(
            again
                .entries()
                .last()
                .is_some_and(|e| e.contains("use key"))
        );
    }
}
