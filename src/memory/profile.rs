//! The profile and project lines of the memory index: who the user is and what they work on,
//! filled by the facts they store.
//!
//! A `personal` fact (from the `memory` tool or `chatcli memory add --category personal`) is
//! part of the profile summary; a `project` fact added in a workspace records that workspace's
//! project (its root folder's name, with when it was last active) in `profile.json`. The index
//! reads both when the session starts and never again, so they sit in the cached prefix. What a
//! newcomer gets wrong: the profile line is a bounded summary (the first few personal facts,
//! each cut short), not a listing — recall is where the whole facts are.

use std::path::Path;

use super::{Fact, MemoryError, Project, Store, io, write_atomic};
use crate::clock::now_secs;
use crate::private_fs::create_private_dir;

/// Personal facts the profile line carries at most.
pub const PROFILE_FACTS: usize = 3;
/// Characters of one personal fact the profile line keeps.
pub const PROFILE_FACT_CHARS: usize = 80;
/// Projects the index names at most (the most recently active).
pub const INDEX_PROJECTS: usize = 6;

/// The project a workspace belongs to: the name of its project root (`.git` or `.agent`).
pub fn project_name(workspace: &Path) -> Option<String> {
    crate::project::project_root(workspace)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
}

/// The profile summary: the profile's own fields, then the oldest personal facts (cut short).
pub fn profile_summary(store: &Store) -> Vec<String> {
    let p = &store.profile;
    let mut parts: Vec<String> = [&p.name, &p.role, &p.company]
        .into_iter()
        .filter(|part| !part.is_empty())
        .cloned()
        .collect();
    if !p.expertise.is_empty() {
        parts.push(format!("expertise: {}", p.expertise.join(", ")));
    }
    let mut personal: Vec<&Fact> = store
        .facts
        .iter()
        .filter(|f| f.category == "personal")
        .collect();
    personal.sort_by(|a, b| a.created.cmp(&b.created).then(a.id.cmp(&b.id)));
    parts.extend(
        personal
            .into_iter()
            .take(PROFILE_FACTS)
            .map(|f| shorten(&f.content, PROFILE_FACT_CHARS)),
    );
    parts
}

/// The project names for the index, most recently active first (ties by name).
pub fn index_projects(store: &Store) -> Vec<String> {
    let mut projects = store.profile.projects.clone();
    projects.sort_by(|a, b| b.last_active.cmp(&a.last_active).then(a.name.cmp(&b.name)));
    projects
        .into_iter()
        .take(INDEX_PROJECTS)
        .map(|p| p.name)
        .collect()
}

/// One line of `text`, at most `max` characters (an ellipsis when cut).
fn shorten(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default().trim();
    if line.chars().count() <= max && !text.trim().contains('\n') {
        return line.to_string();
    }
    let kept: String = line.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", kept.trim_end())
}

impl Store {
    /// Records that the user works on project `name` now: added to `profile.json`, or its
    /// last activity moved to now.
    pub fn note_project(&mut self, name: &str) -> Result<(), MemoryError> {
        let name = name.trim();
        if name.is_empty() {
            return Ok(());
        }
        create_private_dir(&self.dir).map_err(io(&self.dir))?;
        let _lock = super::Lock::acquire(&self.dir)?;
        // Re-read under the lock: another chatcli may have written it since this one opened.
        let mut profile = Store::open(&self.dir)?.profile;
        let now = now_secs();
        match profile.projects.iter_mut().find(|p| p.name == name) {
            Some(project) => project.last_active = now,
            None => profile.projects.push(Project {
                name: name.to_string(),
                last_active: now,
            }),
        }
        let json = serde_json::to_vec_pretty(&profile)
            .map_err(|e| MemoryError::Invalid(format!("profile.json: {e}")))?;
        write_atomic(&self.dir.join("profile.json"), &json)?;
        self.profile = profile;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::NewFact;

    fn fact(store: &mut Store, text: &str, category: &str) {
        store
            .add(NewFact {
                content: text.into(),
                category: category.into(),
                tags: Vec::new(),
                source: "user".into(),
            })
            .expect("add");
    }

    #[test]
    fn personal_facts_make_the_profile_and_project_facts_name_their_project() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(dir.path()).expect("open");
        fact(
            &mut store,
            "I am Ana, a backend engineer at Acme",
            "personal",
        );
        fact(
            &mut store,
            &format!("I prefer {}", "short answers ".repeat(20)),
            "personal",
        );
        store.note_project("payments").expect("note");
        store.note_project("ledger").expect("note");
        store.note_project("payments").expect("note again");
        let summary = profile_summary(&store);
        assert_eq!(summary[0], "I am Ana, a backend engineer at Acme");
        assert!(
            summary[1].ends_with('…') && summary[1].chars().count() <= PROFILE_FACT_CHARS,
            "{summary:?}"
        );
        let reopened = Store::open(dir.path()).expect("reopen");
        let mut names = index_projects(&reopened);
        names.sort();
        assert_eq!(
            names,
            ["ledger", "payments"],
            "kept in profile.json, once each"
        );
    }

    #[test]
    fn a_workspace_is_named_by_its_project_root() {
        let top = tempfile::tempdir().expect("tempdir");
        let repo = top.path().join("shop");
        std::fs::create_dir_all(repo.join(".git")).expect("mkdir");
        std::fs::create_dir_all(repo.join("src/deep")).expect("mkdir");
        assert_eq!(
            project_name(&repo.join("src/deep")).as_deref(),
            Some("shop")
        );
    }
}
