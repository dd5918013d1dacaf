//! `/rewind`: the conversation goes back to before one of its prompts, and the files that
//! `write_file` and `patch_file` changed since are put back as they were.
//!
//! Before a write or patch runs, the file's current bytes (or the fact that it did not exist)
//! are saved once per prompt and path in the session folder (`sessions/<id>/files/`, 0600 like
//! every file chatcli writes). Rewinding to prompt `k` restores, newest first, every snapshot
//! taken at prompt `k` or later, so each file ends as it was when prompt `k` began. Files over
//! `MAX_SNAPSHOT_BYTES` are not saved (the rewind says it could not restore them); commands run
//! by `run_command` are not undone (the rewind says so too).

use std::path::{Path, PathBuf};

use crate::conversation::{ContentBlock, Message, Role};

/// The snapshots, even if a writer panicked while holding them (what was saved is still there).
fn lock(snapshots: &std::sync::Mutex<FileSnapshots>) -> std::sync::MutexGuard<'_, FileSnapshots> {
    match snapshots.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Files larger than this are not kept for `/rewind`.
pub const MAX_SNAPSHOT_BYTES: u64 = 8 * 1024 * 1024;

/// One file as it was before a prompt changed it.
#[derive(Debug, Clone)]
struct Snapshot {
    prompt: usize,
    path: PathBuf,
    /// Where its old bytes are kept; `None` when the file did not exist.
    saved: Option<PathBuf>,
    /// The file was too large or could not be read: it cannot be restored.
    lost: Option<String>,
}

/// The snapshots of a session.
#[derive(Debug, Default)]
pub struct FileSnapshots {
    dir: Option<PathBuf>,
    taken: Vec<Snapshot>,
}

/// What a rewind put back.
#[derive(Debug, Default, PartialEq)]
pub struct Restored {
    pub restored: Vec<PathBuf>,
    pub removed: Vec<PathBuf>,
    /// Files it could not put back, with why.
    pub failed: Vec<(PathBuf, String)>,
}

impl FileSnapshots {
    /// Snapshots kept under `dir` (created on first use, private).
    pub fn new(dir: Option<PathBuf>) -> Self {
        FileSnapshots {
            dir,
            taken: Vec::new(),
        }
    }

    /// Keeps `path` as it is now, unless this prompt already did.
    pub fn before_write(&mut self, prompt: usize, path: &Path) {
        if self
            .taken
            .iter()
            .any(|s| s.prompt == prompt && s.path == path)
        {
            return;
        }
        let mut snapshot = Snapshot {
            prompt,
            path: path.to_path_buf(),
            saved: None,
            lost: None,
        };
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => snapshot.lost = Some(format!("could not read it before the write ({e})")),
            Ok(meta) if !meta.is_file() => {
                snapshot.lost = Some("not a regular file".into());
            }
            Ok(meta) if meta.len() > MAX_SNAPSHOT_BYTES => {
                snapshot.lost = Some(format!("{} bytes: too large to keep", meta.len()));
            }
            Ok(_) => match self.save(path) {
                Ok(saved) => snapshot.saved = Some(saved),
                Err(e) => snapshot.lost = Some(format!("could not keep a copy ({e})")),
            },
        }
        self.taken.push(snapshot);
    }

    fn save(&self, path: &Path) -> std::io::Result<PathBuf> {
        let dir = self
            .dir
            .clone()
            .ok_or_else(|| std::io::Error::other("no session folder"))?;
        crate::private_fs::create_private_dirs(&dir)?;
        let target = dir.join(format!("{}.bak", self.taken.len()));
        let bytes = std::fs::read(path)?;
        crate::private_fs::write_private(&target, &bytes)?;
        Ok(target)
    }

    /// Restores every file changed at prompt `prompt` or later, newest first.
    pub fn restore_since(&mut self, prompt: usize) -> Restored {
        let mut out = Restored::default();
        let (undo, keep): (Vec<Snapshot>, Vec<Snapshot>) = std::mem::take(&mut self.taken)
            .into_iter()
            .partition(|s| s.prompt >= prompt);
        self.taken = keep;
        // Oldest snapshot of each path last, so each file ends as it was when `prompt` began.
        for snapshot in undo.into_iter().rev() {
            let path = snapshot.path.clone();
            out.restored.retain(|p| *p != path);
            out.removed.retain(|p| *p != path);
            out.failed.retain(|(p, _)| *p != path);
            if let Some(why) = snapshot.lost {
                out.failed.push((path, why));
                continue;
            }
            let result = match &snapshot.saved {
                Some(saved) => std::fs::read(saved)
                    .and_then(|bytes| std::fs::write(&path, bytes))
                    .map(|()| out.restored.push(path.clone())),
                None => match std::fs::remove_file(&path) {
                    Ok(()) => {
                        out.removed.push(path.clone());
                        Ok(())
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                    Err(e) => Err(e),
                },
            };
            if let Err(e) = result {
                out.failed.push((path, e.to_string()));
            }
        }
        out
    }
}

/// Where the prompts of a (resumed) history start: each user message that answers no tool call.
pub fn prompt_starts(history: &[Message]) -> Vec<Option<usize>> {
    history
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            m.role == Role::User
                && !m
                    .content
                    .iter()
                    .any(|b| matches!(b, ContentBlock::ToolResult { .. }))
        })
        .map(|(i, _)| Some(i))
        .collect()
}

impl super::Agent {
    /// Keeps the files the calls would write, as they are before the calls run.
    pub(super) fn snapshot_writes(&mut self, prompt: usize, calls: &[super::tools_run::Call]) {
        // A specialist's writes belong to the orchestrator's prompt that dispatched it.
        let prompt = self.specialist.as_ref().map_or(prompt, |s| s.prompt);
        for (_, name, args) in calls {
            if !matches!(name.as_str(), "write_file" | "patch_file") {
                continue;
            }
            let Some(file) = args.get("file").and_then(|f| f.as_str()) else {
                continue;
            };
            if let Ok(path) = crate::tools::workspace::confine(&self.tool_ctx, file) {
                lock(&self.snapshots).before_write(prompt, &path);
            }
        }
    }

    /// `/rewind`: back to before prompt `prompt`, its files restored.
    pub(super) fn rewind(&mut self, prompt: usize) {
        let Some(start) = self.prompt_starts.iter().skip(prompt).find_map(|s| *s) else {
            self.emit(crate::protocol::AgentEvent::Notice {
                message: format!(
                    "nothing to rewind: prompt {} has no turn in this conversation",
                    prompt + 1
                ),
            });
            return;
        };
        let dropped = self.history.len().saturating_sub(start);
        self.history.truncate(start);
        self.prompt_starts.truncate(prompt);
        self.sink
            .append_history(&crate::session_log::HistoryRecord::HistoryReset {
                messages: self.history.clone(),
            });
        self.logged = super::LoggedHistory {
            len: self.history.len(),
            last: self.history.last().map(super::message_hash),
        };
        // The volatile blocks rode in the dropped messages: send them again.
        self.volatile = crate::prompt::VolatileTracker::default();
        self.skills.forget_sent();
        let files = lock(&self.snapshots).restore_since(prompt);
        let workspace = self.tool_ctx.workspace.clone();
        let show = |p: &PathBuf| {
            p.strip_prefix(&workspace)
                .unwrap_or(p)
                .display()
                .to_string()
        };
        let mut message = format!(
            "rewound to before prompt {} ({dropped} messages dropped)",
            prompt + 1
        );
        if !files.restored.is_empty() {
            let names: Vec<String> = files.restored.iter().map(show).collect();
            message.push_str(&format!("; restored {}", names.join(", ")));
        }
        if !files.removed.is_empty() {
            let names: Vec<String> = files.removed.iter().map(show).collect();
            message.push_str(&format!("; removed {} (created since)", names.join(", ")));
        }
        for (path, why) in &files.failed {
            message.push_str(&format!("; could not restore {}: {why}", show(path)));
        }
        message.push_str("; commands run since are not undone");
        self.emit(crate::protocol::AgentEvent::Notice { message });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_return_to_how_they_were_when_the_prompt_began() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = dir.path().join("a.txt");
        let b = dir.path().join("b.txt");
        std::fs::write(&a, "one").expect("write");
        let mut snaps = FileSnapshots::new(Some(dir.path().join("snaps")));
        snaps.before_write(0, &a);
        std::fs::write(&a, "two").expect("write");
        snaps.before_write(1, &a);
        std::fs::write(&a, "three").expect("write");
        snaps.before_write(1, &b);
        std::fs::write(&b, "new").expect("write");
        let restored = snaps.restore_since(1);
        assert_eq!(std::fs::read_to_string(&a).expect("read"), "two");
        assert!(!b.exists(), "a file created since is removed");
        assert_eq!(restored.restored, vec![a.clone()]);
        assert_eq!(restored.removed, vec![b]);
        let earlier = snaps.restore_since(0);
        assert_eq!(std::fs::read_to_string(&a).expect("read"), "one");
        assert_eq!(earlier.restored, vec![a]);
    }
}
