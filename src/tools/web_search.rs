//! `web_search`: a compact numbered list of results from a configured backend.
//!
//! Backends: a SearXNG instance (`CHATCLI_SEARXNG_URL`, its JSON API) or the Brave Search API
//! (`BRAVE_SEARCH_API_KEY`). With neither, the tool answers plainly that search is not set up,
//! naming both variables, instead of failing obscurely.

use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolOutput, optional_usize, required_str, take_chars};
use crate::conversation::ToolSpec;

/// Where searches go.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SearchBackend {
    /// Not configured.
    #[default]
    None,
    /// A SearXNG instance at this base URL.
    Searxng(String),
    /// The Brave Search API with this key, at this base URL.
    Brave { key: String, base_url: String },
}

/// Brave's public endpoint.
pub const BRAVE_BASE_URL: &str = "https://api.search.brave.com";

/// The `web_search` tool.
pub struct WebSearch;

impl Tool for WebSearch {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "web_search".into(),
            description: "Search the web; returns numbered results (title, URL, snippet).".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "max_results": {"type": "integer", "description": "default 5"}
                },
                "required": ["query"]
            }),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn run<'a>(
        &'a self,
        args: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        async move {
            let query = required_str(args, "query")?;
            let max = optional_usize(args, "max_results")?.unwrap_or(5).clamp(1, 20);
            let results = match &ctx.web.search {
                SearchBackend::None => {
                    return Err(ToolError::Failed(
                        "web_search is not configured: set CHATCLI_SEARXNG_URL (a SearXNG instance) or BRAVE_SEARCH_API_KEY".into(),
                    ));
                }
                SearchBackend::Searxng(base) => searxng(base, query).await?,
                SearchBackend::Brave { key, base_url } => brave(base_url, key, query, max).await?,
            };
            Ok(ToolOutput::text(format_results(&results, max)))
        }
        .boxed()
    }
}

/// One result: title, URL, snippet.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

fn client() -> Result<reqwest::Client, ToolError> {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .map_err(|e| ToolError::Failed(format!("cannot set up the HTTP client: {e}")))
}

async fn get_json(request: reqwest::RequestBuilder, what: &str) -> Result<Value, ToolError> {
    let response = request
        .send()
        .await
        .map_err(|e| ToolError::Failed(format!("{what} failed: {e}")))?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    if !status.is_success() {
        return Err(ToolError::Failed(format!(
            "{what} returned HTTP {}: {}",
            status.as_u16(),
            crate::provider::http::error_message(&text)
        )));
    }
    serde_json::from_str(&text)
        .map_err(|e| ToolError::Failed(format!("{what} sent something that is not JSON: {e}")))
}

fn hits(items: Option<&Vec<Value>>, snippet_key: &str) -> Vec<Hit> {
    items
        .into_iter()
        .flatten()
        .map(|r| Hit {
            title: r["title"].as_str().unwrap_or_default().to_string(),
            url: r["url"].as_str().unwrap_or_default().to_string(),
            snippet: strip_tags(r[snippet_key].as_str().unwrap_or_default()),
        })
        .filter(|h| !h.url.is_empty())
        .collect()
}

async fn searxng(base: &str, query: &str) -> Result<Vec<Hit>, ToolError> {
    let url = format!("{}/search", base.trim_end_matches('/'));
    let request = client()?
        .get(url)
        .query(&[("q", query), ("format", "json")]);
    let body = get_json(request, "SearXNG search").await?;
    Ok(hits(body["results"].as_array(), "content"))
}

async fn brave(base: &str, key: &str, query: &str, max: usize) -> Result<Vec<Hit>, ToolError> {
    let url = format!("{}/res/v1/web/search", base.trim_end_matches('/'));
    let request = client()?
        .get(url)
        .query(&[("q", query), ("count", &max.to_string())])
        .header("Accept", "application/json")
        .header("X-Subscription-Token", key);
    let body = get_json(request, "Brave search").await?;
    Ok(hits(body["web"]["results"].as_array(), "description"))
}

fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `1. Title` / URL / snippet, at most `max` results.
pub fn format_results(results: &[Hit], max: usize) -> String {
    if results.is_empty() {
        return "no results".to_string();
    }
    results
        .iter()
        .take(max)
        .enumerate()
        .map(|(i, h)| {
            let (snippet, cut) = take_chars(&h.snippet, 300);
            format!(
                "{}. {}\n   {}\n   {}{}",
                i + 1,
                h.title,
                h.url,
                snippet,
                if cut { "…" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_compact_and_numbered() {
        let hits = vec![Hit {
            title: "Flamengo 2x1".into(),
            url: "https://example.com/a".into(),
            snippet: strip_tags("The <strong>match</strong>  ended"),
        }];
        assert_eq!(
            format_results(&hits, 5),
            "1. Flamengo 2x1\n   https://example.com/a\n   The match ended"
        );
        assert_eq!(format_results(&[], 5), "no results");
    }
}
