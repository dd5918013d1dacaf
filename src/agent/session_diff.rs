//! `/diff`: everything this session changed in the workspace, at a glance. The files the write
//! tools changed come from the `/rewind` snapshots (each file against what it held before the
//! session first wrote it, as a unified diff); what else changed (a command's writes, the
//! user's own edits) comes from `git status --short` and `git diff --stat`, run hardened and
//! read-only like `@git`.
//!
//! Snapshots live as long as the process: after `--resume` only this run's writes are shown,
//! and the answer says so.

use super::Agent;
use crate::protocol::AgentEvent;

/// Lines of one file's diff shown at most (the transcript pager holds the rest of a session).
const MAX_FILE_DIFF_LINES: usize = 200;

impl Agent {
    /// Answers `/diff` with a notice: each changed file's diff, then git's view.
    pub(super) async fn session_diff(&mut self) {
        let originals = super::rewind::lock(&self.thread.snapshots).originals();
        let resumed = self.options.resume.is_some();
        let files = tokio::task::spawn_blocking(move || file_diffs(originals))
            .await
            .unwrap_or_default();
        let git = crate::prompt::mentions::git_summary(
            &self.tools.ctx.workspace,
            &self.tools.ctx.sandbox,
        )
        .await;
        let mut message = if files.is_empty() {
            "diff: chatcli's write tools changed no file in this session".to_string()
        } else {
            format!(
                "diff: {} file(s) changed by chatcli in this session\n{files}",
                files.lines().filter(|l| l.starts_with("+++ ")).count()
            )
        };
        if resumed {
            message.push_str("\n(resumed: writes of the earlier run are not shown)");
        }
        message.push_str("\n\n");
        message.push_str(&git);
        self.emit(AgentEvent::Notice { message });
    }
}

/// The unified diffs of the files against their originals, read through the file door.
fn file_diffs(
    originals: Vec<(crate::tools::workspace::Rooted, super::rewind::Original)>,
) -> String {
    let mut out = Vec::new();
    for (target, before) in originals {
        let shown = target.rel.display().to_string();
        let before = match before {
            Err(why) => {
                out.push(format!("{shown}: not shown ({why})"));
                continue;
            }
            Ok(before) => before.unwrap_or_default(),
        };
        let now = match crate::files::read_beneath(
            &target.root,
            &target.rel,
            super::rewind::MAX_SNAPSHOT_BYTES + 1,
        ) {
            Ok(read) if !read.truncated() => read.bytes,
            Ok(read) => {
                out.push(format!(
                    "{shown}: {} bytes now, too large to compare",
                    read.total
                ));
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                out.push(format!("{shown}: cannot be read now ({e})"));
                continue;
            }
        };
        if before == now {
            continue;
        }
        let diff = crate::tools::preview::unified(
            &shown,
            &String::from_utf8_lossy(&before),
            &String::from_utf8_lossy(&now),
        );
        let lines: Vec<&str> = diff.lines().collect();
        out.extend(
            lines
                .iter()
                .take(MAX_FILE_DIFF_LINES)
                .map(|l| l.to_string()),
        );
        if lines.len() > MAX_FILE_DIFF_LINES {
            out.push(format!(
                "[... {} more lines of {shown}]",
                lines.len() - MAX_FILE_DIFF_LINES
            ));
        }
    }
    out.join("\n")
}
