//! `patch_file`: replace one exact occurrence of `search` with `replace`. Asks first.
//!
//! The search text must occur exactly once: missing or ambiguous text fails with a clear error and
//! the file is left untouched, so the model cannot edit the wrong place by accident. The new
//! content is written to a temporary file beside the original (created with `O_EXCL`) and renamed
//! over it, all through the workspace handle (see `workspace`); a symlink as the file is refused,
//! since the rename would replace the link, not what it points to.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::json;

use std::io::{Read, Write};

use super::workspace::{Rooted, open_error, open_options, open_root, require_regular, rooted};
use super::{Tool, ToolContext, ToolError, ToolOutput, required_str};
use crate::conversation::ToolSpec;

/// The `patch_file` tool.
pub struct PatchFile;

impl Tool for PatchFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "patch_file".into(),
            description: "Replace the one exact occurrence of `search` in a file with `replace`."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "file": {"type": "string"},
                    "search": {"type": "string"},
                    "replace": {"type": "string"}
                },
                "required": ["file", "search", "replace"]
            }),
        }
    }

    fn read_only(&self) -> bool {
        false
    }

    fn preview(&self, args: &serde_json::Value, ctx: &ToolContext) -> Option<String> {
        super::preview::patch_file(args, ctx)
    }

    fn run<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let file = required_str(args, "file")?;
            let search = required_str(args, "search")?;
            let replace = required_str(args, "replace")?;
            if search.is_empty() {
                return Err(ToolError::InvalidArgs("`search` must not be empty".into()));
            }
            let target = rooted(ctx, file)?;
            let (shown, search_owned, replace_owned) =
                (file.to_string(), search.to_string(), replace.to_string());
            let rooted = target.clone();
            let text = super::journaled(ctx, &rooted, file, move || {
                patch_confined(&target, &shown, &search_owned, &replace_owned)
            })
            .await?;
            let line = text
                .split_once(search)
                .map_or("", |(before, _)| before)
                .lines()
                .count()
                .max(1);
            Ok(ToolOutput::text(format!(
                "patched {file} at line {line}: {} lines replaced by {}",
                search.lines().count().max(1),
                replace.lines().count().max(1)
            )))
        }
        .boxed()
    }
}

/// Files larger than this are not patched (the whole text is held twice in memory).
const MAX_PATCH_BYTES: u64 = 32 * 1024 * 1024;

/// Patches the file at `target` in place; returns its text before the patch.
fn patch_confined(
    target: &Rooted,
    shown: &str,
    search: &str,
    replace: &str,
) -> Result<String, ToolError> {
    let dir =
        open_root(&target.root).map_err(|e| open_error(shown, "open the workspace for", e))?;
    let meta = dir
        .symlink_metadata(&target.rel)
        .map_err(|e| open_error(shown, "read", e))?;
    if meta.file_type().is_symlink() {
        return Err(ToolError::Confinement(format!(
            "refused: {shown} is a symbolic link; patch the file it points to, by its own path"
        )));
    }
    require_regular(shown, meta.file_type())?;
    let mut options = open_options(false);
    options.read(true);
    let file = dir
        .open_with(&target.rel, &options)
        .map_err(|e| open_error(shown, "read", e))?;
    let meta = file.metadata().map_err(|e| open_error(shown, "read", e))?;
    require_regular(shown, meta.file_type())?;
    if meta.len() > MAX_PATCH_BYTES {
        return Err(ToolError::Failed(format!(
            "{shown} is {} MiB, larger than patch_file handles ({} MiB); edit it with run_command",
            meta.len() / (1024 * 1024),
            MAX_PATCH_BYTES / (1024 * 1024)
        )));
    }
    let mut bytes = Vec::new();
    file.into_std()
        .take(MAX_PATCH_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::Failed(format!("cannot read {shown}: {e}")))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| ToolError::Failed(format!("cannot patch {shown}: it is not UTF-8 text")))?;
    let patched =
        patch(&text, search, replace).map_err(|e| ToolError::Failed(format!("{shown}: {e}")))?;
    let name = target
        .rel
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let tmp = target.rel.with_file_name(format!(".{name}.chatcli-patch"));
    // A leftover from an interrupted patch (or a link planted there) is removed, never followed.
    let _ = dir.remove_file(&tmp);
    let mut fresh = open_options(false);
    fresh.write(true).create_new(true);
    let handle = dir
        .open_with(&tmp, &fresh)
        .map_err(|e| open_error(shown, "write a temporary file beside", e))?;
    let mut handle = handle.into_std();
    let written = handle
        .write_all(patched.as_bytes())
        .and_then(|_| handle.flush())
        .and_then(|_| meta.permissions().into_std(&handle))
        .and_then(|perms| handle.set_permissions(perms));
    if let Err(e) = written {
        let _ = dir.remove_file(&tmp);
        return Err(ToolError::Failed(format!("cannot write {shown}: {e}")));
    }
    dir.rename(&tmp, &dir, &target.rel).map_err(|e| {
        let _ = dir.remove_file(&tmp);
        ToolError::Failed(format!("cannot replace {shown}: {e}"))
    })?;
    Ok(text)
}

/// The text with its single occurrence of `search` replaced, or why that is not possible.
pub fn patch(text: &str, search: &str, replace: &str) -> Result<String, ToolError> {
    let Some((before, after)) = text.split_once(search) else {
        return Err(ToolError::SearchNotFound);
    };
    let others = after.matches(search).count();
    if others > 0 {
        return Err(ToolError::SearchRepeated(others + 1));
    }
    let mut out = String::with_capacity(text.len() + replace.len());
    out.push_str(before);
    out.push_str(replace);
    out.push_str(after);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_exactly_one_occurrence() {
        assert_eq!(patch("a b c", "b", "x"), Ok("a x c".to_string()));
        assert!(
            patch("a b c", "z", "x")
                .unwrap_err()
                .to_string()
                .contains("not found")
        );
        assert!(
            patch("b b", "b", "x")
                .unwrap_err()
                .to_string()
                .contains("occurs 2 times")
        );
    }
}
