//! What a request weighs, worked out once per request from sizes already known: the system
//! blocks and tools serialised (a few kilobytes, the same every request) and the size of each
//! message the compactor rendered (`compaction::Memo`, kept until a message changes). The
//! context guard, the output limit and the estimate booked for a response that never finished
//! all read this one figure instead of serialising the history again.
//!
//! The figures are exact, not approximations: `RequestSize::input_bytes` is the length of
//! the system, tools and messages serialised as JSON, and `request_bytes` the length of the
//! whole request so serialised, as the code before this module computed them by serialising.
//! A newcomer would be tempted to estimate a message by its text; the guard's threshold and the
//! limit it sets would then move, and the user would see it.

use std::sync::Arc;

use crate::conversation::{Message, ModelRequest, SystemBlock, ToolSpec};

/// The smallest `max_tokens` a request asks for, however full the window.
pub const MIN_OUTPUT_TOKENS: u32 = 16;

/// The serialised size of a request's input: its system blocks, tools and messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestSize {
    system: usize,
    tools: usize,
    /// The messages as a JSON array, brackets and commas included.
    pub messages: usize,
}

/// The length of a JSON array of items of these serialised lengths.
pub fn array_bytes(items: impl Iterator<Item = usize>) -> usize {
    let (count, sum) = items.fold((0usize, 0usize), |(n, s), b| (n + 1, s + b));
    2 + sum + count.saturating_sub(1)
}

impl RequestSize {
    /// The size of `system`, `tools` and messages of the given serialised lengths.
    pub fn new(
        system: &[SystemBlock],
        tools: &[ToolSpec],
        messages: impl Iterator<Item = usize>,
    ) -> Self {
        RequestSize {
            system: serde_json::to_vec(system).map_or(0, |b| b.len()),
            tools: serde_json::to_vec(tools).map_or(0, |b| b.len()),
            messages: array_bytes(messages),
        }
    }

    /// Bytes of the system blocks, tools and messages serialised.
    pub fn input_bytes(&self) -> usize {
        self.system + self.tools + self.messages
    }

    /// Whether the request would fill more than `share` of a `window`-token context; each image
    /// of `messages` counts at the most a provider bills for one, not by its base64.
    pub fn over(&self, messages: &[Arc<Message>], window: u64, share: f64) -> bool {
        let bytes = super::images::weigh_images(messages, self.input_bytes());
        crate::tokens::rough(bytes) as f64 > window as f64 * share
    }

    /// `request` with `max_tokens` lowered to what a `window`-token context has left after its
    /// input, so a small local context is never asked for more than it holds.
    pub fn fit_output_limit(&self, mut request: ModelRequest, window: u64) -> ModelRequest {
        let input = crate::tokens::rough(self.input_bytes());
        let left = window.saturating_sub(input);
        // A request over the window still asks for a little: the server's own error says why.
        let left = u32::try_from(left)
            .unwrap_or(u32::MAX)
            .max(MIN_OUTPUT_TOKENS);
        request.max_output_tokens = request.max_output_tokens.min(left);
        request
    }
}

/// The length of `request` serialised as JSON, its messages counted as `messages` bytes (a
/// `RequestSize::messages`) instead of serialised again.
pub fn request_bytes(request: &mut ModelRequest, messages: usize) -> usize {
    let taken = std::mem::take(&mut request.messages);
    let shell = serde_json::to_vec(&*request).map_or(0, |b| b.len());
    request.messages = taken;
    // The shell holds `[]` where the messages go.
    shell.saturating_sub(2) + messages
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{ContentBlock, Role};

    #[test]
    fn the_sizes_are_those_of_the_request_serialised() {
        let system = vec![SystemBlock {
            name: "core".into(),
            text: "You are \"careful\".\n".into(),
            stable: true,
        }];
        let tools = vec![ToolSpec {
            name: "read_file".into(),
            description: "Reads é".into(),
            parameters: serde_json::json!({"type": "object"}),
        }];
        for count in [0, 1, 3] {
            let messages: Vec<Message> = (0..count)
                .map(|i| Message {
                    role: if i % 2 == 0 {
                        Role::User
                    } else {
                        Role::Assistant
                    },
                    content: vec![ContentBlock::Text {
                        text: format!("line {i}\n\t\"quoted\" ü"),
                    }],
                })
                .collect();
            let sizes = messages
                .iter()
                .map(|m| serde_json::to_vec(m).map_or(0, |b| b.len()));
            let size = RequestSize::new(&system, &tools, sizes);
            assert_eq!(
                size.input_bytes(),
                json_len(&system) + json_len(&tools) + json_len(&messages),
                "{count} messages"
            );
            let mut request = ModelRequest {
                model: "m".into(),
                system: system.clone(),
                tools: tools.clone(),
                messages: crate::conversation::shared(messages.clone()),
                max_output_tokens: 100,
                session_id: "s".into(),
                effort: None,
                settled_messages: Some(1),
                bridge_message: None,
            };
            let expected = serde_json::to_vec(&request).map_or(0, |b| b.len());
            assert_eq!(request_bytes(&mut request, size.messages), expected);
            assert_eq!(
                request.messages,
                crate::conversation::shared(messages),
                "the messages are put back"
            );
        }
    }

    fn json_len(value: &impl serde::Serialize) -> usize {
        serde_json::to_vec(value).map_or(0, |b| b.len())
    }
}
