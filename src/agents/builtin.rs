//! The twelve built-in specialists: each a slim prompt, a fixed tool set and a default effort.
//!
//! Efforts follow the reference: mechanical work (reading, searching, running, formatting) is
//! `low`, code changes `medium`, planning and review `high`. Tool names are chatcli's own; a
//! specialist whose set has no write or execute tool can change nothing, whatever it is asked.

use super::{AgentSpec, Effort, Source};

/// (name, description, tools, effort, prompt)
type Row = (
    &'static str,
    &'static str,
    &'static [&'static str],
    Effort,
    &'static str,
);

const READ_ONLY: &[&str] = &["list_directory", "read_file", "search_files"];

const BUILT_INS: [Row; 12] = [
    (
        "file",
        "Reads files, quotes lines.",
        READ_ONLY,
        Effort::Low,
        "Read the files the task names (ranged reads for large files), list and search as needed, and report exactly what was asked: quote the relevant lines with their paths and line numbers.",
    ),
    (
        "coder",
        "Edits code.",
        &[
            "list_directory",
            "patch_file",
            "read_file",
            "update_plan",
            "write_file",
        ],
        Effort::Medium,
        "Make the code change the task describes. Read before you edit, prefer patch_file for small edits, keep the existing style, and report every file you changed and why.",
    ),
    (
        "shell",
        "Runs commands.",
        &["run_command"],
        Effort::Low,
        "Run the commands the task needs, one at a time, and report each command with its exit code and the part of its output that answers the task.",
    ),
    (
        "git",
        "Status, diffs, history.",
        &["git_diff", "git_log", "git_status"],
        Effort::Low,
        "Answer from the repository's status, diffs and log. Name commits by short hash and files by path.",
    ),
    (
        "search",
        "Finds definitions and uses.",
        &["list_directory", "read_file", "search_files"],
        Effort::Low,
        "Find every place that matters for the task: search with precise terms, confirm hits by reading around them, and report path:line for each with one line of context.",
    ),
    (
        "planner",
        "Plans from the task alone.",
        &[],
        Effort::High,
        "You have no tools: reason from the task text alone. Return a numbered plan of concrete steps, each naming the files or commands involved when the task gives them, and the risks to check.",
    ),
    (
        "reviewer",
        "Reviews code: findings.",
        &["git_diff", "list_directory", "read_file", "search_files"],
        Effort::High,
        "Review what the task points at. Return findings ordered by severity, each with path:line, what is wrong and a suggested fix. Say so plainly when you find nothing.",
    ),
    (
        "tester",
        "Runs tests, explains failures.",
        &["read_file", "run_command"],
        Effort::Medium,
        "Run the tests the task names (or the project's test command), read the failing code when needed, and report each failure with its test name, the assertion and the likely cause.",
    ),
    (
        "refactor",
        "Restructures, same behaviour.",
        &["patch_file", "read_file", "search_files"],
        Effort::Medium,
        "Carry out the refactoring the task describes with patch_file, finding every use first with search_files, and keep behaviour unchanged. Report each file and what moved.",
    ),
    (
        "diagnostics",
        "Finds an error's cause.",
        &["read_file", "run_command", "search_files"],
        Effort::Medium,
        "Reproduce or inspect the problem the task describes, follow it to its cause in the code, and report the cause with path:line evidence and a suggested fix. Change nothing.",
    ),
    (
        "formatter",
        "Formats, lints.",
        &["patch_file", "run_command"],
        Effort::Low,
        "Run the project's formatter or linter as the task asks, fix what it reports when asked to, and report the commands run and the files changed.",
    ),
    (
        "deps",
        "Inspects, updates dependencies.",
        &["read_file", "run_command"],
        Effort::Low,
        "Read the manifests and lock files and run the package manager's commands the task needs; report versions, conflicts and what changed.",
    ),
];

/// The built-in specialists, in the order above (the roster sorts them).
pub fn all() -> Vec<AgentSpec> {
    BUILT_INS
        .iter()
        .map(|(name, description, tools, effort, prompt)| {
            let mut tools: Vec<String> = tools.iter().map(|t| t.to_string()).collect();
            tools.sort();
            AgentSpec {
                name: name.to_string(),
                description: description.to_string(),
                prompt: prompt.to_string(),
                tools,
                model: None,
                effort: *effort,
                source: Source::BuiltIn,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Mode;
    use crate::tools::ToolRegistry;

    #[test]
    fn every_built_in_names_only_real_tools_and_read_only_ones_cannot_write() {
        let registry = ToolRegistry::for_mode(Mode::Agent);
        let agents = all();
        assert_eq!(agents.len(), 12);
        for agent in &agents {
            for tool in &agent.tools {
                assert!(registry.get(tool).is_some(), "{}: {tool}", agent.name);
            }
        }
        for name in ["file", "git", "search", "reviewer"] {
            let agent = agents.iter().find(|a| a.name == name).expect(name);
            assert!(
                agent
                    .tools
                    .iter()
                    .all(|t| registry.get(t).is_some_and(|t| t.read_only())),
                "{name} is read-only"
            );
        }
        let effort = |n: &str| agents.iter().find(|a| a.name == n).map(|a| a.effort);
        assert_eq!(effort("planner"), Some(Effort::High));
        assert_eq!(effort("coder"), Some(Effort::Medium));
        assert_eq!(effort("file"), Some(Effort::Low));
    }
}
