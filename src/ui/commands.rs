//! The slash commands: one registry that the dispatcher and the help overlay both read, and the
//! rule that tells a command from a prompt that merely starts with `/`.
//!
//! A line is a command only when its first word names one (`/cost`, `/agent what is a channel?`).
//! A first word that is a path (`/etc/hosts what does this do?`: it has another `/`, or names
//! something on disk) is a prompt. Anything else is an unknown command, which the UI reports
//! while keeping the typed text, so nothing is lost to a typo.

// Slash commands are typed text: no index that could panic on it (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

/// One slash command as the user types it and as `/help` lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlashCommand {
    pub name: &'static str,
    /// What may follow the name, as help shows it (empty for none).
    pub args: &'static str,
    pub about: &'static str,
}

/// Every slash command, in the order help lists them.
pub const COMMANDS: &[SlashCommand] = &[
    SlashCommand {
        name: "chat",
        args: "[PROMPT]",
        about: "chat mode (one request, no tools); with text, send it",
    },
    SlashCommand {
        name: "agent",
        args: "[PROMPT]",
        about: "agent mode (the tool loop); with text, send it",
    },
    SlashCommand {
        name: "coder",
        args: "[PROMPT]",
        about: "coder mode (coder tools and prompt); with text, send it",
    },
    SlashCommand {
        name: "run",
        args: "[PROMPT]",
        about: "run mode (the tool loop, never rerouted); with text, send it",
    },
    SlashCommand {
        name: "plan",
        args: "[PROMPT]",
        about: "plan mode (reads and plans; nothing writes or runs); with text, send it",
    },
    SlashCommand {
        name: "accept",
        args: "[NOTE]",
        about: "accept the plan: coder mode carries it out",
    },
    SlashCommand {
        name: "diff",
        args: "",
        about: "what this session changed: each file's diff, and git's status",
    },
    SlashCommand {
        name: "init",
        args: "[NOTE]",
        about: "write a first AGENTS.md from the repository; asks before writing",
    },
    SlashCommand {
        name: "paste",
        args: "",
        about: "attach the clipboard's image to the next prompt (also Ctrl+V)",
    },
    SlashCommand {
        name: "files",
        args: "",
        about: "saved files browser",
    },
    SlashCommand {
        name: "cache",
        args: "",
        about: "prompt cache: fixed size, last request by block",
    },
    SlashCommand {
        name: "compact",
        args: "",
        about: "fold older turns into a summary (one request)",
    },
    SlashCommand {
        name: "context",
        args: "add PATH…|list|drop PATH|all|refresh",
        about: "files attached to the cached prefix",
    },
    SlashCommand {
        name: "mcp",
        args: "[approve NAME]",
        about: "MCP servers and their tools; approve a project server",
    },
    SlashCommand {
        name: "skill",
        args: "[show|pin|unpin] N",
        about: "list skills; show one, or pin it into the cached prefix",
    },
    SlashCommand {
        name: "cost",
        args: "",
        about: "session cost summary",
    },
    SlashCommand {
        name: "budget",
        args: "AMOUNT|off",
        about: "set the session budget in USD",
    },
    SlashCommand {
        name: "config",
        args: "[memory]",
        about: "every effective setting and where it came from (memory: the store)",
    },
    SlashCommand {
        name: "permissions",
        args: "ask|auto-edit|read-only",
        about: "what tools may do without asking, or `rules`",
    },
    SlashCommand {
        name: "hooks",
        args: "",
        about: "the hooks of the settings files, and what they have cost in time",
    },
    SlashCommand {
        name: "rewind",
        args: "",
        about: "return to before an earlier prompt, restoring the files tools changed",
    },
    SlashCommand {
        name: "model",
        args: "[ID]",
        about: "list models, or switch to ID for the next request",
    },
    SlashCommand {
        name: "provider",
        args: "NAME [MODEL]",
        about: "switch provider, keeping the conversation (its cache starts cold)",
    },
    SlashCommand {
        name: "copy",
        args: "[N]",
        about: "copy the last answer (or its Nth code block) to the clipboard",
    },
    SlashCommand {
        name: "export",
        args: "[FILE]",
        about: "write the transcript as Markdown (default chatcli-<time>.md)",
    },
    SlashCommand {
        name: "new",
        args: "",
        about: "start a fresh session (this one stays resumable; also /clear)",
    },
    SlashCommand {
        name: "resume",
        args: "",
        about: "reopen a recent session",
    },
    SlashCommand {
        name: "help",
        args: "",
        about: "keys and commands",
    },
    SlashCommand {
        name: "sandbox",
        args: "",
        about: "the OS sandbox of commands, and whether the kernel enforces it",
    },
    SlashCommand {
        name: "quit",
        args: "",
        about: "quit (also /exit)",
    },
];

/// A command added while the session runs: an MCP server's prompt, typed `/SERVER:PROMPT`.
pub type DynamicCommand = crate::protocol::McpPromptCommand;

/// Names that run a registered command under another name.
const ALIASES: &[(&str, &str)] = &[("exit", "quit"), ("clear", "new")];

/// What a line starting with `/` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slash<'a> {
    /// A registered command, with the text after its name (trimmed).
    Command { name: &'static str, rest: &'a str },
    /// Not a command: a prompt that starts with a path.
    Prompt,
    /// A command added at run time (its index among the dynamic ones), with the text after it.
    Dynamic { index: usize, rest: &'a str },
    /// A `/word` that names no command.
    Unknown(&'a str),
}

/// Like `parse`, also knowing the commands added at run time (`/SERVER:PROMPT`).
pub fn parse_with<'a>(line: &'a str, dynamic: &[DynamicCommand]) -> Option<Slash<'a>> {
    match parse(line)? {
        Slash::Unknown(word) => {
            let rest = line.trim().get(1 + word.len()..).unwrap_or_default().trim();
            Some(
                match dynamic
                    .iter()
                    .position(|c| c.name.eq_ignore_ascii_case(word))
                {
                    Some(index) => Slash::Dynamic { index, rest },
                    None => Slash::Unknown(word),
                },
            )
        }
        other => Some(other),
    }
}

/// Classifies a line that starts with `/` (after trimming); `None` when it does not.
pub fn parse(line: &str) -> Option<Slash<'_>> {
    let line = line.trim();
    let body = line.strip_prefix('/')?;
    // The word is the text up to the first space, so it is always a prefix of `body` and the
    // rest starts on a character boundary (`/ é` has an empty word, not `é`).
    let word = body.split(char::is_whitespace).next().unwrap_or_default();
    let rest = body.get(word.len()..).unwrap_or_default().trim();
    let lower = word.to_ascii_lowercase();
    let name = ALIASES
        .iter()
        .find(|(alias, _)| *alias == lower)
        .map_or(lower.as_str(), |(_, target)| target);
    if let Some(command) = COMMANDS.iter().find(|c| c.name == name) {
        return Some(Slash::Command {
            name: command.name,
            rest,
        });
    }
    let first = line.split_whitespace().next().unwrap_or_default();
    if word.contains('/') || word.is_empty() || std::path::Path::new(first).exists() {
        return Some(Slash::Prompt);
    }
    Some(Slash::Unknown(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_paths_and_unknown_words() {
        assert_eq!(
            parse("/agent what is a channel in Go?"),
            Some(Slash::Command {
                name: "agent",
                rest: "what is a channel in Go?"
            })
        );
        assert_eq!(
            parse("/cost"),
            Some(Slash::Command {
                name: "cost",
                rest: ""
            })
        );
        assert_eq!(
            parse("/EXIT"),
            Some(Slash::Command {
                name: "quit",
                rest: ""
            })
        );
        assert_eq!(
            parse("/etc/hosts what does this file do?"),
            Some(Slash::Prompt)
        );
        assert_eq!(parse("/tmp is it writable?"), Some(Slash::Prompt));
        assert_eq!(parse("/frobnicate now"), Some(Slash::Unknown("frobnicate")));
        assert_eq!(parse("no slash"), None);
        // Typed text is Unicode: none of these may slice inside a character.
        assert_eq!(parse("/ é"), Some(Slash::Prompt));
        assert_eq!(parse("/é"), Some(Slash::Unknown("é")));
        assert_eq!(parse("/éé ü"), Some(Slash::Unknown("éé")));
        assert_eq!(parse_with("/é x", &[]), Some(Slash::Unknown("é")));
    }

    #[test]
    fn commands_added_at_run_time_are_recognised() {
        let dynamic = vec![DynamicCommand {
            name: "docs:review".into(),
            args: "path".into(),
            about: "review a file".into(),
            file: false,
        }];
        assert_eq!(
            parse_with("/docs:review src/main.rs", &dynamic),
            Some(Slash::Dynamic {
                index: 0,
                rest: "src/main.rs"
            })
        );
        assert_eq!(
            parse_with("/docs:other", &dynamic),
            Some(Slash::Unknown("docs:other"))
        );
        assert_eq!(
            parse_with("/cost", &dynamic),
            Some(Slash::Command {
                name: "cost",
                rest: ""
            })
        );
    }
}
