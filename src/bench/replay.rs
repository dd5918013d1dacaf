//! `chatcli bench --replay ID|FILE`: a recorded session turned into a `--script` scenario.
//!
//! The session log (`CHATCLI_HOME/sessions/<id>.jsonl`) holds each prompt, each request
//! (`turn_started`), each tool call and its full result, each final answer, and an `at` stamp
//! when a prompt starts and when it finishes. The replay keeps the prompts, the batches of calls
//! per request, the answers, and the idle time between one prompt's end and the next one's start
//! as `after_minutes`; it then runs through the same rows as `--script`. What a newcomer gets
//! wrong: the user's workspace is not there to run the calls again, and running them would give
//! other results; so each call is replayed as a `run_command` printing its recorded result from a
//! file of the replay's workspace (`.replay/N.txt`). The model therefore reads the recorded bytes;
//! only each call's own name and arguments differ from the recorded ones. A log written before
//! the stamps existed replays with no pauses.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde_json::json;

use super::BenchError;
use super::script_file::{FileSpec, ScriptedCall, ScriptedPrompt, ScriptedScenario, ScriptedTurn};
use crate::protocol::{AgentEvent, Mode};
use crate::session_log::Stamp;

/// What one prompt of the log did, as read.
#[derive(Debug, Default)]
struct Recorded {
    text: String,
    mode: Option<Mode>,
    started: Option<u64>,
    /// One entry per request: the calls it asked for (by their index in the files).
    batches: Vec<Vec<usize>>,
    answer: String,
}

/// Reads the log at `path` into a scenario named `replay-<file stem>`; a missing or unreadable
/// log, or one without a prompt, is an error naming it.
pub fn from_log(path: &Path) -> Result<ScriptedScenario, BenchError> {
    let fail = |why: String| BenchError::Replay(format!("{}: {why}", path.display()));
    let file = crate::files::open_regular(path).map_err(|e| fail(e.to_string()))?;
    let mut prompts: Vec<Recorded> = Vec::new();
    let mut results: Vec<String> = Vec::new();
    let mut ids: BTreeMap<String, usize> = BTreeMap::new();
    let mut last_stamp: Option<u64> = None;
    let mut finished: Option<u64> = None;
    let mut pauses: Vec<f64> = Vec::new();
    // Streamed line by line: a long session's log can be hundreds of MB.
    for line in BufReader::new(file).lines() {
        let line = line.map_err(|e| fail(e.to_string()))?;
        if let Ok(stamp) = serde_json::from_str::<Stamp>(&line) {
            last_stamp = Some(stamp.unix_secs);
            continue;
        }
        let Ok(event) = serde_json::from_str::<AgentEvent>(&line) else {
            continue;
        };
        match event {
            AgentEvent::Prompt { text, mode } => {
                let pause = match (finished, last_stamp) {
                    (Some(end), Some(start)) => start.saturating_sub(end) as f64 / 60.0,
                    _ => 0.0,
                };
                pauses.push(pause);
                prompts.push(Recorded {
                    text,
                    mode: Some(mode),
                    started: last_stamp,
                    ..Recorded::default()
                });
            }
            AgentEvent::TurnStarted { .. } => {
                if let Some(p) = prompts.last_mut() {
                    p.batches.push(Vec::new());
                }
            }
            AgentEvent::ToolCall { id, .. } => {
                let batch = prompts.last_mut().and_then(|p| p.batches.last_mut());
                if let Some(batch) = batch {
                    let n = results.len();
                    results.push(String::new());
                    ids.insert(id, n);
                    batch.push(n);
                }
            }
            AgentEvent::ToolResult { id, output, .. } => {
                if let Some(slot) = ids.get(&id).and_then(|n| results.get_mut(*n)) {
                    *slot = output;
                }
            }
            AgentEvent::TurnFinished { text, .. } => {
                if let Some(p) = prompts.last_mut() {
                    p.answer = text;
                }
                finished = last_stamp.or(prompts.last().and_then(|p| p.started));
            }
            _ => {}
        }
    }
    if prompts.is_empty() {
        return Err(fail("not a session log with a prompt".into()));
    }
    Ok(scenario(path, prompts, pauses, results))
}

/// The scenario the recorded prompts, pauses and results make.
fn scenario(
    path: &Path,
    prompts: Vec<Recorded>,
    pauses: Vec<f64>,
    results: Vec<String>,
) -> ScriptedScenario {
    let calls = !results.is_empty();
    let mode = prompts
        .iter()
        .filter_map(|p| p.mode)
        .find(|m| *m != Mode::Chat || !calls)
        .map_or("coder", |m| match m {
            Mode::Chat if !calls => "chat",
            Mode::Agent => "agent",
            Mode::Run => "run",
            // Plan mode refuses commands, and chat offers no tools: the replay's calls are
            // commands, so both replay in coder's prompt.
            _ => "coder",
        });
    let files = results
        .into_iter()
        .enumerate()
        .map(|(n, text)| (result_file(n), FileSpec::Text(text)))
        .collect();
    let prompts = prompts
        .into_iter()
        .zip(pauses)
        .map(|(p, after_minutes)| {
            let mut turns: Vec<ScriptedTurn> = p
                .batches
                .into_iter()
                .filter(|b| !b.is_empty())
                .map(|batch| ScriptedTurn::Calls {
                    tool_calls: batch
                        .into_iter()
                        .map(|n| ScriptedCall {
                            name: "run_command".into(),
                            args: json!({ "cmd": format!("cat {}", result_file(n)) }),
                        })
                        .collect(),
                })
                .collect();
            turns.push(ScriptedTurn::Text { text: p.answer });
            // One mode for the whole replay (see above): the recorded calls replay as commands.
            ScriptedPrompt {
                text: p.text,
                after_minutes,
                mode: None,
                turns,
            }
        })
        .collect();
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    ScriptedScenario {
        name: format!("replay-{stem}"),
        mode: Some(mode.into()),
        files,
        prompts,
    }
}

/// Where the `n`-th recorded result is written in the replay's workspace.
fn result_file(n: usize) -> String {
    format!(".replay/{n}.txt")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_becomes_prompts_with_its_pauses_calls_and_recorded_results() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s1.jsonl");
        let lines = [
            r#"{"type":"session_configured","provider":"x","model":"y"}"#,
            r#"{"type":"at","unix_secs":1000}"#,
            r#"{"type":"prompt","text":"fix it","mode":"coder"}"#,
            r#"{"type":"turn_started","turn":1}"#,
            r#"{"type":"tool_call","id":"c1","name":"read_file","args":{"file":"a.rs"}}"#,
            r#"{"type":"tool_result","id":"c1","name":"read_file","ok":true,"chars":5,"saved_path":null,"duration_ms":1,"output":"1\tfn a"}"#,
            r#"{"type":"turn_started","turn":2}"#,
            r#"{"type":"at","unix_secs":1030}"#,
            r#"{"type":"turn_finished","text":"fixed","stop_reason":"end_turn"}"#,
            "torn li",
            r#"{"type":"at","unix_secs":1750}"#,
            r#"{"type":"prompt","text":"thanks","mode":"coder"}"#,
            r#"{"type":"turn_started","turn":1}"#,
            r#"{"type":"at","unix_secs":1760}"#,
            r#"{"type":"turn_finished","text":"welcome","stop_reason":"end_turn"}"#,
        ];
        crate::private_fs::write_private(&path, lines.join("\n").as_bytes()).expect("write");
        let s = from_log(&path).expect("replays");
        assert_eq!(s.name, "replay-s1");
        assert_eq!(s.mode().expect("mode"), Mode::Coder);
        // 12 minutes from the first answer to the second prompt.
        assert_eq!(s.pauses(), vec![0, 720]);
        assert_eq!(
            s.files.get(".replay/0.txt"),
            Some(&FileSpec::Text("1\tfn a".into()))
        );
        let prompts = s.prompts();
        assert_eq!(prompts.len(), 2);
        assert_eq!(prompts[0].0, "fix it");
        assert_eq!(
            prompts[0].1[0].calls,
            vec![(
                "run_command".to_string(),
                json!({"cmd": "cat .replay/0.txt"})
            )]
        );
        assert_eq!(
            prompts[1].1,
            vec![super::super::fake::Turn::answer("welcome")]
        );
    }

    #[test]
    fn a_missing_log_or_one_without_a_prompt_is_named() {
        let dir = tempfile::tempdir().expect("dir");
        let missing = dir.path().join("nope.jsonl");
        let e = from_log(&missing).expect_err("missing");
        assert!(e.to_string().contains("nope.jsonl"), "{e}");
        let empty = dir.path().join("empty.jsonl");
        crate::private_fs::write_private(&empty, b"{}\n").expect("write");
        let e = from_log(&empty).expect_err("empty");
        assert!(
            e.to_string().contains("without") || e.to_string().contains("prompt"),
            "{e}"
        );
    }
}
