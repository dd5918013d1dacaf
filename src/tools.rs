//! Tools the model can call: their definitions, which modes offer them, and how they run.
//!
//! A tool is a plain value implementing `Tool`; the `ToolRegistry` picks the set a mode offers
//! and keeps it sorted by name, because the tool array is part of the cached prompt prefix and
//! must be byte-identical from request to request. Tools never panic on the model's arguments:
//! bad arguments are a `ToolError` whose text goes back to the model as the result.

pub mod read_file;
pub mod workspace;
pub mod write_file;

use std::path::PathBuf;

use futures_util::future::BoxFuture;

use crate::conversation::ToolSpec;
use crate::protocol::Mode;

/// What a tool run produced: the text for the model, and a file it saved, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub text: String,
    pub saved_path: Option<PathBuf>,
}

impl ToolOutput {
    /// Output that is only text.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            saved_path: None,
        }
    }
}

/// Why a tool call failed; the message is what the model reads.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// The arguments are missing something or have the wrong shape.
    #[error("invalid arguments: {0}")]
    InvalidArgs(String),
    /// A path leaves the workspace.
    #[error("{0}")]
    Confinement(String),
    /// The operation failed.
    #[error("{0}")]
    Failed(String),
}

/// What every tool run may need from the session.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The workspace root, canonical.
    pub workspace: PathBuf,
    /// The session's scratch directory (saved web bodies and the like), canonical when it exists.
    pub scratch: Option<PathBuf>,
}

/// A tool the model can call.
pub trait Tool: Send + Sync {
    /// The definition sent to the model.
    fn spec(&self) -> ToolSpec;
    /// Whether it only reads: read-only tools never ask and may run in parallel.
    fn read_only(&self) -> bool;
    /// Runs the call.
    fn run<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

/// The tools one mode offers, sorted by name.
pub struct ToolRegistry {
    tools: Vec<Box<dyn Tool>>,
}

impl ToolRegistry {
    /// The tools a mode offers: none in chat mode.
    pub fn for_mode(mode: Mode) -> ToolRegistry {
        let mut tools: Vec<Box<dyn Tool>> = match mode {
            Mode::Chat => Vec::new(),
            Mode::Agent | Mode::Coder | Mode::Run => {
                vec![
                    Box::new(read_file::ReadFile),
                    Box::new(write_file::WriteFile),
                ]
            }
        };
        tools.sort_by_key(|t| t.spec().name);
        ToolRegistry { tools }
    }

    /// The definitions, in the stable order they are sent.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|t| t.spec()).collect()
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools
            .iter()
            .find(|t| t.spec().name == name)
            .map(|t| t.as_ref())
    }
}

/// A string argument, or a clear error naming it.
pub fn required_str<'a>(args: &'a serde_json::Value, name: &str) -> Result<&'a str, ToolError> {
    args.get(name)
        .and_then(|v| v.as_str())
        .ok_or_else(|| ToolError::InvalidArgs(format!("`{name}` (a string) is required")))
}

/// An optional non-negative integer argument; numbers sent as strings are accepted.
pub fn optional_usize(args: &serde_json::Value, name: &str) -> Result<Option<usize>, ToolError> {
    match args.get(name) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            .map(|n| Some(n as usize))
            .ok_or_else(|| {
                ToolError::InvalidArgs(format!("`{name}` must be a non-negative integer (got {v})"))
            }),
    }
}
