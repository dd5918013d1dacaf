//! `/init`: a first `AGENTS.md` for the repository, written by the model. The prompt the user
//! sends is `/init [NOTE]` (typed in the TUI or given to `chatcli exec`); the agent replaces it
//! with instructions to survey the repository with the read-only tools and write the file with
//! `write_file`, as Codex's and Claude Code's `/init` do, and runs it in coder mode.
//!
//! "Asks before writing" is the write's normal approval: the TUI shows the file (or its diff)
//! and waits. An existing `AGENTS.md` is never clobbered without a person seeing the change:
//! the model is told to refine it, and where writes would not be asked for (`exec --yes`,
//! `/permissions auto-edit`) `/init` refuses instead; where writes are refused anyway (`exec`
//! without `--yes`, read-only) it refuses before sending anything, so no survey is paid for.

use super::Agent;
use super::error::AgentError;
use super::tools_run::ApprovalPolicy;
use crate::protocol::{Mode, Permission};

/// The file `/init` writes.
pub const FILE: &str = "AGENTS.md";

/// What the model reads for `/init` when there is no `AGENTS.md` yet.
pub const INIT_NEW: &str = "Write a first AGENTS.md for this repository: the standing instructions a coding agent (or a new contributor) reads before changing anything here.

Survey first, cheaply, with the read-only tools: list_directory of the root and the main source folders; read_file of the README, the build manifests (Cargo.toml, package.json, pyproject.toml, go.mod, Makefile, …), the CI configuration and any existing agent instructions (CLAUDE.md, .cursorrules, .github/copilot-instructions.md, CONTRIBUTING.md); git_log for how commits are written. Read a few source files only to learn the conventions; do not read everything.

Then write AGENTS.md at the repository root with one write_file call (the user approves it before it lands). Title it \"Repository Guidelines\" and keep it short (200 to 400 words), in Markdown, specific to this repository, with real commands and paths: project structure and where things live; build, test and lint commands; coding style and naming; how tests are written and run; commit and pull-request conventions; anything an agent must not do here. Leave out sections that do not apply, and invent nothing you did not see.";

/// What the model reads for `/init` when `AGENTS.md` exists: refine it, do not start over.
pub const INIT_REFINE: &str = "AGENTS.md already exists in this repository: refine it instead of starting over. Read it first, then survey the repository cheaply with the read-only tools (list_directory of the root, read_file of the README, the build manifests and the CI configuration, git_log for the commit style) to check it against what is really there.

Keep what is still true and the author's wording, correct what is stale (commands, paths, tools), and add what is missing and useful to a coding agent: build, test and lint commands, structure, style, test and commit conventions. Keep it short. Then write the whole refined file back with one write_file call of AGENTS.md (the user sees the diff and approves it before it lands). If nothing needs changing, say so and write nothing.";

/// Whether `text` is the `/init` command, and the note after it (`/init focus on the tests`).
pub fn invocation(text: &str) -> Option<&str> {
    let rest = text.trim().strip_prefix("/init")?;
    if rest.is_empty() || rest.starts_with(char::is_whitespace) {
        Some(rest.trim())
    } else {
        None
    }
}

/// A prompt with the mode it runs in: `/init` needs the tool loop and the write tool, never
/// rerouted to chat or refused by plan mode, so it runs in coder mode (run mode stays run mode).
pub fn with_mode(text: String, mode: Mode) -> (String, Mode) {
    match invocation(&text) {
        Some(_) if mode != Mode::Run => (text, Mode::Coder),
        _ => (text, mode),
    }
}

/// Whether `/init` may run, and how: `Ok(true)` refines the existing file, `Ok(false)` writes a
/// new one; `Err` is the line that says why it does not run (nothing is sent).
pub fn decide(
    exists: bool,
    policy: ApprovalPolicy,
    permission: Permission,
) -> Result<bool, AgentError> {
    if policy == ApprovalPolicy::Deny {
        return Err(AgentError::InitRefused(format!(
            "/init not run: it writes {FILE}, and this session refuses writes (exec without --yes); nothing was sent. Run `chatcli exec --yes /init`, or /init in the TUI"
        )));
    }
    if permission == Permission::ReadOnly {
        return Err(AgentError::InitRefused(format!(
            "/init not run: it writes {FILE}, and the session is read-only; nothing was sent. /permissions ask, then /init"
        )));
    }
    let unasked = match (policy, permission) {
        (ApprovalPolicy::AutoApprove, _) => Some("writes are approved without asking (--yes)"),
        (_, Permission::AutoEdit) => Some("writes run without asking (/permissions auto-edit)"),
        _ => None,
    };
    match unasked {
        Some(why) if exists => Err(AgentError::InitRefused(format!(
            "/init not run: {FILE} already exists and {why}, so it is left alone. To refine it with a diff to approve, run /init in the TUI with /permissions ask"
        ))),
        _ => Ok(exists),
    }
}

impl Agent {
    /// The text `/init NOTE` stands for, or why it does not run.
    pub(super) async fn init_text(&mut self, note: &str) -> Result<String, AgentError> {
        let exists = crate::files::metadata_nofollow(&self.tools.ctx.workspace.join(FILE)).is_ok();
        let (policy, permission) = {
            let approvals = self.tools.approvals.lock().await;
            (approvals.policy, approvals.permission)
        };
        let refine = decide(exists, policy, permission)?;
        let mut text = if refine { INIT_REFINE } else { INIT_NEW }.to_string();
        if !note.is_empty() {
            text.push_str("\n\nThe user adds: ");
            text.push_str(note);
        }
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_command_itself_is_init() {
        assert_eq!(invocation("/init"), Some(""));
        assert_eq!(
            invocation("  /init focus on tests "),
            Some("focus on tests")
        );
        assert_eq!(invocation("/initialize"), None);
        assert_eq!(invocation("please /init"), None);
        let mode_for = |text: &str, mode| with_mode(text.to_string(), mode).1;
        assert_eq!(mode_for("/init", Mode::Chat), Mode::Coder);
        assert_eq!(mode_for("/init", Mode::Plan), Mode::Coder);
        assert_eq!(mode_for("/init", Mode::Run), Mode::Run);
        assert_eq!(mode_for("hello", Mode::Chat), Mode::Chat);
    }

    #[test]
    fn an_existing_file_is_refined_only_where_the_write_is_asked_for() {
        use ApprovalPolicy::*;
        assert_eq!(decide(false, Ask, Permission::Ask), Ok(false));
        assert_eq!(decide(true, Ask, Permission::Ask), Ok(true));
        assert_eq!(decide(false, AutoApprove, Permission::Ask), Ok(false));
        assert_eq!(decide(false, Ask, Permission::AutoEdit), Ok(false));
        let clobber = decide(true, AutoApprove, Permission::Ask)
            .unwrap_err()
            .to_string();
        assert!(clobber.contains("already exists") && clobber.contains("--yes"));
        assert!(decide(true, Ask, Permission::AutoEdit).is_err());
        assert!(
            decide(false, Deny, Permission::Ask).is_err_and(|e| e.to_string().contains("--yes"))
        );
        assert!(
            decide(false, Ask, Permission::ReadOnly)
                .is_err_and(|e| e.to_string().contains("read-only"))
        );
    }
}
