//! Settings files, hooks, permission rules, command files and config profiles, as a user who
//! brings their Claude Code setup meets them: the real `chatcli exec --json` binary against a
//! mock OpenAI server, hooks as real shell processes, files in a real `CHATCLI_HOME`.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::sse::openai_chat;

/// A workspace with its own home folder (`.home`), so settings files stay in the test.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join(".home")).expect("home");
        std::fs::create_dir_all(dir.path().join(".git")).expect("a project root");
        Setup { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn home(&self) -> std::path::PathBuf {
        self.dir.path().join(".home")
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.root().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        std::fs::write(path, text).expect("write");
    }

    fn user_settings(&self, settings: Value) {
        self.write(".home/settings.json", &settings.to_string());
    }
}

/// The mock answers with `call` (a tool call) first, if given, then with text.
async fn mock(call: Option<(&str, Value)>) -> MockServer {
    let server = MockServer::start().await;
    let sse = |body: String| {
        ResponseTemplate::new(200)
            .insert_header("content-type", "text/event-stream")
            .set_body_string(body)
    };
    if let Some((name, args)) = call {
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(sse(openai_chat(
                "",
                Some(("call_1", name, &args.to_string())),
                40,
                0,
                5,
            )))
            .up_to_n_times(1)
            .mount(&server)
            .await;
    }
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(sse(openai_chat("Done.", None, 50, 0, 3)))
        .mount(&server)
        .await;
    server
}

/// Runs `chatcli exec --json ARGS` in the setup; its events and the bodies the server got.
async fn exec(setup: &Setup, server: &MockServer, args: &[&str]) -> (Vec<Value>, Vec<Value>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chatcli"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("CHATCLI_HOME", setup.home())
        .env("CHATCLI_SANDBOX", "off")
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
        .env("OPENAI_MODEL", "gpt-4.1-mini")
        .current_dir(setup.root())
        .args(["exec", "--json"])
        .args(args);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run chatcli");
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(
        events.last().is_some_and(|e| e["type"] == "cost"),
        "the run ended normally: {events:#?}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bodies = server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter(|r| r.method.as_str() == "POST")
        .map(|r| serde_json::from_slice(&r.body).expect("json body"))
        .collect();
    (events, bodies)
}

/// The tool result the model was sent for `call_1` in the second request.
fn tool_result(bodies: &[Value]) -> String {
    bodies
        .get(1)
        .and_then(|b| b["messages"].as_array())
        .and_then(|m| m.iter().find(|m| m["role"] == "tool"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

fn hook(event: &str, matcher: &str, command: &str) -> Value {
    json!({ "hooks": { event: [{ "matcher": matcher, "hooks": [{ "type": "command", "command": command }] }] } })
}

#[tokio::test]
async fn a_pre_tool_use_hook_exiting_2_stops_run_command_and_the_model_reads_why() {
    let setup = Setup::new();
    setup.user_settings(hook(
        "PreToolUse",
        "Bash",
        "cat > pre.json; echo 'rm -rf is not allowed here' >&2; exit 2",
    ));
    let server = mock(Some(("run_command", json!({"cmd": "touch ran.txt"})))).await;
    let (events, bodies) = exec(&setup, &server, &["--yes", "clean up"]).await;
    assert!(
        !setup.root().join("ran.txt").exists(),
        "the command never ran"
    );
    let result = tool_result(&bodies);
    assert!(
        result.contains("blocked by a PreToolUse hook: rm -rf is not allowed here"),
        "{result}"
    );
    let seen: Value = serde_json::from_str(
        &std::fs::read_to_string(setup.root().join("pre.json")).expect("the hook got stdin"),
    )
    .expect("json on stdin");
    assert_eq!(seen["hook_event_name"], "PreToolUse");
    assert_eq!(seen["tool_name"], "run_command");
    assert_eq!(seen["tool_input"]["cmd"], "touch ran.txt");
    assert!(seen["session_id"].as_str().is_some_and(|s| !s.is_empty()));
    let ran = events
        .iter()
        .find(|e| e["type"] == "hook_ran")
        .expect("the hook shows as an event");
    assert_eq!(ran["event"], "PreToolUse");
    assert_eq!(ran["blocked"], true);
}

#[tokio::test]
async fn a_post_tool_use_hook_gets_the_tool_name_and_input_after_write_file() {
    let setup = Setup::new();
    setup.user_settings(hook("PostToolUse", "Edit|Write", "cat > post.json"));
    let server = mock(Some((
        "write_file",
        json!({"file": "notes.md", "content": "hello\n"}),
    )))
    .await;
    exec(&setup, &server, &["--yes", "write the notes"]).await;
    assert_eq!(
        std::fs::read_to_string(setup.root().join("notes.md")).expect("written"),
        "hello\n"
    );
    let seen: Value = serde_json::from_str(
        &std::fs::read_to_string(setup.root().join("post.json")).expect("the hook ran after"),
    )
    .expect("json");
    assert_eq!(seen["hook_event_name"], "PostToolUse");
    assert_eq!(seen["tool_name"], "write_file");
    assert_eq!(seen["tool_input"]["file"], "notes.md");
    assert_eq!(seen["tool_response"]["is_error"], false);
}

#[tokio::test]
async fn a_deny_rule_stops_a_command_even_with_yes_and_an_allow_rule_runs_one_without() {
    let setup = Setup::new();
    setup.user_settings(json!({"permissions": {
        "allow": ["Bash(touch allowed.txt)"],
        "deny": ["run_command(touch denied:*)"]
    }}));
    let server_denied = mock(Some(("run_command", json!({"cmd": "touch denied.txt"})))).await;
    let (_, bodies) = exec(&setup, &server_denied, &["--yes", "go"]).await;
    assert!(!setup.root().join("denied.txt").exists());
    let result = tool_result(&bodies);
    assert!(
        result.contains("denied by the permission rule `run_command(touch denied:*)`"),
        "{result}"
    );
    let server_allowed = mock(Some(("run_command", json!({"cmd": "touch allowed.txt"})))).await;
    exec(&setup, &server_allowed, &["go"]).await;
    assert!(
        setup.root().join("allowed.txt").exists(),
        "an allow rule runs it without --yes"
    );
    let server_other = mock(Some(("run_command", json!({"cmd": "touch other.txt"})))).await;
    let (_, bodies) = exec(&setup, &server_other, &["go"]).await;
    assert!(!setup.root().join("other.txt").exists());
    assert!(
        tool_result(&bodies).contains("--yes"),
        "no rule: exec still refuses"
    );
}

#[tokio::test]
async fn a_command_file_expands_with_its_arguments_in_exec() {
    let setup = Setup::new();
    setup.write("src/a.rs", "fn main() {}\n");
    setup.write(
        ".chatcli/commands/review.md",
        "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $1 for bugs. Whole request: $ARGUMENTS",
    );
    let server = mock(None).await;
    let (events, bodies) = exec(&setup, &server, &["/review src/a.rs"]).await;
    let sent = bodies[0].to_string();
    assert!(
        sent.contains("Review src/a.rs for bugs. Whole request: src/a.rs"),
        "{sent}"
    );
    assert!(!sent.contains("$ARGUMENTS"));
    let prompt = events
        .iter()
        .find(|e| e["type"] == "prompt")
        .expect("prompt");
    assert_eq!(
        prompt["text"], "/review src/a.rs",
        "the user's words are what the log shows"
    );
}

#[tokio::test]
async fn a_command_files_shell_line_asks_first_so_exec_refuses_it_without_yes() {
    let setup = Setup::new();
    setup.write(
        ".chatcli/commands/st.md",
        "Status:\n!`touch shell-ran.txt && echo ok`",
    );
    let server = mock(None).await;
    let (_, bodies) = exec(&setup, &server, &["/st"]).await;
    assert!(!setup.root().join("shell-ran.txt").exists());
    let sent = bodies[0].to_string();
    assert!(sent.contains("was not run"), "{sent}");
    let server = server_again().await;
    let (_, bodies) = exec(&setup, &server, &["--yes", "/st"]).await;
    assert!(setup.root().join("shell-ran.txt").exists());
    assert!(
        bodies[0].to_string().contains("exit code 0"),
        "{}",
        bodies[0]
    );
}

async fn server_again() -> MockServer {
    mock(None).await
}

#[tokio::test]
async fn config_toml_takes_agent_smart_route_by_its_variable_name() {
    let setup = Setup::new();
    setup.write(".home/config.toml", "agent_smart_route = \"auto\"\n");
    let server = mock(None).await;
    let (events, bodies) = exec(&setup, &server, &["--mode", "agent", "what is a mutex?"]).await;
    let route = events.iter().find(|e| e["type"] == "route").expect("route");
    assert_eq!(route["decision"], "chat");
    assert!(bodies[0].get("tools").is_none(), "{}", bodies[0]);
}

#[tokio::test]
async fn a_profile_chosen_with_the_flag_overrides_the_top_level() {
    let setup = Setup::new();
    setup.write(
        ".home/config.toml",
        "agent_smart_route = \"auto\"\n[profiles.tools]\nagent_smart_route = \"off\"\n",
    );
    let server = mock(None).await;
    let (_, bodies) = exec(
        &setup,
        &server,
        &["--profile", "tools", "--mode", "agent", "what is a mutex?"],
    )
    .await;
    assert!(
        bodies[0].get("tools").is_some(),
        "the profile turned routing off"
    );
}

#[tokio::test]
async fn prompt_stop_and_session_hooks_run_as_real_processes() {
    let setup = Setup::new();
    setup.user_settings(json!({"hooks": {
        "SessionStart": [{"hooks": [{"command": "echo 'the build uses just'"}]}],
        "UserPromptSubmit": [{"hooks": [{"command": "cat > prompt.json; echo '{\"additionalContext\": \"ticket ABC-1\"}'"}]}],
        "Stop": [{"hooks": [{"command": "if [ -e stopped-once ]; then exit 0; fi; touch stopped-once; echo 'run the tests first' >&2; exit 2"}]}],
        "SessionEnd": [{"hooks": [{"command": "cat > end.json"}]}]
    }}));
    let server = mock(None).await;
    let (events, bodies) = exec(&setup, &server, &["say hi"]).await;
    let first = bodies[0].to_string();
    assert!(
        first.contains("the build uses just") && first.contains("ticket ABC-1"),
        "{first}"
    );
    let system = bodies[0]["messages"][0].to_string();
    assert!(
        !system.contains("ticket ABC-1"),
        "hook context stays out of the cached prefix"
    );
    let prompt: Value = serde_json::from_str(
        &std::fs::read_to_string(setup.root().join("prompt.json")).expect("prompt hook"),
    )
    .expect("json");
    assert_eq!(prompt["prompt"], "say hi");
    assert_eq!(bodies.len(), 2, "the Stop hook sent the model back once");
    assert!(bodies[1].to_string().contains("run the tests first"));
    let end: Value = serde_json::from_str(
        &std::fs::read_to_string(setup.root().join("end.json")).expect("session end hook"),
    )
    .expect("json");
    assert_eq!(end["hook_event_name"], "SessionEnd");
    let kinds: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "hook_ran")
        .filter_map(|e| e["event"].as_str())
        .collect();
    for event in ["SessionStart", "UserPromptSubmit", "Stop"] {
        assert!(kinds.contains(&event), "{event} in {kinds:?}");
    }
}

#[tokio::test]
async fn a_user_prompt_submit_hook_exiting_2_blocks_the_prompt_before_any_request() {
    let setup = Setup::new();
    setup.user_settings(hook(
        "UserPromptSubmit",
        "",
        "echo 'no secrets in prompts' >&2; exit 2",
    ));
    let server = mock(None).await;
    let (events, bodies) = exec(&setup, &server, &["my password is hunter2"]).await;
    assert!(bodies.is_empty(), "nothing was sent: {bodies:?}");
    assert!(
        events.iter().any(|e| e["type"] == "notice"
            && e["message"]
                .as_str()
                .is_some_and(|m| m.contains("no secrets in prompts"))),
        "{events:#?}"
    );
}

#[tokio::test]
async fn a_project_settings_file_is_held_back_until_approved_but_its_deny_rules_apply() {
    let setup = Setup::new();
    setup.write(
        ".chatcli/settings.json",
        &json!({
            "permissions": {"allow": ["Bash"], "deny": ["run_command(touch no:*)"]},
            "hooks": hook("PreToolUse", "", "touch project-hook-ran")["hooks"].clone()
        })
        .to_string(),
    );
    let server = mock(Some(("run_command", json!({"cmd": "touch yes.txt"})))).await;
    let (events, bodies) = exec(&setup, &server, &["go"]).await;
    assert!(
        !setup.root().join("yes.txt").exists(),
        "its allow rule is off"
    );
    assert!(
        !setup.root().join("project-hook-ran").exists(),
        "its hook is off"
    );
    assert!(tool_result(&bodies).contains("--yes"));
    assert!(events.iter().any(|e| {
        e["type"] == "notice"
            && e["message"]
                .as_str()
                .is_some_and(|m| m.contains("until you approve the file"))
    }));
    let server = mock(Some(("run_command", json!({"cmd": "touch no.txt"})))).await;
    let (_, bodies) = exec(&setup, &server, &["--yes", "go"]).await;
    assert!(
        !setup.root().join("no.txt").exists(),
        "its deny rule applies at once"
    );
    assert!(tool_result(&bodies).contains("denied by the permission rule"));
}

mod through_channels {
    //! The hooks only a person at the TUI meets (a dialog, `/compact`), and a project settings
    //! file approved in its dialog: the agent driven through its channels with the TUI's
    //! approval policy.

    use std::sync::Arc;
    use std::time::Duration;

    use chatcli::agent;
    use chatcli::protocol::{AgentEvent, ApprovalDecision, Mode, Op};
    use chatcli::provider::Provider;
    use serde_json::{Value, json};

    use super::{Setup, hook};
    use crate::common::events_until;
    use crate::common::scripted::{Scripted, respond};

    /// The JSON a hook wrote; a hook that runs in the background (Notification) gets 5 s.
    async fn read_json(path: std::path::PathBuf) -> Value {
        for _ in 0..100 {
            if let Ok(text) = std::fs::read_to_string(&path)
                && let Ok(json) = serde_json::from_str(&text)
            {
                return json;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("{} was not written by its hook", path.display())
    }

    #[tokio::test]
    async fn notification_fires_on_a_dialog_pre_compact_on_compact_and_an_approved_project_file_applies()
     {
        let setup = Setup::new();
        setup.user_settings(json!({"hooks": {
            "Notification": [{"hooks": [{"command": "cat > notified.json"}]}],
            "PreCompact": [{"hooks": [{"command": "cat > compact.json"}]}]
        }}));
        setup.write(
            ".chatcli/settings.json",
            &hook("PostToolUse", "Write", "touch project-hook-ran").to_string(),
        );
        let root = setup.root().canonicalize().expect("root");
        let mut opts = crate::common::options(&root, Mode::Agent);
        opts.home = Some(setup.home());
        opts.setup = chatcli::user_settings::load(&setup.home(), &root);
        let call = [(
            "w1",
            "write_file",
            json!({"file": "a.txt", "content": "a\n"}),
        )];
        let provider = Scripted::new(
            vec![
                respond("", &call),
                respond("written", &[]),
                respond("summary", &[]),
            ],
            Duration::ZERO,
        );
        let mut handle = agent::spawn(Arc::clone(&provider) as Arc<dyn Provider>, opts);
        let asked = events_until(&mut handle, |e| {
            matches!(e, AgentEvent::ApprovalRequest { .. })
        })
        .await;
        let Some(AgentEvent::ApprovalRequest { id, preview, .. }) = asked.last() else {
            panic!("the project file is asked about: {asked:?}");
        };
        assert!(
            preview
                .as_deref()
                .is_some_and(|p| p.contains("hook PostToolUse: touch project-hook-ran")),
            "{preview:?}"
        );
        handle
            .ops
            .send(Op::Approve {
                id: id.clone(),
                decision: ApprovalDecision::AllowOnce,
            })
            .expect("alive");
        handle
            .ops
            .send(Op::Submit {
                text: "write a.txt".into(),
                mode: Mode::Agent,
            })
            .expect("alive");
        let events = events_until(&mut handle, |e| {
            matches!(e, AgentEvent::ApprovalRequest { .. })
        })
        .await;
        let Some(AgentEvent::ApprovalRequest { id, .. }) = events.last() else {
            panic!("the write is asked for");
        };
        handle
            .ops
            .send(Op::Approve {
                id: id.clone(),
                decision: ApprovalDecision::AllowOnce,
            })
            .expect("alive");
        events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
        let notified = read_json(setup.root().join("notified.json")).await;
        assert_eq!(notified["hook_event_name"], "Notification");
        assert!(
            notified["message"]
                .as_str()
                .is_some_and(|m| m.contains("write_file"))
        );
        assert!(
            setup.root().join("project-hook-ran").exists(),
            "the approved file's hook ran"
        );
        handle.ops.send(Op::Compact).expect("alive");
        events_until(&mut handle, |e| matches!(e, AgentEvent::Notice { .. })).await;
        let compact = read_json(setup.root().join("compact.json")).await;
        assert_eq!(compact["trigger"], "manual");
        // Approved for good: the next session in this workspace does not ask again.
        let again = chatcli::user_settings::load(&setup.home(), &root);
        assert!(
            again.pending.is_none() && again.hooks.len() == 3,
            "{again:?}"
        );
    }
}

#[test]
fn command_files_join_the_palette_and_f1_and_enter_sends_them_as_a_prompt() {
    use chatcli::protocol::{AgentEvent, McpPromptCommand, Mode, Op};
    use crossterm::event::KeyCode;

    use crate::common::keys::{app_for, drain, key, type_text};
    let (mut app, mut ops) = app_for(Mode::Agent, "demo (offline)", "demo");
    app.handle_agent_event(AgentEvent::CommandFiles {
        commands: vec![McpPromptCommand {
            name: "review".into(),
            args: "FILE".into(),
            about: "Review a file for bugs".into(),
            file: true,
        }],
    });
    type_text(&mut app, "/rev");
    let screen = crate::common::screen_at(&mut app, 100, 30);
    assert!(
        screen.contains("/review") && screen.contains("Review a file for bugs"),
        "{screen}"
    );
    type_text(&mut app, "iew src/a.rs");
    app.handle_key(key(KeyCode::Enter));
    let sent = drain(&mut ops);
    assert!(
        sent.iter()
            .any(|op| matches!(op, Op::Submit { text, .. } if text == "/review src/a.rs")),
        "{sent:?}"
    );
    app.handle_key(key(KeyCode::F(1)));
    let help = crate::common::screen_at(&mut app, 100, 60);
    assert!(help.contains("/review"), "{help}");
}
