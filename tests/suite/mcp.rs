//! MCP against real servers: the reference `@modelcontextprotocol/server-everything` (npx) and
//! the project's own FastMCP server (`tests/mcp/server.py`, Python SDK). A whole agent turn
//! calls an MCP tool; 60 tools switch to deferred schemas with a byte-identical tools array; a
//! notification lands in the next `<context>` block and never in the system prompt; a crashing
//! server is reported once and the session goes on; a project server waits for approval.
//! Locally a missing `npx` or `python3 -c "import mcp"` skips with one line; in CI it fails.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chatcli::agent::{self, AgentHandle, ApprovalPolicy};
use chatcli::conversation::{ContentBlock, ModelRequest, Role};
use chatcli::env::Env;
use chatcli::mcp::{self, McpHandle, McpSettings, Status};
use chatcli::protocol::{AgentEvent, Mode, Op};
use serde_json::{Value, json};

use crate::common::scripted::{Scripted, respond};
use crate::common::{events_until, options};

/// Whether `program args` runs and exits 0; in CI a failure panics, locally it prints a skip.
fn available(what: &str, program: &str, args: &[&str]) -> bool {
    crate::common::needs(
        &format!("{what} (`{program} {}`)", args.join(" ")),
        crate::common::runs(program, args),
    )
}

fn python_mcp() -> bool {
    available(
        "the Python MCP SDK (pip install 'mcp<2')",
        "python3",
        &["-c", "import mcp.server.fastmcp"],
    )
}

fn npx() -> bool {
    available("npx (Node.js)", "npx", &["--version"])
}

fn server_py() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp/server.py")
        .display()
        .to_string()
}

fn settings(budget: u64) -> McpSettings {
    McpSettings {
        startup_timeout: Duration::from_secs(90),
        schema_budget: budget,
    }
}

/// Writes `servers` as the user's `mcp.json` and starts them for `workspace`.
async fn start(home: &Path, workspace: &Path, servers: Value, budget: u64) -> McpHandle {
    std::fs::write(
        home.join("mcp.json"),
        json!({ "mcpServers": servers }).to_string(),
    )
    .expect("write mcp.json");
    let settings = settings(budget);
    let (hub, startup) = mcp::start_session(
        home,
        workspace,
        &Env::from_process().expect("a UTF-8 environment"),
        &settings,
        false,
    );
    assert!(startup.notices.is_empty(), "{:?}", startup.notices);
    hub.wait_started().await;
    for report in hub.report() {
        assert_eq!(report.status, Status::Running, "{report:?}");
    }
    McpHandle { hub, settings }
}

fn python_server(extra: &[&str]) -> Value {
    let mut args = vec![server_py()];
    args.extend(extra.iter().map(|s| s.to_string()));
    json!({ "command": "python3", "args": args })
}

fn spawn(
    home: &Path,
    workspace: &Path,
    provider: Arc<Scripted>,
    mcp: McpHandle,
    approval: ApprovalPolicy,
) -> AgentHandle {
    let mut opts = options(workspace, Mode::Run);
    opts.approval = approval;
    opts.home = Some(home.to_path_buf());
    opts.mcp = Some(mcp);
    agent::spawn(provider, opts)
}

async fn submit(handle: &mut AgentHandle, text: &str) -> Vec<AgentEvent> {
    handle
        .ops
        .send(Op::Submit {
            text: text.into(),
            mode: Mode::Run,
        })
        .expect("agent alive");
    events_until(handle, |e| matches!(e, AgentEvent::Cost { .. })).await
}

/// The tool results of a request's last message: (content, is_error).
fn last_results(request: &ModelRequest) -> Vec<(String, bool)> {
    request
        .messages
        .last()
        .map(|m| {
            m.content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolResult {
                        content, is_error, ..
                    } => Some((content.clone(), *is_error)),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

fn tool_names(request: &ModelRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name.clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_turn_calls_a_tool_of_the_reference_server_and_sends_its_result_back() {
    if !npx() {
        return;
    }
    let home = tempfile::tempdir().expect("home");
    let ws = tempfile::tempdir().expect("workspace");
    let everything = json!({
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-everything"],
        "env": {"npm_config_prefer_offline": "true"}
    });
    let mcp = start(
        home.path(),
        ws.path(),
        json!({ "everything": everything }),
        1_000_000,
    )
    .await;
    let provider = Scripted::new(
        vec![
            respond(
                "",
                &[(
                    "c1",
                    "mcp__everything__echo",
                    json!({"message": "hello from chatcli"}),
                )],
            ),
            respond("The server said hello back.", &[]),
        ],
        Duration::ZERO,
    );
    let mut handle = spawn(
        home.path(),
        ws.path(),
        Arc::clone(&provider),
        mcp,
        ApprovalPolicy::AutoApprove,
    );
    let events = submit(&mut handle, "echo something through MCP").await;
    let requests = provider.requests();
    assert_eq!(requests.len(), 2, "{events:?}");
    let names = tool_names(&requests[0]);
    let first_mcp = names
        .iter()
        .position(|n| n.starts_with("mcp__"))
        .expect("MCP tools offered");
    assert!(
        names[..first_mcp].iter().all(|n| !n.starts_with("mcp__"))
            && names[first_mcp..].iter().all(|n| n.starts_with("mcp__")),
        "built-in tools first, then MCP tools: {names:?}"
    );
    let mcp_names = names[first_mcp..].to_vec();
    let mut sorted = mcp_names.clone();
    sorted.sort();
    assert_eq!(mcp_names, sorted, "MCP tools sorted by name");
    assert!(mcp_names.contains(&"mcp__everything__echo".to_string()));
    let results = last_results(&requests[1]);
    assert_eq!(results.len(), 1);
    assert!(!results[0].1, "{results:?}");
    assert!(
        results[0].0.contains("hello from chatcli"),
        "the server's answer goes back to the model: {results:?}"
    );
    assert!(events.iter().any(
        |e| matches!(e, AgentEvent::TurnFinished { text, .. } if text.contains("hello back"))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_tools_are_deferred_behind_a_catalog_and_the_tools_array_never_changes() {
    if !python_mcp() {
        return;
    }
    let home = tempfile::tempdir().expect("home");
    let ws = tempfile::tempdir().expect("workspace");
    let mcp = start(
        home.path(),
        ws.path(),
        json!({ "lookup": python_server(&["many"]) }),
        mcp::DEFAULT_SCHEMA_BUDGET,
    )
    .await;
    let direct = mcp::McpToolSet::build(&mcp.hub, u64::MAX);
    assert!(direct.entries().len() >= 60 && !direct.deferred);
    let provider = Scripted::new(
        vec![
            respond(
                "",
                &[(
                    "c1",
                    "mcp_describe",
                    json!({"tools": ["mcp__lookup__lookup_07"]}),
                )],
            ),
            respond(
                "",
                &[(
                    "c2",
                    "mcp_call",
                    json!({"tool": "mcp__lookup__lookup_07", "arguments": {"query": "rust", "limit": 3}}),
                )],
            ),
            respond(
                "",
                &[(
                    "c3",
                    "mcp_call",
                    json!({"tool": "mcp__lookup__echo", "arguments": {"text": "x"}}),
                )],
            ),
            respond(
                "",
                &[(
                    "c4",
                    "mcp_call",
                    json!({"tool": "mcp__lookup__nope", "arguments": {}}),
                )],
            ),
            respond("Found it.", &[]),
        ],
        Duration::ZERO,
    );
    let mut handle = spawn(
        home.path(),
        ws.path(),
        Arc::clone(&provider),
        mcp,
        ApprovalPolicy::Deny,
    );
    submit(&mut handle, "look up rust in collection 7").await;
    let requests = provider.requests();
    assert_eq!(requests.len(), 5);
    let tools = serde_json::to_string(&requests[0].tools).expect("json");
    let system = serde_json::to_string(&requests[0].system).expect("json");
    for request in &requests[1..] {
        assert_eq!(serde_json::to_string(&request.tools).expect("json"), tools);
        assert_eq!(
            serde_json::to_string(&request.system).expect("json"),
            system
        );
    }
    let names = tool_names(&requests[0]);
    assert!(names.contains(&"mcp_call".into()) && names.contains(&"mcp_describe".into()));
    assert!(!names.iter().any(|n| n.starts_with("mcp__")), "{names:?}");
    let catalog = requests[0]
        .system
        .iter()
        .find(|b| b.name == "mcp catalog")
        .expect("a catalog block");
    assert!(catalog.stable);
    assert_eq!(
        catalog
            .text
            .lines()
            .filter(|l| l.starts_with("mcp__lookup__"))
            .count(),
        direct.entries().len()
    );
    assert!(catalog.text.contains(
        "mcp__lookup__lookup_07: Look up records in collection number 07 by a free-text query."
    ));
    // mcp_describe returns the schema; the read-only call runs without approval (policy Deny).
    let described = &last_results(&requests[1])[0];
    assert!(
        !described.1 && described.0.contains("\"limit\""),
        "{described:?}"
    );
    let called = &last_results(&requests[2])[0];
    assert!(
        !called.1 && called.0.contains("tool 07: rust (limit 3"),
        "{called:?}"
    );
    let echoed = &last_results(&requests[3])[0];
    assert!(!echoed.1 && echoed.0.contains("echo: x"), "{echoed:?}");
    let unknown = &last_results(&requests[4])[0];
    assert!(
        unknown.1 && unknown.0.contains("no such MCP tool"),
        "{unknown:?}"
    );

    // The measured example of `docs/guide/mcp.md`: the fixed part of a request, direct vs deferred.
    let count = |text: &str| chatcli::tokens::count(text);
    let builtin: Vec<_> = requests[0]
        .tools
        .iter()
        .filter(|t| !t.name.starts_with("mcp_"))
        .cloned()
        .collect();
    let builtin_tokens = count(&serde_json::to_string(&builtin).expect("json"));
    let deferred_tokens = count(&tools) - builtin_tokens + count(&catalog.text);
    // Exact here (the session itself decides from an estimate, `schema_tokens`).
    let specs: Vec<_> = direct.entries().iter().map(|e| e.spec()).collect();
    let direct_tokens = count(&serde_json::to_string(&specs).expect("json"));
    eprintln!(
        "mcp schemas with {} tools: direct {} tokens per request, deferred {} tokens (catalog {} + mcp_call/mcp_describe)",
        direct.entries().len(),
        direct_tokens,
        deferred_tokens,
        count(&catalog.text)
    );
    assert!(deferred_tokens * 2 < direct_tokens);
    assert!(deferred_tokens * 2 < direct.schema_tokens);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_during_a_call_rides_in_the_next_context_block_only() {
    if !python_mcp() {
        return;
    }
    let home = tempfile::tempdir().expect("home");
    let ws = tempfile::tempdir().expect("workspace");
    let mcp = start(
        home.path(),
        ws.path(),
        json!({ "py": python_server(&[]) }),
        mcp::DEFAULT_SCHEMA_BUDGET,
    )
    .await;
    let provider = Scripted::new(
        vec![
            respond(
                "",
                &[(
                    "c1",
                    "mcp__py__notify",
                    json!({"message": "disk almost full on /data"}),
                )],
            ),
            respond("", &[("c2", "mcp__py__pixel", json!({}))]),
            respond(
                "",
                &[("c3", "mcp__py__fail", json!({"reason": "bad input"}))],
            ),
            respond("Noted.", &[]),
        ],
        Duration::ZERO,
    );
    let mut handle = spawn(
        home.path(),
        ws.path(),
        Arc::clone(&provider),
        mcp,
        ApprovalPolicy::AutoApprove,
    );
    submit(&mut handle, "send a notification").await;
    let requests = provider.requests();
    assert_eq!(requests.len(), 4);
    let body = |r: &ModelRequest| serde_json::to_string(&r.messages).expect("json");
    assert!(!body(&requests[0]).contains("disk almost full"));
    let last = requests[1].messages.last().expect("a message");
    assert_eq!(last.role, Role::User);
    let context = last
        .content
        .iter()
        .find_map(|b| match b {
            ContentBlock::Text { text } if text.starts_with("<context>") => Some(text.clone()),
            _ => None,
        })
        .expect("a <context> block after the tool result");
    assert!(
        context.contains("[mcp channel]")
            && context.contains("[py] info")
            && context.contains("disk almost full on /data"),
        "{context}"
    );
    for request in &requests {
        let system = serde_json::to_string(&request.system).expect("json");
        assert!(
            !system.contains("disk almost full"),
            "never in the system prompt"
        );
    }
    assert_eq!(
        body(&requests[3]).matches("[mcp channel]").count(),
        1,
        "sent once, then it is history"
    );
    // An image is saved to the scratch folder and referenced by path; isError is an error.
    let image = &last_results(&requests[2])[0];
    let path = image
        .0
        .split("saved to ")
        .nth(1)
        .and_then(|rest| rest.strip_suffix(']'))
        .expect("a saved path");
    assert!(
        std::fs::read(path).is_ok_and(|b| b.starts_with(b"\x89PNG")),
        "{image:?}"
    );
    let failed = &last_results(&requests[3])[0];
    assert!(
        failed.1 && failed.0.contains("failed on purpose: bad input"),
        "{failed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_crashes_mid_session_is_reported_once_and_the_session_goes_on() {
    if !python_mcp() {
        return;
    }
    let home = tempfile::tempdir().expect("home");
    let ws = tempfile::tempdir().expect("workspace");
    let mcp = start(
        home.path(),
        ws.path(),
        json!({ "py": python_server(&[]) }),
        mcp::DEFAULT_SCHEMA_BUDGET,
    )
    .await;
    let hub = Arc::clone(&mcp.hub);
    let provider = Scripted::new(
        vec![
            respond("", &[("c1", "mcp__py__crash", json!({}))]),
            respond(
                "",
                &[("c2", "mcp__py__echo", json!({"text": "still there?"}))],
            ),
            respond("The server is gone.", &[]),
            respond("Plain answer.", &[]),
        ],
        Duration::ZERO,
    );
    let mut handle = spawn(
        home.path(),
        ws.path(),
        Arc::clone(&provider),
        mcp,
        ApprovalPolicy::AutoApprove,
    );
    let mut events = submit(&mut handle, "crash the server").await;
    events.extend(submit(&mut handle, "and now?").await);
    let requests = provider.requests();
    assert_eq!(requests.len(), 4, "the session went on");
    assert!(
        last_results(&requests[1])[0].1,
        "the crashing call is an error"
    );
    let echo = &last_results(&requests[2])[0];
    assert!(echo.1 && echo.0.contains("MCP server `py`"), "{echo:?}");
    let notices: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Notice { message } if message.contains("MCP server `py`") => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 1, "reported once: {notices:?}");
    assert!(matches!(&hub.report()[0].status, Status::Failed(why) if why.contains("stopped")));
    assert!(mcp::listing(&hub.report()).contains("py · failed"));
    assert_eq!(
        tool_names(&requests[3]),
        tool_names(&requests[0]),
        "the tools array stays as it was"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_server_does_not_start_until_approved_for_the_workspace() {
    if !python_mcp() {
        return;
    }
    let home = tempfile::tempdir().expect("home");
    let ws = tempfile::tempdir().expect("workspace");
    std::fs::create_dir(ws.path().join(".git")).expect("git dir");
    let marker = ws.path().join("started");
    let script = format!(
        "touch '{}'; exec python3 '{}'",
        marker.display(),
        server_py()
    );
    std::fs::write(
        ws.path().join(".mcp.json"),
        json!({"mcpServers": {"proj": {"command": "sh", "args": ["-c", script]}}}).to_string(),
    )
    .expect("write .mcp.json");
    let settings = settings(mcp::DEFAULT_SCHEMA_BUDGET);
    let env = Env::from_process().expect("a UTF-8 environment");
    let (hub, startup) = mcp::start_session(home.path(), ws.path(), &env, &settings, false);
    hub.wait_started().await;
    assert_eq!(hub.report()[0].status, Status::NotApproved);
    assert!(
        startup
            .notices
            .iter()
            .any(|n| n.contains("/mcp approve proj")),
        "{:?}",
        startup.notices
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!marker.exists(), "nothing ran before approval");

    // The TUI's dialog: the agent asks once at session start, showing what would run.
    let provider = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
    let mut handle = spawn(
        home.path(),
        ws.path(),
        provider,
        McpHandle {
            hub: Arc::clone(&hub),
            settings: settings.clone(),
        },
        ApprovalPolicy::Ask,
    );
    let events = events_until(&mut handle, |e| {
        matches!(e, AgentEvent::ApprovalRequest { .. })
    })
    .await;
    let Some(AgentEvent::ApprovalRequest { id, args, .. }) = events.last() else {
        panic!("no approval request: {events:?}");
    };
    assert_eq!(args["server"], "proj");
    assert_eq!(args["command"], "sh");
    assert!(!marker.exists(), "asking runs nothing");
    handle
        .ops
        .send(Op::Approve {
            id: id.clone(),
            decision: chatcli::protocol::ApprovalDecision::AllowOnce,
        })
        .expect("agent alive");
    events_until(&mut handle, |e| matches!(e, AgentEvent::Notice { message } if message.contains("approved MCP server `proj`"))).await;
    hub.wait_started().await;
    assert_eq!(hub.report()[0].status, Status::Running);
    assert!(marker.exists());
    hub.shutdown();
    let _ = std::fs::remove_file(&marker);

    // The approval is remembered for this workspace: the next session starts it at once.
    let (again, startup) = mcp::start_session(home.path(), ws.path(), &env, &settings, false);
    assert!(startup.notices.is_empty(), "{:?}", startup.notices);
    again.wait_started().await;
    assert_eq!(again.report()[0].status, Status::Running);
    again.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_prompts_become_commands_and_run_as_prompts() {
    if !python_mcp() {
        return;
    }
    let home = tempfile::tempdir().expect("home");
    let ws = tempfile::tempdir().expect("workspace");
    let mcp = start(
        home.path(),
        ws.path(),
        json!({ "py": python_server(&[]) }),
        mcp::DEFAULT_SCHEMA_BUDGET,
    )
    .await;
    let provider = Scripted::new(vec![respond("Reviewed.", &[])], Duration::ZERO);
    let mut handle = spawn(
        home.path(),
        ws.path(),
        Arc::clone(&provider),
        mcp,
        ApprovalPolicy::Ask,
    );
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::McpPrompts { .. })).await;
    let Some(AgentEvent::McpPrompts { commands }) = events.last() else {
        panic!("no prompts: {events:?}");
    };
    assert_eq!(commands.len(), 1);
    assert_eq!(commands[0].name, "py:review");
    assert_eq!(commands[0].args, "path");
    handle
        .ops
        .send(Op::McpPrompt {
            server: "py".into(),
            prompt: "review".into(),
            args: "src/main.rs".into(),
            mode: Mode::Run,
        })
        .expect("agent alive");
    events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    let requests = provider.requests();
    assert_eq!(requests.len(), 1);
    let first = serde_json::to_string(&requests[0].messages[0]).expect("json");
    assert!(first.contains("Please review src/main.rs."), "{first}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_server_over_streamable_http_lists_and_calls() {
    if !npx() {
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let server = tokio::process::Command::new("npx")
        .args([
            "-y",
            "@modelcontextprotocol/server-everything",
            "streamableHttp",
        ])
        .env("PORT", port.to_string())
        .env("npm_config_prefer_offline", "true")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .expect("npx runs");
    let _group = KillGroup(server.id().expect("a pid"));
    let mut up = false;
    for _ in 0..240 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(up, "server-everything listens on {port}");
    let home = tempfile::tempdir().expect("home");
    let ws = tempfile::tempdir().expect("workspace");
    let mcp = start(
        home.path(),
        ws.path(),
        json!({ "ev": {"type": "http", "url": format!("http://127.0.0.1:{port}/mcp"), "headers": {"X-Chatcli-Test": "1"}} }),
        u64::MAX,
    )
    .await;
    let report = &mcp.hub.report()[0];
    assert_eq!(report.transport, "http");
    assert!(report.tools > 0 && !report.prompts.is_empty(), "{report:?}");
    let set = mcp::McpToolSet::build(&mcp.hub, u64::MAX);
    let tools = set.tools();
    let echo = tools
        .iter()
        .find(|t| t.spec().name == "mcp__ev__echo")
        .expect("echo offered");
    let ctx = chatcli::tools::ToolContext::new(
        ws.path().to_path_buf(),
        chatcli::tools::Scratch::private(ws.path().join("scratch")),
        Default::default(),
    );
    let out = echo
        .run(&json!({"message": "over http"}), &ctx)
        .await
        .expect("echo answers");
    assert!(out.text.contains("over http"), "{}", out.text);
    mcp.hub.shutdown();
}

/// Kills the process group a test started, also when the test fails.
struct KillGroup(u32);

impl Drop for KillGroup {
    fn drop(&mut self) {
        // SAFETY: signals the process group the test started; no memory is touched.
        unsafe {
            libc::kill(-(self.0 as i32), libc::SIGKILL);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_tool_list_reaches_the_next_prompt_and_is_announced() {
    if !python_mcp() {
        return;
    }
    let home = tempfile::tempdir().expect("home");
    let ws = tempfile::tempdir().expect("workspace");
    let mcp = start(
        home.path(),
        ws.path(),
        json!({ "py": python_server(&[]) }),
        mcp::DEFAULT_SCHEMA_BUDGET,
    )
    .await;
    let hub = Arc::clone(&mcp.hub);
    let provider = Scripted::new(
        vec![
            respond("", &[("c1", "mcp__py__grow", json!({}))]),
            respond("Grew.", &[]),
            respond("Now there is more.", &[]),
        ],
        Duration::ZERO,
    );
    let mut handle = spawn(
        home.path(),
        ws.path(),
        Arc::clone(&provider),
        mcp,
        ApprovalPolicy::AutoApprove,
    );
    let first = submit(&mut handle, "grow the server").await;
    assert!(!first.iter().any(
        |e| matches!(e, AgentEvent::Notice { message } if message.contains("tool list changed"))
    ));
    let grown = "mcp__py__grown".to_string();
    for _ in 0..100 {
        if mcp::McpToolSet::build(&hub, u64::MAX)
            .entries()
            .iter()
            .any(|e| e.name == grown)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let second = submit(&mut handle, "and now?").await;
    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    assert!(
        !tool_names(&requests[1]).contains(&grown),
        "unchanged within a prompt"
    );
    assert!(
        tool_names(&requests[2]).contains(&grown),
        "{:?}",
        tool_names(&requests[2])
    );
    assert!(second.iter().any(
        |e| matches!(e, AgentEvent::Notice { message } if message.contains("MCP tool list changed"))
    ));
}
