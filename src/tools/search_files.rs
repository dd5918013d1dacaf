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
        *self.matches += 1;
        let line = m.line_number().unwrap_or(0);
        let text = String::from_utf8_lossy(m.bytes());
        self.lines.push(format!(
            "{}:{line}:{}",
            self.path,
            truncate_line(text.trim_end())
        ));
        Ok(*self.matches < self.max)
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

fn truncate_line(text: &str) -> String {
    let (head, cut) = super::take_chars(text, 300);
    if cut {
        format!("{head}…")
    } else {
        head.to_string()
    }
}

fn search(root: &Path, workspace: &Path, options: &Search) -> Result<ToolOutput, ToolError> {
    let matcher = RegexMatcherBuilder::new()
        .build(&options.pattern)
        .map_err(|e| ToolError::InvalidArgs(format!("bad regex: {e}")))?;
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(0))
        .before_context(options.context)
        .after_context(options.context)
        .build();
    let mut walk = ignore::WalkBuilder::new(root);
    walk.require_git(false).sort_by_file_name(|a, b| a.cmp(b));
    if let Some(glob) = &options.glob {
        let mut overrides = ignore::overrides::OverrideBuilder::new(root);
        overrides
            .add(glob)
            .map_err(|e| ToolError::InvalidArgs(format!("bad glob {glob}: {e}")))?;
        walk.overrides(
            overrides
                .build()
                .map_err(|e| ToolError::InvalidArgs(format!("bad glob {glob}: {e}")))?,
        );
    }
    let mut lines = Vec::new();
    let mut matches = 0usize;
    for entry in walk.build().flatten() {
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
        let mut sink = Collect {
            path: &shown,
            lines: &mut lines,
            matches: &mut matches,
            max: options.max_results,
        };
        // An unreadable file is skipped, as ripgrep does.
        let _ = searcher.search_path(&matcher, entry.path(), &mut sink);
    }
    if lines.is_empty() {
        return Ok(ToolOutput::text("no matches"));
    }
    if matches >= options.max_results {
        lines.push(format!(
            "[... stopped at {} matches; narrow with dir or glob ...]",
            options.max_results
        ));
    }
    Ok(ToolOutput::text(lines.join("\n")))
}
