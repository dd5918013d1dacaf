//! Embeddings for recall's semantic signal.
//!
//! The local embedding needs no network: words and their character trigrams are hashed (FNV-1a)
//! into a fixed-size vector with a hashed sign, then L2-normalised. Misspellings and inflections
//! share most trigrams, so "kubernets deploymnt" lands near "deploy to kubernetes". A provider's
//! embedding endpoint, when configured, replaces it (see `memory::Embedder`).

/// Dimensions of the local embedding.
pub const DIM: usize = 256;

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

fn add(vector: &mut [f32], feature: &str, weight: f32) {
    let h = fnv1a(feature.as_bytes());
    let index = (h % DIM as u64) as usize;
    let sign = if (h >> 63) == 0 { 1.0 } else { -1.0 };
    if let Some(slot) = vector.get_mut(index) {
        *slot += sign * weight;
    }
}

/// The local embedding of `text`, unit length (all zeros for text without words).
pub fn local(text: &str) -> Vec<f32> {
    let mut vector = vec![0.0f32; DIM];
    for word in text
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
    {
        add(&mut vector, word, 1.0);
        let padded: Vec<char> = format!("^{word}$").chars().collect();
        for gram in padded.windows(3) {
            let gram: String = gram.iter().collect();
            add(&mut vector, &gram, 0.5);
        }
    }
    normalize(&mut vector);
    vector
}

/// Scales a vector to unit length (a zero vector stays zero).
pub fn normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in vector.iter_mut() {
            *x /= norm;
        }
    }
}

/// Cosine similarity of two unit vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_stay_close_and_unrelated_text_does_not() {
        let fact = local("deploy to kubernetes with helm charts");
        let typo = local("kubernets deploymnt");
        let other = local("the office coffee machine is broken");
        assert!(cosine(&fact, &typo) > cosine(&fact, &other) + 0.2);
        assert!((cosine(&fact, &fact) - 1.0).abs() < 1e-5);
        assert_eq!(local("!!").iter().filter(|x| **x != 0.0).count(), 0);
    }
}
