//! The settings files: `CHATCLI_HOME/settings.json` (the user's) and `.chatcli/settings.json`
//! (the project's, shared in its repository), in the shape Claude Code users already write —
//! `{"hooks": {…}, "permissions": {"allow": […], "ask": […], "deny": […]}}`.
//!
//! Trust: the user's file is the user's word. The project's file can always tighten (its `deny`
//! and `ask` rules apply at once), but what runs code or loosens a rule — its hooks and its
//! `allow` rules — applies only once the user approved that file for the workspace, keyed by
//! the file's content (`settings-approvals.json` under `CHATCLI_HOME`, as project MCP servers
//! are): an edit to the file asks again. The thing a newcomer gets wrong: a project file that
//! fails to parse must not silently drop its `deny` rules — it is reported, and its rules that
//! did parse still apply.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::Digest;

use crate::hooks::Hook;
use crate::rules::{Rule, RuleSet, Verdict};

/// Settings files are small; anything bigger is a mistake.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The project file's path below its root.
pub const PROJECT_FILE: &str = ".chatcli/settings.json";

/// What the settings files (and the command files) give a session.
#[derive(Debug, Clone, Default)]
pub struct UserSetup {
    pub hooks: Vec<Hook>,
    pub rules: RuleSet,
    /// The project file's hooks and `allow` rules, held back until the user approves the file.
    pub pending: Option<Pending>,
    /// One line per problem found (said once at start).
    pub problems: Vec<String>,
    /// The custom slash commands (`command_files`).
    pub commands: Vec<crate::command_files::CommandFile>,
}

/// A project settings file waiting for the user's approval.
#[derive(Debug, Clone)]
pub struct Pending {
    pub path: PathBuf,
    pub fingerprint: String,
    pub hooks: Vec<Hook>,
    pub allow: Vec<Rule>,
}

impl Pending {
    /// What the approval dialog says it would allow.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        for hook in &self.hooks {
            parts.push(format!("hook {}: {}", hook.event.as_str(), hook.command));
        }
        for rule in &self.allow {
            parts.push(format!("allow {}", rule.text));
        }
        format!(
            "{} asks to run hooks and loosen permission rules in this workspace:\n  {}\nApproving remembers this file's content for the workspace; an edit asks again.",
            self.path.display(),
            parts.join("\n  ")
        )
    }
}

/// One file's parsed content.
#[derive(Debug, Default)]
struct FileContent {
    hooks: Vec<Hook>,
    rules: Vec<Rule>,
}

/// Reads the user's file under `home` and the project's under `project_root`, and the command
/// files of both.
pub fn load(home: &Path, project_root: &Path) -> UserSetup {
    let mut loaded = UserSetup::default();
    let (commands, problems) = crate::command_files::load(home, project_root);
    loaded.commands = commands;
    loaded.problems.extend(problems);
    let user = home.join("settings.json");
    if let Some((content, _)) = read(&user, &mut loaded.problems) {
        loaded.hooks.extend(content.hooks);
        for rule in content.rules {
            loaded.rules.push(rule);
        }
    }
    let project = project_root.join(PROJECT_FILE);
    if let Some((content, fingerprint)) = read(&project, &mut loaded.problems) {
        let (allow, tighten): (Vec<Rule>, Vec<Rule>) = content
            .rules
            .into_iter()
            .partition(|r| r.verdict == Verdict::Allow);
        for rule in tighten {
            loaded.rules.push(rule);
        }
        let loosens = !allow.is_empty() || !content.hooks.is_empty();
        if loosens && Approvals::new(home).allows(project_root, &fingerprint) {
            loaded.hooks.extend(content.hooks);
            for rule in allow {
                loaded.rules.push(rule);
            }
        } else if loosens {
            loaded.pending = Some(Pending {
                path: project,
                fingerprint,
                hooks: content.hooks,
                allow,
            });
        }
    }
    loaded
}

/// The file at `path` parsed, with its content's fingerprint; `None` when it does not exist or
/// cannot be read at all (then said in `problems`).
fn read(path: &Path, problems: &mut Vec<String>) -> Option<(FileContent, String)> {
    let bytes = match crate::files::read_bounded(path, MAX_FILE_BYTES) {
        Ok(b) if b.truncated() => {
            problems.push(format!("{}: larger than 1 MiB; not read", path.display()));
            return None;
        }
        Ok(b) => b.bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            problems.push(format!("{}: cannot be read: {e}", path.display()));
            return None;
        }
    };
    let fingerprint = hex(&sha2::Sha256::digest(&bytes));
    let json: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            problems.push(format!(
                "{}: not valid JSON ({e}); its settings are not applied",
                path.display()
            ));
            return None;
        }
    };
    let source = path.display().to_string();
    let mut content = FileContent::default();
    if let Some(hooks) = json.get("hooks") {
        match crate::hooks::parse(hooks, &source) {
            Ok(h) => content.hooks = h,
            Err(e) => problems.push(format!("{e}; the file's hooks are not applied")),
        }
    }
    if let Some(permissions) = json.get("permissions") {
        for verdict in [Verdict::Allow, Verdict::Ask, Verdict::Deny] {
            let list = permissions.get(verdict.as_str()).and_then(Value::as_array);
            for text in list.into_iter().flatten().filter_map(Value::as_str) {
                match Rule::parse(text, verdict, &source) {
                    Ok(rule) => content.rules.push(rule),
                    Err(e) => problems.push(format!("{source}: {e}")),
                }
            }
        }
    }
    Some((content, fingerprint))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Which project settings files the user approved, per workspace, by content.
pub struct Approvals {
    path: PathBuf,
}

impl Approvals {
    /// The approvals kept under `home`.
    pub fn new(home: &Path) -> Approvals {
        Approvals {
            path: home.join("settings-approvals.json"),
        }
    }

    fn read(&self) -> BTreeMap<String, String> {
        crate::files::read_bounded(&self.path, MAX_FILE_BYTES)
            .ok()
            .and_then(|r| serde_json::from_slice(&r.bytes).ok())
            .unwrap_or_default()
    }

    /// Whether the project file with `fingerprint` is approved for `project_root`.
    pub fn allows(&self, project_root: &Path, fingerprint: &str) -> bool {
        self.read()
            .get(&project_root.display().to_string())
            .is_some_and(|approved| approved == fingerprint)
    }

    /// Approves the project file with `fingerprint` for `project_root`.
    pub fn approve(&self, project_root: &Path, fingerprint: &str) -> std::io::Result<()> {
        let mut all = self.read();
        all.insert(project_root.display().to_string(), fingerprint.to_string());
        let text = serde_json::to_string_pretty(&all).map_err(std::io::Error::other)?;
        crate::private_fs::replace_private(&self.path, text.as_bytes())
    }
}

/// Where "allow always" saves a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    User,
    Project,
}

/// Why an "allow always" rule was not saved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingsError {
    #[error("{path} is not valid JSON ({why}); fix it before saving rules there")]
    NotJson { path: String, why: String },
    #[error("{path}: {what} is not {expected}")]
    Shape {
        path: String,
        what: &'static str,
        expected: &'static str,
    },
    #[error("cannot {what} {path}: {why}")]
    Io {
        what: &'static str,
        path: String,
        why: String,
    },
}

/// Adds `rule` to the `allow` list of the user's or the project's settings file (created when
/// missing); a project file the user has approved stays approved after the edit.
pub fn save_allow(
    scope: Scope,
    home: &Path,
    project_root: &Path,
    rule: &str,
) -> Result<PathBuf, SettingsError> {
    let (root, rel) = match scope {
        Scope::User => (home.to_path_buf(), PathBuf::from("settings.json")),
        Scope::Project => (project_root.to_path_buf(), PathBuf::from(PROJECT_FILE)),
    };
    let path = root.join(&rel);
    let shown = path.display().to_string();
    let io = |what: &'static str, e: std::io::Error| SettingsError::Io {
        what,
        path: shown.clone(),
        why: e.to_string(),
    };
    let was_approved = scope == Scope::Project
        && crate::files::read_bounded(&path, MAX_FILE_BYTES)
            .map(|b| {
                Approvals::new(home).allows(project_root, &hex(&sha2::Sha256::digest(&b.bytes)))
            })
            .unwrap_or(true);
    let mut json: Value = match crate::files::read_bounded(&path, MAX_FILE_BYTES) {
        Ok(b) => serde_json::from_slice(&b.bytes).map_err(|e| SettingsError::NotJson {
            path: shown.clone(),
            why: e.to_string(),
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Value::Object(Default::default()),
        Err(e) => return Err(io("read", e)),
    };
    add_allow(&mut json, rule).map_err(|(what, expected)| SettingsError::Shape {
        path: shown.clone(),
        what,
        expected,
    })?;
    let text = serde_json::to_string_pretty(&json)
        .map_err(|e| io("write", std::io::Error::other(e)))?
        + "\n";
    if let Some(parent) = rel.parent().filter(|p| !p.as_os_str().is_empty()) {
        crate::files::create_dir_beneath(&root, parent)
            .map_err(|e| io("create the folder of", e))?;
    }
    crate::files::write_beneath(&root, &rel, text.as_bytes(), 0o644).map_err(|e| io("write", e))?;
    if was_approved && scope == Scope::Project {
        let fingerprint = hex(&sha2::Sha256::digest(text.as_bytes()));
        Approvals::new(home)
            .approve(project_root, &fingerprint)
            .map_err(|e| io("record the approval of", e))?;
    }
    Ok(path)
}

/// Puts `rule` in `permissions.allow` of `json`; `Err` names the part that has the wrong shape.
fn add_allow(json: &mut Value, rule: &str) -> Result<(), (&'static str, &'static str)> {
    let object = json.as_object_mut().ok_or(("the file", "a JSON object"))?;
    let permissions = object
        .entry("permissions")
        .or_insert_with(|| Value::Object(Default::default()))
        .as_object_mut()
        .ok_or(("`permissions`", "an object"))?;
    let allow = permissions
        .entry("allow")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or(("`permissions.allow`", "a list"))?;
    if !allow.iter().any(|v| v.as_str() == Some(rule)) {
        allow.push(Value::String(rule.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        std::fs::write(path, text).expect("write");
    }

    #[test]
    fn a_project_file_tightens_at_once_and_loosens_only_once_approved() {
        let home = tempfile::tempdir().expect("home");
        let root = tempfile::tempdir().expect("root");
        let project = root.path().join(PROJECT_FILE);
        write(
            &project,
            r#"{"permissions": {"allow": ["Bash(make:*)"], "deny": ["Read(.env)"]},
                "hooks": {"Stop": [{"hooks": [{"command": "true"}]}]}}"#,
        );
        let loaded = load(home.path(), root.path());
        let texts: Vec<_> = loaded
            .rules
            .rules()
            .iter()
            .map(|r| r.text.as_str())
            .collect();
        assert_eq!(
            texts,
            ["Read(.env)"],
            "only the deny rule applies before approval"
        );
        assert!(loaded.hooks.is_empty());
        let pending = loaded.pending.expect("waiting for approval");
        assert!(
            pending.summary().contains("hook Stop: true"),
            "{}",
            pending.summary()
        );
        Approvals::new(home.path())
            .approve(root.path(), &pending.fingerprint)
            .expect("approve");
        let loaded = load(home.path(), root.path());
        assert_eq!(loaded.rules.rules().len(), 2);
        assert_eq!(loaded.hooks.len(), 1);
        assert!(loaded.pending.is_none());
        write(&project, r#"{"permissions": {"allow": ["Bash"]}}"#);
        let loaded = load(home.path(), root.path());
        assert!(loaded.pending.is_some(), "an edited file asks again");
        assert!(loaded.rules.rules().is_empty());
    }

    #[test]
    fn a_broken_file_is_said_and_allow_always_saves_where_asked() {
        let home = tempfile::tempdir().expect("home");
        let root = tempfile::tempdir().expect("root");
        write(&home.path().join("settings.json"), "{not json");
        let loaded = load(home.path(), root.path());
        assert_eq!(loaded.problems.len(), 1);
        assert!(
            loaded.problems[0].contains("not valid JSON"),
            "{:?}",
            loaded.problems
        );
        std::fs::remove_file(home.path().join("settings.json")).expect("rm");
        let saved = save_allow(
            Scope::User,
            home.path(),
            root.path(),
            "run_command(cargo test:*)",
        )
        .expect("saved");
        assert_eq!(saved, home.path().join("settings.json"));
        let loaded = load(home.path(), root.path());
        assert_eq!(loaded.rules.rules()[0].text, "run_command(cargo test:*)");
        save_allow(Scope::Project, home.path(), root.path(), "Edit(src/**)").expect("saved");
        let loaded = load(home.path(), root.path());
        assert!(
            loaded.pending.is_none(),
            "the user's own save needs no second approval"
        );
        assert_eq!(loaded.rules.rules().len(), 2);
    }
}
