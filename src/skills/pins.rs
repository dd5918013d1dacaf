//! Pinned skills, kept per workspace in `CHATCLI_HOME/skill_pins.json` (project root → sorted
//! names), so a pin outlives the session that made it.
//!
//! The file is small and rewritten whole through a temporary file and a rename, so a crash never
//! leaves half a file; an unreadable file counts as no pins (and says so in the log) rather than
//! stopping the session.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::SkillError;

/// The pins of one workspace, and where they persist.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pins {
    /// `None` keeps them in memory only (no `CHATCLI_HOME`).
    file: Option<PathBuf>,
    key: String,
    names: Vec<String>,
}

impl Pins {
    /// The pins of the workspace whose project root is `root`, read from `home`.
    pub fn load(home: Option<&Path>, root: &Path) -> Pins {
        let key = root.display().to_string();
        let file = home.map(|h| h.join("skill_pins.json"));
        let names = file
            .as_deref()
            .map(read_all)
            .and_then(|mut all| all.remove(&key))
            .unwrap_or_default();
        Pins { file, key, names }
    }

    /// The pinned names, sorted.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Pins `name`; `Ok(false)` when it already was.
    pub fn pin(&mut self, name: &str) -> Result<bool, SkillError> {
        if self.names.iter().any(|n| n == name) {
            return Ok(false);
        }
        self.names.push(name.to_string());
        self.names.sort();
        self.save().map(|_| true)
    }

    /// Unpins `name`; `Ok(false)` when it was not pinned.
    pub fn unpin(&mut self, name: &str) -> Result<bool, SkillError> {
        let before = self.names.len();
        self.names.retain(|n| n != name);
        if before == self.names.len() {
            return Ok(false);
        }
        self.save().map(|_| true)
    }

    fn save(&self) -> Result<(), SkillError> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let mut all = read_all(file);
        if self.names.is_empty() {
            all.remove(&self.key);
        } else {
            all.insert(self.key.clone(), self.names.clone());
        }
        let text = serde_json::to_string_pretty(&all).unwrap_or_default();
        crate::private_fs::replace_private(file, text.as_bytes()).map_err(|e| {
            SkillError::PinNotSaved {
                path: file.display().to_string(),
                message: e.to_string(),
            }
        })
    }
}

/// Bytes of the pins file read at most (a hand-edited giant is cut, not loaded whole).
const MAX_STATE_BYTES: u64 = 4 * 1024 * 1024;

fn read_all(file: &Path) -> BTreeMap<String, Vec<String>> {
    let Ok(text) = crate::files::read_bounded(file, MAX_STATE_BYTES)
        .map(|r| String::from_utf8_lossy(&r.bytes).to_string())
    else {
        return BTreeMap::new();
    };
    serde_json::from_str(&text).unwrap_or_else(|e| {
        tracing::warn!(file = %file.display(), error = %e, "skill pins unreadable: none loaded");
        BTreeMap::new()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_persist_per_workspace() {
        let home = tempfile::tempdir().expect("tempdir");
        let mut a = Pins::load(Some(home.path()), Path::new("/p/a"));
        assert_eq!(a.pin("z"), Ok(true));
        assert_eq!(a.pin("m"), Ok(true));
        assert_eq!(a.pin("m"), Ok(false));
        assert_eq!(
            Pins::load(Some(home.path()), Path::new("/p/a")).names(),
            ["m", "z"]
        );
        assert!(
            Pins::load(Some(home.path()), Path::new("/p/b"))
                .names()
                .is_empty()
        );
        assert_eq!(a.unpin("z"), Ok(true));
        assert_eq!(a.unpin("z"), Ok(false));
        assert_eq!(
            Pins::load(Some(home.path()), Path::new("/p/a")).names(),
            ["m"]
        );
    }
}
