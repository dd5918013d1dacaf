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
//! The lanes are answered one after another, in their order (a lane's first request waits until
//! every lane before it has given its final answer): the cache model sees the same sequence of
//! requests on every run, so two runs bill the same (the agent still dispatches concurrently).
//!
//! Keep-warm pings are billed here, not sent by the agent: the user's pause is a jump of the
//! virtual clock, so at each pause the model bills the pings `KeepWarm::pings` plans for the
//! last request (the same function the agent's timer follows), each a cache read of that
//! request's bytes at its time in the pause with a 16-token answer.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures_util::{StreamExt, stream};
use serde_json::{Value, json};

use crate::agent::keepwarm::{
    Carried, KeepWarm, PING_OUTPUT_TOKENS, Prices, ping_carries, ping_request,
};
use crate::conversation::{ContentBlock, ModelRequest};
use crate::cost::Pricing;
use crate::provider::anthropic::CacheTtl;
use crate::provider::cache_model::{
    CacheModel, Retention, Semantics, TTL_LONG_SECS, TTL_SECS, count, hash_bytes, segments,
};
use crate::provider::cache_policy::{Lifetime, PausePolicy, openai_lifetime};
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
    /// The specialist's lane that sent it; `None` for the main loop.
    pub lane: Option<usize>,
}

struct State {
    script: VecDeque<Turn>,
    /// Specialists' scripts, by a text their task contains.
    lanes: Vec<(String, VecDeque<Turn>)>,
    /// Re-reads asked for the turn at the head of the script (at most two rounds).
    rereads: u32,
    cache: CacheModel,
    /// The lifetime each request's entries get, decided as the real providers decide.
    policy: PausePolicy,
    /// OpenAI: `24h` retention asked for (the model offers it and the policy wants it).
    extended: bool,
    memo: HashMap<u64, u64>,
    log: Vec<Logged>,
    calls: u64,
    /// Keep-warm: the setting and the family's prices.
    keepwarm: (KeepWarm, Option<Pricing>),
    /// The last request's segments and markers, its time and its entries' lifetime (seconds):
    /// what a ping in the next pause reads.
    last_sent: Option<LastSent>,
}

struct LastSent {
    /// The ping that request makes (`keepwarm::ping_request`), and whether markers are placed.
    ping: ModelRequest,
    markers: bool,
    at: u64,
    lifetime: u64,
    /// The lifetime its entries would be written with again after a lapse (seconds).
    lapse: u64,
    /// The request had a thinking budget: never pinged.
    thinking: bool,
    /// Its input as billed.
    carried: Carried,
}

/// The benchmark's provider.
pub struct FakeModel {
    model: String,
    markers: bool,
    workspace: Arc<PathBuf>,
    state: Arc<Mutex<State>>,
    /// How many lanes, in order, have given their final answer.
    lanes_done: Arc<tokio::sync::watch::Sender<usize>>,
}

/// Seconds the virtual clock moves per request (well inside the 5-minute TTL).
const SECONDS_PER_REQUEST: u64 = 12;

impl FakeModel {
    /// A model that plays `script` under `semantics` on files in `workspace`; `markers` says
    /// whether the client places cache markers (`CHATCLI_PROMPT_CACHE`), `ttl` what lifetime
    /// it asks for (`CHATCLI_PROMPT_CACHE_TTL`).
    pub fn new(
        model: &str,
        semantics: Semantics,
        (markers, ttl): (bool, CacheTtl),
        workspace: PathBuf,
        script: Vec<Turn>,
    ) -> Self {
        let policy = PausePolicy::new(ttl);
        // `CHATCLI_PROMPT_CACHE=off` strips the retention field with every other cache hint.
        let extended = markers
            && policy.extended_retention()
            && crate::provider::openai_responses::offers_extended_retention(model);
        FakeModel {
            model: model.to_string(),
            markers,
            workspace: Arc::new(workspace),
            lanes_done: Arc::new(tokio::sync::watch::Sender::new(0)),
            state: Arc::new(Mutex::new(State {
                rereads: 0,
                script: script.into(),
                lanes: Vec::new(),
                cache: CacheModel::new(semantics),
                policy,
                extended,
                memo: HashMap::new(),
                log: Vec::new(),
                calls: 0,
                keepwarm: (KeepWarm::Off, None),
                last_sent: None,
            })),
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

    /// Keep-warm `setting`, its pings weighed at `pricing`.
    pub fn with_keepwarm(self, setting: KeepWarm, pricing: Pricing) -> Self {
        if let Ok(mut state) = self.state.lock() {
            state.keepwarm = (setting, Some(pricing));
        }
        self
    }

    /// The user pauses `secs` seconds before the next prompt: the cache's clock moves on, and
    /// the keep-warm pings that fall within the pause are billed.
    pub fn pause(&self, secs: u64) {
        if let Ok(mut state) = self.state.lock() {
            let start = state.cache.now;
            bill_pings(&mut state, secs);
            state.cache.now = start + secs;
        }
    }

    /// The cache's clock: seconds since the session began (12 per request, plus the pauses).
    pub fn now(&self) -> u64 {
        self.state.lock().map(|s| s.cache.now).unwrap_or_default()
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
        let state = Arc::clone(&self.state);
        let workspace = Arc::clone(&self.workspace);
        let lanes_done = Arc::clone(&self.lanes_done);
        let markers = self.markers;
        let lane = self.state.lock().ok().and_then(|s| lane_of(&s, &request));
        let answer = async move {
            if let Some(lane) = lane {
                // Wait for every earlier lane's final answer (see the module note).
                let _ = lanes_done.subscribe().wait_for(|done| *done >= lane).await;
            }
            let mut events = Vec::new();
            if let Ok(mut state) = state.lock() {
                let state = &mut *state;
                let billed = Logged {
                    lane,
                    ..bill_input(state, &request, markers)
                };
                let (turn, finished) = next_turn(state, &request, &workspace, lane);
                events = play(state, &turn, billed);
                if finished && let Some(lane) = lane {
                    lanes_done.send_replace(lane + 1);
                }
            }
            stream::iter(events.into_iter().map(Ok))
        };
        Box::pin(stream::once(answer).flatten())
    }
}

/// The lane whose key the request's task (its first message) contains.
fn lane_of(state: &State, request: &ModelRequest) -> Option<usize> {
    let task = request
        .messages
        .first()
        .map(|m| m.text())
        .unwrap_or_default();
    state.lanes.iter().position(|(key, _)| task.contains(key))
}

/// The turn that answers `request`: re-reads of what a scripted turn needs and the request no
/// longer carries (two rounds at most), else the next turn of its script (`lane`'s when a
/// specialist asks); and whether that was the lane's final answer.
fn next_turn(
    state: &mut State,
    request: &ModelRequest,
    workspace: &Path,
    lane: Option<usize>,
) -> (Turn, bool) {
    let sent = request_text(request);
    let script = match lane.and_then(|i| state.lanes.get_mut(i)) {
        Some((_, script)) => script,
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
            .map(|n| reread(workspace, n, request))
            .collect::<Vec<_>>();
        let turn = Turn {
            text: String::new(),
            calls,
            needs: Vec::new(),
        };
        (turn, false)
    } else {
        state.rereads = 0;
        let turn = script.pop_front().unwrap_or_else(|| Turn::answer("done"));
        let finished = turn.calls.is_empty() && script.is_empty();
        (turn, finished)
    }
}

/// What the request's input costs under the cache model (the clock moved one request on), its
/// floor, and its fixed prefix; the output is counted when the turn is played.
fn bill_input(state: &mut State, request: &ModelRequest, markers: bool) -> Logged {
    let (segs, marks) = segments(request, &mut state.memo, markers, crate::tokens::count);
    state.cache.now += SECONDS_PER_REQUEST;
    state.cache.write_ttl = match state.policy.lifetime(state.cache.now) {
        Lifetime::Short => TTL_SECS,
        Lifetime::Long => TTL_LONG_SECS,
    };
    state.cache.retention = if state.extended {
        Retention::EXTENDED
    } else {
        Retention::IN_MEMORY
    };
    let usage = state.cache.account(&segs, &marks);
    let (floor_read, floor_fresh) = state.cache.floor(&segs);
    let (lifetime, lapse) = match state.cache.semantics() {
        Semantics::Anthropic => (
            state.cache.write_ttl,
            state
                .policy
                .after_lapse()
                .map_or(state.cache.write_ttl, Lifetime::anthropic_secs),
        ),
        Semantics::OpenAi => {
            let retention = openai_lifetime(&request.model, state.extended);
            (retention, retention)
        }
    };
    let fixed_units = (request.tools.len() + request.system.len()).min(segs.len());
    let fixed = segs[..fixed_units].iter().map(|s| s.tokens).sum();
    state.last_sent = Some(LastSent {
        ping: ping_request(request),
        markers,
        at: state.cache.now,
        lifetime,
        lapse,
        thinking: request.effort.is_some(),
        carried: ping_carries(request, &usage),
    });
    Logged {
        usage,
        floor_read,
        floor_fresh,
        fixed,
        lane: None,
    }
}

/// Bills the keep-warm pings of a `secs`-second pause after the last request: each reads that
/// request's bytes at its time; the floor sends none.
fn bill_pings(state: &mut State, secs: u64) {
    let Some(last) = state.last_sent.take() else {
        return;
    };
    let (setting, pricing) = &state.keepwarm;
    let prices = pricing.as_ref().and_then(|p| Prices::of(p, last.lapse));
    let pings = match prices {
        Some(prices) if !last.thinking => setting.pings(last.lifetime, prices, last.carried),
        _ => Vec::new(),
    };
    let (segs, marks) = segments(
        &last.ping,
        &mut state.memo,
        last.markers,
        crate::tokens::count,
    );
    for at in pings.into_iter().take_while(|at| *at < secs) {
        state.cache.now = last.at + at;
        let mut usage = state.cache.account(&segs, &marks);
        usage.output = u64::from(PING_OUTPUT_TOKENS);
        state.log.push(Logged {
            usage,
            floor_read: 0,
            floor_fresh: 0,
            fixed: 0,
            lane: None,
        });
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

/// The call that brings `need` back into the conversation.
fn reread(workspace: &Path, need: &Need, request: &ModelRequest) -> (String, Value) {
    match &need.source {
        Source::File(path) => ranged_read(path, &workspace.join(path), &need.text)
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
