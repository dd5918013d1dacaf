//! The models a session can name: the provider's own list merged with the price catalog, for
//! `/model` and `chatcli models`, and the listed window and price of the session's model.
//!
//! A provider's list is asked at most once a day: the parsed models (never the request, which
//! holds the key) are kept in `CHATCLI_HOME/models/<provider>-<hash of the list URL>.json`, so a
//! session starts without waiting on the network and a second gateway or account gets its own
//! file. Offline, or when the endpoint fails, the catalog alone is offered and the reason is said
//! once. What a newcomer gets wrong: a listed model and a catalog model are the same model only
//! when their ids match (OpenRouter's `anthropic/claude-sonnet-4.5` is its own entry with its
//! own price, and Anthropic's `claude-sonnet-4-5-20250929` finds `claude-sonnet-4-5` through the
//! catalog's date rule).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::cost::Catalog;
use crate::provider::Provider;
use crate::provider::listing::{self, ListRequest, ListedModel};

/// How long a fetched list is used before it is asked again.
pub const FRESH_SECS: u64 = 24 * 60 * 60;

/// The most of a cache file read back.
const MAX_CACHE_BYTES: u64 = 32 << 20;

/// One model the session can switch to.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelEntry {
    pub id: String,
    /// Who serves it: the session's provider for a listed model, else the family's provider
    /// (`anthropic`, `openai`, …, `other`), as `/provider` takes it.
    pub provider: String,
    /// Its context window in tokens, when known.
    pub window: Option<u64>,
    /// USD per million input and output tokens, when known.
    pub price: Option<(f64, f64)>,
    /// The provider's own list has it (not only the catalog).
    pub listed: bool,
}

/// The entries and where they came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelList {
    pub entries: Vec<ModelEntry>,
    /// How the provider's list was had, or why the catalog alone is offered: said once.
    pub note: String,
}

/// The provider a model id belongs to, by its family; `None` for an id no family claims.
pub fn provider_of(id: &str) -> Option<&'static str> {
    let id = id.to_ascii_lowercase();
    let id = id.rsplit('/').next().unwrap_or(&id);
    let families: &[(&str, &str)] = &[
        ("claude", "anthropic"),
        ("gpt", "openai"),
        ("o1", "openai"),
        ("o3", "openai"),
        ("o4", "openai"),
        ("codex", "openai"),
        ("gemini", "googleai"),
        ("grok", "xai"),
        ("glm", "zai"),
        ("kimi", "moonshot"),
        ("minimax", "minimax"),
    ];
    families
        .iter()
        .find(|(prefix, _)| id.starts_with(prefix))
        .map(|(_, provider)| *provider)
}

/// What the cache file holds.
#[derive(Debug, Serialize, Deserialize)]
struct CacheFile {
    /// Seconds since the epoch when the list was fetched.
    fetched_at: u64,
    /// The list endpoint (no key).
    url: String,
    models: Vec<ListedModel>,
}

/// Where the list of `request` is kept.
fn cache_path(home: &Path, request: &ListRequest) -> PathBuf {
    let digest = Sha256::digest(request.url.as_bytes());
    let hash: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    let name: String = request
        .provider
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    home.join("models").join(format!("{name}-{hash}.json"))
}

/// The kept list of `request` and its age in seconds, if one was kept for this URL.
fn read_cache(home: &Path, request: &ListRequest, now: u64) -> Option<(Vec<ListedModel>, u64)> {
    let text = crate::files::read_following(&cache_path(home, request), MAX_CACHE_BYTES)
        .and_then(|b| b.into_text())
        .ok()?;
    let file: CacheFile = serde_json::from_str(&text).ok()?;
    (file.url == request.url).then(|| (file.models, now.saturating_sub(file.fetched_at)))
}

fn write_cache(home: &Path, request: &ListRequest, models: &[ListedModel], now: u64) {
    let file = CacheFile {
        fetched_at: now,
        url: request.url.clone(),
        models: models.to_vec(),
    };
    let written = serde_json::to_vec(&file)
        .map_err(std::io::Error::other)
        .and_then(|bytes| crate::private_fs::replace_private(&cache_path(home, request), &bytes));
    if let Err(e) = written {
        tracing::warn!(error = %e, "cannot keep the model list");
    }
}

/// The session model's entry in a list kept less than a day ago; never asks the network.
pub fn listed_model(home: &Path, provider: &dyn Provider) -> Option<ListedModel> {
    let request = provider.model_list()?;
    let (models, age) = read_cache(home, &request, crate::clock::now_secs())?;
    let model = provider.model();
    (age < FRESH_SECS)
        .then(|| models.into_iter().find(|m| m.id == model))
        .flatten()
}

/// How the provider's list was had.
#[derive(Debug, Clone, PartialEq)]
pub enum Listing {
    /// Asked now.
    Fetched(Vec<ListedModel>),
    /// Kept from an ask `age` seconds ago.
    Kept { models: Vec<ListedModel>, age: u64 },
    /// The provider has no list endpoint.
    NoEndpoint,
    /// The ask failed: why.
    Failed(String),
}

/// The provider's list: kept if fresh (unless `refresh`), else asked and kept.
pub async fn provider_listing(home: &Path, provider: &dyn Provider, refresh: bool) -> Listing {
    let Some(request) = provider.model_list() else {
        return Listing::NoEndpoint;
    };
    let now = crate::clock::now_secs();
    if !refresh
        && let Some((models, age)) = read_cache(home, &request, now)
        && age < FRESH_SECS
    {
        return Listing::Kept { models, age };
    }
    match listing::fetch(request.clone()).await {
        Ok(models) => {
            write_cache(home, &request, &models, now);
            Listing::Fetched(models)
        }
        Err(e) => Listing::Failed(e.to_string()),
    }
}

/// The listed models first, each with what the catalog adds, then every catalog model the list
/// did not name; `provider` is the session's provider name.
pub fn merge(provider: &str, listed: &[ListedModel], catalog: &Catalog) -> Vec<ModelEntry> {
    let mut entries: Vec<ModelEntry> = listed
        .iter()
        .map(|m| {
            let priced = catalog.lookup(&m.id);
            ModelEntry {
                id: m.id.clone(),
                provider: provider.to_string(),
                window: m.window.or_else(|| priced.and_then(|p| p.context_window)),
                price: m
                    .price
                    .map(|p| (p.input, p.output))
                    .or_else(|| priced.map(|p| (p.input, p.output))),
                listed: true,
            }
        })
        .collect();
    for id in catalog.ids() {
        if entries.iter().any(|e| e.id == id) {
            continue;
        }
        let pricing = catalog.lookup(id);
        entries.push(ModelEntry {
            id: id.to_string(),
            provider: provider_of(id).unwrap_or("other").to_string(),
            window: pricing.and_then(|p| p.context_window),
            price: pricing.map(|p| (p.input, p.output)),
            listed: false,
        });
    }
    entries
}

/// The models `/model` and `chatcli models` offer, with the note that says where they came from;
/// `local` when the server said it is a local inference server, whose models are free.
pub async fn model_list(
    home: &Path,
    provider: &dyn Provider,
    catalog: &Catalog,
    refresh: bool,
    local: bool,
) -> ModelList {
    let name = provider.name().to_string();
    let (listed, note) = match provider_listing(home, provider, refresh).await {
        Listing::Fetched(models) => {
            let note = format!(
                "{} listed by {name} now, with the catalog",
                count(models.len())
            );
            (models, note)
        }
        Listing::Kept { models, age } => {
            let note = format!(
                "{} listed by {name} {} ago (kept a day; chatcli models --refresh asks again), with the catalog",
                count(models.len()),
                age_text(age)
            );
            (models, note)
        }
        Listing::NoEndpoint => (
            Vec::new(),
            format!("the catalog only: {name} has no model list endpoint"),
        ),
        Listing::Failed(why) => (
            Vec::new(),
            format!("the catalog only: {name}'s model list is unavailable ({why})"),
        ),
    };
    let mut entries = merge(&name, &listed, catalog);
    if local {
        for entry in entries.iter_mut().filter(|e| e.listed) {
            entry.price = Some((0.0, 0.0));
        }
    }
    ModelList { entries, note }
}

/// The catalog alone, for the first frame before any list is read.
pub fn catalog_list(provider: &str, catalog: &Catalog) -> ModelList {
    ModelList {
        entries: merge(provider, &[], catalog),
        note: "the catalog (the provider's list is being read)".into(),
    }
}

/// What `chatcli models` shows: the provider's listed models and the catalog's of its family,
/// or everything with `all` (and everything when that would show nothing).
pub fn shown<'a>(list: &'a ModelList, provider: &str, all: bool) -> Vec<&'a ModelEntry> {
    let own: Vec<&ModelEntry> = list
        .entries
        .iter()
        .filter(|e| e.listed || e.provider == provider)
        .collect();
    if all || own.is_empty() {
        list.entries.iter().collect()
    } else {
        own
    }
}

/// `chatcli models` as a table; `current` is marked.
pub fn table(entries: &[&ModelEntry], current: &str) -> String {
    let id_width = entries
        .iter()
        .map(|e| e.id.chars().count())
        .max()
        .unwrap_or(5)
        .clamp(5, 60);
    let mut out = format!(
        "  {:<id_width$} {:>7}  {:<18} {}\n",
        "model", "window", "$/Mtok in / out", "from"
    );
    for entry in entries {
        let mark = if entry.id == current { "▸" } else { " " };
        let from = if entry.listed {
            format!("{} list", entry.provider)
        } else {
            format!("catalog ({})", entry.provider)
        };
        out.push_str(&format!(
            "{mark} {:<id_width$} {:>7}  {:<18} {from}\n",
            entry.id,
            window_text(entry.window),
            price_text(entry.price),
        ));
    }
    out
}

/// `chatcli models --json`: one array, prices in USD per million tokens.
pub fn json(entries: &[&ModelEntry]) -> String {
    let rows: Vec<serde_json::Value> = entries
        .iter()
        .map(|e| {
            serde_json::json!({
                "id": e.id,
                "provider": e.provider,
                "window": e.window,
                "input_usd_per_mtok": e.price.map(|p| p.0),
                "output_usd_per_mtok": e.price.map(|p| p.1),
                "listed": e.listed,
            })
        })
        .collect();
    serde_json::Value::Array(rows).to_string()
}

/// `128k`, `1M`: a window for a column.
pub fn window_text(window: Option<u64>) -> String {
    match window {
        None => "?".into(),
        Some(w) if w >= 1_000_000 && w % 1_000_000 == 0 => format!("{}M", w / 1_000_000),
        Some(w) if w >= 1_000_000 => format!("{:.1}M", w as f64 / 1_000_000.0),
        Some(w) if w < 1000 => format!("{w}"),
        Some(w) => format!("{}k", w / 1000),
    }
}

/// `$3.00 / $15.00`, `free`, `price ?`: a price for a column.
pub fn price_text(price: Option<(f64, f64)>) -> String {
    match price {
        None => "price ?".into(),
        Some((i, o)) if i == 0.0 && o == 0.0 => "free".into(),
        Some((i, o)) => format!("${i:.2} / ${o:.2}"),
    }
}

/// `1 model`, `12 models`.
fn count(n: usize) -> String {
    if n == 1 {
        "1 model".into()
    } else {
        format!("{n} models")
    }
}

/// `3 h`, `12 min`, `40 s`.
fn age_text(secs: u64) -> String {
    match secs {
        s if s >= 3600 => format!("{} h", s / 3600),
        s if s >= 60 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::listing::{ListShape, ListedPrice};

    fn request(url: &str) -> ListRequest {
        ListRequest {
            provider: "openrouter".into(),
            url: url.into(),
            headers: vec![("Authorization".into(), "Bearer sk-secret".into())],
            shape: ListShape::OpenAi,
        }
    }

    fn listed(id: &str, window: Option<u64>) -> ListedModel {
        ListedModel {
            id: id.into(),
            window,
            max_output: None,
            price: None,
        }
    }

    #[test]
    fn the_cache_is_per_endpoint_and_never_holds_the_key() {
        let home = tempfile::tempdir().unwrap();
        let a = request("https://openrouter.ai/api/v1/models");
        let b = request("http://localhost:4000/v1/models");
        write_cache(home.path(), &a, &[listed("x/y", Some(1000))], 100);
        assert_eq!(
            read_cache(home.path(), &a, 160),
            Some((vec![listed("x/y", Some(1000))], 60))
        );
        assert_eq!(read_cache(home.path(), &b, 160), None, "another endpoint");
        let path = cache_path(home.path(), &a);
        let text = std::fs::read_to_string(path).unwrap();
        assert!(!text.contains("sk-secret"), "{text}");
    }

    #[test]
    fn listed_models_come_first_and_take_the_catalogs_price_when_they_have_none() {
        let catalog = Catalog::builtin();
        let mut routed = listed("anthropic/claude-sonnet-4.5", Some(1_000_000));
        routed.price = Some(ListedPrice {
            input: 3.0,
            output: 15.0,
            cache_read: None,
            cache_write: None,
        });
        let entries = merge(
            "anthropic",
            &[listed("claude-sonnet-4-5-20250929", None), routed],
            &catalog,
        );
        assert_eq!(entries[0].id, "claude-sonnet-4-5-20250929");
        assert!(entries[0].listed);
        let catalog_sonnet = catalog.lookup("claude-sonnet-4-5").unwrap();
        assert_eq!(entries[0].window, catalog_sonnet.context_window);
        assert_eq!(
            entries[0].price,
            Some((catalog_sonnet.input, catalog_sonnet.output))
        );
        assert_eq!(entries[1].window, Some(1_000_000));
        let rest = &entries[2..];
        assert!(rest.iter().all(|e| !e.listed));
        assert!(rest.iter().any(|e| e.id == "claude-sonnet-4-5"));
        assert_eq!(rest.len(), catalog.ids().len());
    }

    #[test]
    fn families_name_their_provider() {
        assert_eq!(provider_of("claude-sonnet-4-7"), Some("anthropic"));
        assert_eq!(provider_of("openai/gpt-5.1"), Some("openai"));
        assert_eq!(provider_of("llama3"), None);
    }
}
