//! The session's scratch directory: where large tool outputs are saved instead of inlined.
//!
//! Two kinds. A user-set `CHATCLI_AGENT_TMPDIR` is the user's: files go straight into it and
//! chatcli never deletes it. Otherwise it is `CHATCLI_HOME/sessions/<session id>/scratch/`, kept
//! with the session so a resumed session (and the user, after exit) can still open what the
//! history points to; whole sessions older than the retention period are pruned at start.
//! Directories chatcli creates are 0700; files are 0600, created exclusively (`O_EXCL`, which
//! never follows a planted symlink) under names that cannot collide. Known secrets are masked in
//! everything saved here (web pages, microcompact originals), whoever asks to save it.

use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::private_fs::{create_exclusive, create_private_dir, create_private_dirs};
use crate::secrets::{ByteMasker, Secrets};

/// Where a session saves files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scratch {
    dir: PathBuf,
    /// True for `CHATCLI_AGENT_TMPDIR`: the directory belongs to the user.
    user_owned: bool,
    /// Values masked in every file saved.
    secrets: Secrets,
    /// The time in saved files' names, and their sequence numbers.
    names: Names,
}

/// What makes a saved file's name: a clock (the wall clock unless the session runs on a virtual
/// one, as the benchmark does) and a counter shared by the clones of one scratch directory.
#[derive(Clone)]
struct Names {
    clock: Arc<dyn Fn() -> SystemTime + Send + Sync>,
    sequence: Arc<AtomicU64>,
}

impl Default for Names {
    fn default() -> Self {
        Names {
            clock: Arc::new(SystemTime::now),
            sequence: Arc::new(AtomicU64::new(0)),
        }
    }
}

impl std::fmt::Debug for Names {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Names")
    }
}

/// Two scratch directories are the same place whatever their clocks say.
impl PartialEq for Names {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Names {}

impl Scratch {
    /// A scratch directory chatcli creates (0700) and owns.
    pub fn private(dir: PathBuf) -> Self {
        Scratch {
            dir,
            user_owned: false,
            secrets: Secrets::default(),
            names: Names::default(),
        }
    }

    /// The user's own directory (`CHATCLI_AGENT_TMPDIR`): used as it is, never deleted.
    pub fn user(dir: PathBuf) -> Self {
        Scratch {
            dir,
            user_owned: true,
            secrets: Secrets::default(),
            names: Names::default(),
        }
    }

    /// The same directory, masking these secrets in every file saved.
    pub fn with_secrets(mut self, secrets: Secrets) -> Self {
        self.secrets = secrets;
        self
    }

    /// The same directory, naming saved files by this clock's time (a virtual clock makes the
    /// names, and so the requests that mention them, the same on every run).
    pub fn with_clock(mut self, clock: Arc<dyn Fn() -> SystemTime + Send + Sync>) -> Self {
        self.names.clock = clock;
        self
    }

    /// The directory (it may not exist until the first file is saved).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether the directory is the user's.
    pub fn user_owned(&self) -> bool {
        self.user_owned
    }

    /// Saves `content` in a new file named `<prefix>_<millis>[_<n>].<ext>`; returns its path.
    pub fn save(&self, prefix: &str, ext: &str, content: &[u8]) -> std::io::Result<PathBuf> {
        let content = &self.secrets.mask_bytes(content);
        let (path, mut file) = self.create(prefix, ext)?;
        file.write_all(content)?;
        file.sync_data()?;
        Ok(path)
    }

    /// A new file named like `save`'s, written piece by piece (`ScratchFile::write`): a
    /// command's output or a page too large to hold, saved as it arrives.
    pub fn stream(&self, prefix: &str, ext: &str) -> std::io::Result<ScratchFile> {
        let (path, file) = self.create(prefix, ext)?;
        Ok(ScratchFile {
            path,
            file,
            masker: ByteMasker::new(self.secrets.clone()),
            written: 0,
        })
    }

    /// The directory made if missing, and a new file in it under a name that cannot collide.
    fn create(&self, prefix: &str, ext: &str) -> std::io::Result<(PathBuf, crate::files::File)> {
        if self.user_owned {
            // Created 0700 if missing; an existing directory of the user's is left as it is.
            create_private_dirs(&self.dir)?;
        } else {
            create_private_dir(&self.dir)?;
        }
        let millis = (self.names.clock)()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis();
        loop {
            let n = self.names.sequence.fetch_add(1, Ordering::Relaxed);
            let name = if n == 0 {
                format!("{prefix}_{millis}.{ext}")
            } else {
                format!("{prefix}_{millis}_{n}.{ext}")
            };
            let path = self.dir.join(name);
            match create_exclusive(&path) {
                Ok(file) => return Ok((path, file)),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Saves under a fixed name chatcli derives (the same content always lands in the same file);
    /// an existing file of that name is left as it is.
    pub fn save_fixed(&self, name: &str, content: &[u8]) -> std::io::Result<PathBuf> {
        let content = &self.secrets.mask_bytes(content);
        if self.user_owned {
            // Created 0700 if missing; an existing directory of the user's is left as it is.
            create_private_dirs(&self.dir)?;
        } else {
            create_private_dir(&self.dir)?;
        }
        let path = self.dir.join(name);
        match create_exclusive(&path) {
            Ok(mut file) => {
                file.write_all(content)?;
                file.sync_data()?;
                Ok(path)
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists && path.is_file() => Ok(path),
            Err(e) => Err(e),
        }
    }

    /// Saves under a name the model chose: only its last component is used, made safe.
    pub fn save_named(&self, name: &str, content: &[u8]) -> std::io::Result<PathBuf> {
        let base: String = Path::new(name)
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default()
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || matches!(c, '.' | '-' | '_') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let base = base.trim_start_matches('.');
        let (stem, ext) = match base.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() && !ext.is_empty() => {
                (stem.to_string(), ext.to_string())
            }
            _ if base.is_empty() => ("saved".to_string(), "txt".to_string()),
            _ => (base.to_string(), "txt".to_string()),
        };
        self.save(&stem, &ext, content)
    }
}

/// A scratch file being written as its content arrives; secrets are masked across the pieces.
/// Blocking writes: call it off the async runtime (`spawn_blocking`).
#[derive(Debug)]
pub struct ScratchFile {
    path: PathBuf,
    file: crate::files::File,
    masker: ByteMasker,
    /// Bytes given to `write` so far (before masking).
    written: u64,
}

impl ScratchFile {
    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes given to `write` so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Appends `bytes`.
    pub fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.written += bytes.len() as u64;
        let masked = self.masker.push(bytes);
        self.file.write_all(&masked)
    }

    /// Writes what the masker held back and closes the file; returns its path.
    pub fn finish(mut self) -> std::io::Result<PathBuf> {
        let rest = self.masker.finish();
        self.file.write_all(&rest)?;
        self.file.flush()?;
        Ok(self.path)
    }
}

/// Deletes session logs and session directories under `sessions` older than `days`.
/// Returns how many were removed. Only names chatcli gives its sessions are touched.
pub fn prune_sessions(sessions: &Path, days: u64) -> usize {
    let Ok(entries) = crate::files::list_dir(sessions) else {
        return 0;
    };
    // A cut-off before the epoch (a huge `days`) means nothing is old enough.
    let Some(cutoff) =
        SystemTime::now().checked_sub(Duration::from_secs(days.saturating_mul(86_400)))
    else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries {
        let name = entry.file_name().to_string_lossy().to_string();
        let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
        if !looks_like_session_id(stem) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        let old = meta.modified().map(|m| m < cutoff).unwrap_or(false);
        if !old {
            continue;
        }
        let path = entry.path();
        let result = if meta.is_dir() {
            crate::files::remove_tree(&path)
        } else {
            crate::files::remove_file(&path)
        };
        if result.is_ok() {
            removed += 1;
        }
    }
    removed
}

/// `YYYYMMDD-HHMMSS-xxxxxx`, as `session::new_session_id` makes them.
fn looks_like_session_id(name: &str) -> bool {
    let digits = |part: &str, n: usize| part.len() == n && part.bytes().all(|b| b.is_ascii_digit());
    let mut parts = name.split('-');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(date), Some(time), Some(suffix), None) => {
            digits(date, 8)
                && digits(time, 6)
                && suffix.len() == 6
                && suffix.bytes().all(|b| b.is_ascii_hexdigit())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saves_private_files_with_unique_names() {
        let dir = tempfile::tempdir().expect("tempdir");
        let scratch = Scratch::private(dir.path().join("s").join("scratch"));
        let a = scratch.save("webfetch", "txt", b"one").expect("save");
        let b = scratch.save("webfetch", "txt", b"two").expect("save");
        assert_ne!(a, b);
        assert_eq!(std::fs::read(&a).expect("read"), b"one");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(&a).expect("meta").permissions().mode() & 0o777,
                0o600
            );
            assert_eq!(
                std::fs::metadata(scratch.dir())
                    .expect("meta")
                    .permissions()
                    .mode()
                    & 0o777,
                0o700
            );
        }
    }

    #[test]
    fn model_chosen_names_are_reduced_to_a_safe_basename() {
        let dir = tempfile::tempdir().expect("tempdir");
        let scratch = Scratch::private(dir.path().to_path_buf());
        let path = scratch.save_named("../../etc/passwd", b"x").expect("save");
        assert_eq!(path.parent(), Some(dir.path()));
        assert!(
            path.file_name()
                .map(|n| n.to_string_lossy().starts_with("passwd_"))
                .unwrap_or(false)
        );
    }

    #[test]
    fn pruning_touches_only_old_session_entries() {
        let dir = tempfile::tempdir().expect("tempdir");
        let old = dir.path().join("20200101-000000-abcdef");
        std::fs::create_dir(&old).expect("mkdir");
        std::fs::write(dir.path().join("20200101-000000-abcdef.jsonl"), "").expect("write");
        std::fs::write(dir.path().join("notes.txt"), "").expect("write");
        let a_year_ago = SystemTime::now() - Duration::from_secs(400 * 86_400);
        for p in [
            old.clone(),
            dir.path().join("20200101-000000-abcdef.jsonl"),
            dir.path().join("notes.txt"),
        ] {
            let f = std::fs::File::options()
                .read(true)
                .open(&p)
                .or_else(|_| std::fs::File::open(&p))
                .expect("open");
            f.set_modified(a_year_ago).expect("mtime");
        }
        assert_eq!(prune_sessions(dir.path(), 30), 2);
        assert!(dir.path().join("notes.txt").exists());
        assert_eq!(prune_sessions(dir.path(), 30), 0);
    }

    #[test]
    fn a_streamed_file_holds_every_piece_with_secrets_masked_across_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let scratch = Scratch::private(dir.path().join("s"))
            .with_secrets(crate::secrets::Secrets::of(&["hunter2-hunter2"]));
        let mut file = scratch.stream("command_stdout", "txt").expect("created");
        for piece in [&b"pass=hunter2-"[..], b"hunter2 and more", b" bytes"] {
            file.write(piece).expect("written");
        }
        assert_eq!(file.written(), 35);
        let path = file.finish().expect("finished");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "pass=hun\u{2026}ter2 and more bytes"
        );
        assert!(path.starts_with(dir.path().join("s")));
    }
}
