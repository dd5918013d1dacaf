//! `write_file`: create or overwrite a file in the workspace, or append to it. Asks first.
//!
//! Parent directories are created as needed. The path is checked like every other, then opened
//! relative to a handle on the workspace (see `workspace`), so no symlink — dangling, created
//! mid-session or swapped in during the call — can send the write outside. A link as the file
//! itself is refused rather than followed, a new file is created with `O_EXCL`, and anything but
//! a regular file (a FIFO would block) is refused.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::json;
use std::io::Write;

use super::workspace::{Rooted, open_error, open_options, open_root, require_regular, rooted};
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
            let target = rooted(ctx, file)?;
            let owned = (file.to_string(), content.to_string(), target.clone());
            super::journaled(ctx, &target, file, move || {
                write_confined(&owned.2, &owned.0, owned.1.as_bytes(), append)
            })
            .await?;
            let verb = if append { "appended" } else { "wrote" };
            Ok(ToolOutput::text(format!(
                "{verb} {} bytes to {file}",
                content.len()
            )))
        }
        .boxed()
    }
}

/// Writes (or appends) `content` to the file at `target`, confined to its root.
pub fn write_confined(
    target: &Rooted,
    shown: &str,
    content: &[u8],
    append: bool,
) -> Result<(), ToolError> {
    let dir =
        open_root(&target.root).map_err(|e| open_error(shown, "open the workspace for", e))?;
    if let Some(parent) = target.rel.parent()
        && !parent.as_os_str().is_empty()
    {
        dir.create_dir_all(parent)
            .map_err(|e| open_error(shown, "create the directory for", e))?;
    }
    // Before opening: a FIFO opened for writing waits for a reader.
    if let Ok(meta) = dir.symlink_metadata(&target.rel) {
        if meta.file_type().is_symlink() {
            return Err(open_error(
                shown,
                "open",
                std::io::Error::from_raw_os_error(libc::ELOOP),
            ));
        }
        require_regular(shown, meta.file_type())?;
    }
    let mut existing = open_options(false);
    existing.write(true);
    if append {
        existing.append(true);
    }
    let mut fresh = open_options(false);
    fresh.write(true).create_new(true);
    // Open what is there, or create it exclusively; a file appearing in between is opened on the
    // next round (never truncated by a create that raced it).
    let mut handle = None;
    for _ in 0..3 {
        match dir.open_with(&target.rel, &existing) {
            Ok(f) => {
                handle = Some(f);
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(open_error(shown, "open", e)),
        }
        match dir.open_with(&target.rel, &fresh) {
            Ok(f) => {
                handle = Some(f);
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(open_error(shown, "create", e)),
        }
    }
    let Some(handle) = handle else {
        return Err(ToolError::Failed(format!(
            "cannot write {shown}: it kept appearing and disappearing; try again"
        )));
    };
    let meta = handle
        .metadata()
        .map_err(|e| open_error(shown, "inspect", e))?;
    require_regular(shown, meta.file_type())?;
    let mut handle = handle.into_std();
    if !append {
        handle
            .set_len(0)
            .map_err(|e| ToolError::Failed(format!("cannot truncate {shown}: {e}")))?;
    }
    handle
        .write_all(content)
        .and_then(|_| handle.flush())
        .map_err(|e| ToolError::Failed(format!("cannot write {shown}: {e}")))
}
