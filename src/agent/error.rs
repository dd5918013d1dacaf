//! The agent's one error type: a tool call written as text that does not parse, and a
//! compaction that changed nothing. Neither ends a session: a malformed call becomes one FORMAT
//! ERROR reminder to the model (the variant's words go into it), a failed compaction a notice
//! to the user. Provider failures of a turn stay `ProviderError`, whose retryable/fatal split
//! the retry loop reads; here one is only wrapped when a compaction request failed.

use crate::provider::ProviderError;

/// What the agent could not do, in words for the model (text calls) or the user (compaction).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AgentError {
    /// A `<tool_call>` block whose body is not one JSON object.
    #[error("the <tool_call> block is not one JSON object")]
    HermesNotJson,
    /// `[TOOL_CALLS]` followed by something that is not JSON.
    #[error("the [TOOL_CALLS] list is not valid JSON")]
    MistralNotJson,
    /// `[TOOL_CALLS]` followed by JSON that is neither a list nor one call.
    #[error("[TOOL_CALLS] must be followed by a list of calls")]
    MistralNotList,
    /// A call that is not a JSON object.
    #[error("a call must be a JSON object")]
    CallNotObject,
    /// A call without a `name`.
    #[error("the call has no \"name\"")]
    CallWithoutName,
    /// A call of a tool the request did not offer.
    #[error("\"{0}\" is not one of the tools offered")]
    NotOffered(String),
    /// A call whose arguments are not an object.
    #[error("the arguments of {0} are not a JSON object")]
    ArgumentsNotObject(String),
    /// `/compact` on a conversation too short to fold.
    #[error("nothing to compact: the conversation has at most {0} messages")]
    NothingToCompact(usize),
    /// The compaction request was interrupted.
    #[error("compaction cancelled")]
    CompactionCancelled,
    /// The compaction request failed.
    #[error("compaction failed: {0}")]
    CompactionFailed(ProviderError),
    /// A file's bytes before the session changed it were not kept (`/rewind`, `/diff`).
    #[error("{0}")]
    NotKept(String),
    /// A `UserPromptSubmit` hook blocked the prompt: its reason, for the user.
    #[error("prompt not sent: a UserPromptSubmit hook blocked it: {0}")]
    PromptBlocked(String),
    /// A command file's `!` commands were interrupted.
    #[error("/{0} was interrupted while it ran its commands")]
    CommandInterrupted(String),
    /// The model answered the compaction request with nothing.
    #[error("compaction failed: the model returned an empty summary")]
    EmptySummary,
    /// `/init` cannot write `AGENTS.md` the way it must here: why, and what to do.
    #[error("{0}")]
    InitRefused(String),
    /// The clipboard's image cannot be read here (no display, no tool, no image): why.
    #[error("{0}")]
    Clipboard(String),
}

impl AgentError {
    /// How a prompt refused for this reason is told: an error where nothing the user asked for
    /// ran (`exec` exits 1 and says it), a notice otherwise.
    pub fn event(&self) -> crate::protocol::AgentEvent {
        let message = self.to_string();
        match self {
            AgentError::InitRefused(_) => crate::protocol::AgentEvent::Error { message },
            _ => crate::protocol::AgentEvent::Notice { message },
        }
    }
}
