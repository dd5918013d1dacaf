//! Where a benchmark run lives: a workspace and a home under one folder with a fixed name.
//!
//! Their paths are in the requests (the working directory, saved pages' paths), so a random
//! temporary name would change the token counts from one run to the next. The folder is
//! `$TMPDIR/chatcli-bench-<n>`, `n` the smallest number free, created exclusively (0700) and
//! removed with its contents when the run ends: two runs one after the other use the same
//! paths; runs at the same time take different numbers of the same length (up to nine).

use std::io::ErrorKind;
use std::path::PathBuf;

use tempfile::TempDir;

/// A run's folder, removed when dropped.
pub struct Places {
    root: TempDir,
}

impl Places {
    /// Takes the first free `chatcli-bench-<n>` in the temporary folder and makes its
    /// `workspace` and `home` inside.
    pub fn take() -> std::io::Result<Places> {
        let parent = std::env::temp_dir();
        for n in 1..1000u32 {
            let made = tempfile::Builder::new()
                .prefix(&format!("chatcli-bench-{n}"))
                .rand_bytes(0)
                .tempdir_in(&parent);
            match made {
                Ok(root) => {
                    let places = Places { root };
                    crate::private_fs::create_private_dir(&places.workspace())?;
                    crate::private_fs::create_private_dir(&places.home())?;
                    return Ok(places);
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::new(
            ErrorKind::AlreadyExists,
            "chatcli-bench-1 to chatcli-bench-999 are all taken in the temporary folder",
        ))
    }

    /// The scenario's workspace (the agent's working directory).
    pub fn workspace(&self) -> PathBuf {
        self.root.path().join("workspace")
    }

    /// The run's `CHATCLI_HOME`.
    pub fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    /// The folder holding both.
    #[cfg(test)]
    pub fn root(&self) -> &std::path::Path {
        self.root.path()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_after_another_gets_the_same_paths_and_runs_together_get_their_own() {
        let first = Places::take().expect("places");
        let path = first.workspace();
        let second = Places::take().expect("places");
        assert_ne!(second.root(), first.root());
        assert_eq!(
            second.root().as_os_str().len(),
            first.root().as_os_str().len()
        );
        drop(second);
        drop(first);
        assert!(!path.exists(), "removed with the run");
        let again = Places::take().expect("places");
        assert!(again.workspace().is_dir() && again.home().is_dir());
    }
}
