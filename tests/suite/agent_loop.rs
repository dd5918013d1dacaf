//! The tool loop against a scripted provider: early exit, the cycle detector, the turn limit,
//! interrupts, approvals and call order.

use std::sync::Arc;
use std::time::Duration;

use chatcli::agent::tools_run::{DENIED, DENIED_HEADLESS};
use chatcli::agent::{self, AgentHandle, AgentOptions, ApprovalPolicy};
use chatcli::conversation::{ContentBlock, Role};
use chatcli::protocol::{AgentEvent, ApprovalDecision, Mode, Op};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::common::events_until;
use crate::common::scripted::{Scripted, respond};

struct Session {
    handle: AgentHandle,
    provider: Arc<Scripted>,
    dir: tempfile::TempDir,
}

fn session(provider: Arc<Scripted>, tune: impl FnOnce(&mut AgentOptions)) -> Session {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "A\n").expect("write");
    std::fs::write(dir.path().join("b.txt"), "B\n").expect("write");
    let mut options = AgentOptions::new("s".into(), Mode::Agent, dir.path().to_path_buf());
    options.smart_route = chatcli::agent::routing::RouteMode::Off;
    tune(&mut options);
    let handle = agent::spawn(provider.clone(), options);
    Session {
        handle,
        provider,
        dir,
    }
}

async fn prompt(s: &mut Session, text: &str) -> Vec<AgentEvent> {
    s.handle
        .ops
        .send(Op::Submit {
            text: text.into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    events_until(&mut s.handle, |e| matches!(e, AgentEvent::Cost { .. })).await
}

fn stop_reason(events: &[AgentEvent]) -> String {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::TurnFinished { stop_reason, .. } => Some(stop_reason.clone()),
            _ => None,
        })
        .expect("turn_finished")
}

fn count(events: &[AgentEvent], f: impl Fn(&AgentEvent) -> bool) -> usize {
    events.iter().filter(|e| f(e)).count()
}

fn read(file: &str) -> serde_json::Value {
    json!({ "file": file })
}

#[tokio::test]
async fn the_third_identical_batch_is_not_run_and_the_loop_stops() {
    // The model reads the same two files, in swapped order, forever.
    let ab = respond(
        "",
        &[
            ("1", "read_file", read("a.txt")),
            ("2", "read_file", read("b.txt")),
        ],
    );
    let ba = respond(
        "",
        &[
            ("3", "read_file", read("b.txt")),
            ("4", "read_file", read("a.txt")),
        ],
    );
    let provider = Scripted::new(vec![ab.clone(), ba, ab], Duration::ZERO);
    let mut s = session(provider, |_| {});
    let events = prompt(&mut s, "look around").await;
    assert_eq!(s.provider.requests().len(), 3);
    assert_eq!(
        count(&events, |e| matches!(e, AgentEvent::ToolResult { .. })),
        4,
        "two batches ran"
    );
    let exit = events.iter().find_map(|e| match e {
        AgentEvent::EarlyExit {
            repeats,
            kind,
            fingerprint,
        } => Some((*repeats, kind.clone(), fingerprint.len())),
        _ => None,
    });
    assert_eq!(exit, Some((3, "repeat".to_string(), 16)));
    assert_eq!(stop_reason(&events), "early_exit");

    // The next prompt is a valid request: the unrun batch has its "not executed" results.
    let provider = s.provider.clone();
    let _ = prompt(&mut s, "and now?").await;
    let fourth = provider.requests()[3].clone();
    let results = &fourth.messages[fourth.messages.len() - 1];
    assert_eq!(results.role, Role::User);
    assert!(results.content.iter().any(|b| matches!(b,
        ContentBlock::ToolResult { content, is_error: true, .. } if content == "not executed: repeated without progress")));
}

#[tokio::test]
async fn with_early_exit_off_the_loop_runs_to_the_turn_limit() {
    let same = respond("", &[("1", "read_file", read("a.txt"))]);
    let provider = Scripted::new(vec![same], Duration::ZERO);
    let mut s = session(provider, |o| {
        o.early_exit = false;
        o.max_turns = 6;
    });
    let events = prompt(&mut s, "loop").await;
    assert_eq!(s.provider.requests().len(), 6);
    assert_eq!(
        count(&events, |e| matches!(e, AgentEvent::EarlyExit { .. })),
        0
    );
    assert_eq!(stop_reason(&events), "max_turns");
}

#[tokio::test]
async fn a_lower_threshold_stops_sooner() {
    let same = respond("", &[("1", "read_file", read("a.txt"))]);
    let provider = Scripted::new(vec![same], Duration::ZERO);
    let mut s = session(provider, |o| o.early_exit_turns = 2);
    let events = prompt(&mut s, "loop").await;
    assert_eq!(s.provider.requests().len(), 2);
    assert_eq!(stop_reason(&events), "early_exit");
}

#[tokio::test]
async fn two_alternating_batches_are_caught_as_a_cycle() {
    let a = respond("", &[("1", "read_file", read("a.txt"))]);
    let b = respond("", &[("2", "read_file", read("b.txt"))]);
    let script = vec![a.clone(), b.clone(), a.clone(), b.clone(), a, b];
    let provider = Scripted::new(script, Duration::ZERO);
    let mut s = session(provider, |_| {});
    let events = prompt(&mut s, "cycle").await;
    assert_eq!(s.provider.requests().len(), 6);
    assert_eq!(
        count(&events, |e| matches!(e, AgentEvent::ToolResult { .. })),
        5
    );
    let kind = events.iter().find_map(|e| match e {
        AgentEvent::EarlyExit { kind, repeats, .. } => Some((kind.clone(), *repeats)),
        _ => None,
    });
    assert_eq!(kind, Some(("cycle".to_string(), 3)));
}

#[tokio::test]
async fn a_turn_without_tool_calls_resets_the_count() {
    let same = respond("", &[("1", "read_file", read("a.txt"))]);
    let script = vec![same.clone(), same.clone(), respond("done", &[])];
    let provider = Scripted::new(script, Duration::ZERO);
    let mut s = session(provider, |_| {});
    let events = prompt(&mut s, "one").await;
    assert_eq!(stop_reason(&events), "end_turn");
    // A new prompt starts counting from zero: two more identical batches do not stop it.
    s.provider
        .script_more(vec![same.clone(), same, respond("done again", &[])]);
    let events = prompt(&mut s, "two").await;
    assert_eq!(stop_reason(&events), "end_turn");
}

#[tokio::test(start_paused = true)]
async fn an_interrupt_mid_stream_leaves_a_valid_conversation() {
    let provider = Scripted::new(
        vec![
            respond(
                "I will read both files now",
                &[("1", "read_file", read("a.txt"))],
            ),
            respond("fresh answer", &[]),
        ],
        Duration::from_millis(40),
    );
    let mut s = session(provider, |_| {});
    s.handle
        .ops
        .send(Op::Submit {
            text: "go".into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    events_until(&mut s.handle, |e| matches!(e, AgentEvent::TextDelta { .. })).await;
    s.handle.ops.send(Op::Interrupt).expect("agent alive");
    let events = events_until(&mut s.handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    assert_eq!(stop_reason(&events), "interrupted");
    assert_eq!(
        count(&events, |e| matches!(e, AgentEvent::ToolCall { .. })),
        0,
        "the half-streamed call never ran"
    );
    // The scripted provider asserts the next request's history is valid.
    let events = prompt(&mut s, "again").await;
    assert_eq!(stop_reason(&events), "end_turn");
    let last = s.provider.requests().pop().expect("request");
    assert_eq!(
        last.messages.len(),
        3,
        "partial answer kept, prompts merged: {:#?}",
        last.messages
    );
}

#[tokio::test]
async fn a_denied_approval_reaches_the_model_as_a_result() {
    let write = respond(
        "",
        &[(
            "w1",
            "write_file",
            json!({"file": "out.txt", "content": "x"}),
        )],
    );
    let provider = Scripted::new(vec![write, respond("ok, I will not", &[])], Duration::ZERO);
    let mut s = session(provider, |_| {});
    s.handle
        .ops
        .send(Op::Submit {
            text: "write out.txt".into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    let asked = events_until(&mut s.handle, |e| {
        matches!(e, AgentEvent::ApprovalRequest { .. })
    })
    .await;
    assert!(
        matches!(asked.last(), Some(AgentEvent::ApprovalRequest { name, .. }) if name == "write_file")
    );
    s.handle
        .ops
        .send(Op::Approve {
            id: "w1".into(),
            decision: ApprovalDecision::Deny,
        })
        .expect("agent alive");
    let events = events_until(&mut s.handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    assert_eq!(stop_reason(&events), "end_turn");
    assert!(
        !s.dir.path().join("out.txt").exists(),
        "a denied call does not run"
    );
    let second = &s.provider.requests()[1];
    let result = second.messages.last().expect("results");
    assert!(matches!(&result.content[0],
        ContentBlock::ToolResult { content, is_error: true, .. } if content == DENIED));
}

#[tokio::test]
async fn allow_always_stops_asking_for_that_tool() {
    let write = |id: &str, f: &str| {
        respond(
            "",
            &[(id, "write_file", json!({"file": f, "content": "x"}))],
        )
    };
    let script = vec![
        write("w1", "one.txt"),
        write("w2", "two.txt"),
        respond("done", &[]),
    ];
    let provider = Scripted::new(script, Duration::ZERO);
    let mut s = session(provider, |_| {});
    s.handle
        .ops
        .send(Op::Submit {
            text: "write two files".into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    events_until(&mut s.handle, |e| {
        matches!(e, AgentEvent::ApprovalRequest { .. })
    })
    .await;
    s.handle
        .ops
        .send(Op::Approve {
            id: "w1".into(),
            decision: ApprovalDecision::AllowAlways,
        })
        .expect("agent alive");
    let events = events_until(&mut s.handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    assert_eq!(
        count(&events, |e| matches!(e, AgentEvent::ApprovalRequest { .. })),
        0
    );
    assert!(s.dir.path().join("one.txt").exists() && s.dir.path().join("two.txt").exists());
}

#[tokio::test]
async fn headless_without_yes_denies_and_with_yes_runs() {
    let write = respond(
        "",
        &[(
            "w1",
            "write_file",
            json!({"file": "out.txt", "content": "x"}),
        )],
    );
    let provider = Scripted::new(vec![write.clone(), respond("fine", &[])], Duration::ZERO);
    let mut s = session(provider, |o| o.approval = ApprovalPolicy::Deny);
    let events = prompt(&mut s, "write").await;
    let error = events.iter().find_map(|e| match e {
        AgentEvent::ToolResult { error, .. } => error.clone(),
        _ => None,
    });
    assert_eq!(error.as_deref(), Some(DENIED_HEADLESS));
    assert!(!s.dir.path().join("out.txt").exists());

    let provider = Scripted::new(vec![write, respond("fine", &[])], Duration::ZERO);
    let s2 = session(provider, |o| o.approval = ApprovalPolicy::AutoApprove);
    let mut s2 = s2;
    let events = prompt(&mut s2, "write").await;
    assert_eq!(
        count(&events, |e| matches!(e, AgentEvent::ApprovalRequest { .. })),
        0
    );
    assert!(s2.dir.path().join("out.txt").exists());
}

#[tokio::test]
async fn parallel_reads_keep_call_order_and_bad_arguments_get_an_error_result() {
    let calls = respond(
        "",
        &[
            ("1", "read_file", read("b.txt")),
            ("2", "read_file", json!("{\"file\": ")),
            ("3", "read_file", read("a.txt")),
            ("4", "no_such_tool", json!({})),
        ],
    );
    let provider = Scripted::new(vec![calls, respond("done", &[])], Duration::ZERO);
    let mut s = session(provider, |_| {});
    prompt(&mut s, "read").await;
    let second = &s.provider.requests()[1];
    let results: Vec<(String, String, bool)> = second
        .messages
        .last()
        .expect("results")
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => Some((tool_use_id.clone(), content.clone(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(results[0], ("1".into(), "1  B\n".into(), false));
    assert!(
        results[1].2
            && results[1]
                .1
                .starts_with("invalid arguments: the arguments were not a JSON object")
    );
    assert_eq!(results[2], ("3".into(), "1  A\n".into(), false));
    assert!(results[3].2 && results[3].1.starts_with("unknown tool `no_such_tool`"));
}

fn result_for<'a>(request: &'a chatcli::conversation::ModelRequest, id: &str) -> Option<&'a str> {
    request
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .find_map(|b| match b {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } if tool_use_id == id => Some(content.as_str()),
            _ => None,
        })
}

#[tokio::test]
async fn an_old_result_is_whole_then_truncated_then_a_summary_line() {
    let mut script = vec![respond("", &[("big", "read_file", read("big.txt"))])];
    for i in 0..6 {
        script.push(respond(
            "",
            &[(&format!("s{i}"), "read_file", read(&format!("s{i}.txt")))],
        ));
    }
    script.push(respond("done", &[]));
    let provider = Scripted::new(script, Duration::ZERO);
    let mut s = session(provider, |o| {
        o.compaction.schedule = chatcli::agent::compaction::Schedule::Eager
    });
    let big: String = (1..=400)
        .map(|i| format!("fn f{i}() {{ let value = {i}; }}\n"))
        .collect();
    std::fs::write(s.dir.path().join("big.txt"), &big).expect("write");
    for i in 0..6 {
        std::fs::write(s.dir.path().join(format!("s{i}.txt")), "small\n").expect("write");
    }
    let events = prompt(&mut s, "read them all").await;
    assert_eq!(stop_reason(&events), "end_turn");
    let requests = s.provider.requests();
    assert_eq!(requests.len(), 8);
    // The result is first sent in request 2 (index 1): k = 2.
    let stage = |r: usize| {
        result_for(&requests[r - 1], "big")
            .expect("the big result")
            .to_string()
    };
    assert!(result_for(&requests[0], "big").is_none());
    let whole = stage(2);
    assert!(whole.len() > 3000 && !whole.contains("omitted"));
    assert_eq!(stage(3), whole, "k+1: whole");
    assert!(
        stage(4).contains("chars omitted from old tool result"),
        "k+2: truncated"
    );
    assert_eq!(stage(5), stage(4), "k+3: the same bytes as k+2");
    assert!(
        stage(6).starts_with("[Old tool result cleared — 400 lines, "),
        "k+4: {}",
        stage(6)
    );
    assert!(stage(6).contains("Rust source; full text: "));
    assert_eq!(stage(7), stage(6));
}

#[tokio::test]
async fn a_large_read_is_whole_once_then_a_pointer_the_model_can_follow() {
    let scratch = tempfile::tempdir().expect("scratch");
    let saved = scratch.path().join("toolresult_big.txt");
    let script = vec![
        respond("", &[("big", "read_file", read("big.txt"))]),
        respond("", &[("s0", "read_file", read("a.txt"))]),
        // Following the pointer: the saved copy, then a range of the file itself.
        respond(
            "",
            &[
                (
                    "back",
                    "read_file",
                    json!({"file": saved.display().to_string()}),
                ),
                (
                    "range",
                    "read_file",
                    json!({"file": "big.txt", "start": 200, "end": 201}),
                ),
            ],
        ),
        respond("done", &[]),
    ];
    let provider = Scripted::new(script, Duration::ZERO);
    let scratch_dir = scratch.path().to_path_buf();
    // The default schedule, on a priced model (the decision weighs cache prices).
    let mut s = session(provider, move |o| {
        o.scratch = chatcli::tools::Scratch::private(scratch_dir);
        o.pricing = chatcli::cost::Catalog::builtin()
            .lookup("claude-sonnet-4-5")
            .cloned();
    });
    let big: String = (1..=400)
        .map(|i| format!("fn f{i}() {{ let value = {i}; }}\n"))
        .collect();
    std::fs::write(s.dir.path().join("big.txt"), &big).expect("write");
    let events = prompt(&mut s, "read big.txt").await;
    assert_eq!(stop_reason(&events), "end_turn");
    let requests = s.provider.requests();
    assert_eq!(requests.len(), 4);
    // Request 2 shows it whole, with the rolling cache marker before it (it is about to change).
    let whole = result_for(&requests[1], "big").expect("shown").to_string();
    assert!(whole.contains("fn f200() { let value = 200; }"), "{whole}");
    assert_eq!(
        requests[1].settled_messages,
        Some(requests[1].messages.len() - 1)
    );
    // From request 3 on it is a pointer that says where to read it again.
    let pointer = result_for(&requests[2], "big")
        .expect("pointer")
        .to_string();
    assert!(
        pointer.starts_with("[read_file big.txt: 400 lines, ")
            && pointer.contains("read_file big.txt with start/end")
            && pointer.contains(&saved.display().to_string()),
        "{pointer}"
    );
    assert_eq!(result_for(&requests[3], "big"), Some(pointer.as_str()));
    assert_eq!(
        std::fs::read_to_string(&saved).expect("the result is saved"),
        whole,
        "the saved copy is the result as the model saw it"
    );
    // Both ways back work: the saved copy whole, a range of the file.
    let back = result_for(&requests[3], "back").expect("re-read");
    assert!(back.contains("fn f400() { let value = 400; }"), "{back}");
    let range = result_for(&requests[3], "range").expect("range");
    assert!(
        range.contains("fn f200()") && range.contains("fn f201()"),
        "{range}"
    );
    // Small results stay whole, and the marker then goes on the newest message.
    assert_eq!(
        result_for(&requests[3], "s0").map(str::trim_end),
        Some("1  A")
    );
}

/// `/compact` then `/rewind`: the next request is the conversation as it was before the
/// rewound prompt (summary included), and a prompt folded into the summary is refused.
#[tokio::test]
async fn rewind_after_compact_drops_the_prompt_from_the_next_request() {
    let mut script = Vec::new();
    for i in 0..6 {
        script.push(respond(&format!("answer {i}"), &[]));
    }
    script.push(respond("The user counted rounds.", &[]));
    script.push(respond("ok", &[]));
    let provider = Scripted::new(script, Duration::ZERO);
    let mut s = session(provider, |o| o.early_exit = false);
    for i in 0..6 {
        prompt(&mut s, &format!("round {i}")).await;
    }
    s.handle.ops.send(Op::Compact).expect("agent alive");
    events_until(
        &mut s.handle,
        |e| matches!(e, AgentEvent::Notice { message } if message.starts_with("compacted")),
    )
    .await;
    // Prompt 6 ("round 5") is kept whole after the fold; rewind to it.
    s.handle
        .ops
        .send(Op::Rewind { prompt: 5 })
        .expect("agent alive");
    let events = events_until(
        &mut s.handle,
        |e| matches!(e, AgentEvent::Notice { message } if message.starts_with("rewound")),
    )
    .await;
    let rewound = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Notice { message } if message.starts_with("rewound") => {
                Some(message.clone())
            }
            _ => None,
        })
        .expect("notice");
    assert!(!rewound.contains("(0 messages dropped)"), "{rewound}");
    prompt(&mut s, "instead").await;
    let after = s.provider.requests().last().cloned().expect("request");
    let all: String = after
        .messages
        .iter()
        .map(|m| m.text())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        !all.contains("round 5"),
        "the rewound prompt is gone: {all}"
    );
    assert!(all.contains("round 4"), "the prompt before it stays: {all}");
    assert!(all.contains("instead"), "{all}");
    // Prompt 1 was folded into the summary: refused, with the reason.
    s.handle
        .ops
        .send(Op::Rewind { prompt: 0 })
        .expect("agent alive");
    let events = events_until(&mut s.handle, |e| {
        matches!(e, AgentEvent::Notice { message } if message.contains("compacted into a summary"))
    })
    .await;
    assert!(!events.is_empty());
}

#[tokio::test]
async fn compact_folds_older_turns_into_a_model_summary() {
    let mut script = Vec::new();
    for i in 0..6 {
        script.push(respond(
            "",
            &[(&format!("c{i}"), "read_file", read("a.txt"))],
        ));
        script.push(respond(&format!("answer {i}"), &[]));
    }
    script.push(respond("The user read a.txt six times.", &[]));
    script.push(respond("ok", &[]));
    let provider = Scripted::new(script, Duration::ZERO);
    let mut s = session(provider, |o| o.early_exit = false);
    for i in 0..6 {
        prompt(&mut s, &format!("round {i}")).await;
    }
    s.handle.ops.send(Op::Compact).expect("agent alive");
    let events = events_until(&mut s.handle, |e| {
        matches!(e, AgentEvent::Usage { turn: 0, .. })
    })
    .await;
    assert!(events.iter().any(|e| matches!(e, AgentEvent::Notice { message } if message.starts_with("compacting: summarising"))));
    let summary_request = s
        .provider
        .requests()
        .last()
        .cloned()
        .expect("the summary request");
    assert!(
        summary_request.tools.is_empty(),
        "the summary request sends no tool schemas"
    );
    prompt(&mut s, "next").await;
    let after = s.provider.requests().last().cloned().expect("request");
    assert!(
        after.messages[0].text().starts_with("[Summary of the"),
        "{:#?}",
        after.messages[0]
    );
    assert!(
        after.messages[0]
            .text()
            .contains("The user read a.txt six times.")
    );
    assert!(after.messages.len() <= 10);
}

#[tokio::test]
async fn the_context_guard_turns_old_results_into_summary_lines_first() {
    let script = vec![
        respond("", &[("big", "read_file", read("big.txt"))]),
        respond("", &[("s0", "read_file", read("a.txt"))]),
        respond("done", &[]),
    ];
    let provider = Scripted::new(script, Duration::ZERO);
    let mut s = session(provider, |o| {
        // Under the default schedule this result would already be a pointer at age 1: the
        // guard is what this test is about.
        o.compaction.schedule = chatcli::agent::compaction::Schedule::Batched;
        o.pricing = Some(chatcli::cost::Pricing {
            input: 3.0,
            output: 15.0,
            cache_read: Some(0.3),
            cache_write_5m: Some(3.75),
            cache_write_1h: None,
            context_window: Some(4000),
            aliases: Vec::new(),
            source: String::new(),
            as_of: String::new(),
        });
    });
    std::fs::write(
        s.dir.path().join("big.txt"),
        "x".repeat(60).repeat(200).replace("xx", "x\n"),
    )
    .expect("write");
    let events = prompt(&mut s, "read big.txt").await;
    assert!(events.iter().any(
        |e| matches!(e, AgentEvent::Notice { message } if message.starts_with("context over 85%"))
    ));
    let requests = s.provider.requests();
    let third = result_for(&requests[2], "big").expect("result");
    assert!(
        third.starts_with("[Old tool result cleared"),
        "age 1 is already a summary under pressure: {}",
        &third[..80.min(third.len())]
    );
}

/// Twelve parallel calls put 24 content blocks between two rolling markers, past Anthropic's
/// 20-block lookback: the next request carries a bridge where the last marker was.
#[tokio::test]
async fn after_a_parallel_batch_the_request_bridges_to_the_last_marker() {
    let ids: Vec<String> = (0..12).map(|i| format!("r{i}")).collect();
    let calls: Vec<(&str, &str, serde_json::Value)> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), "read_file", read(&format!("f{i}.txt"))))
        .collect();
    let script = vec![
        respond("", &calls),
        respond("", &[("one", "read_file", read("f0.txt"))]),
        respond("done", &[]),
    ];
    let provider = Scripted::new(script, Duration::ZERO);
    let mut s = session(provider, |_| {});
    for i in 0..12 {
        std::fs::write(
            s.dir.path().join(format!("f{i}.txt")),
            format!("line {i}\n"),
        )
        .expect("write");
    }
    let events = prompt(&mut s, "read them all").await;
    assert_eq!(stop_reason(&events), "end_turn");
    let requests = s.provider.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].bridge_message, None, "nothing cached before");
    // The small results stay whole: the marker moves over all 24 blocks in one step.
    let rolling = requests[0].rolling_marker();
    assert_eq!(requests[1].bridge_message, rolling);
    assert_eq!(requests[1].bridge_marker(), rolling);
    assert!(requests[1].rolling_marker() > rolling);
    assert_eq!(requests[2].bridge_message, requests[1].rolling_marker());
    // The bridged message is the one the earlier request marked, unchanged.
    let i = requests[2].bridge_message.expect("a bridge");
    assert_eq!(requests[2].messages[i], requests[1].messages[i]);
}

/// Each request carries the whole history: a message sent again unchanged must be the same
/// allocation the previous request sent (the compactor's), never a copy of its bytes.
#[tokio::test]
async fn a_message_sent_again_is_shared_with_the_previous_request_not_copied() {
    let script = vec![
        respond("", &[("1", "read_file", read("a.txt"))]),
        respond("", &[("2", "read_file", read("b.txt"))]),
        respond("done", &[]),
        respond("again", &[]),
    ];
    let mut s = session(Scripted::new(script, Duration::ZERO), |_| {});
    prompt(&mut s, "read a.txt, then b.txt").await;
    prompt(&mut s, "and now?").await;
    let requests = s.provider.requests();
    assert_eq!(requests.len(), 4);
    let mut shared = 0;
    for (n, pair) in requests.windows(2).enumerate() {
        let sent_again = pair[0].messages.iter().zip(&pair[1].messages).enumerate();
        for (i, (was, now)) in sent_again.filter(|(_, (was, now))| was == now) {
            assert!(
                Arc::ptr_eq(was, now),
                "request {}: message {i} copied",
                n + 2
            );
            shared += 1;
        }
    }
    // 1 + 3 + 5 messages sent again, every one unchanged.
    assert!(shared >= 9, "{shared} messages shared");
}
