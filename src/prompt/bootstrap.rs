//! Bootstrap files: the user's standing instructions (`AGENTS.md`, `SOUL.md`, `USER.md`,
//! `IDENTITY.md`, `RULES.md`), gathered into one stable `bootstrap` system block.
//!
//! Each name is looked for at the project root first (the first folder upwards from the working
//! directory holding `.git` or `.agent`, else the working directory), then in `CHATCLI_HOME`; the
//! project file wins. Names are exact and case-sensitive, the order is fixed, each file is capped
//! at `max_chars` characters with a visible marker. The block sits in the cached prefix, so its
//! bytes only change when a file does: `refresh` compares each candidate's modification time and
//! length with what it saw last and re-reads only then. What a newcomer gets wrong: the project
//! root only decides where these files are looked for; tools stay confined to the working
//! directory.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::conversation::SystemBlock;

/// The bootstrap file names, in the order they enter the block.
pub const FILES: [&str; 5] = ["AGENTS.md", "SOUL.md", "USER.md", "IDENTITY.md", "RULES.md"];

/// Characters of one file the block keeps (`CHATCLI_BOOTSTRAP_MAX_CHARS`).
pub const DEFAULT_MAX_CHARS: usize = 20_000;

/// Where a loaded file came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The project root.
    Project,
    /// `CHATCLI_HOME`, the user's global copy.
    Global,
}

impl Source {
    /// `project` or `global`.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Project => "project",
            Source::Global => "global",
        }
    }
}

/// One bootstrap file as the block carries it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedFile {
    pub name: &'static str,
    pub path: PathBuf,
    pub source: Source,
    /// Characters of the file on disk.
    pub chars: usize,
    /// The text as sent: capped, with the truncation marker when cut.
    pub text: String,
}

/// What `refresh` compares: each candidate's (modification time, length), `None` when absent.
type Stamp = Vec<Option<(SystemTime, u64)>>;

/// The session's bootstrap files and the block made of them.
#[derive(Debug, Clone, Default)]
pub struct Bootstrap {
    root: PathBuf,
    home: Option<PathBuf>,
    max_chars: usize,
    stamp: Option<Stamp>,
    files: Vec<LoadedFile>,
    block: Option<String>,
}

impl Bootstrap {
    /// Bootstrap files of the project at `root`, with `home` (`CHATCLI_HOME`) as the fallback.
    pub fn new(root: PathBuf, home: Option<PathBuf>, max_chars: usize) -> Self {
        // A home that is the project root itself would list every file twice.
        let home = home.filter(|h| h != &root);
        Bootstrap {
            root,
            home,
            max_chars: max_chars.max(1),
            ..Bootstrap::default()
        }
    }

    /// The same settings with nothing loaded yet (the next `refresh` reads everything).
    pub fn unloaded(&self) -> Self {
        Bootstrap::new(self.root.clone(), self.home.clone(), self.max_chars)
    }

    fn candidates(&self, name: &str) -> Vec<(PathBuf, Source)> {
        let mut paths = vec![(self.root.join(name), Source::Project)];
        if let Some(home) = &self.home {
            paths.push((home.join(name), Source::Global));
        }
        paths
    }

    fn current_stamp(&self) -> Stamp {
        FILES
            .iter()
            .flat_map(|name| self.candidates(name))
            .map(|(path, _)| {
                crate::files::metadata(&path)
                    .ok()
                    .filter(|m| m.is_file())
                    .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()))
            })
            .collect()
    }

    /// Re-reads the files when one appeared, vanished or changed (time or length) since the last
    /// check; returns whether the block changed.
    pub fn refresh(&mut self) -> bool {
        let stamp = self.current_stamp();
        if self.stamp.as_ref() == Some(&stamp) {
            return false;
        }
        self.stamp = Some(stamp);
        let files: Vec<LoadedFile> = FILES
            .iter()
            .filter_map(|name| {
                self.candidates(name)
                    .into_iter()
                    .find_map(|(path, source)| self.load(name, path, source))
            })
            .collect();
        let block = render(&files);
        let changed = block != self.block;
        self.files = files;
        self.block = block;
        changed
    }

    fn load(&self, name: &'static str, path: PathBuf, source: Source) -> Option<LoadedFile> {
        if !exact_name_exists(&path) {
            return None;
        }
        // Bounded before it is read: 4 bytes a character at most, and a little over so the
        // truncation note still counts what was cut.
        let cap = (self.max_chars as u64)
            .saturating_mul(4)
            .saturating_add(4096);
        let folder = path.parent().unwrap_or(Path::new("."));
        let read = crate::files::read_within(folder, &path, cap)
            .inspect_err(|e| tracing::warn!(path = %path.display(), error = %e, "cannot read a bootstrap file"))
            .ok()?;
        let text = String::from_utf8_lossy(&read.bytes);
        let text = text.trim();
        let chars = text.chars().count();
        let (kept, cut) = crate::tools::take_chars(text, self.max_chars);
        let mut text = kept.trim_end().to_string();
        if cut {
            // Said first, as every cut is (`tools::cut`): the model reads the file from the top.
            let count = crate::tools::cut::count;
            text = crate::tools::cut::Cut::showing(format!(
                "the first {} characters of {name}",
                count(self.max_chars as u64)
            ))
            .of(format!("{} bytes", count(read.total)))
            .read_on("CHATCLI_BOOTSTRAP_MAX_CHARS raises the cap; read_file reads the rest")
            .above(&text);
        }
        (!text.is_empty()).then_some(LoadedFile {
            name,
            path,
            source,
            chars,
            text,
        })
    }

    /// The loaded files, in block order.
    pub fn files(&self) -> &[LoadedFile] {
        &self.files
    }

    /// The `bootstrap` system block, when any file was found.
    pub fn system_block(&self) -> Option<SystemBlock> {
        self.block.as_ref().map(|text| SystemBlock {
            name: "bootstrap".into(),
            text: text.clone(),
            stable: true,
        })
    }
}

/// Whether `path` exists with exactly this file name (case-insensitive file systems would
/// otherwise take `agents.md` for `AGENTS.md`).
fn exact_name_exists(path: &Path) -> bool {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return false;
    };
    crate::files::list_dir(dir)
        .map(|entries| entries.iter().any(|e| e.file_name() == name))
        .unwrap_or(false)
        && path.is_file()
}

fn render(files: &[LoadedFile]) -> Option<String> {
    if files.is_empty() {
        return None;
    }
    let mut text = String::from(
        "The user's standing instructions (bootstrap files); follow them unless the user says otherwise.",
    );
    for file in files {
        text.push_str(&format!(
            "\n\n# {} ({})\n{}",
            file.name,
            file.source.as_str(),
            file.text
        ));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_file_wins_and_the_order_is_fixed() {
        let project = tempfile::tempdir().expect("tempdir");
        let home = tempfile::tempdir().expect("tempdir");
        std::fs::write(project.path().join("RULES.md"), "project rules").expect("write");
        std::fs::write(home.path().join("RULES.md"), "global rules").expect("write");
        std::fs::write(home.path().join("AGENTS.md"), "global agents").expect("write");
        std::fs::write(project.path().join("agents.md"), "wrong case").expect("write");
        let mut boot = Bootstrap::new(
            project.path().to_path_buf(),
            Some(home.path().to_path_buf()),
            DEFAULT_MAX_CHARS,
        );
        assert!(boot.refresh());
        let block = boot.system_block().expect("a block").text;
        assert!(
            block.contains("# AGENTS.md (global)\nglobal agents"),
            "{block}"
        );
        assert!(
            block.contains("# RULES.md (project)\nproject rules"),
            "{block}"
        );
        assert!(!block.contains("global rules") && !block.contains("wrong case"));
        assert!(block.find("AGENTS.md").expect("agents") < block.find("RULES.md").expect("rules"));
        assert!(!boot.refresh(), "nothing changed on disk");
    }

    #[test]
    fn a_long_file_is_cut_with_a_marker() {
        let project = tempfile::tempdir().expect("tempdir");
        std::fs::write(project.path().join("SOUL.md"), "x".repeat(50)).expect("write");
        let mut boot = Bootstrap::new(project.path().to_path_buf(), None, 10);
        boot.refresh();
        let block = boot.system_block().expect("a block").text;
        assert!(
            block.contains(&format!(
                "[cut: shown the first 10 characters of SOUL.md of 50 bytes; \
                 CHATCLI_BOOTSTRAP_MAX_CHARS raises the cap; read_file reads the rest]\n{}",
                "x".repeat(10)
            )),
            "{block}"
        );
        assert_eq!(boot.files()[0].chars, 50);
    }
}
