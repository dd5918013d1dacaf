//! The agents module's one error type: why a custom agent's file, a per-agent setting or a
//! `dispatch` call was refused. A custom agent's front matter is read by the skills parser, so
//! its problems arrive as a wrapped `SkillError` with the same words. What a newcomer gets wrong:
//! the `dispatch` variants are what the model reads as the tool result, so they start with
//! "invalid arguments" and name the agent or task to fix.

use crate::skills::SkillError;

/// Why a specialist could not be defined or dispatched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecialistError {
    /// The front matter of a custom agent's file.
    #[error(transparent)]
    FrontMatter(#[from] SkillError),
    /// `tools:` names a tool chatcli does not map.
    #[error("`tools`: unknown tool {0:?} (use Read, Grep, Glob, Bash, Write, Edit)")]
    UnknownTool(String),
    /// `effort:` in a file is not one of the three.
    #[error("`effort` must be low, medium or high (got {0:?})")]
    Effort(String),
    /// The file has front matter and nothing else.
    #[error("the body (the agent's instructions) is empty")]
    EmptyBody,
    /// `dispatch` without a `tasks` array.
    #[error("invalid arguments: `tasks` must be an array of {{agent, task}}")]
    TasksNotArray,
    /// `dispatch` with an empty `tasks` array.
    #[error("invalid arguments: `tasks` is empty; give at least one {{agent, task}}")]
    NoTasks,
    /// A task names an agent the roster does not have.
    #[error(
        "invalid arguments: task {task} names agent `{agent}`, which does not exist; agents: {known}"
    )]
    UnknownAgent {
        task: usize,
        agent: String,
        known: String,
    },
    /// A task with no text.
    #[error("invalid arguments: task {task} (agent `{agent}`) has no `task` text")]
    NoTaskText { task: usize, agent: String },
}
