//! Per-request work of the agent: prompt assembly and cache planning for a 200-message history
//! (target: under 1 ms), tool-batch fingerprinting, microcompact over 200 messages, and
//! (`per_request`) everything the agent does between a response and the next request at
//! request 50 and 500 of a realistic session (issue 41: within 2x of each other, plus the bytes
//! that must be sent).

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

use chatcli::agent::compaction::{CacheEconomics, Compactor, Pressure};
use chatcli::agent::early_exit::Fingerprint;
use chatcli::agent::measure::{self, RequestSize};
use chatcli::agent::summary;
use chatcli::conversation::{ContentBlock, History, Message, ModelRequest, Role};
use chatcli::prompt::{self, ledger};
use chatcli::protocol::Mode;
use chatcli::provider::anthropic::{self, CacheTtl};
use chatcli::tools::{Scratch, ToolRegistry};

fn history(messages: usize) -> Vec<Message> {
    let mut out = vec![Message::user_text("refactor the parser")];
    let mut i = 0;
    while out.len() < messages {
        out.push(Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: format!("call_{i}"),
                name: "read_file".into(),
                input: json!({"file": format!("src/file_{i}.rs")}),
            }],
        });
        out.push(Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: format!("call_{i}"),
                content: format!("{i}  fn body() {{ let x = {i}; }}\n").repeat(if i % 4 == 0 {
                    120
                } else {
                    10
                }),
                is_error: false,
            }],
        });
        i += 1;
    }
    out
}

/// The history after `requests` requests of a realistic session, as the agent keeps it: a prompt
/// every ten requests (with its `<context>` block), each request an assistant turn with a short
/// text and a tool call, then its result — a search or a command of a few hundred characters,
/// and one in four a file read of 2–8 KB (consumed into a pointer once the model saw it).
fn session(requests: usize) -> Vec<Message> {
    let mut out = Vec::new();
    for i in 0..requests {
        if i % 10 == 0 {
            let prompt = format!(
                "step {i}: now make the parser accept trailing commas and run the tests\n\n\
                 <context>\ndate: 2026-12-02 · directory: /w\n</context>"
            );
            chatcli::conversation::push_user_text(&mut out, prompt);
        }
        let (name, input, content) = match i % 4 {
            0 => (
                "read_file",
                json!({"file": format!("src/parser/part_{i}.rs")}),
                format!("{i:>4}  fn parse_{i}(input: &str) -> Result<Node, Error> {{ todo }}\n")
                    .repeat(40 + i % 80),
            ),
            1 => (
                "search_files",
                json!({"pattern": format!("parse_{i}"), "path": "src"}),
                format!("src/parser/part_{i}.rs:12:    parse_{i}(&tokens)\n").repeat(6),
            ),
            2 => (
                "run_command",
                json!({"cmd": "cargo test -q parser"}),
                format!(
                    "running 24 tests\n........................\ntest result: ok. {i} passed\n"
                ),
            ),
            _ => (
                "edit_file",
                json!({"file": format!("src/parser/part_{i}.rs"), "old": "a,", "new": "a, b,"}),
                "edited src/parser/part.rs: 1 replacement".to_string(),
            ),
        };
        let id = format!("toolu_{i:06}");
        out.push(Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::Text {
                    text: format!("Looking at part {i} of the parser next."),
                },
                ContentBlock::ToolUse {
                    id: id.clone(),
                    name: name.into(),
                    input,
                },
            ],
        });
        out.push(Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id,
                content,
                is_error: false,
            }],
        });
    }
    out
}

/// The context window the per-request bench assumes (Claude's).
const WINDOW: u64 = 200_000;

/// What stays the same from one request to the next: the system blocks, the tools, the
/// scratch folder and the pressure the compactor sees.
struct Fixed {
    system: Vec<chatcli::conversation::SystemBlock>,
    tools: Vec<chatcli::conversation::ToolSpec>,
    scratch: Scratch,
    pressure: Pressure,
}

/// What the agent works out of a request before sending it.
type Prepared = (ModelRequest, bool, usize, Vec<ledger::Block>);

/// `Agent::assemble_request` and `finish_request`: the history rendered by microcompact, the
/// context guard's and the output limit's size checks, the cache ledger's blocks and the
/// request's size for an unfinished response.
fn prepare(compactor: &mut Compactor, history: &History, fixed: &Fixed) -> Prepared {
    let messages = compactor.render_history(history, &fixed.scratch, fixed.pressure);
    let size = RequestSize::new(&fixed.system, &fixed.tools, compactor.rendered().sizes());
    let over = size.over(&messages, WINDOW, summary::GUARD_SHARE);
    let request = ModelRequest {
        model: "claude-sonnet-4-5".into(),
        system: fixed.system.clone(),
        tools: fixed.tools.clone(),
        messages,
        max_output_tokens: 8192,
        session_id: "s".into(),
        effort: None,
        settled_messages: compactor.settled(),
        bridge_message: None,
    };
    let mut request = size.fit_output_limit(request, WINDOW);
    let blocks = ledger::blocks_with(&request, compactor.rendered().blocks().cloned().collect());
    let bytes = measure::request_bytes(&mut request, size.messages);
    (request, over, bytes, blocks)
}

/// The agent's work between a response and the next request, at request `requests` of a
/// session (two messages newer than the last render): `prepare`, then the copy
/// `stream_with_retries` hands the provider and the Anthropic body built and serialised.
/// `agent_only` is the same without the body: what is above the floor. `body_only` is the floor.
fn per_request(c: &mut Criterion) {
    let mut group = c.benchmark_group("per_request");
    let dir = tempfile::tempdir().expect("tempdir");
    let fixed = Fixed {
        system: prompt::stable_blocks(Mode::Agent, Path::new("/w"), &[], Some("Facts: 12 stored")),
        tools: ToolRegistry::for_mode(Mode::Agent).specs(),
        scratch: Scratch::private(dir.path().to_path_buf()),
        pressure: Pressure {
            context_share: 0.1,
            economics: CacheEconomics::default(),
        },
    };
    for requests in [50, 500] {
        let whole = session(requests);
        let mut before = Compactor::default();
        let mut history = History::from(whole[..whole.len() - 2].to_vec());
        before.render_history(&history, &fixed.scratch, fixed.pressure);
        for message in &whole[whole.len() - 2..] {
            history.push(message.clone());
        }
        group.bench_function(format!("request_{requests}"), |b| {
            b.iter_batched(
                || before.clone(),
                |mut compactor| {
                    let (request, over, bytes, blocks) = prepare(&mut compactor, &history, &fixed);
                    let sent = request.clone();
                    let body = anthropic::build_body(&sent, CacheTtl::FiveMinutes);
                    let wire = serde_json::to_vec(&body).unwrap_or_default();
                    // Returned, so dropping the compactor is not timed; the request and its
                    // copy are dropped here, as the agent drops them when the response ends.
                    (compactor, over, bytes, blocks, wire)
                },
                criterion::BatchSize::LargeInput,
            )
        });
        group.bench_function(format!("agent_only_{requests}"), |b| {
            b.iter_batched(
                || before.clone(),
                |mut compactor| {
                    let (request, over, bytes, blocks) = prepare(&mut compactor, &history, &fixed);
                    let sent = std::hint::black_box(request.clone());
                    drop((request, sent));
                    (compactor, over, bytes, blocks)
                },
                criterion::BatchSize::LargeInput,
            )
        });
        // The floor: what sending those bytes costs alone (the request's body built and
        // serialised), which no client avoids. The request is not copied: its messages are
        // shared, so the copy the agent hands the provider costs pointers, not bytes.
        let (request, ..) = prepare(&mut before.clone(), &history, &fixed);
        group.bench_function(format!("body_only_{requests}"), |b| {
            // The same harness as `request_` (a compactor copied before each run, the bytes
            // dropped after the timing), so the caches and the allocator start alike.
            b.iter_batched(
                || before.clone(),
                |compactor| {
                    let body = anthropic::build_body(&request, CacheTtl::FiveMinutes);
                    (compactor, serde_json::to_vec(&body).unwrap_or_default())
                },
                criterion::BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

fn agent(c: &mut Criterion) {
    let messages = history(200);
    let shared = chatcli::conversation::shared(messages.clone());
    let tools = ToolRegistry::for_mode(Mode::Agent).specs();
    c.bench_function("assemble_and_plan_200_messages", |b| {
        b.iter(|| {
            let request = ModelRequest {
                model: "claude-sonnet-4-5".into(),
                system: prompt::stable_blocks(
                    Mode::Agent,
                    Path::new("/w"),
                    &[],
                    Some("Facts: 12 stored"),
                ),
                tools: tools.clone(),
                messages: shared.clone(),
                max_output_tokens: 8192,
                session_id: "s".into(),
                effort: None,
                settled_messages: None,
                bridge_message: None,
            };
            let body = anthropic::build_body(&request, CacheTtl::FiveMinutes);
            let blocks = ledger::request_blocks(&request);
            (body, blocks)
        })
    });
    let batch: Vec<(String, serde_json::Value)> = (0..5)
        .map(|i| {
            (
                "read_file".to_string(),
                json!({"file": format!("src/{i}.rs"), "start": i, "end": i + 40}),
            )
        })
        .collect();
    c.bench_function("fingerprint_batch_of_5", |b| {
        b.iter(|| Fingerprint::of(batch.iter().map(|(n, a)| (n.as_str(), a))))
    });
    let dir = tempfile::tempdir().expect("tempdir");
    let scratch = Scratch::private(dir.path().to_path_buf());
    let pressure = Pressure {
        context_share: 0.1,
        economics: CacheEconomics::default(),
    };
    let mut compactor = Compactor::default();
    compactor.render(&messages, &scratch, pressure);
    c.bench_function("microcompact_200_messages", |b| {
        b.iter(|| compactor.render(&messages, &scratch, pressure))
    });
}

criterion_group!(benches, agent, per_request);
criterion_main!(benches);
