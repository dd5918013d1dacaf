//! `write_file`: create or overwrite a file in the workspace, or append to it. Asks first.
//!
//! Parent directories are created as needed; the path is confined like every other (see
//! `workspace`), so a write can never land outside the workspace or the scratch directory.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::json;
use tokio::io::AsyncWriteExt;

use super::workspace::confine;
use super::{Tool, ToolContext, ToolError, ToolOutput, required_str};
use crate::conversation::ToolSpec;

/// The `write_file` tool.
pub struct WriteFile;

impl Tool for WriteFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "write_file".into(),
            description: "Create or overwrite a text file (append: true adds to its end).".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "file": {"type": "string"},
                    "content": {"type": "string"},
                    "append": {"type": "boolean"}
                },
                "required": ["file", "content"]
            }),
        }
    }

    fn read_only(&self) -> bool {
        false
    }

    fn preview(&self, args: &serde_json::Value, ctx: &ToolContext) -> Option<String> {
        super::preview::write_file(args, ctx)
    }

    fn run<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let file = required_str(args, "file")?;
            let content = required_str(args, "content")?;
            let append = args
                .get("append")
                .and_then(|v| v.as_bool())
                .unwrap_or(false);
            let path = confine(ctx, file)?;
            if let Some(parent) = path.parent() {
                tokio::fs::create_dir_all(parent).await.map_err(|e| {
                    ToolError::Failed(format!("cannot create the directory for {file}: {e}"))
                })?;
            }
            let mut handle = tokio::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .append(append)
                .truncate(!append)
                .open(&path)
                .await
                .map_err(|e| ToolError::Failed(format!("cannot open {file}: {e}")))?;
            handle
                .write_all(content.as_bytes())
                .await
                .map_err(|e| ToolError::Failed(format!("cannot write {file}: {e}")))?;
            handle
                .flush()
                .await
                .map_err(|e| ToolError::Failed(format!("cannot write {file}: {e}")))?;
            let verb = if append { "appended" } else { "wrote" };
            Ok(ToolOutput::text(format!(
                "{verb} {} bytes to {file}",
                content.len()
            )))
        }
        .boxed()
    }
}
