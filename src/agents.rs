//! Specialist agents the orchestrator dispatches: the twelve built-ins, custom agents read from
//! Markdown files, their per-agent overrides, and the two texts the feature adds (the one-line
//! `dispatch` tool every agent and coder request carries, and the catalog a call without tasks
//! returns).
//!
//! Mental model: a specialist is data — a name, a slim prompt, a fixed set of tool names, a model
//! and an effort — and the agent loop runs it like any session, with only the task in its
//! conversation. This module never runs anything; `agent::dispatch` does. The `Roster` is built
//! once per session and frozen: the dispatch schema is part of the cached prefix and the catalog
//! part of the history, so both must be byte-identical from call to call (sorted, no paths, no
//! counters). What a newcomer gets wrong: a specialist's tools are the *only* tools it has; a
//! call to any other is refused, never routed elsewhere.

// Custom agents are hand-written Markdown files: no index that could panic on them (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod builtin;
pub mod custom;
mod error;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::conversation::{SystemBlock, ToolSpec};

/// The tool the orchestrator dispatches with.
pub const DISPATCH: &str = "dispatch";
/// Characters of a specialist's final answer the orchestrator gets back; the rest is in its
/// transcript file.
pub const ANSWER_MAX_CHARS: usize = 4_000;
/// Specialists that run at once unless `CHATCLI_AGENT_MAX_PARALLEL` says otherwise.
pub const DEFAULT_MAX_PARALLEL: usize = 4;
/// Requests one specialist may make for one task.
pub const SPECIALIST_MAX_TURNS: u32 = 20;

const ORCHESTRATOR: &str = include_str!("../assets/prompts/orchestrator.md");
const SPECIALIST: &str = include_str!("../assets/prompts/specialist.md");

pub use crate::conversation::Effort;
pub use error::SpecialistError;

/// Where an agent was defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    BuiltIn,
    /// A file under `CHATCLI_HOME/agents/`.
    User(PathBuf),
    /// A file under `.chatcli/agents/` at the project root.
    Project(PathBuf),
}

/// One specialist: what it is told, what it may use, and how it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSpec {
    pub name: String,
    /// One line, for the orchestrator's catalog.
    pub description: String,
    /// Its persona and method (the built-in's slim prompt, or a custom file's body).
    pub prompt: String,
    /// The chatcli tool names it may call, sorted; empty for an agent that only answers.
    pub tools: Vec<String>,
    /// A model of the session's provider to use instead of the session's.
    pub model: Option<String>,
    pub effort: Effort,
    pub source: Source,
}

impl AgentSpec {
    /// The specialist's stable system blocks: its prompt and the workspace hint. Identical for
    /// every dispatch of this kind in a session, so the second one reads them from the cache.
    pub fn system_blocks(&self, workspace: &Path) -> Vec<SystemBlock> {
        let mut core = SPECIALIST
            .trim_end()
            .replace("{name}", &self.name)
            .replace("{max}", &ANSWER_MAX_CHARS.to_string());
        core.push_str("\n\n");
        core.push_str(self.prompt.trim());
        let mut blocks = vec![SystemBlock {
            name: "core".into(),
            text: core,
            stable: true,
        }];
        if !self.tools.is_empty() {
            blocks.push(crate::prompt::workspace_block(workspace));
        }
        blocks
    }

    /// Whether this agent may call `tool`.
    pub fn allows(&self, tool: &str) -> bool {
        self.tools.iter().any(|t| t == tool)
    }

    /// The catalog line, terse because every request carries it: `name [tools]: description`,
    /// the tools by their short names (`read` for `read_file`), `[]` for an agent without tools.
    fn catalog_line(&self) -> String {
        let tools: Vec<&str> = self.tools.iter().map(|t| short_tool_name(t)).collect();
        format!("{} [{}]: {}", self.name, tools.join(" "), self.description)
    }
}

/// A tool's name in the catalog: the verb of chatcli's built-in tools (`read_file` → `read`,
/// `git_diff` → `diff`); any other tool (MCP, custom) as it is.
fn short_tool_name(tool: &str) -> &str {
    match tool {
        "read_file" => "read",
        "write_file" => "write",
        "patch_file" => "patch",
        "list_directory" => "list",
        "search_files" => "search",
        "run_command" => "run",
        "git_diff" => "diff",
        "git_log" => "log",
        "git_status" => "status",
        other => other,
    }
}

/// A per-agent override from the environment (`CHATCLI_AGENT_<NAME>_MODEL` / `_EFFORT`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Override {
    pub model: Option<String>,
    pub effort: Option<Effort>,
}

/// How the orchestrator is set up (`CHATCLI_AGENT_PARALLEL_MODE`, `CHATCLI_AGENT_MAX_PARALLEL`,
/// the per-agent overrides).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Whether agent and coder modes get the `dispatch` tool and the orchestrator block.
    pub parallel: bool,
    /// Specialists running at once, at least 1.
    pub max_parallel: usize,
    /// Overrides keyed by the agent name as the variable spells it (upper case, `-` as `_`).
    pub overrides: BTreeMap<String, Override>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            parallel: true,
            max_parallel: DEFAULT_MAX_PARALLEL,
            overrides: BTreeMap::new(),
        }
    }
}

impl Settings {
    /// Parallel mode off: no dispatch tool, no orchestrator block.
    pub fn off() -> Self {
        Settings {
            parallel: false,
            ..Settings::default()
        }
    }

    /// Reads the `CHATCLI_AGENT_<NAME>_MODEL` / `_EFFORT` variables out of `vars`; `Err` names
    /// the variable and value of an effort that is not `low`, `medium` or `high`.
    pub fn overrides_from<'a>(
        vars: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<BTreeMap<String, Override>, crate::env::ConfigError> {
        let mut overrides: BTreeMap<String, Override> = BTreeMap::new();
        for (var, value) in vars {
            let Some(rest) = var.strip_prefix("CHATCLI_AGENT_") else {
                continue;
            };
            let value = value.trim();
            if value.is_empty() {
                continue;
            }
            if let Some(name) = rest.strip_suffix("_MODEL").filter(|n| !n.is_empty()) {
                overrides.entry(name.to_string()).or_default().model = Some(value.to_string());
            } else if let Some(name) = rest.strip_suffix("_EFFORT").filter(|n| !n.is_empty()) {
                let effort =
                    Effort::parse(value).ok_or_else(|| crate::env::ConfigError::Invalid {
                        setting: var.to_string(),
                        value: value.to_string(),
                        expected: "low, medium or high".into(),
                    })?;
                overrides.entry(name.to_string()).or_default().effort = Some(effort);
            }
        }
        Ok(overrides)
    }
}

/// The name as an environment variable spells it: `code-review` → `CODE_REVIEW`.
pub fn env_name(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '-' | '.' | ' ' => '_',
            c => c.to_ascii_uppercase(),
        })
        .collect()
}

/// The agents of a session: built-ins first (sorted), then custom ones (sorted), with the
/// notices about files that were skipped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Roster {
    agents: Vec<AgentSpec>,
    /// One line per skipped file: the file and the problem.
    pub warnings: Vec<String>,
}

impl Roster {
    /// The built-ins plus the custom agents of `home` and of the project at `root`, with the
    /// overrides applied.
    pub fn discover(home: Option<&Path>, root: &Path, settings: &Settings) -> Roster {
        let mut warnings = Vec::new();
        let custom = custom::discover(home, root, &mut warnings);
        Roster::from_parts(builtin::all(), custom, warnings, settings)
    }

    /// The roster of `builtins` and `custom` agents (a custom agent with a built-in's name is
    /// skipped with a warning), overrides applied.
    pub fn from_parts(
        mut builtins: Vec<AgentSpec>,
        mut custom: Vec<AgentSpec>,
        mut warnings: Vec<String>,
        settings: &Settings,
    ) -> Roster {
        builtins.sort_by(|a, b| a.name.cmp(&b.name));
        custom.retain(|agent| {
            let clash = builtins.iter().any(|b| b.name == agent.name);
            if clash && let Source::User(path) | Source::Project(path) = &agent.source {
                warnings.push(format!(
                    "agent skipped: {}: `{}` is a built-in agent; give this one another name",
                    path.display(),
                    agent.name
                ));
            }
            !clash
        });
        custom.sort_by(|a, b| a.name.cmp(&b.name));
        let mut agents = builtins;
        agents.extend(custom);
        for agent in &mut agents {
            if let Some(o) = settings.overrides.get(&env_name(&agent.name)) {
                if let Some(model) = &o.model {
                    agent.model = Some(model.clone());
                }
                if let Some(effort) = o.effort {
                    agent.effort = effort;
                }
            }
        }
        for warning in &warnings {
            tracing::warn!("{warning}");
        }
        Roster { agents, warnings }
    }

    /// Every agent, built-ins first.
    pub fn agents(&self) -> &[AgentSpec] {
        &self.agents
    }

    /// The agent with this name.
    pub fn get(&self, name: &str) -> Option<&AgentSpec> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// The names, in catalog order.
    pub fn names(&self) -> Vec<&str> {
        self.agents.iter().map(|a| a.name.as_str()).collect()
    }

    /// The catalog a `dispatch` call without tasks returns: the instructions, then one line per
    /// agent. Not in the prompt: parallel mode costs its one-line tool until the model asks.
    pub fn catalog(&self, max_parallel: usize) -> String {
        let mut text = ORCHESTRATOR
            .trim_end()
            .replace("{max_parallel}", &max_parallel.to_string())
            .replace("{max}", &ANSWER_MAX_CHARS.to_string());
        text.push_str("\n\nAgents [tools]:");
        for agent in &self.agents {
            text.push('\n');
            text.push_str(&agent.catalog_line());
        }
        text
    }

    /// The `dispatch` tool's definition, one line: every agent and coder request carries it, so
    /// the catalog and the instructions come back from a call without tasks instead, and
    /// `parse_tasks` refuses an unknown agent with the list of names.
    pub fn dispatch_spec(&self) -> ToolSpec {
        ToolSpec {
            name: DISPATCH.into(),
            description: DISPATCH_DESCRIPTION.into(),
            // No properties: the catalog says the shape (`tasks: [{agent, task}]`) and
            // `parse_tasks` names what is wrong with a call; every wire accepts a bare object.
            parameters: serde_json::json!({"type": "object"}),
        }
    }
}

/// The `dispatch` tool's whole description (the catalog is on demand). No word on how to call
/// it: the schema has no properties, so a model calls it with `{}`, and any call without
/// `tasks` gets the catalog and its instructions (`wants_catalog`). Every token of it rides in
/// every agent and coder request: "; {} lists them." cost 4 more.
const DISPATCH_DESCRIPTION: &str = "Parallel agents";

/// What a `dispatch` call asks for: the catalog (no `tasks`, or an empty array), or tasks.
pub fn wants_catalog(args: &serde_json::Value) -> bool {
    match args.get("tasks") {
        None | Some(serde_json::Value::Null) => true,
        Some(serde_json::Value::Array(tasks)) => tasks.is_empty(),
        Some(_) => false,
    }
}

/// One task of a `dispatch` call, checked against the roster.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub agent: AgentSpec,
    pub task: String,
}

/// The tasks of a `dispatch` call; `Err` is the result text the model reads (an unknown agent,
/// a missing task), naming what to fix.
pub fn parse_tasks(
    roster: &Roster,
    args: &serde_json::Value,
) -> Result<Vec<Task>, SpecialistError> {
    let Some(tasks) = args.get("tasks").and_then(|t| t.as_array()) else {
        return Err(SpecialistError::TasksNotArray);
    };
    if tasks.is_empty() {
        return Err(SpecialistError::NoTasks);
    }
    let mut parsed = Vec::with_capacity(tasks.len());
    for (i, item) in tasks.iter().enumerate() {
        let name = item.get("agent").and_then(|a| a.as_str()).unwrap_or("");
        let task = item
            .get("task")
            .and_then(|t| t.as_str())
            .unwrap_or("")
            .trim();
        let Some(agent) = roster.get(name) else {
            return Err(SpecialistError::UnknownAgent {
                task: i + 1,
                agent: name.to_string(),
                known: roster.names().join(", "),
            });
        };
        if task.is_empty() {
            return Err(SpecialistError::NoTaskText {
                task: i + 1,
                agent: name.to_string(),
            });
        }
        parsed.push(Task {
            agent: agent.clone(),
            task: task.to_string(),
        });
    }
    Ok(parsed)
}

/// The instructions the catalog starts with, for the size pin.
pub fn orchestrator_instructions() -> &'static str {
    ORCHESTRATOR
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_are_read_by_agent_name_and_bad_efforts_named() {
        let overrides = Settings::overrides_from([
            ("CHATCLI_AGENT_FILE_MODEL", "small-model"),
            ("CHATCLI_AGENT_CODE_REVIEW_EFFORT", "HIGH"),
            ("CHATCLI_AGENT_MAX_TURNS", "9"),
            ("OTHER_FILE_MODEL", "x"),
        ])
        .expect("valid");
        assert_eq!(
            overrides.get("FILE").and_then(|o| o.model.as_deref()),
            Some("small-model")
        );
        assert_eq!(
            overrides.get("CODE_REVIEW").and_then(|o| o.effort),
            Some(Effort::High)
        );
        assert_eq!(overrides.len(), 2);
        let err = Settings::overrides_from([("CHATCLI_AGENT_FILE_EFFORT", "max")])
            .expect_err("bad effort");
        assert_eq!(
            err,
            crate::env::ConfigError::Invalid {
                setting: "CHATCLI_AGENT_FILE_EFFORT".into(),
                value: "max".into(),
                expected: "low, medium or high".into(),
            }
        );
        let settings = Settings {
            overrides,
            ..Settings::default()
        };
        let roster = Roster::from_parts(builtin::all(), Vec::new(), Vec::new(), &settings);
        let file = roster.get("file").expect("file");
        assert_eq!(file.model.as_deref(), Some("small-model"));
        assert_eq!(file.effort, Effort::Low);
    }

    #[test]
    fn the_catalog_is_sorted_built_ins_first_and_stable() {
        let custom = AgentSpec {
            name: "auditor".into(),
            description: "Audits.".into(),
            prompt: "Audit.".into(),
            tools: vec!["read_file".into()],
            model: None,
            effort: Effort::High,
            source: Source::Project(PathBuf::from("/p/.chatcli/agents/auditor.md")),
        };
        let clash = AgentSpec {
            name: "file".into(),
            source: Source::User(PathBuf::from("/h/agents/file.md")),
            ..custom.clone()
        };
        let roster = Roster::from_parts(
            builtin::all(),
            vec![custom, clash],
            Vec::new(),
            &Settings::default(),
        );
        let names = roster.names();
        assert_eq!(names.len(), 13);
        assert_eq!(names.last(), Some(&"auditor"), "custom after built-ins");
        let builtins: Vec<&str> = names[..12].to_vec();
        let mut sorted = builtins.clone();
        sorted.sort();
        assert_eq!(builtins, sorted);
        assert_eq!(roster.warnings.len(), 1);
        assert!(roster.warnings[0].contains("/h/agents/file.md"));
        let catalog = roster.catalog(4);
        assert_eq!(catalog, roster.catalog(4));
        assert!(catalog.contains("\nfile [list read search]: "));
        assert!(catalog.contains("\nplanner []: "));
        assert!(catalog.contains("\ngit [diff log status]: "));
        assert!(catalog.contains("\nauditor [read]: Audits."));
    }

    #[test]
    fn tasks_are_checked_against_the_roster() {
        let roster =
            Roster::from_parts(builtin::all(), Vec::new(), Vec::new(), &Settings::default());
        let ok = parse_tasks(
            &roster,
            &serde_json::json!({"tasks": [{"agent": "file", "task": "read a"}, {"agent": "search", "task": "find b"}]}),
        )
        .expect("valid");
        assert_eq!(ok.len(), 2);
        assert_eq!(ok[1].agent.name, "search");
        let unknown = parse_tasks(
            &roster,
            &serde_json::json!({"tasks": [{"agent": "wizard", "task": "x"}]}),
        )
        .expect_err("unknown")
        .to_string();
        assert!(
            unknown.contains("`wizard`, which does not exist"),
            "{unknown}"
        );
        assert!(parse_tasks(&roster, &serde_json::json!({"tasks": []})).is_err());
        // A call without tasks asks for the catalog; a malformed `tasks` does not.
        assert!(wants_catalog(&serde_json::json!({})));
        assert!(wants_catalog(&serde_json::json!({"tasks": []})));
        assert!(wants_catalog(&serde_json::json!({"tasks": null})));
        // A model guessing the shape from the description alone gets the catalog too.
        assert!(wants_catalog(
            &serde_json::json!({"agent": "file", "task": "read a.rs"})
        ));
        assert!(!wants_catalog(&serde_json::json!({"tasks": "file"})));
        assert!(
            parse_tasks(&roster, &serde_json::json!({"tasks": [{"agent": "file"}]}))
                .expect_err("no task")
                .to_string()
                .contains("no `task` text")
        );
    }
}
