//! The file door: reads, writes and deletes of workspace, home and scratch paths that must not
//! be steered by what is on disk. With `private_fs` (files chatcli creates for itself, 0600 and
//! 0700 whatever the umask) it is the only place that opens files by path.
//!
//! One policy for every caller — `/rewind`, `@` mentions, bootstrap files, `/context` add and
//! refresh, `--context`:
//! - a path is resolved beneath its root, one component at a time, and **never through a
//!   symbolic link in any component** (an intermediate folder swapped for a link to `~/.ssh` is
//!   refused, not followed);
//! - only **regular files** are read or written (a FIFO would block, a device never ends), and the
//!   open never blocks and never takes a terminal;
//! - reads are **bounded before they happen**: at most `cap` bytes are read, and the caller learns
//!   the file's full size.
//!
//! A leaf: it imports nothing of ours. What a newcomer gets wrong: `Path::exists`,
//! `canonicalize` and `std::fs::read` all follow links; checking first and opening after is a
//! race. Open through here and check the handle.

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::Dir;

/// What a bounded read returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounded {
    /// The first bytes of the file, at most the cap.
    pub bytes: Vec<u8>,
    /// The file's size when it was opened.
    pub total: u64,
}

impl Bounded {
    /// Whether the file had more than was read.
    pub fn truncated(&self) -> bool {
        self.total > self.bytes.len() as u64
    }
}

fn invalid(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, message)
}

/// `rel` as plain names: no root, no `..`, no `.` (a path that would climb is refused).
fn names(rel: &Path) -> std::io::Result<Vec<&std::ffi::OsStr>> {
    let mut out = Vec::new();
    for component in rel.components() {
        match component {
            Component::Normal(name) => out.push(name),
            Component::CurDir => {}
            _ => {
                return Err(invalid(format!(
                    "{} must be a path below its folder, without `..` or a leading `/`",
                    rel.display()
                )));
            }
        }
    }
    if out.is_empty() {
        return Err(invalid("the path is empty".into()));
    }
    Ok(out)
}

/// The folder holding `rel` below `root`, opened without following a link in any component,
/// and the last name.
fn parent_beneath<'a>(root: &Path, rel: &'a Path) -> std::io::Result<(Dir, &'a std::ffi::OsStr)> {
    let parts = names(rel)?;
    let mut dir = Dir::open_ambient_dir(root, cap_std::ambient_authority())?;
    let Some((last, folders)) = parts.split_last() else {
        return Err(invalid("the path is empty".into()));
    };
    for name in folders {
        dir = dir.open_dir_nofollow(name)?;
    }
    Ok((dir, last))
}

fn refuse_non_regular(meta: &cap_std::fs::Metadata, shown: &Path) -> std::io::Result<()> {
    if meta.is_file() {
        return Ok(());
    }
    let what = if meta.is_dir() {
        "a directory"
    } else if meta.file_type().is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file (a FIFO, a device or a socket)"
    };
    Err(invalid(format!(
        "{} is {what}; only regular files are read or written",
        shown.display()
    )))
}

fn read_options() -> cap_std::fs::OpenOptions {
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true).follow(FollowSymlinks::No);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    options
}

/// Reads at most `cap` bytes of the regular file `rel` below `root`, through no link.
pub fn read_beneath(root: &Path, rel: &Path, cap: u64) -> std::io::Result<Bounded> {
    let (dir, name) = parent_beneath(root, rel)?;
    let file = dir
        .open_with(name, &read_options())
        .map_err(|e| link_error(e, rel))?;
    let meta = file.metadata()?;
    refuse_non_regular(&meta, rel)?;
    let mut bytes = Vec::new();
    file.into_std().take(cap).read_to_end(&mut bytes)?;
    Ok(Bounded {
        bytes,
        total: meta.len(),
    })
}

/// Reads at most `cap` bytes of the regular file at `path` (absolute or relative to the
/// current folder), never through a link in its last component, never blocking on a FIFO.
/// For paths the user named outside any root (`--context /etc/hosts`).
pub fn read_bounded(path: &Path, cap: u64) -> std::io::Result<Bounded> {
    let (parent, name) = match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => (
            if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            },
            name,
        ),
        _ => return Err(invalid(format!("{} names no file", path.display()))),
    };
    read_beneath(parent, Path::new(name), cap)
}

/// Reads at most `cap` bytes of the regular file `path`, following links only while they stay
/// inside `root` (`AGENTS.md -> CLAUDE.md` is read; a link to `~/.ssh` is refused): the path's
/// resolved form must lie beneath `root`, and that form is then opened through no link, so a
/// swap after the check is refused too. For files the user names by path (`/context`, bootstrap
/// files), where a link inside the project is a habit.
pub fn read_within(root: &Path, path: &Path, cap: u64) -> std::io::Result<Bounded> {
    let root = root.canonicalize()?;
    let full = root.join(path).canonicalize()?;
    let rel = full.strip_prefix(&root).map_err(|_| {
        invalid(format!(
            "{} leads outside {} (through a link or `..`)",
            path.display(),
            root.display()
        ))
    })?;
    read_beneath(&root, rel, cap)
}

/// Whether `rel` below `root` is a regular file reached through no link.
pub fn is_regular_beneath(root: &Path, rel: &Path) -> bool {
    let Ok((dir, name)) = parent_beneath(root, rel) else {
        return false;
    };
    dir.symlink_metadata(name).is_ok_and(|m| m.is_file())
}

/// Replaces the regular file `rel` below `root` with `bytes` (or creates it), through no link:
/// a link at the path or in a folder above it is refused, never followed. A new file gets
/// `mode` (0600 for chatcli's own files; the umask may take bits away from others); an existing
/// one keeps its mode.
pub fn write_beneath(root: &Path, rel: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let (dir, name) = parent_beneath(root, rel)?;
    match dir.symlink_metadata(name) {
        Ok(meta) => refuse_non_regular(&meta, rel)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut options = cap_std::fs::OpenOptions::new();
    options.write(true).create(true).follow(FollowSymlinks::No);
    #[cfg(not(unix))]
    let _ = mode;
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        options
            .mode(mode)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = dir
        .open_with(name, &options)
        .map_err(|e| link_error(e, rel))?;
    refuse_non_regular(&file.metadata()?, rel)?;
    let mut file = file.into_std();
    file.set_len(0)?;
    file.write_all(bytes)
}

/// Removes the regular file `rel` below `root`; a link there (or above) is refused. A file that
/// is already gone is not an error.
pub fn remove_beneath(root: &Path, rel: &Path) -> std::io::Result<()> {
    let (dir, name) = parent_beneath(root, rel)?;
    match dir.symlink_metadata(name) {
        Ok(meta) => refuse_non_regular(&meta, rel)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    }
    dir.remove_file(name)
}

/// `path` relative to `root` when it lies below it (compared as written, links not followed).
pub fn relative_to(root: &Path, path: &Path) -> Option<PathBuf> {
    path.strip_prefix(root).ok().map(Path::to_path_buf)
}

/// An I/O error that says a link was refused, when that is what it was.
fn link_error(e: std::io::Error, shown: &Path) -> std::io::Error {
    #[cfg(unix)]
    if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::EMLINK)) {
        return invalid(format!(
            "{} is a symbolic link (or passes through one); links are not followed",
            shown.display()
        ));
    }
    let _ = shown;
    e
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn reads_are_bounded_and_say_the_full_size() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("big.txt"), "x".repeat(10_000)).expect("write");
        let read = read_beneath(dir.path(), Path::new("big.txt"), 100).expect("read");
        assert_eq!(read.bytes.len(), 100);
        assert_eq!(read.total, 10_000);
        assert!(read.truncated());
    }

    #[test]
    fn no_component_may_be_a_link() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("secret"), "s").expect("write");
        std::os::unix::fs::symlink(outside.path(), dir.path().join("sub")).expect("symlink");
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("file"))
            .expect("symlink");
        assert!(read_beneath(dir.path(), Path::new("sub/secret"), 10).is_err());
        assert!(read_beneath(dir.path(), Path::new("file"), 10).is_err());
        assert!(write_beneath(dir.path(), Path::new("sub/secret"), b"evil", 0o600).is_err());
        assert!(write_beneath(dir.path(), Path::new("file"), b"evil", 0o600).is_err());
        assert!(remove_beneath(dir.path(), Path::new("sub/secret")).is_err());
        assert!(read_beneath(dir.path(), Path::new("../x"), 10).is_err());
        assert_eq!(
            std::fs::read_to_string(outside.path().join("secret")).expect("read"),
            "s"
        );
    }

    #[test]
    fn links_that_stay_inside_may_be_read_within_their_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("CLAUDE.md"), "rules").expect("write");
        std::fs::write(outside.path().join("secret"), "s").expect("write");
        std::os::unix::fs::symlink("CLAUDE.md", dir.path().join("AGENTS.md")).expect("symlink");
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("x"))
            .expect("symlink");
        let read = read_within(dir.path(), Path::new("AGENTS.md"), 100).expect("read");
        assert_eq!(read.bytes, b"rules");
        let err = read_within(dir.path(), Path::new("x"), 100).unwrap_err();
        assert!(err.to_string().contains("leads outside"), "{err}");
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).expect("cstring");
        // SAFETY: mkfifo reads a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = read_bounded(&fifo, 10).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }

    #[test]
    fn written_files_are_private_and_replaced_in_place() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("a")).expect("mkdir");
        write_beneath(dir.path(), Path::new("a/f"), b"one", 0o600).expect("write");
        write_beneath(dir.path(), Path::new("a/f"), b"2", 0o600).expect("write");
        let path = dir.path().join("a/f");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "2");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        remove_beneath(dir.path(), Path::new("a/f")).expect("remove");
        assert!(!path.exists());
        remove_beneath(dir.path(), Path::new("a/f")).expect("gone is fine");
    }
}
