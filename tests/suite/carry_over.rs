//! A reference user's setup carried over (issue #40): the reference system's microcompact knobs
//! act, and a knob that cannot act says so once at the start.

use std::time::Duration;

use chatcli::agent::{self, AgentHandle, AgentOptions};
use chatcli::conversation::{ContentBlock, ModelRequest};
use chatcli::protocol::{AgentEvent, Mode, Op};
use serde_json::json;

use crate::common::events_until;
use crate::common::scripted::{Scripted, respond};

/// The compaction settings a user's environment resolves to.
fn compaction_from(vars: &[(&str, &str)]) -> chatcli::agent::compaction::Settings {
    let home = tempfile::tempdir().expect("home");
    let mut pairs: Vec<(String, String)> =
        vec![("CHATCLI_HOME".into(), home.path().display().to_string())];
    pairs.extend(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let overrides = chatcli::config::Overrides {
        cwd: Some(home.path().to_path_buf()),
        ..Default::default()
    };
    chatcli::config::Config::resolve(&overrides, chatcli::env::Env::from_pairs(pairs))
        .expect("config")
        .compaction
}

struct Run {
    requests: Vec<ModelRequest>,
    events: Vec<AgentEvent>,
}

/// A 9 KB read, then three more requests (small reads), then the answer, with the knobs of
/// `vars`, on a priced model (the default schedule weighs cache prices).
async fn nine_kb_session(vars: &[(&str, &str)]) -> Run {
    let dir = tempfile::tempdir().expect("workspace");
    let big: String = (1..=340)
        .map(|i| format!("fn f{i:03}() {{ let v = {i:03}; }}\n"))
        .collect();
    assert!((8_500..9_500).contains(&big.len()), "{}", big.len());
    std::fs::write(dir.path().join("big.txt"), &big).expect("write");
    let mut script = vec![respond(
        "",
        &[("big", "read_file", json!({"file": "big.txt"}))],
    )];
    for i in 0..3 {
        let file = format!("s{i}.txt");
        std::fs::write(dir.path().join(&file), "small\n").expect("write");
        script.push(respond(
            "",
            &[(&format!("s{i}"), "read_file", json!({ "file": file }))],
        ));
    }
    script.push(respond("done", &[]));
    let provider = Scripted::new(script, Duration::ZERO);
    let mut options = AgentOptions::new("s".into(), Mode::Agent, dir.path().to_path_buf());
    options.smart_route = chatcli::agent::routing::RouteMode::Off;
    options.compaction = compaction_from(vars);
    options.scratch = chatcli::tools::Scratch::private(dir.path().join("scratch"));
    options.pricing = chatcli::cost::Catalog::builtin()
        .lookup("claude-sonnet-4-5")
        .cloned();
    let mut handle: AgentHandle = agent::spawn(provider.clone(), options);
    handle
        .ops
        .send(Op::Submit {
            text: "read big.txt".into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    Run {
        requests: provider.requests(),
        events,
    }
}

fn big_result(request: &ModelRequest) -> Option<String> {
    request
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .find_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } if tool_use_id == "big" => Some(content.clone()),
            _ => None,
        })
}

fn notices(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Notice { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_references_disable_values_keep_a_9kb_result_whole_three_requests_later() {
    let run = nine_kb_session(&[
        ("CHATCLI_MICROCOMPACT_TRUNCATE_TURNS", "100"),
        ("CHATCLI_MICROCOMPACT_SUMMARIZE_TURNS", "100"),
    ])
    .await;
    assert_eq!(run.requests.len(), 5);
    let shown = big_result(&run.requests[1]).expect("shown in request 2");
    assert!(shown.contains("fn f150()"), "{shown}");
    for later in 2..5 {
        assert_eq!(
            big_result(&run.requests[later]).as_deref(),
            Some(shown.as_str()),
            "request {} still carries it whole",
            later + 1
        );
    }
    assert!(
        notices(&run.events).is_empty(),
        "{:?}",
        notices(&run.events)
    );
    // Without the knobs the default schedule sends it as a pointer from request 3 on.
    let default = nine_kb_session(&[]).await;
    let third = big_result(&default.requests[2]).expect("a pointer");
    assert!(
        third.starts_with("[read_file big.txt: 340 lines"),
        "{third}"
    );
}

#[tokio::test]
async fn min_content_is_the_size_below_which_the_default_schedule_keeps_a_result() {
    let run = nine_kb_session(&[("CHATCLI_MICROCOMPACT_MIN_CONTENT", "20000")]).await;
    let shown = big_result(&run.requests[1]).expect("shown");
    assert_eq!(big_result(&run.requests[4]), Some(shown));
}

#[tokio::test]
async fn a_knob_the_named_schedule_never_reads_is_said_once_at_the_start() {
    let run = nine_kb_session(&[
        ("CHATCLI_MICROCOMPACT_SCHEDULE", "consumed"),
        ("CHATCLI_MICROCOMPACT_TRUNCATE_TURNS", "100"),
    ])
    .await;
    let said = notices(&run.events);
    assert_eq!(
        said.iter()
            .filter(|n| n.contains("CHATCLI_MICROCOMPACT_TRUNCATE_TURNS has no effect"))
            .count(),
        1,
        "{said:?}"
    );
    // And it indeed had none: the result became a pointer.
    let third = big_result(&run.requests[2]).expect("a pointer");
    assert!(third.starts_with("[read_file big.txt"), "{third}");
}

fn chatcli_in(home: &std::path::Path, cwd: &std::path::Path, args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chatcli"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("CHATCLI_HOME", home)
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("run chatcli");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn personal_and_project_facts_from_the_cli_fill_the_memory_index() {
    let home = tempfile::tempdir().expect("home");
    let top = tempfile::tempdir().expect("projects");
    let shop = top.path().join("shop");
    std::fs::create_dir_all(shop.join(".git")).expect("mkdir");
    std::fs::create_dir_all(shop.join("src")).expect("mkdir");
    let add = |args: &[&str]| {
        let (ok, out) = chatcli_in(home.path(), &shop.join("src"), args);
        assert!(ok, "{out}");
    };
    add(&[
        "memory",
        "add",
        "I am Ana, a backend engineer",
        "--category",
        "personal",
    ]);
    add(&["memory", "add", "The shop builds with cargo nextest"]);
    add(&[
        "memory",
        "add",
        "Payments retry three times",
        "--category",
        "project",
    ]);
    let (ok, index) = chatcli_in(home.path(), top.path(), &["memory", "index"]);
    assert!(ok, "{index}");
    let lines: Vec<&str> = index.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some("Profile: I am Ana, a backend engineer")
    );
    assert_eq!(
        lines.get(1).copied(),
        Some("Projects: shop"),
        "once, though two facts"
    );
    assert!(
        index.contains("Facts: 3 stored (project 2, personal 1)"),
        "{index}"
    );
    assert!(index.chars().count() <= chatcli::memory::digest::DIGEST_CAP);
    let (_, again) = chatcli_in(home.path(), top.path(), &["memory", "index"]);
    assert_eq!(again, index, "stable");
}

#[tokio::test]
async fn a_project_fact_from_the_memory_tool_names_the_workspace_project() {
    use chatcli::memory::{MemoryMode, MemorySettings, Store};
    let dir = tempfile::tempdir().expect("workspace");
    let ws = dir.path().join("ledger");
    std::fs::create_dir_all(ws.join(".git")).expect("mkdir");
    let memory_dir = dir.path().join("memory");
    let provider = Scripted::new(
        vec![
            respond(
                "",
                &[(
                    "m1",
                    "memory",
                    json!({"action": "add", "content": "Ledger closes at midnight UTC"}),
                )],
            ),
            respond("noted", &[]),
        ],
        Duration::ZERO,
    );
    let mut options = AgentOptions::new("s".into(), Mode::Agent, ws.clone());
    options.smart_route = chatcli::agent::routing::RouteMode::Off;
    options.memory = Some(MemorySettings {
        dir: memory_dir.clone(),
        mode: MemoryMode::Index,
        retrieval_budget: 4000,
        autorecall: false,
        hyde: false,
        embedder: chatcli::memory::embedder::Embedder::Local,
    });
    let mut handle = agent::spawn(provider.clone(), options);
    handle
        .ops
        .send(Op::Submit {
            text: "remember when the ledger closes".into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    let store = Store::open(&memory_dir).expect("open");
    assert!(
        chatcli::memory::digest::index_digest(&store).contains("Projects: ledger\n"),
        "{}",
        chatcli::memory::digest::index_digest(&store)
    );
}
