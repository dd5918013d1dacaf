//! Custom agents: `NAME.md` files with YAML front matter in `CHATCLI_HOME/agents/` (user scope)
//! and `.chatcli/agents/` at the project root (project scope, which wins on equal names).
//!
//! The front matter is read by the skills' parser (`name`, `description`, `tools`, `model`,
//! `effort`); the body is the agent's persona. `tools:` takes Claude Code's names — `Read`,
//! `Grep`, `Glob`, `Bash`, `Write`, `Edit` — mapped to chatcli's tools; without `tools:` an
//! agent is read-only. A file that cannot be used is skipped with one warning naming the file
//! and the problem; the session goes on.

use std::path::{Path, PathBuf};

use super::{AgentSpec, Effort, Source, SpecialistError};
use crate::skills::frontmatter;

/// Where project agents live, under the project root.
pub const PROJECT_DIR: &str = ".chatcli/agents";

/// The most of one agent file read: a definition is a few KB, so 16 MiB holds any real one
/// whole while a runaway file cannot fill memory.
const MAX_AGENT_BYTES: u64 = 16 << 20;

/// The tools an agent without `tools:` gets.
const READ_ONLY: [&str; 3] = ["list_directory", "read_file", "search_files"];

/// chatcli's tools for one of Claude Code's tool names; `None` for a name it does not know.
pub fn map_tool(name: &str) -> Option<&'static [&'static str]> {
    Some(match name.trim().to_ascii_lowercase().as_str() {
        "read" => &["read_file"],
        "grep" => &["search_files"],
        "glob" | "ls" => &["list_directory"],
        "bash" => &["run_command"],
        "write" => &["write_file"],
        "edit" | "multiedit" => &["patch_file"],
        _ => return None,
    })
}

/// The agents of the project at `root` and of `home`; project first, so it wins on equal names.
pub fn discover(home: Option<&Path>, root: &Path, warnings: &mut Vec<String>) -> Vec<AgentSpec> {
    let mut found: Vec<AgentSpec> = Vec::new();
    let project = load_dir(&root.join(PROJECT_DIR), true, warnings);
    let user = home
        .map(|h| load_dir(&h.join("agents"), false, warnings))
        .unwrap_or_default();
    for agent in project.into_iter().chain(user) {
        if !found.iter().any(|a| a.name == agent.name) {
            found.push(agent);
        }
    }
    found
}

fn load_dir(dir: &Path, project: bool, warnings: &mut Vec<String>) -> Vec<AgentSpec> {
    let Ok(entries) = crate::files::list_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .iter()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md") && p.is_file())
        .collect();
    files.sort();
    let mut agents = Vec::new();
    for file in files {
        // Following links as before (agents are often linked from a dotfiles folder); a FIFO is
        // refused rather than waited on.
        let text = match crate::files::read_following(&file, MAX_AGENT_BYTES)
            .and_then(|b| b.into_text())
        {
            Ok(text) => text,
            Err(e) => {
                warnings.push(format!(
                    "agent skipped: {}: cannot read it: {e}",
                    file.display()
                ));
                continue;
            }
        };
        let source = if project {
            Source::Project(file.clone())
        } else {
            Source::User(file.clone())
        };
        match parse(&text, source) {
            Ok(agent) => agents.push(agent),
            Err(problem) => warnings.push(format!("agent skipped: {}: {problem}", file.display())),
        }
    }
    agents
}

/// One agent from its file's text; `Err` says what is wrong, in words.
pub fn parse(text: &str, source: Source) -> Result<AgentSpec, SpecialistError> {
    let (fm, body) = frontmatter::parse(text)?;
    let tools = match &fm.tools {
        None => READ_ONLY.iter().map(|t| t.to_string()).collect(),
        Some(names) => {
            let mut tools: Vec<String> = Vec::new();
            for name in names {
                let mapped =
                    map_tool(name).ok_or_else(|| SpecialistError::UnknownTool(name.clone()))?;
                tools.extend(mapped.iter().map(|t| t.to_string()));
            }
            tools.sort();
            tools.dedup();
            tools
        }
    };
    let effort = match fm.effort.as_deref() {
        None => Effort::Medium,
        Some(text) => {
            Effort::parse(text).ok_or_else(|| SpecialistError::Effort(text.to_string()))?
        }
    };
    if body.trim().is_empty() {
        return Err(SpecialistError::EmptyBody);
    }
    Ok(AgentSpec {
        name: fm.name,
        description: fm.description.replace('\n', " "),
        prompt: body,
        tools,
        model: fm.model,
        effort,
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source() -> Source {
        Source::Project(PathBuf::from("a.md"))
    }

    #[test]
    fn claude_tool_names_map_and_no_tools_means_read_only() {
        let agent = parse(
            "---\nname: auditor\ndescription: Audits.\ntools: Read, Grep, Bash\nmodel: small\neffort: high\n---\nAudit it.",
            source(),
        )
        .expect("valid");
        assert_eq!(
            agent.tools,
            vec!["read_file", "run_command", "search_files"]
        );
        assert_eq!(agent.model.as_deref(), Some("small"));
        assert_eq!(agent.effort, Effort::High);
        let plain =
            parse("---\nname: p\ndescription: d\n---\nBe careful.", source()).expect("valid");
        assert_eq!(
            plain.tools,
            vec!["list_directory", "read_file", "search_files"]
        );
        assert_eq!(plain.effort, Effort::Medium);
    }

    #[test]
    fn problems_are_named() {
        let cases = [
            (
                "---\nname: a\ndescription: d\ntools: Read, Fly\n---\nx",
                "unknown tool \"Fly\"",
            ),
            (
                "---\nname: a\ndescription: d\neffort: max\n---\nx",
                "`effort` must be",
            ),
            ("---\nname: a\ndescription: d\n---\n", "body"),
            ("no header", "no YAML front matter"),
        ];
        for (text, problem) in cases {
            let err = parse(text, source()).expect_err(text).to_string();
            assert!(err.contains(problem), "{text:?}: {err}");
        }
    }

    #[test]
    fn project_agents_win_and_bad_files_are_named() {
        let home = tempfile::tempdir().expect("home");
        let root = tempfile::tempdir().expect("root");
        let project = root.path().join(PROJECT_DIR);
        std::fs::create_dir_all(&project).expect("dir");
        std::fs::create_dir_all(home.path().join("agents")).expect("dir");
        std::fs::write(
            project.join("docs.md"),
            "---\nname: docs\ndescription: project docs\n---\nP.",
        )
        .expect("write");
        std::fs::write(
            home.path().join("agents/docs.md"),
            "---\nname: docs\ndescription: user docs\n---\nU.",
        )
        .expect("write");
        std::fs::write(project.join("bad.md"), "---\nname: bad\n---\nx").expect("write");
        let mut warnings = Vec::new();
        let agents = discover(Some(home.path()), root.path(), &mut warnings);
        assert_eq!(agents.len(), 1);
        assert_eq!(agents[0].description, "project docs");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("bad.md: `description` is missing"),
            "{warnings:?}"
        );
    }
}
