//! What a submitted line does: a prompt (sent, or queued while a turn runs) or a slash command
//! from the one registry (`ui::commands`).
//!
//! The thing to keep: nothing the user typed is lost. An unknown command leaves its text in the
//! composer, and a prompt typed while a turn runs waits in the queue instead of being refused.

use super::{App, Overlay};
use crate::protocol::{Mode, Op, Permission};
use crate::ui::chat::CellKind;
use crate::ui::commands::{self, Slash};

impl App {
    pub(super) fn submit(&mut self, text: String) {
        match commands::parse_with(&text, &self.session.dynamic_commands) {
            Some(Slash::Command { name, rest }) => self.run_command(name, rest),
            Some(Slash::Dynamic { index, rest }) => {
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
                    self.chat.push(CellKind::User(text.clone()));
                    self.running = true;
                    self.status.busy = true;
                    self.send(op);
                }
            }
            Some(Slash::Unknown(word)) => {
                // Keep the text: a typo must not cost the user what they typed.
                self.chat.push(CellKind::Notice(format!(
                    "unknown command /{word}: try /help for the list (the text is still in the prompt; to send a line starting with /, start it with a path)"
                )));
            }
            Some(Slash::Prompt) | None => self.send_prompt(text, self.status.mode),
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
            if rest.is_empty() {
                self.input.composer.clear();
                self.set_mode(mode);
                self.notice(format!("{mode} mode"));
            } else {
                // `/agent what is a channel?`: switch AND send (queued while a turn runs).
                self.set_mode(mode);
                self.send_prompt(rest.to_string(), mode);
            }
            return;
        }
        self.input.composer.clear();
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
            "resume" if self.running => {
                self.notice("wait for the answer before resuming another session")
            }
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
            "cost" => {
                self.overlays.cost = None;
                self.overlays.show(Overlay::Cost);
                self.send(Op::CostReport);
            }
            "budget" => {
                let arg = rest.split_whitespace().next().unwrap_or_default();
                match arg.trim_start_matches('$').parse::<f64>() {
                    Ok(usd) if usd > 0.0 && usd.is_finite() => {
                        self.send(Op::SetBudget { usd: Some(usd) })
                    }
                    _ if arg == "off" => self.send(Op::SetBudget { usd: None }),
                    _ => self.chat.push(CellKind::Notice(
                        "usage: /budget AMOUNT (US dollars, e.g. /budget 2.50) or /budget off"
                            .into(),
                    )),
                }
            }
            "compact" if self.running => self.notice("wait for the answer before compacting"),
            "compact" => {
                self.notice("compacting…");
                self.send(Op::Compact)
            }
            "cache" => {
                self.overlays.cache = None;
                self.overlays.show(Overlay::Cache);
                self.send(Op::CacheReport);
            }
            "files" => self.overlays.open_files(),
            "permissions" => match rest.parse::<Permission>() {
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
            },
            "model" | "provider" if self.running => {
                self.notice(format!("wait for the answer before /{name}"))
            }
            "model" if rest.is_empty() => {
                self.overlays.model_picker = Default::default();
                self.overlays.show(Overlay::Models);
            }
            "model" => self.switch_model(rest.to_string()),
            "provider" if rest.is_empty() => self.chat.push(CellKind::Notice(format!(
                "provider: {} · usage: /provider NAME [MODEL] (one of: {})",
                self.status.provider,
                crate::config::ProviderKind::accepted()
            ))),
            "provider" => {
                let mut words = rest.split_whitespace();
                let kind = words.next().map(str::to_string);
                let model = words.next().map(str::to_string);
                self.requests.switch = Some((kind, model));
            }
            "new" if self.running => {
                self.notice("wait for the answer before starting a new session")
            }
            "new" => self.requests.new_session = true,
            "rewind" if self.running => self.notice("wait for the answer before rewinding"),
            "rewind" => {
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
            "mcp" => match rest.split_whitespace().collect::<Vec<_>>().as_slice() {
                [] => self.send(Op::Mcp { approve: None }),
                ["approve", name] => self.send(Op::Mcp {
                    approve: Some(name.to_string()),
                }),
                _ => self.notice("usage: /mcp, or /mcp approve NAME for a project server"),
            },
            "context" => match crate::protocol::ContextAction::parse(rest) {
                Ok(action) => self.send(Op::Context { action }),
                Err(usage) => self.notice(usage),
            },
            "skill" => match crate::protocol::SkillAction::parse(rest) {
                Ok(action) => self.send(Op::Skill { action }),
                Err(usage) => self.notice(usage),
            },
            "quit" => self.requests.quit = true,
            "copy" => {
                let block = match rest.trim() {
                    "" => Ok(None),
                    n => n
                        .parse::<usize>()
                        .map(Some)
                        .map_err(|_| format!("/copy takes a code block's number (got \"{n}\")")),
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
                    Err(e) => self.chat.push(CellKind::Notice(e)),
                }
            }
            "export" => {
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
                    Err(e) => self.chat.push(CellKind::Error(format!("cannot write {file}: {e}"))),
                }
            }
            other => self.chat.push(CellKind::Notice(format!(
                "/{other} is listed but has no action here: try /help"
            ))),
        }
    }
}
