//! The bytes of every request, pinned: a refactor of the agent, the prompt stack or the tools
//! must not move a byte of what is sent (system blocks, tool schemas, the history with its
//! volatile context) in any mode. A change on purpose updates the pin below, printed on failure.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use chatcli::agent::{self, AgentOptions, Clock};
use chatcli::memory::embedder::Embedder;
use chatcli::memory::{MemoryMode, MemorySettings, NewFact, Store};
use chatcli::protocol::{AgentEvent, Mode, Op};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::common::events_until;
use crate::common::scripted::{Scripted, respond};

/// (mode, sha256 of its session's requests, workspace and home paths replaced).
const PINNED: &[(Mode, &str)] = &[
    (
        Mode::Chat,
        "0f07addf38510b26d5a64291c44ee0c061e1c172fb3297d310912c44e686a347",
    ),
    (
        Mode::Agent,
        "28886a8da7ab2500c4e1e99256363f71bf2d47b29f80d5cab52d5867476f00d6",
    ),
    (
        Mode::Coder,
        "1f4bf9b45a45df850e44073599cb5170246e8ff2d24b99b840db58bef60e2396",
    ),
];

async fn submit(handle: &mut agent::AgentHandle, text: &str, mode: Mode) {
    handle
        .ops
        .send(Op::Submit {
            text: text.into(),
            mode,
        })
        .expect("agent alive");
    events_until(handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
}

/// A session with every stable block a user can have (bootstrap file, memory index) and the
/// volatile ones (date, directory, recall), two prompts, one tool call: its requests' bytes.
async fn session_bytes(mode: Mode) -> String {
    let ws = tempfile::tempdir().expect("tempdir");
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        ws.path().join("AGENTS.md"),
        "Run the tests with `make check`.\n",
    )
    .expect("write");
    std::fs::write(ws.path().join("notes.txt"), "alpha\nbeta\n").expect("write");
    let mut store = Store::open(&home.path().join("memory")).expect("store");
    store
        .add(NewFact {
            content: "The user prefers short answers".into(),
            category: "preference".into(),
            tags: vec!["style".into()],
            source: "test".into(),
        })
        .expect("fact");
    drop(store);
    let script = if mode.uses_tools() {
        vec![
            respond("", &[("c1", "read_file", json!({"file": "notes.txt"}))]),
            respond("It says alpha and beta.", &[]),
            respond("Done.", &[]),
        ]
    } else {
        vec![respond("Hello.", &[]), respond("Done.", &[])]
    };
    let provider = Scripted::new(script, Duration::ZERO);
    let mut options = AgentOptions::new("pin".into(), mode, ws.path().to_path_buf());
    options.home = Some(home.path().to_path_buf());
    options.sessions_dir = None;
    options.time_zone = chatcli::prompt::dynamic::TimeZone::utc();
    options.clock = Clock(Arc::new(|| UNIX_EPOCH + Duration::from_secs(1_796_000_000)));
    options.memory = Some(MemorySettings {
        dir: home.path().join("memory"),
        mode: MemoryMode::Index,
        retrieval_budget: 4000,
        autorecall: true,
        hyde: false,
        embedder: Embedder::Local,
    });
    let mut handle = agent::spawn(provider.clone(), options);
    submit(
        &mut handle,
        "what does notes.txt say about short answers?",
        mode,
    )
    .await;
    submit(&mut handle, "thanks", mode).await;
    let _ = handle.ops.send(Op::Shutdown);
    let requests: Vec<serde_json::Value> = provider
        .requests()
        .iter()
        .map(|r| json!({"system": r.system, "tools": r.tools, "messages": r.messages}))
        .collect();
    let text = serde_json::to_string(&requests).expect("json");
    let ws_path = ws
        .path()
        .canonicalize()
        .expect("canonical")
        .display()
        .to_string();
    text.replace(&ws_path, "<workspace>")
        .replace(&ws.path().display().to_string(), "<workspace>")
        .replace(&home.path().display().to_string(), "<home>")
}

#[tokio::test]
async fn the_bytes_of_every_mode_are_pinned() {
    let mut wrong = Vec::new();
    for (mode, pinned) in PINNED {
        let bytes = session_bytes(*mode).await;
        let digest: String = Sha256::digest(bytes.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        if digest != *pinned {
            wrong.push(format!(
                "(Mode::{mode:?}, \"{digest}\"), // {} bytes",
                bytes.len()
            ));
            // The bytes, to diff against a checkout where the pin held.
            let path = std::env::temp_dir().join(format!("chatcli-prompt-bytes-{mode:?}.json"));
            let _ = std::fs::write(&path, &bytes);
            eprintln!("{mode:?}: the requests are in {}", path.display());
        }
    }
    assert!(
        wrong.is_empty(),
        "the request bytes changed; if on purpose, pin:\n{}",
        wrong.join("\n")
    );
}
