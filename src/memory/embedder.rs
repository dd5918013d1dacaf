//! Provider embeddings for recall: OpenAI, Gemini and Ollama have an embedding endpoint; every
//! other provider (and `CHATCLI_MEMORY_EMBEDDINGS=local`) uses the local embedding.
//!
//! Fact vectors are cached in `memory/embeddings/<provider>-<model>.jsonl` (one `{id, v}` per
//! line, appended), so each fact is embedded once per model. Only explicit recall asks the
//! provider; passive auto-recall stays local and free. A failing endpoint falls back to the
//! local embedding for that recall, with a warning in the log.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use super::MemoryError;

/// Which embedding endpoint, at which base, with which key and model.
#[derive(Clone, PartialEq)]
pub enum Embedder {
    /// The local hashed embedding (no network).
    Local,
    OpenAi {
        base: String,
        key: String,
        model: String,
    },
    Gemini {
        base: String,
        key: String,
        model: String,
    },
    Ollama {
        host: String,
        model: String,
    },
}

impl std::fmt::Debug for Embedder {
    // Never prints the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Embedder::Local => write!(f, "local"),
            Embedder::OpenAi { base, model, .. } => write!(f, "openai {model} at {base}"),
            Embedder::Gemini { base, model, .. } => write!(f, "gemini {model} at {base}"),
            Embedder::Ollama { host, model } => write!(f, "ollama {model} at {host}"),
        }
    }
}

/// Reads the vectors out of an endpoint's answer.
type Pick = fn(&Value) -> Vec<Vec<f32>>;

/// Texts embedded per request at most.
const BATCH: usize = 96;

impl Embedder {
    /// The cache file for this embedder's vectors.
    pub fn cache_path(&self, memory_dir: &Path) -> Option<PathBuf> {
        let name = match self {
            Embedder::Local => return None,
            Embedder::OpenAi { model, .. } => format!("openai-{model}"),
            Embedder::Gemini { model, .. } => format!("gemini-{model}"),
            Embedder::Ollama { model, .. } => format!("ollama-{model}"),
        };
        let safe: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        Some(memory_dir.join("embeddings").join(format!("{safe}.jsonl")))
    }

    /// Embeds `texts` (in batches); `None` for the local embedder.
    pub async fn embed(&self, texts: &[String]) -> Result<Option<Vec<Vec<f32>>>, MemoryError> {
        if matches!(self, Embedder::Local) {
            return Ok(None);
        }
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| MemoryError::EmbedTransport(e.to_string()))?;
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            let (request, pick): (reqwest::RequestBuilder, Pick) = match self {
                Embedder::Local => return Ok(None),
                Embedder::OpenAi { base, key, model } => (
                    client
                        .post(format!("{}/embeddings", base.trim_end_matches('/')))
                        .bearer_auth(key)
                        .json(&json!({"model": model, "input": chunk})),
                    |v| vectors(v["data"].as_array(), |item| &item["embedding"]),
                ),
                Embedder::Gemini { base, key, model } => {
                    let base = base.trim_end_matches('/');
                    let requests: Vec<Value> = chunk
                        .iter()
                        .map(|text| {
                            json!({
                                "model": format!("models/{model}"),
                                "content": {"parts": [{"text": text}]},
                            })
                        })
                        .collect();
                    (
                        client
                            .post(format!("{base}/v1beta/models/{model}:batchEmbedContents"))
                            .header("x-goog-api-key", key)
                            .json(&json!({ "requests": requests })),
                        |v| vectors(v["embeddings"].as_array(), |item| &item["values"]),
                    )
                }
                Embedder::Ollama { host, model } => {
                    let host = crate::provider::ollama::normalize_host(host);
                    (
                        client
                            .post(format!("{host}/api/embed"))
                            .json(&json!({"model": model, "input": chunk})),
                        |v| vectors(v["embeddings"].as_array(), |item| item),
                    )
                }
            };
            let response = request
                .send()
                .await
                .map_err(|e| MemoryError::EmbedTransport(e.to_string()))?;
            let status = response.status();
            let text = response.text().await.unwrap_or_default();
            if !status.is_success() {
                return Err(MemoryError::EmbedHttp {
                    status: status.as_u16(),
                    message: crate::provider::http::error_message(&text),
                });
            }
            let body: Value = serde_json::from_str(&text)
                .map_err(|e| MemoryError::EmbedNotJson(e.to_string()))?;
            let got = pick(&body);
            if got.len() != chunk.len() {
                return Err(MemoryError::EmbedCount {
                    asked: chunk.len(),
                    got: got.len(),
                });
            }
            out.extend(got);
        }
        Ok(Some(out))
    }
}

/// The float arrays `field` picks out of each item.
fn vectors(items: Option<&Vec<Value>>, field: fn(&Value) -> &Value) -> Vec<Vec<f32>> {
    items
        .into_iter()
        .flatten()
        .map(|item| floats(field(item)))
        .collect()
}

fn floats(value: &Value) -> Vec<f32> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_f64)
        .map(|x| x as f32)
        .collect()
}

/// Cached vectors by fact id.
pub fn load_cache(path: &Path) -> HashMap<String, Vec<f32>> {
    use std::io::BufRead;
    // Streamed: the cache grows by a line per fact and is never read whole.
    let Ok(file) = crate::files::open_regular(path) else {
        return HashMap::new();
    };
    std::io::BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str::<Value>(&l).ok())
        .filter_map(|v| {
            let id = v.get("id")?.as_str()?.to_string();
            Some((id, floats(v.get("v").unwrap_or(&Value::Null))))
        })
        .collect()
}

/// Appends vectors to the cache (a torn last line from a crash is skipped on load).
pub fn append_cache(path: &Path, entries: &[(String, Vec<f32>)]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        crate::private_fs::create_private_dir(dir)?;
    }
    let mut file = crate::private_fs::append_private(path, true)?;
    for (id, v) in entries {
        writeln!(file, "{}", json!({"id": id, "v": v}))?;
    }
    file.flush()
}
