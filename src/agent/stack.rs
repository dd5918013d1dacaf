//! The prompt-stack part of the agent: what each request carries besides the conversation, in
//! the order `docs/architecture.md` states — the bootstrap files, the `/context` attachments, the skills
//! (catalog, pins and what this session sent of them), the memory store with its frozen digest
//! and this prompt's memory blocks, and the tracker that sends a volatile block only when it
//! changed. The blocks themselves are built in `prompt` and `context`; this part owns their state.
//!
//! The invariant: nothing here may change a stable block's bytes within a session (the digest is
//! frozen when the session starts; bootstrap files are re-read, and a change is named by the
//! cache-miss explainer).

use super::{Agent, VolatileTracker};
use crate::conversation::SystemBlock;
use crate::memory::MemorySettings;
use crate::prompt;
use crate::protocol::Mode;
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
    /// Context `SessionStart` hooks added, sent with the next prompt.
    pub(super) hook_context: Vec<String>,
    /// Images this prompt's mentions attach, until the prompt enters the history.
    pub(super) images: Vec<crate::conversation::ContentBlock>,
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
            hook_context: Vec::new(),
            images: Vec::new(),
        }
    }
}

/// Where a block rides: in the cached system prefix, or in the newest user turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Placement {
    /// Part of the system prompt; its bytes never change within a session.
    Stable,
    /// Appended to the newest user turn, and only when it changed since it was last sent.
    Volatile,
}

/// One block of the prompt: what it adds to a request in a mode, built from the agent's parts.
/// A new block is one implementation and one line in [`STACK`].
pub(super) trait Block: Sync {
    fn placement(&self) -> Placement;
    /// The named blocks it adds to this request (none when it has nothing to say).
    fn build(&self, agent: &Agent, mode: Mode) -> Vec<SystemBlock>;
}

/// The prompt, in wire order: the stable prefix (core, bootstrap files, attachments, the MCP
/// catalog, the skills catalog and pins, the tools hint, the memory index), then the volatile
/// blocks of the newest turn (full memory, date and directory, auto-recall, MCP channel
/// messages, activated skills, the plan-mode rule). Parallel mode adds no block: its catalog
/// comes back from a `dispatch` call without tasks.
pub(super) const STACK: &[&dyn Block] = &[
    &Core,
    &Bootstrap,
    &Attachments,
    &McpCatalog,
    &SkillsCatalog,
    &ToolsHint,
    &MemoryIndex,
    &MemoryFull,
    &DateAndDirectory,
    &AutoRecall,
    &McpChannel,
    &ActivatedSkills,
    &PlanRule,
];

/// The blocks of `placement` for a request in `mode`, in stack order; a block with nothing to
/// say is left out.
pub(super) fn blocks(agent: &Agent, mode: Mode, placement: Placement) -> Vec<SystemBlock> {
    STACK
        .iter()
        .filter(|block| block.placement() == placement)
        .flat_map(|block| block.build(agent, mode))
        .filter(|b| !b.text.is_empty())
        .collect()
}

macro_rules! block {
    ($name:ident, $placement:ident, |$agent:ident, $mode:ident| $body:expr) => {
        struct $name;
        impl Block for $name {
            fn placement(&self) -> Placement {
                Placement::$placement
            }
            fn build(&self, $agent: &Agent, $mode: Mode) -> Vec<SystemBlock> {
                let _ = (&$agent, &$mode);
                $body
            }
        }
    };
}

block!(Core, Stable, |agent, mode| vec![prompt::core_block(mode)]);
block!(Bootstrap, Stable, |agent, mode| agent
    .stack
    .bootstrap
    .system_block()
    .into_iter()
    .collect());
block!(Attachments, Stable, |agent, mode| agent
    .stack
    .attachments
    .system_block()
    .into_iter()
    .collect());
block!(McpCatalog, Stable, |agent, mode| agent
    .mcp_catalog_block(mode)
    .into_iter()
    .collect());
block!(SkillsCatalog, Stable, |agent, mode| agent
    .stack
    .skills
    .system_blocks(mode));
block!(ToolsHint, Stable, |agent, mode| if mode.uses_tools() {
    vec![prompt::workspace_block(&agent.tools.ctx.workspace)]
} else {
    Vec::new()
});
block!(MemoryIndex, Stable, |agent, mode| agent
    .memory_index(mode)
    .and_then(prompt::memory_index_block)
    .into_iter()
    .collect());
block!(MemoryFull, Volatile, |agent, mode| prompt::volatile_block(
    "memory (full)",
    agent.stack.prompt_memory.0.clone()
)
.into_iter()
.collect());
block!(DateAndDirectory, Volatile, |agent, mode| {
    // The local time to the minute with the zone (never seconds: they would change the bytes
    // every request), and the working directory.
    let secs = agent.options.clock.now_secs();
    vec![SystemBlock {
        name: "dynamic context".into(),
        text: prompt::dynamic::dynamic_context(
            secs,
            &agent.options.time_zone,
            &agent.tools.ctx.workspace,
        ),
        stable: false,
    }]
});
block!(AutoRecall, Volatile, |agent, mode| prompt::volatile_block(
    "memory auto-recall",
    agent.stack.prompt_memory.1.clone()
)
.into_iter()
.collect());
block!(McpChannel, Volatile, |agent, mode| agent
    .mcp_channel()
    .into_iter()
    .collect());
block!(ActivatedSkills, Volatile, |agent, mode| agent
    .stack
    .skills
    .volatile_block()
    .into_iter()
    .collect());

block!(PlanRule, Volatile, |agent, mode| prompt::volatile_block(
    "plan mode",
    agent.plan.rule()
)
.into_iter()
.collect());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stack_puts_every_stable_block_before_every_volatile_one() {
        let first_volatile = STACK
            .iter()
            .position(|b| b.placement() == Placement::Volatile)
            .unwrap_or(STACK.len());
        assert!(
            STACK
                .iter()
                .skip(first_volatile)
                .all(|b| b.placement() == Placement::Volatile),
            "a stable block after a volatile one would break the cached prefix's order"
        );
    }
}
