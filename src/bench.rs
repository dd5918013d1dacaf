//! `chatcli bench`: the token-efficiency benchmark.
//!
//! Each scenario runs through the real agent and real tools against `FakeModel`, whose usage
//! comes from a model of the provider's prompt cache (`cache_model`), once as chatcli runs by
//! default (**optimised**), once as a naive client would (**naive**: no cache markers, volatile
//! blocks first in the system prompt, no early exit, no microcompact, memory in full every turn,
//! web bodies inlined up to 50,000 characters), and once with each microcompact schedule
//! (**batched**, the default, and **eager**, the reference behaviour). Every run is also priced under perfect prefix caching (the **floor**): the ratio to
//! the floor judges the cache markers and the byte stability; the ratio to naive judges it all.

pub mod cache_model;
pub mod fake;
pub mod scenarios;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, UNIX_EPOCH};

use serde::Serialize;

use crate::agent::compaction::{Schedule, Settings as CompactSettings};
use crate::agent::{self, AgentOptions, ApprovalPolicy, Clock};
use crate::cost::{Catalog, Pricing};
use crate::memory::{MemoryMode, MemorySettings, Store};
use crate::protocol::{AgentEvent, Mode, Op};
use crate::tools::{Scratch, SearchBackend, WebSettings};
use cache_model::Semantics;
use fake::FakeModel;
use scenarios::Size;

/// How the client behaves in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchMode {
    Optimised,
    Naive,
    Batched,
    Eager,
}

impl BenchMode {
    /// The name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            BenchMode::Optimised => "optimised",
            BenchMode::Naive => "naive",
            BenchMode::Batched => "batched",
            BenchMode::Eager => "eager",
        }
    }
}

/// Whose cache and prices a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderModel {
    /// Anthropic semantics, Claude Sonnet 4.5 prices.
    Anthropic,
    /// OpenAI semantics, GPT-4.1 prices.
    OpenAi,
}

impl ProviderModel {
    /// Parses `anthropic` or `openai`.
    pub fn parse(value: &str) -> Option<ProviderModel> {
        match value.trim().to_ascii_lowercase().as_str() {
            "anthropic" => Some(ProviderModel::Anthropic),
            "openai" => Some(ProviderModel::OpenAi),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ProviderModel::Anthropic => "anthropic",
            ProviderModel::OpenAi => "openai",
        }
    }

    fn model(self) -> &'static str {
        match self {
            ProviderModel::Anthropic => "claude-sonnet-4-5",
            ProviderModel::OpenAi => "gpt-4.1",
        }
    }

    fn semantics(self) -> Semantics {
        match self {
            ProviderModel::Anthropic => Semantics::Anthropic,
            ProviderModel::OpenAi => Semantics::OpenAi,
        }
    }
}

/// One run's figures, as `--json` prints them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub name: String,
    pub mode: String,
    pub provider_model: String,
    pub requests: usize,
    pub input_tokens: u64,
    pub uncached_input_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_creation_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub floor_cost_usd: f64,
}

impl Row {
    /// Share of input read from the cache.
    pub fn hit_share(&self) -> f64 {
        if self.input_tokens == 0 {
            0.0
        } else {
            self.cache_read_tokens as f64 / self.input_tokens as f64
        }
    }

    /// Cost over the floor.
    pub fn floor_ratio(&self) -> f64 {
        if self.floor_cost_usd > 0.0 {
            self.cost_usd / self.floor_cost_usd
        } else {
            1.0
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    pub scenarios: Vec<String>,
    pub provider_models: Vec<ProviderModel>,
    pub quick: bool,
}

/// Why the benchmark could not run.
#[derive(Debug, thiserror::Error)]
#[error("bench: {0}")]
pub struct BenchError(pub String);

fn err(context: &str) -> impl FnOnce(std::io::Error) -> BenchError + '_ {
    move |e| BenchError(format!("{context}: {e}"))
}

/// Runs every requested scenario in every mode; rows in a stable order.
pub async fn run(options: &BenchOptions) -> Result<Vec<Row>, BenchError> {
    for name in &options.scenarios {
        if !scenarios::NAMES.contains(&name.as_str()) {
            return Err(BenchError(format!(
                "unknown scenario \"{name}\" (expected one of: {})",
                scenarios::NAMES.join(", ")
            )));
        }
    }
    let size = if options.quick {
        Size::QUICK
    } else {
        Size::FULL
    };
    let web = scenarios::serve(scenarios::page(size.page_bytes))
        .await
        .map_err(err("cannot start the local web server"))?;
    let catalog = Catalog::builtin();
    let mut rows = Vec::new();
    for pm in &options.provider_models {
        let pricing = catalog
            .lookup(pm.model())
            .cloned()
            .ok_or_else(|| BenchError(format!("no price for {}", pm.model())))?;
        for name in &options.scenarios {
            for mode in [
                BenchMode::Optimised,
                BenchMode::Naive,
                BenchMode::Batched,
                BenchMode::Eager,
            ] {
                rows.push(run_one(name, mode, *pm, size, &pricing, &web).await?);
            }
        }
    }
    Ok(rows)
}

async fn run_one(
    name: &str,
    mode: BenchMode,
    pm: ProviderModel,
    size: Size,
    pricing: &Pricing,
    web: &str,
) -> Result<Row, BenchError> {
    let workspace = tempfile::tempdir().map_err(err("cannot make a workspace"))?;
    let home = tempfile::tempdir().map_err(err("cannot make a home"))?;
    scenarios::write_workspace(workspace.path(), size)
        .map_err(err("cannot write the fixture crate"))?;
    let prompts = scenarios::script(name, size, web);
    let turns = prompts
        .iter()
        .flat_map(|(_, turns)| turns.clone())
        .collect();
    let model = Arc::new(FakeModel::new(
        pm.model(),
        pm.semantics(),
        mode != BenchMode::Naive,
        turns,
    ));

    let mut options = AgentOptions::new(
        format!("bench-{name}"),
        Mode::Agent,
        workspace.path().to_path_buf(),
    );
    options.approval = ApprovalPolicy::AutoApprove;
    options.smart_route = crate::agent::routing::RouteMode::Off;
    options.pricing = Some(pricing.clone());
    options.scratch = Scratch::private(home.path().join("scratch"));
    options.web = WebSettings {
        search: vec![SearchBackend::Searxng(web.to_string())],
        ..WebSettings::default()
    };
    options.time_zone = crate::prompt::dynamic::TimeZone::utc();
    // A virtual clock: each request takes 12 s, as the cache model's clock does.
    let now = Arc::new(AtomicU64::new(1_796_000_000));
    let tick = Arc::clone(&now);
    options.clock = Clock(Arc::new(move || {
        UNIX_EPOCH + Duration::from_secs(tick.fetch_add(12, Ordering::Relaxed))
    }));
    if name == "memory" {
        let dir = home.path().join("memory");
        let mut store = Store::open(&dir).map_err(|e| BenchError(e.to_string()))?;
        store
            .add_all(scenarios::facts(size.facts))
            .map_err(|e| BenchError(e.to_string()))?;
        options.memory = Some(MemorySettings {
            dir,
            mode: if mode == BenchMode::Naive {
                MemoryMode::Full
            } else {
                MemoryMode::Index
            },
            retrieval_budget: 4000,
            autorecall: true,
            hyde: false,
            embedder: crate::memory::embedder::Embedder::Local,
        });
    }
    match mode {
        BenchMode::Optimised => {}
        BenchMode::Batched => options.compaction.schedule = Schedule::Batched,
        BenchMode::Eager => options.compaction.schedule = Schedule::Eager,
        BenchMode::Naive => {
            options.naive = true;
            options.early_exit = false;
            options.compaction = CompactSettings {
                min_content: usize::MAX,
                ..CompactSettings::default()
            };
            options.web.autosave_bytes = usize::MAX;
            options.web.default_max_length = 50_000;
        }
    }

    let mut handle = agent::spawn(model.clone(), options);
    for (prompt, _) in prompts {
        handle
            .ops
            .send(Op::Submit {
                text: prompt,
                mode: Mode::Agent,
            })
            .map_err(|_| BenchError("the agent stopped".into()))?;
        loop {
            let event = tokio::time::timeout(Duration::from_secs(120), handle.events.recv())
                .await
                .map_err(|_| BenchError(format!("{name}/{}: no event for 120 s", mode.as_str())))?
                .ok_or_else(|| BenchError("the agent stopped".into()))?;
            if let AgentEvent::Error { message } = &event {
                return Err(BenchError(format!("{name}/{}: {message}", mode.as_str())));
            }
            if matches!(event, AgentEvent::Cost { .. }) {
                break;
            }
        }
    }
    let _ = handle.ops.send(Op::Shutdown);
    Ok(row(name, mode, pm, pricing, &model.log()))
}

fn row(
    name: &str,
    mode: BenchMode,
    pm: ProviderModel,
    pricing: &Pricing,
    log: &[fake::Logged],
) -> Row {
    let mut r = Row {
        name: name.to_string(),
        mode: mode.as_str().to_string(),
        provider_model: pm.name().to_string(),
        requests: log.len(),
        input_tokens: 0,
        uncached_input_tokens: 0,
        cache_read_tokens: 0,
        cache_creation_tokens: 0,
        output_tokens: 0,
        cost_usd: 0.0,
        floor_cost_usd: 0.0,
    };
    let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
    for l in log {
        let u = &l.usage;
        r.input_tokens += u.total_input();
        r.uncached_input_tokens += u.uncached_input;
        r.cache_read_tokens += u.cache_read;
        r.cache_creation_tokens += u.cache_write();
        r.output_tokens += u.output;
        r.cost_usd += pricing.cost(u);
        r.floor_cost_usd += per(l.floor_read, pricing.cache_read.unwrap_or(pricing.input))
            + per(
                l.floor_write,
                pricing.cache_write_5m.unwrap_or(pricing.input),
            )
            + per(u.output, pricing.output);
    }
    r
}

/// The targets the benchmark is held to, with whether each was met.
pub fn targets(rows: &[Row]) -> Vec<(String, bool)> {
    let find = |name: &str, mode: &str, pm: &str| {
        rows.iter()
            .find(|r| r.name == name && r.mode == mode && r.provider_model == pm)
    };
    let mut out = Vec::new();
    let pms: Vec<String> = {
        let mut v: Vec<String> = rows.iter().map(|r| r.provider_model.clone()).collect();
        v.dedup();
        v
    };
    for pm in &pms {
        for name in ["coder", "long"] {
            if let Some(r) = find(name, "optimised", pm) {
                out.push((
                    format!(
                        "{pm}/{name}: optimised ≤ 1.25× the floor ({:.2}×)",
                        r.floor_ratio()
                    ),
                    r.floor_ratio() <= 1.25,
                ));
            }
        }
        for name in ["lookup", "coder"] {
            if let (Some(o), Some(n)) = (find(name, "optimised", pm), find(name, "naive", pm)) {
                let saving = 1.0 - o.cost_usd / n.cost_usd.max(f64::MIN_POSITIVE);
                out.push((
                    format!(
                        "{pm}/{name}: optimised ≥ 70% cheaper than naive ({:.0}%)",
                        saving * 100.0
                    ),
                    saving >= 0.70,
                ));
            }
        }
        if let Some(r) = find("stagnation", "optimised", pm) {
            out.push((
                format!(
                    "{pm}/stagnation: stops at the third repeat ({} requests)",
                    r.requests
                ),
                r.requests == 3,
            ));
        }
    }
    out
}

/// The report as a Markdown table, with the targets under it.
pub fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "| scenario | mode | cache | requests | input | uncached | cache read | cache write | output | hit | cost | floor | ×floor |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0}% | ${:.4} | ${:.4} | {:.2} |\n",
            r.name,
            r.mode,
            r.provider_model,
            r.requests,
            r.input_tokens,
            r.uncached_input_tokens,
            r.cache_read_tokens,
            r.cache_creation_tokens,
            r.output_tokens,
            r.hit_share() * 100.0,
            r.cost_usd,
            r.floor_cost_usd,
            r.floor_ratio()
        ));
    }
    out.push('\n');
    for (target, met) in targets(rows) {
        out.push_str(&format!("- [{}] {target}\n", if met { "x" } else { " " }));
    }
    out
}

/// The report as the `--json` object.
pub fn json(rows: &[Row]) -> String {
    serde_json::json!({ "scenarios": rows }).to_string()
}
