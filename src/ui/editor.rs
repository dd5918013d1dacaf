//! Ctrl+X: the draft in the user's own editor (`$VISUAL`, else `$EDITOR`, else `vi`).
//!
//! The draft goes to a private temporary file, the editor runs on the real terminal (the TUI
//! hands it over and takes it back), and what was saved comes back to the composer. The editor
//! variable may hold arguments (`code --wait`), so it runs through `sh -c` with the file as `$1`,
//! as git does. A failed or aborted editor leaves the draft as it was.

// The text an external editor saved: no index that could panic on it (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use std::io::Write;

use super::UiError;

/// Bytes of the saved draft read back at most.
const MAX_DRAFT_BYTES: u64 = 16 * 1024 * 1024;

/// The editor command the user chose.
pub fn editor_command() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "vi".into())
}

/// Opens `draft` in the user's editor and returns what was saved.
pub fn edit(draft: &str) -> Result<String, UiError> {
    edit_with(&editor_command(), draft)
}

/// Opens `draft` in `editor` (a shell command line) and returns what was saved.
pub fn edit_with(editor: &str, draft: &str) -> Result<String, UiError> {
    let mut file = tempfile::Builder::new()
        .prefix("chatcli-draft-")
        .suffix(".md")
        .tempfile()
        .map_err(UiError::EditorFile)?;
    file.as_file_mut()
        .write_all(draft.as_bytes())
        .map_err(UiError::EditorFile)?;
    // Through the process door, keeping the terminal: the user types into it.
    let mut door = chatcli_door("sh");
    door.command()
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(file.path());
    let status = door
        .into_std()
        .status()
        .map_err(|source| UiError::EditorStart {
            editor: editor.to_string(),
            source,
        })?;
    if !status.success() {
        return Err(UiError::EditorFailed {
            editor: editor.to_string(),
            status: status.to_string(),
        });
    }
    // The editor may have replaced the file (write to a new one, rename): read it by its path.
    let read =
        crate::files::read_bounded(file.path(), MAX_DRAFT_BYTES).map_err(UiError::EditorFile)?;
    String::from_utf8(read.bytes).map_err(|_| {
        UiError::EditorFile(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "the saved draft is not UTF-8 text",
        ))
    })
}

fn chatcli_door(program: &str) -> crate::process::Door {
    crate::process::Door::new(program).keep_terminal()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_editor_gets_the_draft_and_gives_back_what_it_saved() {
        let edited = edit_with("sed -i 's/draft/edited draft/'", "my draft\n").expect("edits");
        assert_eq!(edited, "my edited draft\n");
        let failed = edit_with("false", "keep me");
        assert!(matches!(failed, Err(UiError::EditorFailed { .. })));
    }
}
