//! The two doors (issue 33): every child through `chatcli::process`, every guarded file through
//! `chatcli::files`. Attacks at the seams the audit found, against real processes and a real
//! `chatcli exec`: protected paths a confined command cannot write, a command with no terminal
//! and its own session, provider keys a command never sees, a write to `.git` that `--yes`
//! does not cover, `@git` that runs nothing the repository plants, and the architecture rule that
//! keeps the next feature at the doors.

use std::path::{Path, PathBuf};
use std::time::Duration;

use chatcli::protocol::Mode;
use chatcli::sandbox::{Policy, SandboxSettings};
use chatcli::tools::{Scratch, ToolContext, ToolRegistry, WebSettings};
use serde_json::json;
use wiremock::MockServer;

fn ctx(ws: &Path, home: Option<PathBuf>) -> ToolContext {
    let mut c = ToolContext::new(
        ws.to_path_buf(),
        Scratch::private(ws.join(".scratch")),
        WebSettings::default(),
    );
    c.sandbox = SandboxSettings {
        policy: Policy::WorkspaceWrite,
        home,
        ..SandboxSettings::default()
    };
    c
}

async fn run(ctx: &ToolContext, cmd: &str) -> String {
    let tools = ToolRegistry::for_mode(Mode::Agent);
    let tool = tools.get("run_command").expect("run_command");
    let args = json!({ "cmd": cmd });
    match tokio::time::timeout(Duration::from_secs(60), tool.run(&args, ctx))
        .await
        .expect("the command ended")
    {
        Ok(out) => out.text,
        Err(e) => format!("error: {e}"),
    }
}

/// Whether read-only binds work here; one skip line when not (a failure under `CI=true`).
fn protection() -> bool {
    match chatcli::process::protection_support() {
        Ok(()) => true,
        Err(why) => crate::common::needs(
            &format!("mount namespaces for protected paths ({why})"),
            false,
        ),
    }
}

#[tokio::test]
async fn a_confined_command_cannot_plant_git_hooks_config_or_chatcli_settings() {
    if !protection() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().canonicalize().expect("canonical");
    std::fs::create_dir_all(ws.join(".git/hooks")).expect("mkdir");
    std::fs::write(ws.join(".git/config"), "[core]\n").expect("write");
    std::fs::create_dir(ws.join(".chatcli")).expect("mkdir");
    // chatcli started in a folder that holds its own home (the user ran it in `~`).
    let home = ws.join("home/.config/chatcli");
    std::fs::create_dir_all(&home).expect("mkdir");
    let c = ctx(&ws, Some(home.clone()));
    let out = run(
        &c,
        "git config --file .git/config core.fsmonitor 'touch pwned' ; \
         echo 'touch pwned' > .git/hooks/pre-commit ; \
         echo '{}' > .chatcli/settings.json ; \
         echo '{\"mcpServers\":{}}' > home/.config/chatcli/mcp.json ; \
         echo fine > plain.txt ; echo done",
    )
    .await;
    assert!(out.contains("done"), "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).expect("read"),
        "[core]\n",
        "{out}"
    );
    assert!(!ws.join(".git/hooks/pre-commit").exists(), "{out}");
    assert!(!ws.join(".chatcli/settings.json").exists(), "{out}");
    assert!(!home.join("mcp.json").exists(), "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.join("plain.txt")).expect("the workspace stays writable"),
        "fine\n"
    );
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_command_leads_its_own_session_with_no_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let c = ctx(dir.path(), None);
    // Field 6 of /proc/PID/stat is the session id, field 7 the controlling terminal (0: none).
    let out = run(
        &c,
        "echo pid=$$; echo session=$(cut -d' ' -f6 /proc/$$/stat); echo tty=$(cut -d' ' -f7 /proc/$$/stat)",
    )
    .await;
    let field = |name: &str| -> String {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("no {name} in {out}"))
            .trim()
            .to_string()
    };
    assert_eq!(field("session"), field("pid"), "{out}");
    assert_eq!(field("tty"), "0", "{out}");
}

/// Runs `chatcli exec --yes` against a server that asks for `calls` one after the other, then
/// answers "done"; returns the requests' bodies and the workspace.
async fn exec_with_calls(
    calls: &[(&str, serde_json::Value)],
    extra_env: &[(&str, &str)],
    ws: &Path,
) -> (Vec<String>, String) {
    let home = tempfile::tempdir().expect("tempdir");
    let server = MockServer::start().await;
    let calls: Vec<(&str, String)> = calls.iter().map(|(n, a)| (*n, a.to_string())).collect();
    crate::common::mount_calls_then_answer(&server, &calls, "done").await;
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_chatcli"));
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("CHATCLI_HOME", home.path())
        .env("OPENAI_API_KEY", "sk-test-openai-0123456789")
        .env("ANTHROPIC_API_KEY", "sk-ant-planted-0123456789")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
        .current_dir(ws)
        .args([
            "exec",
            "--yes",
            "--provider",
            "openai",
            "--mode",
            "agent",
            "go",
        ]);
    for (k, v) in extra_env {
        command.env(k, v);
    }
    let out = tokio::task::spawn_blocking(move || command.output())
        .await
        .expect("join")
        .expect("chatcli runs");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let bodies = crate::common::posts(&server)
        .await
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).to_string())
        .collect();
    (bodies, stderr)
}

#[tokio::test]
async fn commands_never_see_provider_keys_unless_allowed_by_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().canonicalize().expect("canonical");
    let (_, stderr) = exec_with_calls(
        &[("run_command", json!({ "cmd": "env > env.txt" }))],
        &[
            ("DEPLOY_TOKEN", "deploy-0123456789"),
            ("PASSED_TOKEN", "passed-0123456789"),
            ("CHATCLI_ENV_ALLOW", "PASSED_TOKEN"),
        ],
        &ws,
    )
    .await;
    let env = std::fs::read_to_string(ws.join("env.txt")).unwrap_or_else(|_| panic!("{stderr}"));
    for withheld in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "DEPLOY_TOKEN"] {
        assert!(
            !env.lines().any(|l| l.starts_with(&format!("{withheld}="))),
            "{withheld} reached the command:\n{env}"
        );
    }
    assert!(env.contains("PASSED_TOKEN=passed-0123456789"), "{env}");
    assert!(env.lines().any(|l| l.starts_with("PATH=")), "{env}");
}

#[tokio::test]
async fn yes_does_not_cover_a_write_into_git() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().canonicalize().expect("canonical");
    std::fs::create_dir(ws.join(".git")).expect("mkdir");
    std::fs::write(ws.join(".git/config"), "[core]\n").expect("write");
    let (bodies, stderr) = exec_with_calls(
        &[(
            "write_file",
            json!({ "file": ".git/config", "content": "[core]\n\tfsmonitor = touch pwned\n" }),
        )],
        &[],
        &ws,
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).expect("read"),
        "[core]\n",
        "{stderr}"
    );
    let last = bodies.last().expect("a second request");
    assert!(last.contains("the path is protected"), "{last}");
}

#[tokio::test]
async fn at_git_runs_nothing_the_repository_planted() {
    if !crate::common::needs("git", crate::common::runs("git", &["--version"])) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().canonicalize().expect("canonical");
    let marker = ws.join("fsmonitor-ran");
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(&ws)
            .output()
            .expect("git")
    };
    git(&["init", "-q"]);
    std::fs::write(ws.join("a.txt"), "a\n").expect("write");
    git(&[
        "config",
        "core.fsmonitor",
        &format!("touch {}; false", marker.display()),
    ]);
    let text = chatcli::prompt::mentions::git_summary(&ws, &SandboxSettings::default()).await;
    assert!(text.contains("a.txt"), "{text}");
    assert!(!marker.exists(), "the planted fsmonitor ran: {text}");
}

/// The architecture rule: files and processes are opened only through the doors.
#[test]
fn only_the_doors_open_files_and_start_processes() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut offenders = Vec::new();
    let mut files = Vec::new();
    collect(&src, &mut files);
    for file in files {
        let rel = file
            .strip_prefix(&src)
            .unwrap_or(&file)
            .to_string_lossy()
            .replace('\\', "/");
        if DOORS.contains(&rel.as_str()) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        // Test code may make its fixtures as it likes: a test module's own file says so first.
        if text.contains("\n#![cfg(test)]") || text.starts_with("#![cfg(test)]") {
            continue;
        }
        let code = match text.find("#[cfg(test)]") {
            Some(at) => &text[..at],
            None => &text,
        };
        for (n, line) in code.lines().enumerate() {
            let line = line.trim_start();
            if line.starts_with("//") {
                continue;
            }
            for needle in FORBIDDEN {
                if line.contains(needle) {
                    offenders.push(format!("src/{rel}:{}: {needle}", n + 1));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "open files through chatcli::files (or private_fs for chatcli's own files) and start \
         processes through chatcli::process::Door, not directly:\n{}",
        offenders.join("\n")
    );
}

/// The doors themselves.
const DOORS: &[&str] = &["files.rs", "private_fs.rs", "process.rs", "sandbox.rs"];

const FORBIDDEN: &[&str] = &[
    "std::process::Command",
    "tokio::process::Command",
    "Command::new(",
    "std::fs::",
    "tokio::fs::",
    "use std::fs",
    "use tokio::fs",
];

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}
