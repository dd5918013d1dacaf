//! `/context` attachments: files the user pins to the session, sent as one stable
//! `attachments` system block after `bootstrap`, so they are cached with the prefix.
//!
//! Items are files, folders (walked honouring `.gitignore`) or globs, relative to the working
//! directory and inside it. Each file is read once, when attached; `refresh` re-reads on the
//! user's word only. That is the invariant a newcomer breaks: re-reading per request would let a
//! file the agent just edited rewrite the cached prefix behind the user's back. Adding is
//! all-or-nothing: a binary file named directly, a path that names nothing, or a total above the
//! token ceiling refuses the whole `add` with the sizes listed.

use std::path::{Path, PathBuf};

use crate::conversation::SystemBlock;

/// Tokens all attachments may add up to (`CHATCLI_CONTEXT_MAX_TOKENS`).
pub const DEFAULT_MAX_TOKENS: u64 = 40_000;

/// Files one folder or glob may bring at most.
const MAX_FILES_PER_ITEM: usize = 500;

/// Why an attachment was refused; the message says what to do.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AttachError {
    /// Nothing exists at that path, or the glob matched no file.
    #[error("{0}: no such file or folder in the working directory (nothing matched)")]
    NotFound(String),
    /// The path leaves the working directory.
    #[error("{0} is outside the working directory: attach files inside it")]
    Outside(String),
    /// A file named directly is binary.
    #[error("{0} is a binary file: only text files can be attached")]
    Binary(String),
    /// A file could not be read.
    #[error("cannot read {path}: {message}")]
    Read { path: String, message: String },
    /// An image mention that cannot be attached: the words say why and what to do.
    #[error("{0}")]
    Image(String),
    /// A glob that does not parse.
    #[error("{pattern} is not a valid glob: {message}")]
    Glob { pattern: String, message: String },
    /// The total would exceed the ceiling.
    #[error(
        "attachments would total {total} tokens, over CHATCLI_CONTEXT_MAX_TOKENS ({max}); nothing was attached. Sizes: {sizes}"
    )]
    TooLarge { total: u64, max: u64, sizes: String },
}

/// One attached file.
#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    /// Relative to the working directory, with `/`.
    pub path: String,
    pub text: String,
    /// o200k tokens of `text`.
    pub tokens: u64,
}

/// The session's attachments, in the order they were attached.
#[derive(Debug, Clone, PartialEq)]
pub struct Attachments {
    items: Vec<Attachment>,
    max_tokens: u64,
}

impl Default for Attachments {
    fn default() -> Self {
        Attachments::new(DEFAULT_MAX_TOKENS)
    }
}

/// What an `add` or `refresh` did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// (path, tokens) of the files attached or re-read.
    pub files: Vec<(String, u64)>,
    /// Files skipped inside folders and globs (binary, unreadable), with why.
    pub skipped: Vec<String>,
}

impl Attachments {
    /// No attachments, with this ceiling in tokens.
    pub fn new(max_tokens: u64) -> Self {
        Attachments {
            items: Vec::new(),
            max_tokens: max_tokens.max(1),
        }
    }

    /// The attached files.
    pub fn items(&self) -> &[Attachment] {
        &self.items
    }

    /// Tokens of all attached files.
    pub fn total_tokens(&self) -> u64 {
        self.items.iter().map(|a| a.tokens).sum()
    }

    /// The ceiling, in tokens.
    pub fn max_tokens(&self) -> u64 {
        self.max_tokens
    }

    /// Attaches files, folders and globs (relative to `cwd`); a file attached before is re-read.
    pub fn add(&mut self, cwd: &Path, specs: &[String]) -> Result<Outcome, AttachError> {
        let root = cwd.canonicalize().map_err(|e| AttachError::Read {
            path: cwd.display().to_string(),
            message: e.to_string(),
        })?;
        let mut outcome = Outcome::default();
        let mut new: Vec<Attachment> = Vec::new();
        for spec in specs {
            for (rel, named) in expand(&root, spec)? {
                match read(&root, &rel) {
                    Ok(item) => {
                        new.retain(|a| a.path != item.path);
                        new.push(item);
                    }
                    Err(AttachError::Binary(path)) if !named => {
                        outcome.skipped.push(format!("{path} (binary)"));
                    }
                    Err(AttachError::Read { path, message }) if !named => {
                        outcome.skipped.push(format!("{path} ({message})"));
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        let mut merged: Vec<Attachment> = self
            .items
            .iter()
            .filter(|a| !new.iter().any(|n| n.path == a.path))
            .cloned()
            .collect();
        merged.extend(new.iter().cloned());
        self.check(&merged)?;
        outcome.files = new.iter().map(|a| (a.path.clone(), a.tokens)).collect();
        // Re-attached files keep their place: the block changes as little as it can.
        let mut items = self.items.clone();
        for item in new {
            match items.iter_mut().find(|a| a.path == item.path) {
                Some(old) => *old = item,
                None => items.push(item),
            }
        }
        self.items = items;
        Ok(outcome)
    }

    fn check(&self, items: &[Attachment]) -> Result<(), AttachError> {
        let total: u64 = items.iter().map(|a| a.tokens).sum();
        if total <= self.max_tokens {
            return Ok(());
        }
        let mut sizes: Vec<&Attachment> = items.iter().collect();
        sizes.sort_by(|a, b| b.tokens.cmp(&a.tokens).then(a.path.cmp(&b.path)));
        let sizes = sizes
            .iter()
            .map(|a| format!("{} {}", a.path, a.tokens))
            .collect::<Vec<_>>()
            .join(", ");
        Err(AttachError::TooLarge {
            total,
            max: self.max_tokens,
            sizes,
        })
    }

    /// Removes `path` (a file, or every file under a folder), or everything for `all`; returns the
    /// paths removed.
    pub fn drop_path(&mut self, path: &str) -> Vec<String> {
        let wanted = path.trim_start_matches("./").trim_end_matches('/');
        let (gone, kept): (Vec<Attachment>, Vec<Attachment>) =
            std::mem::take(&mut self.items).into_iter().partition(|a| {
                wanted == "all"
                    || a.path == wanted
                    || a.path.starts_with(&format!("{wanted}/"))
                    || wanted == "."
            });
        self.items = kept;
        gone.into_iter().map(|a| a.path).collect()
    }

    /// Re-reads every attached file; a file that vanished or turned binary is dropped and named
    /// in `skipped`. All-or-nothing on the token ceiling, like `add`.
    pub fn refresh(&mut self, cwd: &Path) -> Result<Outcome, AttachError> {
        let root = cwd.canonicalize().map_err(|e| AttachError::Read {
            path: cwd.display().to_string(),
            message: e.to_string(),
        })?;
        let mut outcome = Outcome::default();
        let mut items = Vec::with_capacity(self.items.len());
        for item in &self.items {
            match read(&root, Path::new(&item.path)) {
                Ok(fresh) => items.push(fresh),
                Err(e) => outcome.skipped.push(format!("{} dropped: {e}", item.path)),
            }
        }
        self.check(&items)?;
        outcome.files = items.iter().map(|a| (a.path.clone(), a.tokens)).collect();
        self.items = items;
        Ok(outcome)
    }

    /// The `attachments` system block, when anything is attached.
    pub fn system_block(&self) -> Option<SystemBlock> {
        if self.items.is_empty() {
            return None;
        }
        let mut text = String::from(
            "Files the user attached to this session, as they read when attached (they may have changed since):",
        );
        for item in &self.items {
            text.push_str(&format!(
                "\n\n<file path=\"{}\">\n{}\n</file>",
                item.path,
                item.text.trim_end()
            ));
        }
        Some(SystemBlock {
            name: "attachments".into(),
            text,
            stable: true,
        })
    }
}

fn is_glob(spec: &str) -> bool {
    spec.contains(['*', '?', '['])
}

/// The files a spec names, relative to `root`, each with whether it was named directly.
fn expand(root: &Path, spec: &str) -> Result<Vec<(PathBuf, bool)>, AttachError> {
    if is_glob(spec) {
        let matcher = globset::GlobBuilder::new(spec.trim_start_matches("./"))
            .literal_separator(true)
            .build()
            .map_err(|e| AttachError::Glob {
                pattern: spec.to_string(),
                message: e.to_string(),
            })?
            .compile_matcher();
        let files: Vec<(PathBuf, bool)> = walk(root)
            .into_iter()
            .filter(|rel| matcher.is_match(rel))
            .take(MAX_FILES_PER_ITEM)
            .map(|rel| (rel, false))
            .collect();
        if files.is_empty() {
            return Err(AttachError::NotFound(spec.to_string()));
        }
        return Ok(files);
    }
    if Path::new(spec).is_absolute() {
        return Err(AttachError::Outside(spec.to_string()));
    }
    let full = root
        .join(spec)
        .canonicalize()
        .map_err(|_| AttachError::NotFound(spec.to_string()))?;
    let rel = full
        .strip_prefix(root)
        .map_err(|_| AttachError::Outside(spec.to_string()))?
        .to_path_buf();
    if full.is_dir() {
        let files: Vec<(PathBuf, bool)> = walk(&full)
            .into_iter()
            .take(MAX_FILES_PER_ITEM)
            .map(|inner| (rel.join(inner), false))
            .collect();
        if files.is_empty() {
            return Err(AttachError::NotFound(spec.to_string()));
        }
        return Ok(files);
    }
    Ok(vec![(rel, true)])
}

/// Every file under `dir` (relative to it), `.gitignore` honoured, sorted.
fn walk(dir: &Path) -> Vec<PathBuf> {
    ignore::WalkBuilder::new(dir)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| e.path().strip_prefix(dir).ok().map(Path::to_path_buf))
        .collect()
}

/// Bytes of one attached file read at most: far above any ceiling of tokens, so a file this
/// large is refused without being read whole.
const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

fn read(root: &Path, rel: &Path) -> Result<Attachment, AttachError> {
    let path = rel.to_string_lossy().replace('\\', "/");
    // Through the file door: no link in any component (an attachment swapped for a link to
    // outside is refused on refresh), regular files only (a FIFO never blocks), bounded.
    let read =
        crate::files::read_beneath(root, rel, MAX_FILE_BYTES).map_err(|e| AttachError::Read {
            path: path.clone(),
            message: e.to_string(),
        })?;
    if read.truncated() {
        return Err(AttachError::Read {
            path,
            message: format!(
                "{} bytes, more than an attachment may be ({} MiB)",
                read.total,
                MAX_FILE_BYTES / (1024 * 1024)
            ),
        });
    }
    let bytes = read.bytes;
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return Err(AttachError::Binary(path));
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let tokens = crate::tokens::count(&text);
    Ok(Attachment { path, text, tokens })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path();
        std::fs::create_dir_all(p.join("src/deep")).expect("mkdir");
        std::fs::write(p.join(".gitignore"), "target/\n").expect("write");
        std::fs::create_dir(p.join("target")).expect("mkdir");
        std::fs::write(p.join("target/out.rs"), "ignored").expect("write");
        std::fs::write(p.join("src/a.rs"), "fn a() {}\n").expect("write");
        std::fs::write(p.join("src/deep/b.rs"), "fn b() {}\n").expect("write");
        std::fs::write(p.join("src/logo.png"), [0u8, 1, 2]).expect("write");
        std::fs::write(p.join("README.md"), "# readme\n").expect("write");
        dir
    }

    fn paths(a: &Attachments) -> Vec<&str> {
        a.items().iter().map(|i| i.path.as_str()).collect()
    }

    #[test]
    fn folders_and_globs_honour_gitignore_and_skip_binaries() {
        let dir = tree();
        let mut a = Attachments::default();
        let outcome = a.add(dir.path(), &["src".into()]).expect("attached");
        assert_eq!(paths(&a), vec!["src/a.rs", "src/deep/b.rs"]);
        assert_eq!(outcome.skipped, vec!["src/logo.png (binary)".to_string()]);
        let mut g = Attachments::default();
        g.add(dir.path(), &["**/*.rs".into()]).expect("attached");
        assert_eq!(
            paths(&g),
            vec!["src/a.rs", "src/deep/b.rs"],
            "target/ is ignored"
        );
        assert_eq!(
            g.add(dir.path(), &["src/logo.png".into()]),
            Err(AttachError::Binary("src/logo.png".into()))
        );
        assert!(matches!(
            g.add(dir.path(), &["../x".into()]),
            Err(AttachError::NotFound(_) | AttachError::Outside(_))
        ));
    }

    #[test]
    fn over_the_ceiling_nothing_is_attached_and_sizes_are_listed() {
        let dir = tree();
        std::fs::write(dir.path().join("big.txt"), "word ".repeat(400)).expect("write");
        let mut a = Attachments::new(300);
        a.add(dir.path(), &["README.md".into()])
            .expect("small fits");
        let err = a
            .add(dir.path(), &["big.txt".into()])
            .expect_err("too large");
        let text = err.to_string();
        assert!(
            text.contains("over CHATCLI_CONTEXT_MAX_TOKENS (300)"),
            "{text}"
        );
        assert!(text.contains("total 405 tokens"), "{text}");
        assert!(text.contains("Sizes: big.txt 401, README.md 4"), "{text}");
        assert_eq!(paths(&a), vec!["README.md"]);
    }

    #[test]
    fn content_changes_only_on_refresh_and_drop_removes() {
        let dir = tree();
        let mut a = Attachments::default();
        a.add(dir.path(), &["README.md".into(), "src".into()])
            .expect("attached");
        std::fs::write(dir.path().join("README.md"), "# changed\n").expect("write");
        let block = a.system_block().expect("block").text;
        assert!(block.contains("# readme") && !block.contains("# changed"));
        a.refresh(dir.path()).expect("refreshed");
        assert!(a.system_block().expect("block").text.contains("# changed"));
        assert_eq!(a.drop_path("src"), vec!["src/a.rs", "src/deep/b.rs"]);
        assert_eq!(a.drop_path("all"), vec!["README.md"]);
        assert_eq!(a.system_block(), None);
    }
}
