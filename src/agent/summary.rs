//! The context-window guard's last resort, and `/compact`: older turns replaced by a summary the
//! model writes (one extra request, shown and accounted like any other).
//!
//! The newest `KEEP_MESSAGES` messages stay as they are; the cut moves earlier rather than split
//! a tool call from its result, so the shortened history is still a valid request.

use crate::conversation::{ContentBlock, Message, Role};

/// Messages kept verbatim after a summary.
pub const KEEP_MESSAGES: usize = 8;
/// Share of the context window a request may fill before the guard acts.
pub const GUARD_SHARE: f64 = 0.85;

/// What the model is asked to write.
pub const SUMMARY_REQUEST: &str = "Summarise the conversation so far for your own later use: the user's goals, decisions made, facts learned, files touched and their state, and open questions. Plain text, at most 400 words.";

/// The index where the kept part of `history` starts, or `None` when there is nothing to fold.
pub fn cut_point(history: &[Message]) -> Option<usize> {
    if history.len() <= KEEP_MESSAGES {
        return None;
    }
    let mut cut = history.len() - KEEP_MESSAGES;
    // A kept message holding tool results needs the call before it.
    while cut > 0 && holds_results(&history[cut]) {
        cut -= 1;
    }
    (cut > 0).then_some(cut)
}

fn holds_results(message: &Message) -> bool {
    message.role == Role::User
        && message
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolResult { .. }))
}

/// How the text that carries a compaction summary begins.
pub const SUMMARY_MARK: &str = "[Summary of the ";

/// The history with everything before `cut` replaced by `summary`.
pub fn fold(history: &[Message], cut: usize, summary: &str) -> Vec<Message> {
    let text = format!("{SUMMARY_MARK}{cut} earlier messages of this conversation]\n{summary}");
    let mut folded = Vec::with_capacity(history.len() - cut + 1);
    match history.get(cut) {
        Some(first) if first.role == Role::User => {
            let mut first = first.clone();
            first.content.insert(0, ContentBlock::Text { text });
            folded.push(first);
            folded.extend_from_slice(&history[cut + 1..]);
        }
        _ => {
            folded.push(Message::user_text(text));
            folded.extend_from_slice(&history[cut..]);
        }
    }
    folded
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: id.into(),
                name: "t".into(),
                input: json!({}),
            }],
        }
    }

    fn result(id: &str) -> Message {
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id.into(),
                content: "r".into(),
                is_error: false,
            }],
        }
    }

    #[test]
    fn the_cut_never_separates_a_call_from_its_result() {
        let mut history = vec![Message::user_text("start")];
        for i in 0..10 {
            history.push(call(&i.to_string()));
            history.push(result(&i.to_string()));
        }
        let cut = cut_point(&history).expect("something to fold");
        assert_eq!(
            history[cut].role,
            Role::Assistant,
            "the kept part starts with the call"
        );
        let folded = fold(&history, cut, "S");
        assert_eq!(folded[0].role, Role::User);
        assert!(folded[0].text().starts_with("[Summary of the"));
        assert_eq!(folded.len(), history.len() - cut + 1);
        assert!(cut_point(&history[..5]).is_none());
    }
}
