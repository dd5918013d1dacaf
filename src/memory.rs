//! Long-term memory: facts kept across sessions under `CHATCLI_HOME/memory/`, pulled on demand.
//!
//! Files: `facts.jsonl` (one fact a line), `profile.json` (who the user is, projects),
//! `MEMORY.md` regenerated from the facts (grouped by category, capped at 32 KB), and
//! `access.jsonl`, the append-only record of explicit recalls. Every write takes a lock file,
//! re-reads what is on disk, applies the change to that, and replaces the file atomically (temp
//! file, fsync, rename), so two chatcli processes writing at once lose nothing and a crash
//! mid-write leaves the previous store whole. A recall never rewrites the store: it appends one
//! line to `access.jsonl`, which opening the store folds into the facts' access statistics and
//! which the next write (or a recall finding it over 256 KB) compacts into `facts.jsonl`.
//! Writes may wait up to 10 s for the lock: from async code, run them with `spawn_blocking`. Pull-first: the system prompt
//! carries only a small digest frozen for the session (`digest`); details come through the
//! `memory` tool's recall, or as a small auto-recall block in the newest user turn.

// The store is files a user may edit by hand: no index that could panic on them (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

pub mod cli;
pub mod digest;
pub mod embedder;
pub mod embedding;
pub mod keywords;
pub mod profile;
pub mod recall;

use crate::files::File;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::clock::now_secs;
use crate::private_fs::create_private_dir;

/// What the prompt carries of memory (`CHATCLI_MEMORY_MODE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemoryMode {
    /// A small digest in the cached system prompt; details by recall.
    #[default]
    Index,
    /// Retrieval for the current query, every turn, in the newest user turn.
    Full,
    /// Nothing.
    Off,
}

impl MemoryMode {
    /// Parses the variable's value.
    pub fn parse(value: &str) -> Option<MemoryMode> {
        match value.trim().to_ascii_lowercase().as_str() {
            "index" => Some(MemoryMode::Index),
            "full" => Some(MemoryMode::Full),
            "off" | "0" | "false" | "no" => Some(MemoryMode::Off),
            _ => None,
        }
    }

    /// The mode's name.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryMode::Index => "index",
            MemoryMode::Full => "full",
            MemoryMode::Off => "off",
        }
    }
}

/// How a session uses memory.
#[derive(Debug, Clone, PartialEq)]
pub struct MemorySettings {
    pub dir: PathBuf,
    pub mode: MemoryMode,
    /// Characters the `full` block may take (`CHATCLI_MEMORY_RETRIEVAL_BUDGET`).
    pub retrieval_budget: usize,
    /// Auto-recall in index mode (`CHATCLI_MEMORY_AUTORECALL`).
    pub autorecall: bool,
    /// HyDE for explicit recall (`CHATCLI_MEMORY_HYDE`).
    pub hyde: bool,
    /// The embedding endpoint of explicit recall (`CHATCLI_MEMORY_EMBEDDINGS`).
    pub embedder: embedder::Embedder,
}

/// The categories a fact can have.
pub const CATEGORIES: [&str; 6] = [
    "architecture",
    "pattern",
    "preference",
    "gotcha",
    "project",
    "personal",
];
/// Near-duplicates (keyword Jaccard at least this) reinforce the fact they repeat.
pub const DUPLICATE_SIMILARITY: f64 = 0.85;
const MEMORY_MD_CAP: usize = 32 * 1024;
const LOCK_WAIT: Duration = Duration::from_secs(10);
/// The append-only record of explicit recalls.
const ACCESS_LOG: &str = "access.jsonl";
/// Past this size a recall folds the access record into `facts.jsonl`.
const ACCESS_COMPACT_BYTES: u64 = 256 * 1024;

/// Why a memory operation failed.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("memory store {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "unknown category \"{0}\" (expected one of: architecture, pattern, preference, gotcha, project, personal)"
    )]
    Category(String),
    #[error("no fact with id {0} (see `chatcli memory list`)")]
    NoSuchFact(String),
    #[error("{0}")]
    Invalid(String),
    #[error("the memory store is locked by another chatcli (remove {0} if no other chatcli runs)")]
    Locked(String),
    /// The embedding endpoint could not be reached or read.
    #[error("{0}")]
    EmbedTransport(String),
    /// The embedding endpoint answered with an error status.
    #[error("HTTP {status}: {message}")]
    EmbedHttp { status: u16, message: String },
    /// The embedding endpoint's answer is not JSON.
    #[error("not JSON: {0}")]
    EmbedNotJson(String),
    /// The embedding endpoint returned another number of vectors than asked for.
    #[error("asked for {asked} embeddings, got {got}")]
    EmbedCount { asked: usize, got: usize },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> MemoryError + '_ {
    move |source| MemoryError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// One remembered fact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fact {
    pub id: String,
    pub content: String,
    pub category: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub created: u64,
    #[serde(default)]
    pub last_accessed: u64,
    #[serde(default)]
    pub access_count: u32,
    #[serde(default = "default_confidence")]
    pub confidence: f32,
    #[serde(default)]
    pub source: String,
}

fn default_confidence() -> f32 {
    0.7
}

/// A project the user works on.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Project {
    pub name: String,
    #[serde(default)]
    pub last_active: u64,
}

/// Who the user is.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Profile {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub role: String,
    #[serde(default)]
    pub expertise: Vec<String>,
    #[serde(default)]
    pub company: String,
    #[serde(default)]
    pub projects: Vec<Project>,
}

/// The fact id: the first 12 bytes of SHA-256 of the trimmed, lowercased content, in hex.
pub fn fact_id(content: &str) -> String {
    let digest = Sha256::digest(content.trim().to_lowercase().as_bytes());
    digest.iter().take(12).map(|b| format!("{b:02x}")).collect()
}

/// A new fact's fields.
#[derive(Debug, Clone, Default)]
pub struct NewFact {
    pub content: String,
    pub category: String,
    pub tags: Vec<String>,
    pub source: String,
}

/// What `add` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    /// A new fact with this id.
    New(String),
    /// A near-duplicate of this fact, which was reinforced instead.
    Reinforced(String),
}

/// The memory directory and what it holds.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
    pub facts: Vec<Fact>,
    pub profile: Profile,
    /// Values masked in every fact before it is written.
    secrets: crate::secrets::Secrets,
}

impl Store {
    /// Opens the store in `dir` (missing files mean an empty store).
    pub fn open(dir: &Path) -> Result<Store, MemoryError> {
        let mut facts = read_facts(&dir.join("facts.jsonl"))?;
        fold_accesses(&mut facts, &read_accesses(&dir.join(ACCESS_LOG)));
        let profile =
            match crate::files::read_bounded(&dir.join("profile.json"), MAX_SMALL_FILE_BYTES) {
                Ok(read) => serde_json::from_slice(&read.bytes).unwrap_or_default(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Profile::default(),
                Err(e) => return Err(io(&dir.join("profile.json"))(e)),
            };
        Ok(Store {
            dir: dir.to_path_buf(),
            facts,
            profile,
            secrets: Default::default(),
        })
    }

    /// The store, masking these secrets in every fact it writes (`facts.jsonl`, `MEMORY.md`).
    pub fn with_secrets(mut self, secrets: crate::secrets::Secrets) -> Store {
        self.secrets = secrets;
        self
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Adds a fact, or reinforces its near-duplicate; merged with what is on disk, under the lock.
    pub fn add(&mut self, new: NewFact) -> Result<Added, MemoryError> {
        let content = new.content.trim().to_string();
        if content.is_empty() {
            return Err(MemoryError::Invalid("a fact needs some text".into()));
        }
        let category = if new.category.is_empty() {
            "project".to_string()
        } else {
            new.category.to_lowercase()
        };
        if !CATEGORIES.contains(&category.as_str()) {
            return Err(MemoryError::Category(category));
        }
        self.mutate(|facts| {
            let mut dups = DupIndex::build(facts);
            Ok(insert(
                facts, &mut dups, content, category, new.tags, new.source,
            ))
        })
    }

    /// Adds many facts in one locked write (import).
    pub fn add_all(&mut self, news: Vec<NewFact>) -> Result<(usize, usize), MemoryError> {
        for new in &news {
            let category = new.category.to_lowercase();
            if !category.is_empty() && !CATEGORIES.contains(&category.as_str()) {
                return Err(MemoryError::Category(new.category.clone()));
            }
        }
        self.mutate(|facts| {
            let mut dups = DupIndex::build(facts);
            let (mut added, mut reinforced) = (0, 0);
            for new in news {
                let content = new.content.trim().to_string();
                if content.is_empty() {
                    continue;
                }
                let category = if new.category.is_empty() {
                    "project".into()
                } else {
                    new.category.to_lowercase()
                };
                match insert(facts, &mut dups, content, category, new.tags, new.source) {
                    Added::New(_) => added += 1,
                    Added::Reinforced(_) => reinforced += 1,
                }
            }
            Ok((added, reinforced))
        })
    }

    /// Removes a fact by id (or unique id prefix).
    pub fn forget(&mut self, id: &str) -> Result<Fact, MemoryError> {
        let id = id.trim().to_lowercase();
        self.mutate(|facts| {
            let matching: Vec<usize> = facts
                .iter()
                .enumerate()
                .filter(|(_, f)| !id.is_empty() && f.id.starts_with(&id))
                .map(|(i, _)| i)
                .collect();
            match matching.as_slice() {
                [one] => Ok(facts.remove(*one)),
                [] => Err(MemoryError::NoSuchFact(id.clone())),
                _ => Err(MemoryError::Invalid(format!(
                    "id prefix {id} matches {} facts: give more of it",
                    matching.len()
                ))),
            }
        })
    }

    /// Counts an explicit recall of `ids` in memory only (`record_access` also records it).
    pub fn count_access(&mut self, ids: &[String]) {
        let access = Access {
            at: now_secs(),
            ids: ids.to_vec(),
        };
        fold_accesses(&mut self.facts, std::slice::from_ref(&access));
    }

    /// Counts an explicit recall of `ids`: in memory, and as one line appended to
    /// `access.jsonl`; `facts.jsonl` and `MEMORY.md` stay as they are, unless the record has
    /// grown past 256 KB, when it is folded into `facts.jsonl` (under the lock).
    pub fn record_access(&mut self, ids: &[String]) -> Result<(), MemoryError> {
        if ids.is_empty() {
            return Ok(());
        }
        let access = Access {
            at: now_secs(),
            ids: ids.to_vec(),
        };
        fold_accesses(&mut self.facts, std::slice::from_ref(&access));
        create_private_dir(&self.dir).map_err(io(&self.dir))?;
        let path = self.dir.join(ACCESS_LOG);
        let mut line = serde_json::to_vec(&access).map_err(|e| io(&path)(e.into()))?;
        line.push(b'\n');
        let mut file = open_access_record(&path).map_err(io(&path))?;
        // One write of one short line: appends from several processes do not interleave.
        file.write_all(&line).map_err(io(&path))?;
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        if size > ACCESS_COMPACT_BYTES {
            self.mutate(|_| Ok(()))?;
        }
        Ok(())
    }

    /// Runs `change` on the facts as they are on disk now, under the lock, and saves the result.
    fn mutate<T>(
        &mut self,
        change: impl FnOnce(&mut Vec<Fact>) -> Result<T, MemoryError>,
    ) -> Result<T, MemoryError> {
        create_private_dir(&self.dir).map_err(io(&self.dir))?;
        let _lock = Lock::acquire(&self.dir)?;
        let mut facts = read_facts(&self.dir.join("facts.jsonl"))?;
        let out = change(&mut facts)?;
        // The access record is folded into what is written, then removed (compacted). Renamed
        // first, so a recall appending meanwhile starts a new record instead of being lost.
        let record = self.dir.join(ACCESS_LOG);
        let folding = self.dir.join(format!("{ACCESS_LOG}.compacting"));
        let accesses = match crate::files::rename(&record, &folding) {
            Ok(()) => read_accesses(&folding),
            Err(_) => Vec::new(),
        };
        fold_accesses(&mut facts, &accesses);
        if !self.secrets.is_empty() {
            for fact in facts.iter_mut() {
                fact.content = self.secrets.mask(&fact.content);
                fact.source = self.secrets.mask(&fact.source);
                fact.tags = fact.tags.iter().map(|t| self.secrets.mask(t)).collect();
            }
        }
        if let Err(e) = write_atomic(&self.dir.join("facts.jsonl"), &facts_jsonl(&facts)) {
            // Not folded after all: the recalls go back to the record.
            if let Ok(read) = crate::files::read_bounded(&folding, MAX_ACCESS_BYTES) {
                let _ = open_access_record(&record).and_then(|mut f| f.write_all(&read.bytes));
            }
            let _ = crate::files::remove_file(&folding);
            return Err(e);
        }
        let _ = crate::files::remove_file(&folding);
        write_atomic(&self.dir.join("MEMORY.md"), memory_md(&facts).as_bytes())?;
        self.facts = facts;
        Ok(out)
    }

    /// A handle on the same files with no facts loaded, to write from another thread (a write
    /// re-reads the facts from disk anyway): the caller swaps its `facts` in afterwards.
    pub fn detached(&self) -> Store {
        Store {
            dir: self.dir.clone(),
            facts: Vec::new(),
            profile: self.profile.clone(),
            secrets: self.secrets.clone(),
        }
    }
}

/// One explicit recall, as `access.jsonl` records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Access {
    at: u64,
    ids: Vec<String>,
}

/// Opens the access record to append (created 0600, never through a symlink).
fn open_access_record(path: &Path) -> std::io::Result<File> {
    crate::private_fs::append_private(path, true)
}

/// Bytes of `profile.json` or a lock file read at most.
const MAX_SMALL_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Bytes of the access record read at most (a line per recall; compacted at every write).
const MAX_ACCESS_BYTES: u64 = 64 * 1024 * 1024;

/// The recalls recorded at `path` (none when it is missing; unreadable lines are skipped).
fn read_accesses(path: &Path) -> Vec<Access> {
    let Ok(read) = crate::files::read_bounded(path, MAX_ACCESS_BYTES) else {
        return Vec::new();
    };
    String::from_utf8_lossy(&read.bytes)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// Adds recalls to the facts' access statistics.
fn fold_accesses(facts: &mut [Fact], accesses: &[Access]) {
    if accesses.is_empty() {
        return;
    }
    let by_id: std::collections::HashMap<&str, usize> = facts
        .iter()
        .enumerate()
        .map(|(i, f)| (f.id.as_str(), i))
        .collect();
    let mut updates: Vec<(usize, u64)> = Vec::new();
    for access in accesses {
        for id in &access.ids {
            if let Some(i) = by_id.get(id.as_str()) {
                updates.push((*i, access.at));
            }
        }
    }
    for (i, at) in updates {
        let Some(fact) = facts.get_mut(i) else {
            continue;
        };
        fact.access_count = fact.access_count.saturating_add(1);
        fact.last_accessed = fact.last_accessed.max(at);
    }
}

/// Keyword sets of the facts and which facts hold each keyword, to find near-duplicates fast.
struct DupIndex {
    sets: Vec<BTreeSet<String>>,
    postings: std::collections::HashMap<String, Vec<usize>>,
}

impl DupIndex {
    fn build(facts: &[Fact]) -> Self {
        let mut index = DupIndex {
            sets: Vec::with_capacity(facts.len()),
            postings: Default::default(),
        };
        for fact in facts {
            index.push(keywords::keywords(&fact.content));
        }
        index
    }

    fn push(&mut self, set: BTreeSet<String>) {
        let n = self.sets.len();
        for word in &set {
            self.postings.entry(word.clone()).or_default().push(n);
        }
        self.sets.push(set);
    }

    /// A fact whose keywords are at least 85% the same as `set`'s.
    fn near(&self, set: &BTreeSet<String>) -> Option<usize> {
        // Jaccard >= 0.85 means the other fact holds at least 85% of these keywords, so it holds
        // at least one of the first |A| - ceil(0.85 |A|) + 1 of them.
        let need = (set.len() as f64 * DUPLICATE_SIMILARITY).ceil() as usize;
        let probe = set.len().saturating_sub(need) + 1;
        let mut candidates: Vec<usize> = set
            .iter()
            .take(probe)
            .filter_map(|w| self.postings.get(w))
            .flatten()
            .copied()
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        candidates.into_iter().find(|i| {
            self.sets
                .get(*i)
                .is_some_and(|other| keywords::jaccard(other, set) >= DUPLICATE_SIMILARITY)
        })
    }
}

fn insert(
    facts: &mut Vec<Fact>,
    dups: &mut DupIndex,
    content: String,
    category: String,
    tags: Vec<String>,
    source: String,
) -> Added {
    let id = fact_id(&content);
    let now = now_secs();
    let words = keywords::keywords(&content);
    let duplicate = facts.iter().position(|f| f.id == id).or_else(|| {
        if words.is_empty() {
            None
        } else {
            dups.near(&words)
        }
    });
    if let Some(existing) = duplicate.and_then(|i| facts.get_mut(i)) {
        existing.confidence = (existing.confidence + 0.1).min(1.0);
        existing.last_accessed = now;
        for tag in tags {
            if !existing.tags.contains(&tag) {
                existing.tags.push(tag);
            }
        }
        return Added::Reinforced(existing.id.clone());
    }
    dups.push(words);
    facts.push(Fact {
        id: id.clone(),
        content,
        category,
        tags,
        created: now,
        last_accessed: now,
        access_count: 0,
        confidence: default_confidence(),
        source: if source.is_empty() {
            "user".into()
        } else {
            source
        },
    });
    Added::New(id)
}

fn read_facts(path: &Path) -> Result<Vec<Fact>, MemoryError> {
    let file = match crate::files::open_regular(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(path)(e)),
    };
    let mut facts = Vec::new();
    for (n, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(io(path))?;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Fact>(&line) {
            Ok(fact) => facts.push(fact),
            Err(e) => {
                tracing::warn!(path = %path.display(), line = n + 1, error = %e, "skipping an unreadable fact")
            }
        }
    }
    Ok(facts)
}

fn facts_jsonl(facts: &[Fact]) -> Vec<u8> {
    let mut out = Vec::new();
    for fact in facts {
        if let Ok(line) = serde_json::to_string(fact) {
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
    }
    out
}

/// Writes a file so that a crash leaves either the old or the new content, never a mix.
///
/// The content goes to a `tempfile::NamedTempFile` (0600, a random name) in the same directory,
/// is synced, then renamed into place; on any error before the rename (a full disk) the temporary
/// file deletes itself, so no `*.tmp` is ever left behind.
pub fn write_atomic(path: &Path, content: &[u8]) -> Result<(), MemoryError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".chatcli-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(io(dir))?;
    let tmp_path = tmp.path().to_path_buf();
    tmp.write_all(content).map_err(io(&tmp_path))?;
    tmp.as_file().sync_all().map_err(io(&tmp_path))?;
    tmp.persist(path).map_err(|e| io(path)(e.error))?;
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// `MEMORY.md`: the facts grouped by category, capped at 32 KB.
pub fn memory_md(facts: &[Fact]) -> String {
    let mut out = String::from(
        "# Memory\n\nGenerated by chatcli from facts.jsonl; edits here are overwritten.\n",
    );
    for category in CATEGORIES {
        let mut in_category: Vec<&Fact> = facts.iter().filter(|f| f.category == category).collect();
        if in_category.is_empty() {
            continue;
        }
        in_category.sort_by(|a, b| b.confidence.total_cmp(&a.confidence).then(a.id.cmp(&b.id)));
        let section = format!("\n## {category}\n\n");
        if out.len() + section.len() > MEMORY_MD_CAP {
            break;
        }
        out.push_str(&section);
        for fact in in_category {
            let line = format!(
                "- {} ({})\n",
                fact.content.replace('\n', " "),
                fact.id.chars().take(8).collect::<String>()
            );
            if out.len() + line.len() > MEMORY_MD_CAP {
                return out;
            }
            out.push_str(&line);
        }
    }
    out
}

/// An exclusive lock on the store: the system's lock on its `.lock` file (see
/// `private_fs::lock_exclusive`), gone with its holder.
struct Lock {
    _held: crate::private_fs::FileLock,
}

impl Lock {
    fn acquire(dir: &Path) -> Result<Lock, MemoryError> {
        let path = dir.join(".lock");
        match crate::private_fs::lock_exclusive(&path, LOCK_WAIT).map_err(io(&path))? {
            Some(held) => Ok(Lock { _held: held }),
            None => Err(MemoryError::Locked(path.display().to_string())),
        }
    }
}

/// Tags most used across the facts, most used first (ties by name).
pub fn top_tags(facts: &[Fact], n: usize) -> Vec<String> {
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for fact in facts {
        let distinct: BTreeSet<&str> = fact.tags.iter().map(String::as_str).collect();
        for tag in distinct {
            *counts.entry(tag).or_default() += 1;
        }
    }
    let mut sorted: Vec<(&str, usize)> = counts.into_iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    sorted
        .into_iter()
        .take(n)
        .map(|(t, _)| t.to_string())
        .collect()
}

#[cfg(test)]
#[allow(clippy::string_slice)] // fixed ASCII fixtures, cut at known places
mod tests {
    use super::*;
    use std::time::Instant;

    fn new(content: &str, category: &str) -> NewFact {
        NewFact {
            content: content.into(),
            category: category.into(),
            ..NewFact::default()
        }
    }

    #[test]
    fn ids_are_content_hashes() {
        assert_eq!(fact_id("  Hello "), fact_id("hello"));
        assert_eq!(fact_id("x").len(), 24);
    }

    #[test]
    fn near_duplicates_reinforce_instead_of_adding() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(dir.path()).expect("open");
        let first = store
            .add(new(
                "The staging database password rotates every Monday via Vault",
                "gotcha",
            ))
            .expect("add");
        let again = store
            .add(new(
                "the staging database password rotates every monday via vault!",
                "gotcha",
            ))
            .expect("add");
        assert!(matches!(first, Added::New(_)));
        assert_eq!(again, Added::Reinforced(store.facts[0].id.clone()));
        assert_eq!(store.facts.len(), 1);
        assert!(store.facts[0].confidence > 0.75);
        let err = store.add(new("x y z", "mood")).expect_err("bad category");
        assert!(err.to_string().starts_with("unknown category \"mood\""));
        let md = std::fs::read_to_string(dir.path().join("MEMORY.md")).expect("md");
        assert!(md.contains("## gotcha") && md.contains("rotates every Monday"));
    }

    #[test]
    fn recalls_append_to_their_record_and_the_next_write_compacts_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(dir.path()).expect("open");
        store
            .add(new("Builds run on the self-hosted runner", "project"))
            .expect("add");
        let id = store.facts[0].id.clone();
        let facts_before = std::fs::read(dir.path().join("facts.jsonl")).expect("read");
        store
            .record_access(std::slice::from_ref(&id))
            .expect("record");
        store
            .record_access(std::slice::from_ref(&id))
            .expect("record");
        assert_eq!(store.facts[0].access_count, 2, "counted in memory at once");
        assert_eq!(
            std::fs::read(dir.path().join("facts.jsonl")).expect("read"),
            facts_before,
            "the store itself is not rewritten"
        );
        assert_eq!(
            Store::open(dir.path()).expect("open").facts[0].access_count,
            2
        );
        // The next write folds the record into facts.jsonl and removes it: counted once.
        store.add(new("Caches live in S3", "project")).expect("add");
        assert!(!dir.path().join(ACCESS_LOG).exists());
        let reopened = Store::open(dir.path()).expect("open");
        let fact = reopened.facts.iter().find(|f| f.id == id).expect("fact");
        assert_eq!(fact.access_count, 2);
        assert!(fact.last_accessed > 0);
    }

    #[test]
    fn forget_by_id_prefix() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(dir.path()).expect("open");
        let Added::New(id) = store
            .add(new("Use cargo nextest for tests", "preference"))
            .expect("add")
        else {
            panic!("new fact expected");
        };
        assert!(store.forget("zzzz").is_err());
        let gone = store.forget(&id[..6]).expect("forget");
        assert_eq!(gone.id, id);
        assert!(Store::open(dir.path()).expect("open").facts.is_empty());
    }

    #[test]
    fn concurrent_writers_lose_no_fact() {
        let dir = tempfile::tempdir().expect("tempdir");
        let handles: Vec<_> = (0..4)
            .map(|w| {
                let path = dir.path().to_path_buf();
                std::thread::spawn(move || {
                    let mut store = Store::open(&path).expect("open");
                    for i in 0..15 {
                        store
                            .add(new(
                                &format!("writer{w} remembers item{i} of subsystem{}", w * 100 + i),
                                "project",
                            ))
                            .expect("add");
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().expect("writer finished");
        }
        assert_eq!(Store::open(dir.path()).expect("open").facts.len(), 60);
    }

    #[test]
    fn a_crash_before_the_rename_leaves_the_previous_store_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(dir.path()).expect("open");
        store
            .add(new("Fact one survives crashes", "project"))
            .expect("add");
        let before = std::fs::read(dir.path().join("facts.jsonl")).expect("read");
        // A crash between writing the temp file and renaming it leaves just a stray temp file.
        std::fs::write(dir.path().join("facts.tmp.99999"), b"{\"half\": ").expect("write");
        assert_eq!(
            std::fs::read(dir.path().join("facts.jsonl")).expect("read"),
            before
        );
        let reopened = Store::open(dir.path()).expect("open");
        assert_eq!(reopened.facts.len(), 1);
        assert_eq!(reopened.facts[0].content, "Fact one survives crashes");
    }

    #[test]
    fn a_lock_left_by_a_killed_process_is_taken_over() {
        let dir = tempfile::tempdir().expect("tempdir");
        // The lock file a killed chatcli left behind, with its pid: no process holds it.
        std::fs::write(dir.path().join(".lock"), "4242\n").expect("plant");
        let mut store = Store::open(dir.path()).expect("open");
        let started = Instant::now();
        store
            .add(new("Stale locks never block memory", "gotcha"))
            .expect("the stale lock is taken over");
        assert!(
            started.elapsed() < LOCK_WAIT,
            "taken over at once, not after the wait"
        );
        // A lock held (here by this process, through another handle) is respected.
        let held = Lock::acquire(dir.path()).expect("lock");
        let file =
            crate::private_fs::append_private(&dir.path().join(".lock"), true).expect("open");
        assert!(
            matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock)),
            "a second handle cannot take a held lock"
        );
        drop(held);
        assert!(file.try_lock().is_ok(), "released with its holder");
    }

    #[test]
    fn writes_leave_no_temporary_file_and_are_private() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(dir.path()).expect("open");
        store
            .add(new("One fact is enough", "project"))
            .expect("add");
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .expect("dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        assert!(names.iter().all(|n| !n.contains("tmp")), "{names:?}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            for name in ["facts.jsonl", "MEMORY.md"] {
                let mode = std::fs::metadata(dir.path().join(name))
                    .expect("meta")
                    .permissions()
                    .mode();
                assert_eq!(mode & 0o777, 0o600, "{name}");
            }
        }
    }
}
