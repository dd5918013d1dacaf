//! `read_file`: a text file with line numbers, optionally a range, head or tail of it.
//!
//! Lines are numbered from 1 so the model can ask for `start`/`end` ranges it saw. The output is
//! capped at `MAX_CHARS` characters, cut on a line boundary with a marker that says how to read
//! the rest, so one call never floods the context with a whole large file.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::json;

use super::workspace::confine;
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
                    "tail": {"type": "integer"}
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
            let path = confine(ctx, file)?;
            let bytes = tokio::fs::read(&path)
                .await
                .map_err(|e| ToolError::Failed(format!("cannot read {file}: {e}")))?;
            if bytes.iter().take(8192).any(|b| *b == 0) {
                return Err(ToolError::Failed(format!("{file} is a binary file")));
            }
            let text = String::from_utf8_lossy(&bytes);
            let range = LineRange {
                start: optional_usize(args, "start")?,
                end: optional_usize(args, "end")?,
                head: optional_usize(args, "head")?,
                tail: optional_usize(args, "tail")?,
            };
            Ok(ToolOutput::text(number_lines(&text, range)))
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
}

/// The selected lines, numbered, capped at `MAX_CHARS` on a line boundary.
pub fn number_lines(text: &str, range: LineRange) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    let (from, to) = if let Some(head) = range.head {
        (1, head.min(total))
    } else if let Some(tail) = range.tail {
        (total.saturating_sub(tail) + 1, total)
    } else {
        (
            range.start.unwrap_or(1).max(1),
            range.end.unwrap_or(total).min(total),
        )
    };
    if total == 0 {
        return "(empty file)".to_string();
    }
    if from > to {
        return format!("(no lines in that range: the file has {total} lines)");
    }
    let width = to.to_string().len();
    let mut out = String::new();
    let mut chars = 0;
    for (i, line) in lines[from - 1..to].iter().enumerate() {
        let n = from + i;
        let numbered = format!("{n:>width$}  {line}\n");
        chars += numbered.chars().count();
        if chars > MAX_CHARS {
            out.push_str(&format!(
                "[... output capped at {MAX_CHARS} characters: lines {n}-{to} not shown; read them with start={n} ...]\n"
            ));
            break;
        }
        out.push_str(&numbered);
    }
    out
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
    fn caps_long_output_on_a_line_boundary() {
        let text = "é".repeat(100) + "\n";
        let big = text.repeat(1000);
        let out = number_lines(&big, LineRange::default());
        assert!(out.chars().count() <= MAX_CHARS + 200);
        assert!(out.contains("output capped"));
    }
}
