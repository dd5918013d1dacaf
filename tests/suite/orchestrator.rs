//! The orchestrator: `dispatch` runs specialists as sub-loops of the real agent loop, in
//! parallel, each with only its own tools, prompt and task; their answers come back as one
//! result; their events carry `agent` and `task`; their usage is booked per agent; an interrupt
//! stops them all. The model is an in-process provider that answers by request content.

use std::time::Duration;

use chatcli::agent::{self, ApprovalPolicy};
use chatcli::conversation::{ContentBlock, ModelRequest};
use chatcli::protocol::{AgentEvent, ApprovalDecision, Mode, Op};
use serde_json::json;

use crate::common::scripted::{
    Answer, ByContent, has_tool_result, respond, system_text, tool_results,
};
use crate::common::{events_until, options};

/// Whether the request is specialist `name`'s.
fn from_agent(request: &ModelRequest, name: &str) -> bool {
    system_text(request).starts_with(&format!("You are `{name}`, a specialist agent"))
}

/// The main loop's requests carry the one-line `dispatch` tool; a specialist's never do.
fn is_orchestrator(request: &ModelRequest) -> bool {
    request.tools.iter().any(|t| t.name == "dispatch")
}

fn tool_names(request: &ModelRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name.clone()).collect()
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join(".git")).expect(".git");
    std::fs::write(dir.path().join("a.txt"), "alpha line\nthe answer is 42\n").expect("a");
    std::fs::write(dir.path().join("b.rs"), "fn needle() {}\n").expect("b");
    dir
}

fn dispatch(tasks: serde_json::Value) -> crate::common::scripted::Script {
    respond("", &[("d1", "dispatch", json!({ "tasks": tasks }))])
}

async fn until_finished(handle: &mut agent::AgentHandle) -> Vec<AgentEvent> {
    events_until(handle, |e| matches!(e, AgentEvent::Cost { .. })).await
}

fn scoped<'a>(events: &'a [AgentEvent], name: &str) -> Vec<(u32, &'a AgentEvent)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Scoped { agent, task, event } if agent == name => Some((*task, &**event)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn file_and_search_run_at_once_each_with_its_own_tools_and_both_results_come_back() {
    let dir = workspace();
    // The latch opens only when both specialists' first requests wait at it: one after the
    // other, the first would wait forever and the test would fail at its deadline.
    let provider = ByContent::new(2, |request| {
        if from_agent(request, "file") {
            return if has_tool_result(request) {
                Answer::now(respond("a.txt says the answer is 42", &[]))
            } else {
                Answer::at_latch(respond(
                    "",
                    &[("f1", "read_file", json!({"file": "a.txt"}))],
                ))
            };
        }
        if from_agent(request, "search") {
            return if has_tool_result(request) {
                Answer::now(respond("needle is defined in b.rs:1", &[]))
            } else {
                Answer::at_latch(respond(
                    "",
                    &[("s1", "search_files", json!({"term": "needle"}))],
                ))
            };
        }
        if has_tool_result(request) {
            Answer::now(respond("42, and needle is in b.rs", &[]))
        } else {
            Answer::now(dispatch(json!([
                {"agent": "file", "task": "Read a.txt and say what the answer is."},
                {"agent": "search", "task": "Find where `needle` is defined."}
            ])))
        }
    });
    let mut handle = agent::spawn(provider.clone(), options(dir.path(), Mode::Agent));
    handle
        .ops
        .send(Op::Submit {
            text: "what is the answer, and where is needle?".into(),
            mode: Mode::Coder,
        })
        .expect("send");
    let events = tokio::time::timeout(Duration::from_secs(60), until_finished(&mut handle))
        .await
        .expect("both specialists waited at the latch together: their requests overlapped");

    let requests = provider.requests();
    let file: Vec<&ModelRequest> = requests.iter().filter(|r| from_agent(r, "file")).collect();
    let search: Vec<&ModelRequest> = requests
        .iter()
        .filter(|r| from_agent(r, "search"))
        .collect();
    assert_eq!((file.len(), search.len()), (2, 2));
    for request in file.iter().chain(&search) {
        assert_eq!(
            tool_names(request),
            vec!["list_directory", "read_file", "search_files"]
        );
        assert!(
            !is_orchestrator(request),
            "no dispatch tool in a specialist"
        );
        assert!(!system_text(request).contains("dispatch"));
        // Only the task: one user message on the first request.
        assert!(
            request.messages[0].text().contains("Read a.txt")
                || request.messages[0].text().contains("`needle`")
        );
    }
    assert!(file[0].messages[0].text().contains("Read a.txt"));
    // Its effort (the built-in default for mechanical reads) rides with its requests only.
    assert_eq!(file[0].effort, Some(chatcli::conversation::Effort::Low));
    assert!(
        !file[0].messages[0].text().contains("needle"),
        "a specialist sees only its own task"
    );

    let main: Vec<&ModelRequest> = requests.iter().filter(|r| is_orchestrator(r)).collect();
    assert_eq!(main.len(), 2);
    assert!(tool_names(main[0]).contains(&"dispatch".to_string()));
    // Parallel mode's whole prefix is the one-line tool: no block, no catalog in the prompt.
    assert!(main[0].system.iter().all(|b| b.name != "orchestrator"));
    assert!(!system_text(main[0]).contains("file [list read search]"));
    assert_eq!(main[0].effort, None);
    let results = tool_results(main[1]);
    assert_eq!(results.len(), 1, "one dispatch call, one result");
    let result = &results[0];
    let first = result
        .find("## Task 1 · file · done")
        .expect("file's section");
    let second = result
        .find("## Task 2 · search · done")
        .expect("search's section");
    assert!(first < second, "sections in task order: {result}");
    assert!(result.contains("a.txt says the answer is 42"));
    assert!(result.contains("needle is defined in b.rs:1"));
    let transcript = result
        .lines()
        .find_map(|l| l.strip_prefix("Transcript: "))
        .expect("a transcript path");
    let saved = std::fs::read_to_string(transcript).expect("transcript saved");
    assert!(
        saved.contains("the answer is 42"),
        "the read result is in it: {saved}"
    );

    // Events of a sub-loop carry the agent and the task, on the wire too.
    let file_events = scoped(&events, "file");
    assert!(file_events.iter().all(|(task, _)| *task == 0));
    assert!(
        file_events
            .iter()
            .any(|(_, e)| matches!(e, AgentEvent::ToolCall { name, .. } if name == "read_file"))
    );
    let search_events = scoped(&events, "search");
    assert!(search_events.iter().all(|(task, _)| *task == 1));
    let call = events
        .iter()
        .find(|e| matches!(e, AgentEvent::Scoped { event, .. } if matches!(**event, AgentEvent::ToolCall { .. })))
        .expect("a scoped call");
    let line = serde_json::to_string(call).expect("json");
    assert!(
        line.contains(r#""agent":"file""#) || line.contains(r#""agent":"search""#),
        "{line}"
    );
    assert!(line.contains(r#""task":"#), "{line}");
    assert!(file_events.iter().any(|(_, e)| matches!(e,
        AgentEvent::AgentFinished { stop_reason, requests: 2, .. } if stop_reason == "end_turn")));

    // Per-agent usage adds up to the session total.
    handle.ops.send(Op::CostReport).expect("send");
    let report = events_until(&mut handle, |e| matches!(e, AgentEvent::CostReport { .. })).await;
    let Some(AgentEvent::CostReport {
        by_agent,
        requests,
        input_tokens,
        output_tokens,
        ..
    }) = report.last()
    else {
        panic!("no cost report");
    };
    assert_eq!(*requests, 6);
    let names: Vec<&str> = by_agent.iter().map(|a| a.agent.as_str()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    for name in ["main", "file", "search"] {
        assert!(names.contains(&name), "{names:?}");
    }
    assert_eq!(by_agent.iter().map(|a| a.requests).sum::<u32>(), *requests);
    assert_eq!(
        by_agent.iter().map(|a| a.input_tokens).sum::<u64>(),
        *input_tokens
    );
    assert_eq!(
        by_agent.iter().map(|a| a.output_tokens).sum::<u64>(),
        *output_tokens
    );
    let _ = handle.ops.send(Op::Shutdown);
}

#[tokio::test]
async fn a_read_only_agent_asking_to_write_is_refused_and_nothing_is_written() {
    let dir = workspace();
    let provider = ByContent::new(1, |request| {
        if from_agent(request, "file") {
            return if has_tool_result(request) {
                Answer::now(respond("I could not write it.", &[]))
            } else {
                Answer::now(respond(
                    "",
                    &[(
                        "w1",
                        "write_file",
                        json!({"file": "new.txt", "content": "x"}),
                    )],
                ))
            };
        }
        if has_tool_result(request) {
            Answer::now(respond("done", &[]))
        } else {
            Answer::now(dispatch(
                json!([{"agent": "file", "task": "Write new.txt."}]),
            ))
        }
    });
    let mut opts = options(dir.path(), Mode::Agent);
    // Even with every call approved, the specialist's set decides.
    opts.approval = ApprovalPolicy::AutoApprove;
    let mut handle = agent::spawn(provider.clone(), opts);
    handle
        .ops
        .send(Op::Submit {
            text: "write new.txt".into(),
            mode: Mode::Agent,
        })
        .expect("send");
    until_finished(&mut handle).await;
    assert!(!dir.path().join("new.txt").exists(), "nothing was written");
    let requests = provider.requests();
    let second = requests
        .iter()
        .filter(|r| from_agent(r, "file"))
        .nth(1)
        .expect("the file agent's second request");
    let results = tool_results(second);
    assert_eq!(
        results,
        vec![
            "refused: `write_file` is not one of the `file` agent's tools (list_directory, read_file, search_files); nothing was run"
                .to_string()
        ]
    );
}

#[tokio::test]
async fn a_custom_agent_from_a_file_is_in_the_catalog_and_is_dispatched() {
    let dir = workspace();
    let agents = dir.path().join(".chatcli/agents");
    std::fs::create_dir_all(&agents).expect("dir");
    std::fs::write(
        agents.join("auditor.md"),
        "---\nname: auditor\ndescription: Audits licences.\ntools: Read, Grep\nmodel: audit-model\n---\nYou audit licence headers and list the files without one.\n",
    )
    .expect("write");
    std::fs::write(agents.join("broken.md"), "---\nname: broken\n---\nx\n").expect("write");
    let provider = ByContent::new(1, |request| {
        if from_agent(request, "auditor") {
            return Answer::now(respond("a.txt has no licence header", &[]));
        }
        // The catalog is on demand: a call without tasks first, then the dispatch.
        match tool_results(request).len() {
            0 => Answer::now(respond("", &[("d0", "dispatch", json!({}))])),
            1 => Answer::now(dispatch(
                json!([{"agent": "auditor", "task": "Audit a.txt."}]),
            )),
            _ => Answer::now(respond("done", &[])),
        }
    });
    let mut opts = options(dir.path(), Mode::Agent);
    // The user's pricing.toml prices the agent's own model.
    let mut catalog = chatcli::cost::Catalog::builtin();
    catalog.merge(
        chatcli::cost::Catalog::parse(
            "[models.\"audit-model\"]\ninput = 1.0\noutput = 2.0\n",
            "pricing.toml",
        )
        .expect("pricing"),
    );
    opts.catalog = std::sync::Arc::new(catalog);
    let mut handle = agent::spawn(provider.clone(), opts);
    handle
        .ops
        .send(Op::Submit {
            text: "audit the licences".into(),
            mode: Mode::Agent,
        })
        .expect("send");
    let events = until_finished(&mut handle).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Notice { message }
            if message.contains("broken.md") && message.contains("`description` is missing"))),
        "one notice names the invalid file"
    );
    let requests = provider.requests();
    let main = requests
        .iter()
        .find(|r| is_orchestrator(r) && tool_results(r).len() == 1)
        .expect("the main loop's request after the catalog call");
    let catalog = &tool_results(main)[0];
    assert!(
        catalog.starts_with("`dispatch` runs specialist agents in parallel, 4 at a time")
            && catalog.ends_with("\nauditor [read search]: Audits licences."),
        "the instructions, then custom agents after the built-ins: {catalog}"
    );
    assert!(
        !system_text(main).contains("Audits licences"),
        "the catalog is not in the prompt"
    );
    let auditor = requests
        .iter()
        .find(|r| from_agent(r, "auditor"))
        .expect("the auditor ran");
    assert_eq!(auditor.model, "audit-model");
    assert_eq!(tool_names(auditor), vec!["read_file", "search_files"]);
    assert!(system_text(auditor).contains("You audit licence headers"));
    let last = requests.last().expect("last");
    assert!(tool_results(last)[1].contains("a.txt has no licence header"));
    handle.ops.send(Op::CostReport).expect("send");
    let report = events_until(&mut handle, |e| matches!(e, AgentEvent::CostReport { .. })).await;
    let Some(AgentEvent::CostReport { by_agent, .. }) = report.last() else {
        panic!("no cost report");
    };
    let auditor = by_agent
        .iter()
        .find(|a| a.agent == "auditor")
        .expect("the auditor's row");
    assert!(
        auditor.cost_usd.is_some(),
        "priced from the user's catalog: {auditor:?}"
    );
}

#[tokio::test]
async fn an_interrupt_cancels_every_running_specialist() {
    let dir = workspace();
    let provider = ByContent::new(1, |request| {
        if from_agent(request, "file") || from_agent(request, "search") {
            return Answer::hang();
        }
        if request
            .messages
            .last()
            .is_some_and(|m| m.text().contains("and now?"))
        {
            return Answer::now(respond("Both were stopped.", &[]));
        }
        Answer::now(dispatch(json!([
            {"agent": "file", "task": "Read a.txt."},
            {"agent": "search", "task": "Find needle."}
        ])))
    });
    let mut handle = agent::spawn(provider.clone(), options(dir.path(), Mode::Agent));
    handle
        .ops
        .send(Op::Submit {
            text: "go".into(),
            mode: Mode::Agent,
        })
        .expect("send");
    // Both specialists are mid-request once both have started a turn.
    let started = std::cell::RefCell::new(std::collections::BTreeSet::new());
    events_until(&mut handle, |e| {
        if let AgentEvent::Scoped { agent, event, .. } = e
            && matches!(**event, AgentEvent::TurnStarted { .. })
        {
            started.borrow_mut().insert(agent.clone());
        }
        started.borrow().len() == 2
    })
    .await;
    handle.ops.send(Op::Interrupt).expect("interrupt");
    let events = until_finished(&mut handle).await;
    for name in ["file", "search"] {
        assert!(
            scoped(&events, name).iter().any(|(_, e)| matches!(e,
                AgentEvent::AgentFinished { stop_reason, .. } if stop_reason == "interrupted")),
            "{name} was cancelled"
        );
    }
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::TurnFinished { stop_reason, .. } if stop_reason == "interrupted")));
    // The next prompt is a valid request: the interrupted dispatch call got its result.
    let before = provider.requests().len();
    handle
        .ops
        .send(Op::Submit {
            text: "and now?".into(),
            mode: Mode::Agent,
        })
        .expect("send");
    until_finished(&mut handle).await;
    let requests = provider.requests();
    let next = requests
        .iter()
        .skip(before)
        .find(|r| r.messages.iter().any(|m| m.text().contains("and now?")))
        .expect("the next prompt was sent");
    let blocks = || next.messages.iter().flat_map(|m| m.content.iter());
    let calls: Vec<&str> = blocks()
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    assert!(!calls.is_empty(), "the dispatch call is in the history");
    for id in calls {
        assert!(
            blocks().any(
                |b| matches!(b, ContentBlock::ToolResult { tool_use_id, .. } if tool_use_id == id)
            ),
            "call {id} has its result in the next request"
        );
    }
}

#[tokio::test]
async fn a_specialists_writes_ask_labelled_with_its_name_one_dialog_at_a_time() {
    let dir = workspace();
    let provider = ByContent::new(1, |request| {
        if from_agent(request, "coder") {
            let task = request.messages[0].text();
            let file = if task.contains("one.txt") {
                "one.txt"
            } else {
                "two.txt"
            };
            return if has_tool_result(request) {
                Answer::now(respond(&format!("wrote {file}"), &[]))
            } else {
                Answer::now(respond(
                    "",
                    &[("w", "write_file", json!({"file": file, "content": "x"}))],
                ))
            };
        }
        if has_tool_result(request) {
            Answer::now(respond("done", &[]))
        } else {
            Answer::now(dispatch(json!([
                {"agent": "coder", "task": "Write one.txt."},
                {"agent": "coder", "task": "Write two.txt."}
            ])))
        }
    });
    let mut handle = agent::spawn(provider.clone(), options(dir.path(), Mode::Coder));
    handle
        .ops
        .send(Op::Submit {
            text: "write both".into(),
            mode: Mode::Coder,
        })
        .expect("send");
    let calls = std::cell::Cell::new(0);
    let asks = std::cell::RefCell::new(Vec::new());
    events_until(&mut handle, |e| {
        if let AgentEvent::Scoped { agent, event, .. } = e {
            match **event {
                AgentEvent::ToolCall { .. } => calls.set(calls.get() + 1),
                AgentEvent::ApprovalRequest { .. } => asks.borrow_mut().push(agent.clone()),
                _ => {}
            }
        }
        calls.get() == 1 && !asks.borrow().is_empty()
    })
    .await;
    assert_eq!(
        asks.into_inner(),
        vec!["coder"],
        "the dialog names the agent"
    );
    // Both calls wait; only one dialog is open, and the other call is not shown (as running)
    // until its turn to ask comes. Give it a generous chance to ask too.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut pending = Vec::new();
    while let Ok(event) = handle.events.try_recv() {
        pending.push(event.msg);
    }
    assert!(
        !pending
            .iter()
            .any(|e| matches!(e, AgentEvent::Scoped { event, .. }
            if matches!(**event, AgentEvent::ApprovalRequest { .. }))),
        "a second dialog opened before the first was answered"
    );
    assert!(
        !pending
            .iter()
            .any(|e| matches!(e, AgentEvent::Scoped { event, .. }
            if matches!(**event, AgentEvent::ToolCall { .. }))),
        "the waiting call was announced before its turn to ask"
    );
    for _ in 0..2 {
        handle
            .ops
            .send(Op::Approve {
                id: "w".into(),
                decision: ApprovalDecision::AllowOnce,
            })
            .expect("approve");
        let events = events_until(&mut handle, |e| {
            matches!(e, AgentEvent::Scoped { event, .. }
                if matches!(**event, AgentEvent::ApprovalRequest { .. } | AgentEvent::AgentFinished { .. }))
                || matches!(e, AgentEvent::Cost { .. })
        })
        .await;
        if let Some(AgentEvent::Scoped { agent, event, .. }) = events.last()
            && let AgentEvent::ApprovalRequest { .. } = **event
        {
            assert_eq!(agent, "coder", "the dialog names the agent");
        }
    }
    until_finished(&mut handle).await;
    assert!(dir.path().join("one.txt").exists());
    assert!(dir.path().join("two.txt").exists());
    // A specialist kind's prefix is the same for every task: the second reads it from the cache.
    let requests = provider.requests();
    let coders: Vec<&ModelRequest> = requests
        .iter()
        .filter(|r| from_agent(r, "coder") && !has_tool_result(r))
        .collect();
    assert_eq!(coders.len(), 2);
    assert_eq!(coders[0].system, coders[1].system);
    assert_eq!(coders[0].tools, coders[1].tools);
}

#[tokio::test]
async fn with_parallel_mode_off_there_is_no_dispatch_tool() {
    let dir = workspace();
    let provider = ByContent::new(1, |_| Answer::now(respond("hi", &[])));
    let mut opts = options(dir.path(), Mode::Agent);
    opts.agents = chatcli::agents::Settings::off();
    let mut handle = agent::spawn(provider.clone(), opts);
    handle
        .ops
        .send(Op::Submit {
            text: "list the files".into(),
            mode: Mode::Agent,
        })
        .expect("send");
    until_finished(&mut handle).await;
    let request = &provider.requests()[0];
    assert!(!is_orchestrator(request));
    assert!(!tool_names(request).contains(&"dispatch".to_string()));
}

fn usage(input: u64, output: u64) -> AgentEvent {
    AgentEvent::Usage {
        turn: 1,
        usage: chatcli::protocol::UsageFigures {
            input_tokens: input,
            output_tokens: output,
            ..Default::default()
        },
        cost_usd: Some(0.001),
    }
}

#[test]
fn the_tool_panel_shows_each_specialist_with_its_calls_nested_and_cost_breaks_down_per_agent() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let (tx, _ops) = chatcli::protocol::op_channel();
    let mut app = chatcli::ui::App::new(tx, Mode::Agent, "anthropic".into(), "claude".into());
    let call = |id: &str, name: &str, args: serde_json::Value| AgentEvent::ToolCall {
        id: id.into(),
        name: name.into(),
        args,
    };
    let prompt = |text: &str| AgentEvent::Prompt {
        text: text.into(),
        mode: Mode::Run,
    };
    let result = |id: &str, name: &str, chars: u64| AgentEvent::ToolResult {
        id: id.into(),
        name: name.into(),
        ok: true,
        chars,
        saved_path: None,
        duration_ms: 12,
        error: None,
        exit_code: None,
        output: "x".into(),
        diff: None,
    };
    let events = vec![
        AgentEvent::TurnStarted { turn: 1 },
        call(
            "d1",
            "dispatch",
            json!({"tasks": [{"agent": "file", "task": "Read a.txt"}, {"agent": "search", "task": "Find needle"}]}),
        ),
        prompt("Read a.txt and say what the answer is.").scoped("file", 0),
        prompt("Find where `needle` is defined.").scoped("search", 1),
        call("c1", "read_file", json!({"file": "a.txt"})).scoped("file", 0),
        call("c1", "search_files", json!({"term": "needle"})).scoped("search", 1),
        result("c1", "read_file", 2400).scoped("file", 0),
        usage(1200, 80).scoped("file", 0),
        usage(900, 40).scoped("search", 1),
        // Its second call lands under its own row, not after the other specialist's.
        call("c2", "list_directory", json!({"dir": "src"})).scoped("file", 0),
        result("c2", "list_directory", 300).scoped("file", 0),
        usage(1500, 60).scoped("file", 0),
        AgentEvent::AgentFinished {
            stop_reason: "end_turn".into(),
            duration_ms: 2300,
            requests: 2,
            input_tokens: 2700,
            output_tokens: 140,
            transcript: None,
        }
        .scoped("file", 0),
    ];
    for event in events {
        app.handle_agent_event(event);
    }
    let screen = crate::common::screen_at(&mut app, 100, 24);
    let lines: Vec<&str> = screen.lines().collect();
    let row = |needle: &str| {
        lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle} not on screen:\n{screen}"))
    };
    assert!(row("✓ file ") < row("✓ read_file"));
    assert!(row("✓ read_file") < row("✓ list_directory"));
    assert!(
        row("✓ list_directory") < row("⠋ search "),
        "the file agent's calls stay under it"
    );
    assert!(row("⠋ search ") < row("⠋ search_files"));
    assert!(
        lines[row("✓ file ")].contains("2.7k↑ 140↓ 2.3s"),
        "{screen}"
    );
    assert!(
        lines[row("⠋ search ")].contains("900↑ 40↓ running"),
        "{screen}"
    );
    assert!(
        screen.contains("3.6k↑"),
        "the status bar counts the specialists' usage: {screen}"
    );
    insta::assert_snapshot!("orchestrator_tool_panel", screen);

    for c in "/cost".chars() {
        app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let agent_cost = |agent: &str, requests: u32, input: u64, output: u64, cost: f64| {
        chatcli::protocol::AgentCost {
            agent: agent.into(),
            requests,
            input_tokens: input,
            output_tokens: output,
            cost_usd: Some(cost),
        }
    };
    app.handle_agent_event(AgentEvent::CostReport {
        provider: "anthropic".into(),
        model: "claude".into(),
        requests: 5,
        uncached_input_tokens: 5_000,
        input_tokens: 5_000,
        output_tokens: 300,
        cache_read_tokens: 0,
        cache_creation_tokens: 0,
        cost_usd: Some(0.05),
        saved_usd: 0.0,
        budget_usd: None,
        by_model: Vec::new(),
        by_agent: vec![
            agent_cost("main", 2, 1_400, 120, 0.02),
            agent_cost("file", 2, 2_700, 140, 0.02),
            agent_cost("search", 1, 900, 40, 0.01),
        ],
        images: 0,
        image_tokens: 0,
        expiries: Vec::new(),
    });
    let summary = crate::common::screen_at(&mut app, 100, 30);
    assert!(summary.contains("By agent:"), "{summary}");
    assert!(summary.contains("file"));
    insta::assert_snapshot!("orchestrator_cost_by_agent", summary);
    // A running specialist's row counts its time at each frame tick.
    app.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    app.tick_at(std::time::Instant::now() + std::time::Duration::from_secs(75));
    let screen = crate::common::screen_at(&mut app, 100, 24);
    let search = screen
        .lines()
        .find(|l| l.contains(" search ") && l.contains("900↑ 40↓"))
        .unwrap_or_else(|| panic!("no search row:\n{screen}"));
    assert!(search.contains("running 1m1"), "{search}");
    assert!(
        screen.lines().any(|l| l.contains("2.7k↑ 140↓ 2.3s")),
        "a finished row keeps its duration: {screen}"
    );
}

#[tokio::test]
async fn the_session_log_keeps_specialist_events_and_resume_shows_and_bills_them() {
    let dir = workspace();
    let rule = |request: &ModelRequest| {
        if from_agent(request, "file") {
            return Answer::now(respond("a.txt says 42", &[]));
        }
        if has_tool_result(request) {
            Answer::now(respond("42", &[]))
        } else {
            Answer::now(dispatch(json!([{"agent": "file", "task": "Read a.txt."}])))
        }
    };
    let provider = ByContent::new(1, rule);
    let sessions = dir.path().join("home/sessions");
    let mut opts = options(dir.path(), Mode::Agent);
    opts.sessions_dir = Some(sessions.clone());
    let mut handle = agent::spawn(provider.clone(), opts.clone());
    handle
        .ops
        .send(Op::Submit {
            text: "what does a.txt say?".into(),
            mode: Mode::Agent,
        })
        .expect("send");
    until_finished(&mut handle).await;
    let _ = handle.ops.send(Op::Shutdown);
    let _ = handle.join.await;

    let log = sessions.join(format!("{}.jsonl", opts.session_id));
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(
        text.lines()
            .any(|l| l.contains(r#""agent":"file","task":0,"type":"agent_finished""#)),
        "the log keeps scoped events flat"
    );
    let resumed = chatcli::session_log::load(&log).expect("the log reads back");
    assert!(resumed.events.iter().any(|e| matches!(e,
        AgentEvent::Scoped { agent, event, .. } if agent == "file" && matches!(**event, AgentEvent::Usage { .. }))));
    // The history logged is the orchestrator's: the specialist's conversation is not in it.
    assert!(
        resumed
            .history
            .iter()
            .all(|m| !m.text().contains("a.txt says 42")
                || m.role == chatcli::conversation::Role::User),
        "only the dispatch result mentions the specialist's answer"
    );

    let (tx, _ops) = chatcli::protocol::op_channel();
    let mut app = chatcli::ui::App::new(tx, Mode::Agent, "scripted".into(), "m".into());
    app.replay(resumed.events.clone());
    let screen = crate::common::screen_at(&mut app, 100, 24);
    assert!(screen.contains("✓ file "), "{screen}");

    // Resumed, the bill still knows who spent what.
    let mut again = options(dir.path(), Mode::Agent);
    again.resume = Some(resumed);
    let mut handle = agent::spawn(ByContent::new(1, rule), again);
    handle.ops.send(Op::CostReport).expect("send");
    let report = events_until(&mut handle, |e| matches!(e, AgentEvent::CostReport { .. })).await;
    let Some(AgentEvent::CostReport { by_agent, .. }) = report.last() else {
        panic!("no report");
    };
    let names: Vec<(&str, u32)> = by_agent
        .iter()
        .map(|a| (a.agent.as_str(), a.requests))
        .collect();
    assert_eq!(names, vec![("main", 2), ("file", 1)]);
}

#[test]
fn a_specialists_approval_names_it_and_the_answer_goes_back_with_the_bare_id() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let (tx, mut ops) = crate::common::keys::ui_channel();
    let mut app = chatcli::ui::App::new(tx, Mode::Coder, "anthropic".into(), "claude".into());
    app.handle_agent_event(
        AgentEvent::Prompt {
            text: "Write one.txt.".into(),
            mode: Mode::Run,
        }
        .scoped("coder", 0),
    );
    let args = json!({"file": "one.txt", "content": "x"});
    app.handle_agent_event(
        AgentEvent::ToolCall {
            id: "w".into(),
            name: "write_file".into(),
            args: args.clone(),
        }
        .scoped("coder", 0),
    );
    app.handle_agent_event(
        AgentEvent::ApprovalRequest {
            id: "w".into(),
            name: "write_file".into(),
            args,
            preview: None,
        }
        .scoped("coder", 0),
    );
    let screen = crate::common::screen_at(&mut app, 100, 30);
    assert!(
        screen.contains("The coder agent wants to run write_file"),
        "{screen}"
    );
    assert!(screen.contains("awaiting approval"), "{screen}");
    crate::common::settle_approval(&mut app);
    crate::common::press_alone(
        &mut app,
        KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE),
    );
    assert_eq!(
        ops.try_recv().ok(),
        Some(Op::Approve {
            id: "w".into(),
            decision: ApprovalDecision::AllowOnce
        })
    );
    let screen = crate::common::screen_at(&mut app, 100, 30);
    assert!(!screen.contains("awaiting approval"), "{screen}");
}

#[tokio::test]
async fn specialists_spend_the_sessions_budget_and_stop_at_it() {
    let dir = workspace();
    let provider = ByContent::new(1, |request| {
        if from_agent(request, "file") || from_agent(request, "search") {
            // Always one more read: only the budget can stop them.
            return Answer::now(respond("", &[("r", "read_file", json!({"file": "a.txt"}))]));
        }
        if has_tool_result(request) {
            Answer::now(respond("done", &[]))
        } else {
            Answer::now(dispatch(json!([
                {"agent": "file", "task": "Read a.txt."},
                {"agent": "search", "task": "Find needle."}
            ])))
        }
    });
    let mut opts = options(dir.path(), Mode::Agent);
    // One scripted request costs $0.00045 at the demo's prices: the orchestrator's first
    // request and one specialist request pass this budget.
    opts.budget_usd = Some(0.0008);
    let mut handle = agent::spawn(provider.clone(), opts);
    handle
        .ops
        .send(Op::Submit {
            text: "go".into(),
            mode: Mode::Agent,
        })
        .expect("send");
    let events = until_finished(&mut handle).await;
    for name in ["file", "search"] {
        assert!(
            scoped(&events, name).iter().any(|(_, e)| matches!(e,
                AgentEvent::AgentFinished { stop_reason, .. } if stop_reason == "budget")),
            "{name} stopped at the shared budget"
        );
    }
    let specialist_requests = provider
        .requests()
        .iter()
        .filter(|r| !is_orchestrator(r))
        .count();
    assert!(
        specialist_requests <= 2,
        "{specialist_requests} specialist requests"
    );
    assert!(events.iter().any(|e| matches!(e,
        AgentEvent::TurnFinished { stop_reason, .. } if stop_reason == "budget")));
}

#[tokio::test]
async fn exec_json_lines_of_a_specialist_carry_agent_and_task_and_plain_output_is_the_answer() {
    let dir = workspace();
    let rule = |request: &ModelRequest| {
        if from_agent(request, "file") {
            return if has_tool_result(request) {
                Answer::now(respond("SPECIALIST WORDS", &[]))
            } else {
                Answer::now(respond(
                    "",
                    &[("f1", "read_file", json!({"file": "a.txt"}))],
                ))
            };
        }
        if has_tool_result(request) {
            Answer::now(respond("the answer is 42", &[]))
        } else {
            Answer::now(dispatch(json!([{"agent": "file", "task": "Read a.txt."}])))
        }
    };
    let mut out: Vec<u8> = Vec::new();
    chatcli::exec::run(
        ByContent::new(1, rule),
        options(dir.path(), Mode::Agent),
        "what is the answer?".into(),
        Mode::Agent,
        true,
        &mut out,
    )
    .await
    .expect("exec");
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let call = lines
        .iter()
        .find(|l| l["type"] == "tool_call" && l["name"] == "read_file")
        .expect("the specialist's call");
    assert_eq!(call["agent"], "file");
    assert_eq!(call["task"], 0);
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "agent_finished" && l["agent"] == "file")
    );
    assert_eq!(
        lines.last().map(|l| l["type"].clone()),
        Some(json!("cost")),
        "the session's cost is last"
    );
    assert_eq!(
        lines.iter().filter(|l| l["type"] == "cost").count(),
        1,
        "a specialist sends no cost of its own"
    );

    let mut plain: Vec<u8> = Vec::new();
    chatcli::exec::run(
        ByContent::new(1, rule),
        options(dir.path(), Mode::Agent),
        "what is the answer?".into(),
        Mode::Agent,
        false,
        &mut plain,
    )
    .await
    .expect("exec");
    let text = String::from_utf8_lossy(&plain);
    assert!(text.contains("the answer is 42"), "{text}");
    assert!(!text.contains("SPECIALIST WORDS"), "{text}");
}

#[tokio::test]
async fn rewinding_a_prompt_undoes_the_files_its_specialists_wrote() {
    let dir = workspace();
    let provider = ByContent::new(1, |request| {
        if from_agent(request, "coder") {
            return if has_tool_result(request) {
                Answer::now(respond("a.txt rewritten, new.txt created", &[]))
            } else {
                Answer::now(respond(
                    "",
                    &[
                        (
                            "w1",
                            "write_file",
                            json!({"file": "a.txt", "content": "rewritten\n"}),
                        ),
                        (
                            "w2",
                            "write_file",
                            json!({"file": "new.txt", "content": "fresh\n"}),
                        ),
                    ],
                ))
            };
        }
        if has_tool_result(request) {
            Answer::now(respond("done", &[]))
        } else {
            Answer::now(dispatch(
                json!([{"agent": "coder", "task": "Rewrite a.txt and create new.txt."}]),
            ))
        }
    });
    let mut opts = options(dir.path(), Mode::Agent);
    opts.approval = ApprovalPolicy::AutoApprove;
    let mut handle = agent::spawn(provider.clone(), opts);
    handle
        .ops
        .send(Op::Submit {
            text: "rewrite a.txt and add new.txt".into(),
            mode: Mode::Agent,
        })
        .expect("send");
    until_finished(&mut handle).await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).expect("a.txt"),
        "rewritten\n",
        "the specialist wrote"
    );
    assert!(dir.path().join("new.txt").exists());
    handle
        .ops
        .send(Op::Rewind { prompt: 0 })
        .expect("agent alive");
    let events = events_until(
        &mut handle,
        |e| matches!(e, AgentEvent::Notice { message } if message.starts_with("rewound")),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).expect("a.txt"),
        "alpha line\nthe answer is 42\n",
        "a.txt is as before the prompt: {events:?}"
    );
    assert!(
        !dir.path().join("new.txt").exists(),
        "the file the specialist created is gone"
    );
}
