//! How an agent task is set up: `AgentOptions` (what the front end resolved from flags,
//! environment and config) and the defaults it starts from. Plain data: the loop in `agent`
//! reads it, nothing here acts.

use std::path::PathBuf;
use std::sync::Arc;

use super::routing::RouteMode;
use super::tools_run::ApprovalPolicy;
use super::{compaction, retry};
use crate::cost::{Catalog, Pricing};
use crate::memory::MemorySettings;
use crate::prompt;
use crate::protocol::Mode;
use crate::tools::{Scratch, WebSettings};

/// Output tokens a request may produce (less when the context window has less room left).
pub const MAX_OUTPUT_TOKENS: u32 = 8192;
/// The context window assumed when neither the server nor the catalog says (and said once).
pub const FALLBACK_CONTEXT_WINDOW: u64 = 8192;

/// Default requests per prompt (`CHATCLI_AGENT_MAX_TURNS`).
pub const DEFAULT_MAX_TURNS: u32 = 50;

/// Default identical turns that stop a loop (`CHATCLI_AGENT_EARLY_EXIT_TURNS`).
pub const DEFAULT_EARLY_EXIT_TURNS: u32 = 3;

/// How the agent task is set up.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    pub session_id: String,
    pub mode: Mode,
    pub max_turns: u32,
    pub workspace: PathBuf,
    pub pricing: Option<Pricing>,
    /// Why `pricing` is what it is (`/cost`, `/config`, the `cost` event); estimated prices are
    /// said at the start.
    pub pricing_rule: crate::cost::PriceRule,
    /// Prices by model (the built-in catalog with `CHATCLI_HOME/pricing.toml` over it): a
    /// specialist on a model of its own is priced from it.
    pub catalog: Arc<Catalog>,
    /// The context window the server reported (a local server's `n_ctx`); wins over the
    /// catalog's. With neither, [`FALLBACK_CONTEXT_WINDOW`].
    pub context_window: Option<u64>,
    /// What a local inference server said of its model's vision (`Some(false)` when it did not
    /// say it is multimodal); `None` for any other provider, judged by the model's family.
    pub local_vision: Option<bool>,
    /// Output tokens a request asks for at most (`max_tokens`), before the window's cap.
    pub max_output_tokens: u32,
    /// Where the session log goes (`CHATCLI_HOME/sessions`); `None` keeps no log.
    pub sessions_dir: Option<PathBuf>,
    /// Stop loops that repeat themselves, after this many identical turns (or cycles).
    pub early_exit: bool,
    pub early_exit_turns: u32,
    /// Chat/agent routing of `agent` prompts.
    pub smart_route: RouteMode,
    /// How calls that write or execute are approved.
    pub approval: ApprovalPolicy,
    /// The wall clock (tests move it to check that time never touches the cached prefix).
    pub clock: Clock,
    /// The zone the dynamic context states local time in (tests pin one).
    pub time_zone: prompt::dynamic::TimeZone,
    /// Where large tool outputs are saved.
    pub scratch: Scratch,
    /// Settings of the web tools.
    pub web: WebSettings,
    /// Microcompact of old tool results.
    pub compaction: compaction::Settings,
    /// Long-term memory; `None` keeps none.
    pub memory: Option<MemorySettings>,
    /// Stop starting requests once the session costs this much (`CHATCLI_SESSION_BUDGET_USD`).
    pub budget_usd: Option<f64>,
    /// Times a failed request is sent again (`CHATCLI_MAX_RETRIES`).
    pub max_retries: u32,
    /// Pings that keep the cache warm while the user is away (`CHATCLI_CACHE_KEEPWARM`).
    pub keepwarm: super::keepwarm::KeepWarm,
    /// Secret values to mask in the session log and in errors.
    pub secrets: crate::secrets::Secrets,
    /// A session read back from its log, to go on with.
    pub resume: Option<crate::session_log::Resumed>,
    /// `CHATCLI_HOME`, where the global bootstrap files are looked for; `None` looks only in the
    /// project.
    pub home: Option<PathBuf>,
    /// Characters of one bootstrap file the prompt keeps (`CHATCLI_BOOTSTRAP_MAX_CHARS`).
    pub bootstrap_max_chars: usize,
    /// Context attached from the start (`exec --context`); its ceiling holds for `/context add`.
    pub attachments: prompt::attachments::Attachments,
    /// The session's MCP servers; `None` has none.
    pub mcp: Option<crate::mcp::McpHandle>,
    /// Size limits of the skill blocks (`CHATCLI_SKILLS_*_MAX_CHARS`).
    pub skills: crate::skills::Limits,
    /// The OS sandbox commands run under (`CHATCLI_SANDBOX`, `CHATCLI_SANDBOX_NETWORK`).
    pub sandbox: crate::sandbox::SandboxSettings,
    /// The orchestrator: parallel mode, how many specialists at once, per-agent overrides.
    pub agents: crate::agents::Settings,
    /// What the settings files and command files give: hooks, permission rules, commands.
    pub setup: crate::user_settings::UserSetup,
}

/// A source of the current time.
#[derive(Clone)]
pub struct Clock(pub Arc<dyn Fn() -> std::time::SystemTime + Send + Sync>);

impl Clock {
    /// Seconds since the Unix epoch by this clock (0 before it).
    pub fn now_secs(&self) -> u64 {
        (self.0)()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock(Arc::new(std::time::SystemTime::now))
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Clock")
    }
}

impl AgentOptions {
    /// Options with every guard at its default, for a session in `workspace`.
    pub fn new(session_id: String, mode: Mode, workspace: PathBuf) -> Self {
        AgentOptions {
            mode,
            max_turns: DEFAULT_MAX_TURNS,
            workspace,
            pricing: None,
            pricing_rule: Default::default(),
            catalog: Arc::new(Catalog::builtin()),
            context_window: None,
            local_vision: None,
            max_output_tokens: MAX_OUTPUT_TOKENS,
            sessions_dir: None,
            early_exit: true,
            early_exit_turns: DEFAULT_EARLY_EXIT_TURNS,
            smart_route: RouteMode::default(),
            approval: ApprovalPolicy::Ask,
            clock: Clock::default(),
            time_zone: Default::default(),
            scratch: Scratch::private(
                std::env::temp_dir()
                    .join(format!("chatcli-{session_id}"))
                    .join("scratch"),
            ),
            web: WebSettings::default(),
            compaction: compaction::Settings::default(),
            memory: None,
            budget_usd: None,
            max_retries: retry::DEFAULT_MAX_RETRIES,
            keepwarm: super::keepwarm::KeepWarm::Off,
            secrets: Default::default(),
            resume: None,
            home: None,
            bootstrap_max_chars: prompt::bootstrap::DEFAULT_MAX_CHARS,
            attachments: Default::default(),
            mcp: None,
            skills: Default::default(),
            sandbox: Default::default(),
            agents: Default::default(),
            setup: Default::default(),
            session_id,
        }
    }
}
