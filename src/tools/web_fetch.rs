//! `web_fetch`: a web page as readable text, without flooding the context.
//!
//! GET with a 30 s timeout, at most 5 redirects, a body cap of 10 MB counted after
//! decompression (gzip, brotli, deflate, zstd): a larger body streams on, as sent, into a scratch
//! file (at most 128 MiB, never held in memory) and the result's first line says what was cut
//! and where the body is (`tools::cut`); HTML becomes text with
//! html2text (scripts and styles dropped) when it is shallow and small enough for it, and by a
//! linear tag-stripping pass otherwise (html2text is quadratic in nesting depth: 100,000 nested
//! `<div>` took 41 s); other bodies are decoded by their charset. `filter`,
//! `exclude` and `from_line`/`to_line` select lines before truncation at `max_length` characters.
//! The point of the tool: when no selection is given and the text is larger than
//! `CHATCLI_WEBFETCH_AUTOSAVE_BYTES` (10,000), the whole text goes to a file in the scratch
//! directory and the model gets a short preview under a first line naming the sizes and the
//! path, so a
//! 140 KB page costs a few thousand tokens instead of tens of thousands, on every later request
//! too. Cloud metadata addresses are refused, before and after DNS and at every redirect: the
//! client's own DNS resolver (`GuardedResolver`) checks every address of every hop before a
//! connection is made and connects only to what it checked, so a redirect to a name that resolves
//! to 169.254.169.254 is refused and the result says so.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::{FutureExt, StreamExt};
use serde_json::{Value, json};

use super::cut::{Cut, count};
use super::{
    Scratch, Tool, ToolContext, ToolError, ToolOutput, optional_bool, optional_str, optional_usize,
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
/// Bytes of a body saved to the scratch folder at most when it is past the cap: a 100 MB page
/// is kept whole, while a compression bomb (40 KB on the wire) cannot fill the disk.
const MAX_SAVED_BYTES: u64 = 128 * 1024 * 1024;
const TIMEOUT: Duration = Duration::from_secs(30);
const MAX_REDIRECTS: usize = 5;
/// HTML deeper than this many nested elements, or larger than `HTML_RICH_BYTES`, is converted
/// by stripping tags instead of by html2text.
pub const HTML_MAX_DEPTH: usize = 128;
const HTML_RICH_BYTES: usize = 2 * 1024 * 1024;
/// How long html2text may take before the stripped text is used instead.
const HTML_CONVERT_LIMIT: Duration = Duration::from_secs(10);

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
            let page = fetch_page(url, raw, Arc::new(SystemLookup), Some(&ctx.scratch)).await?;
            shape(&page, args, ctx, url)
        }
        .boxed()
    }
}

/// Whether an address is a cloud metadata endpoint (or in the link-local range they live in):
/// the whole link-local range (AWS, GCP, Azure, DigitalOcean, OpenStack, Tencent and most others
/// use 169.254.169.254 or a neighbour), Oracle Cloud's 192.0.0.192, Alibaba's 100.100.100.200,
/// Azure's WireServer 168.63.129.16, AWS's IPv6 fd00:ec2::254, IPv6 link-local — and each of
/// them written as an IPv4-mapped, IPv4-compatible or NAT64 (64:ff9b::/96) IPv6 address.
pub fn is_metadata_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            (o[0] == 169 && o[1] == 254)
                || o == [100, 100, 100, 200]
                || o == [192, 0, 0, 192]
                || o == [168, 63, 129, 16]
        }
        IpAddr::V6(v6) => {
            let seg = v6.segments();
            let embedded = || {
                let [a, b] = [seg[6].to_be_bytes(), seg[7].to_be_bytes()];
                std::net::Ipv4Addr::new(a[0], a[1], b[0], b[1])
            };
            seg == [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254]
                || (seg[0] & 0xffc0) == 0xfe80
                || v6
                    .to_ipv4_mapped()
                    .is_some_and(|v4| is_metadata_ip(IpAddr::V4(v4)))
                // ::a.b.c.d (IPv4-compatible) and 64:ff9b::a.b.c.d (NAT64) reach the same host.
                || (seg[..6] == [0, 0, 0, 0, 0, 0] && is_metadata_ip(IpAddr::V4(embedded())))
                || (seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0]
                    && is_metadata_ip(IpAddr::V4(embedded())))
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
                || d == "metadata.tencentyun.com"
                || d == "metadata.platformequinix.com"
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

/// Looks a host name up; the fetch's resolver checks what it answers. A seam for tests, which
/// bring their own names.
pub trait HostLookup: Send + Sync {
    /// The addresses of `host`.
    fn lookup(&self, host: &str) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>>;
}

/// The system's resolver.
pub struct SystemLookup;

impl HostLookup for SystemLookup {
    fn lookup(&self, host: &str) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        let host = host.to_string();
        async move {
            Ok(tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .map(|a| a.ip())
                .collect())
        }
        .boxed()
    }
}

/// A name that resolved to a metadata address: the connection is never made.
#[derive(Debug, thiserror::Error)]
#[error("{host} resolves to a cloud metadata address ({ip})")]
pub struct MetadataRefused {
    pub host: String,
    pub ip: IpAddr,
}

/// reqwest's DNS resolver for web_fetch: every hop's name is resolved here, every address is
/// checked, and the connection goes only to the addresses checked.
pub struct GuardedResolver(pub Arc<dyn HostLookup>);

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let lookup = self.0.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let ips = lookup.lookup(&host).await?;
            if let Some(ip) = ips.iter().copied().find(|ip| is_metadata_ip(*ip)) {
                return Err(Box::new(MetadataRefused { host, ip }) as _);
            }
            let addrs: reqwest::dns::Addrs =
                Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// A redirect to a literal metadata address, refused by the redirect policy.
#[derive(Debug, thiserror::Error)]
#[error("redirect to a cloud metadata address ({0})")]
struct MetadataRedirect(String);

/// Why a send failed, in the words the model reads.
fn describe_send_error(url: &str, first_host: &str, e: &reqwest::Error) -> ToolError {
    use std::error::Error;
    let mut source: Option<&(dyn Error + 'static)> = Some(e);
    while let Some(inner) = source {
        if let Some(m) = inner.downcast_ref::<MetadataRefused>() {
            // The name that failed tells the hop: not the first host means a redirect led there.
            let hop = if m.host.eq_ignore_ascii_case(first_host) {
                "request"
            } else {
                "redirect"
            };
            return ToolError::Failed(format!(
                "refused: {hop} to a cloud metadata address ({}): {} resolves there, and tools may not reach it",
                m.ip, m.host
            ));
        }
        if let Some(m) = inner.downcast_ref::<MetadataRedirect>() {
            return ToolError::Failed(format!("refused: {m}"));
        }
        source = inner.source();
    }
    let reason = if e.is_timeout() {
        "timed out after 30 s".to_string()
    } else {
        let mut message = e.to_string();
        let mut source = e.source();
        while let Some(inner) = source {
            message = format!("{message}: {inner}");
            source = inner.source();
        }
        message
    };
    ToolError::Failed(format!("fetching {url} failed: {reason}"))
}

/// What a fetch read: the page's text, and the cut when the body was larger than `BODY_CAP`.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// The text of the body (of its first `BODY_CAP` bytes when it was cut).
    pub text: String,
    /// What was cut and where the body as sent is saved.
    pub cut: Option<Cut>,
    /// The scratch file holding the body as sent, when it was cut and saved.
    pub raw_saved: Option<PathBuf>,
}

/// Fetches `url` and returns its text: HTML converted unless `raw`; a body cut at the cap says
/// so in its first line.
pub async fn fetch_text(url: &str, raw: bool) -> Result<String, ToolError> {
    fetch_text_via(url, raw, Arc::new(SystemLookup)).await
}

/// `fetch_text` with names resolved by `lookup` (and checked as always).
pub async fn fetch_text_via(
    url: &str,
    raw: bool,
    lookup: Arc<dyn HostLookup>,
) -> Result<String, ToolError> {
    let page = fetch_page(url, raw, lookup, None).await?;
    Ok(match page.cut {
        Some(cut) => cut.above(&page.text),
        None => page.text,
    })
}

/// Fetches `url`: its text (HTML converted unless `raw`) from the first `BODY_CAP` bytes; a
/// larger body is streamed on into `scratch` as sent (up to `MAX_SAVED_BYTES`), never held.
pub async fn fetch_page(
    url: &str,
    raw: bool,
    lookup: Arc<dyn HostLookup>,
    scratch: Option<&Scratch>,
) -> Result<Page, ToolError> {
    let parsed = fetchable_url(url)?;
    let response = guarded_client(lookup)?
        .get(parsed.clone())
        .send()
        .await
        .map_err(|e| describe_send_error(url, parsed.host_str().unwrap_or_default(), &e))?;
    let status = response.status();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let save = scratch.filter(|_| status.is_success());
    let (body, over) = read_capped(response, url, save).await?;
    let text = decode(&body, &content_type);
    drop(body);
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
    let text = if raw || !looks_html(&content_type, &text) {
        text
    } else {
        html_to_text(text).await
    };
    Ok(Page {
        text,
        cut: over.as_ref().map(Overflow::cut),
        raw_saved: over.and_then(|o| o.saved),
    })
}

/// `url` parsed, when it is http or https and not a cloud metadata host.
fn fetchable_url(url: &str) -> Result<reqwest::Url, ToolError> {
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
    Ok(parsed)
}

/// The HTTP client of one fetch: names of every hop go through the guarded resolver; literal
/// addresses never reach a resolver, so the redirect policy checks those.
fn guarded_client(lookup: Arc<dyn HostLookup>) -> Result<reqwest::Client, ToolError> {
    reqwest::Client::builder()
        .timeout(TIMEOUT)
        .user_agent(concat!("chatcli/", env!("CARGO_PKG_VERSION")))
        .dns_resolver(Arc::new(GuardedResolver(lookup)))
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            if attempt.previous().len() >= MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else if metadata_host(attempt.url()) {
                let target = attempt
                    .url()
                    .host_str()
                    .unwrap_or_default()
                    .trim_matches(['[', ']'])
                    .to_string();
                attempt.error(MetadataRedirect(target))
            } else {
                attempt.follow()
            }
        }))
        .build()
        .map_err(|e| ToolError::Failed(format!("cannot set up the HTTP client: {e}")))
}

/// A body larger than `BODY_CAP`: how large, and where it went.
#[derive(Debug, Default)]
struct Overflow {
    /// Bytes received (all of them, unless `more`).
    total: u64,
    /// Reading stopped before the end (nothing to save to, or `MAX_SAVED_BYTES` reached).
    more: bool,
    /// The scratch file holding the body as sent (its first `MAX_SAVED_BYTES` when `more`).
    saved: Option<PathBuf>,
    /// Why it could not be saved.
    unsaved: Option<String>,
}

impl Overflow {
    /// The first line the result starts with.
    fn cut(&self) -> Cut {
        let whole = if self.more {
            format!("more than {} bytes", count(self.total))
        } else {
            format!("{} bytes", count(self.total))
        };
        let cut = Cut::showing(format!(
            "the text of the body's first {} bytes",
            count(BODY_CAP as u64)
        ))
        .of(whole);
        match (&self.saved, &self.unsaved) {
            (Some(path), _) if self.more => cut
                .saved(
                    format!("a copy of its first {} bytes, as sent,", count(self.total)),
                    path,
                )
                .read_on("read it with read_file (start/end) or search_files"),
            (Some(path), _) => cut
                .saved("the whole body, as sent,", path)
                .read_on("read it with read_file (start/end) or search_files"),
            (None, Some(why)) => cut.read_on(format!("the body could not be saved ({why})")),
            (None, None) => cut.read_on("the rest was not read"),
        }
    }
}

/// The body's first `BODY_CAP` bytes and, when there was more, what became of the rest: with
/// `save`, the whole body streams on into a scratch file (bounded by `MAX_SAVED_BYTES`) with one
/// chunk in memory. The stream yields decompressed bytes: the caps hold against a compression
/// bomb.
async fn read_capped(
    response: reqwest::Response,
    url: &str,
    save: Option<&Scratch>,
) -> Result<(Vec<u8>, Option<Overflow>), ToolError> {
    let failed = |e: reqwest::Error| ToolError::Failed(format!("reading {url} failed: {e}"));
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    let mut first_over = None;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(failed)?;
        let room = BODY_CAP.saturating_sub(body.len());
        if chunk.len() > room {
            body.extend_from_slice(chunk.get(..room).unwrap_or_default());
            first_over = Some(chunk.slice(room..));
            break;
        }
        body.extend_from_slice(&chunk);
    }
    let Some(first_over) = first_over else {
        return Ok((body, None));
    };
    let mut over = Overflow {
        total: (body.len() + first_over.len()) as u64,
        ..Overflow::default()
    };
    let Some(scratch) = save else {
        over.more = true;
        return Ok((body, Some(over)));
    };
    // The body so far, then every chunk, to the scratch file; off the runtime.
    let scratch = scratch.clone();
    let (opened, body) = tokio::task::spawn_blocking(move || {
        let opened = scratch.stream("webfetch_body", "txt").and_then(|mut file| {
            file.write(&body)?;
            file.write(&first_over)?;
            Ok(file)
        });
        (opened, body)
    })
    .await
    .map_err(|e| ToolError::Failed(format!("saving {url} failed: {e}")))?;
    let mut file = match opened {
        Ok(file) => file,
        Err(e) => {
            over.more = true;
            over.unsaved = Some(e.to_string());
            return Ok((body, Some(over)));
        }
    };
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(failed)?;
        if over.total + chunk.len() as u64 > MAX_SAVED_BYTES {
            over.more = true;
            break;
        }
        over.total += chunk.len() as u64;
        let written = tokio::task::spawn_blocking(move || {
            let result = file.write(&chunk);
            (file, result)
        })
        .await
        .map_err(|e| ToolError::Failed(format!("saving {url} failed: {e}")))?;
        file = written.0;
        if let Err(e) = written.1 {
            over.more = true;
            over.unsaved = Some(e.to_string());
            return Ok((body, Some(over)));
        }
    }
    match tokio::task::spawn_blocking(move || file.finish()).await {
        Ok(Ok(path)) => over.saved = Some(path),
        Ok(Err(e)) => over.unsaved = Some(e.to_string()),
        Err(e) => over.unsaved = Some(e.to_string()),
    }
    Ok((body, Some(over)))
}

/// Whether a body is HTML: by its content type, or by how it starts when it has none.
fn looks_html(content_type: &str, text: &str) -> bool {
    content_type.contains("html")
        || (content_type.is_empty()
            && text.trim_start().get(..15).is_some_and(|s| {
                s.to_ascii_lowercase().starts_with("<!doctype html")
                    || s.to_ascii_lowercase().starts_with("<html")
            }))
}

/// HTML as text: html2text for pages it handles in reasonable time, tag stripping for pages too
/// deep or too large for it (and for any that still takes longer than `HTML_CONVERT_LIMIT`).
pub async fn html_to_text(html: String) -> String {
    if html.len() > HTML_RICH_BYTES || nesting_depth(&html) > HTML_MAX_DEPTH {
        return strip_tags(&html);
    }
    let shared = Arc::new(html);
    let input = shared.clone();
    let converted = tokio::task::spawn_blocking(move || {
        html2text::config::plain().string_from_read(input.as_bytes(), 160)
    });
    match tokio::time::timeout(HTML_CONVERT_LIMIT, converted).await {
        Ok(Ok(Ok(text))) => text,
        _ => strip_tags(&shared),
    }
}

/// Elements that never hold others (no closing tag).
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

/// The deepest element nesting in `html`, by a linear scan of its tags (an estimate: unclosed
/// `<p>` and `<li>` count as open, which only errs towards stripping).
pub fn nesting_depth(html: &str) -> usize {
    let bytes = html.as_bytes();
    let (mut depth, mut deepest, mut i) = (0usize, 0usize, 0usize);
    let from = |at: usize| bytes.get(at..).unwrap_or_default();
    while let Some(offset) = from(i).iter().position(|b| *b == b'<') {
        i += offset + 1;
        let closing = bytes.get(i) == Some(&b'/');
        let start = i + usize::from(closing);
        let end = from(start)
            .iter()
            .position(|b| !b.is_ascii_alphanumeric())
            .map_or(bytes.len(), |n| start + n);
        if end == start {
            continue;
        }
        let name = html
            .get(start..end)
            .unwrap_or_default()
            .to_ascii_lowercase();
        let after_name = from(end);
        let self_closing = after_name
            .iter()
            .position(|b| *b == b'>')
            .is_some_and(|n| n > 0 && after_name.get(n - 1) == Some(&b'/'));
        if closing {
            depth = depth.saturating_sub(1);
        } else if !self_closing && !VOID.contains(&name.as_str()) {
            depth += 1;
            deepest = deepest.max(depth);
        }
        i = end;
    }
    deepest
}

/// Text of `html` by dropping tags (and the content of `script`, `style`, `head`'s `title`
/// aside), decoding the common entities and collapsing blank runs; linear in the input.
pub fn strip_tags(html: &str) -> String {
    // Only ASCII letters change case, so `lower` has the byte layout of `html`: an offset found
    // in one is a character boundary in both.
    let lower = html.to_ascii_lowercase();
    let mut out = String::with_capacity(html.len() / 2);
    let mut i = 0;
    while let Some(from) = html.get(i..).filter(|rest| !rest.is_empty()) {
        let Some((text, _)) = from.split_once('<') else {
            out.push_str(from);
            break;
        };
        out.push_str(text);
        i += text.len();
        // What follows the `<`.
        let rest = lower.get(i + 1..).unwrap_or_default();
        let skip_to = ["script", "style", "noscript", "template"]
            .iter()
            .find(|t| {
                rest.strip_prefix(**t)
                    .and_then(|after| after.chars().next())
                    .is_some_and(|c| c == '>' || c.is_whitespace())
            })
            .map(|t| format!("</{t}"));
        if let Some(close) = skip_to {
            i = match lower.get(i..).and_then(|rest| rest.find(&close)) {
                Some(n) => i + n + close.len(),
                None => html.len(),
            };
        }
        let end = match html.get(i..).and_then(|rest| rest.find('>')) {
            Some(n) => i + n + 1,
            None => html.len(),
        };
        let tag = lower.get(i..end).unwrap_or_default();
        let block = [
            "<p", "</p", "<div", "</div", "<br", "<li", "<h", "</h", "<tr", "</tr",
        ]
        .iter()
        .any(|t| tag.starts_with(t));
        if block {
            out.push('\n');
        } else {
            out.push(' ');
        }
        i = end.max(i + 1);
    }
    // One entity decoder for every page (web_search's), not a second one that disagrees.
    let decoded = super::web_search::decode_entities(&out);
    let mut text = String::with_capacity(decoded.len());
    let mut blank = true;
    for line in decoded.lines() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.is_empty() {
            if !blank {
                text.push('\n');
            }
            blank = true;
        } else {
            text.push_str(&line);
            text.push('\n');
            blank = false;
        }
    }
    text
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

/// Applies selection, auto-save and truncation to a fetched page; whatever was cut is said in
/// the first line (the body's cap first, then the preview's or `max_length`'s).
pub fn shape(
    page: &Page,
    args: &Value,
    ctx: &ToolContext,
    url: &str,
) -> Result<ToolOutput, ToolError> {
    let text = page.text.as_str();
    let filter = compile(args, "filter")?;
    let exclude = compile(args, "exclude")?;
    let from = optional_usize(args, "from_line")?;
    let to = optional_usize(args, "to_line")?;
    let save = optional_bool(args, "save_to_file");
    let max_length = optional_usize(args, "max_length")?
        .unwrap_or(ctx.web.default_max_length)
        .max(100);
    let selecting = filter.is_some() || exclude.is_some() || from.is_some() || to.is_some();
    let body_cut = match &page.cut {
        Some(cut) => format!("{}\n", cut.line()),
        None => String::new(),
    };

    if save || (!selecting && text.len() > ctx.web.autosave_bytes) {
        return saved(text, save, body_cut, ctx, url);
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
        return Ok(ToolOutput::text(format!(
            "{body_cut}(no lines matched the selection)"
        )));
    }
    let (head, cut) = take_chars(&selected, max_length);
    let mut out = body_cut;
    if cut {
        let total = selected.chars().count() as u64;
        let what = if selecting {
            "the selection's"
        } else {
            "the text's"
        };
        out.push_str(
            &Cut::showing(format!("the first {} characters", count(max_length as u64)))
                .of(format!("{what} {} characters", count(total)))
                .read_on("narrow with filter or from_line/to_line")
                .line(),
        );
        out.push('\n');
    }
    out.push_str(head);
    Ok(ToolOutput {
        text: out,
        saved_path: page.raw_saved.clone(),
        ..ToolOutput::default()
    })
}

/// The text saved to the scratch folder (auto-saved, or `save_to_file`) and a preview under a
/// first line that names the sizes and the file; `body_cut`, the body cap's line, goes first.
fn saved(
    text: &str,
    save: bool,
    body_cut: String,
    ctx: &ToolContext,
    url: &str,
) -> Result<ToolOutput, ToolError> {
    let path = ctx
        .scratch
        .save("webfetch", "txt", text.as_bytes())
        .map_err(|e| ToolError::Failed(format!("cannot save the body of {url}: {e}")))?;
    let preview = preview(text, PREVIEW_CHARS);
    let header = if preview.len() < text.len() {
        Cut::showing(format!(
            "a preview of the first {} characters",
            count(preview.chars().count() as u64)
        ))
        .of(format!("{} bytes of text", count(text.len() as u64)))
        .saved(
            if save {
                "the whole text (as asked)"
            } else {
                "the whole text (too large to inline)"
            },
            &path,
        )
        .read_on("use read_file with start/end or rerun with filter/from_line/to_line for specific ranges")
        .line()
    } else {
        format!(
            "[saved as asked: the text ({} bytes) is at {}]",
            count(text.len() as u64),
            path.display()
        )
    };
    let end = if preview.len() < text.len() {
        "\n...(auto-truncated — full body saved to disk)"
    } else {
        ""
    };
    Ok(ToolOutput {
        text: format!("{body_cut}{header}\n\n{preview}{end}"),
        saved_path: Some(path),
        ..ToolOutput::default()
    })
}

/// The first `max` characters, cut back to the last line break when one is in the second half.
pub fn preview(text: &str, max: usize) -> &str {
    let (head, cut) = take_chars(text, max);
    if !cut {
        return head;
    }
    match head.rsplit_once('\n') {
        Some((before, _)) if before.len() >= head.len() / 2 => before,
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
        for ip in [
            "192.0.0.192",
            "100.100.100.200",
            "168.63.129.16",
            "169.254.170.2",
            "::ffff:192.0.0.192",
            "::192.0.0.192",
            "64:ff9b::a9fe:a9fe",
            "fe80::1",
        ] {
            assert!(is_metadata_ip(ip.parse().expect("ip")), "{ip}");
        }
        assert!(!is_metadata_ip("127.0.0.1".parse().expect("ip")));
        assert!(!is_metadata_ip("192.0.0.1".parse().expect("ip")));
        assert!(!is_metadata_ip("::1".parse().expect("ip")));
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
