//! The MCP module's one error type: a configuration file or entry chatcli cannot use, and a
//! server that cannot be started, called or asked for a prompt. Configuration errors are
//! collected (one bad entry never stops the others) and shown as notices; a failed call is the
//! tool result the model reads; a failed start marks the server failed in `/mcp`. Errors from
//! rmcp, serde and the transport are kept as their text, so the type stays `Clone` and
//! comparable in tests.

/// Why an MCP configuration, server, call or prompt failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpError {
    /// The file is not the expected JSON.
    #[error("{path}: {message} (expected {{\"mcpServers\": {{\"NAME\": {{\"command\": …}}}}}})")]
    File { path: String, message: String },
    /// One entry is unusable; the others still start.
    #[error("MCP server `{name}` in {path}: {message}")]
    Entry {
        name: String,
        path: String,
        message: String,
    },
    /// `${` with no `}` in a value.
    #[error("`${{` without a closing `}}` in \"{0}\"")]
    UnclosedVariable(String),
    /// `${VAR}` names a variable that is not set.
    #[error("${{{0}}} is not set: export {0} or edit the file")]
    UnsetVariable(String),
    /// A stdio entry without `command`.
    #[error("a stdio server needs \"command\"")]
    NoCommand,
    /// An http entry without `url`.
    #[error("an http server needs \"url\"")]
    NoUrl,
    /// A `type` other than stdio or http.
    #[error("\"type\": \"{0}\" is not supported (use \"stdio\" or \"http\")")]
    UnknownType(String),
    /// `/mcp approve NAME` for a name no file configures.
    #[error("no MCP server named `{0}` (/mcp lists them)")]
    NotConfigured(String),
    /// A server prompt asked for in a session without MCP.
    #[error("no MCP servers in this session")]
    NoServers,
    /// A call or prompt for a server no file configures.
    #[error("no MCP server named `{0}`")]
    NoSuchServer(String),
    /// A server index past the list (a bug, said rather than panicked on).
    #[error("no MCP server number {0}")]
    NoSuchIndex(usize),
    /// The server's state lock is poisoned.
    #[error("MCP state unavailable")]
    StateUnavailable,
    /// `/mcp approve` for a server that was not waiting for approval.
    #[error("MCP server `{0}` needs no approval")]
    NeedsNoApproval(String),
    /// The server did not finish starting in time.
    #[error("did not answer within {0}s (CHATCLI_MCP_STARTUP_TIMEOUT)")]
    StartTimeout(f64),
    /// The server's command could not be run.
    #[error("cannot run `{command}`: {message}")]
    Spawn { command: String, message: String },
    /// The MCP handshake failed.
    #[error("initialisation failed: {0}")]
    Initialise(String),
    /// An http entry's header is not a valid header.
    #[error("header `{key}`: {message}")]
    Header { key: String, message: String },
    /// The http server could not be reached.
    #[error("cannot connect to {url}: {message}")]
    Connect { url: String, message: String },
    /// The server's tool list could not be read.
    #[error("tools/list failed: {0}")]
    ToolsList(String),
    /// A call to a server that stopped or failed.
    #[error("MCP server `{server}` is not running: {why}")]
    Failed { server: String, why: String },
    /// A call to a server that is not running (starting, waiting for approval).
    #[error("MCP server `{server}` is not running ({status})")]
    NotRunning {
        server: String,
        status: &'static str,
    },
    /// A prompt of a server that is not running.
    #[error("MCP server `{0}` is not running (/mcp)")]
    PromptServerDown(String),
    /// The call itself failed.
    #[error("MCP server `{server}`: call of `{tool}` failed: {message}")]
    Call {
        server: String,
        tool: String,
        message: String,
    },
    /// A prompt the server does not list.
    #[error("MCP server `{server}` has no prompt `{prompt}`")]
    NoSuchPrompt { server: String, prompt: String },
    /// Prompt arguments that are not `key=value`.
    #[error("/{server}:{prompt} takes key=value arguments ({arguments})")]
    PromptArguments {
        server: String,
        prompt: String,
        arguments: String,
    },
    /// The prompt request failed.
    #[error("/{server}:{prompt} failed: {message}")]
    Prompt {
        server: String,
        prompt: String,
        message: String,
    },
    /// The prompt came back without text.
    #[error("/{server}:{prompt} returned no text")]
    PromptEmpty { server: String, prompt: String },
}
