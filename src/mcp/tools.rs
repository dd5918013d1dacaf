//! MCP tools as the model sees them: either each server tool as its own `Tool` (direct), or, when
//! their schemas exceed the budget, a catalog block plus the fixed `mcp_describe` and `mcp_call`
//! tools (deferred). Also the conversion of a call's result into a tool result.
//!
//! `McpToolSet` is a snapshot taken once per tool-list generation: building it twice from the
//! same servers yields byte-identical specs and catalog, which is what the prompt cache needs.
//! Approval follows the server's `readOnlyHint`; "allow always" covers the whole server.

use std::sync::Arc;

use base64::Engine;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::hub::McpHub;
use super::naming;
use crate::conversation::{SystemBlock, ToolSpec};
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput};

/// Name of the deferred-mode tool that returns schemas.
pub const DESCRIBE: &str = "mcp_describe";
/// Name of the deferred-mode tool that calls a tool.
pub const CALL: &str = "mcp_call";
/// Characters of a description offered directly.
const DESCRIPTION_CHARS: usize = 1024;

/// One server tool as offered.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// `mcp__<server>__<tool>`.
    pub name: String,
    pub server: String,
    /// The tool's name on its server.
    pub tool: String,
    pub description: String,
    /// The adapted input schema.
    pub schema: Value,
    /// The server marked it `readOnlyHint: true`.
    pub read_only: bool,
}

impl Entry {
    /// The tool as offered directly.
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.clone(),
            description: self.description.clone(),
            parameters: self.schema.clone(),
        }
    }
}

/// The MCP tools of a session at one tool-list generation.
#[derive(Clone)]
pub struct McpToolSet {
    hub: Arc<McpHub>,
    entries: Arc<Vec<Entry>>,
    /// Tokens the direct specs would take, estimated (4 bytes a token).
    pub schema_tokens: u64,
    /// Offered behind the catalog rather than directly.
    pub deferred: bool,
    /// The generation of the hub's tool lists this was built from.
    pub generation: u64,
}

impl McpToolSet {
    /// A snapshot of the hub's tools; deferred when their specs exceed `budget` tokens.
    pub fn build(hub: &Arc<McpHub>, budget: u64) -> McpToolSet {
        let generation = hub.generation();
        let tools = hub.tools();
        let pairs: Vec<(String, String)> = tools
            .iter()
            .map(|(server, tool)| (server.clone(), tool.name.to_string()))
            .collect();
        let names = naming::assign(&pairs);
        let mut entries: Vec<Entry> = tools
            .iter()
            .zip(names)
            .map(|((server, tool), name)| {
                let description = tool.description.as_deref().unwrap_or_default().trim();
                let (description, _) = crate::tools::take_chars(description, DESCRIPTION_CHARS);
                Entry {
                    name,
                    server: server.clone(),
                    tool: tool.name.to_string(),
                    description: description.to_string(),
                    schema: naming::adapt_schema(&Value::Object((*tool.input_schema).clone())),
                    read_only: tool
                        .annotations
                        .as_ref()
                        .and_then(|a| a.read_only_hint)
                        .unwrap_or(false),
                }
            })
            .collect();
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        let specs: Vec<ToolSpec> = entries.iter().map(Entry::spec).collect();
        // An estimate decides direct or deferred: an exact count would load the o200k encoder
        // in every session with an MCP server, for a threshold.
        let schema_tokens = if specs.is_empty() {
            0
        } else {
            crate::tokens::rough(serde_json::to_string(&specs).map_or(0, |json| json.len()))
        };
        McpToolSet {
            hub: Arc::clone(hub),
            deferred: !entries.is_empty() && schema_tokens > budget,
            entries: Arc::new(entries),
            schema_tokens,
            generation,
        }
    }

    /// The offered tools.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The tools to add to a mode's registry: each server tool (direct) or the two fixed tools
    /// (deferred); none without MCP tools.
    pub fn tools(&self) -> Vec<Box<dyn Tool>> {
        if self.entries.is_empty() {
            return Vec::new();
        }
        if self.deferred {
            return vec![
                Box::new(Call { set: self.clone() }),
                Box::new(Describe { set: self.clone() }),
            ];
        }
        self.entries
            .iter()
            .map(|entry| {
                Box::new(Direct {
                    hub: Arc::clone(&self.hub),
                    entry: entry.clone(),
                }) as Box<dyn Tool>
            })
            .collect()
    }

    /// The catalog block of deferred mode: one line per tool, sorted.
    pub fn catalog_block(&self) -> Option<SystemBlock> {
        if !self.deferred {
            return None;
        }
        let mut text = format!(
            "MCP tools (call with {CALL}; get a schema first with {DESCRIBE} unless the arguments are obvious):"
        );
        for entry in self.entries.iter() {
            let sentence = naming::first_sentence(&entry.description);
            text.push_str(&format!("\n{}: {sentence}", entry.name));
        }
        Some(SystemBlock {
            name: "mcp catalog".into(),
            text,
            stable: true,
        })
    }

    fn find(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }
}

/// Text that shows the user what an MCP call does: server, tool and the full arguments.
fn preview(entry: &Entry, args: &Value) -> String {
    format!(
        "MCP server `{}` · tool `{}`{}\narguments:\n{}",
        entry.server,
        entry.tool,
        if entry.read_only { " (read-only)" } else { "" },
        serde_json::to_string_pretty(args).unwrap_or_else(|_| args.to_string())
    )
}

fn approval_key(entry: &Entry) -> String {
    format!("mcp server {}", entry.server)
}

async fn call(
    hub: &McpHub,
    entry: &Entry,
    args: &Value,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let arguments = match args {
        Value::Object(map) => map.clone(),
        Value::Null => serde_json::Map::new(),
        other => {
            return Err(ToolError::InvalidArgs(format!(
                "the arguments of {} must be an object (got {other})",
                entry.name
            )));
        }
    };
    let result = hub
        .call(&entry.server, &entry.tool, arguments)
        .await
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let value = serde_json::to_value(&result).unwrap_or(Value::Null);
    let is_error = value
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let text = result_text(&entry.server, &value, ctx)?;
    if is_error {
        return Err(ToolError::Failed(if text.is_empty() {
            format!("{} reported an error without a message", entry.name)
        } else {
            text
        }));
    }
    autosave(text, ctx)
}

/// The text of a result's content: text as it is, binary content saved to the scratch folder
/// and named by path, structured content when nothing else came.
pub fn result_text(server: &str, result: &Value, ctx: &ToolContext) -> Result<String, ToolError> {
    let mut parts = Vec::new();
    let empty = Vec::new();
    let content = result
        .get("content")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    for item in content {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or_default();
        match kind {
            "text" => parts.push(
                item.get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            ),
            "image" | "audio" => {
                let mime = item
                    .get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("application/octet-stream");
                let data = item.get("data").and_then(Value::as_str).unwrap_or_default();
                parts.push(save_binary(server, kind, mime, data, ctx)?);
            }
            "resource" => {
                let resource = item.get("resource").cloned().unwrap_or(Value::Null);
                let uri = resource
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if let Some(text) = resource.get("text").and_then(Value::as_str) {
                    parts.push(format!("[resource {uri}]\n{text}"));
                } else if let Some(blob) = resource.get("blob").and_then(Value::as_str) {
                    let mime = resource
                        .get("mimeType")
                        .and_then(Value::as_str)
                        .unwrap_or("application/octet-stream");
                    parts.push(format!(
                        "[resource {uri}] {}",
                        save_binary(server, "resource", mime, blob, ctx)?
                    ));
                }
            }
            "resource_link" => {
                let uri = item.get("uri").and_then(Value::as_str).unwrap_or_default();
                let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
                parts.push(format!("[resource link: {name} {uri}]"));
            }
            other => parts.push(format!("[{other} content not shown]")),
        }
    }
    if parts.is_empty()
        && let Some(structured) = result.get("structuredContent")
    {
        parts.push(structured.to_string());
    }
    Ok(parts.join("\n"))
}

fn save_binary(
    server: &str,
    kind: &str,
    mime: &str,
    data: &str,
    ctx: &ToolContext,
) -> Result<String, ToolError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| {
            ToolError::Failed(format!("{server} sent {kind} data that is not base64: {e}"))
        })?;
    let ext = match mime {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" => "wav",
        "audio/mpeg" => "mp3",
        "application/pdf" => "pdf",
        _ => "bin",
    };
    let prefix = format!("mcp_{}", naming::sanitize(server));
    let path = ctx
        .scratch
        .save(&prefix, ext, &bytes)
        .map_err(|e| ToolError::Failed(format!("cannot save the {kind} from {server}: {e}")))?;
    Ok(format!(
        "[{kind} {mime}, {} bytes, saved to {}]",
        bytes.len(),
        path.display()
    ))
}

/// Large text goes to a file with a preview, as `web_fetch` does (`CHATCLI_WEBFETCH_AUTOSAVE_BYTES`).
fn autosave(text: String, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    if text.len() <= ctx.web.autosave_bytes {
        return Ok(ToolOutput::text(text));
    }
    let path = ctx
        .scratch
        .save("mcp", "txt", text.as_bytes())
        .map_err(|e| ToolError::Failed(format!("cannot save a large MCP result: {e}")))?;
    let (preview, _) = crate::tools::take_chars(&text, 2000);
    let count = crate::tools::cut::count;
    let cut = crate::tools::cut::Cut::showing(format!(
        "a preview of the first {} characters",
        count(preview.chars().count() as u64)
    ))
    .of(format!("{} bytes", count(text.len() as u64)))
    .saved("the whole result (too large to inline)", &path)
    .read_on("use read_file with start/end for the rest");
    Ok(ToolOutput {
        text: format!(
            "{}\n\n{preview}\n...(auto-truncated — full result saved to disk)",
            cut.line()
        ),
        saved_path: Some(path),
        ..ToolOutput::default()
    })
}

/// One server tool offered under its own name.
struct Direct {
    hub: Arc<McpHub>,
    entry: Entry,
}

impl Tool for Direct {
    fn spec(&self) -> ToolSpec {
        self.entry.spec()
    }

    fn read_only(&self) -> bool {
        self.entry.read_only
    }

    fn approval_key(&self, _args: &Value) -> Option<String> {
        Some(approval_key(&self.entry))
    }

    fn preview(&self, args: &Value, _ctx: &ToolContext) -> Option<String> {
        Some(preview(&self.entry, args))
    }

    fn run<'a>(
        &'a self,
        args: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(call(&self.hub, &self.entry, args, ctx))
    }
}

/// `mcp_describe`: the full schemas of the named tools, as a tool result.
struct Describe {
    set: McpToolSet,
}

impl Tool for Describe {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: DESCRIBE.into(),
            description: "Full input schemas of MCP tools listed in the MCP catalog.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "tools": {"type": "array", "items": {"type": "string"}, "description": "Tool names from the catalog, e.g. mcp__server__tool"}
                },
                "required": ["tools"]
            }),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn run<'a>(
        &'a self,
        args: &'a Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let names: Vec<&str> = args
                .get("tools")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .ok_or_else(|| {
                    ToolError::InvalidArgs("`tools` (an array of tool names) is required".into())
                })?;
            let mut found = Vec::new();
            let mut unknown = Vec::new();
            for name in names {
                match self.set.find(name) {
                    Some(entry) => found.push(json!({
                        "name": entry.name,
                        "description": entry.description,
                        "parameters": entry.schema,
                    })),
                    None => unknown.push(name.to_string()),
                }
            }
            if found.is_empty() {
                return Err(ToolError::InvalidArgs(format!(
                    "no such MCP tool: {}; the MCP catalog lists them",
                    unknown.join(", ")
                )));
            }
            let mut text = serde_json::to_string_pretty(&found).unwrap_or_default();
            if !unknown.is_empty() {
                text.push_str(&format!("\nunknown: {}", unknown.join(", ")));
            }
            Ok(ToolOutput::text(text))
        })
    }
}

/// `mcp_call`: calls one catalog tool.
struct Call {
    set: McpToolSet,
}

impl Call {
    fn target<'a>(&'a self, args: &Value) -> Result<&'a Entry, ToolError> {
        let name = crate::tools::required_str(args, "tool")?;
        self.set.find(name).ok_or_else(|| {
            ToolError::InvalidArgs(format!(
                "no such MCP tool `{name}`; the MCP catalog lists them"
            ))
        })
    }
}

impl Tool for Call {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: CALL.into(),
            description: "Call an MCP tool from the MCP catalog with its arguments.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "tool": {"type": "string", "description": "Tool name from the catalog"},
                    "arguments": {"type": "object", "description": "The tool's arguments, per its schema"}
                },
                "required": ["tool"]
            }),
        }
    }

    fn read_only(&self) -> bool {
        false
    }

    fn read_only_call(&self, args: &Value) -> bool {
        // A call naming no catalog tool runs nothing: its error needs no approval.
        match self.target(args) {
            Ok(entry) => entry.read_only,
            Err(_) => true,
        }
    }

    fn approval_key(&self, args: &Value) -> Option<String> {
        self.target(args).ok().map(approval_key)
    }

    fn preview(&self, args: &Value, _ctx: &ToolContext) -> Option<String> {
        let entry = self.target(args).ok()?;
        Some(preview(
            entry,
            args.get("arguments").unwrap_or(&Value::Null),
        ))
    }

    fn run<'a>(
        &'a self,
        args: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let entry = self.target(args)?;
            let arguments = args.get("arguments").cloned().unwrap_or(Value::Null);
            call(&self.set.hub, entry, &arguments, ctx).await
        })
    }
}
