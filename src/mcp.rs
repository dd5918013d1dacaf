//! MCP (Model Context Protocol) client: other programs' tools in the agent loop, through the
//! official Rust SDK (`rmcp`), over stdio child processes and streamable HTTP.
//!
//! `config` reads which servers exist (user and project scope, project servers only once
//! approved), `hub` runs them for one session, `naming` turns their tools into names and
//! schemas every provider accepts, and `tools` offers them to the model: directly while their
//! schemas fit `CHATCLI_MCP_SCHEMA_BUDGET` tokens, otherwise deferred behind a catalog block and
//! the fixed `mcp_describe`/`mcp_call` tools. The invariant a newcomer breaks first: the tools
//! array and the catalog are frozen per session and change only when a server says its tool
//! list changed; a server that starts late, dies or pushes notifications never reshapes the
//! cached prefix (notifications go to the volatile `<context>` block of the next turn).

// Servers' messages, their tool lists and `mcp.json` are outside input: no index that could
// panic on them (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod config;
mod error;
pub mod hub;
pub mod naming;
pub mod tools;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub use error::McpError;
pub use hub::{McpHub, ServerReport, Status};
pub use tools::McpToolSet;

use crate::env::{ConfigError, Env};

/// The default of `CHATCLI_MCP_SCHEMA_BUDGET`, in tokens.
pub const DEFAULT_SCHEMA_BUDGET: u64 = 2000;

/// The MCP settings of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct McpSettings {
    /// How long a server may take to start (`CHATCLI_MCP_STARTUP_TIMEOUT`, seconds).
    pub startup_timeout: Duration,
    /// Tokens of MCP schemas offered directly before deferring (`CHATCLI_MCP_SCHEMA_BUDGET`).
    pub schema_budget: u64,
}

impl Default for McpSettings {
    fn default() -> Self {
        McpSettings {
            startup_timeout: hub::DEFAULT_STARTUP_TIMEOUT,
            schema_budget: DEFAULT_SCHEMA_BUDGET,
        }
    }
}

impl McpSettings {
    /// Reads `CHATCLI_MCP_STARTUP_TIMEOUT` and `CHATCLI_MCP_SCHEMA_BUDGET`.
    pub fn from_env(env: &Env) -> Result<McpSettings, ConfigError> {
        let invalid = |setting: &str, value: &str, expected: &str| ConfigError::Invalid {
            setting: setting.into(),
            value: value.into(),
            expected: expected.into(),
        };
        let mut settings = McpSettings::default();
        if let Some(v) = env.get("CHATCLI_MCP_STARTUP_TIMEOUT") {
            let secs: f64 = v
                .trim()
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s > 0.0 && *s <= 600.0)
                .ok_or_else(|| {
                    invalid(
                        "CHATCLI_MCP_STARTUP_TIMEOUT",
                        v,
                        "a number of seconds in (0, 600]",
                    )
                })?;
            settings.startup_timeout = Duration::from_secs_f64(secs);
        }
        if let Some(v) = env.get("CHATCLI_MCP_SCHEMA_BUDGET") {
            settings.schema_budget = v.trim().parse().map_err(|_| {
                invalid(
                    "CHATCLI_MCP_SCHEMA_BUDGET",
                    v,
                    "a whole number of tokens (0 always defers)",
                )
            })?;
        }
        Ok(settings)
    }
}

/// A session's MCP servers and settings, as the agent holds them.
#[derive(Clone)]
pub struct McpHandle {
    pub hub: Arc<McpHub>,
    pub settings: McpSettings,
}

impl std::fmt::Debug for McpHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHandle")
            .field("servers", &self.hub.report().len())
            .field("settings", &self.settings)
            .finish()
    }
}

/// What starting the configured servers left to tell the user.
#[derive(Debug, Default)]
pub struct Startup {
    /// Lines for the user: unusable entries, project servers awaiting approval.
    pub notices: Vec<String>,
}

/// Loads the configured servers for `workspace` and starts those allowed to start: user-scope
/// ones, and project ones approved before or approved now by `approve_project` (`exec --yes`).
pub fn start_session(
    home: &Path,
    workspace: &Path,
    env: &Env,
    settings: &McpSettings,
    approve_project: bool,
) -> (Arc<McpHub>, Startup) {
    let root = crate::project::project_root(workspace);
    let (servers, errors) = config::load(home, &root, env);
    let approvals = config::ProjectApprovals::new(home);
    let mut startup = Startup {
        notices: errors.iter().map(ToString::to_string).collect(),
    };
    for server in &servers {
        if server.scope == config::Scope::Project
            && !approve_project
            && !approvals.allows(&root, server)
        {
            startup.notices.push(format!(
                "project MCP server `{}` (.mcp.json) is not approved for this workspace: /mcp approve {} starts it (remembered)",
                server.name, server.name
            ));
        }
    }
    let hub = McpHub::start(
        servers,
        |server| approve_project || approvals.allows(&root, server),
        workspace.to_path_buf(),
        settings.startup_timeout,
    );
    (hub, startup)
}

/// What `/mcp` and `chatcli mcp list` print: one line per server, then its errors and prompts.
pub fn listing(reports: &[ServerReport]) -> String {
    if reports.is_empty() {
        return "no MCP servers: add them to CHATCLI_HOME/mcp.json or .mcp.json at the project root ({\"mcpServers\": {\"NAME\": {\"command\": …}}})".into();
    }
    let mut lines = Vec::new();
    for r in reports {
        let scope = match r.scope {
            config::Scope::User => "user",
            config::Scope::Project => "project",
        };
        lines.push(format!(
            "{} · {} · {} · {scope} · {} tools · {} prompts · {} resources",
            r.name,
            r.status.word(),
            r.transport,
            r.tools,
            r.prompts.len(),
            r.resources
        ));
        if let Status::Failed(why) = &r.status {
            lines.push(format!("  {why}"));
        }
        if r.status == Status::NotApproved {
            lines.push(format!("  /mcp approve {} starts it", r.name));
        }
        for prompt in &r.prompts {
            lines.push(format!(
                "  /{}:{} {}",
                r.name, prompt.name, prompt.description
            ));
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_read_the_environment_and_name_bad_values() {
        let env = Env::from_pairs([
            ("CHATCLI_MCP_STARTUP_TIMEOUT", "2.5"),
            ("CHATCLI_MCP_SCHEMA_BUDGET", "500"),
        ]);
        let settings = McpSettings::from_env(&env).expect("valid");
        assert_eq!(settings.startup_timeout, Duration::from_millis(2500));
        assert_eq!(settings.schema_budget, 500);
        let bad = Env::from_pairs([("CHATCLI_MCP_STARTUP_TIMEOUT", "soon")]);
        let err = McpSettings::from_env(&bad).unwrap_err().to_string();
        assert!(err.contains("CHATCLI_MCP_STARTUP_TIMEOUT"), "{err}");
        assert_eq!(
            McpSettings::from_env(&Env::default()).expect("defaults"),
            McpSettings::default()
        );
    }
}
