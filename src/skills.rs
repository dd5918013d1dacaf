//! Skills: knowledge packages (a folder with `SKILL.md`, or one `NAME.md`) the prompt lists in a
//! cheap catalog and the model pulls on demand, that the user's words activate for one turn, or
//! that the user pins into the cached prefix.
//!
//! Skills are found once, when the session starts, in `CHATCLI_HOME/skills/` (user scope) and at
//! the project root in `.chatcli/skills/`, `.agents/skills/` and `.claude/skills/` (project scope,
//! which wins on equal names). A skill with invalid front matter is skipped with one warning
//! naming the file and the problem. Mental model of the prompt: the **catalog** (one line per
//! skill, sorted, capped) and the **pinned skills** (their bodies) are stable system blocks, so
//! their bytes must not change within a session: they are built from the catalog read at start,
//! never re-read per request. Activated bodies are volatile and ride in the turn's `<context>`.
//! `model:` and `effort:` are shown, not applied (the orchestrator will use them).

// Skill files are hand-written text: no index that could panic on them (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod activation;
mod error;
pub mod frontmatter;
pub mod pins;

use std::path::{Path, PathBuf};

use crate::conversation::SystemBlock;
use crate::protocol::Mode;

pub use activation::SessionSkills;
pub use error::SkillError;

/// Characters the catalog block may take (`CHATCLI_SKILLS_CATALOG_MAX_CHARS`).
pub const DEFAULT_CATALOG_MAX_CHARS: usize = 4_000;
/// Characters of activated bodies one turn may carry (`CHATCLI_SKILLS_ACTIVE_MAX_CHARS`).
pub const DEFAULT_ACTIVE_MAX_CHARS: usize = 6_000;
/// Skills one turn activates at most.
pub const MAX_ACTIVE: usize = 3;
/// Other files of one skill listed at most.
const MAX_FILES: usize = 200;
/// The most of one skill file read: skills are a few KB of instructions, so 16 MiB holds any real
/// one whole while a runaway file cannot fill memory.
const MAX_SKILL_BYTES: u64 = 16 << 20;

/// The size limits of the skill blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `CHATCLI_SKILLS_CATALOG_MAX_CHARS`.
    pub catalog_max_chars: usize,
    /// `CHATCLI_SKILLS_ACTIVE_MAX_CHARS`.
    pub active_max_chars: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            catalog_max_chars: DEFAULT_CATALOG_MAX_CHARS,
            active_max_chars: DEFAULT_ACTIVE_MAX_CHARS,
        }
    }
}

/// The project folders skills are looked for in, at the project root, in precedence order.
pub const PROJECT_DIRS: [&str; 3] = [".chatcli/skills", ".agents/skills", ".claude/skills"];

/// Where a skill was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `CHATCLI_HOME/skills/`.
    User,
    /// The project root's skill folders.
    Project,
}

impl Scope {
    /// `user` or `project`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

/// One installed skill.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// Words or phrases that activate it for a turn.
    pub triggers: Vec<String>,
    /// Globs; an `@` mention of a matching path activates it.
    pub paths: Vec<String>,
    pub model: Option<String>,
    pub effort: Option<String>,
    /// The Markdown after the front matter.
    pub body: String,
    pub scope: Scope,
    /// The `SKILL.md` or `NAME.md` file.
    pub file: PathBuf,
    /// The skill's folder, canonical (`None` for a single-file skill).
    pub dir: Option<PathBuf>,
    /// The folder's other files, absolute, sorted.
    pub files: Vec<PathBuf>,
}

impl Skill {
    /// o200k tokens of the body.
    pub fn tokens(&self) -> u64 {
        crate::tokens::count(&self.body)
    }

    /// The body as the prompt carries it.
    pub fn tagged_body(&self) -> String {
        format!("<skill name=\"{}\">\n{}\n</skill>", self.name, self.body)
    }
}

/// The skills of a session, sorted by name, and the warnings about the ones skipped.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    skills: Vec<Skill>,
    /// One line per skipped skill: the file and the problem.
    pub warnings: Vec<String>,
}

impl Catalog {
    /// Finds the skills of `home` (user scope) and of the project at `root`.
    pub fn discover(home: Option<&Path>, root: &Path) -> Catalog {
        let mut catalog = Catalog::default();
        let mut found: Vec<Skill> = Vec::new();
        for dir in PROJECT_DIRS {
            load_dir(
                &root.join(dir),
                Scope::Project,
                &mut found,
                &mut catalog.warnings,
            );
        }
        if let Some(home) = home {
            load_dir(
                &home.join("skills"),
                Scope::User,
                &mut found,
                &mut catalog.warnings,
            );
        }
        // First found wins: project folders come first, in precedence order.
        for skill in found {
            if !catalog.skills.iter().any(|s| s.name == skill.name) {
                catalog.skills.push(skill);
            }
        }
        catalog.skills.sort_by(|a, b| a.name.cmp(&b.name));
        for warning in &catalog.warnings {
            tracing::warn!("{warning}");
        }
        catalog
    }

    /// The skills, sorted by name.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// Whether no skill is installed.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The skill with this name.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// The stable `skills` block: one line per skill, capped at `max_chars` with a "N more" line.
    pub fn catalog_block(&self, max_chars: usize) -> Option<SystemBlock> {
        if self.skills.is_empty() {
            return None;
        }
        let mut text = String::from(
            "Skills (call the `skill` tool with a name to load its instructions when a task matches):",
        );
        // Counted in characters, like the setting says.
        let mut used = text.chars().count();
        for (i, skill) in self.skills.iter().enumerate() {
            let line = format!("\n- {}: {}", skill.name, one_line(&skill.description));
            let more = self.skills.len() - i;
            let tail = format!("\n{more} more: /skill list");
            let last = i + 1 == self.skills.len();
            let room = if last { 0 } else { tail.len() + 8 };
            let size = line.chars().count();
            if used + size + room > max_chars {
                text.push_str(&tail);
                break;
            }
            used += size;
            text.push_str(&line);
        }
        Some(SystemBlock {
            name: "skills".into(),
            text,
            stable: true,
        })
    }

    /// The stable `pinned skills` block: the bodies of the pinned skills, by name.
    pub fn pinned_block(&self, pinned: &[String]) -> Option<SystemBlock> {
        let bodies: Vec<String> = self
            .skills
            .iter()
            .filter(|s| pinned.contains(&s.name))
            .map(Skill::tagged_body)
            .collect();
        (!bodies.is_empty()).then(|| SystemBlock {
            name: "pinned skills".into(),
            text: format!(
                "Pinned skills (follow them when they apply):\n{}",
                bodies.join("\n")
            ),
            stable: true,
        })
    }

    /// The session's skill blocks for `mode`: the catalog (not in chat, which has no tools), then
    /// the pinned bodies.
    pub fn system_blocks(
        &self,
        mode: Mode,
        pinned: &[String],
        max_chars: usize,
    ) -> Vec<SystemBlock> {
        let catalog = mode
            .uses_tools()
            .then(|| self.catalog_block(max_chars))
            .flatten();
        catalog
            .into_iter()
            .chain(self.pinned_block(pinned))
            .collect()
    }

    /// What `/skill list` and `chatcli skill list` print: name, scope, folder, tokens.
    pub fn listing(&self, pinned: &[String]) -> String {
        let mut lines = vec![format!("skills ({}):", self.skills.len())];
        if self.skills.is_empty() {
            lines.push(format!(
                "  none found in CHATCLI_HOME/skills or the project's {}",
                PROJECT_DIRS.join(", ")
            ));
        }
        for skill in &self.skills {
            let folder = skill
                .file
                .parent()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            let mut line = format!(
                "  {} · {} · {folder} · {} tokens",
                skill.name,
                skill.scope.as_str(),
                skill.tokens()
            );
            if pinned.contains(&skill.name) {
                line.push_str(" · pinned");
            }
            lines.push(line);
        }
        for warning in &self.warnings {
            lines.push(format!("  {warning}"));
        }
        lines.join("\n")
    }

    /// What `/skill show NAME` prints; `None` when there is no such skill.
    pub fn show(&self, name: &str) -> Option<String> {
        let skill = self.get(name)?;
        let mut text = format!(
            "{} ({} · {} · {} tokens)\n{}\n",
            skill.name,
            skill.scope.as_str(),
            skill.file.display(),
            skill.tokens(),
            skill.description
        );
        text.push_str(&details(skill));
        text.push('\n');
        text.push_str(&skill.body);
        Some(text)
    }

    /// The canonical folders of folder skills, which `read_file` may read inside.
    pub fn roots(&self) -> impl Iterator<Item = &Path> {
        self.skills.iter().filter_map(|s| s.dir.as_deref())
    }

    /// The sorted names, for messages about unknown skills.
    pub fn names(&self) -> String {
        let names: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
        if names.is_empty() {
            "no skills are installed".into()
        } else {
            format!("installed: {}", names.join(", "))
        }
    }
}

/// Triggers, paths, model and effort of a skill, one per line, those it has.
pub fn details(skill: &Skill) -> String {
    let mut lines = Vec::new();
    if !skill.triggers.is_empty() {
        lines.push(format!("triggers: {}", skill.triggers.join(", ")));
    }
    if !skill.paths.is_empty() {
        lines.push(format!("paths: {}", skill.paths.join(", ")));
    }
    if let Some(model) = &skill.model {
        lines.push(format!(
            "model: {model} (shown, not applied in the main loop)"
        ));
    }
    if let Some(effort) = &skill.effort {
        lines.push(format!(
            "effort: {effort} (shown, not applied in the main loop)"
        ));
    }
    lines.join("\n")
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Loads the skills of one folder: sub-folders holding `SKILL.md`, and `NAME.md` files.
fn load_dir(dir: &Path, scope: Scope, found: &mut Vec<Skill>, warnings: &mut Vec<String>) {
    let Ok(entries) = crate::files::list_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.iter().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        if name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            let file = path.join("SKILL.md");
            if file.is_file() {
                load_file(&file, Some(&path), scope, found, warnings);
            }
        } else if name.ends_with(".md") && !name.eq_ignore_ascii_case("README.md") {
            load_file(&path, None, scope, found, warnings);
        }
    }
}

fn load_file(
    file: &Path,
    dir: Option<&Path>,
    scope: Scope,
    found: &mut Vec<Skill>,
    warnings: &mut Vec<String>,
) {
    // Following links as before (user skills are often linked from a dotfiles folder); a FIFO is
    // refused rather than waited on.
    let text = match crate::files::read_following(file, MAX_SKILL_BYTES).and_then(|b| b.into_text())
    {
        Ok(text) => text,
        Err(e) => {
            warnings.push(format!(
                "skill skipped: {}: cannot read it: {e}",
                file.display()
            ));
            return;
        }
    };
    let (fm, body) = match frontmatter::parse(&text) {
        Ok(parsed) => parsed,
        Err(problem) => {
            warnings.push(format!("skill skipped: {}: {problem}", file.display()));
            return;
        }
    };
    let dir = dir.and_then(|d| d.canonicalize().ok());
    let files = dir.as_deref().map(other_files).unwrap_or_default();
    found.push(Skill {
        name: fm.name,
        description: fm.description,
        triggers: fm.triggers,
        paths: fm.paths,
        model: fm.model,
        effort: fm.effort,
        body,
        scope,
        file: file.to_path_buf(),
        dir,
        files,
    });
}

/// The files of a skill folder besides `SKILL.md`, walked without following links.
fn other_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let Ok(entries) = crate::files::list_dir(&folder) else {
            continue;
        };
        for entry in entries {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() && path != dir.join("SKILL.md") {
                files.push(path);
            }
        }
        if files.len() >= MAX_FILES {
            break;
        }
    }
    files.sort();
    files.truncate(MAX_FILES);
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, text).expect("write");
    }

    fn skill(name: &str, description: &str) -> String {
        format!("---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n")
    }

    #[test]
    fn every_location_is_read_and_project_wins() {
        let home = tempfile::tempdir().expect("tempdir");
        let root = tempfile::tempdir().expect("tempdir");
        write(
            &home.path().join("skills/shared/SKILL.md"),
            &skill("shared", "user copy"),
        );
        write(
            &home.path().join("skills/solo.md"),
            &skill("solo", "single file"),
        );
        write(&home.path().join("skills/README.md"), "not a skill");
        write(
            &root.path().join(".claude/skills/shared/SKILL.md"),
            &skill("shared", "claude copy"),
        );
        write(
            &root.path().join(".chatcli/skills/shared/SKILL.md"),
            &skill("shared", "chatcli copy"),
        );
        write(
            &root.path().join(".agents/skills/b/SKILL.md"),
            &skill("b", "agents"),
        );
        write(&root.path().join(".agents/skills/b/references/x.md"), "x");
        write(
            &root.path().join(".claude/skills/bad/SKILL.md"),
            "---\nname: bad\n---\n",
        );
        let catalog = Catalog::discover(Some(home.path()), root.path());
        let names: Vec<(&str, &str, Scope)> = catalog
            .skills()
            .iter()
            .map(|s| (s.name.as_str(), s.description.as_str(), s.scope))
            .collect();
        assert_eq!(
            names,
            vec![
                ("b", "agents", Scope::Project),
                ("shared", "chatcli copy", Scope::Project),
                ("solo", "single file", Scope::User),
            ]
        );
        assert_eq!(catalog.warnings.len(), 1, "{:?}", catalog.warnings);
        assert!(catalog.warnings[0].contains("bad/SKILL.md: `description` is missing"));
        let b = catalog.get("b").expect("b");
        assert_eq!(b.files.len(), 1);
        assert!(b.files[0].ends_with("references/x.md"));
    }

    #[test]
    fn the_catalog_is_sorted_and_capped_with_a_count_of_the_rest() {
        let root = tempfile::tempdir().expect("tempdir");
        for i in (0..30).rev() {
            write(
                &root
                    .path()
                    .join(format!(".chatcli/skills/s{i:02}/SKILL.md")),
                &skill(&format!("s{i:02}"), "does a thing"),
            );
        }
        let catalog = Catalog::discover(None, root.path());
        let full = catalog.catalog_block(100_000).expect("block").text;
        assert!(full.find("- s00:").expect("s00") < full.find("- s01:").expect("s01"));
        assert!(!full.contains("more: /skill list"));
        let capped = catalog.catalog_block(300).expect("block").text;
        assert!(capped.chars().count() <= 300, "{}", capped.len());
        let shown = capped.matches("\n- ").count();
        assert!(
            capped.ends_with(&format!("\n{} more: /skill list", 30 - shown)),
            "{capped}"
        );
        assert!(
            Catalog::discover(None, root.path())
                .system_blocks(Mode::Chat, &[], 4000)
                .is_empty()
        );
    }
}
