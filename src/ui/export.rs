//! `/copy` and `/export`: the conversation out of the terminal, as text, never as the screen.
//!
//! `/copy` puts the last answer (or its Nth code block) on the clipboard through OSC 52, the
//! escape sequence terminals (and tmux with `set-clipboard on`, and SSH sessions, since it
//! travels with the output) turn into a clipboard write; nothing of the frame, the wrapping or
//! the prefixes comes with it. `/export` writes the transcript as Markdown. Both read the chat
//! cells, which hold what the model and the user wrote, not what was drawn.

// The transcript's text: no index that could panic on it (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use base64::Engine;

use super::UiError;
use super::chat::{CellKind, HistoryCell};

/// The OSC 52 sequence that asks the terminal to put `text` on the clipboard.
pub fn osc52(text: &str) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    format!("\x1b]52;c;{encoded}\x07")
}

/// The text of the last answer, or of its `block`-th fenced code block (1-based); `Err` says
/// what is missing.
pub fn copy_text(cells: &[HistoryCell], block: Option<usize>) -> Result<String, UiError> {
    let answer = cells
        .iter()
        .rev()
        .find_map(|cell| match cell.kind() {
            CellKind::Assistant { text, .. } if !text.trim().is_empty() => Some(text.clone()),
            _ => None,
        })
        .ok_or(UiError::NothingToCopy)?;
    let Some(n) = block else {
        return Ok(answer.trim_end().to_string());
    };
    let blocks = code_blocks(&answer);
    match n.checked_sub(1).and_then(|i| blocks.get(i)) {
        Some(code) => Ok(code.clone()),
        None => Err(UiError::NoSuchBlock {
            count: blocks.len(),
        }),
    }
}

/// The fenced code blocks of Markdown `text`, their contents without the fences.
pub fn code_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, Vec<&str>)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let fence = ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f));
        match (&mut current, fence) {
            (None, Some(f)) => current = Some((f.to_string(), Vec::new())),
            (Some((open, lines)), Some(f)) if *open == f && trimmed.trim() == f => {
                blocks.push(lines.join("\n"));
                current = None;
            }
            (Some((_, lines)), _) => lines.push(line),
            (None, None) => {}
        }
    }
    // An unclosed fence still holds the code the user sees.
    if let Some((_, lines)) = current {
        blocks.push(lines.join("\n"));
    }
    blocks
}

/// The transcript as Markdown: each prompt and answer under a heading, tool calls as a list,
/// chatcli's notices as quotes.
pub fn markdown(cells: &[HistoryCell], title: &str) -> String {
    let mut out = format!("# {title}\n");
    for cell in cells {
        match cell.kind() {
            CellKind::User(text) => {
                out.push_str("\n## You\n\n");
                out.push_str(text.trim_end());
                out.push('\n');
            }
            CellKind::Assistant {
                text, tool_calls, ..
            } => {
                if text.trim().is_empty() && tool_calls.is_empty() {
                    continue;
                }
                out.push_str("\n## Assistant\n\n");
                for call in tool_calls {
                    let outcome = match &call.outcome {
                        Some(o) if o.ok => " (ok)".to_string(),
                        Some(o) => format!(
                            " (failed{})",
                            o.error
                                .as_deref()
                                .map(|e| format!(": {e}"))
                                .unwrap_or_default()
                        ),
                        None => String::new(),
                    };
                    out.push_str(&format!("- `{}` {}{outcome}\n", call.name, call.summary));
                }
                if !tool_calls.is_empty() && !text.trim().is_empty() {
                    out.push('\n');
                }
                if !text.trim().is_empty() {
                    out.push_str(text.trim_end());
                    out.push('\n');
                }
            }
            CellKind::Notice(text) | CellKind::Error(text) => {
                out.push('\n');
                for line in text.lines() {
                    out.push_str(&format!("> {line}\n"));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_blocks_come_without_fences() {
        let text = "Here:\n```rust\nfn a() {}\n```\nand\n~~~\nls -la\n~~~\n```\nopen";
        assert_eq!(code_blocks(text), vec!["fn a() {}", "ls -la", "open"]);
    }

    #[test]
    fn osc52_carries_the_text_in_base64() {
        assert_eq!(osc52("hi"), "\x1b]52;c;aGk=\x07");
    }
}
