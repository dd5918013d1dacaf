//! Token counts: exact ones with tiktoken's `o200k_base` encoding (GPT-4o and later), and a cheap
//! estimate from bytes.
//!
//! The encoder costs tens of milliseconds and about 45 MB of memory to load, so it loads once, on
//! the first exact count, and only where exactness matters: a provider that reported no usage,
//! `/cache`, `/context`, attachment budgets, skill listings. Anything on the per-request or
//! per-frame path uses [`rough`]. A session whose provider reports usage must never load it
//! ([`encoder_loaded`] lets tests check, and its loading is logged). This module imports nothing
//! of ours, so any layer may use it.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether this process has loaded the o200k encoder.
static ENCODER_LOADED: AtomicBool = AtomicBool::new(false);

/// Tokens `text` encodes to in o200k; loads the encoder on first use (not for empty text).
pub fn count(text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    if !ENCODER_LOADED.swap(true, Ordering::Relaxed) {
        tracing::info!("loading the o200k tokenizer for an exact local token count");
    }
    tiktoken_rs::o200k_base_singleton()
        .encode_with_special_tokens(text)
        .len() as u64
}

/// Whether an exact count has loaded the o200k encoder in this process.
pub fn encoder_loaded() -> bool {
    ENCODER_LOADED.load(Ordering::Relaxed)
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
        assert!(super::encoder_loaded());
        assert_eq!(super::rough(9), 3);
    }
}
