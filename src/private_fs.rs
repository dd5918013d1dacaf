//! Files and directories readable only by the user, whatever the umask.
//!
//! A leaf: it imports nothing of ours. Logs, session logs, the prompt history, memory, the
//! scratch directory, rewind snapshots, bench fixtures and provider token caches all create their
//! files through here, so privacy is one rule in one place. Directories are created 0700 as they
//! are made (parents included), files 0600; nothing here writes through a symlink planted at the
//! target path. Files opened to append are checked to be regular (a FIFO is refused without
//! blocking) and made 0600 if an older chatcli left them wider.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

/// Creates a directory (and parents) readable only by the user: each directory created is 0700
/// from the start, whatever the umask; the directory itself is set to 0700 if it existed.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    create_private_dirs(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Creates the missing directories of `dir` 0700 (a umask can only take bits away from 0700,
/// and a permissive one such as `000` adds none), leaving existing ones as they are.
pub fn create_private_dirs(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Writes `bytes` to `path` (created or truncated) readable only by the user, never through a
/// symlink planted at `path`.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path)?.write_all(bytes)
}

/// Replaces `path` with `bytes` in one step (a private temporary file beside it, renamed over
/// it), its folder made private if missing: a reader never sees half a file, the result is
/// 0600 whatever the umask, and a link planted at the temporary name is removed, not followed.
pub fn replace_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_private_dirs(dir)?;
    }
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    match std::fs::remove_file(&tmp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    create_exclusive(&tmp)?.write_all(bytes)?;
    std::fs::rename(&tmp, path)
}

/// Opens `path` to append (created 0600 when `create` and missing), never through a symlink
/// planted at `path` and never blocking on a FIFO: only a regular file is accepted, and one an
/// older chatcli left 0644 is made 0600.
pub fn append_private(path: &Path, create: bool) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.append(true).create(create);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o777 != 0o600 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(file)
}

/// Creates a new file readable only by the user; fails if anything (a symlink too) is there.
pub fn create_exclusive(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// An exclusive lock on one of chatcli's own files: the operating system's lock (`flock`) on
/// `path` (created 0600 when missing), held until this is dropped. The system drops it when
/// the holder exits however it exits (a `kill -9` included), so a lock never outlives its
/// process and no stale lock needs taking over.
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

/// Takes the lock on `path`, waiting up to `wait` for another holder; `Ok(None)` when it is
/// still held after that.
pub fn lock_exclusive(path: &Path, wait: std::time::Duration) -> std::io::Result<Option<FileLock>> {
    let file = append_private(path, true)?;
    let started = std::time::Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(Some(FileLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => {
                if started.elapsed() > wait {
                    return Ok(None);
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).expect("meta").permissions().mode() & 0o777
    }

    #[test]
    fn created_directories_and_files_are_private() {
        let dir = tempfile::tempdir().expect("tempdir");
        let deep = dir.path().join("a").join("b");
        create_private_dir(&deep).expect("mkdir");
        assert_eq!(mode(&dir.path().join("a")), 0o700);
        assert_eq!(mode(&deep), 0o700);
        let file = deep.join("f");
        write_private(&file, b"x").expect("write");
        assert_eq!(mode(&file), 0o600);
        create_exclusive(&deep.join("g")).expect("create");
        assert_eq!(mode(&deep.join("g")), 0o600);
        std::fs::write(deep.join("h.json"), "old").expect("write");
        replace_private(&deep.join("h.json"), b"new").expect("replace");
        assert_eq!(mode(&deep.join("h.json")), 0o600);
        assert_eq!(
            std::fs::read_to_string(deep.join("h.json")).expect("read"),
            "new"
        );
    }

    #[test]
    fn appends_go_to_a_private_regular_file_only() {
        use std::io::Write;
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("log");
        assert!(
            append_private(&log, false).is_err(),
            "not created unless asked"
        );
        append_private(&log, true)
            .expect("create")
            .write_all(b"a")
            .expect("write");
        std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        append_private(&log, false)
            .expect("open")
            .write_all(b"b")
            .expect("write");
        assert_eq!(std::fs::read_to_string(&log).expect("read"), "ab");
        assert_eq!(mode(&log), 0o600, "an older 0644 file is narrowed");
        let target = dir.path().join("victim");
        std::fs::write(&target, "keep").expect("write");
        std::os::unix::fs::symlink(&target, dir.path().join("planted")).expect("symlink");
        assert!(append_private(&dir.path().join("planted"), true).is_err());
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "keep");
        let pipe = dir.path().join("pipe");
        let c = std::ffi::CString::new(pipe.to_string_lossy().as_bytes()).expect("cstring");
        // SAFETY: mkfifo reads a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(
            append_private(&pipe, true).is_err(),
            "refused without blocking"
        );
    }

    #[test]
    fn never_writes_through_a_planted_symlink() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("victim");
        std::fs::write(&target, "keep").expect("write");
        let planted = dir.path().join("planted.txt");
        std::os::unix::fs::symlink(&target, &planted).expect("symlink");
        assert!(create_exclusive(&planted).is_err());
        assert!(write_private(&planted, b"evil").is_err());
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "keep");
    }
}
