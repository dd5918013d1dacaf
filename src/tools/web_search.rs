//! `web_search`: a compact numbered list of results, from the first backend that answers.
//!
//! Backends, tried in order: a SearXNG instance (`CHATCLI_SEARXNG_URL`, its JSON API) and the
//! Brave Search API (`BRAVE_SEARCH_API_KEY`) when configured, then DuckDuckGo's HTML endpoint,
//! which needs no account and is always last. A backend that fails (network, HTTP status, a bot
//! check, no results) falls through to the next, with the reason logged; only when every backend
//! failed does the model see the reasons. Each base URL can be overridden
//! (`CHATCLI_WEBSEARCH_DDG_URL`, `CHATCLI_WEBSEARCH_SEARXNG_URL`, `CHATCLI_WEBSEARCH_BRAVE_URL`)
//! so tests run against a local server. The DuckDuckGo page is HTML meant for browsers: its
//! parser reads the `result__a` links (unwrapping the `/l/?uddg=` redirect) and the
//! `result__snippet` that follows each, and skips ads (`/y.js` links).

use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolOutput, optional_usize, required_str, take_chars};
use crate::conversation::ToolSpec;

/// One place searches can go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchBackend {
    /// DuckDuckGo's HTML endpoint at this base URL (no key).
    DuckDuckGo { base_url: String },
    /// A SearXNG instance at this base URL.
    Searxng(String),
    /// The Brave Search API with this key, at this base URL.
    Brave { key: String, base_url: String },
}

impl SearchBackend {
    /// The backend's name, for logs and errors.
    pub fn name(&self) -> &'static str {
        match self {
            SearchBackend::DuckDuckGo { .. } => "DuckDuckGo",
            SearchBackend::Searxng(_) => "SearXNG",
            SearchBackend::Brave { .. } => "Brave",
        }
    }

    /// DuckDuckGo at its public address: the backend that needs no configuration.
    pub fn duckduckgo() -> SearchBackend {
        SearchBackend::DuckDuckGo {
            base_url: DDG_BASE_URL.to_string(),
        }
    }
}

/// Brave's public endpoint.
pub const BRAVE_BASE_URL: &str = "https://api.search.brave.com";
/// DuckDuckGo's HTML endpoint.
pub const DDG_BASE_URL: &str = "https://html.duckduckgo.com";

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
            let max = optional_usize(args, "max_results")?
                .unwrap_or(5)
                .clamp(1, 20);
            let results = search(&ctx.web.search, query, max).await?;
            Ok(ToolOutput::text(format_results(&results, max)))
        }
        .boxed()
    }
}

/// Asks each backend in turn until one returns results; an empty list when every backend
/// answered with none, an error naming each failure otherwise.
pub async fn search(
    backends: &[SearchBackend],
    query: &str,
    max: usize,
) -> Result<Vec<Hit>, ToolError> {
    if backends.is_empty() {
        return Err(ToolError::Failed(
            "web_search has no backend: set CHATCLI_SEARXNG_URL or BRAVE_SEARCH_API_KEY, or leave DuckDuckGo on".into(),
        ));
    }
    let mut failures = Vec::new();
    for backend in backends {
        let result = match backend {
            SearchBackend::DuckDuckGo { base_url } => duckduckgo(base_url, query).await,
            SearchBackend::Searxng(base) => searxng(base, query).await,
            SearchBackend::Brave { key, base_url } => brave(base_url, key, query, max).await,
        };
        match result {
            Ok(hits) if !hits.is_empty() => return Ok(hits),
            Ok(_) => {
                tracing::info!(
                    backend = backend.name(),
                    "web_search: no results, trying the next backend"
                );
                failures.push(None);
            }
            Err(e) => {
                tracing::warn!(backend = backend.name(), reason = %e, "web_search: backend failed, trying the next");
                failures.push(Some(format!("{}: {e}", backend.name())));
            }
        }
    }
    let reasons: Vec<String> = failures.into_iter().flatten().collect();
    if reasons.len() < backends.len() {
        // At least one backend answered, with nothing.
        return Ok(Vec::new());
    }
    Err(ToolError::Failed(format!(
        "web search failed on every backend: {}",
        reasons.join("; ")
    )))
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
            "HTTP {}: {}",
            status.as_u16(),
            crate::provider::http::error_message(&text)
        )));
    }
    serde_json::from_str(&text)
        .map_err(|e| ToolError::Failed(format!("the answer is not JSON: {e}")))
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

async fn duckduckgo(base: &str, query: &str) -> Result<Vec<Hit>, ToolError> {
    let url = format!("{}/html/", base.trim_end_matches('/'));
    let response = client()?
        .get(url)
        .query(&[("q", query)])
        // The HTML endpoint serves browsers; an unknown agent gets the bot check more often.
        .header("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) chatcli")
        .header("Accept", "text/html")
        .send()
        .await
        .map_err(|e| ToolError::Failed(format!("request failed: {e}")))?;
    let status = response.status();
    let html = response.text().await.unwrap_or_default();
    // DuckDuckGo answers a suspected bot with 202 and a CAPTCHA page.
    if status.as_u16() == 202 || html.contains("anomaly-modal") {
        return Err(ToolError::Failed(
            "DuckDuckGo asked for a bot check (CAPTCHA); try again later or configure SearXNG/Brave".into(),
        ));
    }
    if !status.is_success() {
        return Err(ToolError::Failed(format!("HTTP {}", status.as_u16())));
    }
    Ok(parse_duckduckgo(&html))
}

/// The results of a DuckDuckGo HTML page, ads left out.
pub fn parse_duckduckgo(html: &str) -> Vec<Hit> {
    let mut hits = Vec::new();
    let starts: Vec<usize> = html
        .match_indices("class=\"result__a\"")
        .map(|(i, _)| i)
        .collect();
    for (n, &at) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(html.len());
        // The opening `<a` of this link.
        let Some(tag_start) = html.get(..at).and_then(|before| before.rfind("<a")) else {
            continue;
        };
        let Some((tag, body)) = html.get(tag_start..).and_then(|from| from.split_once('>')) else {
            continue;
        };
        let Some(href) = attribute(tag, "href") else {
            continue;
        };
        let Some(url) = result_url(&decode_entities(href)) else {
            continue;
        };
        let title = body.split_once("</a>").map_or("", |(title, _)| title);
        let title_end = tag_start + tag.len() + 1 + title.len();
        let title = decode_entities(&strip_tags(title));
        // The snippet is looked for between the title and the next result; in a broken page the
        // title's `</a>` can be past the next result, and then there is no snippet.
        let snippet = html
            .get(title_end..end)
            .and_then(|between| {
                let (_, snippet) = between.split_once("class=\"result__snippet")?;
                let (_, text) = snippet.split_once('>')?;
                let close = ["</a>", "</div>", "</td>"]
                    .iter()
                    .filter_map(|c| text.find(c))
                    .min()
                    .unwrap_or(text.len());
                Some(decode_entities(&strip_tags(text.get(..close)?)))
            })
            .unwrap_or_default();
        if !hits.iter().any(|h: &Hit| h.url == url) {
            hits.push(Hit {
                title,
                url,
                snippet,
            });
        }
    }
    hits
}

fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("{name}=\"");
    let (_, from) = tag.split_once(&key)?;
    let (value, _) = from.split_once('"')?;
    Some(value)
}

/// The address a result link leads to: DuckDuckGo's `/l/?uddg=` redirect unwrapped, ads
/// (`/y.js`) and anything that is not http(s) dropped.
fn result_url(href: &str) -> Option<String> {
    let absolute = if href.starts_with("//") {
        format!("https:{href}")
    } else {
        href.to_string()
    };
    let parsed = url::Url::parse(&absolute).ok()?;
    let on_ddg = parsed
        .host_str()
        .is_some_and(|h| h == "duckduckgo.com" || h.ends_with(".duckduckgo.com"));
    if on_ddg {
        if parsed.path() == "/y.js" {
            return None;
        }
        let target = parsed
            .query_pairs()
            .find(|(k, _)| k == "uddg")
            .map(|(_, v)| v.into_owned())?;
        return result_url(&target);
    }
    matches!(parsed.scheme(), "http" | "https").then(|| parsed.to_string())
}

/// The HTML entities a results page (or any page) uses, decoded: named ones a page commonly
/// holds and every numeric one; anything else is left as written.
pub fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((before, after)) = rest.split_once('&') {
        out.push_str(before);
        // An entity is short: look for its `;` among the next few characters, never slicing
        // inside one (`R&D ééééé` has no `;` and accented letters right after the `&`).
        let Some((entity, tail)) = after
            .char_indices()
            .take(11)
            .find(|(_, c)| *c == ';')
            .and_then(|(i, _)| Some((after.get(..i)?, after.get(i + 1..)?)))
        else {
            out.push('&');
            rest = after;
            continue;
        };
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some(' '),
            "mdash" => Some('—'),
            "ndash" => Some('–'),
            "hellip" => Some('…'),
            "lsquo" => Some('‘'),
            "rsquo" => Some('’'),
            "ldquo" => Some('“'),
            "rdquo" => Some('”'),
            _ => entity
                .strip_prefix("#x")
                .or_else(|| entity.strip_prefix("#X"))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = tail;
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

async fn searxng(base: &str, query: &str) -> Result<Vec<Hit>, ToolError> {
    let url = format!("{}/search", base.trim_end_matches('/'));
    let request = client()?
        .get(url)
        .query(&[("q", query), ("format", "json")]);
    let body = get_json(request, "request").await?;
    Ok(hits(
        body.get("results").and_then(Value::as_array),
        "content",
    ))
}

async fn brave(base: &str, key: &str, query: &str, max: usize) -> Result<Vec<Hit>, ToolError> {
    let url = format!("{}/res/v1/web/search", base.trim_end_matches('/'));
    let request = client()?
        .get(url)
        .query(&[("q", query), ("count", &max.to_string())])
        .header("Accept", "application/json")
        .header("X-Subscription-Token", key);
    let body = get_json(request, "request").await?;
    Ok(hits(
        body.pointer("/web/results").and_then(Value::as_array),
        "description",
    ))
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
    fn entities_next_to_accented_text_decode_without_panicking() {
        assert_eq!(decode_entities("R&D ééééé"), "R&D ééééé");
        assert_eq!(decode_entities("&ééééééé;"), "&ééééééé;");
        assert_eq!(decode_entities("a &amp; b &#233; &#x41;"), "a & b é A");
        assert_eq!(decode_entities("&"), "&");
    }

    #[test]
    fn a_results_page_gives_titles_links_and_snippets() {
        let html = concat!(
            r#"<div class="result"><a rel="nofollow" class="result__a" "#,
            r#"href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2Fcaf%C3%A9&amp;rut=x">"#,
            r#"Café <b>crème</b></a><a class="result__snippet" href="x">Un café "#,
            r#"<b>noir</b>, s&apos;il vous plaît</a></div>"#,
            r#"<a class="result__a" href="https://duckduckgo.com/y.js?ad=1">Ad</a>"#,
            r#"<div class="result"><a class="result__a" href="https://example.org/">Zweite Überschrift</a>"#,
            r#"<div class="result__snippet">Grüße</div></div>"#,
        );
        let hits = parse_duckduckgo(html);
        let found: Vec<_> = hits
            .iter()
            .map(|h| (h.title.as_str(), h.url.as_str(), h.snippet.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    "Café crème",
                    "https://example.com/caf%C3%A9",
                    "Un café noir, s'il vous plaît"
                ),
                ("Zweite Überschrift", "https://example.org/", "Grüße"),
            ]
        );
    }

    #[test]
    fn a_result_whose_link_never_closes_before_the_next_does_not_panic() {
        // The first title's `</a>` is the second result's: it lies past where the first result
        // ends, which used to slice `html[title_end..end]` with `title_end > end`.
        let html = concat!(
            r#"<a class="result__a" href="https://example.com/é">Café "#,
            r#"<a class="result__a" href="https://example.org/">Thé</a>"#,
            r#"<div class="result__snippet">Grüße</div>"#,
        );
        let hits = parse_duckduckgo(html);
        let urls: Vec<_> = hits.iter().map(|h| h.url.as_str()).collect();
        assert_eq!(urls, ["https://example.com/%C3%A9", "https://example.org/"]);
        assert_eq!(hits[0].snippet, "");
        assert_eq!(hits[1].snippet, "Grüße");
    }

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
