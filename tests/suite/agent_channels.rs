//! The agent driven through its channels alone: no terminal, only `Op`s in and events out.

use std::time::Duration;

use chatcli::protocol::{AgentEvent, Mode, Op};
use chatcli::ui::App;
use pretty_assertions::assert_eq;

use crate::common::{demo_agent, events_until, kind};

fn collapse(kinds: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in kinds {
        if k == "text_delta" && out.last().map(String::as_str) == Some("text_delta") {
            continue;
        }
        out.push(k);
    }
    out
}

#[tokio::test]
async fn a_tool_round_trip_emits_the_documented_sequence_and_moves_the_meters() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("notes.txt"), "first line\nsecond line\n").expect("write");
    // Parallel mode off: this sequence is about one loop, without the `dispatch` tool.
    let mut opts = crate::common::options(dir.path(), Mode::Agent);
    opts.agents = chatcli::agents::Settings::off();
    let provider: std::sync::Arc<dyn chatcli::provider::Provider> =
        std::sync::Arc::new(chatcli::provider::demo::DemoProvider::new(Duration::ZERO));
    let mut handle = chatcli::agent::spawn(provider, opts);
    handle
        .ops
        .send(Op::Submit {
            text: "please read notes.txt".into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    let kinds = collapse(events.iter().map(kind).collect());
    assert_eq!(
        kinds,
        vec![
            "session_configured",
            "prompt",
            "route",
            "turn_started",
            "text_delta",
            "usage",
            "tool_call",
            "tool_result",
            "turn_started",
            "text_delta",
            "usage",
            "turn_finished",
            "cost",
        ]
    );
    let result = events.iter().find_map(|e| match e {
        AgentEvent::ToolResult {
            ok, chars, name, ..
        } => Some((*ok, *chars, name.clone())),
        _ => None,
    });
    assert_eq!(result, Some((true, 29, "read_file".to_string())));
    let finished = events.iter().find_map(|e| match e {
        AgentEvent::TurnFinished { text, stop_reason } => Some((text.clone(), stop_reason.clone())),
        _ => None,
    });
    let (text, stop) = finished.expect("turn_finished");
    assert_eq!(stop, "end_turn");
    assert!(text.contains("2 lines"), "{text}");

    // The demo prices like Anthropic (with token counts estimated from bytes): the first request
    // writes its prefix to the cache and reads nothing, the second reads what the first wrote.
    let usages: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Usage {
                usage, cost_usd, ..
            } => Some((*usage, *cost_usd)),
            _ => None,
        })
        .collect();
    assert_eq!(usages.len(), 2);
    assert_eq!(usages[0].0.cache_read_tokens, 0);
    assert!(usages[0].0.cache_creation_tokens > 0, "{usages:?}");
    assert_eq!(
        usages[1].0.cache_read_tokens, usages[0].0.cache_creation_tokens,
        "{usages:?}"
    );

    // The status bar shows the sums of those events.
    let (tx, _rx) = chatcli::protocol::op_channel();
    let mut app = App::new(tx, Mode::Agent, String::new(), String::new());
    for event in events.iter().cloned() {
        app.handle_agent_event(event);
    }
    let input: u64 = usages.iter().map(|(u, _)| u.input_tokens).sum();
    let output: u64 = usages.iter().map(|(u, _)| u.output_tokens).sum();
    let read: u64 = usages.iter().map(|(u, _)| u.cache_read_tokens).sum();
    assert_eq!(app.status.input_tokens, input);
    assert_eq!(app.status.output_tokens, output);
    assert_eq!(app.status.cache_percent(), read * 100 / input);
    let cost: f64 = usages.iter().filter_map(|(_, c)| *c).sum();
    assert!(cost > 0.0);
    assert!((app.status.cost_usd.unwrap_or_default() - cost).abs() < 1e-12);
    assert_eq!(app.status.provider, "demo (offline)");
    match events.last() {
        Some(AgentEvent::Cost {
            input_tokens,
            output_tokens,
            cost_usd,
            ..
        }) => {
            assert_eq!((*input_tokens, *output_tokens), (input, output));
            assert!((cost_usd.unwrap_or_default() - cost).abs() < 1e-12);
        }
        other => panic!("cost must come last, got {other:?}"),
    }
}

#[tokio::test]
async fn chat_mode_sends_no_tools_so_no_tool_call_happens() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("notes.txt"), "x\n").expect("write");
    let (mut handle, _) = demo_agent(dir.path(), Mode::Chat, Duration::ZERO);
    handle
        .ops
        .send(Op::Submit {
            text: "read notes.txt".into(),
            mode: Mode::Chat,
        })
        .expect("agent alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolCall { .. }))
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, AgentEvent::TurnStarted { .. }))
            .count(),
        1
    );
}

#[tokio::test(start_paused = true)]
async fn interrupt_mid_stream_ends_the_prompt_and_the_next_one_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut handle, _) = demo_agent(dir.path(), Mode::Agent, Duration::from_millis(50));
    handle
        .ops
        .send(Op::Submit {
            text: "tell me something long".into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    events_until(&mut handle, |e| matches!(e, AgentEvent::TextDelta { .. })).await;
    handle.ops.send(Op::Interrupt).expect("agent alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    let stop = events.iter().find_map(|e| match e {
        AgentEvent::TurnFinished { stop_reason, .. } => Some(stop_reason.clone()),
        _ => None,
    });
    assert_eq!(stop.as_deref(), Some("interrupted"));
    let usage: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Usage { usage, .. } => Some(*usage),
            _ => None,
        })
        .collect();
    assert_eq!(usage.len(), 1, "the cancelled request still counts once");
    assert!(
        usage[0].estimated && usage[0].input_tokens > 0 && usage[0].output_tokens > 0,
        "with no usage from the provider it is an estimate, flagged: {usage:?}"
    );

    handle
        .ops
        .send(Op::Submit {
            text: "hello again".into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    let stop = events.iter().find_map(|e| match e {
        AgentEvent::TurnFinished { stop_reason, .. } => Some(stop_reason.clone()),
        _ => None,
    });
    assert_eq!(stop.as_deref(), Some("end_turn"));
}

#[tokio::test]
async fn set_mode_is_acknowledged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut handle, _) = demo_agent(dir.path(), Mode::Agent, Duration::ZERO);
    handle
        .ops
        .send(Op::SetMode { mode: Mode::Coder })
        .expect("agent alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::ModeChanged { .. })).await;
    assert_eq!(
        events.last(),
        Some(&AgentEvent::ModeChanged { mode: Mode::Coder })
    );
}

#[tokio::test(start_paused = true)]
async fn every_event_carries_the_id_of_the_submission_it_answers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut handle, _) = demo_agent(dir.path(), Mode::Agent, Duration::from_millis(50));
    let prompt = handle
        .ops
        .send(Op::Submit {
            text: "tell me something long".into(),
            mode: Mode::Agent,
        })
        .expect("agent alive");
    // Sent while the prompt streams: it waits its turn, and its answer carries its own id.
    let report = handle.ops.send(Op::CostReport).expect("agent alive");
    assert_eq!(
        (prompt, report),
        (1, 2),
        "ids count from 1 in sending order"
    );
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), handle.events.recv())
            .await
            .expect("an event within 10 s")
            .expect("agent alive");
        let last = matches!(event.msg, AgentEvent::CostReport { .. });
        seen.push((event.id, kind(&event.msg)));
        if last {
            break;
        }
    }
    let of = |id| -> Vec<&str> {
        seen.iter()
            .filter(|(i, _)| *i == id)
            .map(|(_, k)| k.as_str())
            .collect()
    };
    assert_eq!(of(0).first(), Some(&"session_configured"), "{seen:?}");
    assert!(of(0).iter().all(|k| !k.starts_with("turn")), "{seen:?}");
    let prompt_events = of(prompt);
    assert_eq!(prompt_events.first(), Some(&"prompt"), "{seen:?}");
    assert!(prompt_events.contains(&"turn_finished"), "{seen:?}");
    assert_eq!(prompt_events.last(), Some(&"cost"), "{seen:?}");
    assert_eq!(of(report), vec!["cost_report"], "{seen:?}");
}
