//! The process door: every child chatcli starts is built here — commands, the git tools, `@git`,
//! MCP stdio servers, the editor, and hooks to come.
//!
//! What each child gets is decided once, in this module:
//! - **Its own session, no controlling terminal** (`setsid` between fork and exec). With no
//!   terminal a command cannot push keystrokes into the user's shell or into chatcli (TIOCSTI),
//!   and its process group (the session's id) is the unit a timeout or an interrupt kills.
//!   Only the editor keeps the terminal, because the user types into it.
//! - **A scrubbed environment.** Variables whose names carry KEY, SECRET, TOKEN, PASSWORD,
//!   PASSWD or CREDENTIAL (or end in PAT) are withheld (every provider key chatcli reads is
//!   named so; the masker uses the same rule), unless
//!   `CHATCLI_ENV_ALLOW` names them or the caller sets one on purpose (an MCP entry's `env`).
//! - **The sandbox**, when the caller passes one: Landlock for writes and the network
//!   (`crate::sandbox`) and, inside the writable roots, the protected paths (`.git`, `.chatcli`,
//!   `.mcp.json`, `.agents`, `.claude`, `CHATCLI_HOME`) bound read-only in a private mount
//!   namespace. Landlock cannot take a folder back out of a granted tree, a read-only bind can.
//!   Where the kernel refuses unprivileged namespaces the protection is said to be off, once.
//! - **The kill.** Each group is registered while it lives. `kill_all_groups` ends them when a
//!   session ends or chatcli is signalled; for a SIGKILL of chatcli itself, a reaper process
//!   (forked once, holding the read end of a pipe) sees the pipe close and kills every group
//!   still registered.
//!
//! The one thing a newcomer gets wrong: the hooks run in the forked child of a multi-threaded
//! process. They make system calls only: no allocation, no lock, nothing that formats a string.
//! Everything they need is built before the fork.

use std::collections::HashSet;
use std::ffi::{CString, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// The setting that passes named secret variables through to commands and servers anyway.
pub const ENV_ALLOW_VAR: &str = "CHATCLI_ENV_ALLOW";

/// Folders and files inside a writable root that sandboxed commands may read but not write.
pub use crate::sandbox::PROTECTED_NAMES;

/// Whether `name` is withheld from children: the masker's rule (`crate::env::is_secret_name`),
/// so what is masked in output is also what a child never sees.
pub fn is_secret_name(name: &str) -> bool {
    crate::env::is_secret_name(name)
}

/// The names an allow-list value lets through (comma or space separated).
fn allowed_in(value: &str) -> HashSet<String> {
    value
        .split([',', ' '])
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect()
}

/// `CHATCLI_ENV_ALLOW` as the session's configuration resolved it (`config.toml` included),
/// set once at start; the process environment's own value until then.
static ENV_ALLOW: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Takes the resolved `CHATCLI_ENV_ALLOW` for every child this process starts.
pub fn set_env_allow(value: &str) {
    let _ = ENV_ALLOW.set(value.to_string());
}

/// The names `CHATCLI_ENV_ALLOW` lets through.
fn allowed_names() -> HashSet<String> {
    match ENV_ALLOW.get() {
        Some(value) => allowed_in(value),
        None => allowed_in(&std::env::var(ENV_ALLOW_VAR).unwrap_or_default()),
    }
}

/// The environment a child gets: chatcli's own, less the secrets not allowed by name.
pub fn scrubbed_env() -> Vec<(OsString, OsString)> {
    let allowed = allowed_names();
    std::env::vars_os()
        .filter(|(name, _)| {
            let name = name.to_string_lossy();
            !is_secret_name(&name) || allowed.contains(name.as_ref())
        })
        .collect()
}

/// Which of `names` a child would not see, given the allow-list value `allow`; sorted (for
/// `/config`).
pub fn withheld_among<'a>(names: impl IntoIterator<Item = &'a str>, allow: &str) -> Vec<String> {
    let allowed = allowed_in(allow);
    let mut withheld: Vec<String> = names
        .into_iter()
        .filter(|name| is_secret_name(name) && !allowed.contains(*name))
        .map(str::to_string)
        .collect();
    withheld.sort();
    withheld.dedup();
    withheld
}

/// The sandbox a child runs under: the Landlock ruleset and the paths bound read-only.
pub struct Confinement {
    /// The Landlock ruleset; `None` when the kernel cannot enforce it (approvals only).
    pub ruleset: Option<crate::sandbox::Prepared>,
    /// Paths that exist inside a writable root and must stay read-only.
    pub protected: Vec<PathBuf>,
}

/// The protected paths under `roots` that exist now, plus `home` when it lies inside a root.
pub fn protected_paths(roots: &[PathBuf], home: Option<&Path>) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for root in roots {
        for name in PROTECTED_NAMES {
            let path = root.join(name);
            if std::fs::symlink_metadata(&path).is_ok() && !found.contains(&path) {
                found.push(path);
            }
        }
    }
    if let Some(home) = home {
        let canonical = home.canonicalize().unwrap_or_else(|_| home.to_path_buf());
        let inside = roots.iter().any(|root| {
            let root = root.canonicalize().unwrap_or_else(|_| root.clone());
            canonical.starts_with(root)
        });
        if inside && canonical.is_dir() && !found.contains(&canonical) {
            found.push(canonical);
        }
    }
    found
}

/// How a child is started.
pub struct Door {
    command: std::process::Command,
    keep_terminal: bool,
    confinement: Option<Confinement>,
}

impl Door {
    /// A child running `program`, with the scrubbed environment and no terminal.
    pub fn new(program: impl AsRef<std::ffi::OsStr>) -> Self {
        let mut command = std::process::Command::new(program);
        command.env_clear().envs(scrubbed_env());
        Door {
            command,
            keep_terminal: false,
            confinement: None,
        }
    }

    /// The command being built: arguments, directory, pipes, and variables set on purpose.
    pub fn command(&mut self) -> &mut std::process::Command {
        &mut self.command
    }

    /// The child shares chatcli's terminal (the editor only).
    pub fn keep_terminal(mut self) -> Self {
        self.keep_terminal = true;
        self
    }

    /// The child runs under `confinement`.
    pub fn confine(mut self, confinement: Confinement) -> Self {
        self.confinement = Some(confinement);
        self
    }

    /// The command, ready to spawn: its session, its protections and its ruleset installed.
    pub fn into_std(mut self) -> std::process::Command {
        if !self.keep_terminal {
            imp::own_session(&mut self.command);
        }
        if let Some(confinement) = self.confinement {
            if !confinement.protected.is_empty() && protection_support().is_ok() {
                imp::protect(&mut self.command, &confinement.protected);
            }
            if let Some(ruleset) = confinement.ruleset {
                ruleset.install(&mut self.command);
            }
        }
        self.command
    }

    /// The command for tokio, ready to spawn; dropped (and the group killed by the caller's
    /// guard) when the future is.
    pub fn into_tokio(self) -> tokio::process::Command {
        let mut command = tokio::process::Command::from(self.into_std());
        command.kill_on_drop(true);
        command
    }
}

/// Why the process door cannot give a child what it was asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProcessError {
    /// The kernel refuses unprivileged mount namespaces (EPERM, EACCES).
    #[error("this system does not allow unprivileged mount namespaces")]
    NamespacesRefused,
    /// No user namespace could be made (ENOSPC).
    #[error("user namespaces are exhausted or disabled here")]
    NamespacesExhausted,
    /// The kernel has no mount namespaces (EINVAL, ENOSYS).
    #[error("this kernel has no mount namespaces")]
    NoMountNamespaces,
    /// Another failure making the namespace.
    #[error("a private mount namespace could not be made ({0})")]
    Namespace(String),
    /// The probe child ran but failed.
    #[error("the probe ended with {0}")]
    ProbeFailed(String),
    /// Not Linux.
    #[error("read-only binds need Linux mount namespaces")]
    NotLinux,
}

/// Whether read-only binds can be made for a child here, probed once: `Err` says why not.
pub fn protection_support() -> Result<(), ProcessError> {
    static PROBED: OnceLock<Result<(), ProcessError>> = OnceLock::new();
    PROBED.get_or_init(imp::probe_protection).clone()
}

/// The notice for a session whose commands run sandboxed but whose protected paths cannot be
/// bound read-only.
pub fn protection_notice() -> Option<String> {
    protection_support().err().map(|why| {
        format!(
            "{}protected paths (.git, .chatcli, .mcp.json, .agents, .claude, CHATCLI_HOME) stay writable by commands: {why}",
            crate::sandbox::NOTICE_PREFIX
        )
    })
}

/// The process groups started through the door and not yet known to be gone.
static LIVE_GROUPS: Mutex<Option<HashSet<u32>>> = Mutex::new(None);

/// Lists `pgid` to be killed when the session ends or chatcli dies.
pub fn register_group(pgid: u32) {
    if let Ok(mut groups) = LIVE_GROUPS.lock() {
        groups.get_or_insert_with(HashSet::new).insert(pgid);
    }
    imp::tell_reaper(pgid as i32);
}

/// Whether `pgid` is listed to be killed.
pub fn is_registered(pgid: u32) -> bool {
    LIVE_GROUPS
        .lock()
        .is_ok_and(|groups| groups.as_ref().is_some_and(|s| s.contains(&pgid)))
}

/// `pgid` has ended: nothing to kill (its number may soon be reused).
pub fn forget_group(pgid: u32) {
    if let Ok(mut groups) = LIVE_GROUPS.lock()
        && let Some(set) = groups.as_mut()
    {
        set.remove(&pgid);
    }
    imp::tell_reaper(-(pgid as i32));
}

/// Kills every process group started through the door that may still be alive; returns how many
/// were signalled. Called when a session ends and on SIGTERM/SIGINT/SIGHUP.
pub fn kill_all_groups() -> usize {
    let groups: Vec<u32> = match LIVE_GROUPS.lock() {
        Ok(mut groups) => groups
            .take()
            .map(|s| s.into_iter().collect())
            .unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    for pgid in &groups {
        kill_group(*pgid);
        imp::tell_reaper(-(*pgid as i32));
    }
    groups.len()
}

/// Sends SIGKILL to the group `pgid`.
pub fn kill_group(pgid: u32) {
    #[cfg(unix)]
    // SAFETY: killpg only sends a signal to a group this process started; no memory is touched.
    unsafe {
        libc::killpg(pgid as libc::pid_t, libc::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = pgid;
}

/// Whether any process of group `pgid` is still alive.
pub fn group_alive(pgid: u32) -> bool {
    #[cfg(unix)]
    {
        // SAFETY: signal 0 only checks that the group exists; nothing is delivered.
        unsafe { libc::killpg(pgid as libc::pid_t, 0) == 0 }
    }
    #[cfg(not(unix))]
    {
        let _ = pgid;
        false
    }
}

/// Kills the whole process group when dropped (a timeout, an interrupt, the session ending),
/// unless `disarm` said it ended.
pub struct GroupGuard(Option<u32>);

impl GroupGuard {
    /// Guards the group of a child just spawned (its pid: the child leads its own session).
    pub fn new(pid: Option<u32>) -> Self {
        if let Some(pgid) = pid {
            register_group(pgid);
        }
        GroupGuard(pid)
    }

    /// The group's id.
    pub fn pgid(&self) -> Option<u32> {
        self.0
    }

    /// The group ended with nothing left running: forget it without a kill.
    pub fn disarm(&mut self) {
        if let Some(pgid) = self.0.take() {
            forget_group(pgid);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.0.take() {
            kill_group(pgid);
            forget_group(pgid);
        }
    }
}

/// A path as the C string the hooks pass to the kernel.
fn c_path(path: &Path) -> Option<CString> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        CString::new(path.as_os_str().as_bytes()).ok()
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::ffi::CString;
    use std::os::unix::process::CommandExt;
    use std::path::PathBuf;
    use std::sync::{Mutex, OnceLock};

    use super::c_path;

    /// The child leaves chatcli's session: no controlling terminal, its own process group.
    pub fn own_session(command: &mut std::process::Command) {
        // SAFETY: setsid is async-signal-safe and touches no memory of the parent's.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }

    /// What the child needs to bind `paths` read-only, built before the fork.
    struct Binds {
        paths: Vec<CString>,
        user_ns: bool,
        uid_map: Vec<u8>,
        gid_map: Vec<u8>,
    }

    fn binds(paths: &[PathBuf]) -> Binds {
        // SAFETY: getuid and getgid cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        Binds {
            paths: paths.iter().filter_map(|p| c_path(p)).collect(),
            // Root needs no user namespace to make a mount namespace (and keeps its access to
            // files of other users, which a user namespace would hide).
            user_ns: uid != 0,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        }
    }

    /// Writes `bytes` to the file at `path`; system calls only.
    unsafe fn write_proc(path: &std::ffi::CStr, bytes: &[u8]) -> std::io::Result<()> {
        // SAFETY: open/write/close on a NUL-terminated path and a borrowed buffer.
        unsafe {
            let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
            let err = std::io::Error::last_os_error();
            libc::close(fd);
            if n < 0 || n as usize != bytes.len() {
                return Err(err);
            }
        }
        Ok(())
    }

    /// In the child: a private mount namespace with each path bound over itself read-only.
    unsafe fn bind_read_only(b: &Binds) -> std::io::Result<()> {
        let last = std::io::Error::last_os_error;
        // SAFETY: system calls on NUL-terminated strings built before the fork.
        unsafe {
            let flags = if b.user_ns {
                libc::CLONE_NEWUSER | libc::CLONE_NEWNS
            } else {
                libc::CLONE_NEWNS
            };
            if libc::unshare(flags) != 0 {
                return Err(last());
            }
            if b.user_ns {
                // Writing setgroups is refused on kernels before 3.19, where it is not needed.
                let _ = write_proc(c"/proc/self/setgroups", b"deny");
                write_proc(c"/proc/self/uid_map", &b.uid_map)?;
                write_proc(c"/proc/self/gid_map", &b.gid_map)?;
            }
            let none = std::ptr::null::<libc::c_char>();
            // Nothing done in this namespace may reach the user's.
            if libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                return Err(last());
            }
            for path in &b.paths {
                if libc::mount(
                    path.as_ptr(),
                    path.as_ptr(),
                    none,
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ) != 0
                {
                    return Err(last());
                }
                // A remount inside a user namespace must keep the flags the mount is locked
                // with (nosuid, nodev, noexec, the atime ones), or it is refused.
                let mut stat: libc::statvfs = std::mem::zeroed();
                let mut kept = 0;
                if libc::statvfs(path.as_ptr(), &mut stat) == 0 {
                    for (st, ms) in [
                        (libc::ST_NOSUID, libc::MS_NOSUID),
                        (libc::ST_NODEV, libc::MS_NODEV),
                        (libc::ST_NOEXEC, libc::MS_NOEXEC),
                        (libc::ST_NOATIME, libc::MS_NOATIME),
                        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
                        (libc::ST_RELATIME, libc::MS_RELATIME),
                    ] {
                        if stat.f_flag & st != 0 {
                            kept |= ms;
                        }
                    }
                }
                if libc::mount(
                    none,
                    path.as_ptr(),
                    none,
                    libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | kept,
                    std::ptr::null(),
                ) != 0
                {
                    return Err(last());
                }
            }
        }
        Ok(())
    }

    /// Binds `paths` read-only for the child (before its Landlock ruleset: a confined process
    /// may not mount).
    pub fn protect(command: &mut std::process::Command, paths: &[PathBuf]) {
        let b = binds(paths);
        // SAFETY: the hook makes system calls only, on memory built before the fork.
        unsafe {
            command.pre_exec(move || bind_read_only(&b));
        }
    }

    pub fn probe_protection() -> Result<(), super::ProcessError> {
        use super::ProcessError;
        let dir = std::env::temp_dir();
        let mut command = std::process::Command::new("true");
        command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        protect(&mut command, &[dir]);
        match command.status() {
            Ok(status) if status.success() => Ok(()),
            Ok(status) => Err(ProcessError::ProbeFailed(status.to_string())),
            Err(e) => Err(match e.raw_os_error() {
                Some(libc::EPERM) | Some(libc::EACCES) => ProcessError::NamespacesRefused,
                Some(libc::ENOSPC) => ProcessError::NamespacesExhausted,
                Some(libc::EINVAL) | Some(libc::ENOSYS) => ProcessError::NoMountNamespaces,
                _ => ProcessError::Namespace(e.to_string()),
            }),
        }
    }

    /// The write end of the reaper's pipe; `None` when it could not start.
    fn reaper() -> Option<&'static Mutex<std::fs::File>> {
        static REAPER: OnceLock<Option<Mutex<std::fs::File>>> = OnceLock::new();
        REAPER.get_or_init(start_reaper).as_ref()
    }

    /// Tells the reaper of a new group (`pgid > 0`) or of one that ended (`-pgid`).
    pub fn tell_reaper(message: i32) {
        use std::io::Write;
        if let Some(pipe) = reaper()
            && let Ok(mut pipe) = pipe.lock()
        {
            // Four bytes are below PIPE_BUF: the write is atomic. A dead reaper is EPIPE.
            let _ = pipe.write_all(&message.to_ne_bytes());
        }
    }

    fn start_reaper() -> Option<Mutex<std::fs::File>> {
        use std::os::fd::FromRawFd;
        let mut fds = [0; 2];
        // SAFETY: pipe2 fills the two ints it is given.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return None;
        }
        let (read, write) = (fds[0], fds[1]);
        // SAFETY: the child runs `reap`, which makes system calls only, then exits.
        match unsafe { libc::fork() } {
            -1 => {
                // SAFETY: closing the two fds just made.
                unsafe {
                    libc::close(read);
                    libc::close(write);
                }
                None
            }
            0 => unsafe { reap(read, write) },
            _ => {
                // SAFETY: the read end belongs to the reaper now; the write end is ours alone.
                unsafe { libc::close(read) };
                Some(Mutex::new(unsafe { std::fs::File::from_raw_fd(write) }))
            }
        }
    }

    /// The reaper: reads group ids until chatcli's end of the pipe closes (chatcli exited or
    /// was killed), then kills every group still listed. System calls only.
    unsafe fn reap(read: libc::c_int, write: libc::c_int) -> ! {
        const MAX: usize = 4096;
        // SAFETY: the forked child of a multi-threaded process: only async-signal-safe calls,
        // on stack memory.
        unsafe {
            libc::close(write);
            // Out of chatcli's process group and terminal: a Ctrl+C meant for chatcli is not ours.
            libc::setsid();
            for signal in [libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGTERM] {
                libc::signal(signal, libc::SIG_IGN);
            }
            // Hold nothing of chatcli's but the pipe: its terminal, sockets and other pipes
            // would otherwise stay open as long as the reaper lives.
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            for fd in 0..3 {
                if null >= 0 {
                    libc::dup2(null, fd);
                }
            }
            let keep = if read == 3 { 3 } else { libc::dup2(read, 3) };
            if keep == 3 && libc::syscall(libc::SYS_close_range, 4u32, u32::MAX, 0u32) != 0 {
                for fd in 4..4096 {
                    libc::close(fd);
                }
            }
            let pipe = if keep == 3 { 3 } else { read };
            let mut groups = [0i32; MAX];
            let mut count = 0usize;
            let mut buf = [0u8; 4];
            loop {
                let n = libc::read(pipe, buf.as_mut_ptr().cast(), 4);
                if n < 0 && *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                if n != 4 {
                    break;
                }
                let message = i32::from_ne_bytes(buf);
                if message > 0 {
                    if count < MAX {
                        groups[count] = message;
                        count += 1;
                    }
                } else if let Some(i) = groups[..count].iter().position(|g| *g == -message) {
                    groups[i] = groups[count - 1];
                    count -= 1;
                }
            }
            for group in &groups[..count] {
                libc::kill(-*group, libc::SIGKILL);
            }
            libc::_exit(0);
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::path::PathBuf;

    pub fn own_session(command: &mut std::process::Command) {
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        #[cfg(not(unix))]
        let _ = command;
    }

    pub fn protect(_command: &mut std::process::Command, _paths: &[PathBuf]) {}

    pub fn probe_protection() -> Result<(), super::ProcessError> {
        Err(super::ProcessError::NotLinux)
    }

    pub fn tell_reaper(_message: i32) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_withheld_and_the_rest_kept() {
        for name in [
            "ANTHROPIC_API_KEY",
            "aws_secret_access_key",
            "GITHUB_TOKEN",
            "DB_PASSWORD",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "TERM",
            "SSH_AUTH_SOCK",
            "CARGO_HOME",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn protected_paths_are_the_existing_ones_and_a_home_inside_a_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        std::fs::create_dir(root.join(".git")).expect("mkdir");
        std::fs::write(root.join(".mcp.json"), "{}").expect("write");
        let home = root.join("home");
        std::fs::create_dir(&home).expect("mkdir");
        let found = protected_paths(std::slice::from_ref(&root), Some(&home));
        assert_eq!(found, vec![root.join(".git"), root.join(".mcp.json"), home]);
        let elsewhere = tempfile::tempdir().expect("tempdir");
        assert_eq!(
            protected_paths(&[elsewhere.path().to_path_buf()], Some(&root)),
            Vec::<PathBuf>::new()
        );
    }
}
