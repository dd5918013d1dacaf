//! The running MCP servers of one session: starting them in parallel, their status, their tool
//! lists, calls, the notifications they push, and killing them when the session ends.
//!
//! Every server starts in its own task, bounded by `CHATCLI_MCP_STARTUP_TIMEOUT`; nothing here
//! blocks the caller. A server that fails to start or dies later is `Failed` with the reason,
//! reported once through `take_reports`, and never restarted: the session goes on without it.
//! The tool lists only change on `notifications/tools/list_changed`, which bumps `generation`:
//! the agent re-reads the tools when it sees a new generation and never otherwise, which is
//! what keeps the tools array byte-identical. Child processes run in their own process group so
//! that `npx` and the node process it starts die together.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

// `notifications/message` is deprecated by SEP-2577 but still what servers send today.
#[allow(deprecated)]
use rmcp::model::LoggingMessageNotificationParam;
use rmcp::model::{
    CallToolRequestParams, ProgressNotificationParam, ResourceUpdatedNotificationParam,
};
use rmcp::service::{NotificationContext, Peer, RoleClient, RunningServiceCancellationToken};
use rmcp::{ClientHandler, ServiceExt};
use tokio::sync::watch;

use super::McpError;
use super::config::{ServerConfig, Transport};

/// The default of `CHATCLI_MCP_STARTUP_TIMEOUT`.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// Notifications the MCP channel keeps (the newest).
pub const CHANNEL_ITEMS: usize = 5;
/// Characters the MCP channel block may hold in all.
pub const CHANNEL_CHARS: usize = 1000;

/// Where a server stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// Still connecting.
    Starting,
    /// Connected; its tools are offered.
    Running,
    /// Could not start, or stopped; the text says why.
    Failed(String),
    /// A project server the user has not approved for this workspace.
    NotApproved,
}

impl Status {
    /// One word for `/mcp`.
    pub fn word(&self) -> &'static str {
        match self {
            Status::Starting => "starting",
            Status::Running => "running",
            Status::Failed(_) => "failed",
            Status::NotApproved => "not approved",
        }
    }
}

/// A server prompt, offered as `/SERVER:PROMPT`.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptInfo {
    pub name: String,
    pub description: String,
    /// Its arguments' names, in the server's order.
    pub arguments: Vec<String>,
}

/// What `/mcp` shows of one server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerReport {
    pub name: String,
    pub scope: super::config::Scope,
    pub transport: &'static str,
    pub status: Status,
    pub tools: usize,
    pub prompts: Vec<PromptInfo>,
    pub resources: usize,
}

#[derive(Default)]
struct ServerState {
    status: Option<Status>,
    tools: Vec<rmcp::model::Tool>,
    prompts: Vec<PromptInfo>,
    resources: usize,
    peer: Option<Peer<RoleClient>>,
    cancel: Option<RunningServiceCancellationToken>,
    /// The process group of a stdio server.
    pgid: Option<u32>,
}

struct Server {
    config: ServerConfig,
    state: Mutex<ServerState>,
}

/// One entry of the MCP channel: a key replaces an older entry with the same key (progress).
struct ChannelItem {
    key: Option<String>,
    text: String,
}

/// rmcp's HTTP client (reqwest 0.13, built without a TLS backend of its own) needs a process
/// rustls provider; chatcli's other HTTP client already links ring, so that is the one.
fn install_crypto() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // `Err` means another part of the process installed one first: that one is used.
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// The session's MCP servers.
pub struct McpHub {
    servers: Vec<Server>,
    channel: Mutex<VecDeque<ChannelItem>>,
    generation: AtomicU64,
    reports: Mutex<Vec<String>>,
    pending: watch::Sender<usize>,
    closing: AtomicBool,
    workspace: PathBuf,
    timeout: Duration,
}

/// The client side of one connection: turns server notifications into channel items.
struct Handler {
    hub: Weak<McpHub>,
    index: usize,
}

fn short(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl ClientHandler for Handler {
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(hub) = self.hub.upgrade() {
            let level = serde_json::to_value(params.level)
                .map(|v| short(&v))
                .unwrap_or_default();
            let logger = params.logger.map(|l| format!(" {l}")).unwrap_or_default();
            let text = format!("{level}{logger}: {}", short(&params.data));
            hub.push_channel(self.index, None, text);
        }
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(hub) = self.hub.upgrade() {
            let text = format!("resource updated: {}", params.uri);
            hub.push_channel(self.index, Some(format!("resource {}", params.uri)), text);
        }
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(hub) = self.hub.upgrade() {
            let token = serde_json::to_value(&params.progress_token)
                .map(|v| short(&v))
                .unwrap_or_default();
            let total = params.total.map(|t| format!("/{t}")).unwrap_or_default();
            let message = params.message.map(|m| format!(": {m}")).unwrap_or_default();
            let text = format!("progress {}{total}{message}", params.progress);
            hub.push_channel(self.index, Some(format!("progress {token}")), text);
        }
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        let hub = self.hub.clone();
        let index = self.index;
        // Re-listing is a request: it runs off the connection's notification path.
        tokio::spawn(async move {
            let listed = context.peer.list_all_tools().await;
            if let Some(hub) = hub.upgrade() {
                match listed {
                    Ok(tools) => {
                        // The generation moves before the lock is let go: whoever sees the
                        // new tools sees the new generation too.
                        let server = hub.servers.get(index);
                        if let Some(Ok(mut state)) = server.map(|s| s.state.lock()) {
                            state.tools = tools;
                            hub.generation.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                    Err(e) => {
                        let name = hub.servers.get(index).map(|s| s.config.name.as_str());
                        tracing::warn!(server = name.unwrap_or_default(), error = %e, "cannot re-list MCP tools")
                    }
                }
            }
        });
    }
}

impl McpHub {
    /// Starts `servers` (those in `approved`; the others stay `NotApproved`) in parallel and
    /// returns at once. Needs a tokio runtime.
    pub fn start(
        servers: Vec<ServerConfig>,
        approved: impl Fn(&ServerConfig) -> bool,
        workspace: PathBuf,
        timeout: Duration,
    ) -> Arc<McpHub> {
        let allowed: Vec<bool> = servers.iter().map(&approved).collect();
        let pending = allowed.iter().filter(|a| **a).count();
        let (pending_tx, _) = watch::channel(pending);
        let hub = Arc::new(McpHub {
            servers: servers
                .into_iter()
                .zip(&allowed)
                .map(|(config, allowed)| Server {
                    config,
                    state: Mutex::new(ServerState {
                        status: Some(if *allowed {
                            Status::Starting
                        } else {
                            Status::NotApproved
                        }),
                        ..ServerState::default()
                    }),
                })
                .collect(),
            channel: Mutex::new(VecDeque::new()),
            generation: AtomicU64::new(0),
            reports: Mutex::new(Vec::new()),
            pending: pending_tx,
            closing: AtomicBool::new(false),
            workspace: workspace.clone(),
            timeout,
        });
        for (index, allowed) in allowed.into_iter().enumerate() {
            if allowed {
                hub.spawn_connect(index);
            }
        }
        hub
    }

    /// A hub with no servers.
    pub fn empty() -> Arc<McpHub> {
        Self::start(
            Vec::new(),
            |_| false,
            PathBuf::new(),
            DEFAULT_STARTUP_TIMEOUT,
        )
    }

    /// Starts a server that was waiting for approval (`/mcp approve`); its tools join at the
    /// next request, which therefore misses the cache once.
    pub fn start_approved(self: &Arc<Self>, name: &str) -> Result<(), McpError> {
        let Some((index, server)) = self.named(name) else {
            return Err(McpError::NotConfigured(name.to_string()));
        };
        {
            let mut state = server
                .state
                .lock()
                .map_err(|_| McpError::StateUnavailable)?;
            if state.status != Some(Status::NotApproved) {
                return Err(McpError::NeedsNoApproval(name.to_string()));
            }
            state.status = Some(Status::Starting);
        }
        self.pending.send_modify(|n| *n += 1);
        self.spawn_connect(index);
        Ok(())
    }

    /// Connects server `index` in its own task; whatever happens there, even a panic, the
    /// server ends up running or failed and stops counting as pending.
    fn spawn_connect(self: &Arc<Self>, index: usize) {
        let hub = Arc::clone(self);
        let (workspace, timeout) = (self.workspace.clone(), self.timeout);
        tokio::spawn(async move {
            let attempt = tokio::spawn(Arc::clone(&hub).connect(index, workspace, timeout)).await;
            if let Err(e) = attempt {
                hub.kill(index);
                hub.fail(index, format!("failed to start: {e}"));
            }
            hub.pending.send_modify(|n| *n = n.saturating_sub(1));
        });
    }

    /// A server and its index, by name.
    fn named(&self, name: &str) -> Option<(usize, &Server)> {
        self.servers
            .iter()
            .enumerate()
            .find(|(_, s)| s.config.name == name)
    }

    /// The configuration of a server, by name.
    pub fn config(&self, name: &str) -> Option<&ServerConfig> {
        self.servers
            .iter()
            .map(|s| &s.config)
            .find(|c| c.name == name)
    }

    /// Whether any server is configured.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    async fn connect(self: Arc<Self>, index: usize, workspace: PathBuf, timeout: Duration) {
        let Some(name) = self.servers.get(index).map(|s| s.config.name.clone()) else {
            return;
        };
        let handler = Handler {
            hub: Arc::downgrade(&self),
            index,
        };
        let attempt = tokio::time::timeout(timeout, self.open(index, handler, workspace)).await;
        let outcome = match attempt {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e),
            Err(_) => {
                self.kill(index);
                Err(McpError::StartTimeout(timeout.as_secs_f64()))
            }
        };
        if let Err(why) = outcome {
            tracing::warn!(server = %name, %why, "MCP server failed to start");
            self.fail(index, format!("failed to start: {why}"));
        } else {
            tracing::info!(server = %name, "MCP server running");
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Connects, lists, and leaves a watcher that reports the server's end.
    async fn open(
        self: &Arc<Self>,
        index: usize,
        handler: Handler,
        workspace: PathBuf,
    ) -> Result<(), McpError> {
        let server = self
            .servers
            .get(index)
            .ok_or(McpError::NoSuchIndex(index))?;
        let service = match &server.config.transport {
            Transport::Stdio { command, args, env } => {
                connect_stdio(server, handler, command, args, env, &workspace).await?
            }
            Transport::Http { url, headers } => connect_http(handler, url, headers).await?,
        };
        let peer = service.peer().clone();
        let offers = list_offers(&peer).await?;
        if let Ok(mut state) = server.state.lock() {
            state.tools = offers.tools;
            state.prompts = offers.prompts;
            state.resources = offers.resources;
            state.peer = Some(peer);
            state.cancel = Some(service.cancellation_token());
            state.status = Some(Status::Running);
        }
        self.watch(index, server.config.name.clone(), service);
        Ok(())
    }

    /// Leaves a task that owns the connection: when it ends, the server is marked failed
    /// (unless the hub is closing).
    fn watch(self: &Arc<Self>, index: usize, name: String, service: Connection) {
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            let reason = service.waiting().await;
            if let Some(hub) = weak.upgrade()
                && !hub.closing.load(Ordering::SeqCst)
            {
                let why = match reason {
                    Ok(rmcp::service::QuitReason::Cancelled) => {
                        "the connection was cancelled".to_string()
                    }
                    Ok(_) => "the server closed the connection (did it exit?)".to_string(),
                    Err(e) => format!("its task failed: {e}"),
                };
                tracing::warn!(server = %name, %why, "MCP server stopped");
                hub.fail(index, format!("stopped: {why}"));
            }
        });
    }

    /// Marks a server failed and queues the one report of it.
    fn fail(&self, index: usize, why: String) {
        let Some(server) = self.servers.get(index) else {
            return;
        };
        let Ok(mut state) = server.state.lock() else {
            return;
        };
        if matches!(state.status, Some(Status::Failed(_))) {
            return;
        }
        state.status = Some(Status::Failed(why.clone()));
        state.peer = None;
        drop(state);
        // A server that broke its connection but still runs is not left behind.
        self.kill(index);
        if let Ok(mut reports) = self.reports.lock() {
            reports.push(format!(
                "MCP server `{}` {why}; the session goes on without its tools (/mcp shows the servers)",
                server.config.name
            ));
        }
    }

    /// Kills a stdio server's process group.
    fn kill(&self, index: usize) {
        let Some(Ok(mut state)) = self.servers.get(index).map(|s| s.state.lock()) else {
            return;
        };
        if let Some(cancel) = state.cancel.take() {
            cancel.cancel();
        }
        if let Some(pgid) = state.pgid.take() {
            crate::process::kill_group(pgid);
            crate::process::forget_group(pgid);
        }
    }

    /// Waits until no server is still starting (each is bounded by the startup timeout).
    pub async fn wait_started(&self) {
        let mut pending = self.pending.subscribe();
        let _ = pending.wait_for(|n| *n == 0).await;
    }

    /// Bumped whenever a server's tool list changes.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Every tool of every running server, as `(server, tool)`, sorted by server then tool name.
    pub fn tools(&self) -> Vec<(String, rmcp::model::Tool)> {
        let mut all = Vec::new();
        for server in &self.servers {
            if let Ok(state) = server.state.lock()
                && state.status == Some(Status::Running)
            {
                for tool in &state.tools {
                    all.push((server.config.name.clone(), tool.clone()));
                }
            }
        }
        all.sort_by(|a, b| (&a.0, &a.1.name).cmp(&(&b.0, &b.1.name)));
        all
    }

    /// Calls a tool; `Err` is the text the model reads (a transport failure, a dead server).
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<rmcp::model::CallToolResult, McpError> {
        let Some((index, slot)) = self.named(server) else {
            return Err(McpError::NoSuchServer(server.to_string()));
        };
        let peer = {
            let state = slot.state.lock().map_err(|_| McpError::StateUnavailable)?;
            match (&state.status, &state.peer) {
                (Some(Status::Running), Some(peer)) => peer.clone(),
                (Some(Status::Failed(why)), _) => {
                    return Err(McpError::Failed {
                        server: server.to_string(),
                        why: why.clone(),
                    });
                }
                (status, _) => {
                    return Err(McpError::NotRunning {
                        server: server.to_string(),
                        status: status.as_ref().map_or("unknown", Status::word),
                    });
                }
            }
        };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        match peer.call_tool(params).await {
            Ok(result) => Ok(result),
            Err(e) => {
                if peer.is_transport_closed() {
                    self.fail(index, format!("stopped: {e}"));
                }
                Err(McpError::Call {
                    server: server.to_string(),
                    tool: tool.to_string(),
                    message: e.to_string(),
                })
            }
        }
    }

    /// A server prompt's text (`/SERVER:PROMPT ARGS`): `ARGS` is `key=value` pairs, or for a
    /// prompt with one argument the whole text. `Err` says why there is none.
    pub async fn prompt_text(
        &self,
        server: &str,
        prompt: &str,
        args: &str,
    ) -> Result<String, McpError> {
        let Some((_, slot)) = self.named(server) else {
            return Err(McpError::NoSuchServer(server.to_string()));
        };
        let (peer, info) = {
            let state = slot.state.lock().map_err(|_| McpError::StateUnavailable)?;
            let info = state.prompts.iter().find(|p| p.name == prompt).cloned();
            (state.peer.clone(), info)
        };
        let peer = peer.ok_or_else(|| McpError::PromptServerDown(server.to_string()))?;
        let info = info.ok_or_else(|| McpError::NoSuchPrompt {
            server: server.to_string(),
            prompt: prompt.to_string(),
        })?;
        let mut arguments = serde_json::Map::new();
        let args = args.trim();
        if !args.is_empty() {
            if let ([only], false) = (info.arguments.as_slice(), args.contains('=')) {
                arguments.insert(only.clone(), args.into());
            } else {
                for pair in args.split_whitespace() {
                    let Some((key, value)) = pair.split_once('=') else {
                        return Err(McpError::PromptArguments {
                            server: server.to_string(),
                            prompt: prompt.to_string(),
                            arguments: info.arguments.join(", "),
                        });
                    };
                    arguments.insert(key.to_string(), value.into());
                }
            }
        }
        let params = rmcp::model::GetPromptRequestParams::new(prompt).with_arguments(arguments);
        let result = peer
            .get_prompt(params)
            .await
            .map_err(|e| McpError::Prompt {
                server: server.to_string(),
                prompt: prompt.to_string(),
                message: e.to_string(),
            })?;
        let value = serde_json::to_value(&result).unwrap_or_default();
        let texts: Vec<&str> = value
            .get("messages")
            .and_then(|m| m.as_array())
            .into_iter()
            .flatten()
            .filter_map(|m| m.pointer("/content/text").and_then(|t| t.as_str()))
            .collect();
        if texts.is_empty() {
            return Err(McpError::PromptEmpty {
                server: server.to_string(),
                prompt: prompt.to_string(),
            });
        }
        Ok(texts.join("\n\n"))
    }

    /// Queues a notification for the next request's `<context>` block.
    fn push_channel(&self, index: usize, key: Option<String>, text: String) {
        let Some(server) = self.servers.get(index).map(|s| &s.config.name) else {
            return;
        };
        let key = key.map(|k| format!("{server} {k}"));
        let Ok(mut channel) = self.channel.lock() else {
            return;
        };
        if key.is_some() {
            channel.retain(|item| item.key != key);
        }
        channel.push_back(ChannelItem {
            key,
            text: format!("[{server}] {}", text.trim()),
        });
        while channel.len() > CHANNEL_ITEMS {
            channel.pop_front();
        }
    }

    /// The queued notifications as one block (the newest within `CHANNEL_CHARS`), emptying the
    /// queue; `None` when nothing arrived.
    pub fn drain_channel(&self) -> Option<String> {
        let items: Vec<String> = self
            .channel
            .lock()
            .ok()
            .map(|mut c| c.drain(..).map(|item| item.text).collect())
            .unwrap_or_default();
        let mut kept: Vec<String> = Vec::new();
        let mut used = 0;
        for text in items.into_iter().rev() {
            let room = CHANNEL_CHARS.saturating_sub(used + kept.len());
            if room == 0 {
                break;
            }
            let (cut, more) = crate::tools::take_chars(&text, room);
            let line = if more {
                let (shorter, _) = crate::tools::take_chars(cut, room.saturating_sub(1));
                format!("{shorter}…")
            } else {
                cut.to_string()
            };
            used += line.chars().count();
            kept.push(line);
        }
        kept.reverse();
        (!kept.is_empty()).then(|| kept.join("\n"))
    }

    /// Queues a line for the user, reported once like a failure.
    pub fn report_later(&self, message: String) {
        if let Ok(mut reports) = self.reports.lock() {
            reports.push(message);
        }
    }

    /// Failures not reported yet, each once.
    pub fn take_reports(&self) -> Vec<String> {
        self.reports
            .lock()
            .map(|mut r| std::mem::take(&mut *r))
            .unwrap_or_default()
    }

    /// What `/mcp` shows, in configuration order.
    pub fn report(&self) -> Vec<ServerReport> {
        self.servers
            .iter()
            .map(|server| {
                let state = server.state.lock();
                let (status, tools, prompts, resources) = match &state {
                    Ok(s) => (
                        s.status.clone().unwrap_or(Status::Starting),
                        s.tools.len(),
                        s.prompts.clone(),
                        s.resources,
                    ),
                    Err(_) => (Status::Failed("state unavailable".into()), 0, Vec::new(), 0),
                };
                ServerReport {
                    name: server.config.name.clone(),
                    scope: server.config.scope,
                    transport: server.config.transport.kind(),
                    status,
                    tools,
                    prompts,
                    resources,
                }
            })
            .collect()
    }

    /// Ends every connection and kills every child (also done on drop).
    pub fn shutdown(&self) {
        self.closing.store(true, Ordering::SeqCst);
        for index in 0..self.servers.len() {
            self.kill(index);
        }
    }
}

/// A running connection to one server.
type Connection = rmcp::service::RunningService<RoleClient, Handler>;

/// Starts a stdio server and connects to it. Through the process door: its own session (its
/// group registered, to be killed with the session), and the scrubbed environment plus what
/// the entry's `env` passes on purpose (a server never sees provider keys). Its stderr goes to
/// the log.
async fn connect_stdio(
    server: &Server,
    handler: Handler,
    command: &str,
    args: &[String],
    env: &std::collections::BTreeMap<String, String>,
    workspace: &std::path::Path,
) -> Result<Connection, McpError> {
    let mut door = crate::process::Door::new(command);
    door.command().args(args).envs(env).current_dir(workspace);
    let cmd = door.into_tokio();
    let (transport, stderr) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| McpError::Spawn {
            command: command.to_string(),
            message: e.to_string(),
        })?;
    if let Some(pgid) = transport.id() {
        crate::process::register_group(pgid);
    }
    if let Ok(mut state) = server.state.lock() {
        state.pgid = transport.id();
    }
    if let Some(stderr) = stderr {
        let name = server.config.name.clone();
        tokio::spawn(async move {
            use tokio::io::AsyncBufReadExt;
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::info!(server = %name, "mcp stderr: {line}");
            }
        });
    }
    handler
        .serve(transport)
        .await
        .map_err(|e| McpError::Initialise(e.to_string()))
}

/// Connects to a streamable HTTP server; an `Authorization` header becomes the bearer token.
async fn connect_http(
    handler: Handler,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<Connection, McpError> {
    use rmcp::transport::StreamableHttpClientTransport;
    install_crypto();
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    let mut custom = std::collections::HashMap::new();
    for (key, value) in headers {
        if key.eq_ignore_ascii_case("authorization") {
            let token = value.strip_prefix("Bearer ").unwrap_or(value);
            config = config.auth_header(token);
            continue;
        }
        let key = http::HeaderName::from_bytes(key.as_bytes()).map_err(|e| McpError::Header {
            key: key.clone(),
            message: e.to_string(),
        })?;
        let value = http::HeaderValue::from_str(value).map_err(|e| McpError::Header {
            key: key.to_string(),
            message: e.to_string(),
        })?;
        custom.insert(key, value);
    }
    let config = config.custom_headers(custom);
    let transport = StreamableHttpClientTransport::from_config(config);
    handler
        .serve(transport)
        .await
        .map_err(|e| McpError::Connect {
            url: url.to_string(),
            message: e.to_string(),
        })
}

/// What a server offers, as listed when it starts.
struct Offers {
    tools: Vec<rmcp::model::Tool>,
    prompts: Vec<PromptInfo>,
    /// How many resources it has.
    resources: usize,
}

/// Lists what the server says it has in its capabilities (tools when it says nothing). A failed
/// tool list fails the start; prompts and resources that cannot be listed count as none.
async fn list_offers(peer: &Peer<RoleClient>) -> Result<Offers, McpError> {
    let capabilities = peer.peer_info().map(|info| info.capabilities.clone());
    let tools = match capabilities.as_ref().map(|c| c.tools.is_some()) {
        Some(false) => Vec::new(),
        _ => peer
            .list_all_tools()
            .await
            .map_err(|e| McpError::ToolsList(e.to_string()))?,
    };
    let prompts = if capabilities.as_ref().is_some_and(|c| c.prompts.is_some()) {
        list_prompts(peer).await
    } else {
        Vec::new()
    };
    let resources = if capabilities.as_ref().is_some_and(|c| c.resources.is_some()) {
        peer.list_all_resources()
            .await
            .map(|r| r.len())
            .unwrap_or(0)
    } else {
        0
    };
    Ok(Offers {
        tools,
        prompts,
        resources,
    })
}

/// The server's prompts with their arguments' names; none when they cannot be listed.
async fn list_prompts(peer: &Peer<RoleClient>) -> Vec<PromptInfo> {
    peer.list_all_prompts()
        .await
        .map(|list| {
            list.into_iter()
                .map(|p| PromptInfo {
                    name: p.name.to_string(),
                    description: p.description.map(|d| d.to_string()).unwrap_or_default(),
                    arguments: p
                        .arguments
                        .unwrap_or_default()
                        .into_iter()
                        .map(|a| a.name)
                        .collect(),
                })
                .collect()
        })
        .unwrap_or_default()
}

impl Drop for McpHub {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::config::{Scope, ServerConfig, Transport};

    fn idle_hub() -> Arc<McpHub> {
        let config = ServerConfig {
            name: "srv".into(),
            scope: Scope::Project,
            transport: Transport::Stdio {
                command: "never-run".into(),
                args: Vec::new(),
                env: Default::default(),
            },
            fingerprint: "x".into(),
        };
        McpHub::start(
            vec![config],
            |_| false,
            PathBuf::new(),
            DEFAULT_STARTUP_TIMEOUT,
        )
    }

    #[test]
    fn the_channel_keeps_the_five_newest_within_the_character_budget_and_empties() {
        let hub = idle_hub();
        assert_eq!(hub.report()[0].status, Status::NotApproved);
        assert_eq!(hub.drain_channel(), None);
        for n in 0..7 {
            hub.push_channel(0, None, format!("info: message {n}"));
        }
        let block = hub.drain_channel().expect("queued");
        assert_eq!(block.lines().count(), CHANNEL_ITEMS);
        assert!(block.starts_with("[srv] info: message 2"), "{block}");
        assert!(block.ends_with("[srv] info: message 6"), "{block}");
        assert_eq!(hub.drain_channel(), None, "sent once");

        // Progress of one call replaces its earlier progress; long messages are cut, newest kept.
        hub.push_channel(0, Some("progress 1".into()), "progress 1/3".into());
        hub.push_channel(0, Some("progress 1".into()), "progress 3/3".into());
        hub.push_channel(0, None, "x".repeat(3000));
        hub.push_channel(0, None, "info: newest".into());
        let block = hub.drain_channel().expect("queued");
        assert!(
            block.chars().count() <= CHANNEL_CHARS + CHANNEL_ITEMS,
            "{}",
            block.len()
        );
        assert!(block.ends_with("[srv] info: newest"));
        assert!(!block.contains("1/3"));
    }
}
