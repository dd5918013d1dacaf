//! The prompt-stack part of the agent: what each request carries besides the conversation, in
//! the order `docs/architecture.md` states — the bootstrap files, the `/context` attachments, the skills
//! (catalog, pins and what this session sent of them), the memory store with its frozen digest
//! and this prompt's memory blocks, and the tracker that sends a volatile block only when it
//! changed. The blocks themselves are built in `prompt` and `context`; this part owns their state.
//!
//! The invariant: nothing here may change a stable block's bytes within a session (the digest is
//! frozen when the session starts; bootstrap files are re-read, and a change is named by the
//! cache-miss explainer).

use super::VolatileTracker;
use crate::memory::MemorySettings;
use crate::prompt;
use crate::tools::memory_tool::SharedMemory;

/// The state of the prompt's blocks.
pub(super) struct PromptStack {
    /// The bootstrap files, re-checked before each request.
    pub(super) bootstrap: prompt::bootstrap::Bootstrap,
    /// `/context` attachments, re-read only on `/context refresh`.
    pub(super) attachments: prompt::attachments::Attachments,
    /// Installed skills, pins, and what this session has sent of them.
    pub(super) skills: crate::skills::SessionSkills,
    /// The memory store and its settings, when memory is on.
    pub(super) memory: Option<(SharedMemory, MemorySettings)>,
    /// The memory digest, frozen for the session so the cached prefix never changes.
    pub(super) digest: String,
    /// This prompt's memory blocks: (full retrieval, auto-recall).
    pub(super) prompt_memory: (Option<String>, Option<String>),
    /// What each volatile block last said.
    pub(super) volatile: VolatileTracker,
}

impl PromptStack {
    /// A stack with no project files, memory or attachments (a dispatched specialist's), sharing
    /// the session's skills.
    pub(super) fn bare(skills: crate::skills::SessionSkills) -> Self {
        PromptStack {
            bootstrap: Default::default(),
            attachments: Default::default(),
            skills,
            memory: None,
            digest: String::new(),
            prompt_memory: (None, None),
            volatile: VolatileTracker::default(),
        }
    }
}
