//! What a provider serves: its own model list, asked from the list endpoint it documents, with
//! the window, output limit and price where the answer carries them.
//!
//! Each wire family answers in its own shape: OpenAI-style `data[].id` (OpenRouter adds
//! `context_length` and per-token `pricing`, vLLM `max_model_len`, llama-server `meta.n_ctx`),
//! Anthropic's paged `data[]` (`max_input_tokens`, `max_tokens` on current API versions),
//! Gemini's paged `models[]` (`inputTokenLimit`, `outputTokenLimit`, only those that
//! `generateContent`), Ollama's `/api/tags`, GitHub Models' catalog (`limits`). A provider says
//! where and how to ask ([`ListRequest`]); [`fetch`] asks and parses. What a newcomer gets
//! wrong: the request carries the API key, so it is never logged or written anywhere; only the
//! parsed models are cached (by `session::models`).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ProviderError;

/// How long one page of a list may take.
const PAGE_TIMEOUT: Duration = Duration::from_secs(15);

/// The most of one page read: OpenRouter's whole list (several hundred models with their
/// descriptions) is about 1.5 MB.
const MAX_PAGE_BYTES: usize = 16 << 20;

/// The most pages followed; a server that always says "more" stops here.
const MAX_PAGES: usize = 20;

/// One model the provider lists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListedModel {
    pub id: String,
    /// Tokens of input the model takes, when the list says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    /// Tokens the model may write in one response, when the list says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output: Option<u64>,
    /// What the model costs, when the list says (OpenRouter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<ListedPrice>,
}

/// A listed price, in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ListedPrice {
    pub input: f64,
    pub output: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
}

/// The shape of a list answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListShape {
    /// `{"data": [{"id": …}, …]}` (OpenAI, xAI, OpenRouter, vLLM, llama-server, …).
    OpenAi,
    /// Anthropic's `{"data": […], "has_more", "last_id"}`, paged with `after_id`.
    Anthropic,
    /// Gemini's `{"models": [{"name": "models/…"}], "nextPageToken"}`.
    Gemini,
    /// Ollama's `{"models": [{"name": …}]}` from `/api/tags`.
    Ollama,
    /// GitHub Models' catalog: a top-level array of `{"id", "limits"}`.
    GithubCatalog,
}

/// Where and how to ask a provider for its models.
#[derive(Clone, PartialEq)]
pub struct ListRequest {
    /// The provider's name, for messages.
    pub provider: String,
    /// The list endpoint, without paging parameters.
    pub url: String,
    /// Headers to send (the API key among them).
    pub headers: Vec<(String, String)>,
    pub shape: ListShape,
}

impl std::fmt::Debug for ListRequest {
    // The headers hold the key: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListRequest")
            .field("provider", &self.provider)
            .field("url", &self.url)
            .field("shape", &self.shape)
            .finish_non_exhaustive()
    }
}

/// A list being fetched.
pub type ListFuture = Pin<Box<dyn Future<Output = Result<Vec<ListedModel>, ProviderError>> + Send>>;

/// Asks the endpoint for every page of its list.
pub async fn fetch(request: ListRequest) -> Result<Vec<ListedModel>, ProviderError> {
    let client = reqwest::Client::builder()
        .timeout(PAGE_TIMEOUT)
        .user_agent(concat!("chatcli/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ProviderError::Setup(format!("cannot build an HTTP client: {e}")))?;
    let mut models = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let url = page_url(&request, cursor.as_deref());
        let page = get_json(&client, &request, &url).await?;
        let (found, next) =
            parse_page(request.shape, &page).ok_or_else(|| ProviderError::Protocol {
                provider: request.provider.clone(),
                message: format!(
                    "the model list at {} is not in the expected shape",
                    request.url
                ),
            })?;
        models.extend(found);
        match next {
            Some(next) if cursor.as_deref() != Some(next.as_str()) => cursor = Some(next),
            _ => break,
        }
    }
    Ok(models)
}

/// The URL of one page: the paged shapes ask for their largest page.
fn page_url(request: &ListRequest, cursor: Option<&str>) -> String {
    let join = if request.url.contains('?') { '&' } else { '?' };
    match (request.shape, cursor) {
        (ListShape::Anthropic, None) => format!("{}{join}limit=1000", request.url),
        (ListShape::Anthropic, Some(after)) => {
            format!(
                "{}{join}limit=1000&after_id={}",
                request.url,
                query_escape(after)
            )
        }
        (ListShape::Gemini, None) => format!("{}{join}pageSize=1000", request.url),
        (ListShape::Gemini, Some(token)) => {
            format!(
                "{}{join}pageSize=1000&pageToken={}",
                request.url,
                query_escape(token)
            )
        }
        _ => request.url.clone(),
    }
}

/// Percent-encodes a cursor for a query string.
fn query_escape(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

async fn get_json(
    client: &reqwest::Client,
    request: &ListRequest,
    url: &str,
) -> Result<Value, ProviderError> {
    let mut builder = client.get(url);
    for (name, value) in &request.headers {
        builder = builder.header(name, value);
    }
    let response = builder.send().await.map_err(|e| ProviderError::Transport {
        provider: request.provider.clone(),
        message: super::http::describe_reqwest(&e),
    })?;
    let status = response.status();
    let body = super::http::read_bounded(response, MAX_PAGE_BYTES).await;
    if !status.is_success() {
        return Err(ProviderError::Http {
            provider: request.provider.clone(),
            status: status.as_u16(),
            message: super::http::error_message(&body),
            retry_after: None,
        });
    }
    serde_json::from_str(&body).map_err(|e| ProviderError::Protocol {
        provider: request.provider.clone(),
        message: format!("the model list at {} is not JSON: {e}", request.url),
    })
}

/// One page's models and the cursor of the next page; `None` when the page is not a list of
/// this shape at all.
pub fn parse_page(shape: ListShape, page: &Value) -> Option<(Vec<ListedModel>, Option<String>)> {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let count = |v: Option<&Value>| v.and_then(Value::as_u64).filter(|n| *n > 0);
    match shape {
        ListShape::OpenAi => {
            let models = page
                .get("data")?
                .as_array()?
                .iter()
                .filter_map(openai_entry);
            Some((models.collect(), None))
        }
        ListShape::Anthropic => {
            let models = page.get("data")?.as_array()?.iter().filter_map(|e| {
                Some(ListedModel {
                    id: text(e, "id")?,
                    window: count(e.get("max_input_tokens")),
                    max_output: count(e.get("max_tokens")),
                    price: None,
                })
            });
            let more = page.get("has_more").and_then(Value::as_bool) == Some(true);
            Some((models.collect(), text(page, "last_id").filter(|_| more)))
        }
        ListShape::Gemini => {
            let models = page.get("models")?.as_array()?.iter().filter_map(|e| {
                let generates = match e.get("supportedGenerationMethods") {
                    Some(Value::Array(methods)) => methods
                        .iter()
                        .any(|m| m.as_str() == Some("generateContent")),
                    _ => true,
                };
                let name = text(e, "name")?;
                let id = name.strip_prefix("models/").unwrap_or(&name).to_string();
                generates.then_some(ListedModel {
                    id,
                    window: count(e.get("inputTokenLimit")),
                    max_output: count(e.get("outputTokenLimit")),
                    price: None,
                })
            });
            Some((
                models.collect(),
                text(page, "nextPageToken").filter(|t| !t.is_empty()),
            ))
        }
        ListShape::Ollama => {
            let models = page.get("models")?.as_array()?.iter().filter_map(|e| {
                Some(ListedModel {
                    id: text(e, "name").or_else(|| text(e, "model"))?,
                    window: None,
                    max_output: None,
                    price: None,
                })
            });
            Some((models.collect(), None))
        }
        ListShape::GithubCatalog => {
            let models = page.as_array()?.iter().filter_map(|e| {
                Some(ListedModel {
                    id: text(e, "id")?,
                    window: count(e.pointer("/limits/max_input_tokens")),
                    max_output: count(e.pointer("/limits/max_output_tokens")),
                    price: None,
                })
            });
            Some((models.collect(), None))
        }
    }
}

/// An OpenAI-style entry with what each server adds: OpenRouter's `context_length`,
/// `top_provider.max_completion_tokens` and per-token `pricing`; vLLM's `max_model_len`;
/// llama-server's `meta.n_ctx` (the window it runs with, not `n_ctx_train`).
fn openai_entry(entry: &Value) -> Option<ListedModel> {
    let id = entry.get("id")?.as_str()?.trim();
    if id.is_empty() {
        return None;
    }
    let count = |pointer: &str| {
        entry
            .pointer(pointer)
            .and_then(Value::as_u64)
            .filter(|n| *n > 0)
    };
    let window = count("/context_length")
        .or_else(|| count("/top_provider/context_length"))
        .or_else(|| count("/max_model_len"))
        .or_else(|| count("/meta/n_ctx"))
        .or_else(|| count("/context_window"));
    Some(ListedModel {
        id: id.to_string(),
        window,
        max_output: count("/top_provider/max_completion_tokens"),
        price: openrouter_price(entry),
    })
}

/// OpenRouter's `pricing.prompt` / `pricing.completion` (and `input_cache_read` /
/// `input_cache_write`): USD per token as decimal strings; `-1` marks a router whose price
/// varies, which has no price.
fn openrouter_price(entry: &Value) -> Option<ListedPrice> {
    let per_million = |key: &str| {
        let value = entry.pointer(&format!("/pricing/{key}"))?;
        let per_token = match value {
            Value::String(s) => s.trim().parse::<f64>().ok()?,
            Value::Number(n) => n.as_f64()?,
            _ => return None,
        };
        (per_token.is_finite() && per_token >= 0.0).then_some(per_token * 1_000_000.0)
    };
    Some(ListedPrice {
        input: per_million("prompt")?,
        output: per_million("completion")?,
        cache_read: per_million("input_cache_read"),
        cache_write: per_million("input_cache_write"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ids(models: &[ListedModel]) -> Vec<&str> {
        models.iter().map(|m| m.id.as_str()).collect()
    }

    #[test]
    fn each_shape_reads_ids_windows_and_prices() {
        let openrouter = json!({"data": [
            {"id": "anthropic/claude-sonnet-4.5", "context_length": 1_000_000,
             "pricing": {"prompt": "0.000003", "completion": "0.000015", "input_cache_read": "0.0000003"},
             "top_provider": {"context_length": 1_000_000, "max_completion_tokens": 64000}},
            {"id": "openrouter/auto", "context_length": 2_000_000,
             "pricing": {"prompt": "-1", "completion": "-1"}},
            {"id": ""}
        ]});
        let (models, next) = parse_page(ListShape::OpenAi, &openrouter).unwrap();
        assert_eq!(next, None);
        assert_eq!(
            ids(&models),
            ["anthropic/claude-sonnet-4.5", "openrouter/auto"]
        );
        assert_eq!(models[0].window, Some(1_000_000));
        assert_eq!(models[0].max_output, Some(64000));
        let price = models[0].price.unwrap();
        assert!((price.input - 3.0).abs() < 1e-9 && (price.output - 15.0).abs() < 1e-9);
        assert!((price.cache_read.unwrap() - 0.3).abs() < 1e-9);
        assert_eq!(price.cache_write, None);
        assert_eq!(models[1].price, None, "a varying router price is no price");

        let anthropic = json!({"data": [
            {"id": "claude-opus-4-7", "type": "model", "max_input_tokens": 200000, "max_tokens": 128000},
            {"id": "claude-haiku-4-5", "type": "model"}
        ], "has_more": true, "last_id": "claude-haiku-4-5"});
        let (models, next) = parse_page(ListShape::Anthropic, &anthropic).unwrap();
        assert_eq!(ids(&models), ["claude-opus-4-7", "claude-haiku-4-5"]);
        assert_eq!(
            (models[0].window, models[0].max_output),
            (Some(200000), Some(128000))
        );
        assert_eq!(models[1].window, None);
        assert_eq!(next.as_deref(), Some("claude-haiku-4-5"));
        let last = json!({"data": [], "has_more": false, "last_id": null});
        assert_eq!(parse_page(ListShape::Anthropic, &last).unwrap().1, None);

        let gemini = json!({"models": [
            {"name": "models/gemini-2.5-pro", "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
             "supportedGenerationMethods": ["generateContent", "countTokens"]},
            {"name": "models/text-embedding-004", "supportedGenerationMethods": ["embedContent"]}
        ], "nextPageToken": "abc"});
        let (models, next) = parse_page(ListShape::Gemini, &gemini).unwrap();
        assert_eq!(
            ids(&models),
            ["gemini-2.5-pro"],
            "embedding models are not offered"
        );
        assert_eq!(models[0].window, Some(1048576));
        assert_eq!(next.as_deref(), Some("abc"));

        let ollama = json!({"models": [{"name": "qwen3:8b", "model": "qwen3:8b"}]});
        assert_eq!(
            ids(&parse_page(ListShape::Ollama, &ollama).unwrap().0),
            ["qwen3:8b"]
        );

        let github = json!([{"id": "openai/gpt-4.1", "limits": {"max_input_tokens": 1048576, "max_output_tokens": 32768}}]);
        let (models, _) = parse_page(ListShape::GithubCatalog, &github).unwrap();
        assert_eq!(models[0].window, Some(1048576));

        let llama =
            json!({"data": [{"id": "smol.gguf", "meta": {"n_ctx": 4096, "n_ctx_train": 8192}}]});
        let (models, _) = parse_page(ListShape::OpenAi, &llama).unwrap();
        assert_eq!(models[0].window, Some(4096), "the window it runs with");
    }

    #[test]
    fn a_page_of_another_shape_is_no_list() {
        assert_eq!(
            parse_page(ListShape::OpenAi, &json!({"error": "nope"})),
            None
        );
        assert_eq!(
            parse_page(ListShape::GithubCatalog, &json!({"data": []})),
            None
        );
    }

    #[test]
    fn pages_ask_for_the_largest_page_and_escape_the_cursor() {
        let request = ListRequest {
            provider: "googleai".into(),
            url: "https://example.test/v1beta/models".into(),
            headers: vec![("x-goog-api-key".into(), "secret".into())],
            shape: ListShape::Gemini,
        };
        assert_eq!(
            page_url(&request, Some("a b/c")),
            "https://example.test/v1beta/models?pageSize=1000&pageToken=a%20b%2Fc"
        );
        assert!(
            !format!("{request:?}").contains("secret"),
            "the key is never printed"
        );
    }
}
