//! Images the user pastes: a file path pasted or dragged into the terminal (`Op::AttachImage`)
//! and the clipboard's own image (`/paste`, Ctrl+V: `Op::PasteImage`), attached to the next
//! prompt like an `@shot.png` mention.
//!
//! Containment: a pasted path is a file the user chose, as `--context /etc/hosts` is, so it may
//! lie outside the workspace and is read without asking — but only as an image (the header must
//! be a PNG, JPEG, GIF or WebP one, at most 3.75 MB), through the file door (`read_bounded`: a
//! regular file, no link in its last part), and never offered to the model's tools. The
//! clipboard is read with `wl-paste` (Wayland) or `xclip` (X11) through the process door, found
//! on `PATH`, with a time limit; the picture is saved to the session's scratch folder so it can
//! be looked at again. Where neither tool or no display exists, one line says so.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Agent;
use super::error::AgentError;
use crate::prompt::attachments::AttachError;
use crate::prompt::images;
use crate::protocol::AgentEvent;

/// How long the clipboard tool may take.
const CLIPBOARD_TIMEOUT: Duration = Duration::from_secs(5);

/// A program that can print the clipboard's PNG image, and how to ask it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClipboardTool {
    pub program: PathBuf,
    pub args: &'static [&'static str],
}

/// The tool that reads the clipboard's image here: `wl-paste` under Wayland, `xclip` under X11,
/// found in `path` (the `PATH` value); `Err` is the one line that says why there is none.
pub fn clipboard_tool(
    path: Option<&OsStr>,
    wayland: bool,
    x11: bool,
) -> Result<ClipboardTool, AgentError> {
    if !wayland && !x11 {
        return Err(AgentError::Clipboard("clipboard images cannot be read here: no display (neither WAYLAND_DISPLAY nor DISPLAY is set); paste or drag the image's file path instead".into()));
    }
    let find = |name: &str| {
        path.into_iter()
            .flat_map(std::env::split_paths)
            .map(|dir| dir.join(name))
            .find(|candidate| is_executable(candidate))
    };
    let wl = wayland
        .then(|| find("wl-paste"))
        .flatten()
        .map(|program| ClipboardTool {
            program,
            args: &["--no-newline", "--type", "image/png"],
        });
    let x = || {
        x11.then(|| find("xclip"))
            .flatten()
            .map(|program| ClipboardTool {
                program,
                args: &["-selection", "clipboard", "-t", "image/png", "-o"],
            })
    };
    wl.or_else(x).ok_or_else(|| {
        AgentError::Clipboard("clipboard images cannot be read here: neither wl-paste (Wayland, package wl-clipboard) nor xclip (X11) is installed; paste or drag the image's file path instead".into())
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    crate::files::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The clipboard's PNG image, read with `tool` through the process door; `Err` says why not.
pub async fn read_clipboard_png(tool: &ClipboardTool) -> Result<Vec<u8>, AgentError> {
    let name = tool
        .program
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let mut door = crate::process::Door::new(&tool.program);
    door.command()
        .args(tool.args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let run = door.into_tokio().output();
    let out = match tokio::time::timeout(CLIPBOARD_TIMEOUT, run).await {
        Err(_) => {
            return Err(AgentError::Clipboard(format!(
                "{name} did not answer within {}s: no image pasted",
                CLIPBOARD_TIMEOUT.as_secs()
            )));
        }
        Ok(Err(e)) => {
            return Err(AgentError::Clipboard(format!(
                "{name} could not run ({e}): no image pasted"
            )));
        }
        Ok(Ok(out)) => out,
    };
    if !out.status.success() || out.stdout.is_empty() {
        let why = String::from_utf8_lossy(&out.stderr);
        let why = why
            .lines()
            .next()
            .unwrap_or("it printed nothing")
            .trim()
            .to_string();
        return Err(AgentError::Clipboard(format!(
            "the clipboard holds no PNG image ({name}: {why}): no image pasted"
        )));
    }
    Ok(out.stdout)
}

impl Agent {
    /// `Op::AttachImage`: the pasted path's image, for the next prompt, or why not.
    pub(super) async fn attach_pasted(&mut self, path: &str) {
        let file = PathBuf::from(path);
        let name = path.to_string();
        let loaded = tokio::task::spawn_blocking(move || {
            let read =
                crate::files::read_bounded(&file, images::MAX_IMAGE_BYTES + 1).map_err(|e| {
                    AttachError::Image(format!("{name} cannot be read ({e}): not attached"))
                })?;
            images::attached(&name, &read.bytes, read.total)
        })
        .await
        .unwrap_or_else(|e| {
            Err(AttachError::Image(format!(
                "{path} cannot be read ({e}): not attached"
            )))
        });
        self.take_images(vec![loaded]);
    }

    /// `Op::PasteImage`: the clipboard's image, saved to the scratch folder and attached to the
    /// next prompt, or one line that says why not.
    pub(super) async fn paste_clipboard(&mut self) {
        let tool = clipboard_tool(
            std::env::var_os("PATH").as_deref(),
            std::env::var_os("WAYLAND_DISPLAY").is_some_and(|v| !v.is_empty()),
            std::env::var_os("DISPLAY").is_some_and(|v| !v.is_empty()),
        );
        let bytes = match tool {
            Ok(tool) => read_clipboard_png(&tool).await,
            Err(line) => Err(line),
        };
        let bytes = match bytes {
            Ok(bytes) => bytes,
            Err(why) => {
                self.emit(AgentEvent::Notice {
                    message: why.to_string(),
                });
                return;
            }
        };
        let scratch = self.tools.ctx.scratch.clone();
        let kept = bytes.clone();
        let saved = tokio::task::spawn_blocking(move || scratch.save("clipboard", "png", &kept))
            .await
            .ok()
            .and_then(Result::ok);
        let name = saved.map_or_else(
            || "the clipboard's image".to_string(),
            |p| p.display().to_string(),
        );
        let total = bytes.len() as u64;
        self.take_images(vec![images::attached(&name, &bytes, total)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_display_or_a_tool_one_line_says_so() {
        let none = clipboard_tool(Some(OsStr::new("/usr/bin")), false, false)
            .unwrap_err()
            .to_string();
        assert!(none.contains("no display"), "{none}");
        let empty = tempfile::tempdir().expect("tempdir");
        let missing = clipboard_tool(Some(empty.path().as_os_str()), true, true)
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains("wl-paste") && missing.contains("xclip"),
            "{missing}"
        );
    }
}
