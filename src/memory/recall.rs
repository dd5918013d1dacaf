//! Recall: which facts answer a query, blending three signals.
//!
//! Each signal is weighted: semantic 0.55 (cosine of embeddings), lexical 0.30 (query keywords
//! found in the fact, prefix matches for keywords of 4+ characters, tags counting half), both
//! min-max normalised over the candidates, and temporal 0.15 (recency with a 30-day half-life,
//! access count, confidence), 0–1 as it is: rescaled, a second between two facts saved together
//! would become its whole weight. Ties are broken by id, so the order is deterministic. The index
//! keeps each fact's keywords and embedding, built once: a recall over 10,000 facts then costs
//! one pass of dot products.

use super::Fact;
use super::embedding;
use super::keywords::keywords;

const W_SEMANTIC: f64 = 0.55;
const W_LEXICAL: f64 = 0.30;
const W_TEMPORAL: f64 = 0.15;
const HALF_LIFE_DAYS: f64 = 30.0;
/// A fact with no keyword in common and a cosine under this is not a hit at all.
const MIN_SEMANTIC: f32 = 0.15;

/// A keyword with its length in characters, counted once.
struct Word {
    text: String,
    chars: usize,
}

impl Word {
    fn new(text: String) -> Self {
        let chars = text.chars().count();
        Word { text, chars }
    }

    /// `keywords::matches`, with the lengths already known.
    fn matches(&self, other: &Word) -> bool {
        self.text == other.text
            || (self.chars >= 4
                && other.chars >= 4
                && (other.text.starts_with(&self.text) || self.text.starts_with(&other.text)))
    }
}

struct Entry {
    words: Vec<Word>,
    tags: Vec<Word>,
    embedding: Vec<f32>,
}

/// Keywords and embeddings of a set of facts, in the same order.
pub struct RecallIndex {
    entries: Vec<Entry>,
}

/// One hit: the fact's position in the slice the index was built from, and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub index: usize,
    pub score: f64,
}

fn normalize(values: &mut [f64]) {
    let (min, max) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(*v), hi.max(*v))
        });
    let span = max - min;
    for v in values.iter_mut() {
        *v = if span > 0.0 { (*v - min) / span } else { 0.0 };
    }
}

impl RecallIndex {
    /// Indexes `facts` (keep the slice: hits point into it).
    pub fn build(facts: &[Fact]) -> RecallIndex {
        let entries = facts
            .iter()
            .map(|f| Entry {
                words: keywords(&f.content).into_iter().map(Word::new).collect(),
                tags: f.tags.iter().map(|t| Word::new(t.to_lowercase())).collect(),
                embedding: embedding::local(&format!("{} {}", f.content, f.tags.join(" "))),
            })
            .collect();
        RecallIndex { entries }
    }

    /// Indexes `facts` with embeddings a provider made (one per fact, same order); a fact
    /// without one falls back to a zero vector, so only its lexical and temporal signals count.
    pub fn with_embeddings(facts: &[Fact], vectors: &[Option<Vec<f32>>]) -> RecallIndex {
        let mut index = RecallIndex::build_lexical(facts);
        for (entry, vector) in index.entries.iter_mut().zip(vectors) {
            entry.embedding = match vector {
                Some(v) => {
                    let mut v = v.clone();
                    embedding::normalize(&mut v);
                    v
                }
                None => Vec::new(),
            };
        }
        index
    }

    fn build_lexical(facts: &[Fact]) -> RecallIndex {
        let entries = facts
            .iter()
            .map(|f| Entry {
                words: keywords(&f.content).into_iter().map(Word::new).collect(),
                tags: f.tags.iter().map(|t| Word::new(t.to_lowercase())).collect(),
                embedding: Vec::new(),
            })
            .collect();
        RecallIndex { entries }
    }

    /// The best `limit` facts for `query`; `extra` is another text embedded with it (HyDE).
    pub fn recall(
        &self,
        facts: &[Fact],
        query: &str,
        extra: Option<&str>,
        now: u64,
        limit: usize,
    ) -> Vec<Hit> {
        let mut query_vec = embedding::local(query);
        if let Some(extra) = extra {
            for (q, e) in query_vec.iter_mut().zip(embedding::local(extra)) {
                *q += e;
            }
            embedding::normalize(&mut query_vec);
        }
        self.recall_with(facts, query, &query_vec, now, limit)
    }

    /// Like `recall`, with the query's embedding given (a provider's, for a provider index).
    pub fn recall_with(
        &self,
        facts: &[Fact],
        query: &str,
        query_vec: &[f32],
        now: u64,
        limit: usize,
    ) -> Vec<Hit> {
        let query_words: Vec<Word> = keywords(query).into_iter().map(Word::new).collect();
        let n = self.entries.len().min(facts.len());
        let mut semantic = Vec::with_capacity(n);
        let mut lexical = Vec::with_capacity(n);
        let mut temporal = Vec::with_capacity(n);
        let mut relevant = Vec::with_capacity(n);
        let max_access = facts.iter().map(|f| f.access_count).max().unwrap_or(0) as f64;
        for (entry, fact) in self.entries.iter().zip(facts) {
            let cos = embedding::cosine(query_vec, &entry.embedding);
            let mut lex = 0.0;
            for q in &query_words {
                if entry.words.iter().any(|w| q.matches(w)) {
                    lex += 1.0;
                } else if entry.tags.iter().any(|t| q.matches(t)) {
                    lex += 0.5;
                }
            }
            let seen = fact.last_accessed.max(fact.created);
            let days = now.saturating_sub(seen) as f64 / 86_400.0;
            let recency = 0.5f64.powf(days / HALF_LIFE_DAYS);
            let access = if max_access > 0.0 {
                (1.0 + fact.access_count as f64).ln() / (1.0 + max_access).ln()
            } else {
                0.0
            };
            semantic.push(f64::from(cos));
            lexical.push(lex);
            // A hand-edited store may hold any confidence: the score stays within 0–1.
            let confidence = f64::from(fact.confidence);
            let confidence = if confidence.is_nan() {
                0.0
            } else {
                confidence.clamp(0.0, 1.0)
            };
            temporal.push(0.5 * recency + 0.3 * access + 0.2 * confidence);
            relevant.push(lex > 0.0 || cos >= MIN_SEMANTIC);
        }
        normalize(&mut semantic);
        normalize(&mut lexical);
        // Not rescaled: it is already 0–1 (see the module doc).
        let mut hits: Vec<Hit> = relevant
            .iter()
            .zip(semantic.iter().zip(&lexical).zip(&temporal))
            .enumerate()
            .filter(|(_, (relevant, _))| **relevant)
            .map(|(i, (_, ((semantic, lexical), temporal)))| Hit {
                index: i,
                score: W_SEMANTIC * semantic + W_LEXICAL * lexical + W_TEMPORAL * temporal,
            })
            .collect();
        let id = |hit: &Hit| facts.get(hit.index).map(|f| f.id.as_str());
        let order = |a: &Hit, b: &Hit| b.score.total_cmp(&a.score).then_with(|| id(a).cmp(&id(b)));
        // Only the best `limit` need ordering: select them first, then sort those.
        if limit > 0 && hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, order);
            hits.truncate(limit);
        }
        hits.sort_by(order);
        hits.truncate(limit);
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::fact_id;

    fn fact(content: &str, category: &str, tags: &[&str]) -> Fact {
        Fact {
            id: fact_id(content),
            content: content.into(),
            category: category.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            created: 1_000_000,
            last_accessed: 1_000_000,
            access_count: 0,
            confidence: 0.7,
            source: "test".into(),
        }
    }

    fn corpus() -> Vec<Fact> {
        vec![
            fact(
                "The staging database password rotates every Monday via Vault",
                "gotcha",
                &["ops"],
            ),
            fact(
                "Deploy to Kubernetes with the Helm charts in deploy/charts",
                "architecture",
                &["k8s"],
            ),
            fact(
                "The user prefers tabs over spaces in Go code",
                "preference",
                &[],
            ),
            fact(
                "Benchmarks run with criterion; never time tests",
                "pattern",
                &["testing"],
            ),
            fact(
                "The office coffee machine needs descaling monthly",
                "personal",
                &[],
            ),
        ]
    }

    #[test]
    fn a_paraphrase_sharing_two_keywords_finds_the_fact() {
        let facts = corpus();
        let index = RecallIndex::build(&facts);
        let hits = index.recall(
            &facts,
            "when does vault rotate the credentials?",
            None,
            1_000_000,
            3,
        );
        assert_eq!(hits[0].index, 0);
    }

    #[test]
    fn a_misspelled_query_finds_the_fact_through_the_local_embedding() {
        let facts = corpus();
        let index = RecallIndex::build(&facts);
        let hits = index.recall(&facts, "kubernets deploymnt", None, 1_000_000, 3);
        assert_eq!(hits.first().map(|h| h.index), Some(1), "{hits:?}");
    }

    #[test]
    fn order_is_deterministic_and_tags_count() {
        let facts = corpus();
        let index = RecallIndex::build(&facts);
        let a = index.recall(&facts, "testing criterion", None, 1_000_000, 5);
        let b = index.recall(&facts, "testing criterion", None, 1_000_000, 5);
        assert_eq!(a, b);
        assert_eq!(a[0].index, 3);
        assert!(index.recall(&facts, "zebra", None, 1_000_000, 5).len() < facts.len());
    }

    #[test]
    fn a_second_between_two_facts_saved_together_does_not_outrank_relevance() {
        let mut facts = vec![
            fact(
                "Deploy the staging server with the ansible playbook in ops/",
                "pattern",
                &[],
            ),
            fact(
                "Deploy the staging server with the ansible playbook",
                "pattern",
                &[],
            ),
            fact("The office coffee machine needs descaling", "personal", &[]),
        ];
        // The less relevant one was saved a second later.
        facts[1].created += 1;
        facts[1].last_accessed += 1;
        let index = RecallIndex::build(&facts);
        let query = "deploy the staging server with the ansible playbook in ops/";
        let first = |facts: &[Fact]| index.recall(facts, query, None, 1_000_100, 2);
        let hits = first(&facts);
        assert_eq!(hits.first().map(|h| h.index), Some(0), "{hits:?}");
        // Nor does a confidence out of range in a hand-edited store.
        facts[1].confidence = 50.0;
        let hits = first(&facts);
        assert_eq!(hits.first().map(|h| h.index), Some(0), "{hits:?}");
        facts[1].confidence = f32::NAN;
        let hits = index.recall(&facts, "deploy staging", None, 1_000_100, 2);
        assert!(hits.iter().all(|h| h.score.is_finite()), "{hits:?}");
    }
}
