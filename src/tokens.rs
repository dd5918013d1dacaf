//! Local token counts with tiktoken's `o200k_base` encoding (GPT-4o and later).
//!
//! Used where a provider reports nothing and for the prompt-size budget; the encoder loads once
//! on first use (tens of milliseconds), so nothing on the per-frame path calls it.

/// Tokens `text` encodes to in o200k.
pub fn count(text: &str) -> u64 {
    tiktoken_rs::o200k_base_singleton()
        .encode_with_special_tokens(text)
        .len() as u64
}

/// A cheap estimate from bytes (about 4 bytes a token for English text and code), for figures
/// that only need to be roughly right and must not load the encoder.
pub fn rough(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_tokens() {
        assert_eq!(super::count(""), 0);
        assert_eq!(super::count("hello world"), 2);
    }
}
