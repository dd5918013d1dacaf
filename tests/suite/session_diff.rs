//! `/diff` (#38): what the session changed, from the `/rewind` snapshots and git.

use std::time::Duration;

use chatcli::agent::{self, AgentOptions};
use chatcli::protocol::{AgentEvent, Mode, Op};
use serde_json::json;

use crate::common::events_until;
use crate::common::scripted::{Scripted, respond};

#[tokio::test]
async fn diff_shows_each_file_against_what_it_held_before_the_session() {
    let ws = tempfile::tempdir().expect("tempdir");
    std::fs::write(ws.path().join("notes.txt"), "alpha\nbeta\n").expect("write");
    std::fs::write(ws.path().join("same.txt"), "kept\n").expect("write");
    let provider = Scripted::new(
        vec![
            respond(
                "",
                &[
                    (
                        "c1",
                        "write_file",
                        json!({"file": "notes.txt", "content": "alpha\ngamma\n"}),
                    ),
                    (
                        "c2",
                        "write_file",
                        json!({"file": "new.txt", "content": "fresh\n"}),
                    ),
                    (
                        "c3",
                        "write_file",
                        json!({"file": "same.txt", "content": "kept\n"}),
                    ),
                ],
            ),
            respond("Done.", &[]),
        ],
        Duration::ZERO,
    );
    let mut options = AgentOptions::new("diff".into(), Mode::Coder, ws.path().to_path_buf());
    options.sessions_dir = None;
    options.approval = agent::ApprovalPolicy::AutoApprove;
    let mut handle = agent::spawn(provider, options);
    handle
        .ops
        .send(Op::Submit {
            text: "edit".into(),
            mode: Mode::Coder,
        })
        .expect("alive");
    events_until(&mut handle, |e| matches!(e, AgentEvent::Cost { .. })).await;
    handle.ops.send(Op::Diff).expect("alive");
    let events = events_until(&mut handle, |e| matches!(e, AgentEvent::Notice { .. })).await;
    let Some(AgentEvent::Notice { message }) = events.last() else {
        panic!("{events:?}");
    };
    assert!(message.starts_with("diff: 2 file(s) changed"), "{message}");
    assert!(
        message.contains("--- a/notes.txt\n+++ b/notes.txt"),
        "{message}"
    );
    assert!(message.contains("-beta\n+gamma"), "{message}");
    assert!(
        message.contains("+++ b/new.txt") && message.contains("+fresh"),
        "{message}"
    );
    assert!(
        !message.contains("same.txt"),
        "an unchanged file is not listed: {message}"
    );
    assert!(message.contains("$ git status --short"), "{message}");
}
