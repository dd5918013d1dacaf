//! The settings registry: every setting chatcli reads, declared once — its environment variable
//! (the reference system's name, kept), the names it also answers to, its flag, its
//! `config.toml` key, its default and one line of documentation.
//!
//! Everything else reads this table: `config.toml` accepts exactly its keys (the variable
//! without `CHATCLI_`, lower-cased, e.g. `agent_max_turns = 30`; the five older keys `mode`,
//! `provider`, `model`, `base_url`, `max_turns` keep working), `/config` names where each value
//! came from, and the configuration reference in `docs/configuration.md` is generated from it
//! (a test fails when they differ). What a newcomer gets wrong: a file value never beats the
//! environment — `config.toml` fills in only variables the environment leaves unset, so a user
//! who exports `CHATCLI_MODE` still gets it whatever the file says.

/// One setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// The environment variable (`<PROVIDER>_MODEL` for a per-provider one).
    pub var: &'static str,
    /// More variables read for it, after `var` (the reference's spellings).
    pub aliases: &'static [&'static str],
    /// The command-line flag, when there is one.
    pub flag: Option<&'static str>,
    /// Its `config.toml` key; `None` for a setting the file cannot hold (where files live, the
    /// secrets a key variable carries).
    pub key: Option<&'static str>,
    /// The default, as a user would write it or as it is described.
    pub default: &'static str,
    /// What it means and takes, in one line.
    pub doc: &'static str,
}

/// A setting whose `config.toml` key is its variable without `CHATCLI_`, lower-cased.
const fn var(var: &'static str, default: &'static str, doc: &'static str) -> Setting {
    Setting {
        var,
        aliases: &[],
        flag: None,
        key: Some(""),
        default,
        doc,
    }
}

impl Setting {
    const fn flag(mut self, flag: &'static str) -> Setting {
        self.flag = Some(flag);
        self
    }

    const fn aliases(mut self, aliases: &'static [&'static str]) -> Setting {
        self.aliases = aliases;
        self
    }

    const fn key(mut self, key: &'static str) -> Setting {
        self.key = Some(key);
        self
    }

    const fn no_file(mut self) -> Setting {
        self.key = None;
        self
    }

    /// Its `config.toml` key, if the file may hold it.
    pub fn file_key(&self) -> Option<String> {
        match self.key {
            Some("") => Some(
                self.var
                    .strip_prefix("CHATCLI_")
                    .unwrap_or(self.var)
                    .to_ascii_lowercase(),
            ),
            Some(key) => Some(key.to_string()),
            None => None,
        }
    }

    /// Whether `var` is a per-provider pattern (`<PROVIDER>_MODEL`) rather than one variable.
    pub fn is_pattern(&self) -> bool {
        self.var.contains('<')
    }
}

/// Every setting, in the order the configuration reference lists them.
pub const SETTINGS: &[Setting] = &[
    var(
        "CHATCLI_HOME",
        "the platform config dir (`~/.config/chatcli` on Linux)",
        "where `config.toml`, `pricing.toml`, logs and sessions live",
    )
    .no_file(),
    var(
        "CHATCLI_PROVIDER",
        "demo when no key is set",
        "provider; ChatCLI's names (`CLAUDEAI`, `OPENAI`, `GOOGLEAI`, …) are accepted",
    )
    .aliases(&["LLM_PROVIDER"])
    .flag("--provider")
    .key("provider"),
    var(
        "<PROVIDER>_MODEL",
        "per provider",
        "the model, e.g. `ANTHROPIC_MODEL`",
    )
    .flag("--model")
    .key("model"),
    var(
        "<PROVIDER>_BASE_URL",
        "per provider",
        "the endpoint, e.g. `OPENAI_BASE_URL`",
    )
    .flag("--base-url")
    .key("base_url"),
    var(
        "CHATCLI_MODE",
        "`agent`",
        "`chat`, `agent`, `coder`, `plan` or `run`",
    )
    .flag("--mode")
    .key("mode"),
    var(
        "CHATCLI_AGENT_MAX_TURNS",
        "50",
        "requests per prompt in the tool loop, clamped to 1–200",
    )
    .flag("--max-turns")
    .key("max_turns"),
    var(
        "CHATCLI_AGENT_EARLY_EXIT",
        "on",
        "`off`/`0`/`false`/`no` disables the repeated-batch guard",
    ),
    var(
        "CHATCLI_AGENT_EARLY_EXIT_TURNS",
        "3",
        "identical turns (or cycles) that stop the loop, clamped to 2–10",
    ),
    var(
        "CHATCLI_AGENT_SMART_ROUTE",
        "`hint`",
        "`off`, `hint` (`1`), `auto` (`2`)",
    ),
    var(
        "CHATCLI_AGENT_PARALLEL_MODE",
        "on",
        "`false`/`off` removes the one-line `dispatch` tool",
    ),
    var(
        "CHATCLI_AGENT_MAX_PARALLEL",
        "4",
        "specialists running at once (1–16)",
    ),
    var(
        "CHATCLI_AGENT_<NAME>_MODEL",
        "its own",
        "a specialist's model",
    )
    .no_file(),
    var(
        "CHATCLI_AGENT_<NAME>_EFFORT",
        "its own",
        "a specialist's effort (`low`, `medium`, `high`)",
    )
    .no_file(),
    var(
        "CHATCLI_MAX_RETRIES",
        "4",
        "times a failed request is sent again (0–10)",
    ),
    var(
        "CHATCLI_MAX_REQUEST_BYTES",
        "33554432",
        "largest request body sent",
    ),
    var(
        "CHATCLI_RESPONSE_TIMEOUT",
        "600",
        "seconds a whole model response may stream",
    ),
    var(
        "CHATCLI_FIRST_BYTE_TIMEOUT",
        "90, or 600 for a local server",
        "seconds a request waits for its first byte",
    ),
    var(
        "CHATCLI_SESSION_BUDGET_USD",
        "none",
        "warn at 80% of this many dollars, stop new requests at 100%",
    ),
    var("CHATCLI_MEMORY_MODE", "`index`", "`index`, `full` or `off`"),
    var(
        "CHATCLI_MEMORY_RETRIEVAL_BUDGET",
        "4000",
        "characters of the `full` memory block",
    ),
    var(
        "CHATCLI_MEMORY_AUTORECALL",
        "on",
        "auto-recall in index mode",
    ),
    var(
        "CHATCLI_MEMORY_HYDE",
        "off",
        "HyDE (a hypothetical answer embedded with the query) for recall",
    ),
    var(
        "CHATCLI_MEMORY_EMBEDDINGS",
        "the provider's",
        "`local` forces the local embedding",
    ),
    var(
        "CHATCLI_MEMORY_EMBEDDING_MODEL",
        "per provider",
        "the provider's embedding model",
    ),
    var(
        "CHATCLI_MICROCOMPACT",
        "on",
        "`off` sends every tool result whole (the context guard still acts)",
    ),
    var(
        "CHATCLI_MICROCOMPACT_MIN_CONTENT",
        "3000",
        "smallest tool result (characters) that is staged (`batched`, `eager`, the context guard); when set, also the size below which `consumed` keeps a result whole (unset: 1000)",
    ),
    var(
        "CHATCLI_MICROCOMPACT_TRUNCATE_TURNS",
        "2",
        "age at which a result is truncated (`batched`, `eager`); setting it with no schedule named selects `batched`",
    ),
    var(
        "CHATCLI_MICROCOMPACT_SUMMARIZE_TURNS",
        "4",
        "age at which a result is summarised (`batched`, `eager`); setting it with no schedule named selects `batched` (100 with the one above keeps results whole)",
    ),
    var(
        "CHATCLI_MICROCOMPACT_HEAD_CHARS",
        "2000",
        "characters kept from a truncated result's start (`batched`, `eager`; selects `batched` like the ages)",
    ),
    var(
        "CHATCLI_MICROCOMPACT_TAIL_CHARS",
        "500",
        "characters kept from a truncated result's end (`batched`, `eager`; selects `batched` like the ages)",
    ),
    var(
        "CHATCLI_MICROCOMPACT_SCHEDULE",
        "`consumed`",
        "`consumed`, `batched` or `eager`: when large tool results are shrunk; unset, a stage knob (`TRUNCATE_TURNS`, `SUMMARIZE_TURNS`, `HEAD_CHARS`, `TAIL_CHARS`) selects `batched`, and one the schedule named never reads is said once at the start",
    ),
    var(
        "CHATCLI_PROMPT_CACHE",
        "on",
        "`off` sends no cache hint: no `cache_control`/`cachePoint` markers, no `prompt_cache_key`, no `x-grok-conv-id`, no extended-TTL header; the request is otherwise byte for byte the same",
    ),
    var(
        "CHATCLI_PROMPT_CACHE_TTL",
        "`auto`",
        "cache lifetime: `auto` (Anthropic 5 minutes until the user has been idle over 2 minutes between two requests, then 1 hour; OpenAI `24h` retention on the models that offer it), `5m` (alias `in_memory`) or `1h` (alias `24h`)",
    ),
    var(
        "CHATCLI_CACHE_KEEPWARM",
        "`on`",
        "while the session is open and the user away, re-send the last request (up to its cache marker) with a 16-token limit just before its cache entries lapse, while such pings cost less than writing the entries again; `on` (at most 120 idle minutes), a number of minutes, or `off`",
    ),
    var(
        "CHATCLI_WEBFETCH_AUTOSAVE_BYTES",
        "10000",
        "extracted web text above this size is saved to a file, not inlined; `off` never saves",
    ),
    var(
        "CHATCLI_AGENT_TMPDIR",
        "per-session dir",
        "your own scratch directory (never deleted by chatcli)",
    ),
    var(
        "CHATCLI_SANDBOX",
        "`workspace-write`",
        "OS sandbox of commands: `workspace-write`, `read-only`, `off` or `required`",
    )
    .flag("--sandbox"),
    var(
        "CHATCLI_SANDBOX_NETWORK",
        "on",
        "`off` cuts the TCP network of commands",
    ),
    var(
        "CHATCLI_SANDBOX_WRITABLE",
        "none",
        "more folders commands may write, `:`-separated absolute paths (a protected path named here is writable too)",
    ),
    var(
        "CHATCLI_ENV_ALLOW",
        "none: all withheld",
        "secret-named variables (`*KEY*`, `*TOKEN*`, …) commands and MCP servers may see, comma-separated",
    ),
    var(
        "CHATCLI_NOTIFY",
        "`bell`",
        "how a finished answer or a waiting approval is signalled while the terminal is unfocused: `bell`, `osc9`, `osc777`, `off`",
    ),
    var(
        "CHATCLI_SESSION_RETENTION_DAYS",
        "30",
        "sessions older than this are pruned at start (1 to 36,500)",
    ),
    var(
        "CHATCLI_WEBSEARCH_SEARXNG_URL",
        "none",
        "a SearXNG instance `web_search` tries before DuckDuckGo",
    )
    .aliases(&["CHATCLI_SEARXNG_URL"]),
    var(
        "BRAVE_SEARCH_API_KEY",
        "none",
        "a Brave Search key: `web_search` tries Brave before DuckDuckGo",
    )
    .no_file(),
    var(
        "CHATCLI_WEBSEARCH_BRAVE_URL",
        "the public one",
        "base URL of the Brave Search API",
    )
    .aliases(&["BRAVE_SEARCH_BASE_URL"]),
    var(
        "CHATCLI_WEBSEARCH_DDG_URL",
        "the public one",
        "base URL of DuckDuckGo's HTML results",
    ),
    var(
        "CHATCLI_BOOTSTRAP_MAX_CHARS",
        "20000",
        "characters kept of each bootstrap file (`AGENTS.md` & co.)",
    ),
    var(
        "CHATCLI_CONTEXT_MAX_TOKENS",
        "40000",
        "tokens all `/context` attachments may add up to",
    ),
    var(
        "CHATCLI_MCP_STARTUP_TIMEOUT",
        "10",
        "seconds an MCP server may take to start before it is marked failed",
    ),
    var(
        "CHATCLI_MCP_SCHEMA_BUDGET",
        "2000",
        "tokens of MCP schemas sent directly (estimated at 4 bytes a token); above it they are deferred behind the catalog",
    ),
    var(
        "CHATCLI_SKILLS_CATALOG_MAX_CHARS",
        "4000",
        "characters of the `skills` catalog block",
    ),
    var(
        "CHATCLI_SKILLS_ACTIVE_MAX_CHARS",
        "6000",
        "characters of skill bodies one turn's `<context>` may carry",
    ),
    var(
        "CHATCLI_THEME",
        "from `COLORFGBG`, else `dark`",
        "`light` or `dark`: the code-highlighting theme, overriding the detection",
    ),
    var(
        "NO_COLOR",
        "colours on",
        "any non-empty value: the TUI draws no colour at all (bold, italic and reverse stay)",
    )
    .no_file(),
    var(
        "COLORTERM",
        "256 colours",
        "`truecolor`/`24bit`: highlighted code in 24-bit colour; otherwise the 256-colour palette",
    )
    .no_file(),
    var(
        "RUST_LOG",
        "`info`",
        "log filter for `CHATCLI_HOME/logs/chatcli.log.*`",
    )
    .aliases(&["LOG_LEVEL"])
    .no_file(),
];

/// The setting `var` names (by its variable or an alias).
pub fn find(var: &str) -> Option<&'static Setting> {
    SETTINGS
        .iter()
        .find(|s| s.var == var || s.aliases.contains(&var))
}

/// The setting a `config.toml` key names.
pub fn by_key(key: &str) -> Option<&'static Setting> {
    // A setting with a short key of its own (`max_turns`) also takes the variable's name
    // (`agent_max_turns`): the rule the docs state holds for every setting.
    let derived = |s: &Setting| {
        s.key.is_some().then(|| {
            s.var
                .strip_prefix("CHATCLI_")
                .unwrap_or(s.var)
                .to_ascii_lowercase()
        })
    };
    SETTINGS
        .iter()
        .find(|s| s.file_key().as_deref() == Some(key))
        .or_else(|| SETTINGS.iter().find(|s| derived(s).as_deref() == Some(key)))
}

/// The configuration reference, as the Markdown table `docs/configuration.md` holds.
pub fn reference_table() -> String {
    let mut out = String::from(
        "| variable | `config.toml` key | flag | meaning | default |\n|---|---|---|---|---|\n",
    );
    for s in SETTINGS {
        let names: Vec<String> = std::iter::once(s.var)
            .chain(s.aliases.iter().copied())
            .map(|v| format!("`{v}`"))
            .collect();
        let key = s
            .file_key()
            .map_or_else(|| "—".to_string(), |k| format!("`{k}`"));
        let flag = s.flag.map_or_else(|| "—".to_string(), |f| format!("`{f}`"));
        out.push_str(&format!(
            "| {} | {key} | {flag} | {} | {} |\n",
            names.join(", "),
            s.doc,
            s.default
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_variables_are_unique() {
        let mut vars: Vec<&str> = SETTINGS
            .iter()
            .flat_map(|s| std::iter::once(s.var).chain(s.aliases.iter().copied()))
            .collect();
        let total = vars.len();
        vars.sort_unstable();
        vars.dedup();
        assert_eq!(vars.len(), total, "a variable is declared twice");
        let mut keys: Vec<String> = SETTINGS.iter().filter_map(Setting::file_key).collect();
        let total = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), total, "a config.toml key is declared twice");
        assert_eq!(
            by_key("agent_early_exit_turns").map(|s| s.var),
            Some("CHATCLI_AGENT_EARLY_EXIT_TURNS")
        );
        assert_eq!(
            by_key("max_turns").map(|s| s.var),
            Some("CHATCLI_AGENT_MAX_TURNS")
        );
        assert_eq!(
            find("LLM_PROVIDER").map(|s| s.var),
            Some("CHATCLI_PROVIDER")
        );
        assert_eq!(by_key("home"), None, "where files live is not in a file");
    }
}
