//! `chatcli memory …`: the store from the command line, as the `memory` tool sees it.

use std::io::{BufRead, Write};
use std::path::Path;

use serde::Deserialize;

use super::{Added, MemoryError, NewFact, Store, digest};

/// What `chatcli memory` was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Add {
        text: String,
        category: Option<String>,
        tags: Vec<String>,
        /// The project of the working directory: a `project` fact records it in the profile.
        project: Option<String>,
    },
    List,
    Forget {
        id: String,
    },
    Import {
        file: String,
    },
    Index,
}

#[derive(Deserialize)]
struct ImportLine {
    content: String,
    #[serde(default)]
    category: String,
    #[serde(default)]
    tags: Vec<String>,
}

/// Runs `action` on the store in `dir`, printing to `out`; `secrets` are masked in what is stored.
pub fn run(
    dir: &Path,
    action: Action,
    secrets: crate::secrets::Secrets,
    out: &mut dyn Write,
) -> Result<(), MemoryError> {
    let mut store = Store::open(dir)?.with_secrets(secrets);
    match action {
        Action::Add {
            text,
            category,
            tags,
            project,
        } => {
            let category = category.unwrap_or_default();
            let is_project = category.is_empty() || category.eq_ignore_ascii_case("project");
            let added = store.add(NewFact {
                content: text,
                category,
                tags,
                source: "user".into(),
            })?;
            if is_project && let Some(name) = project {
                store.note_project(&name)?;
            }
            match added {
                Added::New(id) => writeln!(out, "remembered {id}"),
                Added::Reinforced(id) => writeln!(out, "already known: reinforced {id}"),
            }
            .map_err(write_err)?;
        }
        Action::List => list(&store, out)?,
        Action::Forget { id } => {
            let gone = store.forget(&id)?;
            writeln!(out, "forgot {}: {}", gone.id, gone.content).map_err(write_err)?;
        }
        Action::Import { file } => {
            let (added, reinforced) = store.add_all(read_import(&file)?)?;
            writeln!(
                out,
                "imported {added} facts ({reinforced} near-duplicates reinforced)"
            )
            .map_err(write_err)?;
        }
        Action::Index => {
            let text = digest::index_digest(&store);
            if text.is_empty() {
                writeln!(out, "(empty: no facts or profile yet)").map_err(write_err)?;
            } else {
                writeln!(out, "{text}").map_err(write_err)?;
            }
        }
    }
    Ok(())
}

/// A failed write to the output, as a store error naming stdout.
fn write_err(e: std::io::Error) -> MemoryError {
    MemoryError::Io {
        path: "stdout".into(),
        source: e,
    }
}

/// `list`: one line per fact, its short id, category, content and tags.
fn list(store: &Store, out: &mut dyn Write) -> Result<(), MemoryError> {
    if store.facts.is_empty() {
        writeln!(out, "no facts stored in {}", store.dir().display()).map_err(write_err)?;
    }
    for fact in &store.facts {
        let tags = if fact.tags.is_empty() {
            String::new()
        } else {
            format!(" [{}]", fact.tags.join(", "))
        };
        writeln!(
            out,
            "{}  {:<12} {}{tags}",
            fact.id.chars().take(12).collect::<String>(),
            fact.category,
            fact.content
        )
        .map_err(write_err)?;
    }
    Ok(())
}

/// The facts of an `import` file: one JSON object a line, blank lines skipped; a line that does
/// not parse is an error naming it.
fn read_import(file: &str) -> Result<Vec<NewFact>, MemoryError> {
    let path = Path::new(file);
    let handle = crate::files::open_following(path).map_err(|source| MemoryError::Io {
        path: file.to_string(),
        source,
    })?;
    let mut news = Vec::new();
    for (n, line) in std::io::BufReader::new(handle).lines().enumerate() {
        let line = line.map_err(|source| MemoryError::Io {
            path: file.to_string(),
            source,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let parsed: ImportLine = serde_json::from_str(&line).map_err(|e| {
            MemoryError::Invalid(format!(
                "{file} line {}: {e} (expected {{\"content\": …, \"category\": …, \"tags\": […]}})",
                n + 1
            ))
        })?;
        news.push(NewFact {
            content: parsed.content,
            category: parsed.category,
            tags: parsed.tags,
            source: "import".into(),
        });
    }
    Ok(news)
}
