//! Where the settings files' hooks and custom commands meet the turn loop: the session's start
//! and end, a prompt as it is submitted (and a `/command` expanded into it), the end of a
//! turn, and before compaction. The tool hooks live in the gate (`gate.rs`).
//!
//! Context a hook adds rides in the newest user turn, next to the files `@` mentions inline —
//! never in the system blocks or the tools array, so a hook that prints the time costs no
//! cache write.

use super::*;
use crate::hooks::{HookEvent, Input};
use serde_json::json;

/// How many times in a row a `Stop` hook may send the model back to work on one prompt.
const MAX_STOP_CONTINUES: u32 = 3;

/// The approval id of a project settings file (answers come back as `Op::Approve`).
pub(super) const SETTINGS_APPROVAL: &str = "settings-project:";

impl Agent {
    /// At start: the settings files' problems, the command files for the front end, and a
    /// project settings file waiting for approval (asked in the TUI, said elsewhere).
    pub(super) fn announce_setup(&mut self) {
        for message in self.options.setup.problems.clone() {
            self.emit(AgentEvent::Notice { message });
        }
        let commands: Vec<crate::protocol::McpPromptCommand> = self
            .options
            .setup
            .commands
            .iter()
            .map(|c| crate::protocol::McpPromptCommand {
                name: c.name.clone(),
                args: c.argument_hint.clone(),
                about: c.description.clone(),
                file: true,
            })
            .collect();
        if !commands.is_empty() {
            self.emit(AgentEvent::CommandFiles { commands });
        }
        let Some(pending) = self.options.setup.pending.clone() else {
            return;
        };
        if self.options.approval != ApprovalPolicy::Ask || self.tools.specialist.is_some() {
            self.emit(AgentEvent::Notice {
                message: format!(
                    "{}: its hooks and allow rules are off until you approve the file in the chatcli TUI (its deny and ask rules apply)",
                    pending.path.display()
                ),
            });
            return;
        }
        self.emit(AgentEvent::ApprovalRequest {
            id: format!("{SETTINGS_APPROVAL}{}", pending.fingerprint),
            name: "project settings".into(),
            args: json!({"file": pending.path.display().to_string()}),
            preview: Some(pending.summary()),
        });
    }

    /// The user's answer about the project settings file: approved, its hooks and allow rules
    /// apply from now on (and in later sessions, until the file changes).
    pub(super) fn answer_project_settings(&mut self, decision: crate::protocol::ApprovalDecision) {
        let Some(pending) = self.options.setup.pending.take() else {
            return;
        };
        let message = if decision == crate::protocol::ApprovalDecision::Deny {
            format!(
                "{}: its hooks and allow rules stay off",
                pending.path.display()
            )
        } else {
            let saved = match &self.options.home {
                Some(home) => crate::user_settings::Approvals::new(home)
                    .approve(&self.tools.gate.project_root, &pending.fingerprint)
                    .map_err(|e| e.to_string()),
                None => Err("this session has no settings folder".into()),
            };
            self.tools.gate.hooks.add(pending.hooks.clone());
            self.tools.gate.add_rules(pending.allow.iter().cloned());
            match saved {
                Ok(()) => format!("{}: approved for this workspace", pending.path.display()),
                Err(why) => format!(
                    "{}: applied for this session; the approval was not saved ({why})",
                    pending.path.display()
                ),
            }
        };
        self.emit(AgentEvent::Notice { message });
    }

    fn hooks(&self) -> Arc<crate::hooks::Hooks> {
        Arc::clone(&self.tools.gate.hooks)
    }

    /// `SessionStart`: its context waits for the first prompt.
    pub(super) async fn session_start_hooks(&mut self) {
        let source = if self.options.resume.is_some() {
            "resume"
        } else {
            "startup"
        };
        let outcome = self
            .hooks()
            .run(
                HookEvent::SessionStart,
                Input::with("source", json!(source)),
            )
            .await;
        gate::report(&outcome.runs, &self.sink);
        self.stack.hook_context.extend(
            outcome
                .context
                .into_iter()
                .map(|c| format!("[context from a SessionStart hook]\n{c}")),
        );
    }

    /// `SessionEnd`, as the session ends.
    pub(super) async fn session_end_hooks(&mut self) {
        let outcome = self
            .hooks()
            .run(HookEvent::SessionEnd, Input::with("reason", json!("exit")))
            .await;
        gate::report(&outcome.runs, &self.sink);
    }

    /// `UserPromptSubmit`: `Err` is the reason the prompt was blocked (the user reads it);
    /// `Ok` the context to send with it (and any the session's start left).
    pub(super) async fn prompt_hooks(&mut self, text: &str) -> Result<Vec<String>, AgentError> {
        let outcome = self
            .hooks()
            .run(
                HookEvent::UserPromptSubmit,
                Input::with("prompt", json!(text)),
            )
            .await;
        gate::report(&outcome.runs, &self.sink);
        if let Some(reason) = outcome.blocked {
            return Err(AgentError::PromptBlocked(reason));
        }
        let mut context = std::mem::take(&mut self.stack.hook_context);
        context.extend(
            outcome
                .context
                .into_iter()
                .map(|c| format!("[context from a UserPromptSubmit hook]\n{c}")),
        );
        Ok(context)
    }

    /// `PreCompact` (`trigger`: `manual` or `auto`).
    pub(super) async fn pre_compact_hooks(&mut self, trigger: &str) {
        let outcome = self
            .hooks()
            .run(
                HookEvent::PreCompact,
                Input::with("trigger", json!(trigger)),
            )
            .await;
        gate::report(&outcome.runs, &self.sink);
    }

    /// Runs the turn loop, then the `Stop` hooks: a hook that blocks sends the model back to
    /// work with its reason, at most `MAX_STOP_CONTINUES` times.
    pub(super) async fn run_turns_until_stopped(
        &mut self,
        number: usize,
        mode: Mode,
        cancel: &CancellationToken,
    ) -> (String, Ending) {
        let (mut text, mut ending) = self.run_turns(number, mode, cancel).await;
        let mut continued = 0;
        while matches!(ending, Ending::Answer(_))
            && continued < MAX_STOP_CONTINUES
            && self.tools.specialist.is_none()
        {
            let input = Input::with("stop_hook_active", json!(continued > 0))
                .and("last_assistant_message", json!(text));
            let outcome = self.hooks().run(HookEvent::Stop, input).await;
            gate::report(&outcome.runs, &self.sink);
            let Some(reason) = outcome.blocked else { break };
            continued += 1;
            self.thread
                .history
                .push_user_text(format!("[a Stop hook asks you to go on] {reason}"));
            (text, ending) = self.run_turns(number, mode, cancel).await;
        }
        (text, ending)
    }

    /// `text`, or the custom command it calls expanded: arguments filled in and each
    /// ``!`command` `` run through `run_command` (asked for like any call) with its output in
    /// place. `Err` is why it could not be.
    pub(super) async fn expand_command(
        &mut self,
        text: String,
        cancel: &CancellationToken,
    ) -> Result<String, AgentError> {
        if let Some(note) = super::init::invocation(&text) {
            return self.init_text(note).await;
        }
        let Some((command, args)) = crate::command_files::find(&self.options.setup.commands, &text)
        else {
            return Ok(text);
        };
        let command = command.clone();
        if let Some(model) = command
            .model
            .as_ref()
            .filter(|m| *m != self.provider.model())
        {
            self.emit(AgentEvent::Notice {
                message: format!(
                    "/{} asks for model {model}; it runs on this session's model {} (switch with /model)",
                    command.name,
                    self.provider.model()
                ),
            });
        }
        let expanded = command.expand(&args);
        let mut out = expanded.text;
        let registry = ToolRegistry::for_mode(Mode::Coder).only(&["run_command".to_string()]);
        for (index, shell) in expanded.shell.iter().enumerate() {
            let call: tools_run::Call = (
                format!("command-{}-{index}", command.name),
                "run_command".into(),
                json!({ "cmd": shell }),
            );
            let results = tools_run::run_calls(
                &registry,
                &self.tools.ctx,
                std::slice::from_ref(&call),
                &self.tools.approvals,
                &self.tools.gate,
                cancel,
                &self.sink,
            )
            .await;
            let output = match results.into_iter().next().map(|(block, _)| block) {
                Some(ContentBlock::ToolResult {
                    content,
                    is_error: false,
                    ..
                }) => content,
                Some(ContentBlock::ToolResult { content, .. }) => {
                    format!("(`{shell}` was not run: {content})")
                }
                _ => format!("(`{shell}` was not run)"),
            };
            out = out.replace(&format!("{{{{shell:{index}}}}}"), output.trim_end());
        }
        if cancel.is_cancelled() {
            return Err(AgentError::CommandInterrupted(command.name));
        }
        Ok(out)
    }
}
