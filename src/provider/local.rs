//! What a local server (llama-server, Ollama, vLLM) says about itself: the model it serves and
//! its context window, read once when a session starts.
//!
//! Each server answers in its own place: llama-server's `/v1/models` carries `meta.n_ctx` (and
//! `/props` `default_generation_settings.n_ctx` on older builds), vLLM's carries
//! `max_model_len`, Ollama's `/api/show` has `num_ctx` in `parameters` when the model sets one.
//! Everything here is best effort with a short timeout: a server that does not say leaves the
//! field `None`, and the caller falls back (and says so). The window is the one the server
//! *runs* with (llama-server's `-c` per slot), never the model's training length.
//!
//! The same questions say *what* the server is, which decides whether its models are free: only
//! a server that identifies itself as a local inference server is (a gateway on loopback bills
//! the frontier price). llama.cpp answers `/props` and lists `owned_by: "llamacpp"` with `meta`;
//! vLLM lists `owned_by: "vllm"`; Ollama answers `/api/version`; LM Studio `/api/v0/models`.
//! Those questions go out together, so the probe takes no longer than the slowest one.

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
    /// What the server said it is, when it is a local inference server.
    pub server: Option<LocalKind>,
    /// Whether its model takes images, when the server says: llama-server's `/props`
    /// `modalities.vision` (true with `--mmproj`), LM Studio's model `type` (`vlm`).
    pub vision: Option<bool>,
}

/// A local inference server, as it identified itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalKind {
    LlamaCpp,
    Ollama,
    Vllm,
    LmStudio,
}

impl LocalKind {
    /// How the user knows it.
    pub fn label(self) -> &'static str {
        match self {
            LocalKind::LlamaCpp => "llama.cpp",
            LocalKind::Ollama => "Ollama",
            LocalKind::Vllm => "vLLM",
            LocalKind::LmStudio => "LM Studio",
        }
    }
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
                server: Some(LocalKind::Ollama),
                vision: None,
            }
        }
        Family::OpenAi | Family::Anthropic => {
            let root = base.strip_suffix("/v1").unwrap_or(base);
            let urls = ["/v1/models", "/props", "/api/v0/models", "/api/version"]
                .map(|path| format!("{root}{path}"));
            let (listed, props, lm_studio, ollama) = tokio::join!(
                get_json(&client, &urls[0]),
                get_json(&client, &urls[1]),
                get_json(&client, &urls[2]),
                get_json(&client, &urls[3]),
            );
            let entry = listed.as_ref().and_then(|l| list_entry(l, model));
            let lm_entry = lm_studio.as_ref().and_then(|l| lm_studio_entry(l, model));
            ServerFacts {
                model: entry
                    .and_then(|e| e["id"].as_str())
                    .filter(|id| !id.is_empty())
                    .map(str::to_string),
                context_window: entry
                    .and_then(listed_window)
                    .or_else(|| props.as_ref().and_then(props_window))
                    .or_else(|| lm_entry.and_then(lm_studio_window)),
                server: identify(entry, props.as_ref(), lm_entry, ollama.as_ref()),
                vision: props
                    .as_ref()
                    .and_then(|p| p.pointer("/modalities/vision"))
                    .and_then(Value::as_bool)
                    .or_else(|| {
                        lm_entry
                            .and_then(|e| e["type"].as_str())
                            .map(|t| t == "vlm")
                    }),
            }
        }
    }
}

/// What the answers say the server is; `None` for anything that is not plainly a local
/// inference server (a gateway, a proxy, a scripted server).
fn identify(
    entry: Option<&Value>,
    props: Option<&Value>,
    lm_studio: Option<&Value>,
    ollama: Option<&Value>,
) -> Option<LocalKind> {
    let owner = entry.and_then(|e| e["owned_by"].as_str()).unwrap_or("");
    if owner == "vllm" {
        return Some(LocalKind::Vllm);
    }
    let llama_props = props.is_some_and(|p| {
        p.get("default_generation_settings")
            .is_some_and(Value::is_object)
            || p.get("total_slots").is_some_and(Value::is_u64)
    });
    if owner == "llamacpp"
        || entry.is_some_and(|e| e.pointer("/meta/n_ctx").is_some_and(Value::is_u64))
        || llama_props
    {
        return Some(LocalKind::LlamaCpp);
    }
    if lm_studio.is_some() {
        return Some(LocalKind::LmStudio);
    }
    // Ollama's `/api/version` is `{"version": "0.12.3"}` and nothing else.
    let ollama_version = ollama
        .and_then(Value::as_object)
        .is_some_and(|o| o.len() == 1 && o.get("version").is_some_and(Value::is_string));
    ollama_version.then_some(LocalKind::Ollama)
}

/// LM Studio's `/api/v0/models` entry for `model` (else the first loaded LLM): entries carry
/// `type`, `state` and `max_context_length`, which no gateway's list does.
fn lm_studio_entry<'a>(list: &'a Value, model: Option<&str>) -> Option<&'a Value> {
    let data = list["data"].as_array()?;
    let is_lm = |e: &&Value| e["state"].is_string() && e["type"].is_string();
    let mut models = data.iter().filter(is_lm);
    match model {
        Some(m) => data
            .iter()
            .filter(is_lm)
            .find(|e| e["id"].as_str() == Some(m))
            .or_else(|| models.next()),
        None => models.next(),
    }
}

/// LM Studio's loaded window, else the model's maximum.
fn lm_studio_window(entry: &Value) -> Option<u64> {
    entry["loaded_context_length"]
        .as_u64()
        .or_else(|| entry["max_context_length"].as_u64())
        .filter(|n| *n > 0)
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

    #[test]
    fn servers_say_what_they_are_and_gateways_do_not() {
        let llama_list =
            json!({"data": [{"id": "smol.gguf", "owned_by": "llamacpp", "meta": {"n_ctx": 4096}}]});
        let vllm_list =
            json!({"data": [{"id": "Qwen/Qwen3-8B", "owned_by": "vllm", "max_model_len": 32768}]});
        let gateway_list = json!({"data": [{"id": "claude-sonnet-4-5", "owned_by": "anthropic"}]});
        let props = json!({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1});
        let lm = json!({"data": [{"id": "qwen3-8b", "type": "llm", "state": "loaded", "max_context_length": 32768, "loaded_context_length": 8192}]});
        let version = json!({"version": "0.12.3"});
        let entry = |l: &Value| list_entry(l, None).cloned();
        // (`/v1/models` entry, `/props`, LM Studio entry, `/api/version`, what it is)
        type Case = (
            Option<Value>,
            Option<Value>,
            Option<Value>,
            Option<Value>,
            Option<LocalKind>,
        );
        let cases: Vec<Case> = vec![
            (
                entry(&llama_list),
                None,
                None,
                None,
                Some(LocalKind::LlamaCpp),
            ),
            (
                None,
                Some(props.clone()),
                None,
                None,
                Some(LocalKind::LlamaCpp),
            ),
            (entry(&vllm_list), None, None, None, Some(LocalKind::Vllm)),
            (
                entry(&gateway_list),
                None,
                lm_studio_entry(&lm, None).cloned(),
                None,
                Some(LocalKind::LmStudio),
            ),
            (
                entry(&gateway_list),
                None,
                None,
                Some(version),
                Some(LocalKind::Ollama),
            ),
            (entry(&gateway_list), None, None, None, None),
            // A server that answers every path with the same JSON is no Ollama.
            (
                entry(&gateway_list),
                Some(json!({"ok": true})),
                None,
                Some(json!({"version": "1", "ok": true})),
                None,
            ),
            (None, None, None, None, None),
        ];
        for (i, (entry, props, lm, ollama, expected)) in cases.into_iter().enumerate() {
            assert_eq!(
                identify(entry.as_ref(), props.as_ref(), lm.as_ref(), ollama.as_ref()),
                expected,
                "case {i}"
            );
        }
        assert_eq!(
            lm_studio_entry(&lm, Some("qwen3-8b")).and_then(lm_studio_window),
            Some(8192)
        );
        assert_eq!(lm_studio_entry(&gateway_list, None), None);
    }
}
