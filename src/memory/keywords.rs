//! Keywords as recall sees them: lowercase words, punctuation stripped, English and Portuguese
//! stop words dropped, words under 3 characters dropped unless written in capitals (`CI`, `DB`,
//! `PR`, `S3`: a developer's memory is full of two-letter acronyms, and "what do you know about
//! our CI" has no other word to find). Near-duplicate detection uses the same extraction, so
//! "the same fact said again" and "a fact recall would find" agree.

use std::collections::BTreeSet;

const STOP_WORDS: &[&str] = &[
    // English
    "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was",
    "one", "our", "out", "has", "have", "him", "his", "how", "its", "may", "new", "now", "old",
    "see", "two", "who", "did", "does", "get", "got", "let", "say", "she", "too", "use", "uses",
    "used", "with", "this", "that", "from", "they", "them", "then", "than", "there", "their",
    "what", "when", "where", "which", "while", "will", "would", "should", "could", "into", "about",
    "over", "also", "been", "being", "were", "your", "yours", "each", "some", "such", "only",
    "very", "just", "more", "most", "other", "these", "those", "here", "why", "via", "per",
    // English two-letter words, for text written in capitals ("IT IS OK").
    "am", "an", "as", "at", "be", "by", "do", "if", "in", "is", "it", "me", "my", "no", "of", "ok",
    "on", "or", "so", "to", "up", "us", "we", // Portuguese
    "que", "para", "com", "uma", "um", "por", "mais", "como", "mas", "dos", "das", "nos", "nas",
    "ele", "ela", "eles", "elas", "isso", "isto", "esse", "essa", "este", "esta", "seu", "sua",
    "seus", "suas", "quando", "onde", "qual", "quais", "quem", "porque", "pelo", "pela", "pelos",
    "pelas", "entre", "sobre", "até", "sem", "sim", "não", "nao", "também", "tambem", "muito",
    "já", "foi", "são", "sao", "ser", "tem", "têm", "há", "aos", "às", "num", "numa",
    // Portuguese two-letter words, for text written in capitals ("É SÓ O QUE EU SEI").
    "ao", "da", "de", "do", "em", "eu", "na", "no", "os", "ou", "se", "só", "tu", "vc",
];

/// The distinct keywords of `text`, sorted.
pub fn keywords(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| long_enough(w))
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .collect()
}

/// Three characters or more, or two written in capitals (an acronym: `CI`, `S3`).
fn long_enough(word: &str) -> bool {
    match word.chars().count() {
        0 | 1 => false,
        2 => {
            word.chars().any(char::is_uppercase)
                && word.chars().all(|c| c.is_uppercase() || c.is_ascii_digit())
        }
        _ => true,
    }
}

/// Jaccard similarity of two keyword sets (0 when both are empty).
pub fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

/// Whether a query keyword matches a fact word: equal, or for keywords of 4+ characters, one a
/// prefix of the other (`rotate` finds `rotates`, `deployment` finds `deploy`).
pub fn matches(query: &str, word: &str) -> bool {
    if query == word {
        return true;
    }
    query.chars().count() >= 4
        && word.chars().count() >= 4
        && (word.starts_with(query) || query.starts_with(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extraction_drops_stop_words_short_words_and_punctuation() {
        let k = keywords("When does Vault rotate the DB credentials? É às 9h, na produção.");
        let v: Vec<&str> = k.iter().map(String::as_str).collect();
        assert_eq!(v, vec!["credentials", "db", "produção", "rotate", "vault"]);
    }

    #[test]
    fn two_letters_count_only_as_an_acronym() {
        let k =
            keywords("Our CI pushes to S3; it is ok. IT IS OK, Go on, v2 ci. EU SEI O QUE É DE");
        let v: Vec<&str> = k.iter().map(String::as_str).collect();
        assert_eq!(v, vec!["ci", "pushes", "s3", "sei"]);
    }

    #[test]
    fn prefix_matching_needs_four_characters() {
        assert!(matches("rotate", "rotates"));
        assert!(matches("deployment", "deploy"));
        assert!(!matches("cat", "category"));
    }
}
