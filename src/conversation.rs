//! The provider-neutral conversation: what the agent keeps as history and what a request carries.
//!
//! Each wire client translates these types into its own JSON; nothing here knows a provider.
//! A request holds its messages as `Arc<Message>`: the compactor keeps each rendered message
//! once and every request (and each retry's copy of it) shares it, so sending a long history
//! costs a pass over pointers, not a copy of its bytes; serde writes an `Arc` as what it holds,
//! so the bytes sent are the same.
//! Invariant the agent keeps: every `ToolUse` block in an assistant message is answered by a
//! `ToolResult` with the same id in the next user message, so any prefix of the history that ends
//! on a user message is a valid request body for every provider.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text { text: String },
    /// Reasoning the provider returned; sent back unchanged (with its signature) during tool loops.
    Thinking {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// A tool call the model made.
    ToolUse {
        id: String,
        name: String,
        input: serde_json::Value,
    },
    /// The answer to a tool call.
    ToolResult {
        tool_use_id: String,
        content: String,
        is_error: bool,
    },
    /// An image the user attached (`@shot.png`): its MIME type and its bytes in base64, sent in
    /// each wire's own shape.
    Image { media_type: String, data: String },
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<ContentBlock>,
}

impl Message {
    /// A user message holding one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }

    /// The concatenated text blocks of the message.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The tool calls this message makes.
    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &serde_json::Value)> {
        self.content.iter().filter_map(|b| match b {
            ContentBlock::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
            _ => None,
        })
    }
}

/// A named block of the system prompt; `stable` blocks never change within a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemBlock {
    pub name: String,
    pub text: String,
    pub stable: bool,
}

/// A tool definition as sent to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// How much a model should think (a specialist's `effort`): sent as the provider's reasoning
/// setting where it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    Low,
    Medium,
    High,
}

impl Effort {
    /// The name as written in front matter and environment variables.
    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
        }
    }

    /// `low`, `medium` or `high` (case-insensitive).
    pub fn parse(text: &str) -> Option<Effort> {
        match text.trim().to_ascii_lowercase().as_str() {
            "low" => Some(Effort::Low),
            "medium" => Some(Effort::Medium),
            "high" => Some(Effort::High),
            _ => None,
        }
    }
}

/// Everything one request to the model carries.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelRequest {
    pub model: String,
    pub system: Vec<SystemBlock>,
    pub tools: Vec<ToolSpec>,
    /// Shared with the compactor's last render: cloning a request copies pointers.
    pub messages: Vec<Arc<Message>>,
    pub max_output_tokens: u32,
    /// Stable per session: providers use it as their cache key where they take one.
    pub session_id: String,
    /// How much to reason, where the wire has a setting for it (OpenAI's reasoning models);
    /// `None` leaves the provider's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<Effort>,
    /// How many leading messages the next request sends again unchanged (the rest is about to
    /// be compacted): the rolling cache marker goes on the last of them. `None`: every message.
    pub settled_messages: Option<usize>,
    /// The message the previous request's rolling marker was on, when this request sends it
    /// again unchanged. Wires with explicit markers spend one more there (a "bridge"), so that
    /// write stays within Anthropic's lookback of about 20 content blocks from the new rolling
    /// marker however many blocks the last turn added (ten parallel calls and their results are
    /// twenty). `None`: no bridge.
    pub bridge_message: Option<usize>,
}

/// Messages as a request holds them, each behind its own `Arc` (for requests built from a
/// plain list: a summary, a test).
pub fn shared(messages: impl IntoIterator<Item = Message>) -> Vec<Arc<Message>> {
    messages.into_iter().map(Arc::new).collect()
}

impl ModelRequest {
    /// The message the rolling cache marker goes on: the last settled one, if any.
    pub fn rolling_marker(&self) -> Option<usize> {
        let settled = self
            .settled_messages
            .unwrap_or(self.messages.len())
            .min(self.messages.len());
        settled.checked_sub(1)
    }

    /// The message the bridge marker goes on: the previous rolling marker's, when it lies
    /// before this request's rolling marker.
    pub fn bridge_marker(&self) -> Option<usize> {
        let rolling = self.rolling_marker()?;
        self.bridge_message.filter(|b| *b < rolling)
    }
}

/// Where a wire puts the rolling cache marker and the bridge, in its own message list (a wire
/// drops empty messages and may split one into several): fed each request message's wire index
/// as the wire emits it, it keeps the last one at or before each marker's message.
#[derive(Debug, Clone, Copy)]
pub struct MarkerPlaces {
    rolling: Option<usize>,
    bridge: Option<usize>,
    marked: Option<usize>,
    bridged: Option<usize>,
}

impl MarkerPlaces {
    /// The places for `request`'s markers, nothing sent yet.
    pub fn new(request: &ModelRequest) -> Self {
        MarkerPlaces {
            rolling: request.rolling_marker(),
            bridge: request.bridge_marker(),
            marked: None,
            bridged: None,
        }
    }

    /// Request message `i` went out as wire message `wire` (one that can carry a marker).
    pub fn sent(&mut self, i: usize, wire: usize) {
        if self.rolling.is_some_and(|r| i <= r) {
            self.marked = Some(wire);
        }
        if self.bridge.is_some_and(|b| i <= b) {
            self.bridged = Some(wire);
        }
    }

    /// The wire messages to mark: the bridge (unless it falls on the rolling one), then the
    /// rolling one.
    pub fn places(&self) -> impl Iterator<Item = usize> {
        let bridged = self.bridged.filter(|b| Some(*b) != self.marked);
        [bridged, self.marked].into_iter().flatten()
    }
}

/// The agent's history: the messages, each with a stamp that is new whenever the message is
/// added or changed. What is worked out of a message once (its size, its hash, its compacted
/// form) is kept under its stamp, so each request pays for what changed, not for the whole
/// history. Reading goes through `Deref` to a slice; every change goes through a method here,
/// so no message can change without a new stamp.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    messages: Vec<Message>,
    stamps: Vec<u64>,
}

/// The next stamp: unique in the process, so two histories (a fold, a specialist's) never
/// share one by chance; a copy (`clone`) shares its stamps, which stay true, since any change to
/// either copy stamps the changed message anew.
fn fresh_stamp() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl History {
    /// Each message's stamp, in order.
    pub fn stamps(&self) -> &[u64] {
        &self.stamps
    }

    /// Appends a message.
    pub fn push(&mut self, message: Message) {
        self.messages.push(message);
        self.stamps.push(fresh_stamp());
    }

    /// The last message, to change in place: it gets a new stamp.
    pub fn last_mut(&mut self) -> Option<&mut Message> {
        let stamp = self.stamps.last_mut()?;
        *stamp = fresh_stamp();
        self.messages.last_mut()
    }

    /// Keeps the first `len` messages.
    pub fn truncate(&mut self, len: usize) {
        self.messages.truncate(len);
        self.stamps.truncate(len);
    }

    /// Appends user text, merging into a trailing user message (`push_user_text`).
    pub fn push_user_text(&mut self, text: String) {
        match self.messages.last().map(|m| m.role) {
            Some(Role::User) => {
                if let Some(last) = self.last_mut() {
                    last.content.push(ContentBlock::Text { text });
                }
            }
            _ => self.push(Message::user_text(text)),
        }
    }

    /// Every message, to change in place: each gets a new stamp.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Message> {
        for stamp in &mut self.stamps {
            *stamp = fresh_stamp();
        }
        self.messages.iter_mut()
    }

    /// The messages, without their stamps.
    pub fn into_messages(self) -> Vec<Message> {
        self.messages
    }
}

impl From<Vec<Message>> for History {
    fn from(messages: Vec<Message>) -> Self {
        let stamps = messages.iter().map(|_| fresh_stamp()).collect();
        History { messages, stamps }
    }
}

impl std::ops::Deref for History {
    type Target = [Message];

    fn deref(&self) -> &[Message] {
        &self.messages
    }
}

/// Appends user text to the history, merging into a trailing user message so roles keep alternating.
pub fn push_user_text(history: &mut Vec<Message>, text: String) {
    match history.last_mut() {
        Some(last) if last.role == Role::User => last.content.push(ContentBlock::Text { text }),
        _ => history.push(Message::user_text(text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_after_a_user_message_merges() {
        let mut history = vec![Message::user_text("a")];
        push_user_text(&mut history, "b".into());
        assert_eq!(history.len(), 1);
        assert_eq!(history[0].text(), "ab");
        history.push(Message {
            role: Role::Assistant,
            content: vec![ContentBlock::Text { text: "x".into() }],
        });
        push_user_text(&mut history, "c".into());
        assert_eq!(history.len(), 3);
    }

    #[test]
    fn a_message_gets_a_new_stamp_when_it_is_added_or_changed_and_keeps_it_otherwise() {
        let mut history = History::from(vec![Message::user_text("a")]);
        let first = history.stamps().to_vec();
        history.push(Message {
            role: Role::Assistant,
            content: vec![ContentBlock::Text { text: "x".into() }],
        });
        assert_eq!(
            history.stamps()[0],
            first[0],
            "an older message keeps its stamp"
        );
        let second = history.stamps()[1];
        history.push_user_text("b".into());
        history.push_user_text("c".into());
        assert_eq!(history.len(), 3, "c merged into b's message");
        let third = history.stamps()[2];
        assert_eq!(history.stamps()[..2], [first[0], second]);
        history.last_mut();
        assert_ne!(
            history.stamps()[2],
            third,
            "a message changed in place is new"
        );
        let copy = History::from(history.to_vec());
        assert!(
            copy.stamps().iter().all(|s| !history.stamps().contains(s)),
            "another history never shares a stamp"
        );
        history.truncate(1);
        assert_eq!(history.stamps(), &first[..]);
    }
}
