//! `git_status`, `git_diff`, `git_log`: read-only views of the workspace's repository through
//! the `git` CLI, output capped like `run_command`'s.
//!
//! These run without approval, so they must not run anything the repository asks for: a cloned
//! repository's own `.git/config` can name commands (`core.fsmonitor`, `diff.external`, textconv
//! and filter drivers, hooks, a pager, a signature program) that git would run the moment the
//! model looks at its status. Every call overrides each of them on the command line (`-c`, which
//! wins over every config file), passes `--no-ext-diff --no-textconv`, takes no optional locks
//! (no index write, so no `post-index-change` hook), reads no system config and has no pager.

use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::json;

use super::cut::{Cut, count};
use super::workspace::confine;
use super::{
    Tool, ToolContext, ToolError, ToolOutput, cap_head_tail, optional_bool, optional_str,
    optional_usize,
};
use crate::conversation::ToolSpec;

const TIMEOUT: Duration = Duration::from_secs(30);

/// Config that would make git run a command, each set to a value that runs nothing.
pub const NEUTRALISED: &[&str] = &[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "diff.external=",
    "log.showSignature=false",
    "status.submoduleSummary=false",
];

/// The filter drivers the repository's own config defines (`filter.<name>.clean`, `.smudge`,
/// `.process`), as `-c` overrides that empty them. Reading config runs nothing.
async fn neutralised_filters(ctx: &ToolContext) -> Vec<String> {
    let Ok(door) = ctx.door("git") else {
        return Vec::new();
    };
    filters_through(door, &ctx.workspace).await
}

/// `neutralised_filters` through a given door (the `@git` mention has no tool context).
async fn filters_through(mut door: crate::process::Door, dir: &std::path::Path) -> Vec<String> {
    door.command()
        .args([
            "config",
            "--local",
            "--includes",
            "--name-only",
            "--get-regexp",
            r"^filter\..*\.(clean|smudge|process|required)$",
        ])
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(std::process::Stdio::null());
    let Ok(Ok(out)) = tokio::time::timeout(TIMEOUT, door.into_tokio().output()).await else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|key| !key.is_empty())
        .map(|key| {
            if key.ends_with(".required") {
                format!("{key}=false")
            } else {
                format!("{key}=")
            }
        })
        .collect()
}

/// The full argument list: the overrides (`filters` from the repository's own config), then
/// `args`.
fn hardened_args(filters: Vec<String>, args: &[String]) -> Vec<String> {
    let mut argv = vec!["--no-pager".to_string(), "--no-optional-locks".to_string()];
    for setting in NEUTRALISED.iter().map(|s| s.to_string()).chain(filters) {
        argv.push("-c".into());
        argv.push(setting);
    }
    argv.extend(args.iter().cloned());
    argv
}

/// Characters of git output kept from the start and from the end.
const HEAD_CHARS: usize = 12_000;
const TAIL_CHARS: usize = 4_000;

async fn git(ctx: &ToolContext, args: Vec<String>) -> Result<ToolOutput, ToolError> {
    // Under the session's sandbox like `run_command`: git reads config and runs nothing, but a
    // repository can still surprise.
    let door = ctx.door("git")?;
    let filters = neutralised_filters(ctx).await;
    let text = run_hardened(door, filters, &ctx.workspace, &args).await?;
    if text.trim().is_empty() {
        return Ok(ToolOutput::text("(no output)"));
    }
    let kept = cap_head_tail(&text, HEAD_CHARS, TAIL_CHARS);
    if kept.len() == text.len() {
        return Ok(ToolOutput::text(kept));
    }
    // Cut: the whole output is in memory already, so it is saved for the model to read on.
    let cut = Cut::showing(format!(
        "the first {} and last {} characters",
        count(HEAD_CHARS as u64),
        count(TAIL_CHARS as u64)
    ))
    .of(format!("{} characters", count(text.chars().count() as u64)));
    let (cut, saved_path) = match ctx.scratch.save("git", "txt", text.as_bytes()) {
        Ok(path) => (
            cut.saved("the whole output", &path)
                .read_on("read it with read_file (start/end) or search_files"),
            Some(path),
        ),
        Err(e) => (
            cut.read_on(format!(
                "the output could not be saved ({e}): narrow with path"
            )),
            None,
        ),
    };
    Ok(ToolOutput {
        text: cut.above(&kept),
        saved_path,
        ..ToolOutput::default()
    })
}

/// Runs git with every command-running setting neutralised; its stdout, or its stderr as the
/// error.
async fn run_hardened(
    mut door: crate::process::Door,
    filters: Vec<String>,
    dir: &std::path::Path,
    args: &[String],
) -> Result<String, ToolError> {
    let argv = hardened_args(filters, args);
    door.command()
        .args(&argv)
        .current_dir(dir)
        .env("GIT_PAGER", "cat")
        .env("PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env_remove("GIT_EXTERNAL_DIFF")
        .env_remove("GIT_EDITOR")
        .stdin(std::process::Stdio::null());
    let output = tokio::time::timeout(TIMEOUT, door.into_tokio().output())
        .await
        .map_err(|_| ToolError::Failed("git took longer than 30 s".into()))?
        .map_err(|e| ToolError::Failed(format!("cannot run git: {e}")))?;
    if !output.status.success() {
        let err = String::from_utf8_lossy(&output.stderr);
        return Err(ToolError::Failed(format!(
            "git {}: {}",
            args.first().map(String::as_str).unwrap_or(""),
            err.trim()
        )));
    }
    Ok(String::from_utf8_lossy(&output.stdout).to_string())
}

/// Git run for the `@git` mention: the same neutralised settings as the tools, under `sandbox`
/// (the session's), in `dir`. The mention is the user's own, so it asks nothing, but it runs
/// nothing the repository asks for either.
pub async fn mention_git(
    dir: &std::path::Path,
    sandbox: &crate::sandbox::SandboxSettings,
    args: &[&str],
) -> Result<String, ToolError> {
    let confine = || -> Result<crate::process::Door, ToolError> {
        // Read-only: the mention only looks.
        let read_only = crate::sandbox::SandboxSettings {
            policy: match sandbox.policy {
                crate::sandbox::Policy::Off => crate::sandbox::Policy::Off,
                _ => crate::sandbox::Policy::ReadOnly,
            },
            ..sandbox.clone()
        };
        let ruleset = read_only
            .prepare(&[])
            .map_err(|e| ToolError::Failed(e.to_string()))?;
        Ok(
            crate::process::Door::new("git").confine(crate::process::Confinement {
                ruleset,
                protected: Vec::new(),
            }),
        )
    };
    let filters = filters_through(confine()?, dir).await;
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    run_hardened(confine()?, filters, dir, &args).await
}

/// A path argument checked against the workspace, as git wants it (relative).
fn path_arg(ctx: &ToolContext, args: &serde_json::Value) -> Result<Option<String>, ToolError> {
    let Some(path) = optional_str(args, "path") else {
        return Ok(None);
    };
    let resolved = confine(ctx, path)?;
    let rel = resolved.strip_prefix(&ctx.workspace).unwrap_or(&resolved);
    Ok(Some(if rel.as_os_str().is_empty() {
        ".".into()
    } else {
        rel.display().to_string()
    }))
}

/// `git_status`.
pub struct GitStatus;

impl Tool for GitStatus {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "git_status".into(),
            description: "Short git status of the workspace, with the branch.".into(),
            parameters: json!({"type": "object", "properties": {}}),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn run<'a>(
        &'a self,
        _: &'a serde_json::Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        git(
            ctx,
            vec![
                "status".into(),
                "--short".into(),
                "--branch".into(),
                "--ignore-submodules=dirty".into(),
            ],
        )
        .boxed()
    }
}

/// `git_diff`.
pub struct GitDiff;

impl Tool for GitDiff {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "git_diff".into(),
            description:
                "git diff of the workspace (staged: true for the index; name_only for paths)."
                    .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "staged": {"type": "boolean"},
                    "name_only": {"type": "boolean"},
                    "path": {"type": "string"}
                }
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
            let mut argv = vec![
                "diff".to_string(),
                "--no-color".to_string(),
                "--no-ext-diff".to_string(),
                "--no-textconv".to_string(),
                "--ignore-submodules=dirty".to_string(),
            ];
            if optional_bool(args, "staged") {
                argv.push("--staged".into());
            }
            if optional_bool(args, "name_only") {
                argv.push("--name-only".into());
            }
            if let Some(path) = path_arg(ctx, args)? {
                argv.push("--".into());
                argv.push(path);
            }
            git(ctx, argv).await
        }
        .boxed()
    }
}

/// `git_log`.
pub struct GitLog;

impl Tool for GitLog {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "git_log".into(),
            description: "Recent commits, one line each (limit: default 20).".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "limit": {"type": "integer"},
                    "path": {"type": "string"}
                }
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
            let limit = optional_usize(args, "limit")?.unwrap_or(20).clamp(1, 500);
            let mut argv = vec![
                "log".to_string(),
                "--no-color".to_string(),
                "--no-show-signature".to_string(),
                "--format=%h %ad %an: %s".to_string(),
                "--date=short".to_string(),
                format!("-n{limit}"),
            ];
            if let Some(path) = path_arg(ctx, args)? {
                argv.push("--".into());
                argv.push(path);
            }
            git(ctx, argv).await
        }
        .boxed()
    }
}
