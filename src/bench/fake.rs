//! The benchmark's model: scripted turns that pay for what the request lost, usage from the
//! cache model of the request bytes.
//!
//! Each scripted turn names the facts it needs (a line of a file, a passage of a page, a memory
//! fact). Before playing a turn the model looks for each fact, verbatim, in what it was sent;
//! when one is missing (compacted, truncated, only in a saved file, never fetched) it first asks
//! for it again, as a real model would: a ranged `read_file` of the file or of the saved page,
//! a filtered `web_fetch`, a memory recall. That request is counted like any other. When the
//! script runs out it answers "done". Every request's usage and its floor are logged.
//!
//! Dispatched specialists ask concurrently, so their turns cannot share one queue: a request
//! whose first user message contains a lane's key (its task text) plays that lane's script.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Mutex;

use futures_util::stream;
use serde_json::{Value, json};

use crate::conversation::{ContentBlock, ModelRequest};
use crate::provider::cache_model::{CacheModel, Semantics, count, hash_bytes, segments};
use crate::provider::{Provider, ProviderEvent, ProviderStream, StopReason, UsageRecord};

/// Where a needed fact can be read again.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A file of the workspace (path relative to it).
    File(String),
    /// A web page, by URL: from its saved copy when the request names one, else fetched again.
    Web(String),
    /// The memory store, by a recall query.
    Memory(String),
}

/// A fact a turn needs verbatim in its request.
#[derive(Debug, Clone, PartialEq)]
pub struct Need {
    pub text: String,
    pub source: Source,
}

/// One scripted model turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub text: String,
    pub calls: Vec<(String, Value)>,
    pub needs: Vec<Need>,
}

impl Turn {
    /// A turn that only answers.
    pub fn answer(text: &str) -> Turn {
        Turn {
            text: text.to_string(),
            calls: Vec::new(),
            needs: Vec::new(),
        }
    }

    /// A turn that calls tools.
    pub fn calls(calls: Vec<(&str, Value)>) -> Turn {
        Turn {
            text: String::new(),
            calls: calls.into_iter().map(|(n, a)| (n.to_string(), a)).collect(),
            needs: Vec::new(),
        }
    }

    /// This turn, needing `text` from `source`.
    pub fn needs(mut self, text: &str, source: Source) -> Turn {
        self.needs.push(Need {
            text: text.to_string(),
            source,
        });
        self
    }
}

/// What one request cost, and its share of the floor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Logged {
    pub usage: UsageRecord,
    /// Tokens of a prefix sent before (the floor prices them at the cache-read price).
    pub floor_read: u64,
    /// Tokens sent for the first time at their position (the floor prices them as plain input).
    pub floor_fresh: u64,
    /// Tokens of the fixed prefix (tool schemas and system prompt) this request sent.
    pub fixed: u64,
}

struct State {
    script: VecDeque<Turn>,
    /// Specialists' scripts, by a text their task contains.
    lanes: Vec<(String, VecDeque<Turn>)>,
    /// Re-reads asked for the turn at the head of the script (at most two rounds).
    rereads: u32,
    cache: CacheModel,
    memo: HashMap<u64, u64>,
    log: Vec<Logged>,
    calls: u64,
}

/// The benchmark's provider.
pub struct FakeModel {
    model: String,
    markers: bool,
    workspace: PathBuf,
    state: Mutex<State>,
}

/// Seconds the virtual clock moves per request (well inside the 5-minute TTL).
const SECONDS_PER_REQUEST: u64 = 12;

impl FakeModel {
    /// A model that plays `script` under `semantics` on files in `workspace`; `markers` says
    /// whether the client places cache markers (`CHATCLI_PROMPT_CACHE`).
    pub fn new(
        model: &str,
        semantics: Semantics,
        markers: bool,
        workspace: PathBuf,
        script: Vec<Turn>,
    ) -> Self {
        FakeModel {
            model: model.to_string(),
            markers,
            workspace,
            state: Mutex::new(State {
                rereads: 0,
                script: script.into(),
                lanes: Vec::new(),
                cache: CacheModel::new(semantics),
                memo: HashMap::new(),
                log: Vec::new(),
                calls: 0,
            }),
        }
    }

    /// The model with specialists' scripts: a request whose task contains a lane's key plays
    /// that lane.
    pub fn with_lanes(self, lanes: Vec<(String, Vec<Turn>)>) -> Self {
        if let Ok(mut state) = self.state.lock() {
            state.lanes = lanes.into_iter().map(|(k, t)| (k, t.into())).collect();
        }
        self
    }

    /// Every request's usage and floor so far.
    pub fn log(&self) -> Vec<Logged> {
        self.state.lock().map(|s| s.log.clone()).unwrap_or_default()
    }
}

impl Provider for FakeModel {
    fn name(&self) -> &str {
        "bench"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn stream(&self, request: ModelRequest) -> ProviderStream {
        let mut events = Vec::new();
        if let Ok(mut state) = self.state.lock() {
            let state = &mut *state;
            let billed = bill_input(state, &request, self.markers);
            let turn = self.next_turn(state, &request);
            events = play(state, &turn, billed);
        }
        Box::pin(stream::iter(events.into_iter().map(Ok)))
    }
}

impl FakeModel {
    /// The turn that answers `request`: re-reads of what a scripted turn needs and the request
    /// no longer carries (two rounds at most), else the next turn of its script (a specialist's
    /// lane when its task names one).
    fn next_turn(&self, state: &mut State, request: &ModelRequest) -> Turn {
        let sent = request_text(request);
        let task = request
            .messages
            .first()
            .map(|m| m.text())
            .unwrap_or_default();
        let lane = state.lanes.iter().position(|(key, _)| task.contains(key));
        let script = match lane {
            Some(i) => &mut state.lanes[i].1,
            None => &mut state.script,
        };
        let missing: Vec<Need> = script
            .front()
            .map(|t| {
                t.needs
                    .iter()
                    .filter(|n| !sent.contains(&n.text))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        if !missing.is_empty() && state.rereads < 2 {
            state.rereads += 1;
            let calls = missing
                .iter()
                .map(|n| self.reread(n, request))
                .collect::<Vec<_>>();
            Turn {
                text: String::new(),
                calls,
                needs: Vec::new(),
            }
        } else {
            state.rereads = 0;
            script.pop_front().unwrap_or_else(|| Turn::answer("done"))
        }
    }
}

/// What the request's input costs under the cache model (the clock moved one request on), its
/// floor, and its fixed prefix; the output is counted when the turn is played.
fn bill_input(state: &mut State, request: &ModelRequest, markers: bool) -> Logged {
    let (segs, marks) = segments(request, &mut state.memo, markers, crate::tokens::count);
    state.cache.now += SECONDS_PER_REQUEST;
    let usage = state.cache.account(&segs, &marks);
    let (floor_read, floor_fresh) = state.cache.floor(&segs);
    let fixed_units = (request.tools.len() + request.system.len()).min(segs.len());
    let fixed = segs[..fixed_units].iter().map(|s| s.tokens).sum();
    Logged {
        usage,
        floor_read,
        floor_fresh,
        fixed,
    }
}

/// The events of `turn` (its text, its calls with fresh ids, the usage, the stop); the request
/// is logged with its output counted.
fn play(state: &mut State, turn: &Turn, mut billed: Logged) -> Vec<ProviderEvent> {
    let mut events = Vec::new();
    let mut output = turn.text.clone();
    if !turn.text.is_empty() {
        events.push(ProviderEvent::TextDelta(turn.text.clone()));
    }
    for (name, args) in &turn.calls {
        state.calls += 1;
        output.push_str(name);
        output.push_str(&args.to_string());
        events.push(ProviderEvent::ToolCall {
            id: format!("call_{}", state.calls),
            name: name.clone(),
            args: args.clone(),
        });
    }
    let h = hash_bytes(output.as_bytes());
    billed.usage.output = count(&mut state.memo, h, &output, crate::tokens::count).max(1);
    state.log.push(billed);
    events.push(ProviderEvent::Usage(billed.usage));
    let stop = if turn.calls.is_empty() {
        StopReason::EndTurn
    } else {
        StopReason::ToolUse
    };
    events.push(ProviderEvent::Stop(stop));
    events
}

/// Everything a request carries that a model reads: system text, message text, tool results.
fn request_text(request: &ModelRequest) -> String {
    let mut out = String::new();
    for block in &request.system {
        out.push_str(&block.text);
        out.push('\n');
    }
    for message in &request.messages {
        for block in &message.content {
            match block {
                ContentBlock::Text { text } => out.push_str(text),
                ContentBlock::ToolResult { content, .. } => out.push_str(content),
                _ => {}
            }
            out.push('\n');
        }
    }
    out
}

/// The 1-based line of `text` holding `needle`.
fn line_of(text: &str, needle: &str) -> Option<usize> {
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1)
}

/// `read_file` of the lines around `needle` in the file at `path` (as the model names it).
fn ranged_read(path: &str, on_disk: &std::path::Path, needle: &str) -> Option<(String, Value)> {
    // A fixture file the bench wrote (tens of KB): 64 MiB is far above any, and a read past it
    // would only feed a line search.
    let text = crate::files::read_bounded(on_disk, 64 << 20)
        .ok()?
        .into_text()
        .ok()?;
    let line = line_of(&text, needle)?;
    Some((
        "read_file".to_string(),
        json!({"file": path, "start": line.saturating_sub(3).max(1), "end": line + 12}),
    ))
}

/// The saved copy of `url`'s body that the request names, if its notice is still there.
fn saved_copy(request: &ModelRequest, url: &str) -> Option<String> {
    let mut ids = Vec::new();
    for message in &request.messages {
        for block in &message.content {
            match block {
                ContentBlock::ToolUse { id, name, input }
                    if name == "web_fetch" && input["url"].as_str() == Some(url) =>
                {
                    ids.push(id.clone());
                }
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } if ids.contains(tool_use_id) => {
                    let rest = content.split("Full body is at ").nth(1)?;
                    let (path, _) = rest.split_once(".\n")?;
                    return Some(path.to_string());
                }
                _ => {}
            }
        }
    }
    None
}

impl FakeModel {
    /// The call that brings `need` back into the conversation.
    fn reread(&self, need: &Need, request: &ModelRequest) -> (String, Value) {
        match &need.source {
            Source::File(path) => ranged_read(path, &self.workspace.join(path), &need.text)
                .unwrap_or_else(|| ("read_file".to_string(), json!({"file": path}))),
            Source::Web(url) => saved_copy(request, url)
                .and_then(|saved| ranged_read(&saved, std::path::Path::new(&saved), &need.text))
                .unwrap_or_else(|| {
                    (
                        "web_fetch".to_string(),
                        json!({"url": url, "filter": regex::escape(&need.text)}),
                    )
                }),
            Source::Memory(query) => (
                "memory".to_string(),
                json!({"action": "recall", "query": query}),
            ),
        }
    }
}
