//! Path confinement: every path a tool touches stays inside the workspace or the scratch dir.
//!
//! Two layers. `confine` resolves a path against the workspace, canonicalises it (symlinks
//! followed) and compares it with the roots, so `../`, absolute paths elsewhere and symlinks that
//! lead out are refused with a clear message. But a check followed by an open is a race: a folder
//! swapped for a symlink in between sends the open elsewhere. So the file tools then open through
//! `open_root`: a directory handle on the root, with every path resolved relative to it by the
//! kernel (`cap-std`, `openat2` with `RESOLVE_BENEATH` where available), which refuses to leave
//! it whatever the links say at that instant. Writes never follow a link in the last component,
//! and creating a file is `O_EXCL`. Reads through a link that stays inside remain allowed.

use std::path::{Component, Path, PathBuf};

use super::{ToolContext, ToolError};

/// Resolves `requested` to a canonical path inside the workspace or scratch directory.
pub fn confine(ctx: &ToolContext, requested: &str) -> Result<PathBuf, ToolError> {
    let requested = requested.trim();
    if requested.is_empty() {
        return Err(ToolError::InvalidArgs("the path is empty".into()));
    }
    let expanded = expand_home(requested);
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        ctx.workspace.join(expanded)
    };
    let resolved = canonical_or_parent(&joined)
        .map_err(|e| ToolError::Failed(format!("cannot resolve {requested}: {e}")))?;
    let scratch =
        canonical_or_parent(ctx.scratch.dir()).unwrap_or_else(|_| ctx.scratch.dir().to_path_buf());
    if resolved.starts_with(&ctx.workspace) || resolved.starts_with(&scratch) {
        Ok(resolved)
    } else {
        Err(ToolError::Confinement(format!(
            "{requested} is outside the workspace {}: tools may only touch files inside it (symlinks are followed before the check)",
            ctx.workspace.display()
        )))
    }
}

/// A confined path as the root it lives under and the path relative to that root.
#[derive(Debug, Clone, PartialEq)]
pub struct Rooted {
    /// The workspace or the scratch directory.
    pub root: PathBuf,
    /// The path below `root`, as requested (links and `..` resolved by the kernel at open time).
    pub rel: PathBuf,
}

/// Checks `requested` with `confine` and splits it into its root and the path below it, for
/// opening through `open_root`.
pub fn rooted(ctx: &ToolContext, requested: &str) -> Result<Rooted, ToolError> {
    confine(ctx, requested)?;
    let expanded = expand_home(requested.trim());
    let scratch = ctx.scratch.dir();
    let scratch_canonical = canonical_or_parent(scratch).unwrap_or_else(|_| scratch.to_path_buf());
    let (root, rel) = if !expanded.is_absolute() {
        (ctx.workspace.clone(), expanded)
    } else if let Ok(rel) = expanded.strip_prefix(&ctx.workspace) {
        (ctx.workspace.clone(), rel.to_path_buf())
    } else if let Ok(rel) = expanded.strip_prefix(&scratch_canonical) {
        (scratch_canonical.clone(), rel.to_path_buf())
    } else if let Ok(rel) = expanded.strip_prefix(scratch) {
        (scratch_canonical.clone(), rel.to_path_buf())
    } else {
        return Err(ToolError::Confinement(format!(
            "{requested} reaches the workspace through another path; give it relative to the workspace {}",
            ctx.workspace.display()
        )));
    };
    if rel.as_os_str().is_empty() || rel.file_name().is_none() {
        return Err(ToolError::InvalidArgs(format!(
            "{requested} is a directory, not a file"
        )));
    }
    Ok(Rooted { root, rel })
}

/// Why a write to `requested` must always be asked for: it lies in a protected path (`.git`,
/// `.chatcli`, `.mcp.json`, `.agents`, `.claude` of the workspace, or chatcli's own folder),
/// where what is written runs later or changes what chatcli trusts. `None` for other paths.
pub fn protected_reason(ctx: &ToolContext, requested: &str) -> Option<String> {
    let resolved = confine(ctx, requested).ok()?;
    if let Some(home) = &ctx.sandbox.home {
        let home = canonical_or_parent(home).unwrap_or_else(|_| home.clone());
        if resolved.starts_with(&home) {
            return Some(format!(
                "{requested} is inside chatcli's own folder ({}): what is written there changes what chatcli runs and trusts",
                home.display()
            ));
        }
    }
    let first = resolved
        .strip_prefix(&ctx.workspace)
        .ok()?
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy()
        .to_string();
    crate::process::PROTECTED_NAMES
        .contains(&first.as_str())
        .then(|| {
            format!(
                "{requested} is inside {first}, a protected path: what is written there can run later (git hooks and config) or change what chatcli trusts"
            )
        })
}

/// A directory handle on `root`: paths opened through it cannot resolve outside it (the file
/// door's `open_dir`).
pub fn open_root(root: &Path) -> std::io::Result<crate::files::Dir> {
    crate::files::open_dir(root)
}

/// The message for an I/O error of a confined open: escapes and links become refusals that say
/// why; anything else is `cannot {verb} {requested}: {error}`.
pub fn open_error(requested: &str, verb: &str, e: std::io::Error) -> ToolError {
    #[cfg(unix)]
    match e.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::EMLINK) => {
            return ToolError::Confinement(format!(
                "refused: {requested} is a symbolic link; files are not written through links (write the file it points to, by its own path)"
            ));
        }
        Some(libc::EXDEV) => return escaped(requested),
        _ => {}
    }
    if e.kind() == std::io::ErrorKind::PermissionDenied && e.to_string().contains("outside") {
        return escaped(requested);
    }
    ToolError::Failed(format!("cannot {verb} {requested}: {e}"))
}

fn escaped(requested: &str) -> ToolError {
    ToolError::Confinement(format!(
        "refused: {requested} leads outside the workspace (through a symlink or `..`); tools may only touch files inside it"
    ))
}

/// Refuses anything that is not a regular file (a FIFO would block a read forever, a device
/// could be endless), naming what it is.
pub fn require_regular(
    requested: &str,
    file_type: crate::files::FileType,
) -> Result<(), ToolError> {
    if file_type.is_file() {
        return Ok(());
    }
    Err(ToolError::Failed(format!(
        "refused: {requested} is {}; only regular files can be read or written",
        crate::files::describe(file_type)
    )))
}

/// Open options that never block on a FIFO or take a terminal, and (for writes) never follow a
/// link in the last component (the file door's `open_options`).
pub fn open_options(follow_last_link: bool) -> crate::files::OpenOptions {
    crate::files::open_options(follow_last_link)
}

fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// Resolves `path` one component at a time: every existing prefix is canonicalised (symlinks
/// followed), `..` pops from a canonical prefix, and components that do not exist yet are kept.
pub fn canonical_or_parent(path: &Path) -> std::io::Result<PathBuf> {
    let mut resolved = PathBuf::new();
    let mut exists = true;
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => resolved.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                resolved.pop();
                // Back inside existing directories, symlinks must be followed again.
                exists = resolved.exists();
            }
            Component::Normal(name) => {
                resolved.push(name);
                if exists {
                    match resolved.canonicalize() {
                        Ok(canonical) => resolved = canonical,
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => exists = false,
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(dir: &Path) -> ToolContext {
        ToolContext::new(
            dir.canonicalize().expect("canonical"),
            crate::tools::Scratch::private(dir.join(".scratch-for-test")),
            Default::default(),
        )
    }

    #[test]
    fn refuses_paths_that_leave_the_workspace() {
        let outer = tempfile::tempdir().expect("tempdir");
        let ws = outer.path().join("ws");
        std::fs::create_dir(&ws).expect("mkdir");
        std::fs::write(outer.path().join("secret.txt"), "s").expect("write");
        let c = ctx(&ws);
        assert!(matches!(
            confine(&c, "../secret.txt"),
            Err(ToolError::Confinement(_))
        ));
        let abs = outer.path().join("secret.txt").display().to_string();
        assert!(matches!(confine(&c, &abs), Err(ToolError::Confinement(_))));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(outer.path().join("secret.txt"), ws.join("link"))
                .expect("symlink");
            assert!(matches!(
                confine(&c, "link"),
                Err(ToolError::Confinement(_))
            ));
        }
        assert!(confine(&c, "new/../new.txt").is_ok());
        let new_file = confine(&c, "sub/not-yet.txt").expect("a new file inside is allowed");
        assert!(new_file.starts_with(&c.workspace));
    }
}
