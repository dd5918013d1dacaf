//! The offline `demo` provider: deterministic answers and honest-looking usage, no network.
//!
//! It exists so that a new user sees the whole interface working with no account. Answers are
//! canned but depend on the prompt; asking it to read a file makes it call `read_file`, and after
//! a tool result it answers from that result. Usage comes from the model of Anthropic's prompt
//! cache the benchmark uses too (`provider::cache_model`), with markers where chatcli places them
//! and token counts estimated from bytes (never the o200k encoder, which would more than double
//! the TUI's memory), so the meters move the way they would against a real provider (a prompt under
//! 1,024 tokens, as in chat mode, is never cached).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::stream;

use super::cache_model::{CacheModel, Semantics, segments};
use super::{Provider, ProviderEvent, ProviderStream, StopReason};
use crate::conversation::{ContentBlock, Message, ModelRequest, Role};

/// The offline demo provider.
pub struct DemoProvider {
    chunk_delay: Duration,
    cache: Mutex<DemoCache>,
}

/// The prompt cache the demo pretends to have: the benchmark's Anthropic cache model.
struct DemoCache {
    model: CacheModel,
    memo: HashMap<u64, u64>,
}

impl DemoProvider {
    /// A demo provider that waits `chunk_delay` between streamed pieces (zero in tests and `exec`).
    pub fn new(chunk_delay: Duration) -> Self {
        DemoProvider {
            chunk_delay,
            cache: Mutex::new(DemoCache {
                model: CacheModel::new(Semantics::Anthropic),
                memo: HashMap::new(),
            }),
        }
    }
}

/// The demo's token count: the cheap estimate.
fn rough(text: &str) -> u64 {
    crate::tokens::rough(text.len())
}

impl Provider for DemoProvider {
    fn name(&self) -> &str {
        "demo"
    }

    fn label(&self) -> String {
        "demo (offline)".to_string()
    }

    fn model(&self) -> &str {
        "demo"
    }

    fn stream(&self, request: ModelRequest) -> ProviderStream {
        let reply = compose_reply(&request);
        let usage = {
            // A poisoned lock only means another request panicked mid-update; the state is still usable.
            let mut state = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            let state = &mut *state;
            // Bytes / 4, not o200k: the exact counts would load the encoder (~45 MB) in every
            // demo session, for figures that only need to move the way a provider's would.
            let (segments, markers) = segments(&request, &mut state.memo, true, rough);
            state.model.now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs();
            let mut usage = state.model.account(&segments, &markers);
            usage.output = rough(&reply.output_text()).max(1);
            usage
        };
        let mut events: Vec<ProviderEvent> = Vec::new();
        for piece in split_for_streaming(&reply.text) {
            events.push(ProviderEvent::TextDelta(piece));
        }
        let stop = if let Some((id, name, args)) = reply.tool_call {
            events.push(ProviderEvent::ToolCall { id, name, args });
            StopReason::ToolUse
        } else {
            StopReason::EndTurn
        };
        events.push(ProviderEvent::Usage(usage));
        events.push(ProviderEvent::Stop(stop));
        let delay = self.chunk_delay;
        Box::pin(stream::unfold(
            (events.into_iter(), true),
            move |(mut it, first)| async move {
                let next = it.next()?;
                if !first && !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                Some((Ok(next), (it, false)))
            },
        ))
    }
}

/// What the demo model says to one request.
struct Reply {
    text: String,
    tool_call: Option<(String, String, serde_json::Value)>,
}

impl Reply {
    fn output_text(&self) -> String {
        match &self.tool_call {
            Some((_, name, args)) => format!("{}{name}{args}", self.text),
            None => self.text.clone(),
        }
    }
}

fn compose_reply(request: &ModelRequest) -> Reply {
    let Some(last) = request.messages.last() else {
        return text_reply("Ask me anything: I am the offline demo.".to_string());
    };
    // After a tool round trip, answer from the newest tool result.
    let newest_result = last.content.iter().rev().find_map(|b| match b {
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => Some((tool_use_id, content, *is_error)),
        _ => None,
    });
    if let Some((id, content, is_error)) = newest_result {
        let file = called_file(&request.messages, id).unwrap_or_else(|| "the file".to_string());
        return text_reply(answer_from_result(&file, content, is_error));
    }
    // What the user typed: the volatile context block chatcli appends is not part of it.
    let prompt: String = last
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } if !text.starts_with("<context>") => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let can_call = request.tools.iter().any(|t| t.name == "read_file");
    if let Some(file) = requested_file(&prompt).filter(|_| can_call) {
        let id = format!("call_demo_{}", request.messages.len());
        return Reply {
            text: format!("I'll read `{file}`.\n"),
            tool_call: Some((
                id,
                "read_file".to_string(),
                serde_json::json!({ "file": file }),
            )),
        };
    }
    text_reply(canned_answer(&prompt, can_call))
}

fn text_reply(text: String) -> Reply {
    Reply {
        text,
        tool_call: None,
    }
}

/// The path of the `read_file` call with this id, if the history has it.
fn called_file(messages: &[Arc<Message>], id: &str) -> Option<String> {
    messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .flat_map(|m| m.tool_uses())
        .find(|(call_id, _, _)| *call_id == id)
        .and_then(|(_, _, args)| {
            args.get("file")
                .and_then(|f| f.as_str())
                .map(str::to_string)
        })
}

/// A file the prompt asks to read: a path-like word after "read", "open", "show" or "cat".
fn requested_file(prompt: &str) -> Option<String> {
    let words: Vec<&str> = prompt.split_whitespace().collect();
    let verbs = ["read", "open", "show", "cat", "leia", "abra", "mostre"];
    let start = words.iter().position(|w| {
        verbs.contains(
            &w.to_lowercase()
                .trim_matches(|c: char| !c.is_alphanumeric()),
        )
    })?;
    words
        .iter()
        .skip(start + 1)
        .map(|w| {
            w.trim_matches(|c: char| matches!(c, '`' | '"' | '\'' | ',' | '?' | '!' | ')' | '('))
        })
        .map(|w| w.trim_end_matches('.'))
        .find(|w| !w.is_empty() && (w.contains('.') || w.contains('/')))
        .map(str::to_string)
}

fn answer_from_result(file: &str, content: &str, is_error: bool) -> String {
    if is_error {
        return format!("I could not read `{file}`: {content}");
    }
    let lines: Vec<&str> = content.lines().collect();
    let preview: Vec<&str> = lines.iter().take(5).copied().collect();
    format!(
        "`{file}` came back with **{} lines** ({} characters). It starts with:\n\n```\n{}\n```\n\n\
         The whole result went into the conversation once; from the next request on, microcompact \
         keeps it in the cached prefix or swaps it for a pointer to its saved copy, whichever \
         costs less.",
        lines.len(),
        content.chars().count(),
        preview.join("\n"),
    )
}

fn canned_answer(prompt: &str, can_call: bool) -> String {
    let words = prompt.split_whitespace().count();
    let greeting = prompt
        .split_whitespace()
        .next()
        .map(|w| w.to_lowercase())
        .filter(|w| {
            ["hi", "hello", "hey", "oi", "olá", "ola"]
                .contains(&w.trim_matches(|c: char| !c.is_alphanumeric()))
        });
    let opening = if greeting.is_some() {
        "Hello! I'm the **offline demo** model: no account, no network.".to_string()
    } else {
        format!(
            "You asked something in {words} words; I'm the **offline demo** model, so this answer is canned."
        )
    };
    let tip = if can_call {
        "- Ask me to `read Cargo.toml` (or any file here) to watch a tool call run.\n"
    } else {
        "- Press Shift+Tab to reach `agent` mode, where I can call tools.\n"
    };
    format!(
        "{opening}\n\nWhat you can try:\n\n{tip}\
         - Watch the meter: `N↑ M↓` counts input and output tokens; `cache` is the share of input read from the prompt cache.\n\
         - Set `ANTHROPIC_API_KEY` or `OPENAI_API_KEY` and restart to talk to a real model.\n"
    )
}

/// Cuts text into small pieces (a few words each) for a visible stream.
fn split_for_streaming(text: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut words = 0;
    for (i, part) in text.split_inclusive(' ').enumerate() {
        current.push_str(part);
        words += 1;
        if words == 3 || i == 0 {
            pieces.push(std::mem::take(&mut current));
            words = 0;
        }
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{SystemBlock, ToolSpec};

    fn request(messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            model: "demo".into(),
            system: vec![SystemBlock {
                name: "core".into(),
                text: "You are helpful.".repeat(40),
                stable: true,
            }],
            tools: vec![ToolSpec {
                name: "read_file".into(),
                description: "Read a file".into(),
                parameters: serde_json::json!({"type": "object"}),
            }],
            messages: crate::conversation::shared(messages),
            max_output_tokens: 1000,
            session_id: "s".into(),
            effort: None,
            settled_messages: None,
            bridge_message: None,
        }
    }

    #[test]
    fn the_second_request_reads_the_first_from_the_cache() {
        let demo = DemoProvider::new(Duration::ZERO);
        let mut first = request(vec![Message::user_text("hello")]);
        // Enough tool text for the prefix to pass the 1,024-token minimum.
        first.tools = (0..8)
            .map(|i| ToolSpec {
                name: format!("tool_{i}"),
                description: "Reads, writes or searches files in the workspace. ".repeat(20),
                parameters: serde_json::json!({"type": "object"}),
            })
            .collect();
        let usage = |r: ModelRequest| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .expect("runtime");
            rt.block_on(async {
                use futures_util::StreamExt;
                let mut s = demo.stream(r);
                let mut out = None;
                while let Some(Ok(e)) = s.next().await {
                    if let ProviderEvent::Usage(u) = e {
                        out = Some(u);
                    }
                }
                out.expect("usage")
            })
        };
        let u1 = usage(first.clone());
        assert_eq!(u1.cache_read, 0);
        assert!(u1.cache_write_5m > 1000);
        let mut second = first.clone();
        second.messages.push(Arc::new(Message {
            role: Role::Assistant,
            content: vec![ContentBlock::Text { text: "hi".into() }],
        }));
        second.messages.push(Arc::new(Message::user_text("more")));
        let u2 = usage(second);
        assert_eq!(u2.cache_read, u1.total_input());
        assert!(u2.cache_write_5m > 0 && u2.cache_write_5m < 40, "{u2:?}");
    }

    #[test]
    fn asks_for_a_file_when_told_to_read_one() {
        assert_eq!(
            requested_file("please read `src/main.rs`"),
            Some("src/main.rs".into())
        );
        assert_eq!(
            requested_file("Read Cargo.toml."),
            Some("Cargo.toml".into())
        );
        assert_eq!(requested_file("what is a mutex?"), None);
        let reply = compose_reply(&request(vec![Message::user_text("read README.md")]));
        let (_, name, args) = reply.tool_call.expect("a tool call");
        assert_eq!(name, "read_file");
        assert_eq!(args["file"], "README.md");
    }

    #[test]
    fn streaming_pieces_rebuild_the_text() {
        let text = "one two three four five six seven";
        assert_eq!(split_for_streaming(text).concat(), text);
        assert!(split_for_streaming(text).len() > 2);
    }
}
