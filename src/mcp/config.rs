//! Which MCP servers a session may start: `CHATCLI_HOME/mcp.json` (user scope) and `.mcp.json`
//! at the project root (project scope), in the `{"mcpServers": {...}}` format other clients
//! use, with `${VAR}` expanded from the environment, and the approvals of project servers.
//!
//! A project file is written by whoever wrote the repository, so its servers run code on this
//! machine only after the user approved them once for that workspace; the approval is kept in
//! `CHATCLI_HOME/mcp-approvals.json` with a hash of the server's entry, so an edited entry asks
//! again. A user-scope server of the same name wins over a project one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::Digest;

use super::McpError;
use crate::env::Env;

/// Where a server's entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// `CHATCLI_HOME/mcp.json`.
    User,
    /// `.mcp.json` at the project root.
    Project,
}

/// How chatcli reaches a server.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A child process speaking JSON-RPC on stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    /// Streamable HTTP at `url`.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

impl Transport {
    /// `stdio` or `http`, as `/mcp` shows it.
    pub fn kind(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
        }
    }
}

/// One configured server, its values expanded.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    pub scope: Scope,
    pub transport: Transport,
    /// Hash of the entry as written (before expansion): what a project approval is bound to.
    pub fingerprint: String,
}

#[derive(Deserialize)]
struct File {
    #[serde(rename = "mcpServers", default)]
    servers: BTreeMap<String, serde_json::Value>,
}

/// One entry; fields other clients write and chatcli has no use for are ignored.
#[derive(Deserialize)]
struct Entry {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    disabled: bool,
}

/// Replaces each `${VAR}` by the variable's value; an unset variable is an error naming it.
pub fn expand(value: &str, env: &Env) -> Result<String, McpError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some((before, after)) = rest.split_once("${") {
        out.push_str(before);
        let Some((name, after)) = after.split_once('}') else {
            return Err(McpError::UnclosedVariable(value.to_string()));
        };
        match env.get(name) {
            Some(v) => out.push_str(v),
            None => {
                return Err(McpError::UnsetVariable(name.to_string()));
            }
        }
        rest = after;
    }
    out.push_str(rest);
    Ok(out)
}

/// Bytes of an MCP configuration or approvals file read at most.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The servers of one file; a missing file is no servers.
pub fn read_file(path: &Path, scope: Scope, env: &Env) -> (Vec<ServerConfig>, Vec<McpError>) {
    let shown = path.display().to_string();
    // Through the file door: a FIFO or a device named mcp.json is refused, a giant is cut.
    let text = match crate::files::read_bounded(path, MAX_FILE_BYTES)
        .and_then(|r| String::from_utf8(r.bytes).map_err(std::io::Error::other))
    {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (Vec::new(), Vec::new()),
        Err(e) => {
            return (
                Vec::new(),
                vec![McpError::File {
                    path: shown,
                    message: e.to_string(),
                }],
            );
        }
    };
    let file: File = match serde_json::from_str(&text) {
        Ok(file) => file,
        Err(e) => {
            return (
                Vec::new(),
                vec![McpError::File {
                    path: shown,
                    message: e.to_string(),
                }],
            );
        }
    };
    let mut servers = Vec::new();
    let mut errors = Vec::new();
    for (name, raw) in file.servers {
        let entry_error = |message: String| McpError::Entry {
            name: name.clone(),
            path: shown.clone(),
            message,
        };
        let fingerprint = {
            let bytes = serde_json::to_vec(&raw).unwrap_or_default();
            let digest = sha2::Sha256::digest(&bytes);
            digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
        };
        let entry: Entry = match serde_json::from_value(raw) {
            Ok(entry) => entry,
            Err(e) => {
                errors.push(entry_error(e.to_string()));
                continue;
            }
        };
        if entry.disabled {
            continue;
        }
        match transport(entry, env) {
            Ok(transport) => servers.push(ServerConfig {
                name,
                scope,
                transport,
                fingerprint,
            }),
            Err(e) => errors.push(entry_error(e.to_string())),
        }
    }
    (servers, errors)
}

fn transport(entry: Entry, env: &Env) -> Result<Transport, McpError> {
    let expand_map = |map: BTreeMap<String, String>| -> Result<BTreeMap<String, String>, McpError> {
        map.into_iter()
            .map(|(k, v)| expand(&v, env).map(|v| (k, v)))
            .collect()
    };
    let kind = entry
        .kind
        .as_deref()
        .unwrap_or(if entry.url.is_some() { "http" } else { "stdio" });
    match kind {
        "stdio" => {
            let command = entry.command.ok_or(McpError::NoCommand)?;
            Ok(Transport::Stdio {
                command: expand(&command, env)?,
                args: entry
                    .args
                    .iter()
                    .map(|a| expand(a, env))
                    .collect::<Result<_, _>>()?,
                env: expand_map(entry.env)?,
            })
        }
        "http" | "streamable-http" | "streamableHttp" => {
            let url = entry.url.ok_or(McpError::NoUrl)?;
            Ok(Transport::Http {
                url: expand(&url, env)?,
                headers: expand_map(entry.headers)?,
            })
        }
        other => Err(McpError::UnknownType(other.to_string())),
    }
}

/// Every configured server: user scope first, then the project's servers whose names the user
/// scope does not already use, each list sorted by name.
pub fn load(home: &Path, project_root: &Path, env: &Env) -> (Vec<ServerConfig>, Vec<McpError>) {
    let (mut servers, mut errors) = read_file(&home.join("mcp.json"), Scope::User, env);
    let (project, project_errors) = read_file(&project_root.join(".mcp.json"), Scope::Project, env);
    errors.extend(project_errors);
    for server in project {
        if servers.iter().any(|s| s.name == server.name) {
            tracing::info!(name = %server.name, "project MCP server shadowed by the user's");
            continue;
        }
        servers.push(server);
    }
    (servers, errors)
}

/// The project servers the user approved, per workspace, kept in `CHATCLI_HOME`.
#[derive(Debug, Clone)]
pub struct ProjectApprovals {
    path: PathBuf,
}

impl ProjectApprovals {
    /// The approvals kept under `home`.
    pub fn new(home: &Path) -> Self {
        ProjectApprovals {
            path: home.join("mcp-approvals.json"),
        }
    }

    fn read(&self) -> BTreeMap<String, Vec<String>> {
        crate::files::read_bounded(&self.path, MAX_FILE_BYTES)
            .ok()
            .and_then(|r| serde_json::from_slice(&r.bytes).ok())
            .unwrap_or_default()
    }

    fn key(server: &ServerConfig) -> String {
        format!("{}#{}", server.name, server.fingerprint)
    }

    /// Whether this server may start in this workspace (user-scope servers always may).
    pub fn allows(&self, project_root: &Path, server: &ServerConfig) -> bool {
        server.scope == Scope::User
            || self
                .read()
                .get(&project_root.display().to_string())
                .is_some_and(|names| names.contains(&Self::key(server)))
    }

    /// Remembers the approval of `server` for `project_root`.
    pub fn approve(&self, project_root: &Path, server: &ServerConfig) -> std::io::Result<()> {
        let mut all = self.read();
        let names = all.entry(project_root.display().to_string()).or_default();
        let key = Self::key(server);
        if !names.contains(&key) {
            names.push(key);
            names.sort();
        }
        let text = serde_json::to_string_pretty(&all).map_err(std::io::Error::other)?;
        crate::private_fs::replace_private(&self.path, text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_expand_and_a_missing_one_is_named() {
        let env = Env::from_pairs([("TOKEN", "s3cret")]);
        assert_eq!(
            expand("Bearer ${TOKEN}!", &env).as_deref(),
            Ok("Bearer s3cret!")
        );
        assert_eq!(expand("plain", &env).as_deref(), Ok("plain"));
        let err = expand("${NOPE}", &env).unwrap_err().to_string();
        assert!(err.contains("${NOPE} is not set"), "{err}");
    }

    #[test]
    fn both_scopes_load_and_user_wins_and_bad_entries_are_reported() {
        let home = tempfile::tempdir().expect("tempdir");
        let project = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            home.path().join("mcp.json"),
            r#"{"mcpServers": {"fs": {"command": "fs-server", "args": ["${ROOT}"]},
                "web": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}"#,
        )
        .expect("write");
        std::fs::write(
            project.path().join(".mcp.json"),
            r#"{"mcpServers": {"fs": {"command": "evil"}, "db": {"command": "db-server"}, "bad": {"type": "sse", "url": "x"}}}"#,
        )
        .expect("write");
        let env = Env::from_pairs([("ROOT", "/data"), ("TOKEN", "t")]);
        let (servers, errors) = load(home.path(), project.path(), &env);
        let names: Vec<(&str, Scope)> =
            servers.iter().map(|s| (s.name.as_str(), s.scope)).collect();
        assert_eq!(
            names,
            vec![
                ("fs", Scope::User),
                ("web", Scope::User),
                ("db", Scope::Project)
            ]
        );
        assert_eq!(
            servers[0].transport,
            Transport::Stdio {
                command: "fs-server".into(),
                args: vec!["/data".into()],
                env: BTreeMap::new()
            }
        );
        assert!(
            matches!(&servers[1].transport, Transport::Http { headers, .. } if headers["Authorization"] == "Bearer t")
        );
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().contains("`bad`"), "{}", errors[0]);
    }

    #[test]
    fn project_approval_is_remembered_per_workspace_and_entry() {
        let home = tempfile::tempdir().expect("tempdir");
        let approvals = ProjectApprovals::new(home.path());
        let server = ServerConfig {
            name: "db".into(),
            scope: Scope::Project,
            transport: Transport::Stdio {
                command: "db".into(),
                args: vec![],
                env: BTreeMap::new(),
            },
            fingerprint: "abc".into(),
        };
        let root = Path::new("/work/p");
        assert!(!approvals.allows(root, &server));
        approvals.approve(root, &server).expect("approve");
        assert!(approvals.allows(root, &server));
        assert!(!approvals.allows(Path::new("/work/other"), &server));
        let edited = ServerConfig {
            fingerprint: "def".into(),
            ..server
        };
        assert!(
            !approvals.allows(root, &edited),
            "an edited entry asks again"
        );
    }
}
