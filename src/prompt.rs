//! The system prompt, built from named blocks in a fixed order.
//!
//! The prompts are text files under `assets/prompts/`, embedded at build time. Blocks are
//! `stable` when their bytes never change within a session: those form the cached prefix, so
//! nothing time-dependent (dates, counters, map iteration order) may ever enter them.

use crate::conversation::SystemBlock;
use crate::protocol::Mode;

const CORE: &str = include_str!("../assets/prompts/core.md");
const AGENT: &str = include_str!("../assets/prompts/agent.md");
const CODER: &str = include_str!("../assets/prompts/coder.md");

/// The stable system blocks for a mode.
pub fn system_blocks(mode: Mode) -> Vec<SystemBlock> {
    let mut blocks = vec![SystemBlock {
        name: "core".into(),
        text: CORE.trim_end().to_string(),
        stable: true,
    }];
    let rules = match mode {
        Mode::Chat => None,
        Mode::Agent | Mode::Run => Some(AGENT),
        Mode::Coder => Some(CODER),
    };
    if let Some(rules) = rules {
        blocks.push(SystemBlock {
            name: "format".into(),
            text: rules.trim_end().to_string(),
            stable: true,
        });
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_identical_across_calls() {
        assert_eq!(system_blocks(Mode::Coder), system_blocks(Mode::Coder));
        assert_eq!(system_blocks(Mode::Chat).len(), 1);
        assert!(system_blocks(Mode::Agent).iter().all(|b| b.stable));
    }
}
