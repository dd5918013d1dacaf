//! Per-request work of the agent: prompt assembly and cache planning for a 200-message history
//! (target: under 1 ms), tool-batch fingerprinting, and microcompact over 200 messages.

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

use chatcli::agent::compaction::{CacheEconomics, Compactor, Pressure};
use chatcli::agent::early_exit::Fingerprint;
use chatcli::conversation::{ContentBlock, Message, ModelRequest, Role};
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

fn agent(c: &mut Criterion) {
    let messages = history(200);
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
                messages: messages.clone(),
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

criterion_group!(benches, agent);
criterion_main!(benches);
