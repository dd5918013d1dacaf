//! The bill counts every request and the model sees a consistent world: interrupted and broken
//! requests are booked, a refused prompt is not kept, call ids are unique on every wire, no
//! prompt names a tool its request lacks, and an early exit leaves an answer.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chatcli::agent::{self, AgentHandle, AgentOptions};
use chatcli::conversation::{ContentBlock, ModelRequest};
use chatcli::memory::embedder::Embedder;
use chatcli::memory::{MemoryMode, MemorySettings, NewFact, Store};
use chatcli::protocol::{AgentEvent, Mode, Op, UsageFigures};
use chatcli::provider::Provider;
use chatcli::provider::UsageRecord;
use chatcli::provider::anthropic::{Anthropic, CacheTtl};
use chatcli::provider::http::Http;
use chatcli::provider::openai_chat::{OpenAiChat, Preset};
use chatcli::tools::ToolRegistry;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::scripted::{Scripted, respond, respond_with};
use crate::common::{events_until, options, sse};

async fn submit(handle: &mut AgentHandle, text: &str, mode: Mode) -> Vec<AgentEvent> {
    handle
        .ops
        .send(Op::Submit {
            text: text.into(),
            mode,
        })
        .expect("agent alive");
    events_until(handle, |e| matches!(e, AgentEvent::Cost { .. })).await
}

fn usages(events: &[AgentEvent]) -> Vec<UsageFigures> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Usage { usage, .. } => Some(*usage),
            _ => None,
        })
        .collect()
}

fn stop_reason(events: &[AgentEvent]) -> String {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::TurnFinished { stop_reason, .. } => Some(stop_reason.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

fn sse_response(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .insert_header("content-type", "text/event-stream")
        .set_body_string(body)
}

#[tokio::test]
async fn a_stream_that_breaks_after_output_began_still_counts_what_it_wrote() {
    let server = MockServer::start().await;
    // message_start (with its cache write), some text, then the connection ends: no message_stop.
    let full = sse::anthropic("The answer begins here and", None, 12, 0, 1178, 40);
    let cut = full
        .split("\n\n")
        .filter(|e| !e.is_empty())
        .take(4)
        .map(|e| format!("{e}\n\n"))
        .collect::<String>();
    assert!(cut.contains("text_delta") && !cut.contains("message_stop"));
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(sse_response(cut))
        .mount(&server)
        .await;
    let provider = Arc::new(Anthropic::new(
        Http::default(),
        "anthropic",
        server.uri(),
        "test-key".into(),
        "claude-sonnet-4-5".into(),
        CacheTtl::FiveMinutes,
    ));
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = options(dir.path(), Mode::Chat);
    opts.max_retries = 0;
    opts.pricing = chatcli::cost::Catalog::builtin()
        .lookup("claude-sonnet-4-5")
        .cloned();
    let mut handle = agent::spawn(provider, opts);
    let events = submit(&mut handle, "hello", Mode::Chat).await;
    let usage = usages(&events);
    assert_eq!(usage.len(), 1, "{events:?}");
    assert_eq!(
        usage[0].cache_creation_tokens, 1178,
        "what the provider reported so far"
    );
    assert!(usage[0].estimated);
    let cost = events.iter().find_map(|e| match e {
        AgentEvent::Cost {
            input_tokens,
            cache_creation_tokens,
            cost_usd,
            ..
        } => Some((*input_tokens, *cache_creation_tokens, *cost_usd)),
        _ => None,
    });
    let (input, written, usd) = cost.expect("a cost event");
    assert!(input >= 1190 && written == 1178, "{input} {written}");
    assert!(
        usd.is_some_and(|c| c > 0.004),
        "the bill is not $0: {usd:?}"
    );
}

#[tokio::test]
async fn ctrl_c_during_a_retry_back_off_ends_the_turn_as_interrupted() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(
            ResponseTemplate::new(529)
                .insert_header("retry-after", "30")
                .set_body_string(r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#),
        )
        .mount(&server)
        .await;
    let provider = Arc::new(Anthropic::new(
        Http::default(),
        "anthropic",
        server.uri(),
        "test-key".into(),
        "claude-sonnet-4-5".into(),
        CacheTtl::FiveMinutes,
    ));
    let dir = tempfile::tempdir().expect("tempdir");
    let mut handle = agent::spawn(provider, options(dir.path(), Mode::Chat));
    handle
        .ops
        .send(Op::Submit {
            text: "hello".into(),
            mode: Mode::Chat,
        })
        .expect("agent alive");
    events_until(&mut handle, |e| matches!(e, AgentEvent::Retrying { .. })).await;
    handle.ops.send(Op::Interrupt).expect("agent alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    assert_eq!(stop_reason(&events), "interrupted");
    let outcome = chatcli::exec::ExecOutcome {
        ok: false,
        errors: Vec::new(),
        stop_reason: Some("interrupted".into()),
        warnings: Vec::new(),
        signal: None,
    };
    assert_eq!(outcome.exit_code(), 130, "exec exits 130 on an interrupt");
}

#[tokio::test]
async fn a_prompt_the_budget_refused_is_not_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let expensive = UsageRecord {
        uncached_input: 2_000_000,
        output: 10,
        ..UsageRecord::default()
    };
    let provider = Scripted::new(
        vec![
            respond_with("first answer", &[], expensive),
            respond("third answer", &[]),
        ],
        Duration::ZERO,
    );
    let mut opts = options(dir.path(), Mode::Chat);
    opts.budget_usd = Some(0.01);
    let mut handle = agent::spawn(Arc::clone(&provider) as Arc<dyn Provider>, opts);
    submit(&mut handle, "first question", Mode::Chat).await;
    let refused = submit(&mut handle, "second question", Mode::Chat).await;
    assert_eq!(stop_reason(&refused), "budget");
    assert!(refused.iter().any(|e| matches!(e,
        AgentEvent::Notice { message } if message.contains("was not sent"))));
    handle
        .ops
        .send(Op::SetBudget { usd: Some(100.0) })
        .expect("agent alive");
    submit(&mut handle, "third question", Mode::Chat).await;
    let requests = provider.requests();
    assert_eq!(requests.len(), 2, "the refused prompt sent nothing");
    let last_user = requests[1]
        .messages
        .last()
        .map(|m| m.text())
        .unwrap_or_default();
    assert!(last_user.contains("third question"), "{last_user}");
    assert!(
        !requests[1]
            .messages
            .iter()
            .any(|m| m.text().contains("second question")),
        "the refused prompt never reached the model"
    );
}

/// Three responses for one prompt: two tool calls (each without an id of its own), then text.
async fn mount_three(server: &MockServer, route: &str, bodies: [String; 3], content_type: &str) {
    for (i, body) in bodies.into_iter().enumerate() {
        let mut mock = Mock::given(method("POST")).and(path(route)).respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", content_type)
                .set_body_string(body),
        );
        if i < 2 {
            mock = mock.up_to_n_times(1);
        }
        mock.with_priority(i as u8 + 1).mount(server).await;
    }
}

/// Runs "list then read" against `provider`; returns the tool-call ids and the request bodies.
async fn two_calls(provider: Arc<dyn Provider>, server: &MockServer) -> (Vec<String>, Vec<Value>) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("notes.txt"), "alpha\n").expect("write");
    let mut handle = agent::spawn(provider, options(dir.path(), Mode::Agent));
    let events = submit(
        &mut handle,
        "list the files, then read notes.txt",
        Mode::Agent,
    )
    .await;
    let ids = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCall { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    let bodies = server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).expect("json"))
        .collect();
    (ids, bodies)
}

fn assert_unique(ids: &[String]) {
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert_ne!(ids[0], ids[1], "each call has an id of its own");
    assert!(ids.iter().all(|id| !id.is_empty()));
}

#[tokio::test]
async fn gemini_calls_get_session_unique_ids_and_results_keep_their_names() {
    let server = MockServer::start().await;
    mount_three(
        &server,
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
        [
            sse::gemini("", Some(("list_directory", "{}")), 100, 0, 5),
            sse::gemini(
                "",
                Some(("read_file", r#"{"file":"notes.txt"}"#)),
                120,
                0,
                5,
            ),
            sse::gemini("alpha", None, 140, 0, 2),
        ],
        "text/event-stream",
    )
    .await;
    let provider = Arc::new(chatcli::provider::gemini::Gemini::new(
        Http::default(),
        server.uri(),
        "g-key".into(),
        "gemini-2.5-flash".into(),
    ));
    let (ids, bodies) = two_calls(provider, &server).await;
    assert_unique(&ids);
    let contents = bodies[2]["contents"].as_array().expect("contents");
    let responses: Vec<String> = contents
        .iter()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p["functionResponse"]["name"].as_str().map(str::to_string))
        .collect();
    assert_eq!(responses, vec!["list_directory", "read_file"]);
}

#[tokio::test]
async fn ollama_calls_get_session_unique_ids() {
    let server = MockServer::start().await;
    mount_three(
        &server,
        "/api/chat",
        [
            sse::ollama("", Some(("list_directory", "{}")), 100, 5),
            sse::ollama("", Some(("read_file", r#"{"file":"notes.txt"}"#)), 120, 5),
            sse::ollama("alpha", None, 140, 2),
        ],
        "application/x-ndjson",
    )
    .await;
    let provider = Arc::new(chatcli::provider::ollama::Ollama::new(
        Http::default(),
        &server.uri().replace("http://", ""),
        "llama3.2".into(),
    ));
    let (ids, bodies) = two_calls(provider, &server).await;
    assert_unique(&ids);
    let messages = bodies[2]["messages"].as_array().expect("messages");
    let tools: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["tool_name"].as_str())
        .collect();
    assert_eq!(tools, vec!["list_directory", "read_file"]);
}

/// A Chat Completions stream whose tool call has no `id` (llama.cpp and other servers do this).
fn openai_call_without_id(name: &str, args: &str) -> String {
    let chunks = [
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [{"index": 0, "type": "function", "function": {"name": name, "arguments": ""}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": args}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 5}}),
    ];
    let mut out: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

#[tokio::test]
async fn compatible_servers_without_ids_get_session_unique_ids() {
    let server = MockServer::start().await;
    mount_three(
        &server,
        "/v1/chat/completions",
        [
            openai_call_without_id("list_directory", "{}"),
            openai_call_without_id("read_file", r#"{"file":"notes.txt"}"#),
            sse::openai_chat("alpha", None, 140, 0, 2),
        ],
        "text/event-stream",
    )
    .await;
    let provider = Arc::new(OpenAiChat::new(
        Http::default(),
        Preset::OPENAI,
        format!("{}/v1", server.uri()),
        "sk-test".into(),
        "local-model".into(),
    ));
    let (ids, bodies) = two_calls(provider, &server).await;
    assert_unique(&ids);
    let messages = bodies[2]["messages"].as_array().expect("messages");
    let call_ids: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["tool_calls"][0]["id"].as_str())
        .collect();
    let result_ids: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    assert_eq!(call_ids, result_ids, "each result answers its own call");
    assert_ne!(call_ids[0], call_ids[1]);
}

fn memory_settings(home: &Path, mode: MemoryMode) -> MemorySettings {
    MemorySettings {
        dir: home.join("memory"),
        mode,
        retrieval_budget: 4000,
        autorecall: true,
        hyde: false,
        embedder: Embedder::Local,
    }
}

/// Tool names a text refers to as tools: `name`, "the name tool", or a name_with_underscores.
fn tools_named(text: &str, names: &[String]) -> Vec<String> {
    names
        .iter()
        .filter(|name| {
            let word = regex::Regex::new(&format!(r"\b{}\b", regex::escape(name))).expect("regex");
            text.contains(&format!("`{name}`"))
                || text.contains(&format!("{name} tool"))
                || (name.contains('_') && word.is_match(text))
        })
        .cloned()
        .collect()
}

fn request_text(request: &ModelRequest) -> String {
    let mut text: Vec<String> = request.system.iter().map(|b| b.text.clone()).collect();
    for message in &request.messages {
        for block in &message.content {
            if let ContentBlock::Text { text: t } = block {
                text.push(t.clone());
            }
        }
    }
    text.join("\n")
}

#[tokio::test]
async fn no_prompt_names_a_tool_its_request_lacks() {
    let every_tool: Vec<String> = ToolRegistry::for_mode(Mode::Agent)
        .specs()
        .into_iter()
        .map(|s| s.name)
        .collect();
    for memory in [None, Some(MemoryMode::Index), Some(MemoryMode::Full)] {
        for mode in [Mode::Chat, Mode::Agent, Mode::Coder, Mode::Run] {
            let dir = tempfile::tempdir().expect("tempdir");
            let mut store = Store::open(&dir.path().join("memory")).expect("open");
            store
                .add(NewFact {
                    content: "The deploy script lives in scripts/deploy.sh".into(),
                    category: "architecture".into(),
                    tags: vec!["deploy".into()],
                    source: "test".into(),
                })
                .expect("add");
            drop(store);
            let provider = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
            let mut opts: AgentOptions = options(dir.path(), mode);
            opts.smart_route = chatcli::agent::routing::RouteMode::Off;
            opts.memory = memory.map(|m| memory_settings(dir.path(), m));
            let mut handle = agent::spawn(Arc::clone(&provider) as Arc<dyn Provider>, opts);
            submit(&mut handle, "where does the deploy script live?", mode).await;
            let request = provider.requests().pop().expect("one request");
            let offered: Vec<String> = request.tools.iter().map(|t| t.name.clone()).collect();
            let named = tools_named(&request_text(&request), &every_tool);
            if memory == Some(MemoryMode::Index) && mode != Mode::Chat {
                assert!(
                    named.contains(&"memory".to_string()),
                    "the index names the memory tool in {mode}"
                );
            }
            for name in named {
                assert!(
                    offered.contains(&name),
                    "{mode} with memory {memory:?}: the prompt names `{name}` but the request offers {offered:?}"
                );
            }
        }
    }
}

#[tokio::test]
async fn an_early_exit_leaves_an_answer_that_says_what_repeated() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "a\n").expect("write");
    let call = [("x", "read_file", json!({"file": "a.txt"}))];
    let provider = Scripted::new(vec![respond("", &call)], Duration::ZERO);
    let mut handle = agent::spawn(provider, options(dir.path(), Mode::Run));
    let events = submit(&mut handle, "read a.txt until it changes", Mode::Run).await;
    assert_eq!(stop_reason(&events), "early_exit");
    let text = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::TurnFinished { text, .. } => Some(text.clone()),
            _ => None,
        })
        .unwrap_or_default();
    assert!(text.contains("read_file"), "{text}");
    assert!(text.contains("3 times"), "{text}");
    assert!(
        text.contains("/run") && text.contains("CHATCLI_AGENT_EARLY_EXIT_TURNS"),
        "{text}"
    );
}

#[tokio::test]
async fn compact_says_when_it_is_done_and_what_it_replaced() {
    let dir = tempfile::tempdir().expect("tempdir");
    let provider = Scripted::new(
        vec![respond("an answer with a few words in it", &[])],
        Duration::ZERO,
    );
    let mut handle = agent::spawn(
        provider.clone() as Arc<dyn Provider>,
        options(dir.path(), Mode::Chat),
    );
    for i in 0..6 {
        submit(&mut handle, &format!("question number {i}"), Mode::Chat).await;
    }
    provider.script_more(vec![respond("Summary: six questions were asked.", &[])]);
    handle.ops.send(Op::Compact).expect("agent alive");
    let events = events_until(
        &mut handle,
        |e| matches!(e, AgentEvent::Notice { message } if message.starts_with("compacted:")),
    )
    .await;
    let done = events
        .iter()
        .rev()
        .find_map(|e| match e {
            AgentEvent::Notice { message } => Some(message.clone()),
            _ => None,
        })
        .unwrap_or_default();
    assert!(
        done.contains("tokens") && done.contains("replaced by a summary"),
        "{done}"
    );
}

#[tokio::test]
async fn the_routing_tip_is_shown_once_then_as_a_marker() {
    let dir = tempfile::tempdir().expect("tempdir");
    let provider = Scripted::new(vec![respond("ok", &[])], Duration::ZERO);
    let mut handle = agent::spawn(provider, options(dir.path(), Mode::Agent));
    let tips = |events: &[AgentEvent]| -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Notice { message } if message.contains("/chat") => {
                    Some(message.clone())
                }
                _ => None,
            })
            .collect()
    };
    let first = tips(&submit(&mut handle, "what is a mutex?", Mode::Agent).await);
    let second = tips(&submit(&mut handle, "what is a channel?", Mode::Agent).await);
    let pt = tips(&submit(&mut handle, "o que é um canal?", Mode::Agent).await);
    assert_eq!(first.len(), 1);
    assert!(
        first[0].starts_with("ℹ Tip: this query looks conversational") && first[0].contains("/run"),
        "{first:?}"
    );
    assert_eq!(second.len(), 1);
    assert!(
        second[0].chars().count() < 40 && second[0].contains("looks conversational"),
        "later tips are a short marker: {second:?}"
    );
    assert!(pt[0].contains("conversacional"), "{pt:?}");
}
