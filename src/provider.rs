//! The `Provider` trait: one streaming call per request, normalised events out.
//!
//! Each wire family is a thin typed client in its own file below `provider/`; the agent sees only
//! `ProviderEvent`s. Mental model: a provider turns a `ModelRequest` into a stream that yields
//! text and reasoning deltas as they arrive, tool calls only once their arguments are whole, one
//! `Usage` for the response, then one `Stop`. A stream that ends without `Stop` was cut short.
//! Dropping the stream cancels the request.

// Every wire client reads bytes and JSON a server sent: no index that could panic on them, and
// a request body is built through `as_object_mut`, not `IndexMut` (which panics on a non-object).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod anthropic;
pub mod bedrock;
pub mod cache_markers;
pub mod cache_model;
pub mod cache_policy;
pub mod copilot;
pub mod demo;
pub mod gemini;
pub mod http;
pub mod images;
pub mod listing;
pub mod local;
pub mod ollama;
pub mod openai_chat;
pub mod openai_responses;
pub mod rejections;
pub mod sigv4;
pub mod stackspot;
pub mod usage;

use std::pin::Pin;

use futures_util::Stream;

use crate::conversation::ModelRequest;
pub use usage::UsageRecord;

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// The answer is complete.
    EndTurn,
    /// The model wants tool results before it goes on.
    ToolUse,
    /// The output limit cut the answer.
    MaxTokens,
    /// The model declined to answer.
    Refusal,
    /// The request did not fit the model's context window.
    ContextExceeded,
    /// A reason this client does not know, as the provider named it.
    Other(String),
}

impl StopReason {
    /// The snake_case name used in `turn_finished`.
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::ToolUse => "tool_use",
            StopReason::MaxTokens => "max_tokens",
            StopReason::Refusal => "refusal",
            StopReason::ContextExceeded => "context_exceeded",
            StopReason::Other(s) => s,
        }
    }
}

/// One normalised event of a streamed response.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderEvent {
    /// Visible answer text.
    TextDelta(String),
    /// Reasoning text, shown dimmed and never sent back as answer text.
    ReasoningDelta(String),
    /// A finished reasoning block that must be sent back unchanged in tool loops.
    ReasoningBlock {
        text: String,
        signature: Option<String>,
    },
    /// A tool call began (arguments follow).
    ToolCallStarted {
        index: usize,
        id: String,
        name: String,
    },
    /// A fragment of a tool call's JSON arguments.
    ToolCallArgs { index: usize, fragment: String },
    /// A tool call whose arguments arrived whole and parsed.
    ToolCall {
        id: String,
        name: String,
        args: serde_json::Value,
    },
    /// Usage of this response.
    Usage(UsageRecord),
    /// Usage known before the response finished (Anthropic's `message_start`): booked only if
    /// the response ends without its final `Usage` (an interrupt, a dropped stream).
    PartialUsage(UsageRecord),
    /// Something the user should know about this response (shown once, not an error).
    Notice(String),
    /// The response is complete.
    Stop(StopReason),
}

/// A failed request, split by whether trying again can help.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// The provider answered with an error status.
    #[error("{provider} returned HTTP {status}: {message}")]
    Http {
        provider: String,
        status: u16,
        message: String,
        /// Seconds the provider asked to wait (`Retry-After`).
        retry_after: Option<u64>,
    },
    /// The connection failed or broke.
    #[error("{provider}: connection failed: {message}")]
    Transport { provider: String, message: String },
    /// Nothing arrived for longer than the idle timeout.
    #[error("{provider}: no data for {} (idle timeout)", wait_text(*waited_ms))]
    Idle { provider: String, waited_ms: u64 },
    /// The whole response took longer than `CHATCLI_RESPONSE_TIMEOUT`.
    #[error(
        "{provider}: the response took longer than {} (CHATCLI_RESPONSE_TIMEOUT) and was stopped; raise it for very long answers",
        wait_text(*waited_ms)
    )]
    ResponseTimeout { provider: String, waited_ms: u64 },
    /// The provider sent something this client cannot read.
    #[error("{provider}: unreadable response: {message}")]
    Protocol { provider: String, message: String },
    /// The stream ended before its terminal event.
    #[error("{provider}: the response stream ended before the answer was complete")]
    Truncated { provider: String },
    /// The provider reported an error inside the stream.
    #[error("{provider}: {message}")]
    Remote {
        provider: String,
        message: String,
        retryable: bool,
    },
    /// The provider cannot be used as configured (missing key, bad URL).
    #[error("{0}")]
    Setup(String),
}

impl ProviderError {
    /// How long the provider asked to wait before trying again, if it said.
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            ProviderError::Http { retry_after, .. } => {
                retry_after.map(std::time::Duration::from_secs)
            }
            _ => None,
        }
    }

    /// Whether the same request may succeed if sent again: never when the server's message
    /// names the request as the problem (see [`rejections`]), whatever the status.
    pub fn is_retryable(&self) -> bool {
        if self.rejection().is_some() {
            return false;
        }
        match self {
            ProviderError::Http { status, .. } => {
                matches!(status, 408 | 409 | 429 | 529 | 500..=599)
            }
            ProviderError::Transport { .. } | ProviderError::Idle { .. } => true,
            ProviderError::Remote { retryable, .. } => *retryable,
            ProviderError::Protocol { .. }
            | ProviderError::ResponseTimeout { .. }
            | ProviderError::Truncated { .. }
            | ProviderError::Setup(_) => false,
        }
    }
}

impl ProviderError {
    /// The known "this request can never succeed" message the server answered with, if any.
    pub fn rejection(&self) -> Option<&'static rejections::Rejection> {
        match self {
            ProviderError::Http { message, .. } | ProviderError::Remote { message, .. } => {
                rejections::matching(message)
            }
            _ => None,
        }
    }
}

/// `90 s` for whole seconds, else `200 ms`.
pub(crate) fn wait_text(ms: u64) -> String {
    if ms >= 1000 && ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    }
}

/// The stream a provider returns.
pub type ProviderStream = Pin<Box<dyn Stream<Item = Result<ProviderEvent, ProviderError>> + Send>>;

/// A model service chatcli can talk to.
pub trait Provider: Send + Sync {
    /// The provider's short name, as `--provider` takes it.
    fn name(&self) -> &str;
    /// What the status bar shows, e.g. `anthropic` or `demo (offline)`.
    fn label(&self) -> String {
        self.name().to_string()
    }
    /// The model id requests are sent to.
    fn model(&self) -> &str;
    /// Whether the provider can take native tool calls.
    fn supports_tools(&self) -> bool {
        true
    }
    /// Whether its wire carries images (`ContentBlock::Image`); without, an attached image is
    /// refused with a notice, never dropped in silence.
    fn accepts_images(&self) -> bool {
        false
    }
    /// Sends the request and streams the response.
    fn stream(&self, request: ModelRequest) -> ProviderStream;
    /// How long the cache entries of the last request live, in seconds, where the provider
    /// caches on a clock it can name (Anthropic's markers, OpenAI's retention); else `None`.
    fn cache_lifetime(&self) -> Option<u64> {
        None
    }
    /// How long the entries would live that are written again when the cache lapses in a
    /// pause, in seconds: a keep-warm ping is weighed against that write. `None` where it is
    /// the last request's lifetime (`cache_lifetime`).
    fn lapse_lifetime(&self) -> Option<u64> {
        None
    }
    /// Sends `request` again only to keep its cache entries warm (`agent::keepwarm`): the
    /// lifetime of the last request, and no pause counted by the cache policy.
    fn keep_warm(&self, request: ModelRequest) -> ProviderStream {
        self.stream(request)
    }
    /// Where this provider lists the models it serves; `None` when it has no list endpoint
    /// (Bedrock, Copilot, StackSpot, the demo).
    fn model_list(&self) -> Option<listing::ListRequest> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryable_split() {
        let http = |status| ProviderError::Http {
            provider: "x".into(),
            status,
            message: String::new(),
            retry_after: None,
        };
        assert!(http(429).is_retryable());
        assert!(http(529).is_retryable());
        assert!(http(503).is_retryable());
        assert!(!http(400).is_retryable());
        assert!(!http(401).is_retryable());
        assert!(!http(404).is_retryable());
        let rejected = ProviderError::Http {
            provider: "openai".into(),
            status: 500,
            message: "Failed to parse tool call arguments as JSON".into(),
            retry_after: None,
        };
        assert!(!rejected.is_retryable(), "a 500 that names the request");
    }
}
