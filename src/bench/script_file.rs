//! `chatcli bench --script FILE`: a scenario written as JSON, run through the same rows.
//!
//! The shape (documented in docs/benchmark.md): `{"name", "mode", "files": {path: size in
//! bytes | text}, "prompts": [{"text", "after_minutes", "turns": [{"tool_calls": [{"name",
//! "args"}]} | {"text"}]}]}`. A size makes a file of numbered text lines of about that many
//! bytes; a string is the file's text. `after_minutes` is the pause before the prompt: the
//! scripted model's clock (and the agent's) moves on by it, so cache entries lapse as they
//! would. A prompt whose turns do not end with a text answers "done". What a newcomer gets
//! wrong: paths come from a file the user may have been sent, so each must stay beneath the
//! workspace (no absolute path, no `..`).

use std::collections::BTreeMap;
use std::path::{Component, Path};

use serde::Deserialize;
use serde_json::Value;

use super::fake::Turn;
use super::scenarios::Prompt;
use super::{BenchError, sessions};
use crate::protocol::Mode;

/// A scenario read from a file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedScenario {
    /// The scenario's name in the rows.
    pub name: String,
    /// `chat`, `agent`, `coder`, `plan` or `run` [default: coder].
    #[serde(default)]
    pub mode: Option<String>,
    /// The workspace: path → size in bytes, or the file's text.
    #[serde(default)]
    pub files: BTreeMap<String, FileSpec>,
    pub prompts: Vec<ScriptedPrompt>,
}

/// One workspace file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum FileSpec {
    /// About this many bytes of numbered text lines.
    Size(usize),
    /// This text.
    Text(String),
}

/// One prompt of the user's.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedPrompt {
    pub text: String,
    /// The pause before it, in minutes.
    #[serde(default)]
    pub after_minutes: f64,
    /// The mode this prompt is sent in [default: the scenario's], as a user switching with
    /// `/plan` and `/accept` does.
    #[serde(default)]
    pub mode: Option<String>,
    /// The model's turns answering it.
    #[serde(default)]
    pub turns: Vec<ScriptedTurn>,
}

/// One model turn: tool calls, or a text answer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ScriptedTurn {
    Calls { tool_calls: Vec<ScriptedCall> },
    Text { text: String },
}

/// One tool call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ScriptedCall {
    pub name: String,
    #[serde(default)]
    pub args: Value,
}

impl ScriptedScenario {
    /// Parses the scenario's JSON; the error names what is wrong.
    pub fn parse(text: &str) -> Result<ScriptedScenario, BenchError> {
        let scenario: ScriptedScenario = serde_json::from_str(text)
            .map_err(|e| BenchError::Script(format!("not a scenario: {e}")))?;
        if scenario.name.trim().is_empty() {
            return Err(BenchError::Script("\"name\" is empty".into()));
        }
        if scenario.prompts.is_empty() {
            return Err(BenchError::Script("\"prompts\" is empty".into()));
        }
        scenario.modes()?;
        for path in scenario.files.keys() {
            relative(path)?;
        }
        for p in &scenario.prompts {
            if !(p.after_minutes.is_finite() && p.after_minutes >= 0.0) {
                return Err(BenchError::Script(format!(
                    "after_minutes must be a number of minutes ≥ 0 (got {})",
                    p.after_minutes
                )));
            }
        }
        Ok(scenario)
    }

    /// The mode its prompts are sent in, unless a prompt names its own.
    pub fn mode(&self) -> Result<Mode, BenchError> {
        parse_mode(self.mode.as_deref(), Mode::Coder)
    }

    /// The mode of each prompt, in order.
    pub fn modes(&self) -> Result<Vec<Mode>, BenchError> {
        let default = self.mode()?;
        self.prompts
            .iter()
            .map(|p| parse_mode(p.mode.as_deref(), default))
            .collect()
    }

    /// The prompts as the scripted model plays them, each ending with a text answer.
    pub fn prompts(&self) -> Vec<Prompt> {
        self.prompts
            .iter()
            .map(|p| {
                let mut turns: Vec<Turn> = p
                    .turns
                    .iter()
                    .map(|t| match t {
                        ScriptedTurn::Calls { tool_calls } => Turn {
                            text: String::new(),
                            calls: tool_calls
                                .iter()
                                .map(|c| (c.name.clone(), c.args.clone()))
                                .collect(),
                            needs: Vec::new(),
                        },
                        ScriptedTurn::Text { text } => Turn::answer(text),
                    })
                    .collect();
                if turns.last().is_none_or(|t| !t.calls.is_empty()) {
                    turns.push(Turn::answer("done"));
                }
                (p.text.clone(), turns)
            })
            .collect()
    }

    /// The pause before each prompt, in whole seconds.
    pub fn pauses(&self) -> Vec<u64> {
        self.prompts
            .iter()
            .map(|p| (p.after_minutes * 60.0).round() as u64)
            .collect()
    }

    /// Writes the workspace's files beneath `dir`.
    pub fn write_files(&self, dir: &Path) -> Result<(), BenchError> {
        for (path, spec) in &self.files {
            let rel = relative(path)?;
            let text = match spec {
                FileSpec::Size(bytes) => {
                    let stem = rel
                        .file_stem()
                        .map(|s| s.to_string_lossy().to_string())
                        .unwrap_or_default();
                    sessions::numbered_text(&stem, *bytes)
                }
                FileSpec::Text(text) => text.clone(),
            };
            if let Some(parent) = rel.parent() {
                crate::private_fs::create_private_dirs(&dir.join(parent))
                    .map_err(|e| BenchError::Script(format!("cannot make {path}'s folder: {e}")))?;
            }
            crate::private_fs::write_private(&dir.join(rel), text.as_bytes())
                .map_err(|e| BenchError::Script(format!("cannot write {path}: {e}")))?;
        }
        Ok(())
    }
}

/// A mode's name, or `default` when there is none.
fn parse_mode(name: Option<&str>, default: Mode) -> Result<Mode, BenchError> {
    match name.map(str::to_ascii_lowercase).as_deref() {
        None => Ok(default),
        Some("coder") => Ok(Mode::Coder),
        Some("agent") => Ok(Mode::Agent),
        Some("chat") => Ok(Mode::Chat),
        Some("plan") => Ok(Mode::Plan),
        Some("run") => Ok(Mode::Run),
        Some(other) => Err(BenchError::Script(format!(
            "mode must be chat, agent, coder, plan or run (got \"{other}\")"
        ))),
    }
}

/// `path` as a relative path of plain components.
fn relative(path: &str) -> Result<&Path, BenchError> {
    let p = Path::new(path);
    let plain = !path.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)));
    if plain {
        Ok(p)
    } else {
        Err(BenchError::Script(format!(
            "file \"{path}\" must be a relative path inside the workspace"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: &str = r#"{
        "name": "day", "mode": "coder",
        "files": {"src/a.rs": 3000, "README.md": "hello\n"},
        "prompts": [
            {"text": "read a", "turns": [{"tool_calls": [{"name": "read_file", "args": {"file": "src/a.rs"}}]}, {"text": "a is read"}]},
            {"text": "and now?", "after_minutes": 12.5, "mode": "plan", "turns": [{"tool_calls": [{"name": "list_dir", "args": {}}]}]}
        ]
    }"#;

    #[test]
    fn a_scenario_file_becomes_prompts_pauses_and_files() {
        let s = ScriptedScenario::parse(DAY).expect("parses");
        assert_eq!(s.mode().expect("mode"), Mode::Coder);
        assert_eq!(s.modes().expect("modes"), vec![Mode::Coder, Mode::Plan]);
        assert_eq!(s.pauses(), vec![0, 750]);
        let prompts = s.prompts();
        assert_eq!(prompts[0].1.len(), 2);
        assert_eq!(prompts[0].1[1], Turn::answer("a is read"));
        // Calls without a final answer get one, so the next prompt's turns stay its own.
        assert_eq!(prompts[1].1.last(), Some(&Turn::answer("done")));
        let dir = tempfile::tempdir().expect("dir");
        s.write_files(dir.path()).expect("writes");
        let a = crate::files::read_bounded(&dir.path().join("src/a.rs"), 1 << 20)
            .expect("a")
            .into_text()
            .expect("text");
        assert!((2900..3200).contains(&a.len()), "{}", a.len());
    }

    #[test]
    fn paths_outside_the_workspace_and_bad_fields_are_refused_by_name() {
        for (text, needle) in [
            (
                r#"{"name":"x","files":{"../x":1},"prompts":[{"text":"a"}]}"#,
                "../x",
            ),
            (
                r#"{"name":"x","files":{"/etc/x":1},"prompts":[{"text":"a"}]}"#,
                "/etc/x",
            ),
            (
                r#"{"name":"x","mode":"fast","prompts":[{"text":"a"}]}"#,
                "fast",
            ),
            (r#"{"name":"x","prompts":[]}"#, "prompts"),
            (
                r#"{"name":"x","prompts":[{"text":"a","after_minutes":-1}]}"#,
                "after_minutes",
            ),
            (r#"{"name":"x","prompts":[{"txt":"a"}]}"#, "txt"),
            (
                r#"{"name":"x","prompts":[{"text":"a","mode":"yolo"}]}"#,
                "yolo",
            ),
        ] {
            let e = ScriptedScenario::parse(text).expect_err(text);
            assert!(e.to_string().contains(needle), "{e} should name {needle}");
        }
    }
}
