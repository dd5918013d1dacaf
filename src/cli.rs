//! The command line: `chatcli` (the TUI) and `chatcli exec` (one prompt, headless).
//!
//! Flags only collect what the user typed; `Config::resolve` applies precedence and validation,
//! so a bad `--mode` fails with the same message as a bad `CHATCLI_MODE`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::config::Overrides;

const AFTER_HELP: &str = "\
Providers: anthropic (alias claudeai), openai, openai-responses, xai, zai, moonshot, minimax,
openrouter, github-models, googleai (alias gemini), ollama, bedrock, copilot, stackspot, demo.
With no provider named, the first key set among ANTHROPIC_API_KEY/CLAUDEAI_API_KEY,
OPENAI_API_KEY, XAI_API_KEY, ZAI_API_KEY, MOONSHOT_API_KEY, MINIMAX_API_KEY, OPENROUTER_API_KEY
picks its provider; with none, a local Ollama (OLLAMA_HOST) if one answers, else the offline demo.

Environment (flags win over it; it wins over CHATCLI_HOME/config.toml):
  CHATCLI_HOME             where config.toml, logs and sessions live
  CHATCLI_PROVIDER         provider name (also LLM_PROVIDER, the reference system's name)
  CHATCLI_MODE             chat | agent | coder | plan | run (default agent)
  CHATCLI_AGENT_MAX_TURNS  requests per prompt in the tool loop, 1-200 (default 50)
  CHATCLI_AGENT_EARLY_EXIT off stops the repeated-tool-call guard (default on)
  CHATCLI_AGENT_EARLY_EXIT_TURNS  identical turns that stop the loop, 2-10 (default 3)
  CHATCLI_AGENT_SMART_ROUTE off | hint | auto: route plain questions in agent mode (default hint)
  CHATCLI_SESSION_BUDGET_USD  stop starting requests once the session costs this much
  CHATCLI_MAX_RETRIES      times a failed request is sent again (default 4)
  CHATCLI_MEMORY_MODE      index | full | off: how long-term memory enters the prompt (default index)
  CHATCLI_MEMORY_EMBEDDINGS local: recall never calls the provider's embedding endpoint
  CHATCLI_MICROCOMPACT_SCHEDULE batched | eager | consumed: when large tool results are shrunk (default consumed)
                           a stage knob below, set while this is unset, selects batched
  CHATCLI_MICROCOMPACT_TRUNCATE_TURNS  stage knob: age at which a result is cut (default 2)
  CHATCLI_MICROCOMPACT_SUMMARIZE_TURNS stage knob: age at which it is a summary line (default 4)
  CHATCLI_MICROCOMPACT_HEAD_CHARS, CHATCLI_MICROCOMPACT_TAIL_CHARS  stage knobs: what a cut keeps
  CHATCLI_MICROCOMPACT_MIN_CONTENT  results shorter than this (characters) stay whole
  <PROVIDER>_MODEL         model for that provider, e.g. ANTHROPIC_MODEL
  <PROVIDER>_BASE_URL      endpoint override, e.g. OPENAI_BASE_URL
  CHATCLI_PROMPT_CACHE_TTL auto | 5m (in_memory) | 1h (24h): cache lifetime; auto goes to 1h after an idle pause and asks OpenAI for 24h (default auto)
  CHATCLI_WEBFETCH_AUTOSAVE_BYTES  web pages larger than this are saved, not inlined (default 10000)
  CHATCLI_AGENT_TMPDIR     your own scratch directory for saved files (never deleted)
  CHATCLI_SANDBOX          workspace-write | read-only | off | required: OS sandbox of commands
  CHATCLI_SANDBOX_NETWORK  off cuts the network of commands (default on)
  CHATCLI_SANDBOX_WRITABLE more folders commands may write, colon-separated (e.g. ~/.cargo)
  CHATCLI_ENV_ALLOW        secret-named variables commands and MCP servers may see (comma-separated)
  CHATCLI_NOTIFY           bell | osc9 | osc777 | off: a turn's end or an approval while unfocused
  CHATCLI_SEARXNG_URL, BRAVE_SEARCH_API_KEY  backend of the web_search tool
  CHATCLI_MCP_STARTUP_TIMEOUT  seconds an MCP server may take to start (default 10)
  CHATCLI_MCP_SCHEMA_BUDGET    tokens of MCP schemas sent directly before deferring (default 2000)

Keys in the TUI: Enter send, Shift+Enter or Ctrl+J newline, Shift+Tab cycle mode,
Ctrl+C interrupt (twice to quit), F1 help.";

/// A full-screen terminal agent that keeps the token bill of long sessions low.
#[derive(Debug, Parser)]
#[command(name = "chatcli", version, about, after_help = AFTER_HELP)]
pub struct Cli {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The session flags: the TUI's, and `exec`'s (given after `exec` or before it). Other
/// subcommands start no session and do not take them (`models` takes the provider's three).
#[derive(Debug, Args, Clone, Default)]
pub struct CommonArgs {
    /// Go on with a saved session: its id, or the latest when no id is given.
    #[arg(long, num_args = 0..=1, default_missing_value = "latest", value_name = "ID")]
    pub resume: Option<String>,
    /// Mode: chat, agent, coder, plan or run [env: CHATCLI_MODE] [default: agent]
    #[arg(long)]
    pub mode: Option<String>,
    /// Provider to talk to [env: CHATCLI_PROVIDER, LLM_PROVIDER]
    #[arg(long)]
    pub provider: Option<String>,
    /// Model id [env: <PROVIDER>_MODEL]
    #[arg(long)]
    pub model: Option<String>,
    /// Endpoint override [env: <PROVIDER>_BASE_URL]
    #[arg(long)]
    pub base_url: Option<String>,
    /// Requests per prompt in the tool loop, 1-200 [env: CHATCLI_AGENT_MAX_TURNS] [default: 50]
    #[arg(long)]
    pub max_turns: Option<String>,
    /// Workspace directory for the coder tools [default: the current directory]
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// OS sandbox of commands: workspace-write, read-only, off or required [env: CHATCLI_SANDBOX] [default: workspace-write]
    #[arg(long)]
    pub sandbox: Option<String>,
    /// Lay the settings of `[profiles.NAME]` in CHATCLI_HOME/config.toml over its top level
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one prompt to completion without the TUI and print the answer.
    Exec(ExecArgs),
    /// The token-efficiency benchmark: chatcli with its defaults against itself with features off.
    Bench(BenchArgs),
    /// Sign in to a provider that needs it: `chatcli auth copilot` (GitHub's device flow).
    Auth {
        /// The provider: copilot.
        provider: String,
    },
    /// Long-term memory: add, list, forget and import facts; print the prompt digest.
    #[command(subcommand)]
    Memory(MemoryCommand),
    /// MCP servers from CHATCLI_HOME/mcp.json and the project's .mcp.json.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// The models the provider serves (its own list, kept a day in CHATCLI_HOME/models) with the
    /// catalog's: window and price of each.
    Models(ModelsArgs),
    /// Skills: list the installed ones (name, scope, folder, tokens) and any skipped.
    #[command(subcommand)]
    Skill(SkillCommand),
}

/// The flags that pick a provider's endpoint and model (`chatcli models`).
#[derive(Debug, Args, Clone, Default)]
pub struct ProviderArgs {
    /// Provider to talk to [env: CHATCLI_PROVIDER, LLM_PROVIDER]
    #[arg(long)]
    pub provider: Option<String>,
    /// Model id [env: <PROVIDER>_MODEL]
    #[arg(long)]
    pub model: Option<String>,
    /// Endpoint override [env: <PROVIDER>_BASE_URL]
    #[arg(long)]
    pub base_url: Option<String>,
}

/// `chatcli models` flags.
#[derive(Debug, Args)]
pub struct ModelsArgs {
    #[command(flatten)]
    pub provider: ProviderArgs,
    /// Ask the provider again instead of using the list kept from the last day.
    #[arg(long)]
    pub refresh: bool,
    /// Every model of the catalog too, not only the provider's and its family's.
    #[arg(long)]
    pub all: bool,
    /// One JSON array instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `chatcli skill` subcommands.
#[derive(Debug, Subcommand)]
pub enum SkillCommand {
    /// Every skill found for the current directory, and the ones skipped with why.
    List,
}

/// `chatcli mcp` subcommands.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Start the servers, list them (status, transport, tools, prompts, resources, errors), stop them.
    List,
}

/// `chatcli bench` flags.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Run one scenario: lookup, coder, edit, research, stagnation, memory, long, orchestrated, session6, session11, session25 or fanout [default: all]
    #[arg(long)]
    pub scenario: Option<String>,
    /// Cache semantics and prices: anthropic (Claude Sonnet 4.5) or openai (GPT-4.1), or either priced as another model (openai:gpt-5.1) [default: both]
    #[arg(long)]
    pub provider_model: Option<String>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Smaller inputs: every scenario in a few seconds.
    #[arg(long)]
    pub quick: bool,
    /// Run a scenario written as JSON (its shape: docs/benchmark.md) instead of the built-in ones.
    #[arg(long, value_name = "FILE", conflicts_with = "scenario")]
    pub script: Option<std::path::PathBuf>,
    /// Replay a recorded session (an id from CHATCLI_HOME/sessions, `latest`, or a log file): its prompts, tool results and pauses, through the same rows.
    #[arg(long, value_name = "ID|FILE", conflicts_with_all = ["scenario", "script"])]
    pub replay: Option<String>,
    /// Where bench-report.md and bench-report.json are written (made when missing).
    #[arg(long, default_value = ".")]
    pub out: std::path::PathBuf,
}

/// `chatcli memory` subcommands.
#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Remember a fact.
    Add {
        /// The fact.
        text: String,
        /// architecture, pattern, preference, gotcha, project or personal [default: project]
        #[arg(long)]
        category: Option<String>,
        /// Comma-separated tags.
        #[arg(long, value_delimiter = ',')]
        tags: Vec<String>,
    },
    /// List the stored facts.
    List,
    /// Forget a fact by id (or a unique prefix of it).
    Forget {
        /// The fact's id.
        id: String,
    },
    /// Import facts from a JSON Lines file: {"content": …, "category": …, "tags": […]} per line.
    Import {
        /// The file.
        file: String,
    },
    /// Print the memory digest exactly as the model sees it.
    Index,
}

impl MemoryCommand {
    /// The action to run, from working directory `workspace` (a `project` fact names its
    /// project).
    pub fn action(self, workspace: &std::path::Path) -> crate::memory::cli::Action {
        use crate::memory::cli::Action;
        match self {
            MemoryCommand::Add {
                text,
                category,
                tags,
            } => Action::Add {
                text,
                category,
                tags,
                project: crate::memory::profile::project_name(workspace),
            },
            MemoryCommand::List => Action::List,
            MemoryCommand::Forget { id } => Action::Forget { id },
            MemoryCommand::Import { file } => Action::Import { file },
            MemoryCommand::Index => Action::Index,
        }
    }
}

/// `chatcli exec` flags.
#[derive(Debug, Args)]
pub struct ExecArgs {
    #[command(flatten)]
    pub session: CommonArgs,
    /// Approve tool calls that write or execute (without it they are denied, and the model is told).
    #[arg(long)]
    pub yes: bool,
    /// Print every event as one JSON object per line instead of the answer.
    #[arg(long)]
    pub json: bool,
    /// Attach a file, folder or glob to the prompt's cached context (repeatable; relative to the
    /// working directory), as `/context add` does in the TUI.
    #[arg(long = "context", value_name = "PATH")]
    pub context: Vec<String>,
    /// The prompt.
    #[arg(required = true, num_args = 1.., value_name = "PROMPT")]
    pub prompt: Vec<String>,
}

impl Cli {
    /// The flags as config overrides: the ones given before the subcommand, then the
    /// subcommand's own (which win).
    pub fn overrides(&self) -> Overrides {
        match &self.command {
            Some(Command::Exec(args)) => self.common.merged(&args.session).overrides(args.yes),
            Some(Command::Models(args)) => self
                .common
                .merged(&CommonArgs {
                    provider: args.provider.provider.clone(),
                    model: args.provider.model.clone(),
                    base_url: args.provider.base_url.clone(),
                    ..CommonArgs::default()
                })
                .overrides(false),
            _ => self.common.overrides(false),
        }
    }

    /// `--resume`, before `exec` or after it.
    pub fn resume(&self) -> Option<&str> {
        match &self.command {
            Some(Command::Exec(args)) if args.session.resume.is_some() => {
                args.session.resume.as_deref()
            }
            _ => self.common.resume.as_deref(),
        }
    }
}

impl CommonArgs {
    /// These flags with `later`'s given values laid over them.
    fn merged(&self, later: &CommonArgs) -> CommonArgs {
        let pick = |a: &Option<String>, b: &Option<String>| b.clone().or_else(|| a.clone());
        CommonArgs {
            resume: pick(&self.resume, &later.resume),
            mode: pick(&self.mode, &later.mode),
            provider: pick(&self.provider, &later.provider),
            model: pick(&self.model, &later.model),
            base_url: pick(&self.base_url, &later.base_url),
            max_turns: pick(&self.max_turns, &later.max_turns),
            cwd: later.cwd.clone().or_else(|| self.cwd.clone()),
            sandbox: pick(&self.sandbox, &later.sandbox),
            profile: pick(&self.profile, &later.profile),
        }
    }

    /// The flags as config overrides.
    pub fn overrides(&self, yes: bool) -> Overrides {
        Overrides {
            mode: self.mode.clone(),
            provider: self.provider.clone(),
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            max_turns: self.max_turns.clone(),
            cwd: self.cwd.clone(),
            yes,
            sandbox: self.sandbox.clone(),
            profile: self.profile.clone(),
        }
    }
}
