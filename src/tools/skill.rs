//! `skill`: returns an installed skill's body and the list of its other files, and the narrow
//! exception that lets `read_file` read those files even when the skill folder lies outside the
//! workspace.
//!
//! The exception holds only for `read_file`, only for an absolute path with no `..` inside the
//! canonical folder of a skill that has one, and the open goes through a handle on that folder,
//! so a link inside it cannot lead out. Writes, listings and searches stay in the workspace.

use std::path::{Component, Path};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::json;

use super::workspace::Rooted;
use super::{Tool, ToolContext, ToolError, ToolOutput, required_str};
use crate::conversation::ToolSpec;

/// The `skill` tool (offered only when skills are installed).
pub struct SkillTool;

impl Tool for SkillTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "skill".into(),
            description: "Load an installed skill (listed in the skills block) by name: its instructions and its other files, readable with read_file.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"]
            }),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn run<'a>(
        &'a self,
        args: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let name = required_str(args, "name")?;
            let Some(skill) = ctx.skills.get(name) else {
                return Err(ToolError::InvalidArgs(format!(
                    "no skill named {name} ({})",
                    ctx.skills.names()
                )));
            };
            let mut text = skill.tagged_body();
            let details = crate::skills::details(skill);
            if !details.is_empty() {
                text.push_str(&format!("\n{details}"));
            }
            if !skill.files.is_empty() {
                text.push_str("\nIts files (read them with read_file, by these paths):");
                for file in &skill.files {
                    text.push_str(&format!("\n{}", file.display()));
                }
            }
            Ok(ToolOutput::text(text))
        }
        .boxed()
    }
}

/// `requested` as a file inside a skill folder, when it is one; `None` leaves the ordinary
/// workspace rules to decide.
pub fn rooted_in_skill(ctx: &ToolContext, requested: &str) -> Option<Rooted> {
    let path = Path::new(requested.trim());
    if !path.is_absolute() || path.components().any(|c| c == Component::ParentDir) {
        return None;
    }
    ctx.skills.roots().find_map(|root| {
        let rel = path.strip_prefix(root).ok()?;
        (rel.file_name().is_some()).then(|| Rooted {
            root: root.to_path_buf(),
            rel: rel.to_path_buf(),
        })
    })
}
