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
  CHATCLI_MEMORY_MODE      index | full | off: how long-term memory enters the prompt (index)
  CHATCLI_MEMORY_EMBEDDINGS local: recall never calls the provider's embedding endpoint
  CHATCLI_MICROCOMPACT_SCHEDULE consumed | batched | eager: when large tool results are shrunk (default consumed)
  <PROVIDER>_MODEL         model for that provider, e.g. ANTHROPIC_MODEL
  <PROVIDER>_BASE_URL      endpoint override, e.g. OPENAI_BASE_URL
  CHATCLI_PROMPT_CACHE_TTL 5m | 1h, the TTL of Anthropic cache markers (default 5m)
  CHATCLI_WEBFETCH_AUTOSAVE_BYTES  web pages larger than this are saved, not inlined (10000)
  CHATCLI_AGENT_TMPDIR     your own scratch directory for saved files (never deleted)
  CHATCLI_SANDBOX          workspace-write | read-only | off | required: OS sandbox of commands
  CHATCLI_SANDBOX_NETWORK  off cuts the network of commands (default on)
  CHATCLI_SANDBOX_WRITABLE more folders commands may write, colon-separated (e.g. ~/.cargo)
  CHATCLI_ENV_ALLOW        secret-named variables commands and MCP servers may see (comma-separated)
  CHATCLI_NOTIFY           bell | osc9 | osc777 | off: a turn's end or an approval while unfocused
  CHATCLI_SEARXNG_URL, BRAVE_SEARCH_API_KEY  backend of the web_search tool
  CHATCLI_MCP_STARTUP_TIMEOUT  seconds an MCP server may take to start (default 10)
  CHATCLI_MCP_SCHEMA_BUDGET    tokens of MCP schemas sent directly before deferring (2000)

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

/// Flags shared by the TUI and `exec`.
#[derive(Debug, Args, Clone, Default)]
pub struct CommonArgs {
    /// Go on with a saved session: its id, or the latest when no id is given.
    #[arg(long, global = true, num_args = 0..=1, default_missing_value = "latest", value_name = "ID")]
    pub resume: Option<String>,
    /// Mode: chat, agent, coder, plan or run [env: CHATCLI_MODE] [default: agent]
    #[arg(long, global = true)]
    pub mode: Option<String>,
    /// Provider to talk to [env: CHATCLI_PROVIDER, LLM_PROVIDER]
    #[arg(long, global = true)]
    pub provider: Option<String>,
    /// Model id [env: <PROVIDER>_MODEL]
    #[arg(long, global = true)]
    pub model: Option<String>,
    /// Endpoint override [env: <PROVIDER>_BASE_URL]
    #[arg(long, global = true)]
    pub base_url: Option<String>,
    /// Requests per prompt in the tool loop, 1-200 [env: CHATCLI_AGENT_MAX_TURNS] [default: 50]
    #[arg(long, global = true)]
    pub max_turns: Option<String>,
    /// Workspace directory for the coder tools [default: the current directory]
    #[arg(long, global = true)]
    pub cwd: Option<PathBuf>,
    /// OS sandbox of commands: workspace-write, read-only, off or required [env: CHATCLI_SANDBOX] [default: workspace-write]
    #[arg(long, global = true)]
    pub sandbox: Option<String>,
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

/// `chatcli models` flags.
#[derive(Debug, Args)]
pub struct ModelsArgs {
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
    /// Run one scenario: lookup, coder, edit, research, stagnation, memory, long, session6, session11, session25 or orchestrated [default: all]
    #[arg(long)]
    pub scenario: Option<String>,
    /// Cache semantics and prices: anthropic (Claude Sonnet 4.5) or openai (GPT-4.1) [default: both]
    #[arg(long)]
    pub provider_model: Option<String>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Smaller inputs: every scenario in a few seconds.
    #[arg(long)]
    pub quick: bool,
    /// Where bench-report.md and bench-report.json are written.
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
    /// The action to run.
    pub fn action(self) -> crate::memory::cli::Action {
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

impl CommonArgs {
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
        }
    }
}
