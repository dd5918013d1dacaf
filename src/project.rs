//! Where the project is: the folder that holds its `.git` or `.agent`, found from the working
//! directory upwards.
//!
//! A leaf: it imports nothing of ours. Bootstrap files, skills, MCP approvals and the status
//! line all ask it; what a newcomer gets wrong is that the project root only decides where those
//! are looked for, while tools stay confined to the working directory.

use std::path::{Path, PathBuf};

/// The first folder from `cwd` upwards that holds `.git` or `.agent`, else `cwd` itself.
pub fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists() || dir.join(".agent").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_the_nearest_folder_with_git_or_agent() {
        let top = tempfile::tempdir().expect("tempdir");
        let deep = top.path().join("a/b");
        std::fs::create_dir_all(&deep).expect("mkdir");
        assert_eq!(project_root(&deep), deep);
        std::fs::create_dir(top.path().join(".agent")).expect("mkdir");
        assert_eq!(project_root(&deep), top.path());
    }
}
