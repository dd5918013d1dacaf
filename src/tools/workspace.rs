//! Path confinement: every path a tool touches stays inside the workspace or the scratch dir.
//!
//! A path is resolved against the workspace, then canonicalised (symlinks followed); for a file
//! that does not exist yet its parent is canonicalised instead. Only then is it compared with the
//! roots, so `../`, absolute paths elsewhere and symlinks that lead out are all refused by the
//! same check. Comparing before canonicalising is the mistake to avoid.

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
