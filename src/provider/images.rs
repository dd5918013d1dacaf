//! Image facts every wire shares, and which models see images: what format a file is (from
//! its first bytes, not its name), its size in pixels from its header, the limit every wire
//! accepts, each provider's formula for the tokens it bills, and per model family whether it
//! takes images at all.
//!
//! Nothing here decodes pixels: chatcli keeps no image crate, so an image over the limit is
//! refused with a message that says how to shrink it, never downscaled. The limit is the
//! strictest of the wires' (Bedrock's 3.75 MB and 8,000 px a side), so an image that is
//! accepted goes to every provider unchanged. The vision rules are by family name (the price
//! catalog does not say); a model no rule knows is sent the image and answers for itself,
//! except on a local server, which must say it has a multimodal projector.

// Headers come from files the user points at: no index that could panic on them (#34).
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

/// Bytes of one image, at most (Bedrock Converse: 3.75 MB; Anthropic 5 MB; OpenAI 20 MB).
pub const MAX_IMAGE_BYTES: u64 = 3_750_000;
/// Pixels of the longer side, at most (Anthropic and Bedrock refuse more than 8,000).
pub const MAX_SIDE: u32 = 8000;

/// An image format every vision wire accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Png,
    Jpeg,
    Gif,
    Webp,
}

impl Format {
    /// The MIME type (Anthropic, OpenAI data URLs, Gemini).
    pub fn media_type(self) -> &'static str {
        match self {
            Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
            Format::Gif => "image/gif",
            Format::Webp => "image/webp",
        }
    }
}

/// Whether a path names an image by its extension (what makes `@x.png` an image mention).
pub fn looks_like_image(path: &std::path::Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .is_some_and(|e| matches!(e.as_str(), "png" | "jpg" | "jpeg" | "gif" | "webp"))
}

/// The format and the size in pixels, read from the header.
pub fn probe(bytes: &[u8]) -> Option<(Format, u32, u32)> {
    let be32 = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    let le16 = |at: usize| -> Option<u32> {
        Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?) as u32)
    };
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some((Format::Png, be32(16)?, be32(20)?));
    }
    if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        return Some((Format::Gif, le16(6)?, le16(8)?));
    }
    if bytes.starts_with(b"\xff\xd8") {
        let (w, h) = jpeg_size(bytes)?;
        return Some((Format::Jpeg, w, h));
    }
    if bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        let (w, h) = webp_size(bytes)?;
        return Some((Format::Webp, w, h));
    }
    None
}

/// A JPEG's size from its first start-of-frame marker.
fn jpeg_size(bytes: &[u8]) -> Option<(u32, u32)> {
    let mut at = 2;
    loop {
        let marker = bytes.get(at..at + 2)?;
        if marker.first() != Some(&0xff) {
            return None;
        }
        let kind = *marker.get(1)?;
        let len = u16::from_be_bytes(bytes.get(at + 2..at + 4)?.try_into().ok()?) as usize;
        // SOF0..SOF15, except DHT (C4), JPG (C8) and DAC (CC).
        if (0xc0..=0xcf).contains(&kind) && !matches!(kind, 0xc4 | 0xc8 | 0xcc) {
            let h = u16::from_be_bytes(bytes.get(at + 5..at + 7)?.try_into().ok()?) as u32;
            let w = u16::from_be_bytes(bytes.get(at + 7..at + 9)?.try_into().ok()?) as u32;
            return Some((w, h));
        }
        at += 2 + len;
    }
}

/// A WebP's size from its first chunk (lossy, lossless or extended).
fn webp_size(bytes: &[u8]) -> Option<(u32, u32)> {
    let le = |range: std::ops::Range<usize>| -> Option<u32> {
        let mut n = 0u32;
        for (i, b) in bytes.get(range)?.iter().enumerate() {
            n |= (*b as u32) << (8 * i);
        }
        Some(n)
    };
    match bytes.get(12..16)? {
        b"VP8 " => Some((le(26..28)? & 0x3fff, le(28..30)? & 0x3fff)),
        b"VP8L" => {
            let bits = le(21..25)?;
            Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
        }
        b"VP8X" => Some((le(24..27)? + 1, le(27..30)? + 1)),
        _ => None,
    }
}

/// Why an image cannot be sent as it is, in words the user can act on; `None` when it can.
pub fn refusal(name: &str, bytes: u64, size: Option<(Format, u32, u32)>) -> Option<String> {
    let Some((_, w, h)) = size else {
        return Some(format!(
            "{name} is not a PNG, JPEG, GIF or WebP image that chatcli can read: not attached"
        ));
    };
    if bytes > MAX_IMAGE_BYTES {
        return Some(format!(
            "{name} is {:.1} MB, over the {:.2} MB every provider accepts: not attached (chatcli does not downscale; save it smaller, e.g. as JPEG or at half size)",
            bytes as f64 / 1e6,
            MAX_IMAGE_BYTES as f64 / 1e6
        ));
    }
    if w.max(h) > MAX_SIDE || w == 0 || h == 0 {
        return Some(format!(
            "{name} is {w}×{h} px; providers take at most {MAX_SIDE} px a side: not attached"
        ));
    }
    None
}

/// The token rule of a provider, by its name (`anthropic`, `bedrock`, `googleai`; else OpenAI's).
pub fn rule_for(provider: &str) -> TokenRule {
    match provider {
        "anthropic" | "bedrock" => TokenRule::Anthropic,
        "googleai" | "gemini" => TokenRule::Gemini,
        _ => TokenRule::OpenAi,
    }
}

/// How a provider bills an image's tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenRule {
    /// Anthropic and Claude on Bedrock: scaled to fit 1568 px a side, then w×h/750.
    Anthropic,
    /// OpenAI (high detail): fit 2048², shorter side to 768, then 85 + 170 per 512-px tile.
    OpenAi,
    /// Gemini: 258 when both sides are at most 384 px, else 258 per 768-px tile.
    Gemini,
}

/// The tokens an image of `w`×`h` costs under `rule`.
pub fn tokens(rule: TokenRule, w: u32, h: u32) -> u64 {
    let (w, h) = (w.max(1) as f64, h.max(1) as f64);
    match rule {
        TokenRule::Anthropic => {
            let scale = (1568.0 / w.max(h)).min(1.0);
            ((w * scale) * (h * scale) / 750.0).ceil() as u64
        }
        TokenRule::OpenAi => {
            let fit = (2048.0 / w.max(h)).min(1.0);
            let (w, h) = (w * fit, h * fit);
            let short = (768.0 / w.min(h)).min(1.0);
            let (w, h) = (w * short, h * short);
            let tiles = (w / 512.0).ceil() * (h / 512.0).ceil();
            85 + 170 * tiles as u64
        }
        TokenRule::Gemini => {
            if w <= 384.0 && h <= 384.0 {
                258
            } else {
                258 * ((w / 768.0).ceil() * (h / 768.0).ceil()) as u64
            }
        }
    }
}

/// The content block of an image's bytes (base64, as every wire carries it).
pub fn block(format: Format, bytes: &[u8]) -> crate::conversation::ContentBlock {
    use base64::Engine;
    crate::conversation::ContentBlock::Image {
        media_type: format.media_type().to_string(),
        data: base64::engine::general_purpose::STANDARD.encode(bytes),
    }
}

/// Whether a model takes images, by its family's name: `Some(false)` for families documented
/// as text only, `Some(true)` for vision families, `None` for a model no rule knows.
///
/// Claude 3 and later see images, Claude 2 and Instant do not; OpenAI's gpt-4o, gpt-4.1,
/// gpt-4-turbo, gpt-5 and the o1, o3 and o4 reasoning models do, gpt-3.5, the first gpt-4,
/// o1-mini, o1-preview and o3-mini do not; every Gemini does except the first `gemini-pro`;
/// the open vision families (llava, Qwen-VL, Pixtral, Llama 3.2 Vision, Gemma 3 from 4B)
/// and Amazon Nova Lite and Pro do, Nova Micro does not.
pub fn family_vision(model: &str) -> Option<bool> {
    let lower = model.to_ascii_lowercase();
    // `anthropic/claude-…` (OpenRouter), `us.anthropic.claude-…` (Bedrock): the last part.
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let has = |needle: &str| name.contains(needle);
    if has("claude") {
        return Some(!(has("claude-2") || has("claude-instant") || has("claude-v2")));
    }
    let text_only = [
        "gpt-3.5",
        "o1-mini",
        "o1-preview",
        "o3-mini",
        "davinci",
        "babbage",
        "nova-micro",
        "gemma-3-1b",
        "gemma3:1b",
    ];
    if text_only.iter().any(|t| has(t))
        || matches!(name, "gpt-4" | "gpt-4-32k" | "gemini-pro")
        || name.starts_with("gpt-4-0")
        || name.starts_with("gemini-1.0-pro")
    {
        return Some(false);
    }
    let vision = [
        "gpt-4o",
        "gpt-4.1",
        "gpt-4-turbo",
        "gpt-4-vision",
        "gpt-4.5",
        "gpt-5",
        "chatgpt-4o",
        "gemini",
        "llava",
        "-vl",
        "vision",
        "pixtral",
        "gemma-3",
        "gemma3",
        "nova-lite",
        "nova-pro",
        "nova-premier",
        "minicpm-v",
        "moondream",
    ];
    let reasoning = ["o1", "o3", "o4-mini", "o3-pro", "o1-pro"]
        .iter()
        .any(|o| name == *o || name.starts_with(&format!("{o}-")));
    (vision.iter().any(|v| has(v)) || reasoning).then_some(true)
}

/// Why `model` on `provider` gets no image, in one line naming the model; `None` when it can
/// take one. `wire` is whether the provider's wire carries images at all; `local` is what a
/// local server said of its model (`Some(false)` when it did not say it is multimodal).
pub fn vision_refusal(
    provider: &str,
    model: &str,
    wire: bool,
    local: Option<bool>,
) -> Option<String> {
    if !wire {
        return Some(format!(
            "{provider} ({model}) takes no images here; use a provider with vision (anthropic, openai, gemini, bedrock)"
        ));
    }
    match (local, family_vision(model)) {
        (Some(true), _) => None,
        (Some(false), _) => Some(format!(
            "{model} on this local server does not take images: the server does not say it is multimodal (start llama-server with --mmproj, or pick a vision model)"
        )),
        (None, Some(false)) => Some(format!(
            "{model} does not take images (a text-only model); switch to a vision model with /model (e.g. gpt-4.1, claude-sonnet-4-5, gemini-2.5-flash)"
        )),
        (None, _) => None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A PNG header of `w`×`h` (what `probe` reads).
    pub fn png_header(w: u32, h: u32) -> Vec<u8> {
        let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        bytes.extend(w.to_be_bytes());
        bytes.extend(h.to_be_bytes());
        bytes.extend([8, 6, 0, 0, 0]);
        bytes
    }

    #[test]
    fn headers_give_the_format_and_size() {
        assert_eq!(probe(&png_header(640, 480)), Some((Format::Png, 640, 480)));
        let gif = b"GIF89a\x20\x03\x58\x02rest";
        assert_eq!(probe(gif), Some((Format::Gif, 800, 600)));
        // SOI, an APP0 segment of 16 bytes, then SOF0 of 1080×1920.
        let mut jpeg = vec![0xff, 0xd8, 0xff, 0xe0, 0, 16];
        jpeg.extend([0; 14]);
        jpeg.extend([0xff, 0xc0, 0, 17, 8, 0x04, 0x38, 0x07, 0x80]);
        assert_eq!(probe(&jpeg), Some((Format::Jpeg, 1920, 1080)));
        assert_eq!(probe(b"not an image"), None);
        assert_eq!(
            probe(b"\x89PNG\r\n\x1a\n"),
            None,
            "a cut header is no image"
        );
    }

    #[test]
    fn each_provider_bills_by_its_own_formula() {
        // Anthropic's table: 1000×1000 ≈ 1334 tokens; 1092×1092 ≈ 1590.
        assert_eq!(tokens(TokenRule::Anthropic, 1000, 1000), 1334);
        assert_eq!(tokens(TokenRule::Anthropic, 1092, 1092), 1590);
        // OpenAI's example: 1024×1024 → 768×768 → 4 tiles → 765.
        assert_eq!(tokens(TokenRule::OpenAi, 1024, 1024), 765);
        // 2048×4096 → 1024×2048 → 768×1536 → 6 tiles → 1105.
        assert_eq!(tokens(TokenRule::OpenAi, 2048, 4096), 1105);
        assert_eq!(tokens(TokenRule::Gemini, 300, 300), 258);
        assert_eq!(tokens(TokenRule::Gemini, 1000, 1000), 258 * 4);
    }

    #[test]
    fn vision_is_known_per_family() {
        for model in [
            "claude-sonnet-4-5",
            "claude-3-haiku-20240307",
            "anthropic/claude-3.5-sonnet",
            "us.anthropic.claude-opus-4-1-v1:0",
            "gpt-4o-mini",
            "gpt-4.1",
            "gpt-5-mini",
            "o1",
            "o3",
            "o4-mini",
            "gemini-2.5-flash",
            "llava:13b",
            "Qwen2.5-VL-7B-Instruct",
            "amazon.nova-lite-v1:0",
        ] {
            assert_eq!(family_vision(model), Some(true), "{model}");
        }
        for model in [
            "gpt-3.5-turbo",
            "o1-mini",
            "o3-mini",
            "gpt-4",
            "gpt-4-0613",
            "claude-2.1",
            "claude-instant-1.2",
            "gemini-pro",
            "amazon.nova-micro-v1:0",
        ] {
            assert_eq!(family_vision(model), Some(false), "{model}");
        }
        assert_eq!(family_vision("smollm2-135m-instruct"), None);
        assert!(
            vision_refusal("openai", "gpt-3.5-turbo", true, None)
                .is_some_and(|why| why.starts_with("gpt-3.5-turbo does not take images"))
        );
        assert_eq!(vision_refusal("openai", "gpt-4.1", true, None), None);
        assert_eq!(vision_refusal("openai", "some-new-model", true, None), None);
        assert!(
            vision_refusal("openai", "smol.gguf", true, Some(false))
                .is_some_and(|why| why.contains("--mmproj"))
        );
        assert_eq!(
            vision_refusal("openai", "gemma3.gguf", true, Some(true)),
            None
        );
        assert!(vision_refusal("ollama", "llava", false, None).is_some());
    }

    #[test]
    fn over_the_limit_is_refused_with_what_to_do() {
        let png = probe(&png_header(100, 100));
        assert_eq!(refusal("a.png", 1000, png), None);
        let big = refusal("a.png", 4_000_000, png).unwrap_or_default();
        assert!(
            big.contains("4.0 MB") && big.contains("does not downscale"),
            "{big}"
        );
        let wide = refusal("b.png", 10, probe(&png_header(9000, 10))).unwrap_or_default();
        assert!(wide.contains("9000×10"), "{wide}");
        assert!(refusal("c.png", 10, None).is_some());
    }
}
