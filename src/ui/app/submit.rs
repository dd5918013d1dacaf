//! What a submitted line does: a prompt (sent, or queued while a turn runs) or a slash command
//! from the one registry (`ui::commands`).
//!
//! The thing to keep: nothing the user typed is lost. An unknown command leaves its text in the
//! composer, and a prompt typed while a turn runs waits in the queue instead of being refused.
//! Commands run by family (views, the session, settings sent to the agent, output); each family
//! answers whether it knew the name, and a listed command none knows says so.

use super::{App, Overlay};
use crate::protocol::{Mode, Op, Permission};
use crate::ui::chat::CellKind;
use crate::ui::commands::{self, Slash};

/// The prompt `/accept` sends in coder mode.
pub const ACCEPT_PLAN: &str =
    "The plan is accepted: carry it out now, keeping its checklist up to date with update_plan.";

impl App {
    pub(super) fn submit(&mut self, text: String) {
        match commands::parse_with(&text, &self.session.dynamic_commands) {
            Some(Slash::Command { name, rest }) => self.run_command(name, rest),
            Some(Slash::Dynamic { index, .. })
                if self
                    .session
                    .dynamic_commands
                    .get(index)
                    .is_some_and(|c| c.file) =>
            {
                // A command file: the agent expands it (so `exec "/review x"` works the same).
                self.send_prompt(text, self.status.mode)
            }
            Some(Slash::Dynamic { index, rest }) => self.run_mcp_prompt(index, rest, &text),
            Some(Slash::Unknown(word)) => {
                // Keep the text: a typo must not cost the user what they typed.
                self.chat.push(CellKind::Notice(format!(
                    "unknown command /{word}: try /help for the list (the text is still in the prompt; to send a line starting with /, start it with a path)"
                )));
            }
            Some(Slash::Prompt) | None => self.send_prompt(text, self.status.mode),
        }
    }

    /// `/SERVER:PROMPT ARGS`: asks the agent to run an MCP server's prompt; `text` is the line
    /// the chat shows.
    fn run_mcp_prompt(&mut self, index: usize, rest: &str, text: &str) {
        let Some(name) = self
            .session
            .dynamic_commands
            .get(index)
            .map(|c| c.name.clone())
        else {
            return;
        };
        let (server, prompt) = name.split_once(':').unwrap_or((name.as_str(), ""));
        let op = Op::McpPrompt {
            server: server.to_string(),
            prompt: prompt.to_string(),
            args: rest.to_string(),
            mode: self.status.mode,
        };
        if self.running {
            self.notice("still answering: wait, or Ctrl+C to stop it");
        } else {
            self.input.composer.clear();
            self.chat.follow();
            self.chat.push(CellKind::User(text.to_string()));
            self.running = true;
            self.status.busy = true;
            self.send(op);
        }
    }

    /// Sends a prompt in `mode`; while a turn runs it is queued and sent when the turn ends.
    /// `text` is what the user sees (a long paste folded); the full text is what is sent.
    fn send_prompt(&mut self, text: String, mode: Mode) {
        let full = self.input.take_prompt(&text);
        if self.running {
            self.input.queue.push((text, full, mode));
            return;
        }
        self.start_prompt(text, full, mode);
    }

    pub(super) fn start_prompt(&mut self, shown: String, full: String, mode: Mode) {
        self.chat.follow();
        self.chat.push(CellKind::User(shown));
        self.running = true;
        self.status.busy = true;
        self.send(Op::Submit { text: full, mode });
    }

    /// Runs a registered slash command; `rest` is what followed its name.
    fn run_command(&mut self, name: &str, rest: &str) {
        if let Ok(mode) = name.parse::<Mode>() {
            self.mode_command(mode, rest);
            return;
        }
        self.input.composer.clear();
        let known = self.view_command(name, rest)
            || self.session_command(name, rest)
            || self.agent_command(name, rest)
            || self.output_command(name, rest);
        if !known {
            self.chat.push(CellKind::Notice(format!(
                "/{name} is listed but has no action here: try /help"
            )));
        }
    }

    /// `/chat`, `/agent` …: switches the mode; with text after it, also sends that text in the
    /// new mode (queued while a turn runs).
    fn mode_command(&mut self, mode: Mode, rest: &str) {
        if rest.is_empty() {
            self.input.composer.clear();
            self.set_mode(mode);
            self.notice(format!("{mode} mode"));
        } else {
            // `/agent what is a channel?`: switch AND send (queued while a turn runs).
            self.set_mode(mode);
            self.send_prompt(rest.to_string(), mode);
        }
    }

    /// Commands that show something: an overlay or a line. Returns whether `name` is one.
    fn view_command(&mut self, name: &str, rest: &str) -> bool {
        match name {
            "help" => self.overlays.show(Overlay::Help),
            "config" if rest.starts_with("memory") => self.send(Op::MemoryStatus),
            "config" => self.overlays.show(Overlay::Config),
            "sandbox" => {
                let text = match &self.session.sandbox {
                    Some(s) => format!("sandbox: {}", s.describe()),
                    None => "sandbox: unknown in this session".into(),
                };
                self.chat.push(CellKind::Notice(text));
            }
            "cost" => {
                self.overlays.cost = None;
                self.overlays.show(Overlay::Cost);
                self.send(Op::CostReport);
            }
            "cache" => {
                self.overlays.cache = None;
                self.overlays.show(Overlay::Cache);
                self.send(Op::CacheReport);
            }
            "files" => self.overlays.open_files(),
            _ => return false,
        }
        true
    }

    /// Commands that change the session itself — resume, new, rewind, compact, another model or
    /// provider — which wait for a running answer. Returns whether `name` is one.
    fn session_command(&mut self, name: &str, rest: &str) -> bool {
        if !matches!(
            name,
            "resume" | "new" | "rewind" | "compact" | "model" | "provider"
        ) {
            return false;
        }
        if self.running {
            let wait = match name {
                "resume" => "wait for the answer before resuming another session".to_string(),
                "new" => "wait for the answer before starting a new session".to_string(),
                "rewind" => "wait for the answer before rewinding".to_string(),
                "compact" => "wait for the answer before compacting".to_string(),
                _ => format!("wait for the answer before /{name}"),
            };
            self.notice(wait);
            return true;
        }
        match name {
            "resume" => {
                let sessions = self
                    .session
                    .sessions_dir
                    .as_deref()
                    .map(crate::session_log::list)
                    .unwrap_or_default();
                self.overlays.resume = Some((sessions.into_iter().take(15).collect(), 0));
                self.overlays.show(Overlay::Resume);
            }
            "new" => self.requests.new_session = true,
            "rewind" => self.open_rewind(),
            "compact" => {
                self.notice("compacting…");
                self.send(Op::Compact)
            }
            "model" if rest.is_empty() => {
                self.overlays.model_picker = Default::default();
                self.overlays.show(Overlay::Models);
            }
            "model" => self.switch_model(rest.to_string()),
            _ => self.provider_command(rest),
        }
        true
    }

    /// `/rewind`: the picker over this session's prompts, the newest selected.
    fn open_rewind(&mut self) {
        let prompts: Vec<String> = self
            .chat
            .cells()
            .iter()
            .filter_map(|c| match c.kind() {
                CellKind::User(text) => Some(text.clone()),
                _ => None,
            })
            .collect();
        let last = prompts.len().saturating_sub(1);
        self.overlays.rewind = Some((prompts, last));
        self.overlays.show(Overlay::Rewind);
    }

    /// `/provider`: names the provider, or asks the front end to switch to `NAME [MODEL]`.
    fn provider_command(&mut self, rest: &str) {
        if rest.is_empty() {
            self.chat.push(CellKind::Notice(format!(
                "provider: {} · usage: /provider NAME [MODEL] (one of: {})",
                self.status.provider,
                crate::config::ProviderKind::accepted()
            )));
            return;
        }
        let mut words = rest.split_whitespace();
        let kind = words.next().map(str::to_string);
        let model = words.next().map(str::to_string);
        self.requests.switch = Some((kind, model));
    }

    /// Settings and actions the agent carries out: budget, permissions, MCP, context, skills.
    /// Returns whether `name` is one.
    fn agent_command(&mut self, name: &str, rest: &str) -> bool {
        match name {
            "budget" => self.budget_command(rest),
            "accept" => self.accept_plan(rest),
            "diff" => self.send(Op::Diff),
            "paste" => self.send(Op::PasteImage),
            // The agent expands it, as for `chatcli exec /init`, and runs it in coder mode.
            "init" => self.send_prompt(
                format!("/init {rest}").trim_end().to_string(),
                self.status.mode,
            ),
            "permissions" => self.permissions_command(rest),
            "hooks" => self.send(Op::Hooks),
            "mcp" => match rest.split_whitespace().collect::<Vec<_>>().as_slice() {
                [] => self.send(Op::Mcp { approve: None }),
                ["approve", name] => self.send(Op::Mcp {
                    approve: Some(name.to_string()),
                }),
                _ => self.notice("usage: /mcp, or /mcp approve NAME for a project server"),
            },
            "context" => match crate::protocol::ContextAction::parse(rest) {
                Ok(action) => self.send(Op::Context { action }),
                Err(usage) => self.notice(usage.to_string()),
            },
            "skill" => match crate::protocol::SkillAction::parse(rest) {
                Ok(action) => self.send(Op::Skill { action }),
                Err(usage) => self.notice(usage.to_string()),
            },
            _ => return false,
        }
        true
    }

    /// A paste: image files pasted or dragged as their paths are attached to the next prompt
    /// (the agent reads them and says so); anything else is text for the composer.
    pub(super) fn paste(&mut self, text: &str) {
        let exists = |p: &std::path::Path| crate::files::metadata(p).is_ok_and(|m| m.is_file());
        match crate::ui::paste::image_paths(text, exists) {
            Some(paths) => {
                for path in paths {
                    let path = path.display().to_string();
                    self.send(Op::AttachImage { path });
                }
            }
            None => self.input.composer.paste(text),
        }
    }

    /// `/accept`: the plan of plan mode is carried out in coder mode. The plan is already in the
    /// conversation (the answer and its `update_plan` calls), so the prompt only says go.
    fn accept_plan(&mut self, note: &str) {
        if self.status.mode != Mode::Plan {
            self.notice(
                "/accept takes a plan made in plan mode: /plan first, then ask for the plan",
            );
            return;
        }
        self.set_mode(Mode::Coder);
        let mut text = ACCEPT_PLAN.to_string();
        if !note.is_empty() {
            text.push(' ');
            text.push_str(note);
        }
        self.send_prompt(text, Mode::Coder);
    }

    /// `/budget AMOUNT` or `/budget off`.
    fn budget_command(&mut self, rest: &str) {
        let arg = rest.split_whitespace().next().unwrap_or_default();
        match arg.trim_start_matches('$').parse::<f64>() {
            Ok(usd) if usd > 0.0 && usd.is_finite() => self.send(Op::SetBudget { usd: Some(usd) }),
            _ if arg == "off" => self.send(Op::SetBudget { usd: None }),
            _ => self.chat.push(CellKind::Notice(
                "usage: /budget AMOUNT (US dollars, e.g. /budget 2.50) or /budget off".into(),
            )),
        }
    }

    /// `/permissions [ask | auto-edit | read-only]`: sets them, or says what they are.
    fn permissions_command(&mut self, rest: &str) {
        if rest == "rules" {
            self.send(Op::Rules);
            return;
        }
        match rest.parse::<Permission>() {
            Ok(permission) => {
                self.status.permission = permission;
                self.send(Op::SetPermission { permission });
                self.notice(format!("permissions: {permission}"));
            }
            Err(_) if rest.is_empty() => self.chat.push(CellKind::Notice(format!(
                "permissions: {} now\n  ask        ask before every write and command\n  auto-edit  writes inside the workspace run, commands ask\n  read-only  writes and commands are refused without asking\nchange it with /permissions ask | auto-edit | read-only",
                self.status.permission
            ))),
            Err(e) => self.chat.push(CellKind::Notice(e.to_string())),
        }
    }

    /// Commands that take the conversation out: copy, export, quit. Returns whether `name` is
    /// one.
    fn output_command(&mut self, name: &str, rest: &str) -> bool {
        match name {
            "quit" => self.requests.quit = true,
            "copy" => self.copy_command(rest),
            "export" => self.export_command(rest),
            _ => return false,
        }
        true
    }

    /// `/copy [N]`: the last answer, or its code block N, to the clipboard through the terminal.
    fn copy_command(&mut self, rest: &str) {
        let block = match rest.trim() {
            "" => Ok(None),
            n => n
                .parse::<usize>()
                .map(Some)
                .map_err(|_| crate::ui::UiError::BlockNumber(n.to_string())),
        };
        match block.and_then(|b| crate::ui::export::copy_text(self.chat.cells(), b)) {
            Ok(text) => {
                let what = if rest.trim().is_empty() {
                    "the last answer".to_string()
                } else {
                    format!("code block {}", rest.trim())
                };
                self.write_terminal(crate::ui::export::osc52(&text));
                self.notice(format!(
                    "copied {what} ({} characters) through the terminal (OSC 52; in tmux: set -g set-clipboard on)",
                    text.chars().count()
                ));
            }
            Err(e) => self.chat.push(CellKind::Notice(e.to_string())),
        }
    }

    /// `/export [FILE]`: the transcript as Markdown, to FILE or a stamped name.
    fn export_command(&mut self, rest: &str) {
        let file = match rest.trim() {
            "" => format!(
                "chatcli-{}.md",
                crate::clock::utc_stamp(crate::clock::now_secs())
            ),
            f => f.to_string(),
        };
        let text = crate::ui::export::markdown(self.chat.cells(), "chatcli session");
        match crate::private_fs::replace_private(std::path::Path::new(&file), text.as_bytes()) {
            Ok(()) => self.chat.push(CellKind::Notice(format!(
                "exported the transcript to {file} ({} lines of Markdown)",
                text.lines().count()
            ))),
            Err(e) => self
                .chat
                .push(CellKind::Error(format!("cannot write {file}: {e}"))),
        }
    }
}
