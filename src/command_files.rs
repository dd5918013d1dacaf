//! Custom slash commands from Markdown files: `CHATCLI_HOME/commands/*.md` (the user's),
//! `.claude/commands/*.md` and `.chatcli/commands/*.md` (the project's; `.chatcli` wins over
//! `.claude`, and the project over the user). A file `review.md` is `/review`; one in a
//! subfolder `git/commit.md` is `/git:commit`, as Claude Code names them.
//!
//! The file's optional front matter gives `description`, `argument-hint` and `model`; its body
//! is the prompt, with `$ARGUMENTS` replaced by everything typed after the name and `$1`…`$9` by
//! the words (quotes group words). `@path` in the body is a mention like any typed one. A
//! ``!`command` `` in the body would run a shell command and put its output in the prompt: the
//! agent runs each through `run_command`, so it is asked for (and refused headless without
//! `--yes` or an allow rule) like any call. What a newcomer gets wrong: a command must never
//! shadow a built-in (`/help`, `/cost`…): the front end checks built-ins first.

use std::path::{Path, PathBuf};

/// Command files are prompts; anything bigger is not one.
const MAX_FILE_BYTES: u64 = 256 * 1024;
/// Folders deeper than this under a commands folder are not read.
const MAX_DEPTH: usize = 3;

/// One custom command.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandFile {
    /// Typed after the `/`.
    pub name: String,
    pub description: String,
    pub argument_hint: String,
    /// The model the file asks for (`model:`), if any.
    pub model: Option<String>,
    pub body: String,
    pub path: PathBuf,
}

/// A command with its arguments filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Expanded {
    /// The prompt, with a `{{shell:N}}` marker where the N-th shell command's output goes.
    pub text: String,
    /// The ``!`…` `` commands, in order.
    pub shell: Vec<String>,
}

/// Every command file, later folders overriding earlier ones by name, and a line per file that
/// could not be read.
pub fn load(home: &Path, project_root: &Path) -> (Vec<CommandFile>, Vec<String>) {
    let folders = [
        home.join("commands"),
        project_root.join(".claude").join("commands"),
        project_root.join(".chatcli").join("commands"),
    ];
    let mut commands: Vec<CommandFile> = Vec::new();
    let mut problems = Vec::new();
    for folder in folders {
        let mut found = Vec::new();
        walk(&folder, &folder, 0, &mut found, &mut problems);
        for command in found {
            commands.retain(|c| c.name != command.name);
            commands.push(command);
        }
    }
    commands.sort_by(|a, b| a.name.cmp(&b.name));
    (commands, problems)
}

fn walk(
    root: &Path,
    dir: &Path,
    depth: usize,
    found: &mut Vec<CommandFile>,
    problems: &mut Vec<String>,
) {
    let Ok(entries) = crate::files::list_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.path();
        // Links are not followed: a command folder is the project's own files.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() && depth < MAX_DEPTH {
            walk(root, &path, depth + 1, found, problems);
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "md") {
            match read(root, &path) {
                Ok(command) => found.push(command),
                Err(why) => problems.push(format!("{}: {why}", path.display())),
            }
        }
    }
}

/// Why a command file was not loaded (said once at start, after its path).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CommandFileError {
    #[error("the file name is not a command name (letters, digits, `-`, `_`, `.` only)")]
    Name,
    #[error("cannot be read: {0}")]
    Read(String),
    #[error(transparent)]
    FrontMatter(#[from] crate::skills::SkillError),
}

fn read(root: &Path, path: &Path) -> Result<CommandFile, CommandFileError> {
    let name = command_name(root, path).ok_or(CommandFileError::Name)?;
    let read = |e: std::io::Error| CommandFileError::Read(e.to_string());
    let bytes = crate::files::read_bounded(path, MAX_FILE_BYTES).map_err(read)?;
    let text = bytes.into_text().map_err(read)?;
    let (front, body) = crate::skills::frontmatter::parse_optional(&text)?;
    let description = match front.description.as_str() {
        "" => body
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .trim()
            .trim_start_matches('#')
            .trim()
            .chars()
            .take(80)
            .collect(),
        d => d.to_string(),
    };
    Ok(CommandFile {
        name,
        description,
        argument_hint: front.argument_hint.unwrap_or_default(),
        model: front.model,
        body,
        path: path.to_path_buf(),
    })
}

/// `git/commit.md` under the folder → `git:commit`; `None` for names with spaces or nothing.
fn command_name(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?.with_extension("");
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let name = parts.join(":");
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'));
    ok.then_some(name)
}

/// `text` as a command call: the command it names and the rest (the arguments), when it is
/// `/NAME` or `/NAME ARGS` for one of `commands`.
pub fn find<'a>(commands: &'a [CommandFile], text: &str) -> Option<(&'a CommandFile, String)> {
    let rest = text.trim_start().strip_prefix('/')?;
    let (name, args) = match rest.split_once(char::is_whitespace) {
        Some((name, args)) => (name, args.trim()),
        None => (rest.trim_end(), ""),
    };
    let command = commands.iter().find(|c| c.name == name)?;
    Some((command, args.to_string()))
}

impl CommandFile {
    /// The body with `args` filled in.
    pub fn expand(&self, args: &str) -> Expanded {
        let words = split_words(args);
        let mut text = String::with_capacity(self.body.len() + args.len());
        let mut rest = self.body.as_str();
        while let Some(at) = rest.find('$') {
            text.push_str(rest.get(..at).unwrap_or_default());
            let after = rest.get(at + 1..).unwrap_or_default();
            if let Some(tail) = after.strip_prefix("ARGUMENTS") {
                text.push_str(args);
                rest = tail;
            } else if let Some(digit) = after.chars().next().filter(|c| ('1'..='9').contains(c)) {
                let index = digit as usize - '1' as usize;
                text.push_str(words.get(index).map(String::as_str).unwrap_or_default());
                rest = after.get(1..).unwrap_or_default();
            } else {
                text.push('$');
                rest = after;
            }
        }
        text.push_str(rest);
        let (text, shell) = take_shell(&text);
        Expanded { text, shell }
    }
}

/// Replaces each ``!`cmd` `` by a `{{shell:N}}` marker; the commands in order.
fn take_shell(text: &str) -> (String, Vec<String>) {
    let mut out = String::with_capacity(text.len());
    let mut shell = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("!`") {
        let after = rest.get(at + 2..).unwrap_or_default();
        let Some(end) = after.find('`') else { break };
        out.push_str(rest.get(..at).unwrap_or_default());
        let command = after.get(..end).unwrap_or_default().trim();
        if command.is_empty() {
            out.push_str("!``");
        } else {
            out.push_str(&format!("{{{{shell:{}}}}}", shell.len()));
            shell.push(command.to_string());
        }
        rest = after.get(end + 1..).unwrap_or_default();
    }
    out.push_str(rest);
    (out, shell)
}

/// Words of `args`, double or single quotes grouping.
fn split_words(args: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in args.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started || !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            (None, c) => current.push(c),
        }
    }
    if started || !current.is_empty() {
        words.push(current);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(body: &str) -> CommandFile {
        CommandFile {
            name: "review".into(),
            description: String::new(),
            argument_hint: String::new(),
            model: None,
            body: body.into(),
            path: PathBuf::new(),
        }
    }

    #[test]
    fn arguments_fill_in_and_shell_lines_are_taken_out() {
        let c =
            command("Review $1 for $2; all: $ARGUMENTS. Cost: $5\nStatus: !`git status --short`");
        let e = c.expand(r#"src/a.rs "error handling""#);
        assert_eq!(
            e.text,
            "Review src/a.rs for error handling; all: src/a.rs \"error handling\". Cost: $5\nStatus: {{shell:0}}"
                .replace("$5", "")
        );
        assert_eq!(e.shell, ["git status --short"]);
    }

    #[test]
    fn project_folders_win_and_subfolders_are_namespaces() {
        let home = tempfile::tempdir().expect("home");
        let root = tempfile::tempdir().expect("root");
        let write = |path: PathBuf, text: &str| {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
            std::fs::write(path, text).expect("write");
        };
        write(home.path().join("commands/review.md"), "user review");
        write(
            root.path().join(".claude/commands/review.md"),
            "claude review",
        );
        write(
            root.path().join(".chatcli/commands/review.md"),
            "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $ARGUMENTS",
        );
        write(
            root.path().join(".claude/commands/git/commit.md"),
            "# Commit the staged changes\nWrite a message",
        );
        let (commands, problems) = load(home.path(), root.path());
        assert!(problems.is_empty(), "{problems:?}");
        let names: Vec<_> = commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["git:commit", "review"]);
        assert_eq!(commands[1].body, "Review $ARGUMENTS");
        assert_eq!(commands[1].argument_hint, "FILE");
        assert_eq!(commands[0].description, "Commit the staged changes");
        let (found, args) = find(&commands, "/review src/a.rs").expect("found");
        assert_eq!((found.name.as_str(), args.as_str()), ("review", "src/a.rs"));
        assert!(find(&commands, "/reviewer x").is_none());
    }
}
