//! Conformance against a real server written by others: llama.cpp's `llama-server` on loopback
//! (see `../shared/peers/README.md`), speaking OpenAI chat, OpenAI Responses and Anthropic
//! messages with a real prefix cache. Each test runs a whole agent turn through the same agent
//! task `chatcli exec` drives. Without `CHATCLI_PEER_URL` the suite says so and passes, so
//! `cargo test` works anywhere; `.ci/run` starts the server and sets it.

use std::sync::Arc;
use std::time::Duration;

use chatcli::agent::{self, AgentOptions, ApprovalPolicy};
use chatcli::config::{Config, Overrides};
use chatcli::conversation::{Message, ModelRequest, SystemBlock};
use chatcli::env::Env;
use chatcli::protocol::{AgentEvent, Mode, Op, UsageFigures};
use chatcli::provider::{Provider, ProviderEvent};
use chatcli::session::registry;
use futures_util::StreamExt;

use crate::common::scripted::{Scripted, respond};
use chatcli::memory::embedder::Embedder;
use chatcli::memory::{MemoryMode, MemorySettings, NewFact, Store};

fn peer_url() -> Option<String> {
    match std::env::var("CHATCLI_PEER_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url.trim_end_matches('/').to_string()),
        _ => {
            crate::common::needs("the llama-server peer (CHATCLI_PEER_URL)", false);
            None
        }
    }
}

fn peer_provider(name: &str, base_url: String, home: &std::path::Path) -> Arc<dyn Provider> {
    let overrides = Overrides {
        provider: Some(name.into()),
        base_url: Some(base_url),
        model: Some(std::env::var("CHATCLI_PEER_MODEL").unwrap_or_else(|_| "tiny".into())),
        cwd: Some(home.to_path_buf()),
        ..Overrides::default()
    };
    let env = Env::from_pairs([
        ("CHATCLI_HOME", home.display().to_string()),
        ("OPENAI_API_KEY", "sk-none".to_string()),
        ("ANTHROPIC_API_KEY", "sk-none".to_string()),
    ]);
    let config = Config::resolve(&overrides, env).expect("config");
    registry::build(&config, Duration::ZERO).expect("provider")
}

/// Runs one prompt in agent mode against the peer and checks a whole turn happened.
async fn whole_turn(name: &str, base_url: impl FnOnce(&str) -> String) {
    let Some(url) = peer_url() else { return };
    let home = tempfile::tempdir().expect("tempdir");
    let provider = peer_provider(name, base_url(&url), home.path());
    let mut options = AgentOptions::new(
        format!("peer-{name}"),
        Mode::Agent,
        home.path().to_path_buf(),
    );
    options.approval = ApprovalPolicy::Deny;
    options.smart_route = chatcli::agent::routing::RouteMode::Off;
    options.max_turns = 4;
    let mut handle = agent::spawn(provider, options);
    handle
        .ops
        .send(Op::Submit {
            text: "Look at the notes file in this project and summarise it.".into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(120), handle.events.recv())
            .await
            .unwrap_or_else(|_| panic!("{name}: no event within 120 s; events so far: {events:#?}"))
            .expect("agent alive")
            .msg;
        let done = matches!(event, AgentEvent::Cost { .. });
        events.push(event);
        if done {
            break;
        }
    }
    let errors: Vec<&AgentEvent> = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Error { .. }))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:#?}");
    let calls = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ToolCall { .. }))
        .count();
    let results = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ToolResult { .. }))
        .count();
    assert!(calls >= 1, "{name}: the model called a tool: {events:#?}");
    assert_eq!(calls, results, "{name}: every call got a result");
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        !text.trim().is_empty(),
        "{name}: the model answered in text"
    );
    let requests = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::TurnStarted { .. }))
        .count();
    let usages: Vec<UsageFigures> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Usage { usage, .. } => Some(*usage),
            _ => None,
        })
        .collect();
    eprintln!("peer {name}: {calls} tool call(s), usage per request: {usages:?}");
    assert_eq!(usages.len(), requests, "{name}: one usage per request");
    assert!(
        usages.len() >= 2,
        "{name}: a tool round trip takes two requests"
    );
    let (first, second) = (usages[0], usages[1]);
    assert!(
        second.cache_read_tokens * 10 >= first.input_tokens * 8,
        "{name}: the second request read its prefix from the cache: first {first:?}, second {second:?}"
    );
    let finished = events.iter().find_map(|e| match e {
        AgentEvent::TurnFinished { stop_reason, .. } => Some(stop_reason.clone()),
        _ => None,
    });
    assert_eq!(
        finished.as_deref(),
        Some("end_turn"),
        "{name}: the turn ended cleanly"
    );
}

#[tokio::test]
async fn openai_chat_whole_turn_against_llama_server() {
    whole_turn("openai", |url| format!("{url}/v1")).await;
}

#[tokio::test]
async fn openai_responses_whole_turn_against_llama_server() {
    whole_turn("openai-responses", |url| format!("{url}/v1")).await;
}

#[tokio::test]
async fn anthropic_whole_turn_against_llama_server() {
    whole_turn("anthropic", |url| url.to_string()).await;
}

async fn one_request(provider: &dyn Provider, system: &str, session: &str) -> UsageFigures {
    let request = ModelRequest {
        model: provider.model().to_string(),
        system: vec![SystemBlock {
            name: "core".into(),
            text: system.to_string(),
            stable: true,
        }],
        tools: Vec::new(),
        messages: chatcli::conversation::shared([Message::user_text("Say hello.")]),
        max_output_tokens: 16,
        session_id: session.to_string(),
        effort: None,
        settled_messages: None,
        bridge_message: None,
    };
    usage_of(provider.stream(request)).await
}

#[tokio::test]
async fn a_prompt_that_changes_at_its_start_gets_almost_no_cache_read() {
    let Some(url) = peer_url() else { return };
    let home = tempfile::tempdir().expect("tempdir");
    let provider = peer_provider("openai", format!("{url}/v1"), home.path());
    // The server keeps earlier prompts in its cache across runs: make every start new to it.
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let body = "You are a careful assistant. Follow the rules below exactly.\n".repeat(40);
    let same_a = one_request(provider.as_ref(), &format!("Session {nonce}. {body}"), "a").await;
    let same_b = one_request(provider.as_ref(), &format!("Session {nonce}. {body}"), "a").await;
    assert!(
        same_b.cache_read_tokens * 10 >= same_a.input_tokens * 8,
        "control: identical prompts hit the cache"
    );
    let changed = one_request(provider.as_ref(), &format!("It is {nonce}. {body}"), "a").await;
    eprintln!("peer counter-test: same {same_a:?} then {same_b:?}; changed start {changed:?}");
    assert!(
        changed.cache_read_tokens * 5 < changed.input_tokens,
        "a changed first line must invalidate the prefix: {changed:?}"
    );
}

/// The usage of one streamed response.
async fn usage_of(mut stream: chatcli::provider::ProviderStream) -> UsageFigures {
    let mut usage = None;
    while let Some(event) = stream.next().await {
        if let ProviderEvent::Usage(u) = event.expect("no stream error") {
            usage = Some(u.figures());
        }
    }
    usage.expect("a usage record")
}

#[tokio::test]
async fn a_keep_warm_ping_reads_the_prefix_and_leaves_the_tail_out_on_the_anthropic_wire() {
    let Some(url) = peer_url() else { return };
    let home = tempfile::tempdir().expect("tempdir");
    let provider = peer_provider("anthropic", url, home.path());
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let body = "You are a careful assistant. Follow the rules below exactly.\n".repeat(40);
    let answer = Message {
        role: chatcli::conversation::Role::Assistant,
        content: vec![chatcli::conversation::ContentBlock::Text {
            text: "Noted.".into(),
        }],
    };
    // The last message (a long paste about to be compacted) is not settled: the rolling marker
    // sits on the answer before it.
    let request = ModelRequest {
        model: provider.model().to_string(),
        system: vec![SystemBlock {
            name: "core".into(),
            text: format!("Session {nonce}. {body}"),
            stable: true,
        }],
        tools: Vec::new(),
        messages: chatcli::conversation::shared([
            Message::user_text("Remember the rules."),
            answer,
            Message::user_text("pasted log line\n".repeat(150)),
        ]),
        max_output_tokens: 16,
        session_id: "warm".into(),
        effort: None,
        settled_messages: Some(2),
        bridge_message: None,
    };
    let first = usage_of(provider.stream(request.clone())).await;
    let ping = chatcli::agent::keepwarm::ping_request(&request);
    let warm = usage_of(provider.keep_warm(ping)).await;
    eprintln!("peer keep-warm: request {first:?}, ping {warm:?}");
    assert!(
        warm.input_tokens + 1_000 < first.input_tokens,
        "the ping leaves the unsettled tail out: {warm:?} after {first:?}"
    );
    assert!(
        warm.cache_read_tokens * 10 >= warm.input_tokens * 7,
        "the ping is read from the cache: {warm:?}"
    );
    assert!(warm.output_tokens <= 16, "{warm:?}");
}

#[tokio::test]
async fn the_peer_refuses_embeddings_with_an_error_recall_can_fall_back_on() {
    let Some(url) = peer_url() else { return };
    // The provider a user points at the server gets an embedder at the same base.
    let home = tempfile::tempdir().expect("tempdir");
    let overrides = Overrides {
        provider: Some("openai".into()),
        base_url: Some(format!("{url}/v1")),
        ..Overrides::default()
    };
    let env = Env::from_pairs([
        ("CHATCLI_HOME", home.path().display().to_string()),
        ("OPENAI_API_KEY", "sk-none".to_string()),
    ]);
    let config = Config::resolve(&overrides, env).expect("config");
    let embedder = registry::embedder(&config);
    assert!(matches!(&embedder, Embedder::OpenAi { base, .. } if *base == format!("{url}/v1")));
    // Started without --embeddings, llama-server answers 501: an error, never vectors.
    let err = embedder
        .embed(&["deploy with helm".to_string()])
        .await
        .expect_err("no embeddings on this server")
        .to_string();
    assert!(
        err.starts_with("HTTP 501") && err.contains("does not support embeddings"),
        "{err}"
    );
}

#[tokio::test]
async fn recall_embeds_facts_and_query_through_a_real_embeddings_endpoint() {
    let Ok(url) = std::env::var("CHATCLI_PEER_EMBEDDINGS_URL") else {
        crate::common::needs("the embeddings peer (CHATCLI_PEER_EMBEDDINGS_URL)", false);
        return;
    };
    let embedder = Embedder::OpenAi {
        base: format!("{}/v1", url.trim_end_matches('/')),
        key: "sk-none".into(),
        model: "tiny".into(),
    };
    let texts = vec![
        "deploy with helm charts".to_string(),
        "the user prefers small pull requests".to_string(),
    ];
    let first = embedder
        .embed(&texts)
        .await
        .expect("embeddings")
        .expect("vectors");
    let again = embedder
        .embed(&texts)
        .await
        .expect("embeddings")
        .expect("vectors");
    assert_eq!(first.len(), 2);
    assert!(!first[0].is_empty() && first[0].len() == first[1].len());
    assert_eq!(first, again, "the same text embeds the same way");
    assert_ne!(first[0], first[1], "different texts embed differently");

    // Through the agent: the facts' vectors land in the cache, one line a fact.
    let home = tempfile::tempdir().expect("tempdir");
    let dir = home.path().join("memory");
    let mut store = Store::open(&dir).expect("open");
    for content in [
        "Deploy with the Helm charts",
        "Vault rotates passwords on Monday",
        "Small pull requests",
    ] {
        store
            .add(NewFact {
                content: content.into(),
                category: "project".into(),
                tags: Vec::new(),
                source: "test".into(),
            })
            .expect("add");
    }
    let mut options =
        AgentOptions::new("peer-embed".into(), Mode::Agent, home.path().to_path_buf());
    options.smart_route = chatcli::agent::routing::RouteMode::Off;
    options.memory = Some(MemorySettings {
        dir: dir.clone(),
        mode: MemoryMode::Index,
        retrieval_budget: 4000,
        autorecall: false,
        hyde: false,
        embedder,
    });
    let provider = Scripted::new(
        vec![
            respond(
                "",
                &[(
                    "r1",
                    "memory",
                    serde_json::json!({"action": "recall", "query": "how do we deploy"}),
                )],
            ),
            respond("With Helm.", &[]),
        ],
        Duration::ZERO,
    );
    let mut handle = agent::spawn(provider.clone(), options);
    handle
        .ops
        .send(Op::Submit {
            text: "how do we deploy?".into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    crate::common::events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    let requests = provider.requests();
    let result = &requests[1].messages.last().expect("results").content[0];
    let text = match result {
        chatcli::conversation::ContentBlock::ToolResult { content, .. } => content.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(text.lines().count(), 3, "{text}");
    let cache = std::fs::read_to_string(dir.join("embeddings/openai-tiny.jsonl")).expect("cache");
    assert_eq!(cache.lines().count(), 3);
    let line: serde_json::Value =
        serde_json::from_str(cache.lines().next().unwrap_or_default()).expect("json line");
    assert_eq!(line["v"].as_array().map(Vec::len), Some(first[0].len()));
}

// ---------------------------------------------------------------------------------------------
// A real instruct model: SmolLM2-135M-Instruct behind a second llama-server (`.ci/run` starts it
// with --jinja, a tool-capable template, --temp 0.2 --seed 42 and -c 4096). These tests assert
// what chatcli does with real text and real (often bad) tool calls, never the model's words.
// They run one at a time: the server has one slot, and its prefix cache is what one test reads.

static INSTRUCT: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The instruct peer's URL; in CI (`CI=true`) a missing peer is a failure, locally one skip line.
fn instruct_url() -> Option<String> {
    match std::env::var("CHATCLI_PEER_INSTRUCT_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url.trim_end_matches('/').to_string()),
        _ => {
            crate::common::needs(
                "the SmolLM2 llama-server peer (CHATCLI_PEER_INSTRUCT_URL)",
                false,
            );
            None
        }
    }
}

/// The base URL a wire's client takes: OpenAI-style bases include `/v1`, Anthropic's does not.
fn wire_base(wire: &str, url: &str) -> String {
    if wire == "anthropic" {
        url.to_string()
    } else {
        format!("{url}/v1")
    }
}

/// A session set up the way `chatcli exec` sets one up, with no model named.
async fn instruct_session(
    wire: &str,
    url: &str,
    home: &std::path::Path,
) -> (Arc<dyn Provider>, AgentOptions) {
    let overrides = Overrides {
        provider: Some(wire.into()),
        base_url: Some(wire_base(wire, url)),
        cwd: Some(home.to_path_buf()),
        ..Overrides::default()
    };
    let env = Env::from_pairs([
        ("CHATCLI_HOME", home.display().to_string()),
        ("OPENAI_API_KEY", "sk-none".to_string()),
        ("ANTHROPIC_API_KEY", "sk-none".to_string()),
    ]);
    let mut config = Config::resolve(&overrides, env).expect("config");
    let local = chatcli::session::settle_local_server(&mut config).await;
    let provider = chatcli::session::build_provider(&config, Duration::ZERO).expect("provider");
    let catalog = chatcli::session::load_catalog(&config).expect("catalog");
    let mut options = chatcli::session::agent_options(
        &config,
        provider.as_ref(),
        &catalog,
        format!("smol-{wire}"),
        ApprovalPolicy::Deny,
    );
    options.context_window = local.and_then(|l| l.context_window);
    options.smart_route = chatcli::agent::routing::RouteMode::Off;
    options.memory = None;
    options.sessions_dir = None;
    (provider, options)
}

async fn run_prompt(handle: &mut agent::AgentHandle, text: &str, mode: Mode) -> Vec<AgentEvent> {
    handle
        .ops
        .send(Op::Submit {
            text: text.into(),
            mode,
        })
        .expect("agent alive");
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(300), handle.events.recv())
            .await
            .unwrap_or_else(|_| panic!("no event within 300 s; events so far: {events:#?}"))
            .expect("agent alive")
            .msg;
        let done = matches!(event, AgentEvent::Cost { .. });
        events.push(event);
        if done {
            return events;
        }
    }
}

fn errors(events: &[AgentEvent]) -> Vec<&AgentEvent> {
    events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Error { .. }))
        .collect()
}

const TOOL_PROMPT: &str = "Use the list_dir tool to list the files in the current directory.";
/// The agent-turn prompt names the tool as chatcli registers it.
const AGENT_PROMPT: &str =
    "Call the list_directory tool with dir set to \".\" and tell me what is there.";

/// An agent turn where the model really calls a tool and chatcli runs it.
async fn real_tool_call(wire: &str) {
    let Some(url) = instruct_url() else { return };
    let _one = INSTRUCT.lock().await;
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::write(home.path().join("notes.md"), "- ship on Friday\n").expect("write");
    // A small model sometimes answers in text instead: a few tries, each a new session.
    let mut events = Vec::new();
    let mut calls: Vec<(String, String)> = Vec::new();
    for _ in 0..4 {
        let (provider, mut options) = instruct_session(wire, &url, home.path()).await;
        options.max_turns = 3;
        options.max_output_tokens = 256;
        let mut handle = agent::spawn(provider, options);
        events = run_prompt(&mut handle, AGENT_PROMPT, Mode::Agent).await;
        let _ = handle.ops.send(Op::Shutdown);
        assert!(errors(&events).is_empty(), "{wire}: {events:#?}");
        calls = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ToolCall { id, name, .. } => Some((id.clone(), name.clone())),
                _ => None,
            })
            .collect();
        if !calls.is_empty() {
            break;
        }
    }
    if calls.is_empty() {
        // Whether a 135M model calls a tool is the model's choice, not chatcli's: say so and
        // keep what chatcli owes (no error, checked above) rather than fail on the model's words.
        // The call handling itself is pinned deterministically in local_servers.rs.
        eprintln!("smol {wire}: the model answered in text in every try; no real call this run");
        return;
    }
    for (id, _) in &calls {
        let started = events
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolCallStarted { id: started, .. } if started == id));
        assert!(started, "{wire}: {id} was announced while it streamed");
    }
    let ran: Vec<&AgentEvent> = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ToolResult { output, .. } if !output.starts_with("not run")))
        .collect();
    eprintln!("smol {wire}: calls {calls:?}; results that ran: {ran:?}");
    assert!(!ran.is_empty(), "{wire}: chatcli ran a call: {events:#?}");
}

/// A forced cut-off (tiny max_tokens) in the middle of a call leaves the next prompt working.
async fn cut_off_call(wire: &str) {
    let Some(url) = instruct_url() else { return };
    let _one = INSTRUCT.lock().await;
    let home = tempfile::tempdir().expect("tempdir");
    let (provider, mut options) = instruct_session(wire, &url, home.path()).await;
    options.max_turns = 1;
    options.max_output_tokens = CUT_OFF_TOKENS;
    let mut handle = agent::spawn(provider, options);
    // The same seed does not make a reused prompt cache bit-identical: a small model sometimes
    // answers in text first. A few tries, each going on with the same session.
    let mut cut: Vec<String> = Vec::new();
    let mut tries = Vec::new();
    while cut.is_empty() && tries.len() < 3 {
        let events = run_prompt(&mut handle, TOOL_PROMPT, Mode::Agent).await;
        assert!(errors(&events).is_empty(), "{wire}: {events:#?}");
        cut = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ToolResult { output, .. } if output.contains("(max_tokens)") => {
                    Some(output.clone())
                }
                _ => None,
            })
            .collect();
        tries.push(events);
    }
    eprintln!(
        "smol {wire}: cut-off results {cut:?} after {} tries",
        tries.len()
    );
    // A call the model began but whose arguments the limit cut never completes as `tool_call`:
    // each such call must be answered as cut off. Whether the model begins a call at all is its
    // choice, not chatcli's (a 135M model often answers in text); the session must go on anyway.
    let events: Vec<&AgentEvent> = tries.iter().flatten().collect();
    let cut_calls = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallStarted { id, .. } => Some(id),
            _ => None,
        })
        .filter(|id| {
            !events
                .iter()
                .any(|e| matches!(e, AgentEvent::ToolCall { id: done, .. } if done == *id))
        })
        .count();
    if cut_calls > 0 {
        assert!(
            !cut.is_empty(),
            "{wire}: the output limit fell inside a call and chatcli answered it as cut off: {tries:#?}"
        );
    } else {
        eprintln!(
            "smol {wire}: no call was cut in {} tries this run",
            tries.len()
        );
    }
    for prompt in ["Thanks. What is 2 + 2?", "And 3 + 3?"] {
        let next = run_prompt(&mut handle, prompt, Mode::Agent).await;
        assert!(
            errors(&next).is_empty(),
            "{wire}: the session still works: {next:#?}"
        );
        assert!(
            next.iter()
                .any(|e| matches!(e, AgentEvent::Usage { usage, .. } if !usage.estimated)),
            "{wire}: the server answered: {next:#?}"
        );
    }
    let _ = handle.ops.send(Op::Shutdown);
}

/// Output tokens that end a response inside a call's arguments.
const CUT_OFF_TOKENS: u32 = 20;

fn exec_json(
    home: &std::path::Path,
    wire: &str,
    url: &str,
    args: &[&str],
) -> Vec<serde_json::Value> {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_chatcli"));
    let base_var = if wire == "anthropic" {
        "ANTHROPIC_BASE_URL"
    } else {
        "OPENAI_BASE_URL"
    };
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("CHATCLI_HOME", home)
        .env("OPENAI_API_KEY", "sk-none")
        .env("ANTHROPIC_API_KEY", "sk-none")
        .env(base_var, wire_base(wire, url))
        .env("CHATCLI_MEMORY_MODE", "off")
        .current_dir(home)
        .args(["exec", "--json", "--provider", wire, "--mode", "chat"])
        .args(args);
    let out = cmd.output().expect("run chatcli");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{wire}: chatcli exec failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON event a line"))
        .collect()
}

fn first_of<'a>(events: &'a [serde_json::Value], kind: &str) -> &'a serde_json::Value {
    events
        .iter()
        .find(|e| e["type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} event: {events:#?}"))
}

/// Through `chatcli exec`: an unknown local model gets the server's name and window and costs
/// $0; the answer streams with the server's exact usage; `--resume` reads the prefix from the
/// server's cache.
async fn chat_and_resume(wire: &str) {
    let Some(url) = instruct_url() else { return };
    let _one = INSTRUCT.lock().await;
    let http = reqwest::Client::new();
    let props: serde_json::Value = http
        .get(format!("{url}/props"))
        .send()
        .await
        .expect("props")
        .json()
        .await
        .expect("props json");
    let n_ctx = props["default_generation_settings"]["n_ctx"]
        .as_u64()
        .expect("n_ctx");
    let models: serde_json::Value = http
        .get(format!("{url}/v1/models"))
        .send()
        .await
        .expect("models")
        .json()
        .await
        .expect("models json");
    let served = models["data"][0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();

    let home = tempfile::tempdir().expect("tempdir");
    let wire_owned = wire.to_string();
    let (url_a, home_a) = (url.clone(), home.path().to_path_buf());
    // A nonce keeps an earlier run's cache entry from answering for this one.
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let prompt = format!("Session {nonce}. In one short sentence, what is a compiler?");
    let first =
        tokio::task::spawn_blocking(move || exec_json(&home_a, &wire_owned, &url_a, &[&prompt]))
            .await
            .expect("join");
    let configured = first_of(&first, "session_configured");
    assert_eq!(
        configured["model"],
        served.as_str(),
        "{wire}: the model is the server's"
    );
    assert_eq!(
        configured["context_window"], n_ctx,
        "{wire}: the window is the server's"
    );
    let usage = first_of(&first, "usage");
    assert_eq!(
        usage["cost_usd"], 0.0,
        "{wire}: a local model costs nothing: {usage}"
    );
    assert_eq!(usage["estimated"], false, "{wire}: {usage}");
    let streamed: String = first
        .iter()
        .filter(|e| e["type"] == "text_delta")
        .filter_map(|e| e["text"].as_str())
        .collect();
    let finished = first_of(&first, "turn_finished");
    assert!(!streamed.is_empty(), "{wire}: the answer streamed");
    assert_eq!(
        finished["text"],
        streamed.as_str(),
        "{wire}: the answer is what streamed"
    );
    // Exact usage: the server's own token count of what it wrote (plus its end token).
    let tokens: serde_json::Value = http
        .post(format!("{url}/tokenize"))
        .json(&serde_json::json!({"content": streamed}))
        .send()
        .await
        .expect("tokenize")
        .json()
        .await
        .expect("tokenize json");
    let counted = tokens["tokens"].as_array().map_or(0, Vec::len) as u64;
    let output = usage["output_tokens"].as_u64().unwrap_or(0);
    assert!(
        output == counted || output == counted + 1,
        "{wire}: output_tokens {output} is the server's count of the answer ({counted})"
    );

    let wire_owned = wire.to_string();
    let (url_b, home_b) = (url.clone(), home.path().to_path_buf());
    let second = tokio::task::spawn_blocking(move || {
        exec_json(
            &home_b,
            &wire_owned,
            &url_b,
            &["--resume", "latest", "And an interpreter?"],
        )
    })
    .await
    .expect("join");
    let first_input = usage["input_tokens"].as_u64().unwrap_or(0);
    let resumed = first_of(&second, "usage");
    let read = resumed["cache_read_tokens"].as_u64().unwrap_or(0);
    eprintln!("smol {wire}: first {usage}; resumed {resumed}");
    assert!(
        read * 10 >= first_input * 8,
        "{wire}: the resumed prompt read its prefix from the server's cache: first {usage}, resumed {resumed}"
    );
}

macro_rules! on_every_wire {
    ($check:ident: $openai:ident, $responses:ident, $anthropic:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $openai() {
            $check("openai").await;
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $responses() {
            $check("openai-responses").await;
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $anthropic() {
            $check("anthropic").await;
        }
    };
}

on_every_wire!(chat_and_resume: smol_openai_chat_usage_window_cost_and_resume, smol_responses_chat_usage_window_cost_and_resume, smol_anthropic_chat_usage_window_cost_and_resume);
on_every_wire!(real_tool_call: smol_openai_agent_turn_runs_a_real_call, smol_responses_agent_turn_runs_a_real_call, smol_anthropic_agent_turn_runs_a_real_call);
on_every_wire!(cut_off_call: smol_openai_cut_off_call_leaves_the_session_working, smol_responses_cut_off_call_leaves_the_session_working, smol_anthropic_cut_off_call_leaves_the_session_working);

/// `chatcli models` against llama-server: the model it serves, with the window it runs with
/// (`meta.n_ctx`) and free, since the server says it is llama.cpp.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn smol_models_lists_the_served_model_with_its_window_and_free() {
    let Some(url) = instruct_url() else { return };
    let props: serde_json::Value = reqwest::Client::new()
        .get(format!("{url}/props"))
        .send()
        .await
        .expect("props")
        .json()
        .await
        .expect("props json");
    let n_ctx = props["default_generation_settings"]["n_ctx"]
        .as_u64()
        .expect("n_ctx");
    let home = tempfile::tempdir().expect("tempdir");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_chatcli"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("CHATCLI_HOME", home.path())
        .env("OPENAI_API_KEY", "sk-none")
        .env("OPENAI_BASE_URL", wire_base("openai", &url))
        .current_dir(home.path())
        .args(["models", "--json", "--provider", "openai"]);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run chatcli");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("listed by openai now"), "{stderr}");
    let rows: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let served = &rows[0];
    assert_eq!(served["listed"], true, "{rows}");
    assert_eq!(served["window"].as_u64(), Some(n_ctx), "{served}");
    assert_eq!(served["input_usd_per_mtok"], 0.0, "{served}");
}
