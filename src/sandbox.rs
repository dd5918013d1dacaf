//! The OS sandbox approved commands run under: which policy, whether the kernel enforces it, and
//! how a refusal is told to the model.
//!
//! On Linux the policy is a Landlock ruleset. It is built in chatcli (an fd, which restricts
//! nothing), and only the child applies it, between fork and exec (`Prepared::install`): the
//! command, its process group and every descendant inherit it; chatcli itself stays unconfined.
//! Reads and execution are never restricted; writes are (everywhere but the allowed roots under
//! `workspace-write`, everywhere under `read-only`), and with the network off so are TCP
//! connections and binds (Landlock ABI 4 and later). UDP, signals and abstract Unix sockets are
//! not covered. The hook only makes two system calls: nothing in it may allocate or lock, because
//! the child of a multi-threaded process holds a copy of locks other threads held at fork.
//! A kernel without Landlock (or a container that forbids it) falls back to approvals only, said
//! once; `required` refuses to run instead. This module is a leaf: it imports nothing of ours.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// What a sandboxed command may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Read everywhere; write only in the workspace, the scratch folder and the system temp folder.
    WorkspaceWrite,
    /// Read everywhere; write nowhere.
    ReadOnly,
    /// No sandbox: approvals only.
    Off,
}

impl Policy {
    /// The name `CHATCLI_SANDBOX` takes.
    pub fn name(self) -> &'static str {
        match self {
            Policy::WorkspaceWrite => "workspace-write",
            Policy::ReadOnly => "read-only",
            Policy::Off => "off",
        }
    }
}

/// Whether this kernel can enforce a policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// Landlock works, at this ABI version.
    Landlock { abi: i32 },
    /// It does not, and why.
    Unavailable(String),
}

/// A policy setting that does not parse, or a policy that cannot be enforced when it must be.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SandboxError {
    /// `CHATCLI_SANDBOX` / `--sandbox` is not one of the policies.
    #[error("CHATCLI_SANDBOX must be workspace-write, read-only, off or required (got \"{0}\")")]
    BadPolicy(String),
    /// `CHATCLI_SANDBOX_NETWORK` is not on or off.
    #[error("CHATCLI_SANDBOX_NETWORK must be on or off (got \"{0}\")")]
    BadNetwork(String),
    /// `required` and the kernel cannot enforce it.
    #[error(
        "the command was not run: CHATCLI_SANDBOX=required but {0}; set CHATCLI_SANDBOX=workspace-write to run with approvals only"
    )]
    Unenforceable(String),
    /// The ruleset could not be built.
    #[error("cannot build the sandbox ruleset: {0}")]
    Ruleset(String),
}

/// The sandbox settings of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxSettings {
    pub policy: Policy,
    /// Refuse to run commands when the kernel cannot enforce the policy (`CHATCLI_SANDBOX=required`).
    pub required: bool,
    /// Whether commands may use the network (`CHATCLI_SANDBOX_NETWORK`, on by default).
    pub network: bool,
    /// What the kernel can do; tests set `Unavailable` to take the fallback path.
    pub support: Support,
    /// More folders commands may write under `workspace-write` (`CHATCLI_SANDBOX_WRITABLE`,
    /// e.g. `~/.cargo` for builds that fetch dependencies).
    pub extra_writable: Vec<PathBuf>,
    /// chatcli's own folder (`CHATCLI_HOME`): read-only to commands wherever it lies.
    pub home: Option<PathBuf>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings {
            policy: Policy::WorkspaceWrite,
            required: false,
            network: true,
            support: kernel_support(),
            extra_writable: Vec::new(),
            home: None,
        }
    }
}

/// Folders and files inside a writable root that sandboxed commands may read but not write:
/// what runs code later (`.git` config and hooks, project settings, MCP and agent definitions).
/// The process door binds them read-only (`crate::process`).
pub const PROTECTED_NAMES: &[&str] = &[".git", ".chatcli", ".mcp.json", ".agents", ".claude"];

/// Where every notice about the sandbox starts (exec prints these on stderr).
pub const NOTICE_PREFIX: &str = "sandbox: ";

impl SandboxSettings {
    /// No sandbox at all.
    pub fn off() -> Self {
        SandboxSettings {
            policy: Policy::Off,
            ..SandboxSettings::default()
        }
    }

    /// Reads a policy name: `workspace-write`, `read-only`, `off`, or `required` (workspace-write
    /// that must be enforced). Returns the policy and whether it is required.
    pub fn parse_policy(value: &str) -> Result<(Policy, bool), SandboxError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "workspace-write" | "" => Ok((Policy::WorkspaceWrite, false)),
            "read-only" => Ok((Policy::ReadOnly, false)),
            "off" => Ok((Policy::Off, false)),
            "required" => Ok((Policy::WorkspaceWrite, true)),
            _ => Err(SandboxError::BadPolicy(value.to_string())),
        }
    }

    /// Reads `CHATCLI_SANDBOX_NETWORK`: `on` (default) or `off`.
    pub fn parse_network(value: &str) -> Result<bool, SandboxError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "on" | "1" | "true" | "" => Ok(true),
            "off" | "0" | "false" => Ok(false),
            _ => Err(SandboxError::BadNetwork(value.to_string())),
        }
    }

    /// Why the kernel cannot enforce these settings; `None` when it can (or the policy is off).
    pub fn shortfall(&self) -> Option<String> {
        if self.policy == Policy::Off {
            return None;
        }
        match &self.support {
            Support::Unavailable(why) => Some(why.clone()),
            Support::Landlock { abi } if !self.network && *abi < 4 => Some(format!(
                "Landlock ABI {abi} cannot cut the network (ABI 4 is needed)"
            )),
            Support::Landlock { .. } => None,
        }
    }

    /// Whether commands run confined.
    pub fn enforced(&self) -> bool {
        self.policy != Policy::Off && self.shortfall().is_none()
    }

    /// One line for `/sandbox`, `/config` and the approval dialog.
    pub fn describe(&self) -> String {
        let name = if self.required {
            "required (workspace-write)"
        } else {
            self.policy.name()
        };
        if self.policy == Policy::Off {
            return "off: approvals only, commands are not confined".into();
        }
        let network = if self.network {
            "network on"
        } else {
            "network off"
        };
        match (&self.support, self.shortfall()) {
            (Support::Landlock { abi }, None) => {
                format!("{name}, {network}; enforced by Landlock ABI {abi}")
            }
            (_, Some(why)) if self.required => {
                format!("{name}, {network}; NOT enforced ({why}): commands are refused")
            }
            (_, Some(why)) => {
                format!("{name}, {network}; NOT enforced ({why}): approvals only")
            }
            (Support::Unavailable(why), None) => format!("{name}; NOT enforced ({why})"),
        }
    }

    /// The notice to show once per session when the policy cannot be enforced.
    pub fn notice(&self) -> Option<String> {
        let why = self.shortfall()?;
        Some(if self.required {
            format!("{NOTICE_PREFIX}{why}: commands will be refused (CHATCLI_SANDBOX=required)")
        } else {
            format!(
                "{NOTICE_PREFIX}{why}: commands run with approvals only ({} is not enforced)",
                self.policy.name()
            )
        })
    }

    /// The ruleset for a command allowed to write under `writable`; `None` when commands run
    /// unconfined (policy off, or the fallback), an error when `required` cannot be met.
    pub fn prepare(&self, writable: &[PathBuf]) -> Result<Option<Prepared>, SandboxError> {
        if self.policy == Policy::Off {
            return Ok(None);
        }
        if let Some(why) = self.shortfall() {
            return if self.required {
                Err(SandboxError::Unenforceable(why))
            } else {
                Ok(None)
            };
        }
        let roots: &[PathBuf] = match self.policy {
            Policy::ReadOnly => &[],
            _ => writable,
        };
        imp::build(roots, self.network).map(Some)
    }

    /// The roots a command may write under, for a session in `workspace` with `scratch`.
    pub fn writable_roots(&self, workspace: &Path, scratch: &Path) -> Vec<PathBuf> {
        match self.policy {
            Policy::ReadOnly => Vec::new(),
            _ => [workspace, scratch, &std::env::temp_dir()]
                .iter()
                .map(|p| p.to_path_buf())
                .chain(self.extra_writable.iter().cloned())
                .collect(),
        }
    }

    /// What the sandbox refused, read from a confined command's output: a `Permission denied`
    /// (or `Operation not permitted`, `Read-only file system`) on a path outside `writable`
    /// that chatcli itself could write, or a refused connection with the network off.
    pub fn explain_denial(&self, output: &str, dir: &Path, writable: &[PathBuf]) -> Option<String> {
        if !self.enforced() {
            return None;
        }
        let all = output.to_ascii_lowercase();
        for line in output.lines() {
            let lower = line.to_ascii_lowercase();
            let denied = lower.contains("permission denied")
                || lower.contains("operation not permitted")
                || lower.contains("read-only file system");
            if !denied {
                continue;
            }
            for candidate in path_candidates(line) {
                let path = dir.join(candidate);
                if let Some(root) = writable.iter().find(|root| under(&path, root))
                    && self.policy == Policy::WorkspaceWrite
                    && let Some(name) = protected_under(&path, root)
                {
                    return Some(format!(
                        "{name} is read-only to commands (a protected path: what is written there runs later); \
                         run this outside chatcli, or name the folder in CHATCLI_SANDBOX_WRITABLE to allow it: {}",
                        path.display()
                    ));
                }
                if writable.iter().any(|root| under(&path, root)) || !writable_unconfined(&path) {
                    continue;
                }
                return Some(match self.policy {
                    Policy::ReadOnly => format!(
                        "write refused by the sandbox (read-only policy): {}",
                        path.display()
                    ),
                    _ => format!(
                        "write outside the workspace refused by the sandbox: {}",
                        path.display()
                    ),
                });
            }
        }
        if self.network {
            return None;
        }
        // Landlock refuses a connection with EACCES; the client's words vary (Python prints
        // the errno on one line and `connect` in the traceback above it).
        let denied = all.contains("permission denied") || all.contains("operation not permitted");
        let networked = ["connect", "socket", "bind"]
            .iter()
            .any(|w| all.contains(w));
        if denied && networked {
            return Some(
                "network access refused by the sandbox (CHATCLI_SANDBOX_NETWORK=off)".into(),
            );
        }
        // curl and others only say they could not connect, which a server that is down says too.
        if all.contains("failed to connect") || all.contains("couldn't connect") {
            return Some(
                "the network is off for commands (CHATCLI_SANDBOX_NETWORK=off): the failed \
                 connection is likely the sandbox's refusal"
                    .into(),
            );
        }
        None
    }
}

/// Paths a tool's error line names: quoted ones first, then bare words that contain a `/`.
fn path_candidates(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    for quote in ['\'', '"', '`', '‘', '’'] {
        let parts: Vec<&str> = line.split(quote).collect();
        for (i, part) in parts.iter().enumerate() {
            if i % 2 == 1 && i + 1 < parts.len() && !part.is_empty() && !part.contains(": ") {
                found.push(part.to_string());
            }
        }
    }
    for word in line.split_whitespace() {
        let word = word.trim_matches(|c: char| "'\"`‘’:,;()[]".contains(c));
        if word.contains('/') && !found.iter().any(|f| f == word) {
            found.push(word.to_string());
        }
    }
    found
}

/// The protected name (`.git`, …) `path` lies in, below `root`.
fn protected_under(path: &Path, root: &Path) -> Option<&'static str> {
    let canonical_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let rel = path
        .strip_prefix(root)
        .or_else(|_| path.strip_prefix(&canonical_root))
        .ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    PROTECTED_NAMES.iter().find(|n| **n == first).copied()
}

/// Whether `path` is `root` or inside it, comparing canonical forms where they exist.
fn under(path: &Path, root: &Path) -> bool {
    let canon = |p: &Path| -> PathBuf {
        if let Ok(c) = p.canonicalize() {
            return c;
        }
        match (p.parent(), p.file_name()) {
            (Some(parent), Some(name)) => parent
                .canonicalize()
                .map(|c| c.join(name))
                .unwrap_or_else(|_| p.to_path_buf()),
            _ => p.to_path_buf(),
        }
    };
    canon(path).starts_with(canon(root))
}

/// Whether chatcli, unconfined, could write `path` (or create it in its folder): if not, the
/// refusal is the file system's own, not the sandbox's.
fn writable_unconfined(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let target = if path.exists() {
            path
        } else {
            match path.parent() {
                Some(p) => p,
                None => return false,
            }
        };
        let Ok(c) = std::ffi::CString::new(target.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: access(2) reads a NUL-terminated path and touches no memory of ours.
        unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// What this kernel can do, probed once.
pub fn kernel_support() -> Support {
    static PROBED: OnceLock<Support> = OnceLock::new();
    PROBED.get_or_init(imp::probe).clone()
}

/// A ruleset ready for a child to apply.
#[derive(Debug)]
pub struct Prepared {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
}

impl Prepared {
    /// Makes the child of `command` apply the ruleset before it runs the program; the fd closes
    /// with the command (and in the child at exec: Landlock creates it close-on-exec).
    pub fn install(self, command: &mut std::process::Command) {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            use std::os::unix::process::CommandExt;
            let fd = self.fd;
            // SAFETY: the hook runs in the forked child and makes only two async-signal-safe
            // system calls on an fd the child inherited; it allocates nothing and takes no lock.
            unsafe {
                command.pre_exec(move || {
                    if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    if libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = command;
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::path::PathBuf;

    use landlock::{
        ABI, Access, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr,
        RulesetCreatedAttr,
    };

    use super::{Prepared, SandboxError, Support};

    /// Devices every shell writes to (`>/dev/null`), allowed under every policy.
    const DEVICES: &[&str] = &[
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/tty",
        "/dev/ptmx",
        "/dev/pts",
        "/dev/shm",
    ];

    pub fn probe() -> Support {
        // SAFETY: the version query passes no attribute and creates nothing.
        let abi = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                1u32, // LANDLOCK_CREATE_RULESET_VERSION
            )
        };
        if abi >= 1 {
            Support::Landlock { abi: abi as i32 }
        } else {
            let err = std::io::Error::last_os_error();
            Support::Unavailable(match err.raw_os_error() {
                Some(libc::ENOSYS) => "this kernel has no Landlock".into(),
                Some(libc::EOPNOTSUPP) => "Landlock is disabled in this kernel".into(),
                Some(libc::EPERM) => "Landlock is forbidden here (a container's seccomp?)".into(),
                _ => format!("Landlock is unavailable ({err})"),
            })
        }
    }

    pub fn build(roots: &[PathBuf], network: bool) -> Result<Prepared, SandboxError> {
        let abi = ABI::V5;
        let err = |e: &dyn std::fmt::Display| SandboxError::Ruleset(e.to_string());
        let write = AccessFs::from_write(abi);
        let mut ruleset = Ruleset::default()
            .handle_access(write)
            .map_err(|e| err(&e))?;
        if !network {
            ruleset = ruleset
                .handle_access(AccessNet::from_all(ABI::V4))
                .map_err(|e| err(&e))?;
        }
        let mut created = ruleset.create().map_err(|e| err(&e))?;
        // Devices may be written but take no ioctl (ABI 5 and later): no TIOCSTI pushing keys
        // into a terminal the command found by its path, even for root.
        let device_write = write & !AccessFs::IoctlDev;
        let allowed = roots
            .iter()
            .map(|root| (root.clone(), write))
            .chain(DEVICES.iter().map(|d| (PathBuf::from(d), device_write)));
        for (root, access) in allowed {
            // A root that does not exist (no /dev/tty in a daemon) has nothing to allow.
            let Ok(fd) = PathFd::new(&root) else { continue };
            created = created
                .add_rule(PathBeneath::new(fd, access))
                .map_err(|e| err(&e))?;
        }
        let fd: Option<std::os::fd::OwnedFd> = created.into();
        let fd = fd.ok_or_else(|| SandboxError::Ruleset("the kernel gave no ruleset".into()))?;
        Ok(Prepared { fd })
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::path::PathBuf;

    use super::{Prepared, SandboxError, Support};

    pub fn probe() -> Support {
        Support::Unavailable("only Linux (Landlock) is supported".into())
    }

    pub fn build(_roots: &[PathBuf], _network: bool) -> Result<Prepared, SandboxError> {
        Err(SandboxError::Ruleset(
            "only Linux (Landlock) is supported".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_and_bad_values_name_the_fix() {
        assert_eq!(
            SandboxSettings::parse_policy("Read-Only"),
            Ok((Policy::ReadOnly, false))
        );
        assert_eq!(
            SandboxSettings::parse_policy("required"),
            Ok((Policy::WorkspaceWrite, true))
        );
        assert_eq!(
            SandboxSettings::parse_policy("strict")
                .unwrap_err()
                .to_string(),
            "CHATCLI_SANDBOX must be workspace-write, read-only, off or required (got \"strict\")"
        );
        assert_eq!(SandboxSettings::parse_network("off"), Ok(false));
        assert!(SandboxSettings::parse_network("maybe").is_err());
    }

    #[test]
    fn path_candidates_find_quoted_and_bare_paths() {
        assert_eq!(
            path_candidates("touch: cannot touch '/etc/hosts': Permission denied"),
            vec!["/etc/hosts"]
        );
        assert_eq!(
            path_candidates("sh: 1: cannot create /root/x: Permission denied"),
            vec!["/root/x"]
        );
    }

    #[test]
    fn an_unenforceable_policy_says_so_and_required_refuses() {
        let mut s = SandboxSettings {
            support: Support::Unavailable("simulated".into()),
            ..SandboxSettings::default()
        };
        assert!(!s.enforced());
        assert!(s.prepare(&[]).expect("falls back").is_none());
        assert_eq!(
            s.notice().as_deref(),
            Some(
                "sandbox: simulated: commands run with approvals only (workspace-write is not enforced)"
            )
        );
        s.required = true;
        assert!(matches!(
            s.prepare(&[]),
            Err(SandboxError::Unenforceable(_))
        ));
        let off = SandboxSettings {
            policy: Policy::Off,
            ..s
        };
        assert_eq!(off.notice(), None);
    }
}
