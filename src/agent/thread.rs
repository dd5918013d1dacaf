//! The conversation part of the agent: the history as the model sees it, and what keeps it
//! whole — how much of it the session log holds, the tool-call ids, where the last cache marker
//! was, where each prompt starts (for `/rewind`), the files as they were before the tools
//! changed them, and the compactor that folds it when it grows.
//!
//! The invariant a newcomer breaks first: the history is append-only except for `/rewind` and a
//! compaction fold, and both move `prompt_starts` and `folded_prompts` with it.

use std::sync::Arc;

use super::{compaction, rewind, streaming};
use crate::conversation::{History, Message};

/// What the session log already holds of the history.
pub(super) struct LoggedHistory {
    pub(super) len: usize,
    pub(super) last: Option<u64>,
}

impl LoggedHistory {
    /// What the log holds of `history` when the session starts with it.
    pub(super) fn of(history: &[Message]) -> Self {
        LoggedHistory {
            len: history.len(),
            last: history.last().map(message_hash),
        }
    }
}

/// A message's hash, to see whether the log's last message is still the history's.
pub(super) fn message_hash(message: &Message) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_vec(message)
        .unwrap_or_default()
        .hash(&mut hasher);
    hasher.finish()
}

/// The conversation and its bookkeeping.
pub(super) struct Thread {
    pub(super) history: History,
    /// How much of the history the session log has, and the hash of its last message.
    pub(super) logged: LoggedHistory,
    /// Every tool-call id of the session, to keep them unique.
    pub(super) call_ids: streaming::CallIds,
    /// Where the last request's rolling cache marker was: (message index, that message).
    pub(super) last_marker: Option<(usize, Arc<Message>)>,
    /// Where each prompt of the session starts in the history (`None`: it was refused).
    pub(super) prompt_starts: Vec<Option<usize>>,
    /// Prompts numbered below this were folded into a compaction summary: `/rewind` cannot
    /// reach before them.
    pub(super) folded_prompts: usize,
    /// Files as they were before the tools changed them, for `/rewind`. Shared with dispatched
    /// specialists, whose writes are booked to the orchestrator's prompt.
    pub(super) snapshots: Arc<std::sync::Mutex<rewind::FileSnapshots>>,
    pub(super) compactor: compaction::Compactor,
}

impl Thread {
    /// A conversation that goes on from `history` (empty for a new session).
    pub(super) fn new(
        history: Vec<Message>,
        snapshots: Arc<std::sync::Mutex<rewind::FileSnapshots>>,
        compaction: compaction::Settings,
    ) -> Self {
        Thread {
            logged: LoggedHistory::of(&history),
            call_ids: streaming::CallIds::from_history(&history),
            last_marker: None,
            prompt_starts: rewind::prompt_starts(&history),
            folded_prompts: 0,
            snapshots,
            compactor: compaction::Compactor::new(compaction),
            history: History::from(history),
        }
    }
}
