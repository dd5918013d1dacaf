//! What the UI knows about the session it shows, beyond its events: where session logs are,
//! the models it can switch to, the OS sandbox commands run under, and the slash commands the
//! MCP servers added. The front end sets the first three when it starts the session; the agent
//! sends the last (`AgentEvent::McpPrompts`).

use crate::sandbox::SandboxSettings;
use crate::session::models::ModelList;
use crate::ui::commands::DynamicCommand;

/// The session's surroundings, as the panes and commands need them.
#[derive(Debug, Default)]
pub struct SessionContext {
    /// Where session logs are, for `/resume`.
    pub sessions_dir: Option<std::path::PathBuf>,
    /// The models `/model` lists.
    pub models: ModelList,
    /// The OS sandbox commands run under, for `/sandbox` and the approval dialog.
    pub sandbox: Option<SandboxSettings>,
    /// Slash commands added at run time: the MCP servers' prompts (`/SERVER:PROMPT`).
    pub dynamic_commands: Vec<DynamicCommand>,
}

impl SessionContext {
    /// The sandbox policy an approval of a `run_command` call shows; `None` when unknown.
    pub(super) fn command_policy(&self) -> Option<String> {
        self.sandbox.as_ref().map(|s| s.describe())
    }
}
