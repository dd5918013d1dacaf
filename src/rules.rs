//! Permission rules that last: `allow`, `ask` and `deny` lists of `tool(pattern)` entries, read
//! from the settings files (`user_settings`) and added by the approval dialog.
//!
//! A rule names a tool — chatcli's own name (`run_command`, `write_file`…), a Claude Code alias
//! (`Bash`, `Read`, `Edit`, `Write`, `WebFetch`, `WebSearch`, `Grep`, `Glob`), or an MCP tool
//! glob (`mcp__github__*`) — and optionally a pattern in parentheses that the call's main
//! argument must match: a command prefix (`run_command(cargo test:*)`, or the exact command
//! without `:*`), a path glob relative to the workspace (`write_file(src/**)`,
//! `read_file(.env)`), or a domain (`web_fetch(domain:docs.rs)`, subdomains included).
//! Deny beats ask beats allow, whatever the order or the file. The thing a newcomer gets wrong:
//! a command rule matches the command text as written, so an allow rule
//! `run_command(cargo test:*)` does not cover `cargo test && rm -rf ~` — a command with `&&`,
//! `;`, `|` or a newline is allowed only by a rule without a pattern — and it ends at a word
//! (`git:*` does not allow `gitevil`), while a deny or ask prefix covers every command that
//! starts with it (`rm:*` denies `rm -rf` and `rmdir` alike).

use std::path::{Component, Path};

/// What a rule says about a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Allow,
    Ask,
    Deny,
}

impl Verdict {
    /// The word the settings file uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        }
    }
}

/// One rule as written, with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub verdict: Verdict,
    /// As written in the file (`Bash(npm test:*)`).
    pub text: String,
    /// The file it came from, or `session`.
    pub source: String,
    /// The tools it covers (globs over chatcli's tool names).
    tools: Vec<String>,
    pattern: Option<Pattern>,
}

#[derive(Debug, Clone, PartialEq)]
enum Pattern {
    /// `cmd:*`: the command starts with `cmd` (at a word boundary).
    Prefix(String),
    /// The command (or path) exactly.
    Exact(String),
    /// A path glob relative to the workspace.
    Glob(String),
    /// `domain:host`: the URL's host is `host` or a subdomain of it.
    Domain(String),
}

/// A rule that cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RuleError {
    #[error("permission rule {0:?} has an unclosed `(`: write `tool(pattern)`")]
    Unclosed(String),
    #[error(
        "permission rule {0:?} names no tool: write `run_command(cargo test:*)` or `Edit(src/**)`"
    )]
    NoTool(String),
    #[error("permission rule {rule:?}: {why}")]
    BadPattern { rule: String, why: String },
}

/// Claude Code's tool names, and the chatcli tools each covers.
const ALIASES: &[(&str, &[&str])] = &[
    ("Bash", &["run_command"]),
    ("Read", &["read_file"]),
    ("Edit", &["write_file", "patch_file"]),
    ("MultiEdit", &["patch_file"]),
    ("Write", &["write_file"]),
    ("WebFetch", &["web_fetch"]),
    ("WebSearch", &["web_search"]),
    ("Grep", &["search_files"]),
    ("Glob", &["list_directory"]),
    ("LS", &["list_directory"]),
];

/// The argument a tool's pattern is matched against.
fn subject_key(tool: &str) -> Option<&'static str> {
    match tool {
        "run_command" => Some("cmd"),
        "read_file" | "write_file" | "patch_file" => Some("file"),
        "list_directory" | "search_files" => Some("dir"),
        "web_fetch" => Some("url"),
        "web_search" => Some("query"),
        _ => None,
    }
}

impl Rule {
    /// Reads `text` (`Tool` or `Tool(pattern)`) as a `verdict` rule from `source`.
    pub fn parse(text: &str, verdict: Verdict, source: &str) -> Result<Rule, RuleError> {
        let written = text.trim();
        let (name, pattern) = match written.split_once('(') {
            Some((name, rest)) => {
                let Some(inner) = rest.strip_suffix(')') else {
                    return Err(RuleError::Unclosed(written.into()));
                };
                (name.trim(), Some(inner.trim()))
            }
            None => (written, None),
        };
        if name.is_empty() {
            return Err(RuleError::NoTool(written.into()));
        }
        let tools: Vec<String> = match ALIASES.iter().find(|(alias, _)| *alias == name) {
            Some((_, tools)) => tools.iter().map(|t| t.to_string()).collect(),
            None => vec![name.to_string()],
        };
        let pattern = match pattern {
            None | Some("") | Some("*") | Some("**") => None,
            Some(p) => Some(read_pattern(written, p, &tools)?),
        };
        Ok(Rule {
            verdict,
            text: written.into(),
            source: source.into(),
            tools,
            pattern,
        })
    }

    /// Whether the rule covers a call of `tool` with `args`, in `workspace`.
    pub fn covers(&self, tool: &str, args: &serde_json::Value, workspace: &Path) -> bool {
        if !self.tools.iter().any(|t| name_matches(t, tool)) {
            return false;
        }
        let Some(pattern) = &self.pattern else {
            return true;
        };
        let subject = subject_key(tool)
            .and_then(|key| args.get(key))
            .and_then(|v| v.as_str())
            .unwrap_or(".");
        match pattern {
            // An allow rule ends at a word (`git:*` must not allow `gitevil`) and never covers a
            // chained command; a deny or ask rule covers any command that starts so.
            Pattern::Prefix(prefix) if self.verdict == Verdict::Allow => {
                !compound(subject)
                    && subject.strip_prefix(prefix.as_str()).is_some_and(|rest| {
                        rest.is_empty() || rest.starts_with(char::is_whitespace)
                    })
            }
            Pattern::Prefix(prefix) => {
                segments(subject).any(|part| part.starts_with(prefix.as_str()))
            }
            Pattern::Exact(exact) if tool == "run_command" => subject.trim() == exact,
            Pattern::Exact(exact) => relative(subject, workspace).is_some_and(|p| p == *exact),
            Pattern::Glob(glob) => {
                relative(subject, workspace).is_some_and(|p| glob_match(glob, &p))
            }
            Pattern::Domain(domain) => url::Url::parse(subject)
                .ok()
                .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
                .is_some_and(|host| host == *domain || host.ends_with(&format!(".{domain}"))),
        }
    }
}

fn read_pattern(rule: &str, pattern: &str, tools: &[String]) -> Result<Pattern, RuleError> {
    let bad = |why: String| RuleError::BadPattern {
        rule: rule.into(),
        why,
    };
    if let Some(domain) = pattern.strip_prefix("domain:") {
        let domain = domain.trim().to_ascii_lowercase();
        if domain.is_empty() {
            return Err(bad("`domain:` needs a host, like `domain:docs.rs`".into()));
        }
        return Ok(Pattern::Domain(domain));
    }
    let is_command = tools.iter().any(|t| t == "run_command");
    if is_command {
        return Ok(match pattern.strip_suffix(":*") {
            Some(prefix) => Pattern::Prefix(prefix.trim_end().to_string()),
            None => Pattern::Exact(pattern.to_string()),
        });
    }
    // Claude Code writes workspace paths as `./src/**` or `/src/**` (project-relative).
    let path = pattern
        .trim_start_matches("./")
        .trim_start_matches('/')
        .to_string();
    if path.contains(['*', '?', '[']) {
        globset::Glob::new(&path).map_err(|e| bad(format!("not a glob: {e}")))?;
        Ok(Pattern::Glob(path))
    } else {
        Ok(Pattern::Exact(path.trim_end_matches('/').to_string()))
    }
}

/// A command that chains others: only a rule without a pattern may cover it.
fn compound(command: &str) -> bool {
    command.contains("&&")
        || command.contains("||")
        || command.contains([';', '|', '\n', '`', '>', '<'])
        || command.contains("$(")
}

/// The commands a chained command runs (`a && b; c | d`), each trimmed: a deny rule looks at
/// every one, so `ls && rm -rf ~` is denied by `rm:*`.
fn segments(command: &str) -> impl Iterator<Item = &str> {
    command
        .split(['\n', ';', '|', '&', '`', '(', ')'])
        .map(|part| part.trim().trim_start_matches("$").trim_start())
        .filter(|part| !part.is_empty())
}

/// A tool-name glob (`mcp__github__*`) against a tool name.
fn name_matches(glob: &str, name: &str) -> bool {
    match glob.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => glob == name,
    }
}

/// `path` relative to the workspace, `/`-separated and normalised; `None` when it leaves it.
fn relative(path: &str, workspace: &Path) -> Option<String> {
    let path = Path::new(path);
    let path = path.strip_prefix(workspace).unwrap_or(path);
    let mut parts: Vec<String> = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    })
}

fn glob_match(glob: &str, path: &str) -> bool {
    globset::GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher().is_match(path))
        .unwrap_or(false)
}

/// Every rule in force, from every file and the session.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    rules: Vec<Rule>,
}

impl RuleSet {
    /// Adds `rule`.
    pub fn push(&mut self, rule: Rule) {
        self.rules.push(rule);
    }

    /// Every rule, in the order added.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The strongest verdict of the rules covering the call (deny, then ask, then allow), with
    /// the rule that gave it.
    pub fn verdict(&self, tool: &str, args: &serde_json::Value, workspace: &Path) -> Option<&Rule> {
        self.rules
            .iter()
            .filter(|r| r.covers(tool, args, workspace))
            .max_by_key(|r| r.verdict)
    }

    /// The rule that "allow always" for this call would save: the command's first word(s) as
    /// a prefix, the file itself, the URL's domain, or the tool as a whole.
    pub fn suggest(tool: &str, args: &serde_json::Value) -> String {
        let subject = subject_key(tool)
            .and_then(|key| args.get(key))
            .and_then(|v| v.as_str());
        match (tool, subject) {
            ("run_command", Some(cmd)) if !compound(cmd) => {
                let words: Vec<&str> = cmd.split_whitespace().take(2).collect();
                format!("run_command({}:*)", words.join(" "))
            }
            ("web_fetch", Some(url)) => match url::Url::parse(url)
                .ok()
                .and_then(|u| u.host_str().map(str::to_string))
            {
                Some(host) => format!("web_fetch(domain:{host})"),
                None => tool.to_string(),
            },
            ("write_file" | "patch_file", Some(file)) => format!("{tool}({file})"),
            _ => tool.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(text: &str, verdict: Verdict) -> Rule {
        Rule::parse(text, verdict, "test").expect("a rule")
    }

    /// Rule, tool, arguments, whether the rule covers the call.
    fn cases() -> Vec<(&'static str, &'static str, serde_json::Value, bool)> {
        vec![
            (
                "run_command(cargo test:*)",
                "run_command",
                json!({"cmd": "cargo test --lib"}),
                true,
            ),
            (
                "run_command(cargo test:*)",
                "run_command",
                json!({"cmd": "cargo testx"}),
                false,
            ),
            (
                "Bash(npm test:*)",
                "run_command",
                json!({"cmd": "npm test"}),
                true,
            ),
            (
                "Bash(npm test:*)",
                "run_command",
                json!({"cmd": "npm test && rm -rf ~"}),
                false,
            ),
            (
                "Bash(git status)",
                "run_command",
                json!({"cmd": "git status"}),
                true,
            ),
            ("Bash", "run_command", json!({"cmd": "a; b"}), true),
        ]
    }

    /// The same, for paths, domains and MCP names.
    fn more_cases() -> Vec<(&'static str, &'static str, serde_json::Value, bool)> {
        vec![
            (
                "write_file(src/**)",
                "write_file",
                json!({"file": "src/a/b.rs"}),
                true,
            ),
            (
                "Edit(src/**)",
                "patch_file",
                json!({"file": "./src/x.rs"}),
                true,
            ),
            (
                "Edit(src/**)",
                "write_file",
                json!({"file": "src/../Cargo.toml"}),
                false,
            ),
            (
                "Edit(src/**)",
                "write_file",
                json!({"file": "/w/src/lib.rs"}),
                true,
            ),
            ("Read(.env)", "read_file", json!({"file": ".env"}), true),
            ("Read(.env)", "read_file", json!({"file": "a/.env"}), false),
            (
                "Read(**/.env)",
                "read_file",
                json!({"file": "a/.env"}),
                true,
            ),
            (
                "web_fetch(domain:docs.rs)",
                "web_fetch",
                json!({"url": "https://docs.rs/x"}),
                true,
            ),
            (
                "WebFetch(domain:docs.rs)",
                "web_fetch",
                json!({"url": "https://api.docs.rs/"}),
                true,
            ),
            (
                "WebFetch(domain:docs.rs)",
                "web_fetch",
                json!({"url": "https://evildocs.rs/"}),
                false,
            ),
            (
                "mcp__github__*",
                "mcp__github__create_issue",
                json!({}),
                true,
            ),
            ("mcp__github__*", "mcp__gitlab__x", json!({}), false),
        ]
    }

    #[test]
    fn patterns_match_what_the_peers_users_write() {
        let ws = Path::new("/w");
        for (text, tool, args, expected) in cases().iter().chain(&more_cases()) {
            assert_eq!(
                rule(text, Verdict::Allow).covers(tool, args, ws),
                *expected,
                "{text} vs {tool} {args}"
            );
        }
    }

    #[test]
    fn deny_beats_ask_beats_allow_whatever_the_order() {
        let mut set = RuleSet::default();
        set.push(rule("Bash", Verdict::Allow));
        set.push(rule("run_command(rm:*)", Verdict::Deny));
        set.push(rule("run_command(git push:*)", Verdict::Ask));
        let ws = Path::new("/w");
        let verdict = |cmd: &str| {
            set.verdict("run_command", &json!({"cmd": cmd}), ws)
                .map(|r| r.verdict)
        };
        assert_eq!(verdict("rm -rf target"), Some(Verdict::Deny));
        assert_eq!(
            verdict("ls && rm -rf ~"),
            Some(Verdict::Deny),
            "every chained command is looked at"
        );
        assert_eq!(verdict("echo $(rm x)"), Some(Verdict::Deny));
        assert_eq!(verdict("git push origin main"), Some(Verdict::Ask));
        assert_eq!(verdict("ls"), Some(Verdict::Allow));
        assert_eq!(set.verdict("write_file", &json!({"file": "a"}), ws), None);
    }

    #[test]
    fn a_bad_rule_says_what_is_wrong() {
        assert_eq!(
            Rule::parse("Bash(npm", Verdict::Allow, "f")
                .unwrap_err()
                .to_string(),
            "permission rule \"Bash(npm\" has an unclosed `(`: write `tool(pattern)`"
        );
        assert!(Rule::parse("Edit(src/[)", Verdict::Allow, "f").is_err());
        assert!(Rule::parse("WebFetch(domain:)", Verdict::Allow, "f").is_err());
    }

    #[test]
    fn allow_always_suggests_a_narrow_rule() {
        assert_eq!(
            RuleSet::suggest("run_command", &json!({"cmd": "cargo test --lib"})),
            "run_command(cargo test:*)"
        );
        assert_eq!(
            RuleSet::suggest("run_command", &json!({"cmd": "a && b"})),
            "run_command"
        );
        assert_eq!(
            RuleSet::suggest("web_fetch", &json!({"url": "https://docs.rs/a"})),
            "web_fetch(domain:docs.rs)"
        );
        assert_eq!(
            RuleSet::suggest("write_file", &json!({"file": "src/a.rs"})),
            "write_file(src/a.rs)"
        );
    }
}
