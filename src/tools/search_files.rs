//! `search_files`: lines matching a term across the workspace, with ripgrep's own crates
//! (`ignore` for the walk, honouring `.gitignore`; `grep` for matching and context lines).

use std::path::Path;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use grep::regex::RegexMatcherBuilder;
use grep::searcher::{BinaryDetection, SearcherBuilder, Sink, SinkContext, SinkMatch};
use serde_json::json;

use super::workspace::confine;
use super::{
    Tool, ToolContext, ToolError, ToolOutput, optional_bool, optional_str, optional_usize,
    required_str,
};
use crate::conversation::ToolSpec;

/// The `search_files` tool.
pub struct SearchFiles;

impl Tool for SearchFiles {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "search_files".into(),
            description: "Find lines containing `term` (literal, or a regex with regex: true) in files, honouring .gitignore.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "term": {"type": "string"},
                    "dir": {"type": "string"},
                    "regex": {"type": "boolean"},
                    "glob": {"type": "string", "description": "e.g. *.rs"},
                    "max_results": {"type": "integer", "description": "default 100"},
                    "context": {"type": "integer", "description": "lines around each match, 0-5"}
                },
                "required": ["term"]
            }),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn run<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let term = required_str(args, "term")?.to_string();
            let root = confine(ctx, optional_str(args, "dir").unwrap_or("."))?;
            let options = Search {
                pattern: if optional_bool(args, "regex") {
                    term.clone()
                } else {
                    regex::escape(&term)
                },
                glob: optional_str(args, "glob").map(str::to_string),
                max_results: optional_usize(args, "max_results")?
                    .unwrap_or(100)
                    .clamp(1, 1000),
                context: optional_usize(args, "context")?.unwrap_or(0).min(5),
            };
            let workspace = ctx.workspace.clone();
            tokio::task::spawn_blocking(move || search(&root, &workspace, &options))
                .await
                .map_err(|e| ToolError::Failed(format!("search failed: {e}")))?
        }
        .boxed()
    }
}

struct Search {
    pattern: String,
    glob: Option<String>,
    max_results: usize,
    context: usize,
}

/// Collects `path:line:text` for matches and `path-line-text` for context lines.
struct Collect<'a> {
    path: &'a str,
    matcher: &'a LineMatcher,
    lines: &'a mut Vec<String>,
    matches: &'a mut usize,
    max: usize,
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(
        &mut self,
        _: &grep::searcher::Searcher,
        m: &SinkMatch<'_>,
    ) -> Result<bool, Self::Error> {
        let line = m.line_number().unwrap_or(0);
        let bytes = m.bytes();
        if bytes.len() <= LONG_LINE_BYTES {
            *self.matches += 1;
            let text = String::from_utf8_lossy(bytes);
            self.lines.push(format!(
                "{}:{line}:{}",
                self.path,
                truncate_line(text.trim_end())
            ));
            return Ok(*self.matches < self.max);
        }
        // A long line: one window per match in it, with its column.
        for (start, end) in self.matcher.find_all(bytes) {
            *self.matches += 1;
            let col = char_count(bytes.get(..start).unwrap_or_default()) + 1;
            self.lines
                .push(window_line(self.path, line, col, bytes, start, end));
            if *self.matches >= self.max {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn context(
        &mut self,
        _: &grep::searcher::Searcher,
        c: &SinkContext<'_>,
    ) -> Result<bool, Self::Error> {
        let line = c.line_number().unwrap_or(0);
        let text = String::from_utf8_lossy(c.bytes());
        self.lines.push(format!(
            "{}-{line}-{}",
            self.path,
            truncate_line(text.trim_end())
        ));
        Ok(true)
    }
}

/// A matched line longer than this is shown as windows around its matches, with columns.
const LONG_LINE_BYTES: usize = 1200;
/// Characters shown on each side of a match in a long line.
const WINDOW_CHARS: usize = 120;
/// Characters of the match itself shown at most.
const MATCH_CHARS: usize = 200;
/// The searcher's buffer may grow to hold one line up to this size; a longer line makes the
/// search of that file fail and the file is scanned in chunks instead (`scan_chunks`).
const HEAP_LIMIT: usize = 8 * 1024 * 1024;
/// Bytes read per chunk by `scan_chunks`.
const CHUNK_BYTES: usize = 1024 * 1024;
/// Bytes a chunk shares with the next: a match longer than this across a chunk edge is missed.
const OVERLAP_BYTES: usize = 64 * 1024;
/// Bytes kept before the scanned part of a chunk, for the window before a match.
const BEFORE_BYTES: usize = WINDOW_CHARS * 4;

/// The search term as a byte regex, to find every match within a long line or a chunk.
struct LineMatcher(regex::bytes::Regex);

impl LineMatcher {
    /// The (start, end) byte offsets of the non-empty matches in `bytes`.
    fn find_all(&self, bytes: &[u8]) -> Vec<(usize, usize)> {
        self.0
            .find_iter(bytes)
            .filter(|m| m.end() > m.start())
            .map(|m| (m.start(), m.end()))
            .collect()
    }
}

/// The characters UTF-8 `bytes` hold (invalid bytes count one each).
fn char_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| (**b & 0xC0) != 0x80).count()
}

/// `bytes` from `from`, moved forward past any UTF-8 continuation bytes.
fn char_start(bytes: &[u8], mut from: usize) -> usize {
    while bytes.get(from).is_some_and(|b| (*b & 0xC0) == 0x80) {
        from += 1;
    }
    from
}

/// `path:line:col: …before[match]after…`, the match at bytes `start..end` of `bytes`.
fn window_line(
    path: &str,
    line: u64,
    col: usize,
    bytes: &[u8],
    start: usize,
    end: usize,
) -> String {
    let from = char_start(bytes, start.saturating_sub(BEFORE_BYTES));
    let before = String::from_utf8_lossy(bytes.get(from..start).unwrap_or_default());
    let skip = before.chars().count().saturating_sub(WINDOW_CHARS);
    let before: String = before.chars().skip(skip).collect();
    let found = String::from_utf8_lossy(bytes.get(start..end).unwrap_or_default());
    let (found, found_cut) = super::take_chars(&found, MATCH_CHARS);
    let after_end = (end + BEFORE_BYTES).min(bytes.len());
    let after = String::from_utf8_lossy(bytes.get(end..after_end).unwrap_or_default());
    let after = after.split(['\n', '\r']).next().unwrap_or_default();
    let (after, after_cut) = super::take_chars(after, WINDOW_CHARS);
    let lead = if skip > 0 || from > 0 { "…" } else { "" };
    let tail = if after_cut || found_cut { "…" } else { "" };
    let before = before.rsplit(['\n', '\r']).next().unwrap_or_default();
    format!("{path}:{line}:{col}: {lead}{before}{found}{after}{tail}")
}

/// Where `scan_chunks` puts what it finds.
struct ChunkFound<'a> {
    path: &'a str,
    lines: &'a mut Vec<String>,
    matches: &'a mut usize,
    max: usize,
}

/// Line and column reached while scanning: newlines seen, characters since the last one.
#[derive(Default)]
struct Position {
    line: u64,
    col: usize,
}

impl Position {
    fn advance(&mut self, bytes: &[u8]) {
        match bytes.iter().rposition(|b| *b == b'\n') {
            Some(last) => {
                self.line += bytes.iter().filter(|b| **b == b'\n').count() as u64;
                self.col = char_count(bytes.get(last + 1..).unwrap_or_default());
            }
            None => self.col += char_count(bytes),
        }
    }
}

/// Searches the file at `path` in chunks of `CHUNK_BYTES`, so memory stays bounded whatever the
/// length of its lines: each match is shown as a window with its line and column. A file with a
/// NUL byte in its first chunk is skipped as binary, as the searcher does.
fn scan_chunks(
    finder: &LineMatcher,
    path: &Path,
    found: &mut ChunkFound<'_>,
) -> std::io::Result<()> {
    let mut file = crate::files::open_regular(path)?;
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK_BYTES + OVERLAP_BYTES + BEFORE_BYTES);
    // Offsets within `buf`: scanning starts at `scan_from`; what is before is window only.
    let mut scan_from = 0usize;
    let mut pos = Position::default();
    let mut first = true;
    // Matches starting before this offset in `buf` were part of one already shown.
    let mut shown_to = 0usize;
    loop {
        let kept = buf.len();
        buf.resize(kept + CHUNK_BYTES, 0);
        let read = read_full(&mut file, buf.get_mut(kept..).unwrap_or_default())?;
        buf.truncate(kept + read);
        let at_end = read == 0 || read < CHUNK_BYTES;
        if first && buf.iter().take(8192).any(|b| *b == 0) {
            return Ok(());
        }
        first = false;
        let scan_to = if at_end {
            buf.len()
        } else {
            buf.len().saturating_sub(OVERLAP_BYTES)
        };
        let mut counted = scan_from;
        let region = buf.get(scan_from..).unwrap_or_default();
        for (start, end) in finder.find_all(region) {
            let (start, end) = (start + scan_from, end + scan_from);
            if start >= scan_to {
                break;
            }
            if start < shown_to {
                continue;
            }
            shown_to = end;
            pos.advance(buf.get(counted..start).unwrap_or_default());
            counted = start;
            *found.matches += 1;
            found.lines.push(window_line(
                found.path,
                pos.line + 1,
                pos.col + 1,
                &buf,
                start,
                end,
            ));
            if *found.matches >= found.max {
                return Ok(());
            }
        }
        if at_end {
            return Ok(());
        }
        pos.advance(buf.get(counted..scan_to).unwrap_or_default());
        // Keep the overlap and the window before it; scanning resumes where this one stopped.
        let keep_from = scan_to.saturating_sub(BEFORE_BYTES);
        buf.drain(..keep_from);
        shown_to = shown_to.saturating_sub(keep_from);
        scan_from = scan_to - keep_from;
    }
}

/// Reads until `buf` is full or the file ends; the bytes read.
fn read_full(file: &mut impl std::io::Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(buf.get_mut(filled..).unwrap_or_default()) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

fn truncate_line(text: &str) -> String {
    let (head, cut) = super::take_chars(text, 300);
    if cut {
        format!("{head}…")
    } else {
        head.to_string()
    }
}

/// The files under `root` (ignore files honoured, by name), only those `glob` matches if given.
fn walk(root: &Path, glob: Option<&str>) -> Result<ignore::Walk, ToolError> {
    let mut walk = ignore::WalkBuilder::new(root);
    walk.require_git(false).sort_by_file_name(|a, b| a.cmp(b));
    if let Some(glob) = glob {
        let bad = |e: ignore::Error| ToolError::InvalidArgs(format!("bad glob {glob}: {e}"));
        let mut overrides = ignore::overrides::OverrideBuilder::new(root);
        overrides.add(glob).map_err(bad)?;
        walk.overrides(overrides.build().map_err(bad)?);
    }
    Ok(walk.build())
}

fn search(root: &Path, workspace: &Path, options: &Search) -> Result<ToolOutput, ToolError> {
    let matcher = RegexMatcherBuilder::new()
        .build(&options.pattern)
        .map_err(|e| ToolError::InvalidArgs(format!("bad regex: {e}")))?;
    let finder = LineMatcher(
        regex::bytes::Regex::new(&options.pattern)
            .map_err(|e| ToolError::InvalidArgs(format!("bad regex: {e}")))?,
    );
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .heap_limit(Some(HEAP_LIMIT))
        .binary_detection(BinaryDetection::quit(0))
        .before_context(options.context)
        .after_context(options.context)
        .build();
    let mut lines = Vec::new();
    let mut matches = 0usize;
    for entry in walk(root, options.glob.as_deref())?.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if matches >= options.max_results {
            break;
        }
        let shown = entry
            .path()
            .strip_prefix(workspace)
            .unwrap_or(entry.path())
            .display()
            .to_string();
        let (kept_lines, kept_matches) = (lines.len(), matches);
        let mut sink = Collect {
            path: &shown,
            matcher: &finder,
            lines: &mut lines,
            matches: &mut matches,
            max: options.max_results,
        };
        if searcher
            .search_path(&matcher, entry.path(), &mut sink)
            .is_err()
        {
            // A line longer than the heap limit (or an unreadable file, skipped, as ripgrep
            // does): what the file gave is dropped and it is scanned again in bounded chunks.
            lines.truncate(kept_lines);
            matches = kept_matches;
            let mut found = ChunkFound {
                path: &shown,
                lines: &mut lines,
                matches: &mut matches,
                max: options.max_results,
            };
            let _ = scan_chunks(&finder, entry.path(), &mut found);
        }
    }
    if lines.is_empty() {
        return Ok(ToolOutput::text("no matches"));
    }
    let found = lines.join("\n");
    if matches < options.max_results {
        return Ok(ToolOutput::text(found));
    }
    let cut = super::cut::Cut::showing(format!(
        "the first {} matches (the search stopped there)",
        super::cut::count(options.max_results as u64)
    ))
    .read_on("narrow with dir or glob, or raise max_results");
    Ok(ToolOutput::text(cut.above(&found)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search_in(dir: &Path, term: &str) -> String {
        let options = Search {
            pattern: regex::escape(term),
            glob: None,
            max_results: 100,
            context: 0,
        };
        match search(dir, dir, &options) {
            Ok(out) => out.text,
            Err(e) => panic!("search failed: {e}"),
        }
    }

    fn one_line_file(dir: &Path, name: &str, bytes: usize, needle: &str) {
        let mut text = "é".repeat(bytes / 2);
        text.push_str(needle);
        text.push_str(&"x".repeat(50));
        text.push('\n');
        std::fs::write(dir.join(name), text).expect("write");
    }

    #[test]
    fn a_match_deep_in_a_long_line_is_shown_with_its_column() {
        let dir = tempfile::tempdir().expect("tempdir");
        one_line_file(dir.path(), "min.js", 1024 * 1024, "NEEDLE_HERE");
        let out = search_in(dir.path(), "NEEDLE_HERE");
        let col = 1024 * 1024 / 2 + 1;
        assert!(
            out.starts_with(&format!("min.js:1:{col}: …é")),
            "{}",
            out.get(..80).unwrap_or(&out)
        );
        assert!(out.contains("éNEEDLE_HERExxxxx"), "{out}");
        assert!(out.chars().count() < 400, "{out}");
    }

    #[test]
    fn a_line_past_the_heap_limit_is_scanned_in_chunks() {
        let dir = tempfile::tempdir().expect("tempdir");
        one_line_file(
            dir.path(),
            "huge.js",
            HEAP_LIMIT + 3 * CHUNK_BYTES + 7,
            "NEEDLE_HERE",
        );
        std::fs::write(dir.path().join("small.txt"), "a\nb NEEDLE_HERE c\n").expect("write");
        let out = search_in(dir.path(), "NEEDLE_HERE");
        let col = (HEAP_LIMIT + 3 * CHUNK_BYTES + 7) / 2 + 1;
        assert!(out.contains(&format!("huge.js:1:{col}: …é")), "{out}");
        assert!(out.contains("éNEEDLE_HERExxxxx"), "{out}");
        assert!(out.contains("small.txt:2:b NEEDLE_HERE c"), "{out}");
        assert_eq!(out.matches("NEEDLE_HERE").count(), 2, "{out}");
    }

    #[test]
    fn matches_across_chunk_edges_are_found_once_with_their_columns() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut text = vec![b'a'; HEAP_LIMIT + 2 * CHUNK_BYTES];
        let scan_edge = CHUNK_BYTES - OVERLAP_BYTES;
        let at = [
            3,
            scan_edge - 4,
            CHUNK_BYTES - 4,
            2 * scan_edge - 1,
            HEAP_LIMIT + 9,
        ];
        for start in at {
            text.splice(start..start + 6, *b"NEEDLE");
        }
        text.extend_from_slice(b"\nline two NEEDLE\n");
        std::fs::write(dir.path().join("edges.js"), text).expect("write");
        let out = search_in(dir.path(), "NEEDLE");
        let cols: Vec<String> = out
            .lines()
            .map(|l| l.split(':').take(3).collect::<Vec<_>>().join(":"))
            .collect();
        let mut want: Vec<String> = at.iter().map(|s| format!("edges.js:1:{}", s + 1)).collect();
        want.push("edges.js:2:10".into());
        assert_eq!(cols, want, "{out}");
        assert!(
            out.lines()
                .all(|l| l.contains("aNEEDLEa") || l.ends_with("two NEEDLE")),
            "{out}"
        );
    }
}
