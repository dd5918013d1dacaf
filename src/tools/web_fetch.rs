//! `web_fetch`: a web page as readable text, without flooding the context.
//!
//! GET with a 30 s timeout, at most 5 redirects, a body cap of 10 MB; HTML becomes text with
//! html2text (scripts and styles dropped), other bodies are decoded by their charset. `filter`,
//! `exclude` and `from_line`/`to_line` select lines before truncation at `max_length` characters.
//! The point of the tool: when no selection is given and the text is larger than
//! `CHATCLI_WEBFETCH_AUTOSAVE_BYTES` (10,000), the whole text goes to a file in the scratch
//! directory and the model gets a short preview and the path, in a fixed four-line shape, so a
//! 140 KB page costs a few thousand tokens instead of tens of thousands, on every later request
//! too. Cloud metadata addresses are refused, before and after DNS and at every redirect.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::{FutureExt, StreamExt};
use serde_json::{Value, json};

use super::{
    Tool, ToolContext, ToolError, ToolOutput, optional_bool, optional_str, optional_usize,
    required_str, take_chars,
};
use crate::conversation::ToolSpec;

/// Default auto-save threshold, in bytes of extracted text.
pub const DEFAULT_AUTOSAVE_BYTES: usize = 10_000;
/// Default `max_length`, in characters.
pub const DEFAULT_MAX_LENGTH: usize = 20_000;
/// Characters of preview returned with an auto-saved body (cut at a line boundary).
pub const PREVIEW_CHARS: usize = 5_000;
const BODY_CAP: usize = 10 * 1024 * 1024;
const TIMEOUT: Duration = Duration::from_secs(30);
const MAX_REDIRECTS: usize = 5;

/// The `web_fetch` tool.
pub struct WebFetch;

impl Tool for WebFetch {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "web_fetch".into(),
            description: "Fetch a URL as text. Large pages are saved to a file and previewed; narrow with filter (regex), exclude, from_line/to_line.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "url": {"type": "string"},
                    "max_length": {"type": "integer", "description": "characters, default 20000"},
                    "filter": {"type": "string"},
                    "exclude": {"type": "string"},
                    "from_line": {"type": "integer"},
                    "to_line": {"type": "integer"},
                    "save_to_file": {"type": "boolean"},
                    "raw": {"type": "boolean"}
                },
                "required": ["url"]
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
            let url = required_str(args, "url")?;
            let raw = optional_bool(args, "raw");
            let text = fetch_text(url, raw).await?;
            shape(&text, args, ctx, url)
        }
        .boxed()
    }
}

/// Whether an address is a cloud metadata endpoint (or in the link-local range they live in).
pub fn is_metadata_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            (o[0] == 169 && o[1] == 254) || o == [100, 100, 100, 200]
        }
        IpAddr::V6(v6) => {
            v6.segments() == [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254]
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6
                    .to_ipv4_mapped()
                    .is_some_and(|v4| is_metadata_ip(IpAddr::V4(v4)))
        }
    }
}

fn metadata_host(url: &reqwest::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "metadata.google.internal"
                || d == "metadata"
                || d == "instance-data"
                || d == "metadata.azure.internal"
        }
        Some(url::Host::Ipv4(ip)) => is_metadata_ip(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => is_metadata_ip(IpAddr::V6(ip)),
        None => false,
    }
}

fn refused(url: &str) -> ToolError {
    ToolError::Failed(format!(
        "refused: {url} is a cloud metadata address, which tools may not reach"
    ))
}

/// Fetches `url` and returns its text: HTML converted unless `raw`.
pub async fn fetch_text(url: &str, raw: bool) -> Result<String, ToolError> {
    let parsed = reqwest::Url::parse(url)
        .map_err(|e| ToolError::InvalidArgs(format!("bad url {url}: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ToolError::InvalidArgs(format!(
            "only http and https URLs can be fetched (got {url})"
        )));
    }
    if metadata_host(&parsed) {
        return Err(refused(url));
    }
    let mut builder = reqwest::Client::builder()
        .timeout(TIMEOUT)
        .user_agent(concat!("chatcli/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            if attempt.previous().len() >= MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else if metadata_host(attempt.url()) {
                attempt.error("redirected to a cloud metadata address")
            } else {
                attempt.follow()
            }
        }));
    // Resolve once, check every address, and pin the connection to what was checked.
    if let Some(url::Host::Domain(host)) = parsed.host() {
        let port = parsed.port_or_known_default().unwrap_or(80);
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| ToolError::Failed(format!("cannot resolve {host}: {e}")))?
            .collect();
        if addrs.iter().any(|a| is_metadata_ip(a.ip())) {
            return Err(refused(url));
        }
        builder = builder.resolve_to_addrs(host, &addrs);
    }
    let client = builder
        .build()
        .map_err(|e| ToolError::Failed(format!("cannot set up the HTTP client: {e}")))?;
    let response = client.get(parsed.clone()).send().await.map_err(|e| {
        let reason = if e.is_timeout() {
            "timed out after 30 s".to_string()
        } else {
            e.to_string()
        };
        ToolError::Failed(format!("fetching {url} failed: {reason}"))
    })?;
    let status = response.status();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| ToolError::Failed(format!("reading {url} failed: {e}")))?;
        let room = BODY_CAP.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if room <= chunk.len() {
            break;
        }
    }
    let text = decode(&body, &content_type);
    if !status.is_success() {
        let first = text
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default();
        return Err(ToolError::Failed(format!(
            "HTTP {} from {url}: {}",
            status.as_u16(),
            take_chars(first.trim(), 200).0
        )));
    }
    let looks_html = content_type.contains("html")
        || (content_type.is_empty()
            && text.trim_start().get(..15).is_some_and(|s| {
                s.to_ascii_lowercase().starts_with("<!doctype html")
                    || s.to_ascii_lowercase().starts_with("<html")
            }));
    if raw || !looks_html {
        return Ok(text);
    }
    html2text::config::plain()
        .string_from_read(text.as_bytes(), 160)
        .map_err(|e| ToolError::Failed(format!("cannot read the HTML of {url}: {e}")))
}

/// Decodes a body by the charset its content type names (UTF-8 otherwise); bad bytes become U+FFFD.
fn decode(body: &[u8], content_type: &str) -> String {
    let label = content_type
        .split(';')
        .filter_map(|p| p.trim().strip_prefix("charset="))
        .next()
        .map(|l| l.trim_matches('"'));
    let encoding = label
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

fn compile(args: &Value, name: &str) -> Result<Option<regex::Regex>, ToolError> {
    optional_str(args, name)
        .map(|p| {
            regex::Regex::new(p)
                .map_err(|e| ToolError::InvalidArgs(format!("bad `{name}` regex: {e}")))
        })
        .transpose()
}

/// Applies selection, auto-save and truncation to fetched text.
pub fn shape(
    text: &str,
    args: &Value,
    ctx: &ToolContext,
    url: &str,
) -> Result<ToolOutput, ToolError> {
    let filter = compile(args, "filter")?;
    let exclude = compile(args, "exclude")?;
    let from = optional_usize(args, "from_line")?;
    let to = optional_usize(args, "to_line")?;
    let save = optional_bool(args, "save_to_file");
    let max_length = optional_usize(args, "max_length")?
        .unwrap_or(ctx.web.default_max_length)
        .max(100);
    let selecting = filter.is_some() || exclude.is_some() || from.is_some() || to.is_some();

    if save || (!selecting && text.len() > ctx.web.autosave_bytes) {
        let path = ctx
            .scratch
            .save("webfetch", "txt", text.as_bytes())
            .map_err(|e| ToolError::Failed(format!("cannot save the body of {url}: {e}")))?;
        let preview = preview(text, PREVIEW_CHARS);
        let header = if save { "saved" } else { "auto-saved" };
        let reason = if save {
            "as asked"
        } else {
            "too large to inline"
        };
        let out = format!(
            "[{header}: response was {} bytes — {reason}.\n Full body is at {}.\n Preview below; use read_file with start/end or rerun with\n filter/from_line/to_line for specific ranges.]\n\n{preview}\n...(auto-truncated — full body saved to disk)",
            text.len(),
            path.display()
        );
        return Ok(ToolOutput {
            text: out,
            saved_path: Some(path),
            ..ToolOutput::default()
        });
    }

    let selected: String = if selecting {
        let first = from.unwrap_or(1).max(1);
        let last = to.unwrap_or(usize::MAX);
        text.lines()
            .enumerate()
            .filter(|(i, _)| (first..=last).contains(&(i + 1)))
            .filter(|(_, l)| filter.as_ref().is_none_or(|f| f.is_match(l)))
            .filter(|(_, l)| exclude.as_ref().is_none_or(|x| !x.is_match(l)))
            .map(|(_, l)| l)
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        text.to_string()
    };
    if selected.trim().is_empty() {
        return Ok(ToolOutput::text("(no lines matched the selection)"));
    }
    let (head, cut) = take_chars(&selected, max_length);
    let mut out = head.to_string();
    if cut {
        let rest = selected.chars().count() - max_length;
        out.push_str(&format!(
            "\n...(truncated: {rest} more characters; narrow with filter or from_line/to_line)"
        ));
    }
    Ok(ToolOutput::text(out))
}

/// The first `max` characters, cut back to the last line break when one is in the second half.
pub fn preview(text: &str, max: usize) -> &str {
    let (head, cut) = take_chars(text, max);
    if !cut {
        return head;
    }
    match head.rfind('\n') {
        Some(i) if i >= head.len() / 2 => &head[..i],
        _ => head,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_addresses_are_recognised() {
        assert!(is_metadata_ip("169.254.169.254".parse().expect("ip")));
        assert!(is_metadata_ip("fd00:ec2::254".parse().expect("ip")));
        assert!(is_metadata_ip(
            "::ffff:169.254.169.254".parse().expect("ip")
        ));
        assert!(!is_metadata_ip("127.0.0.1".parse().expect("ip")));
        assert!(metadata_host(
            &reqwest::Url::parse("http://metadata.google.internal/x").expect("url")
        ));
    }

    #[test]
    fn decoding_follows_the_charset() {
        assert_eq!(
            decode(&[0x63, 0x61, 0x66, 0xe9], "text/plain; charset=iso-8859-1"),
            "café"
        );
        assert_eq!(decode(&[0x63, 0xff], "text/plain"), "c\u{fffd}");
    }

    #[test]
    fn previews_cut_at_a_line_boundary_and_never_inside_a_character() {
        let text = "é".repeat(30) + "\n" + &"ü".repeat(30);
        assert_eq!(preview(&text, 40), "é".repeat(30));
        assert_eq!(preview("short", 40), "short");
    }
}
