//! The fixed part of every request — tool schemas plus system prompt — is what each turn pays for.
//! These counts (o200k) are pinned: a prompt that grows more than 10% fails here until the pinned
//! figure is updated on purpose (and the table in `docs/performance.md` with it).

use std::path::Path;

use chatcli::prompt::{PROMPT_FILES, stable_blocks};
use chatcli::protocol::Mode;
use chatcli::tokens::count;
use chatcli::tools::ToolRegistry;

/// (prompt file, pinned o200k tokens)
const PINNED_FILES: &[(&str, u64)] = &[("core", 53), ("agent", 70), ("coder", 82)];
/// (mode, pinned tools + system tokens, budget)
const PINNED_TOTALS: &[(Mode, u64, u64)] = &[
    (Mode::Agent, 1162, 2500),
    (Mode::Coder, 1174, 3000),
    (Mode::Chat, 53, 1000),
];

fn fixed_part(mode: Mode) -> (u64, u64) {
    fixed_part_with(mode, None)
}

fn fixed_part_with(mode: Mode, digest: Option<&str>) -> (u64, u64) {
    let tools = ToolRegistry::for_mode(mode).specs();
    let tools_tokens = if tools.is_empty() {
        0
    } else {
        count(&serde_json::to_string(&tools).expect("json"))
    };
    let system: Vec<String> = stable_blocks(mode, Path::new("/home/user/project"), &[], digest)
        .into_iter()
        .map(|b| b.text)
        .collect();
    (tools_tokens, count(&system.join("\n\n")))
}

fn within(actual: u64, pinned: u64) -> bool {
    actual * 10 <= pinned * 11
}

#[test]
fn prompt_files_stay_slim() {
    for (name, pinned) in PINNED_FILES {
        let text = PROMPT_FILES
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| *t)
            .expect("file");
        let tokens = count(text);
        eprintln!("prompt {name}: {tokens} tokens");
        assert!(
            within(tokens, *pinned),
            "{name}.md grew to {tokens} tokens (pinned {pinned}): update the pin if intended"
        );
    }
}

#[test]
fn the_fixed_part_of_a_request_stays_under_budget() {
    for (mode, pinned, budget) in PINNED_TOTALS {
        let (tools, system) = fixed_part(*mode);
        let total = tools + system;
        eprintln!("{mode}: tools {tools} + system {system} = {total} tokens");
        assert!(
            total <= *budget,
            "{mode}: {total} tokens is over the {budget} budget"
        );
        assert!(
            within(total, *pinned),
            "{mode}: grew to {total} tokens (pinned {pinned})"
        );
    }
}

#[test]
fn a_full_memory_digest_still_fits_the_budget() {
    let digest =
        "Facts: 500 stored (architecture 84, pattern 84, preference 83, gotcha 83)\n".repeat(9);
    for (mode, _, budget) in PINNED_TOTALS {
        let (tools, system) = fixed_part_with(*mode, Some(&digest[..600]));
        assert!(
            tools + system <= *budget,
            "{mode}: {} with a 600-char digest",
            tools + system
        );
    }
}

/// The orchestrator's instructions (the head of the catalog a `dispatch` call without tasks
/// returns), pinned at or under the reference's ~1,050 tokens.
const ORCHESTRATOR_MAX: u64 = 1050;
/// (mode, pinned tools + system tokens with parallel mode on, the default). With the catalog in
/// an `orchestrator` block and a full schema: 1,456 and 1,468 (294 over parallel mode off);
/// before the compact catalog, 527 over; now the one-line `dispatch` tool alone (#39).
const PINNED_ORCHESTRATED: &[(Mode, u64)] = &[(Mode::Agent, 1178), (Mode::Coder, 1190)];
/// (pinned tokens of the catalog with the twelve built-ins, of the dispatch schema). Before the
/// catalog went on demand (#39): a 231-token block in every request and a 63-token schema; the
/// schema was 20 tokens until its description lost "; {} lists them." (any call without
/// `tasks` returns the catalog).
const PINNED_ORCHESTRATOR_PARTS: (u64, u64) = (243, 16);
/// What `update_plan`'s schema adds to every agent, coder, plan and run request (o200k tokens,
/// its share of the tools array): 1,039 → 1,137 in agent mode.
const PINNED_UPDATE_PLAN: u64 = 98;

fn builtin_roster() -> chatcli::agents::Roster {
    use chatcli::agents::{Roster, Settings, builtin};
    Roster::from_parts(builtin::all(), Vec::new(), Vec::new(), &Settings::default())
}

/// The fixed part in `mode` with parallel mode on: the `dispatch` tool added to what
/// `fixed_part` counts (the catalog is not in the prompt).
fn orchestrated_part(mode: Mode) -> (u64, u64) {
    let roster = builtin_roster();
    let mut tools = ToolRegistry::for_mode(mode).specs();
    tools.push(roster.dispatch_spec());
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    let system: Vec<String> = stable_blocks(mode, Path::new("/home/user/project"), &[], None)
        .into_iter()
        .map(|b| b.text)
        .collect();
    (
        count(&serde_json::to_string(&tools).expect("json")),
        count(&system.join("\n\n")),
    )
}

/// Within 10% of the pin either way: a shrink is pinned as deliberately as a growth.
fn pinned_both_ways(actual: u64, pinned: u64) -> bool {
    within(actual, pinned) && actual * 11 >= pinned * 10
}

#[test]
fn the_orchestrator_stays_within_the_reference_size() {
    let instructions = count(chatcli::agents::orchestrator_instructions());
    eprintln!("orchestrator instructions: {instructions} tokens");
    assert!(
        instructions <= ORCHESTRATOR_MAX,
        "the orchestrator instructions grew to {instructions} tokens (at most {ORCHESTRATOR_MAX})"
    );
    let roster = builtin_roster();
    let block = count(&roster.catalog(4));
    let schema = count(&serde_json::to_string(&roster.dispatch_spec()).expect("json"));
    eprintln!("dispatch catalog: {block} tokens (on demand); dispatch schema: {schema} tokens");
    let (pinned_block, pinned_schema) = PINNED_ORCHESTRATOR_PARTS;
    assert!(
        pinned_both_ways(block, pinned_block) && pinned_both_ways(schema, pinned_schema),
        "dispatch catalog {block} (pinned {pinned_block}), dispatch schema {schema} (pinned \
         {pinned_schema}): update the pins if intended"
    );
    for (mode, pinned) in PINNED_ORCHESTRATED {
        let (tools, system) = orchestrated_part(*mode);
        let total = tools + system;
        let (off_tools, off_system) = fixed_part(*mode);
        eprintln!(
            "{mode} with parallel mode on: tools {tools} + system {system} = {total} tokens ({} more than off)",
            total - off_tools - off_system
        );
        assert!(
            pinned_both_ways(total, *pinned),
            "{mode} with parallel mode on: {total} tokens (pinned {pinned}): update the pin if intended"
        );
    }
}

#[test]
fn the_update_plan_schema_costs_what_is_pinned() {
    let with = ToolRegistry::for_mode(Mode::Coder).specs();
    let without = ToolRegistry::for_mode(Mode::Coder)
        .without("update_plan")
        .specs();
    assert_eq!(with.len(), without.len() + 1, "coder offers update_plan");
    let tokens = |specs: &[chatcli::conversation::ToolSpec]| {
        count(&serde_json::to_string(specs).expect("json"))
    };
    let cost = tokens(&with) - tokens(&without);
    eprintln!("update_plan schema: {cost} tokens a request");
    assert!(
        pinned_both_ways(cost, PINNED_UPDATE_PLAN),
        "update_plan costs {cost} tokens a request (pinned {PINNED_UPDATE_PLAN}): update the pin if intended"
    );
    // Plan mode pays the same prefix as coder, byte for byte.
    assert_eq!(fixed_part(Mode::Plan), fixed_part(Mode::Coder));
}

/// A specialist's fixed prefix (its system blocks and its own tools), per built-in kind: small,
/// and under the providers' 1,024-token cache minimum, so its requests are sent uncached (no
/// write premium paid for a prefix that a later dispatch might not read).
#[test]
fn each_specialist_prefix_is_small() {
    let roster = builtin_roster();
    let mut largest = 0;
    for agent in roster.agents() {
        let tools = ToolRegistry::for_mode(Mode::Run).only(&agent.tools).specs();
        let tools_tokens = if tools.is_empty() {
            0
        } else {
            count(&serde_json::to_string(&tools).expect("json"))
        };
        let system: Vec<String> = agent
            .system_blocks(Path::new("/home/user/project"))
            .into_iter()
            .map(|b| b.text)
            .collect();
        let total = tools_tokens + count(&system.join("\n\n"));
        eprintln!("specialist {}: {total} tokens", agent.name);
        largest = largest.max(total);
    }
    // `coder`, the largest since it keeps a plan (#38): 538 tokens, 513 before `read_file`'s `col`
    // (#41) (the task and the dynamic context come on top); before, `reviewer` at 469.
    assert!(
        largest < 1024 && within(largest, 538),
        "the largest specialist prefix is {largest} tokens (pinned 538)"
    );
}
