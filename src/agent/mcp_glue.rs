//! The agent's side of MCP: when the MCP tool snapshot is taken and retaken, the catalog block,
//! the MCP channel block, failure notices and `/mcp`.
//!
//! The snapshot is taken before the first request that offers tools (after every server has
//! started or failed, so a slow server cannot change the tools array after the first request)
//! and retaken only when the hub's tool-list generation moves.

use super::*;
use crate::mcp::{McpToolSet, config::ProjectApprovals};

/// Approval ids of project servers start with this (answers come back as `Op::Approve`).
pub(super) const PROJECT_APPROVAL: &str = "mcp-project:";

impl Agent {
    /// Asks the user (TUI policy only) about the next project server waiting for approval, one
    /// dialog at a time; answers arrive through `answer_project_server`.
    pub(super) fn ask_project_server(&mut self) {
        if self.options.approval != ApprovalPolicy::Ask {
            return;
        }
        let Some(handle) = self.options.mcp.clone() else {
            return;
        };
        let waiting = handle.hub.report().into_iter().find(|r| {
            r.status == crate::mcp::Status::NotApproved && !self.tools.mcp_asked.contains(&r.name)
        });
        let Some(server) = waiting else {
            return;
        };
        self.tools.mcp_asked.push(server.name.clone());
        let Some(config) = handle.hub.config(&server.name) else {
            return;
        };
        let args = match &config.transport {
            crate::mcp::config::Transport::Stdio { command, args, env } => serde_json::json!({
                "server": config.name, "command": command, "args": args,
                "env": env.keys().collect::<Vec<_>>(),
            }),
            crate::mcp::config::Transport::Http { url, headers } => serde_json::json!({
                "server": config.name, "url": url,
                "headers": headers.keys().collect::<Vec<_>>(),
            }),
        };
        let root = crate::project::project_root(&self.tools.ctx.workspace);
        self.emit(AgentEvent::ApprovalRequest {
            id: format!("{PROJECT_APPROVAL}{}", config.name),
            name: "MCP project server".into(),
            args,
            preview: Some(format!(
                "{}/.mcp.json asks to start the MCP server `{}`; it runs with your permissions. Approving remembers it for this workspace; denying leaves it off (/mcp approve {} later).",
                root.display(),
                config.name,
                config.name
            )),
        });
    }

    /// The user's answer about a project server; then the next one is asked.
    pub(super) fn answer_project_server(
        &mut self,
        id: &str,
        decision: crate::protocol::ApprovalDecision,
    ) {
        let name = id.trim_start_matches(PROJECT_APPROVAL).to_string();
        let message = if decision == crate::protocol::ApprovalDecision::Deny {
            format!("MCP server `{name}` stays off (/mcp approve {name} starts it)")
        } else {
            self.mcp_command(Some(name))
        };
        self.emit(AgentEvent::Notice { message });
        self.ask_project_server();
    }

    /// Once every server has started or failed (off the agent task): the failures, and the
    /// servers' prompts as `/SERVER:PROMPT` commands for the front end.
    pub(super) fn announce_mcp(&self) {
        let Some(handle) = self.options.mcp.clone() else {
            return;
        };
        if handle.hub.is_empty() {
            return;
        }
        let sink = self.sink.clone();
        tokio::spawn(async move {
            handle.hub.wait_started().await;
            for message in handle.hub.take_reports() {
                sink.emit(AgentEvent::Notice { message });
            }
            let commands: Vec<crate::protocol::McpPromptCommand> = handle
                .hub
                .report()
                .into_iter()
                .flat_map(|server| {
                    server
                        .prompts
                        .into_iter()
                        .map(move |p| crate::protocol::McpPromptCommand {
                            name: format!("{}:{}", server.name, p.name),
                            args: p.arguments.join(" "),
                            about: p.description,
                            file: false,
                        })
                })
                .collect();
            if !commands.is_empty() {
                sink.emit(AgentEvent::McpPrompts { commands });
            }
        });
    }

    /// Emits the MCP failures not yet reported, each once.
    pub(super) fn mcp_reports(&mut self) {
        let reports = self
            .options
            .mcp
            .as_ref()
            .map(|m| m.hub.take_reports())
            .unwrap_or_default();
        for message in reports {
            self.emit(AgentEvent::Notice { message });
        }
    }

    /// Takes the MCP tool snapshot for a mode that offers tools, or retakes it after a tool
    /// list changed.
    pub(super) async fn refresh_mcp(&mut self, mode: Mode) {
        let Some(handle) = self.options.mcp.clone() else {
            return;
        };
        if !mode.uses_tools() || handle.hub.is_empty() {
            return;
        }
        let changed = match &self.tools.mcp_tools {
            None => {
                handle.hub.wait_started().await;
                true
            }
            Some(set) => set.generation != handle.hub.generation(),
        };
        if changed {
            let set = McpToolSet::build(&handle.hub, handle.settings.schema_budget);
            if self.tools.mcp_tools.is_some() {
                self.emit(AgentEvent::Notice {
                    message: "MCP tool list changed: the tools array and MCP catalog were rebuilt, so the next request misses the cache once".into(),
                });
            }
            tracing::info!(
                tools = set.entries().len(),
                schema_tokens = set.schema_tokens,
                deferred = set.deferred,
                "MCP tool snapshot"
            );
            self.tools.mcp_tools = Some(set);
        }
        self.mcp_reports();
    }

    /// The MCP tools a mode adds to its registry.
    pub(super) fn mcp_extra(&self, mode: Mode) -> Vec<Box<dyn crate::tools::Tool>> {
        match &self.tools.mcp_tools {
            Some(set) if mode.uses_tools() => set.tools(),
            _ => Vec::new(),
        }
    }

    /// The stable MCP catalog block, when tools are offered and some are deferred behind it.
    pub(super) fn mcp_catalog_block(&self, mode: Mode) -> Option<crate::conversation::SystemBlock> {
        if !mode.uses_tools() {
            return None;
        }
        self.tools
            .mcp_tools
            .as_ref()
            .and_then(McpToolSet::catalog_block)
    }

    /// The MCP channel block: notifications that arrived since the last request.
    pub(super) fn mcp_channel(&self) -> Option<crate::conversation::SystemBlock> {
        let text = self.options.mcp.as_ref()?.hub.drain_channel()?;
        Some(crate::conversation::SystemBlock {
            name: "mcp channel".into(),
            text,
            stable: false,
        })
    }

    /// `/mcp` (`None`) lists the servers; `/mcp approve NAME` approves a project server for this
    /// workspace and starts it.
    pub(super) fn mcp_command(&mut self, approve: Option<String>) -> String {
        let Some(handle) = self.options.mcp.clone() else {
            return crate::mcp::listing(&[]);
        };
        let Some(name) = approve else {
            let mut text = crate::mcp::listing(&handle.hub.report());
            if let Some(set) = &self.tools.mcp_tools {
                text.push_str(&format!(
                    "\nMCP schemas: {} tools, ~{} tokens ({}; budget {} tokens, CHATCLI_MCP_SCHEMA_BUDGET)",
                    set.entries().len(),
                    set.schema_tokens,
                    if set.deferred {
                        "deferred behind the catalog"
                    } else {
                        "offered directly"
                    },
                    handle.settings.schema_budget
                ));
            }
            return text;
        };
        let Some(config) = handle.hub.config(&name).cloned() else {
            return format!("no MCP server named `{name}` (/mcp lists them)");
        };
        if let Some(home) = &self.options.home {
            let root = crate::project::project_root(&self.tools.ctx.workspace);
            if let Err(e) = ProjectApprovals::new(home).approve(&root, &config) {
                return format!("cannot remember the approval of `{name}`: {e}");
            }
        }
        match handle.hub.start_approved(&name) {
            Ok(()) => format!(
                "approved MCP server `{name}` for this workspace; starting it (its tools join at the next prompt)"
            ),
            Err(e) => e.to_string(),
        }
    }

    /// Tokens of the MCP catalog block, for `/cache`.
    pub(super) fn mcp_catalog_tokens(&self) -> u64 {
        self.tools
            .mcp_tools
            .as_ref()
            .and_then(McpToolSet::catalog_block)
            .map_or(0, |b| crate::tokens::count(&b.text))
    }
}
