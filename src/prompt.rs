//! The system prompt, from named blocks in a fixed order, and where its volatile parts go.
//!
//! Stable blocks (each cacheable, in this order): **core** (persona, the mode's format rules,
//! language hint), **bootstrap** (the user's `AGENTS.md` & co., `bootstrap`), **attachments**
//! (`/context add`), **tools** (workspace hint; the tool schemas themselves travel as tools),
//! then later **memory index**. Their bytes never change within a session:
//! no timestamp, counter, map order or changing path may enter them. Volatile blocks (**memory
//! (full)**, **skills**, **MCP channel**, **dynamic context**) never go in the system prompt:
//! the system prompt precedes the messages on every wire, so a block that changes there would
//! invalidate the cached conversation behind it. They ride instead as a text block appended to
//! the newest user turn, where they stay unchanged in later requests (the history is
//! append-only), and a block whose content has not changed since it was last sent is not sent
//! again (`VolatileTracker`).

// Project files, `@` mentions and attachments are outside input: no index that could panic on
// them (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod attachments;
pub mod bootstrap;
pub mod dynamic;
pub mod images;
pub mod ledger;
pub mod mentions;

use std::collections::HashMap;
use std::path::Path;

use crate::conversation::SystemBlock;
use crate::protocol::Mode;

const CORE: &str = include_str!("../assets/prompts/core.md");
const AGENT: &str = include_str!("../assets/prompts/agent.md");
const CODER: &str = include_str!("../assets/prompts/coder.md");

/// The prompt files, by name, for size checks and `/cache`.
pub const PROMPT_FILES: [(&str, &str); 3] = [("core", CORE), ("agent", AGENT), ("coder", CODER)];

/// The stable system blocks for a mode, in wire order; `project` are the session's bootstrap and
/// attachments blocks (they follow core in every mode), `memory_index` is the session's frozen
/// memory digest (left out when empty).
pub fn stable_blocks(
    mode: Mode,
    workspace: &Path,
    project: &[SystemBlock],
    memory_index: Option<&str>,
) -> Vec<SystemBlock> {
    let mut blocks = vec![core_block(mode)];
    blocks.extend(project.iter().filter(|b| !b.text.is_empty()).cloned());
    if mode.uses_tools() {
        blocks.push(workspace_block(workspace));
    }
    blocks.extend(memory_index.and_then(memory_index_block));
    blocks
}

/// The stable `core` block: the persona, then the mode's format rules.
pub fn core_block(mode: Mode) -> SystemBlock {
    let rules = match mode {
        Mode::Chat => None,
        Mode::Agent | Mode::Run => Some(AGENT),
        // Plan mode's rule rides in the volatile context: its prefix is coder's.
        Mode::Coder | Mode::Plan => Some(CODER),
    };
    let mut core = CORE.trim_end().to_string();
    if let Some(rules) = rules {
        core.push_str("\n\n");
        core.push_str(rules.trim_end());
    }
    SystemBlock {
        name: "core".into(),
        text: core,
        stable: true,
    }
}

/// The stable `memory index` block from the session's frozen digest (none when it is empty).
pub fn memory_index_block(digest: &str) -> Option<SystemBlock> {
    (!digest.is_empty()).then(|| SystemBlock {
        name: "memory index".into(),
        text: format!("Memory about the user and their projects:\n{digest}"),
        stable: true,
    })
}

/// A volatile block named `name` (none when `text` is empty).
pub fn volatile_block(name: &str, text: Option<String>) -> Option<SystemBlock> {
    text.filter(|t| !t.is_empty()).map(|text| SystemBlock {
        name: name.into(),
        text,
        stable: false,
    })
}

/// The stable `tools` block: where tool paths start (the session's and every specialist's).
pub fn workspace_block(workspace: &Path) -> SystemBlock {
    SystemBlock {
        name: "tools".into(),
        text: format!(
            "Workspace: {}. Tool paths are relative to it; tools cannot leave it.",
            workspace.display()
        ),
        stable: true,
    }
}

/// The volatile blocks for this turn, in order: memory (full), dynamic context (its text from
/// `dynamic::dynamic_context`), auto-recall.
pub fn volatile_blocks(
    dynamic: String,
    memory_full: Option<String>,
    autorecall: Option<String>,
) -> Vec<SystemBlock> {
    let mut blocks: Vec<SystemBlock> = volatile_block("memory (full)", memory_full)
        .into_iter()
        .collect();
    blocks.push(SystemBlock {
        name: "dynamic context".into(),
        text: dynamic,
        stable: false,
    });
    blocks.extend(volatile_block("memory auto-recall", autorecall));
    blocks
}

/// Remembers what each volatile block last said, so unchanged blocks are not sent again.
#[derive(Debug, Default, Clone)]
pub struct VolatileTracker {
    last_sent: HashMap<String, String>,
}

impl VolatileTracker {
    /// The text to append to the newest user turn for these blocks, if any changed.
    pub fn pending(&mut self, blocks: &[SystemBlock]) -> Option<String> {
        let changed: Vec<&SystemBlock> = blocks
            .iter()
            .filter(|b| !b.text.is_empty())
            .filter(|b| self.last_sent.get(&b.name) != Some(&b.text))
            .collect();
        if changed.is_empty() {
            return None;
        }
        let mut text = String::from("<context>");
        for block in changed {
            text.push_str(&format!("\n[{}]\n{}", block.name, block.text));
            self.last_sent
                .insert(block.name.clone(), block.text.clone());
        }
        text.push_str("\n</context>");
        Some(text)
    }
}

/// `YYYY-MM-DD` for a Unix time, in UTC.
pub fn utc_date(secs: u64) -> String {
    let (year, month, day) = crate::clock::civil_from_days((secs / 86_400) as i64);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_blocks_are_identical_across_calls_and_modes_differ() {
        let ws = Path::new("/w");
        assert_eq!(
            stable_blocks(Mode::Coder, ws, &[], None),
            stable_blocks(Mode::Coder, ws, &[], None)
        );
        assert_eq!(
            stable_blocks(Mode::Chat, ws, &[], None).len(),
            1,
            "chat has no tools block"
        );
        assert!(
            stable_blocks(Mode::Agent, ws, &[], Some("d"))
                .iter()
                .all(|b| b.stable)
        );
        assert_ne!(
            stable_blocks(Mode::Agent, ws, &[], None)[0],
            stable_blocks(Mode::Coder, ws, &[], None)[0]
        );
    }

    #[test]
    fn volatile_blocks_are_sent_once_until_they_change() {
        let mut tracker = VolatileTracker::default();
        let today = || "Today is 2026-11-30.".to_string();
        let first = tracker.pending(&volatile_blocks(today(), None, None));
        assert_eq!(
            first.as_deref(),
            Some("<context>\n[dynamic context]\nToday is 2026-11-30.\n</context>")
        );
        assert_eq!(tracker.pending(&volatile_blocks(today(), None, None)), None);
        assert!(
            tracker
                .pending(&volatile_blocks("Today is 2026-12-01.".into(), None, None))
                .is_some()
        );
    }

    #[test]
    fn dates() {
        assert_eq!(utc_date(1_796_000_000), "2026-11-30");
    }
}
