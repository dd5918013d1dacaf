//! What a write or a patch would change, shown before it runs and kept after it ran.
//!
//! The approval dialog must never hide what the user approves, so a write is shown as a unified
//! diff against the file on disk, or, for a new file, as the whole file line-numbered; a patch as
//! the diff of its replacement in context. The same text goes with the call's result, so the
//! transcript pager shows what was applied. Reading the file here is bounded (a preview of a
//! multi-gigabyte file says so instead of loading it) and follows the same confinement as the
//! tools, so a preview can never read outside the workspace.

use std::fmt::Write as _;

use similar::TextDiff;

use super::ToolContext;
use super::workspace::confine;

/// Files larger than this are not diffed (the preview says so).
const MAX_PREVIEW_BYTES: u64 = 2 * 1024 * 1024;

/// The preview of a `write_file` call: a unified diff, or the new file line-numbered.
pub fn write_file(args: &serde_json::Value, ctx: &ToolContext) -> Option<String> {
    let file = args.get("file")?.as_str()?;
    let content = args.get("content")?.as_str()?;
    let append = args
        .get("append")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    let old = match read_old(file, ctx) {
        Old::Missing => return Some(numbered_new_file(file, content)),
        Old::Unreadable(why) => return Some(format!("{file}: {why}\n\n{content}")),
        Old::Text(old) => old,
    };
    let new = if append {
        format!("{old}{content}")
    } else {
        content.to_string()
    };
    Some(unified(file, &old, &new))
}

/// The preview of a `patch_file` call: the diff of the replacement in its context.
pub fn patch_file(args: &serde_json::Value, ctx: &ToolContext) -> Option<String> {
    let file = args.get("file")?.as_str()?;
    let search = args.get("search")?.as_str()?;
    let replace = args.get("replace")?.as_str()?;
    let old = match read_old(file, ctx) {
        Old::Text(old) => old,
        Old::Missing => return Some(format!("{file} does not exist: the patch will fail")),
        Old::Unreadable(why) => return Some(format!("{file}: {why}")),
    };
    match super::patch_file::patch(&old, search, replace) {
        Ok(new) => Some(unified(file, &old, &new)),
        Err(why) => Some(format!(
            "{file}: {why}; the patch will fail as asked:\n--- search\n{search}\n+++ replace\n{replace}"
        )),
    }
}

enum Old {
    Missing,
    Unreadable(String),
    Text(String),
}

fn read_old(file: &str, ctx: &ToolContext) -> Old {
    let Ok(path) = confine(ctx, file) else {
        return Old::Unreadable("the path leaves the workspace: the call will be refused".into());
    };
    let meta = match crate::files::metadata(&path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Old::Missing,
        Err(e) => return Old::Unreadable(format!("cannot read the current file ({e})")),
    };
    if !meta.is_file() {
        return Old::Unreadable("not a regular file".into());
    }
    if meta.len() > MAX_PREVIEW_BYTES {
        return Old::Unreadable(format!(
            "the current file is {} bytes, too large to diff; the new content follows",
            meta.len()
        ));
    }
    // `confine` resolved every link, so the path names the file itself; the door still refuses a
    // link or a FIFO swapped in since, and reads at most the preview's cap.
    match crate::files::read_bounded(&path, MAX_PREVIEW_BYTES) {
        Ok(read) => match String::from_utf8(read.bytes) {
            Ok(text) => Old::Text(text),
            Err(_) => Old::Unreadable("the current file is not UTF-8 text".into()),
        },
        Err(e) => Old::Unreadable(format!("cannot read the current file ({e})")),
    }
}

/// A unified diff with three lines of context; "no change" when the texts are equal.
pub fn unified(file: &str, old: &str, new: &str) -> String {
    if old == new {
        return format!("{file}: no change");
    }
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{file}"), &format!("b/{file}"))
        .to_string()
}

fn numbered_new_file(file: &str, content: &str) -> String {
    let lines: Vec<&str> = content.lines().collect();
    let digits = lines.len().max(1).to_string().len();
    let mut out = format!("new file {file} ({} lines)\n", lines.len());
    for (i, line) in lines.iter().enumerate() {
        let _ = writeln!(out, "{:>digits$} │ {line}", i + 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{Scratch, WebSettings};
    use serde_json::json;

    fn ctx(dir: &std::path::Path) -> ToolContext {
        ToolContext::new(
            dir.canonicalize().expect("canonical"),
            Scratch::private(dir.join(".scratch")),
            WebSettings::default(),
        )
    }

    #[test]
    fn a_new_file_is_shown_whole_and_numbered() {
        let dir = tempfile::tempdir().expect("tempdir");
        let content: String = (1..=60).map(|i| format!("line {i}\n")).collect();
        let preview = write_file(
            &json!({"file": "n.txt", "content": content}),
            &ctx(dir.path()),
        )
        .expect("preview");
        assert!(
            preview.starts_with("new file n.txt (60 lines)"),
            "{preview}"
        );
        assert!(preview.contains("60 │ line 60"), "{preview}");
    }

    #[test]
    fn an_overwrite_is_a_unified_diff_and_a_patch_shows_its_context() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.rs"), "fn a() {}\nfn b() {}\nfn c() {}\n").expect("w");
        let c = ctx(dir.path());
        let w = write_file(
            &json!({"file": "a.rs", "content": "fn a() {}\nfn B() {}\nfn c() {}\n"}),
            &c,
        )
        .expect("preview");
        assert!(w.contains("--- a/a.rs") && w.contains("-fn b() {}") && w.contains("+fn B() {}"));
        assert!(w.contains(" fn a() {}"), "context kept: {w}");
        let p = patch_file(
            &json!({"file": "a.rs", "search": "fn c() {}", "replace": "fn c() { todo() }"}),
            &c,
        )
        .expect("preview");
        assert!(
            p.contains("-fn c() {}") && p.contains("+fn c() { todo() }"),
            "{p}"
        );
        assert!(p.contains(" fn b() {}"), "{p}");
    }
}
