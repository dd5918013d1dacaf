//! `/rewind`: the conversation goes back to before one of its prompts, and the files that
//! `write_file` and `patch_file` changed since are put back as they were.
//!
//! Only writes that ran are booked: the write tools call the session's journal
//! (`crate::tools::WriteJournal`) after approval, just before they write, and again once the
//! write is done with the bytes the file now holds. A refused or failed write books nothing.
//! The file's old bytes (or the fact that it did not exist) are saved once per prompt and path in
//! the session folder (`sessions/<id>/files/`, 0600), read through the file door (no link
//! followed). Rewinding to prompt `k` restores, newest first, every snapshot taken at prompt `k`
//! or later, through the same door: a path that became a symbolic link (or lies under one) is
//! refused, never written through, and a file whose bytes are no longer what chatcli wrote (the
//! user or a command changed it since) is left alone and shown with its difference, never
//! overwritten or deleted. Files over `MAX_SNAPSHOT_BYTES` are not saved (the rewind says it could
//! not restore them); commands run by `run_command` are not undone (the rewind says so too).
//! Snapshots live as long as the process: after `--resume`, a rewind to a prompt of the earlier
//! run says its files are not restored.

use std::path::{Path, PathBuf};

use sha2::Digest;

use crate::conversation::{ContentBlock, Message, Role};
use crate::tools::workspace::Rooted;

/// The snapshots, even if a writer panicked while holding them (what was saved is still there).
pub(super) fn lock(
    snapshots: &std::sync::Mutex<FileSnapshots>,
) -> std::sync::MutexGuard<'_, FileSnapshots> {
    match snapshots.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// A file's bytes before the session first changed it (`None`: it did not exist), or why they
/// were not kept.
pub type Original = Result<Option<Vec<u8>>, super::AgentError>;

/// Files larger than this are not kept for `/rewind`.
pub const MAX_SNAPSHOT_BYTES: u64 = 8 * 1024 * 1024;

/// Lines of difference shown for a file the rewind left alone.
const MAX_DIFF_LINES: usize = 12;

/// One file as it was before a prompt changed it.
#[derive(Debug, Clone)]
struct Snapshot {
    prompt: usize,
    target: Rooted,
    /// Where its old bytes are kept; `None` when the file did not exist.
    saved: Option<PathBuf>,
    /// The file was too large or could not be read: it cannot be restored.
    lost: Option<String>,
    /// The digest of what chatcli's last write left in the file; `None` until a write ran.
    wrote: Option<[u8; 32]>,
}

/// The snapshots of a session.
#[derive(Debug, Default)]
pub struct FileSnapshots {
    dir: Option<PathBuf>,
    taken: Vec<Snapshot>,
    /// The prompt the writes running now belong to.
    prompt: usize,
    /// Booked by `before` for a write still running: removed if the write does not happen.
    pending: Vec<usize>,
    /// Prompts before this one belong to an earlier run (a resumed session): nothing of theirs
    /// was kept.
    first_prompt: usize,
}

/// What a rewind put back.
#[derive(Debug, Default, PartialEq)]
pub struct Restored {
    pub restored: Vec<PathBuf>,
    pub removed: Vec<PathBuf>,
    /// Files it could not put back, with why.
    pub failed: Vec<(PathBuf, String)>,
    /// Files changed since chatcli wrote them, left as they are, with the difference.
    pub changed: Vec<(PathBuf, String)>,
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    sha2::Sha256::digest(bytes).into()
}

impl FileSnapshots {
    /// Snapshots kept under `dir` (created on first use, private), for a session whose first
    /// prompt in this run is `first_prompt` (the resumed history's prompt count).
    pub fn new(dir: Option<PathBuf>, first_prompt: usize) -> Self {
        FileSnapshots {
            dir,
            first_prompt,
            prompt: first_prompt,
            ..FileSnapshots::default()
        }
    }

    /// Every file this run changed, once each, with its bytes before the run first changed it.
    pub fn originals(&self) -> Vec<(Rooted, Original)> {
        let mut seen: Vec<(Rooted, Original)> = Vec::new();
        for snapshot in self.taken.iter().filter(|s| s.wrote.is_some()) {
            if seen.iter().any(|(t, _)| *t == snapshot.target) {
                continue;
            }
            let before = match (&snapshot.lost, &snapshot.saved) {
                (Some(why), _) => Err(super::AgentError::NotKept(why.clone())),
                (None, Some(saved)) => read_saved(saved).map(Some).map_err(|e| {
                    super::AgentError::NotKept(format!("its copy is unreadable ({e})"))
                }),
                (None, None) => Ok(None),
            };
            seen.push((snapshot.target.clone(), before));
        }
        seen
    }

    /// Whether prompt `prompt` ran before this session was resumed.
    pub fn before_this_run(&self, prompt: usize) -> bool {
        prompt < self.first_prompt
    }

    /// The writes that run from now on belong to `prompt`.
    pub fn set_prompt(&mut self, prompt: usize) {
        self.prompt = prompt;
    }

    /// Keeps `target` as it is now, unless this prompt already did: a write is about to run.
    pub fn before_write(&mut self, target: &Rooted) {
        let prompt = self.prompt;
        if self
            .taken
            .iter()
            .any(|s| s.prompt == prompt && s.target == *target)
        {
            return;
        }
        let mut snapshot = Snapshot {
            prompt,
            target: target.clone(),
            saved: None,
            lost: None,
            wrote: None,
        };
        match crate::files::read_beneath(&target.root, &target.rel, MAX_SNAPSHOT_BYTES + 1) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => snapshot.lost = Some(format!("could not read it before the write ({e})")),
            Ok(read) if read.truncated() => {
                snapshot.lost = Some(format!("{} bytes: too large to keep", read.total));
            }
            Ok(read) => match self.save(&read.bytes) {
                Ok(saved) => snapshot.saved = Some(saved),
                Err(e) => snapshot.lost = Some(format!("could not keep a copy ({e})")),
            },
        }
        self.pending.push(self.taken.len());
        self.taken.push(snapshot);
    }

    /// The write of `target` ended: `written` is what the file holds now, `None` when the write
    /// did not happen (its snapshot, if this write booked it, is dropped).
    pub fn after_write(&mut self, target: &Rooted, written: Option<&[u8]>) {
        let Some(index) = self
            .taken
            .iter()
            .rposition(|s| s.prompt == self.prompt && s.target == *target)
        else {
            return;
        };
        let booked_now = self.pending.contains(&index);
        self.pending.retain(|i| *i != index);
        match written {
            Some(bytes) => self.taken[index].wrote = Some(digest(bytes)),
            None if booked_now && index + 1 == self.taken.len() => {
                if let Some(saved) = self.taken.pop().and_then(|s| s.saved) {
                    let _ = remove_saved(&saved);
                }
            }
            None => {}
        }
    }

    fn save(&self, bytes: &[u8]) -> std::io::Result<PathBuf> {
        let dir = self
            .dir
            .clone()
            .ok_or_else(|| std::io::Error::other("no session folder"))?;
        crate::private_fs::create_private_dirs(&dir)?;
        let target = dir.join(format!("{}.bak", self.taken.len()));
        crate::private_fs::write_private(&target, bytes)?;
        Ok(target)
    }

    /// Restores every file changed at prompt `prompt` or later, newest first.
    pub fn restore_since(&mut self, prompt: usize) -> Restored {
        let mut out = Restored::default();
        let (undo, keep): (Vec<Snapshot>, Vec<Snapshot>) = std::mem::take(&mut self.taken)
            .into_iter()
            .partition(|s| s.prompt >= prompt);
        self.taken = keep;
        self.pending.clear();
        // Paths left alone: their older snapshots must not be applied either.
        let mut left: Vec<Rooted> = Vec::new();
        for snapshot in undo.into_iter().rev() {
            let shown = snapshot.target.root.join(&snapshot.target.rel);
            if left.contains(&snapshot.target) {
                continue;
            }
            out.restored.retain(|p| *p != shown);
            out.removed.retain(|p| *p != shown);
            out.failed.retain(|(p, _)| *p != shown);
            if let Some(why) = snapshot.lost {
                out.failed.push((shown, why));
                left.push(snapshot.target);
                continue;
            }
            let Some(wrote) = snapshot.wrote else {
                continue;
            };
            let before = match &snapshot.saved {
                Some(saved) => match read_saved(saved) {
                    Ok(bytes) => Some(bytes),
                    Err(e) => {
                        out.failed
                            .push((shown, format!("its copy is unreadable ({e})")));
                        left.push(snapshot.target);
                        continue;
                    }
                },
                None => None,
            };
            let (root, rel) = (&snapshot.target.root, &snapshot.target.rel);
            let now = match crate::files::read_beneath(root, rel, MAX_SNAPSHOT_BYTES + 1) {
                Ok(read) if !read.truncated() => Some(read.bytes),
                Ok(read) => {
                    out.changed
                        .push((shown, format!("{} bytes now", read.total)));
                    left.push(snapshot.target);
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => {
                    out.failed.push((shown, format!("refused: {e}")));
                    left.push(snapshot.target);
                    continue;
                }
            };
            if let Some(now) = &now
                && digest(now) != wrote
            {
                let diff = difference(before.as_deref().unwrap_or_default(), now);
                out.changed.push((shown, diff));
                left.push(snapshot.target);
                continue;
            }
            let result = match before {
                Some(bytes) => crate::files::write_beneath(root, rel, &bytes, 0o644)
                    .map(|()| out.restored.push(shown.clone())),
                None if now.is_none() => Ok(()),
                None => crate::files::remove_beneath(root, rel)
                    .map(|()| out.removed.push(shown.clone())),
            };
            if let Err(e) = result {
                out.failed.push((shown, e.to_string()));
                left.push(snapshot.target);
            }
            if let Some(saved) = &snapshot.saved {
                let _ = remove_saved(saved);
            }
        }
        out
    }
}

fn read_saved(saved: &Path) -> std::io::Result<Vec<u8>> {
    crate::files::read_bounded(saved, MAX_SNAPSHOT_BYTES + 1).map(|r| r.bytes)
}

fn remove_saved(saved: &Path) -> std::io::Result<()> {
    match (saved.parent(), saved.file_name()) {
        (Some(dir), Some(name)) => crate::files::remove_beneath(dir, Path::new(name)),
        _ => Ok(()),
    }
}

/// The lines that differ between what the rewind would put back and what the file holds now.
fn difference(before: &[u8], now: &[u8]) -> String {
    let (before, now) = (
        String::from_utf8_lossy(before),
        String::from_utf8_lossy(now),
    );
    let diff = similar::TextDiff::from_lines(before.as_ref(), now.as_ref());
    let mut lines = Vec::new();
    let mut more = 0;
    for change in diff.iter_all_changes() {
        let sign = match change.tag() {
            similar::ChangeTag::Equal => continue,
            similar::ChangeTag::Delete => '-',
            similar::ChangeTag::Insert => '+',
        };
        if lines.len() < MAX_DIFF_LINES {
            lines.push(format!("{sign}{}", change.value().trim_end()));
        } else {
            more += 1;
        }
    }
    if more > 0 {
        lines.push(format!("… {more} more changed lines"));
    }
    lines.join("\n")
}

/// The session's snapshots as the write tools see them.
pub struct Journal(pub std::sync::Arc<std::sync::Mutex<FileSnapshots>>);

impl crate::tools::WriteJournal for Journal {
    fn before(&self, target: &Rooted) {
        lock(&self.0).before_write(target);
    }

    fn after(&self, target: &Rooted, written: Option<&[u8]>) {
        lock(&self.0).after_write(target, written);
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
    /// The writes of the calls about to run belong to `prompt` (the write tools book them).
    pub(super) fn book_writes_to(&mut self, prompt: usize) {
        // A specialist's writes belong to the orchestrator's prompt that dispatched it.
        let prompt = self.tools.specialist.as_ref().map_or(prompt, |s| s.prompt);
        lock(&self.thread.snapshots).set_prompt(prompt);
    }

    /// `/rewind`: back to before prompt `prompt`, its files restored.
    pub(super) fn rewind(&mut self, prompt: usize) {
        let Some(start) = self.rewind_start(prompt) else {
            return;
        };
        self.emit(crate::protocol::AgentEvent::Rewound { prompt });
        let dropped = self.thread.history.len().saturating_sub(start);
        self.cut_history(prompt, start);
        let (files, before_resume) = {
            let mut snapshots = lock(&self.thread.snapshots);
            (
                snapshots.restore_since(prompt),
                snapshots.before_this_run(prompt),
            )
        };
        let message = rewind_report(
            &self.tools.ctx.workspace,
            prompt,
            dropped,
            &files,
            before_resume,
        );
        self.emit(crate::protocol::AgentEvent::Notice { message });
    }

    /// Where prompt `prompt` starts in the history; `None`, said in a notice, when `/rewind`
    /// cannot reach it (compacted) or it has no turn here.
    fn rewind_start(&mut self, prompt: usize) -> Option<usize> {
        if prompt < self.thread.folded_prompts {
            self.emit(crate::protocol::AgentEvent::Notice {
                message: format!(
                    "cannot rewind to prompt {}: it was compacted into a summary; the earliest prompt /rewind can reach is {}",
                    prompt + 1,
                    self.thread.folded_prompts + 1
                ),
            });
            return None;
        }
        let start = self
            .thread
            .prompt_starts
            .iter()
            .skip(prompt)
            .find_map(|s| *s);
        if start.is_none() {
            self.emit(crate::protocol::AgentEvent::Notice {
                message: format!(
                    "nothing to rewind: prompt {} has no turn in this conversation",
                    prompt + 1
                ),
            });
        }
        start
    }

    /// Cuts the history at `start`, where prompt `prompt` began (a compaction summary there
    /// stays), resets the log to it, and forgets what the cut messages carried.
    fn cut_history(&mut self, prompt: usize, start: usize) {
        // The compaction summary rides at the front of the first kept message: rewinding to
        // that message keeps the summary (the next prompt merges into it).
        let summary = self
            .thread.history
            .get(start)
            .and_then(|m| m.content.first())
            .filter(|b| {
                matches!(b, ContentBlock::Text { text } if text.starts_with(super::summary::SUMMARY_MARK))
            })
            .cloned();
        self.thread.history.truncate(start);
        if let Some(summary) = summary {
            self.thread.history.push(Message {
                role: Role::User,
                content: vec![summary],
            });
        }
        self.thread.prompt_starts.truncate(prompt);
        self.sink
            .append_history(&crate::session_log::HistoryRecord::HistoryReset {
                messages: self.thread.history.to_vec(),
            });
        self.thread.logged = super::thread::LoggedHistory::of(&self.thread.history);
        // The volatile blocks rode in the dropped messages: send them again.
        self.stack.volatile = crate::prompt::VolatileTracker::default();
        self.stack.skills.forget_sent();
    }
}

/// What `/rewind` tells the user: how much of the conversation went, and what became of each
/// file (paths relative to `workspace`).
fn rewind_report(
    workspace: &Path,
    prompt: usize,
    dropped: usize,
    files: &Restored,
    before_resume: bool,
) -> String {
    let show = |p: &PathBuf| p.strip_prefix(workspace).unwrap_or(p).display().to_string();
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
    for (path, diff) in &files.changed {
        message.push_str(&format!(
            "; left {} as it is: it changed since chatcli wrote it\n{diff}\n",
            show(path)
        ));
    }
    if before_resume {
        message.push_str(
            "; files written before this session was resumed are not restored (snapshots last one run)",
        );
    }
    message.push_str("; commands run since are not undone");
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rooted(root: &Path, name: &str) -> Rooted {
        Rooted {
            root: root.to_path_buf(),
            rel: PathBuf::from(name),
        }
    }

    /// A write as the tools make it: booked, written, reported.
    fn write(snaps: &mut FileSnapshots, target: &Rooted, text: &str) {
        snaps.before_write(target);
        std::fs::write(target.root.join(&target.rel), text).expect("write");
        snaps.after_write(target, Some(text.as_bytes()));
    }

    #[test]
    fn files_return_to_how_they_were_when_the_prompt_began() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (ra, rb) = (rooted(dir.path(), "a.txt"), rooted(dir.path(), "b.txt"));
        let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
        std::fs::write(&a, "one").expect("write");
        let mut snaps = FileSnapshots::new(Some(dir.path().join("snaps")), 0);
        write(&mut snaps, &ra, "two");
        snaps.set_prompt(1);
        write(&mut snaps, &ra, "three");
        write(&mut snaps, &rb, "new");
        let restored = snaps.restore_since(1);
        assert_eq!(std::fs::read_to_string(&a).expect("read"), "two");
        assert!(!b.exists(), "a file created since is removed");
        assert_eq!(restored.restored, vec![a.clone()]);
        assert_eq!(restored.removed, vec![b]);
        let earlier = snaps.restore_since(0);
        assert_eq!(std::fs::read_to_string(&a).expect("read"), "one");
        assert_eq!(earlier.restored, vec![a]);
    }

    #[test]
    fn a_write_that_did_not_run_books_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = rooted(dir.path(), "a.txt");
        let mut snaps = FileSnapshots::new(Some(dir.path().join("snaps")), 0);
        snaps.before_write(&target);
        snaps.after_write(&target, None);
        // The user's own file, made later, is not chatcli's to delete.
        std::fs::write(dir.path().join("a.txt"), "mine").expect("write");
        let out = snaps.restore_since(0);
        assert_eq!(out, Restored::default());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).expect("read"),
            "mine"
        );
    }

    #[test]
    fn a_file_changed_since_is_left_alone_with_its_difference() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = rooted(dir.path(), "a.txt");
        std::fs::write(dir.path().join("a.txt"), "one\n").expect("write");
        let mut snaps = FileSnapshots::new(Some(dir.path().join("snaps")), 0);
        write(&mut snaps, &target, "two\n");
        std::fs::write(dir.path().join("a.txt"), "the user's\n").expect("write");
        let out = snaps.restore_since(0);
        assert_eq!(out.changed.len(), 1, "{out:?}");
        assert_eq!(out.changed[0].1, "-one\n+the user's");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).expect("read"),
            "the user's\n"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_path_swapped_for_a_link_is_never_written_through() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        let victim = outside.path().join("authorized_keys");
        std::fs::write(&victim, "ssh-ed25519 mine\n").expect("write");
        std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
        let (file, created) = (
            rooted(dir.path(), "notes.txt"),
            rooted(dir.path(), "sub/new.txt"),
        );
        std::fs::write(dir.path().join("notes.txt"), "old").expect("write");
        let mut snaps = FileSnapshots::new(Some(dir.path().join("snaps")), 0);
        write(&mut snaps, &file, "new");
        write(&mut snaps, &created, "x");
        // A command swaps the file for a link to the keys, and the folder for a link outside.
        std::fs::remove_file(dir.path().join("notes.txt")).expect("rm");
        std::os::unix::fs::symlink(&victim, dir.path().join("notes.txt")).expect("symlink");
        std::fs::write(outside.path().join("new.txt"), "x").expect("write");
        std::fs::remove_dir_all(dir.path().join("sub")).expect("rm");
        std::os::unix::fs::symlink(outside.path(), dir.path().join("sub")).expect("symlink");
        let out = snaps.restore_since(0);
        assert_eq!(out.restored, Vec::<PathBuf>::new(), "{out:?}");
        assert_eq!(out.removed, Vec::<PathBuf>::new(), "{out:?}");
        assert_eq!(out.failed.len(), 2, "{out:?}");
        assert_eq!(
            std::fs::read_to_string(&victim).expect("read"),
            "ssh-ed25519 mine\n"
        );
        assert!(outside.path().join("new.txt").exists());
    }
}
