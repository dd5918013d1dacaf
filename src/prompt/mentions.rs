//! `@` mentions: workspace content the user points at, inlined into that one user turn.
//!
//! A word that starts with `@` and names an existing file or folder relative to the working
//! directory (inside it) is a mention: a file comes in line-numbered and capped like
//! `read_file`, a folder as its listing (honouring `.gitignore`), and `@git` as `git status
//! --short` plus `git diff --stat`. Anything else stays text: `user@example.com` does not start
//! a word with `@`, `@someone` names nothing. The inlined text is appended to the newest user
//! message once and is history afterwards; it never enters the system prompt, so mentioning a
//! file does not touch the cached prefix. Expanding reads files: call it off the agent task
//! (`spawn_blocking`). Files are read through the file door (no link followed, at most
//! `INLINE_READ_BYTES` read whatever the file's size, and a cut said in the first line); `@git` runs through the process door with
//! the git tools' hardening (no `fsmonitor`, hook, pager or filter of the repository's runs) under
//! a read-only sandbox: `git_summary`, awaited before `expand`.

use std::path::{Path, PathBuf};

/// The tag that opens the inlined text (microcompact recognises mention content by it).
pub const OPEN_TAG: &str = "<mentions>";

/// Entries a folder mention lists at most.
const MAX_ENTRIES: usize = 200;
/// Characters of `@git` output kept.
const MAX_GIT_CHARS: usize = 20_000;
/// Characters of a mentioned file inlined at most (`read_file`'s cap).
const MAX_INLINE_CHARS: usize = crate::tools::read_file::MAX_CHARS;
/// Bytes of a mentioned file read at most: what is inlined (4 bytes a character at most) and a
/// 64 KiB look-ahead, whatever the file's size. A 1 GB mention reads 224 KiB.
pub const INLINE_READ_BYTES: u64 = (MAX_INLINE_CHARS as u64) * 4 + 64 * 1024;

/// What a mention points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A file, relative to the working directory.
    File(PathBuf),
    /// A folder, relative to the working directory.
    Folder(PathBuf),
    /// `@git`: the repository's status and diff summary.
    Git,
}

/// One mention as written and what it points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// The words as typed, without the `@` (`notes.txt`, `src`, `git`).
    pub written: String,
    pub target: Target,
}

impl Mention {
    /// The file or folder it names, relative to the working directory (`None` for `@git`).
    pub fn path(&self) -> Option<&Path> {
        match &self.target {
            Target::File(rel) | Target::Folder(rel) => Some(rel),
            Target::Git => None,
        }
    }
}

/// The mentions in `text`, in order and without repeats; `cwd` decides what exists.
pub fn find(text: &str, cwd: &Path) -> Vec<Mention> {
    let mut found: Vec<Mention> = Vec::new();
    for word in text.split_whitespace() {
        let Some(rest) = word.strip_prefix('@') else {
            continue;
        };
        let Some(mention) = resolve(rest, cwd) else {
            continue;
        };
        if !found.iter().any(|m| m.target == mention.target) {
            found.push(mention);
        }
    }
    found
}

/// The longest reading of `rest` (trailing punctuation dropped one by one) that names something.
fn resolve(rest: &str, cwd: &Path) -> Option<Mention> {
    let mut candidate = rest;
    loop {
        if candidate.is_empty() {
            return None;
        }
        if let Some(target) = target(candidate, cwd) {
            return Some(Mention {
                written: candidate.to_string(),
                target,
            });
        }
        let mut chars = candidate.chars();
        let last = chars.next_back()?;
        if !matches!(
            last,
            '.' | ',' | ';' | ':' | '!' | '?' | ')' | ']' | '}' | '"' | '\'' | '`'
        ) {
            return None;
        }
        candidate = chars.as_str();
    }
}

fn target(candidate: &str, cwd: &Path) -> Option<Target> {
    if candidate == "git" {
        return Some(Target::Git);
    }
    let relative = Path::new(candidate);
    if relative.is_absolute() {
        return None;
    }
    let full = cwd.join(relative).canonicalize().ok()?;
    let root = cwd.canonicalize().ok()?;
    // Mentions stay inside the working directory, as the tools do.
    let inside = full.strip_prefix(&root).ok()?.to_path_buf();
    if full.is_dir() {
        Some(Target::Folder(inside))
    } else if full.is_file() {
        Some(Target::File(inside))
    } else {
        None
    }
}

/// The text that carries the mentioned content, one `<mention>` element each; `git` is what
/// `git_summary` gave, for an `@git` mention.
pub fn expand(mentions: &[Mention], cwd: &Path, git: Option<&str>) -> String {
    let mut out = String::from(OPEN_TAG);
    for mention in mentions {
        let body = match &mention.target {
            // The image itself rides beside this text as an image block (`images::load`).
            Target::File(path) if super::images::looks_like_image(path) => {
                "(an image: attached to this message)".to_string()
            }
            Target::File(path) => file_text(cwd, path),
            Target::Folder(path) => folder_listing(&cwd.join(path)),
            Target::Git => git.unwrap_or("(git was not run)").to_string(),
        };
        let kind = match &mention.target {
            Target::File(path) if super::images::looks_like_image(path) => "image",
            Target::File(_) => "file",
            Target::Folder(_) => "folder",
            Target::Git => "git",
        };
        out.push_str(&format!(
            "\n<mention {kind}=\"{}\">\n{}\n</mention>",
            mention.written,
            body.trim_end()
        ));
    }
    out.push_str("\n</mentions>");
    out
}

/// A mentioned file as inlined: through the file door, at most `INLINE_READ_BYTES` read
/// whatever the file's size, binary files refused.
fn file_text(cwd: &Path, rel: &Path) -> String {
    match crate::files::read_beneath(cwd, rel, INLINE_READ_BYTES) {
        Err(e) => format!("(cannot read it: {e})"),
        Ok(read) if read.bytes.iter().take(8192).any(|b| *b == 0) => {
            "(a binary file: not inlined)".to_string()
        }
        Ok(read) => inline_lines(&read),
    }
}

/// The lines of a bounded read numbered as `read_file` numbers them, up to its `MAX_CHARS`; when
/// that is not the whole file, the `[cut: …]` line first says what is shown and how to read on
/// (`tools::cut`, the rule every tool result follows).
fn inline_lines(read: &crate::files::Bounded) -> String {
    use crate::tools::cut::{Cut, count};
    let text = String::from_utf8_lossy(&read.bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    // A read the cap stopped may end inside a line: that piece is not shown as a whole line.
    if read.truncated() && !text.ends_with('\n') && lines.len() > 1 {
        lines.pop();
    }
    let width = lines.len().max(1).to_string().len();
    let (mut out, mut chars, mut shown) = (String::new(), 0usize, 0usize);
    for line in &lines {
        let numbered = format!("{:>width$}  {line}\n", shown + 1);
        chars += numbered.chars().count();
        if chars > MAX_INLINE_CHARS {
            break;
        }
        out.push_str(&numbered);
        shown += 1;
    }
    if shown == lines.len() && !read.truncated() {
        return out;
    }
    let whole = if read.truncated() {
        format!("a file of {} bytes", count(read.total))
    } else {
        format!("{} lines", count(lines.len() as u64))
    };
    if shown == 0 {
        // The first line alone is over the cap (a minified file): a slice of it.
        let first = lines.first().copied().unwrap_or_default();
        let (slice, _) = crate::tools::take_chars(first, MAX_INLINE_CHARS - 200);
        let n = slice.chars().count();
        return Cut::showing(format!("characters 1-{} of line 1", count(n as u64)))
            .of(whole)
            .read_on(format!(
                "the line goes on: read_file with start=1 col={} for the rest",
                n + 1
            ))
            .above(&format!("{:>width$}  {slice}\n", 1));
    }
    let shown_lines = if shown == 1 {
        "line 1".to_string()
    } else {
        format!("lines 1-{shown}")
    };
    Cut::showing(shown_lines)
        .of(whole)
        .read_on(format!("read_file with start={} for the rest", shown + 1))
        .above(&out)
}

/// A folder's files and folders (depth 2, `.gitignore` honoured), one per line, folders with `/`.
pub fn folder_listing(root: &Path) -> String {
    let walker = ignore::WalkBuilder::new(root)
        .max_depth(Some(2))
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    let mut lines = Vec::new();
    let mut more = 0usize;
    for entry in walker.flatten() {
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        if rel.as_os_str().is_empty() {
            continue;
        }
        if lines.len() >= MAX_ENTRIES {
            more += 1;
            continue;
        }
        let dir = entry.file_type().is_some_and(|t| t.is_dir());
        lines.push(format!("{}{}", rel.display(), if dir { "/" } else { "" }));
    }
    if lines.is_empty() {
        return "(empty folder)".to_string();
    }
    let listing = lines.join("\n");
    if more == 0 {
        return listing;
    }
    let count = crate::tools::cut::count;
    crate::tools::cut::Cut::showing(format!("the first {} entries", count(lines.len() as u64)))
        .of(format!("{} entries", count((lines.len() + more) as u64)))
        .read_on("list_directory a subfolder for the rest")
        .above(&listing)
}

/// `git status --short` and `git diff --stat` for `@git`, run hardened and read-only.
pub async fn git_summary(cwd: &Path, sandbox: &crate::sandbox::SandboxSettings) -> String {
    let run = async |args: &[&str]| -> String {
        match crate::tools::git::mention_git(cwd, sandbox, args).await {
            Err(e) => format!("({e})"),
            Ok(text) => {
                let text = text.trim_end().to_string();
                if text.is_empty() {
                    "(nothing)".to_string()
                } else {
                    text
                }
            }
        }
    };
    let text = format!(
        "$ git status --short\n{}\n$ git diff --stat\n{}",
        run(&["status", "--short"]).await,
        run(&["diff", "--stat"]).await
    );
    let (kept, cut) = crate::tools::take_chars(&text, MAX_GIT_CHARS);
    if cut {
        let count = crate::tools::cut::count;
        crate::tools::cut::Cut::showing(format!(
            "the first {} characters",
            count(MAX_GIT_CHARS as u64)
        ))
        .of(format!("{} characters", count(text.chars().count() as u64)))
        .read_on("git_status and git_diff show the rest")
        .above(kept)
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_existing_paths_at_the_start_of_a_word_are_mentions() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("notes.txt"), "alpha\n").expect("write");
        std::fs::create_dir(dir.path().join("src")).expect("mkdir");
        let found = find(
            "see @notes.txt, @src and @git; mail user@example.com or @someone (@notes.txt)",
            dir.path(),
        );
        let written: Vec<&str> = found.iter().map(|m| m.written.as_str()).collect();
        assert_eq!(written, vec!["notes.txt", "src", "git"]);
        assert_eq!(found[0].target, Target::File("notes.txt".into()));
        assert_eq!(found[1].target, Target::Folder("src".into()));
        assert!(find("@../etc @/etc/passwd", dir.path()).is_empty());
    }

    #[test]
    fn files_come_numbered_and_folders_listed() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").expect("write");
        std::fs::create_dir(dir.path().join("src")).expect("mkdir");
        std::fs::write(dir.path().join("src/a.rs"), "").expect("write");
        let text = expand(&find("@notes.txt @src", dir.path()), dir.path(), None);
        assert_eq!(
            text,
            "<mentions>\n<mention file=\"notes.txt\">\n1  alpha\n2  beta\n</mention>\n<mention folder=\"src\">\na.rs\n</mention>\n</mentions>"
        );
    }

    #[test]
    fn a_large_file_is_read_bounded_and_inlined_with_its_cut_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        let lines: String = (1..=100_000)
            .map(|n| format!("line number {n}\n"))
            .collect();
        std::fs::write(dir.path().join("big.txt"), &lines).expect("write");
        let text = file_text(dir.path(), Path::new("big.txt"));
        let (first, rest) = text.split_once('\n').expect("lines");
        let shown = rest.lines().count();
        assert_eq!(
            first,
            format!(
                "[cut: shown lines 1-{shown} of a file of {} bytes; read_file with start={} for the rest]",
                crate::tools::cut::count(lines.len() as u64),
                shown + 1
            )
        );
        assert!(
            rest.starts_with("    1  line number 1\n"),
            "{}",
            rest.get(..40).unwrap_or(rest)
        );
        assert!(rest.chars().count() <= MAX_INLINE_CHARS);
        // One minified line: a slice of it and the column to read on from.
        std::fs::write(dir.path().join("min.js"), "ab".repeat(200_000)).expect("write");
        let text = file_text(dir.path(), Path::new("min.js"));
        assert!(
            text.starts_with("[cut: shown characters 1-39,800 of line 1 of a file of 400,000 bytes; the line goes on: read_file with start=1 col=39801 for the rest]\n1  abab"),
            "{}",
            text.get(..200).unwrap_or(&text)
        );
        // A file that fits in the read but not in the cap: its line count is known.
        let small: String = (1..=5_000)
            .map(|n| format!("a longer line of text {n}\n"))
            .collect();
        std::fs::write(dir.path().join("mid.txt"), &small).expect("write");
        let text = file_text(dir.path(), Path::new("mid.txt"));
        assert!(
            text.starts_with("[cut: shown lines 1-"),
            "{}",
            text.get(..100).unwrap_or(&text)
        );
        assert!(
            text.lines()
                .next()
                .is_some_and(|l| l.contains(" of 5,000 lines;"))
        );
    }
}
