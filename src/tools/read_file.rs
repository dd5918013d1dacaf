//! `read_file`: a text file with line numbers, optionally a range, head or tail of it.
//!
//! Lines are numbered from 1 so the model can ask for `start`/`end` ranges it saw. The output is
//! capped at `MAX_CHARS` characters, cut on a line boundary with a marker that says how to read
//! the rest, so one call never floods the context with a whole large file.
//!
//! The file is streamed, never loaded: `head=5` on a 3 GiB file reads a few kilobytes, a range
//! reads up to its end, and nothing reads past `MAX_SCAN_BYTES`; a line is kept up to
//! `MAX_LINE_BYTES`. Anything that is not a regular file (a FIFO would block forever, a device may
//! never end) is refused before it is opened, and again on the opened handle, since the path can
//! change in between. The open goes through the workspace handle (see `workspace`).

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::json;

use std::io::{Read, Seek, SeekFrom};

use super::cut::Cut;
use super::workspace::{Rooted, open_error, open_options, open_root, require_regular, rooted};
use super::{Tool, ToolContext, ToolError, ToolOutput, optional_usize, required_str};
use crate::conversation::ToolSpec;

/// Characters of file text one call returns at most.
pub const MAX_CHARS: usize = 40_000;

/// The `read_file` tool.
pub struct ReadFile;

impl Tool for ReadFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "read_file".into(),
            description: "Read a text file with line numbers; optionally lines start..end (1-based, inclusive), or the first `head` / last `tail` lines.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "file": {"type": "string", "description": "Path relative to the workspace"},
                    "start": {"type": "integer"},
                    "end": {"type": "integer"},
                    "head": {"type": "integer"},
                    "tail": {"type": "integer"},
                    "col": {"type": "integer", "description": "with start: first character (1-based) of a long line to show"}
                },
                "required": ["file"]
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
            let file = required_str(args, "file")?;
            // Files of a skill folder are readable even outside the workspace (`tools::skill`).
            let target = match super::skill::rooted_in_skill(ctx, file) {
                Some(target) => target,
                None => rooted(ctx, file)?,
            };
            if crate::provider::images::looks_like_image(&target.rel) {
                return super::read_image::read(ctx, target, file).await;
            }
            let range = LineRange {
                start: optional_usize(args, "start")?,
                end: optional_usize(args, "end")?,
                head: optional_usize(args, "head")?,
                tail: optional_usize(args, "tail")?,
                col: optional_usize(args, "col")?,
            };
            let shown = file.to_string();
            let text = tokio::task::spawn_blocking(move || read_confined(&target, &shown, range))
                .await
                .map_err(|e| ToolError::Failed(format!("cannot read {file}: {e}")))??;
            Ok(ToolOutput::text(text))
        }
        .boxed()
    }
}

/// Which lines to show; all `None` means the whole file.
#[derive(Debug, Clone, Copy, Default)]
pub struct LineRange {
    pub start: Option<usize>,
    pub end: Option<usize>,
    pub head: Option<usize>,
    pub tail: Option<usize>,
    /// With `start`: the character of that line to start from; only that line is shown.
    pub col: Option<usize>,
}

/// Characters of one line shown at most by a call that slices it.
const SLICE_CHARS: usize = MAX_CHARS - 200;

/// Bytes of one line kept at most (more than `MAX_CHARS` can show: the cap marker still fires).
pub const MAX_LINE_BYTES: usize = MAX_CHARS * 4 + 4;
/// Bytes read at most by one call (a range deep into a huge file, a tail's line count).
pub const MAX_SCAN_BYTES: u64 = 256 * 1024 * 1024;
/// A NUL byte in this many leading bytes marks a binary file.
const BINARY_SNIFF: usize = 8192;

/// Reads the selected lines of the file at `target`, confined to its root.
pub fn read_confined(target: &Rooted, shown: &str, range: LineRange) -> Result<String, ToolError> {
    let dir =
        open_root(&target.root).map_err(|e| open_error(shown, "open the workspace for", e))?;
    // Before opening: opening a FIFO for reading blocks until a writer comes.
    let meta = dir
        .metadata(&target.rel)
        .map_err(|e| open_error(shown, "read", e))?;
    require_regular(shown, meta.file_type())?;
    let mut options = open_options(true);
    options.read(true);
    let file = dir
        .open_with(&target.rel, &options)
        .map_err(|e| open_error(shown, "read", e))?;
    // And on the handle: the path may have been swapped since the check.
    let meta = file.metadata().map_err(|e| open_error(shown, "read", e))?;
    require_regular(shown, meta.file_type())?;
    select_lines(file.into_std(), range).map_err(|e| match e {
        SelectError::Binary => ToolError::Failed(format!("{shown} is a binary file")),
        SelectError::Io(e) => ToolError::Failed(format!("cannot read {shown}: {e}")),
        SelectError::TooFar(what) => ToolError::Failed(format!(
            "{shown}: {what}; read past {} MiB with run_command (`sed -n`, `tail -n`)",
            MAX_SCAN_BYTES / (1024 * 1024)
        )),
    })
}

/// Why lines could not be selected: a step of `read_file`, turned into the `ToolError` the
/// model reads (with the file's name) before it leaves this module.
#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    /// A NUL byte near the start.
    #[error("a binary file")]
    Binary,
    /// Reading failed.
    #[error("cannot read it: {0}")]
    Io(std::io::Error),
    /// The selection lies past `MAX_SCAN_BYTES`.
    #[error("{0}")]
    TooFar(String),
}

/// Lines of a byte stream, each kept up to `MAX_LINE_BYTES`, read in chunks with no more than one
/// chunk and one line in memory.
struct LineStream<R> {
    reader: R,
    chunk: Vec<u8>,
    pos: usize,
    len: usize,
    consumed: u64,
}

impl<R: Read> LineStream<R> {
    fn new(reader: R) -> Self {
        LineStream {
            reader,
            chunk: vec![0; 64 * 1024],
            pos: 0,
            len: 0,
            consumed: 0,
        }
    }

    /// Refills the chunk; false at the end of the stream.
    fn fill(&mut self) -> std::io::Result<bool> {
        loop {
            match self.reader.read(&mut self.chunk) {
                Ok(n) => {
                    self.pos = 0;
                    self.len = n;
                    self.consumed += n as u64;
                    return Ok(n > 0);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Whether the first bytes hold a NUL.
    fn looks_binary(&mut self) -> std::io::Result<bool> {
        if self.pos == self.len {
            self.fill()?;
        }
        let end = self.len.min(self.pos + BINARY_SNIFF);
        Ok(self
            .chunk
            .get(self.pos..end)
            .is_some_and(|sniffed| sniffed.contains(&0)))
    }

    /// The next line into `out` (when `keep`, without its `\n` or `\r\n`); false at the end.
    fn next_line(&mut self, keep: bool, out: &mut Vec<u8>) -> std::io::Result<bool> {
        out.clear();
        let mut any = false;
        loop {
            if self.pos == self.len && (self.consumed > MAX_SCAN_BYTES || !self.fill()?) {
                return Ok(any);
            }
            any = true;
            let rest = self.chunk.get(self.pos..self.len).unwrap_or_default();
            let newline = rest.iter().position(|b| *b == b'\n');
            let piece = newline.and_then(|i| rest.get(..i)).unwrap_or(rest);
            let found = newline.is_some();
            if keep {
                let room = MAX_LINE_BYTES.saturating_sub(out.len());
                out.extend_from_slice(piece.get(..room).unwrap_or(piece));
            }
            self.pos += piece.len() + usize::from(found);
            if found {
                if out.last() == Some(&b'\r') {
                    out.pop();
                }
                return Ok(true);
            }
        }
    }

    /// Characters `skip + 1 ..= skip + take` of the next line into `out` (without its line
    /// end); the characters of the line passed, and whether the line goes on after them. `None`
    /// at the end of the stream.
    fn next_line_slice(
        &mut self,
        skip: usize,
        take: usize,
        out: &mut Vec<u8>,
    ) -> std::io::Result<Option<(usize, bool)>> {
        out.clear();
        let mut seen = 0usize;
        let mut any = false;
        loop {
            if self.pos == self.len && (self.consumed > MAX_SCAN_BYTES || !self.fill()?) {
                return Ok(any.then_some((seen, false)));
            }
            any = true;
            while let Some(&b) = self.chunk.get(self.pos).filter(|_| self.pos < self.len) {
                if b == b'\n' {
                    self.pos += 1;
                    if out.last() == Some(&b'\r') {
                        out.pop();
                    }
                    return Ok(Some((seen, false)));
                }
                if b & 0xC0 != 0x80 {
                    if seen == skip + take {
                        return Ok(Some((seen, true)));
                    }
                    seen += 1;
                }
                if seen > skip {
                    out.push(b);
                }
                self.pos += 1;
            }
        }
    }

    /// The reader back, to rewind it.
    fn into_inner(self) -> R {
        self.reader
    }

    /// Whether reading stopped at `MAX_SCAN_BYTES` rather than at the end.
    fn stopped_early(&self) -> bool {
        self.consumed > MAX_SCAN_BYTES
    }
}

/// Files up to this size are counted first, to align the line numbers.
const SMALL_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// The number of lines in a (small) stream, as `str::lines` counts them.
fn bytecount_lines(reader: &mut impl Read) -> std::io::Result<usize> {
    let mut lines = LineStream::new(reader);
    let mut scratch = Vec::new();
    let mut total = 0;
    while lines.next_line(false, &mut scratch)? {
        total += 1;
    }
    Ok(total)
}

/// The selected lines of a seekable stream, numbered, capped at `MAX_CHARS` on a line boundary.
pub fn select_lines(mut reader: impl Read + Seek, range: LineRange) -> Result<String, SelectError> {
    let (from, to) = match (range.head, range.tail) {
        (Some(head), _) => (1, Some(head)),
        (None, Some(tail)) => {
            let total = count_for_tail(&mut reader)?;
            (total.saturating_sub(tail) + 1, Some(total))
        }
        (None, None) => (range.start.unwrap_or(1).max(1), range.end),
    };
    if let (None, None, Some(col)) = (range.head, range.tail, range.col) {
        let width = number_width(&mut reader, Some(from))?;
        return slice_line(reader, from, col.max(1), width);
    }
    let width = number_width(&mut reader, to)?;
    let mut lines = LineStream::new(reader);
    if lines.looks_binary().map_err(SelectError::Io)? {
        return Err(SelectError::Binary);
    }
    let selected = number_selected(&mut lines, from, to, width)?;
    if selected.capped_at == Some(from) && !selected.emitted {
        // The first line alone is over the cap: a slice of it, and how to read on.
        let mut reader = lines.into_inner();
        reader.seek(SeekFrom::Start(0)).map_err(SelectError::Io)?;
        return slice_line(reader, from, 1, width);
    }
    let reached_end = to.is_none_or(|t| selected.read < t) && selected.capped_at.is_none();
    if let Some(at) = selected.capped_at {
        let cut = cap_notice(&mut lines, from, at, to, selected.read)?;
        return Ok(cut.above(&selected.out));
    }
    if reached_end && lines.stopped_early() && !selected.emitted {
        return Err(SelectError::TooFar(format!(
            "line {from} lies past the first {} MiB",
            MAX_SCAN_BYTES / (1024 * 1024)
        )));
    }
    if selected.emitted {
        return Ok(selected.out);
    }
    // Nothing selected: say how long the file is.
    let mut n = selected.read;
    if !reached_end {
        let mut line = Vec::new();
        while lines.next_line(false, &mut line).map_err(SelectError::Io)? {
            n += 1;
        }
    }
    if n == 0 {
        return Ok("(empty file)".to_string());
    }
    Ok(format!("(no lines in that range: the file has {n} lines)"))
}

/// Line `n` from its character `col` on, up to `SLICE_CHARS` characters, and a last line that
/// says which characters were shown and, if the line goes on, the call that reads the next slice.
fn slice_line(
    reader: impl Read,
    n: usize,
    col: usize,
    width: usize,
) -> Result<String, SelectError> {
    let mut lines = LineStream::new(reader);
    if lines.looks_binary().map_err(SelectError::Io)? {
        return Err(SelectError::Binary);
    }
    let mut scratch = Vec::new();
    for _ in 1..n {
        if !lines
            .next_line(false, &mut scratch)
            .map_err(SelectError::Io)?
        {
            return Ok(past_the_end(&lines, n));
        }
    }
    let Some((seen, more)) = lines
        .next_line_slice(col - 1, SLICE_CHARS, &mut scratch)
        .map_err(SelectError::Io)?
    else {
        return Ok(past_the_end(&lines, n));
    };
    if seen < col {
        return Ok(format!(
            "(line {n} has {seen} characters, none from character {col})"
        ));
    }
    let numbered = format!("{n:>width$}  {}\n", String::from_utf8_lossy(&scratch));
    if more {
        let cut = Cut::showing(format!("characters {col}-{seen} of line {n}")).read_on(format!(
            "the line goes on: read on with start={n} col={}",
            seen + 1
        ));
        return Ok(cut.above(&numbered));
    }
    let mut out = numbered;
    if col > 1 {
        out.push_str(&format!("[characters {col}-{seen} of line {n}: its end]\n"));
    }
    Ok(out)
}

/// What a slice of line `n` says when the file has fewer lines.
fn past_the_end<R: Read>(lines: &LineStream<R>, n: usize) -> String {
    if lines.stopped_early() {
        format!(
            "(line {n} lies past the first {} MiB)",
            MAX_SCAN_BYTES / (1024 * 1024)
        )
    } else {
        format!("(no line {n}: the file is shorter)")
    }
}

/// A tail needs the line count first: one pass counting (this one, which rewinds the stream),
/// one reading.
fn count_for_tail(mut reader: impl Read + Seek) -> Result<usize, SelectError> {
    let mut lines = LineStream::new(&mut reader);
    if lines.looks_binary().map_err(SelectError::Io)? {
        return Err(SelectError::Binary);
    }
    let mut total = 0usize;
    let mut scratch = Vec::new();
    while lines
        .next_line(false, &mut scratch)
        .map_err(SelectError::Io)?
    {
        total += 1;
    }
    if lines.stopped_early() {
        return Err(SelectError::TooFar(format!(
            "the file is larger than {} MiB, too large to count its lines for `tail`",
            MAX_SCAN_BYTES / (1024 * 1024)
        )));
    }
    reader.seek(SeekFrom::Start(0)).map_err(SelectError::Io)?;
    Ok(total)
}

/// The width line numbers are right-aligned to: that of the last one shown. For a small file
/// it is counted (cheap; the stream is rewound), for a large one it is the range's end, or seven
/// digits.
fn number_width(mut reader: impl Read + Seek, to: Option<usize>) -> Result<usize, SelectError> {
    let size = reader.seek(SeekFrom::End(0)).map_err(SelectError::Io)?;
    reader.seek(SeekFrom::Start(0)).map_err(SelectError::Io)?;
    let last_shown = if size <= SMALL_FILE_BYTES {
        let total = bytecount_lines(&mut reader).map_err(SelectError::Io)?;
        reader.seek(SeekFrom::Start(0)).map_err(SelectError::Io)?;
        Some(to.map_or(total, |t| t.min(total)))
    } else {
        to
    };
    Ok(last_shown.map_or(7, |t| t.to_string().len()))
}

/// What numbering the selected lines left.
struct Selected {
    /// The numbered lines.
    out: String,
    /// How many lines were read.
    read: usize,
    /// The first line the `MAX_CHARS` cap left out.
    capped_at: Option<usize>,
    /// Whether any line was selected.
    emitted: bool,
}

/// Reads up to line `to`, numbering lines `from` on until `MAX_CHARS` would be passed.
fn number_selected<R: Read>(
    lines: &mut LineStream<R>,
    from: usize,
    to: Option<usize>,
    width: usize,
) -> Result<Selected, SelectError> {
    let mut selected = Selected {
        out: String::new(),
        read: 0,
        capped_at: None,
        emitted: false,
    };
    let mut chars = 0usize;
    let mut line = Vec::new();
    while to.is_none_or(|t| selected.read < t) {
        if !lines
            .next_line(selected.read + 1 >= from, &mut line)
            .map_err(SelectError::Io)?
        {
            break;
        }
        selected.read += 1;
        let n = selected.read;
        if n < from {
            continue;
        }
        let numbered = format!("{n:>width$}  {}\n", String::from_utf8_lossy(&line));
        chars += numbered.chars().count();
        if chars > MAX_CHARS {
            selected.capped_at = Some(n);
            break;
        }
        selected.emitted = true;
        selected.out.push_str(&numbered);
    }
    Ok(selected)
}

/// The cut of a selection from line `from` that the cap stopped at line `at` (`read` lines
/// read) and how to read on; without a range's end, the rest is counted to name the last line.
fn cap_notice<R: Read>(
    lines: &mut LineStream<R>,
    from: usize,
    at: usize,
    to: Option<usize>,
    read: usize,
) -> Result<Cut, SelectError> {
    let last = match to {
        Some(t) => Some(t),
        None => {
            let mut n = read;
            let mut line = Vec::new();
            while lines.next_line(false, &mut line).map_err(SelectError::Io)? {
                n += 1;
            }
            (!lines.stopped_early()).then_some(n)
        }
    };
    let of = match last {
        Some(last) => format!("lines {from}-{last}"),
        None => format!("lines {from} onward"),
    };
    let shown = match at - 1 {
        last if last == from => format!("line {from}"),
        last => format!("lines {from}-{last}"),
    };
    Ok(Cut::showing(shown)
        .of(format!(
            "{of} (a result holds {MAX_CHARS} characters at most)"
        ))
        .read_on(format!("read the rest with start={at}")))
}

/// The selected lines of `text`, numbered, capped at `MAX_CHARS` on a line boundary.
pub fn number_lines(text: &str, range: LineRange) -> String {
    match select_lines(std::io::Cursor::new(text.as_bytes()), range) {
        Ok(out) => out,
        Err(SelectError::Binary) => "(binary text)".to_string(),
        Err(SelectError::Io(e)) => format!("(unreadable: {e})"),
        Err(SelectError::TooFar(what)) => format!("({what})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_ranges() {
        let text = "a\nb\nc\nd\n";
        assert_eq!(
            number_lines(text, LineRange::default()),
            "1  a\n2  b\n3  c\n4  d\n"
        );
        let r = LineRange {
            start: Some(2),
            end: Some(3),
            ..LineRange::default()
        };
        assert_eq!(number_lines(text, r), "2  b\n3  c\n");
        let r = LineRange {
            tail: Some(1),
            ..LineRange::default()
        };
        assert_eq!(number_lines(text, r), "4  d\n");
        let r = LineRange {
            start: Some(9),
            ..LineRange::default()
        };
        assert_eq!(
            number_lines(text, r),
            "(no lines in that range: the file has 4 lines)"
        );
    }

    #[test]
    fn a_line_longer_than_the_cap_is_read_in_slices() {
        let text = format!("short\n{}\nlast\n", "ab".repeat(25_000));
        let first = number_lines(
            &text,
            LineRange {
                start: Some(2),
                ..LineRange::default()
            },
        );
        let next_col = SLICE_CHARS + 1;
        assert!(
            first.starts_with(&format!(
                "[cut: shown characters 1-{SLICE_CHARS} of line 2; the line goes on: \
                 read on with start=2 col={next_col}]\n2  abab"
            )),
            "{}",
            first.get(..200).unwrap_or(&first)
        );
        assert_eq!(first.matches("ab").count(), SLICE_CHARS / 2);
        let second = number_lines(
            &text,
            LineRange {
                start: Some(2),
                col: Some(next_col),
                ..LineRange::default()
            },
        );
        let rest = 50_000 - SLICE_CHARS;
        assert_eq!(second.matches("ab").count(), rest / 2);
        assert!(
            second.ends_with(&format!(
                "[characters {next_col}-50000 of line 2: its end]\n"
            )),
            "{second}"
        );
        // A whole read stops before the long line and points at it, not back at itself.
        let whole = number_lines(&text, LineRange::default());
        assert_eq!(
            whole,
            "[cut: shown line 1 of lines 1-3 (a result holds 40000 characters at most); \
             read the rest with start=2]\n1  short\n"
        );
    }

    #[test]
    fn caps_long_output_on_a_line_boundary() {
        let text = "é".repeat(100) + "\n";
        let big = text.repeat(1000);
        let out = number_lines(&big, LineRange::default());
        assert!(out.chars().count() <= MAX_CHARS + 200);
        assert!(
            out.starts_with("[cut: shown lines 1-"),
            "{}",
            out.get(..200).unwrap_or(&out)
        );
    }
}
