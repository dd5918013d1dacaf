//! `memory`: recall, add and forget long-term facts (see `crate::memory`).
//!
//! Recall is explicit, so it counts as an access (unlike passive auto-recall), recorded by
//! appending to the store's access record, never by rewriting the store. Every file write runs
//! on a blocking thread, with the shared state unlocked meanwhile. Its output is
//! capped at 4,000 characters. With `CHATCLI_MEMORY_HYDE=1` the model first writes a short
//! hypothetical answer that is embedded with the query: one extra request, accounted as one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use futures_util::{FutureExt, StreamExt};
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolOutput, optional_str, required_str};
use crate::clock::now_secs;
use crate::conversation::{Message, ModelRequest, ToolSpec};
use crate::memory::embedder::Embedder;
use crate::memory::recall::RecallIndex;
use crate::memory::{Added, Fact, MemoryError, NewFact, Store};
use crate::provider::{Provider, ProviderEvent};

/// Characters of recall output at most.
pub const RECALL_CAP: usize = 4000;

/// The store shared by the agent (for prompt blocks) and the `memory` tool.
pub struct MemoryState {
    pub store: Store,
    index: Option<RecallIndex>,
    embedder: Embedder,
    /// Where the embedder's vectors are cached (`None` for the local embedder).
    cache: Option<PathBuf>,
    /// The embedder's fact vectors by id, loaded from the cache on first use.
    vectors: Option<HashMap<String, Vec<f32>>>,
    provider_index: Option<RecallIndex>,
    /// The endpoint failed once this session: recall stays local from then on.
    embedder_failed: bool,
}

/// What explicit recall must embed before it can rank with the provider's vectors.
struct EmbedPlan {
    embedder: Embedder,
    cache: PathBuf,
    missing: Vec<(String, String)>,
}

impl MemoryState {
    /// Wraps an opened store; recall uses the local embedding.
    pub fn new(store: Store) -> Self {
        MemoryState {
            store,
            index: None,
            embedder: Embedder::Local,
            cache: None,
            vectors: None,
            provider_index: None,
            embedder_failed: false,
        }
    }

    /// Explicit recall embeds with `embedder`, caching its vectors under `memory_dir`.
    pub fn with_embedder(mut self, embedder: Embedder, memory_dir: &Path) -> Self {
        self.cache = embedder.cache_path(memory_dir);
        self.embedder = embedder;
        self
    }

    /// The facts the provider has not embedded yet; `None` when recall stays local.
    fn embed_plan(&mut self) -> Option<EmbedPlan> {
        let cache = self
            .cache
            .clone()
            .filter(|_| !self.embedder_failed && !self.store.facts.is_empty())?;
        let vectors = self
            .vectors
            .get_or_insert_with(|| crate::memory::embedder::load_cache(&cache));
        let missing = self
            .store
            .facts
            .iter()
            .filter(|f| !vectors.contains_key(&f.id))
            .map(|f| (f.id.clone(), fact_text(f)))
            .collect();
        Some(EmbedPlan {
            embedder: self.embedder.clone(),
            cache,
            missing,
        })
    }

    /// Keeps vectors the provider just made.
    fn add_vectors(&mut self, entries: Vec<(String, Vec<f32>)>) {
        if entries.is_empty() {
            return;
        }
        self.provider_index = None;
        self.vectors
            .get_or_insert_with(HashMap::new)
            .extend(entries);
    }

    /// Like `recall`, ranking by the provider's vectors (`query_vec` is the query's).
    fn recall_embedded(&mut self, query: &str, query_vec: &[f32], limit: usize) -> Vec<usize> {
        let facts = &self.store.facts;
        let vectors = self.vectors.get_or_insert_with(HashMap::new);
        let index = self.provider_index.get_or_insert_with(|| {
            let per_fact: Vec<Option<Vec<f32>>> =
                facts.iter().map(|f| vectors.get(&f.id).cloned()).collect();
            RecallIndex::with_embeddings(facts, &per_fact)
        });
        let mut query_vec = query_vec.to_vec();
        crate::memory::embedding::normalize(&mut query_vec);
        index
            .recall_with(facts, query, &query_vec, now_secs(), limit)
            .into_iter()
            .map(|h| h.index)
            .collect()
    }

    /// Indices (into `store.facts`) of the best facts for `query`; builds the index on first use.
    pub fn recall(&mut self, query: &str, extra: Option<&str>, limit: usize) -> Vec<usize> {
        let index = self
            .index
            .get_or_insert_with(|| RecallIndex::build(&self.store.facts));
        index
            .recall(&self.store.facts, query, extra, now_secs(), limit)
            .into_iter()
            .map(|h| h.index)
            .collect()
    }

    /// Drops the recall index after the store changed.
    pub fn invalidate(&mut self) {
        self.index = None;
        self.provider_index = None;
    }
}

/// Shared handle to the memory state.
pub type SharedMemory = Arc<Mutex<MemoryState>>;

/// The `memory` tool.
pub struct MemoryTool;

impl Tool for MemoryTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "memory".into(),
            description: "Long-term memory: action recall (query), add (content, category, tags) or forget (id).".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": ["recall", "add", "forget"]},
                    "query": {"type": "string"},
                    "content": {"type": "string"},
                    "category": {"type": "string", "enum": crate::memory::CATEGORIES},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "id": {"type": "string"}
                },
                "required": ["action"]
            }),
        }
    }

    fn read_only(&self) -> bool {
        // Adding and forgetting change only chatcli's own store, never the workspace.
        true
    }

    fn run<'a>(
        &'a self,
        args: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let Some(memory) = ctx.memory.as_ref() else {
                return Err(ToolError::Failed(
                    "memory is off (CHATCLI_MEMORY_MODE=off)".into(),
                ));
            };
            match required_str(args, "action")? {
                "recall" => recall(memory, ctx, required_str(args, "query")?).await,
                "add" => add(memory, args, &ctx.workspace).await,
                "forget" => forget(memory, required_str(args, "id")?).await,
                other => Err(ToolError::InvalidArgs(format!(
                    "unknown action \"{other}\" (expected recall, add or forget)"
                ))),
            }
        }
        .boxed()
    }
}

/// A store error, as the tool's failure.
fn failed(e: MemoryError) -> ToolError {
    ToolError::Failed(e.to_string())
}

/// The failure of a call after an earlier one poisoned the shared state's lock.
fn poisoned() -> ToolError {
    ToolError::Failed("the memory store is unavailable after an earlier failure".into())
}

/// `recall`: the ten facts nearest `query` (by the provider's embeddings when there are, with a
/// hypothetical answer when HyDE is on), listed up to `RECALL_CAP`; their access is recorded.
async fn recall(
    memory: &SharedMemory,
    ctx: &ToolContext,
    query: &str,
) -> Result<ToolOutput, ToolError> {
    let (hypothesis, usage) = match &ctx.hyde {
        Some(provider) => hypothesize(provider.as_ref(), query).await,
        None => (None, None),
    };
    let plan = memory.lock().map_err(|_| poisoned())?.embed_plan();
    let query_vec = match plan {
        Some(plan) => provider_vectors(memory, plan, query, hypothesis.as_deref()).await,
        None => None,
    };
    let (facts, store) = {
        let mut state = memory.lock().map_err(|_| poisoned())?;
        let hits = match &query_vec {
            Some(v) => state.recall_embedded(query, v, 10),
            None => state.recall(query, hypothesis.as_deref(), 10),
        };
        let facts: Vec<_> = hits
            .iter()
            .filter_map(|i| state.store.facts.get(*i).cloned())
            .collect();
        let ids: Vec<String> = facts.iter().map(|f| f.id.clone()).collect();
        state.store.count_access(&ids);
        (facts, state.store.detached())
    };
    // Read-only for the store: one line appended to the access record, off the agent task (it
    // is a file write).
    let ids: Vec<String> = facts.iter().map(|f| f.id.clone()).collect();
    off_task(store, move |store| store.record_access(&ids))
        .await
        .map_err(failed)?;
    Ok(ToolOutput {
        text: recall_listing(&facts, query),
        usage,
        ..ToolOutput::default()
    })
}

/// What `recall` answers: the facts numbered, with category, id and tags, as many as fit in
/// `RECALL_CAP`; or that none matched.
fn recall_listing(facts: &[Fact], query: &str) -> String {
    let mut out = String::new();
    for (n, fact) in facts.iter().enumerate() {
        let tags = if fact.tags.is_empty() {
            String::new()
        } else {
            format!(", tags: {}", fact.tags.join(", "))
        };
        let line = format!(
            "{}. [{}] {} (id {}{tags})\n",
            n + 1,
            fact.category,
            fact.content,
            fact.id.chars().take(12).collect::<String>()
        );
        if out.len() + line.len() > RECALL_CAP {
            let cut = super::cut::Cut::showing(format!("{n} of the {} nearest facts", facts.len()))
                .read_on(format!(
                    "a recall holds {RECALL_CAP} characters at most: recall with a narrower query"
                ));
            return cut.above(out.trim_end());
        }
        out.push_str(&line);
    }
    if out.is_empty() {
        out = format!("no stored fact matches \"{query}\"");
    }
    out.trim_end().to_string()
}

/// `add`: stores a fact (or reinforces the same one already known).
async fn add(
    memory: &SharedMemory,
    args: &Value,
    workspace: &Path,
) -> Result<ToolOutput, ToolError> {
    let content = required_str(args, "content")?;
    let tags = args
        .get("tags")
        .and_then(|t| t.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let category = optional_str(args, "category")
        .unwrap_or("project")
        .to_string();
    // A project fact records the workspace's project for the memory index.
    let project = category
        .eq_ignore_ascii_case("project")
        .then(|| crate::memory::profile::project_name(workspace))
        .flatten();
    let new = NewFact {
        content: content.to_string(),
        category,
        tags,
        source: "agent".into(),
    };
    let store = memory.lock().map_err(|_| poisoned())?.store.detached();
    let (added, facts, profile) = off_task(store, move |store| {
        let added = store.add(new)?;
        if let Some(name) = project {
            store.note_project(&name)?;
        }
        Ok((
            added,
            std::mem::take(&mut store.facts),
            std::mem::take(&mut store.profile),
        ))
    })
    .await
    .map_err(failed)?;
    replace_facts(memory, facts)?;
    memory.lock().map_err(|_| poisoned())?.store.profile = profile;
    Ok(ToolOutput::text(match added {
        Added::New(id) => format!(
            "remembered (id {})",
            id.chars().take(12).collect::<String>()
        ),
        Added::Reinforced(id) => {
            format!(
                "already known: reinforced fact {}",
                id.chars().take(12).collect::<String>()
            )
        }
    }))
}

/// `forget`: removes the fact with this id.
async fn forget(memory: &SharedMemory, id: &str) -> Result<ToolOutput, ToolError> {
    let id = id.to_string();
    let store = memory.lock().map_err(|_| poisoned())?.store.detached();
    let (gone, facts) = off_task(store, move |store| {
        store
            .forget(&id)
            .map(|gone| (gone, std::mem::take(&mut store.facts)))
    })
    .await
    .map_err(failed)?;
    replace_facts(memory, facts)?;
    Ok(ToolOutput::text(format!("forgot: {}", gone.content)))
}

/// The shared state takes the facts a write left on disk; its recall index is rebuilt on use.
fn replace_facts(memory: &SharedMemory, facts: Vec<Fact>) -> Result<(), ToolError> {
    let mut state = memory.lock().map_err(|_| poisoned())?;
    state.store.facts = facts;
    state.invalidate();
    Ok(())
}

/// Runs a store write on a blocking thread: it may wait up to 10 s for the store's lock file,
/// and neither that wait nor the file work may hold up the agent task or the shared state.
async fn off_task<T: Send + 'static>(
    mut store: Store,
    write: impl FnOnce(&mut Store) -> Result<T, MemoryError> + Send + 'static,
) -> Result<T, MemoryError> {
    tokio::task::spawn_blocking(move || write(&mut store))
        .await
        .unwrap_or_else(|e| {
            Err(MemoryError::Invalid(format!(
                "the memory write stopped unexpectedly: {e}"
            )))
        })
}

/// The text of a fact that gets embedded (the local index embeds the same).
fn fact_text(fact: &Fact) -> String {
    format!("{} {}", fact.content, fact.tags.join(" "))
}

/// Embeds the facts the provider has not seen and the query (with the HyDE answer), caching
/// the facts' vectors; the query's vector, or `None` when the endpoint fails (recall then
/// stays local for the rest of the session, with a warning in the log).
async fn provider_vectors(
    memory: &SharedMemory,
    plan: EmbedPlan,
    query: &str,
    hypothesis: Option<&str>,
) -> Option<Vec<f32>> {
    let mut texts: Vec<String> = plan.missing.iter().map(|(_, t)| t.clone()).collect();
    texts.push(match hypothesis {
        Some(h) => format!("{query}\n{h}"),
        None => query.to_string(),
    });
    match plan.embedder.embed(&texts).await {
        Ok(Some(mut vectors)) => {
            let query_vec = vectors.pop()?;
            let entries: Vec<(String, Vec<f32>)> = plan
                .missing
                .into_iter()
                .map(|(id, _)| id)
                .zip(vectors)
                .collect();
            // A file append: off the agent task, with the shared state unlocked.
            let cache = plan.cache.clone();
            let written = entries.clone();
            let cached = tokio::task::spawn_blocking(move || {
                crate::memory::embedder::append_cache(&cache, &written)
            })
            .await;
            if let Ok(Err(e)) = cached {
                tracing::warn!(error = %e, path = %plan.cache.display(), "cannot cache embeddings");
            }
            memory.lock().ok()?.add_vectors(entries);
            Some(query_vec)
        }
        Ok(None) => None,
        Err(e) => {
            tracing::warn!(
                embedder = ?plan.embedder,
                error = %e,
                "embedding endpoint failed; recall uses the local embedding"
            );
            memory.lock().ok()?.embedder_failed = true;
            None
        }
    }
}

/// HyDE: a short hypothetical answer to embed with the query, and the usage of asking for it.
async fn hypothesize(
    provider: &dyn Provider,
    query: &str,
) -> (Option<String>, Option<crate::provider::UsageRecord>) {
    let request = ModelRequest {
        model: provider.model().to_string(),
        system: Vec::new(),
        tools: Vec::new(),
        messages: crate::conversation::shared([Message::user_text(format!(
            "Write two sentences that would answer this, as a stored note would: {query}"
        ))]),
        max_output_tokens: 120,
        session_id: "hyde".into(),
        effort: None,
        settled_messages: None,
        bridge_message: None,
    };
    let mut stream = provider.stream(request);
    let mut text = String::new();
    let mut usage = None;
    while let Some(event) = stream.next().await {
        match event {
            Ok(ProviderEvent::TextDelta(t)) => text.push_str(&t),
            Ok(ProviderEvent::Usage(u)) => usage = Some(u),
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "HyDE request failed; recalling with the query alone");
                break;
            }
        }
    }
    ((!text.trim().is_empty()).then_some(text), usage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recall_past_its_cap_says_so_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(dir.path()).expect("open");
        let news: Vec<NewFact> = (0..10)
            .map(|i| NewFact {
                content: format!("fact {i}: {}", format!("word{i} ").repeat(90)),
                category: "architecture".into(),
                tags: Vec::new(),
                source: "import".into(),
            })
            .collect();
        store.add_all(news).expect("import");
        let listing = recall_listing(&store.facts, "words");
        let first = listing.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("[cut: shown 6 of the 10 nearest facts; a recall holds 4000"),
            "{first}"
        );
        assert!(
            listing
                .lines()
                .nth(1)
                .is_some_and(|l| l.starts_with("1. [architecture] fact "))
        );
        let whole = recall_listing(store.facts.get(..2).unwrap_or_default(), "words");
        assert!(whole.starts_with("1. [architecture]"), "{whole}");
    }
}
