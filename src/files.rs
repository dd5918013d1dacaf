//! The file door: reads, writes and deletes of workspace, home and scratch paths that must not
//! be steered by what is on disk. With `private_fs` (files chatcli creates for itself, 0600 and
//! 0700 whatever the umask) it is the only place that opens files by path.
//!
//! One policy for every caller — `/rewind`, `@` mentions, bootstrap files, `/context` add and
//! refresh, `--context`, the file tools' workspace handle, session logs, the prompt history,
//! settings, skills and agents:
//! - a path is resolved beneath its root, one component at a time, and **never through a
//!   symbolic link in any component** (an intermediate folder swapped for a link to `~/.ssh` is
//!   refused, not followed); the user's own settings (`read_following`) are the one exception,
//!   because a dotfiles manager links them into place;
//! - only **regular files** are read or written (a FIFO would block, a device never ends), and the
//!   open never blocks and never takes a terminal;
//! - reads are **bounded before they happen**: at most `cap` bytes are read, and the caller learns
//!   the file's full size; a file too large to hold (a session log) is opened for a streamed read
//!   (`open_regular`) instead.
//!
//! Listing a folder, a file's size and time, and removing chatcli's own files go through here
//! too, so that `std::fs` appears nowhere else.
//!
//! A leaf: it imports nothing of ours. What a newcomer gets wrong: `Path::exists`,
//! `canonicalize` and `std::fs::read` all follow links; checking first and opening after is a
//! race. Open through here and check the handle.

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};

/// A folder handle: what is opened through it cannot resolve outside it.
pub use cap_std::fs::Dir;
/// The type of a file opened through a `Dir` (`describe` names it).
pub use cap_std::fs::FileType;
/// How a file is opened through a `Dir` (`open_options` makes them safe).
pub use cap_std::fs::OpenOptions;
/// A folder entry (`list_dir`), an open file and its metadata, as the door hands them out.
pub use std::fs::{DirEntry, File, Metadata};

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

    /// The whole file as UTF-8 text; an error when the cap cut it or it is not UTF-8.
    pub fn into_text(self) -> std::io::Result<String> {
        if self.truncated() {
            return Err(invalid(format!(
                "the file is {} bytes, more than the {} chatcli reads of it",
                self.total,
                self.bytes.len()
            )));
        }
        String::from_utf8(self.bytes).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            )
        })
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

fn read_options() -> OpenOptions {
    let mut options = open_options(false);
    options.read(true);
    options
}

/// A handle on the folder `root`, for opening paths that must stay below it (the file tools):
/// the kernel resolves each path relative to it and refuses to leave it.
pub fn open_dir(root: &Path) -> std::io::Result<Dir> {
    Dir::open_ambient_dir(root, cap_std::ambient_authority())
}

/// Options for opening through a `Dir` that never block on a FIFO or take a terminal and,
/// unless `follow_last_link`, never follow a link in the last component (the caller adds
/// read, write, create).
pub fn open_options(follow_last_link: bool) -> OpenOptions {
    let mut options = OpenOptions::new();
    options.follow(if follow_last_link {
        FollowSymlinks::Yes
    } else {
        FollowSymlinks::No
    });
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    options
}

/// What a file of this type is, in words (`a FIFO (named pipe)`, `a directory`, …), for a
/// refusal that names it.
pub fn describe(file_type: FileType) -> &'static str {
    if file_type.is_file() {
        return "a regular file";
    }
    if file_type.is_dir() {
        return "a directory";
    }
    if file_type.is_symlink() {
        return "a symbolic link";
    }
    #[cfg(unix)]
    {
        use cap_std::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return "a device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// Opens the regular file at `path` for a streamed read (a session log, the prompt history:
/// files too large to cap), never through a link in its last component, never blocking on a
/// FIFO or taking a terminal; anything but a regular file is refused.
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    open_checked(path, false)
}

/// Opens the regular file at `path` for a streamed read, following links: a file the user named
/// to import (`chatcli memory import FILE`). A FIFO or a device is refused without blocking.
pub fn open_following(path: &Path) -> std::io::Result<File> {
    open_checked(path, true)
}

/// Renames `from` to `to` (same folder or file system); a link at either is renamed or replaced
/// itself, never followed.
pub fn rename(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::rename(from, to)
}

/// Reads at most `cap` bytes of the regular file at `path`, following links: for the user's own
/// settings, skills and agents, which a dotfiles manager often links into place. A FIFO or a
/// device is refused without blocking.
pub fn read_following(path: &Path, cap: u64) -> std::io::Result<Bounded> {
    let file = open_checked(path, true)?;
    let total = file.metadata()?.len();
    let mut bytes = Vec::new();
    file.take(cap).read_to_end(&mut bytes)?;
    Ok(Bounded { bytes, total })
}

fn open_checked(path: &Path, follow: bool) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | nofollow);
    }
    let file = options.open(path).map_err(|e| link_error(e, path))?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, a device or a socket)"
        };
        return Err(invalid(format!(
            "{} is {what}; only regular files are read",
            path.display()
        )));
    }
    Ok(file)
}

/// The entries of the folder `dir`, sorted by name; an entry that cannot be read is left out.
/// An entry's `file_type` and `metadata` describe it, not what a link there points to.
pub fn list_dir(dir: &Path) -> std::io::Result<Vec<DirEntry>> {
    let mut entries: Vec<DirEntry> = std::fs::read_dir(dir)?.flatten().collect();
    entries.sort_by_key(DirEntry::file_name);
    Ok(entries)
}

/// The metadata of what `path` names, following links: for a size or a time to show or
/// compare, never to decide that a file may be opened (the opens above check the handle).
pub fn metadata(path: &Path) -> std::io::Result<Metadata> {
    std::fs::metadata(path)
}

/// The metadata of `path` itself: a link is described, not followed.
pub fn metadata_nofollow(path: &Path) -> std::io::Result<Metadata> {
    std::fs::symlink_metadata(path)
}

/// Removes the file at `path`; a link there is removed itself, never what it points to.
pub fn remove_file(path: &Path) -> std::io::Result<()> {
    std::fs::remove_file(path)
}

/// Removes the folder `path` and everything below it; a link inside is removed, never
/// followed, even if a folder is swapped for one during the walk.
pub fn remove_tree(path: &Path) -> std::io::Result<()> {
    std::fs::remove_dir_all(path)
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

/// Creates the folder `rel` below `root`, and the folders above it, through no link (a link
/// where a folder should be is refused, never followed).
pub fn create_dir_beneath(root: &Path, rel: &Path) -> std::io::Result<()> {
    let mut dir = Dir::open_ambient_dir(root, cap_std::ambient_authority())?;
    for name in names(rel)? {
        match dir.create_dir(name) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        dir = dir.open_dir_nofollow(name)?;
    }
    Ok(())
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
    let mut options = OpenOptions::new();
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

/// Creates the folder `path` and any missing folders above it (0777 less the umask, as `mkdir -p`
/// does): a folder the user names for output. An existing folder is not an error.
pub fn create_dirs(path: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new().recursive(true).create(path)
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

    fn fifo(path: &Path) {
        let c = std::ffi::CString::new(path.to_string_lossy().as_bytes()).expect("cstring");
        // SAFETY: mkfifo reads a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn streamed_opens_refuse_a_planted_link_and_a_fifo() {
        use std::io::Read;
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("log"), "line\n").expect("write");
        std::os::unix::fs::symlink(dir.path().join("log"), dir.path().join("link")).expect("link");
        fifo(&dir.path().join("pipe"));
        let mut text = String::new();
        open_regular(&dir.path().join("log"))
            .expect("open")
            .read_to_string(&mut text)
            .expect("read");
        assert_eq!(text, "line\n");
        let err = open_regular(&dir.path().join("link")).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        let err = open_regular(&dir.path().join("pipe")).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        assert!(open_regular(dir.path()).is_err());
    }

    #[test]
    fn settings_are_read_through_links_but_never_from_a_fifo() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("real.toml"), "a = 1\n").expect("write");
        std::os::unix::fs::symlink("real.toml", dir.path().join("config.toml")).expect("link");
        fifo(&dir.path().join("pipe"));
        let read = read_following(&dir.path().join("config.toml"), 100).expect("read");
        assert_eq!(read.into_text().expect("text"), "a = 1\n");
        let err = read_following(&dir.path().join("pipe"), 100).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let cut = read_following(&dir.path().join("real.toml"), 3).expect("read");
        let err = cut.into_text().unwrap_err();
        assert!(
            err.to_string().contains("6 bytes, more than the 3"),
            "{err}"
        );
    }

    #[test]
    fn folders_list_sorted_and_links_as_links() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("b"), "").expect("write");
        std::fs::create_dir(dir.path().join("a")).expect("mkdir");
        std::os::unix::fs::symlink(dir.path().join("a"), dir.path().join("c")).expect("link");
        let entries = list_dir(dir.path()).expect("list");
        let names: Vec<_> = entries.iter().map(|e| e.file_name()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert!(entries[2].file_type().expect("type").is_symlink());
        assert!(
            metadata_nofollow(&dir.path().join("c"))
                .expect("meta")
                .file_type()
                .is_symlink()
        );
        assert!(metadata(&dir.path().join("c")).expect("meta").is_dir());
        remove_file(&dir.path().join("c")).expect("remove the link");
        assert!(dir.path().join("a").is_dir());
        remove_tree(&dir.path().join("a")).expect("remove");
        assert!(!dir.path().join("a").exists());
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
