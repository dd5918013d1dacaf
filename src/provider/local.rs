//! What a local server (llama-server, Ollama, vLLM) says about itself: the model it serves and
//! its context window, read once when a session starts.
//!
//! Each server answers in its own place: llama-server's `/v1/models` carries `meta.n_ctx` (and
//! `/props` `default_generation_settings.n_ctx` on older builds), vLLM's carries
//! `max_model_len`, Ollama's `/api/show` has `num_ctx` in `parameters` when the model sets one.
//! Everything here is best effort with a short timeout: a server that does not say leaves the
//! field `None`, and the caller falls back (and says so). The window is the one the server
//! *runs* with (llama-server's `-c` per slot), never the model's training length.

use std::time::Duration;

use serde_json::{Value, json};

/// How long each question to the server may take.
const ASK_TIMEOUT: Duration = Duration::from_secs(3);

/// Ollama's context length when the model sets no `num_ctx` (its documented default).
pub const OLLAMA_DEFAULT_NUM_CTX: u64 = 4096;

/// What the server said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerFacts {
    /// The first model the server lists (`/v1/models`).
    pub model: Option<String>,
    /// Tokens of context the server runs with.
    pub context_window: Option<u64>,
}

/// Which API family the base URL speaks, for where to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// OpenAI-style base, which includes `/v1` (llama-server, vLLM, LM Studio…).
    OpenAi,
    /// Anthropic-style base, without `/v1` (llama-server speaks it too).
    Anthropic,
    /// Ollama's native API at its host.
    Ollama,
}

/// Asks the server at `base_url` for its model (when `model` is `None`) and context window.
pub async fn discover(family: Family, base_url: &str, model: Option<&str>) -> ServerFacts {
    let Ok(client) = reqwest::Client::builder().timeout(ASK_TIMEOUT).build() else {
        return ServerFacts::default();
    };
    let base = base_url.trim_end_matches('/');
    match family {
        Family::Ollama => {
            let host = super::ollama::normalize_host(base);
            let Some(model) = model else {
                return ServerFacts::default();
            };
            let shown = post_json(
                &client,
                &format!("{host}/api/show"),
                json!({"model": model}),
            )
            .await;
            ServerFacts {
                model: None,
                context_window: shown.as_ref().and_then(ollama_window),
            }
        }
        Family::OpenAi | Family::Anthropic => {
            let root = base.strip_suffix("/v1").unwrap_or(base);
            let listed = get_json(&client, &format!("{root}/v1/models")).await;
            let entry = listed.as_ref().and_then(|l| list_entry(l, model));
            let mut facts = ServerFacts {
                model: entry
                    .and_then(|e| e["id"].as_str())
                    .filter(|id| !id.is_empty())
                    .map(str::to_string),
                context_window: entry.and_then(listed_window),
            };
            if facts.context_window.is_none() {
                let props = get_json(&client, &format!("{root}/props")).await;
                facts.context_window = props.as_ref().and_then(props_window);
            }
            facts
        }
    }
}

/// The listed model named `model`, else the first one.
fn list_entry<'a>(list: &'a Value, model: Option<&str>) -> Option<&'a Value> {
    let data = list["data"].as_array()?;
    model
        .and_then(|m| data.iter().find(|e| e["id"].as_str() == Some(m)))
        .or_else(|| data.first())
}

/// llama-server's `meta.n_ctx`, vLLM's `max_model_len`.
fn listed_window(entry: &Value) -> Option<u64> {
    entry
        .pointer("/meta/n_ctx")
        .and_then(Value::as_u64)
        .or_else(|| entry["max_model_len"].as_u64())
        .filter(|n| *n > 0)
}

/// llama-server's `/props`.
fn props_window(props: &Value) -> Option<u64> {
    props
        .pointer("/default_generation_settings/n_ctx")
        .or_else(|| props.get("n_ctx"))
        .and_then(Value::as_u64)
        .filter(|n| *n > 0)
}

/// Ollama's `/api/show`: the model's `num_ctx` parameter, else Ollama's default, never more
/// than the model was trained for.
fn ollama_window(shown: &Value) -> Option<u64> {
    let set = shown["parameters"].as_str().and_then(|p| {
        p.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx"))
                .then(|| words.next().and_then(|n| n.parse::<u64>().ok()))
                .flatten()
        })
    });
    let trained = shown["model_info"].as_object().and_then(|info| {
        info.iter()
            .find(|(k, _)| k.ends_with(".context_length"))
            .and_then(|(_, v)| v.as_u64())
    });
    let window = set.unwrap_or(OLLAMA_DEFAULT_NUM_CTX);
    Some(trained.map_or(window, |t| window.min(t))).filter(|n| *n > 0)
}

async fn get_json(client: &reqwest::Client, url: &str) -> Option<Value> {
    let response = client.get(url).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    response.json().await.ok()
}

async fn post_json(client: &reqwest::Client, url: &str, body: Value) -> Option<Value> {
    let response = client.post(url).json(&body).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    response.json().await.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_from_each_server() {
        let llama = json!({"object": "list", "data": [{"id": "smol.gguf", "meta": {"n_ctx": 4096, "n_ctx_train": 8192}}]});
        let entry = list_entry(&llama, None);
        assert_eq!(entry.and_then(listed_window), Some(4096));
        let vllm =
            json!({"data": [{"id": "a"}, {"id": "Qwen/Qwen2.5-7B", "max_model_len": 32768}]});
        let entry = list_entry(&vllm, Some("Qwen/Qwen2.5-7B"));
        assert_eq!(entry.and_then(listed_window), Some(32768));
        assert_eq!(
            props_window(&json!({"default_generation_settings": {"n_ctx": 2048}})),
            Some(2048)
        );
        assert_eq!(props_window(&json!({"n_ctx": 0})), None);
        let ollama = json!({"parameters": "stop \"<|im_end|>\"\nnum_ctx 16384", "model_info": {"llama.context_length": 131072}});
        assert_eq!(ollama_window(&ollama), Some(16384));
        let default = json!({"model_info": {"qwen2.context_length": 32768}});
        assert_eq!(ollama_window(&default), Some(OLLAMA_DEFAULT_NUM_CTX));
        let small = json!({"model_info": {"gemma.context_length": 2048}});
        assert_eq!(ollama_window(&small), Some(2048));
    }
}
