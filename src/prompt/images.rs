//! Images the user attaches to a prompt (`@shot.png`, or a pasted image path): what format a
//! file is (from its first bytes, not its name), its size in pixels from its header, the
//! limit every wire accepts, and each provider's formula for the tokens it bills.
//!
//! Nothing here decodes pixels: chatcli keeps no image crate, so an image over the limit is
//! refused with a message that says how to shrink it, never downscaled. The limit is the
//! strictest of the wires' (Bedrock's 3.75 MB and 8,000 px a side), so an image that is
//! accepted goes to every provider unchanged. Images are read through the file door.

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

/// An image read for a prompt: its content block and what the notice says of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Attached {
    /// How the user wrote it (`shot.png`).
    pub name: String,
    pub block: crate::conversation::ContentBlock,
    pub width: u32,
    pub height: u32,
    pub bytes: u64,
}

/// Reads image `rel` beneath `cwd` through the file door; `Err` says why it is not attached.
pub fn load(
    cwd: &std::path::Path,
    rel: &std::path::Path,
    name: &str,
) -> Result<Attached, super::attachments::AttachError> {
    use super::attachments::AttachError;
    use base64::Engine;
    let read = crate::files::read_beneath(cwd, rel, MAX_IMAGE_BYTES + 1)
        .map_err(|e| AttachError::Image(format!("{name} cannot be read ({e}): not attached")))?;
    let size = probe(&read.bytes);
    if let Some(why) = refusal(name, read.total, size) {
        return Err(AttachError::Image(why));
    }
    let Some((format, width, height)) = size else {
        return Err(AttachError::Image(format!(
            "{name} is not an image chatcli can read: not attached"
        )));
    };
    Ok(Attached {
        name: name.to_string(),
        block: crate::conversation::ContentBlock::Image {
            media_type: format.media_type().to_string(),
            data: base64::engine::general_purpose::STANDARD.encode(&read.bytes),
        },
        width,
        height,
        bytes: read.total,
    })
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

#[cfg(test)]
mod tests {
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
    fn an_image_file_loads_as_a_base64_block_and_a_text_file_does_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("shot.png"), png_header(2, 3)).expect("write");
        std::fs::write(dir.path().join("fake.png"), "hello").expect("write");
        let shot = load(dir.path(), std::path::Path::new("shot.png"), "shot.png").expect("png");
        assert_eq!((shot.width, shot.height), (2, 3));
        match shot.block {
            crate::conversation::ContentBlock::Image { media_type, data } => {
                assert_eq!(media_type, "image/png");
                assert!(data.starts_with("iVBORw0KGgo"), "{data}");
            }
            other => panic!("{other:?}"),
        }
        let fake = load(dir.path(), std::path::Path::new("fake.png"), "fake.png");
        assert!(fake.is_err_and(|e| e.to_string().contains("not a PNG")));
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
