//! `patch_file`: replace one exact occurrence of `search` with `replace`. Asks first.
//!
//! The search text must occur exactly once: missing or ambiguous text fails with a clear error and
//! the file is left untouched, so the model cannot edit the wrong place by accident. The new
//! content is written to a temporary file beside the original and renamed over it.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::json;

use super::workspace::confine;
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
            let path = confine(ctx, file)?;
            let text = tokio::fs::read_to_string(&path)
                .await
                .map_err(|e| ToolError::Failed(format!("cannot read {file}: {e}")))?;
            let patched = patch(&text, search, replace)
                .map_err(|e| ToolError::Failed(format!("{file}: {e}")))?;
            let tmp = path.with_file_name(format!(
                ".{}.chatcli-patch",
                path.file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default()
            ));
            tokio::fs::write(&tmp, &patched)
                .await
                .map_err(|e| ToolError::Failed(format!("cannot write {file}: {e}")))?;
            if let Ok(meta) = tokio::fs::metadata(&path).await {
                let _ = tokio::fs::set_permissions(&tmp, meta.permissions()).await;
            }
            tokio::fs::rename(&tmp, &path)
                .await
                .map_err(|e| ToolError::Failed(format!("cannot replace {file}: {e}")))?;
            let line = text[..text.find(search).unwrap_or(0)]
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

/// The text with its single occurrence of `search` replaced, or why that is not possible.
pub fn patch(text: &str, search: &str, replace: &str) -> Result<String, String> {
    let mut matches = text.match_indices(search);
    let Some((at, _)) = matches.next() else {
        return Err(
            "the search text was not found (it must match exactly, whitespace included)".into(),
        );
    };
    let others = matches.count();
    if others > 0 {
        return Err(format!(
            "the search text occurs {} times; include more surrounding lines so it occurs once",
            others + 1
        ));
    }
    let mut out = String::with_capacity(text.len() + replace.len());
    out.push_str(&text[..at]);
    out.push_str(replace);
    out.push_str(&text[at + search.len()..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_exactly_one_occurrence() {
        assert_eq!(patch("a b c", "b", "x"), Ok("a x c".to_string()));
        assert!(patch("a b c", "z", "x").unwrap_err().contains("not found"));
        assert!(
            patch("b b", "b", "x")
                .unwrap_err()
                .contains("occurs 2 times")
        );
    }
}
