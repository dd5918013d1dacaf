//! `list_directory`: the files under a directory, honouring `.gitignore` (ripgrep's `ignore`).

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::json;

use super::workspace::confine;
use super::{
    Tool, ToolContext, ToolError, ToolOutput, optional_bool, optional_str, optional_usize,
};
use crate::conversation::ToolSpec;

/// Entries one call lists at most.
const MAX_ENTRIES: usize = 500;

/// The `list_directory` tool.
pub struct ListDirectory;

impl Tool for ListDirectory {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "list_directory".into(),
            description:
                "List files under a directory (default: workspace root), honouring .gitignore."
                    .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "dir": {"type": "string"},
                    "max_depth": {"type": "integer", "description": "default 2"},
                    "include_hidden": {"type": "boolean"}
                }
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
            let dir = optional_str(args, "dir").unwrap_or(".");
            let root = confine(ctx, dir)?;
            if !root.is_dir() {
                return Err(ToolError::Failed(format!("{dir} is not a directory")));
            }
            let depth = optional_usize(args, "max_depth")?.unwrap_or(2).clamp(1, 10);
            let hidden = optional_bool(args, "include_hidden");
            tokio::task::spawn_blocking(move || list(&root, depth, hidden))
                .await
                .map_err(|e| ToolError::Failed(format!("listing failed: {e}")))
        }
        .boxed()
    }
}

fn list(root: &std::path::Path, depth: usize, hidden: bool) -> ToolOutput {
    let walker = ignore::WalkBuilder::new(root)
        .max_depth(Some(depth))
        .hidden(!hidden)
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
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        lines.push(format!(
            "{}{}",
            rel.display(),
            if is_dir { "/" } else { "" }
        ));
    }
    if lines.is_empty() {
        return ToolOutput::text("(empty directory)");
    }
    let listing = lines.join("\n");
    if more == 0 {
        return ToolOutput::text(listing);
    }
    let cut = super::cut::Cut::showing(format!(
        "the first {} entries",
        super::cut::count(lines.len() as u64)
    ))
    .of(format!(
        "{} entries",
        super::cut::count((lines.len() + more) as u64)
    ))
    .read_on("list a subdirectory or lower max_depth");
    ToolOutput::text(cut.above(&listing))
}
