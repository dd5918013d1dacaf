//! Memory benchmarks: recall over 10,000 facts (target: under 5 ms) and building the index
//! digest (target: under 1 ms).

use criterion::{Criterion, criterion_group, criterion_main};

use chatcli::memory::digest::index_digest;
use chatcli::memory::recall::RecallIndex;
use chatcli::memory::{CATEGORIES, Fact, Store, fact_id};

const WORDS: [&str; 24] = [
    "cache",
    "deploy",
    "kubernetes",
    "vault",
    "password",
    "rotation",
    "database",
    "migration",
    "tokio",
    "runtime",
    "criterion",
    "benchmark",
    "parser",
    "lexer",
    "frontend",
    "review",
    "release",
    "staging",
    "metrics",
    "tracing",
    "config",
    "secrets",
    "latency",
    "budget",
];

fn facts(n: usize) -> Vec<Fact> {
    (0..n)
        .map(|i| {
            let content = format!(
                "Item{i}: the {} uses {} with {} for {} in subsystem{}",
                WORDS[i % 24],
                WORDS[(i * 7) % 24],
                WORDS[(i * 13) % 24],
                WORDS[(i * 5) % 24],
                i % 300
            );
            Fact {
                id: fact_id(&content),
                content,
                category: CATEGORIES[i % 6].to_string(),
                tags: vec![WORDS[(i * 3) % 24].to_string()],
                created: 1_700_000_000 + i as u64,
                last_accessed: 1_700_000_000 + i as u64,
                access_count: (i % 5) as u32,
                confidence: 0.7,
                source: "bench".into(),
            }
        })
        .collect()
}

fn memory(c: &mut Criterion) {
    let facts = facts(10_000);
    let index = RecallIndex::build(&facts);
    c.bench_function("recall_10k_facts", |b| {
        b.iter(|| {
            index.recall(
                &facts,
                "when does vault rotate the staging database password",
                None,
                1_800_000_000,
                10,
            )
        })
    });
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = Store::open(dir.path()).expect("open");
    store.facts = facts;
    c.bench_function("index_digest_10k_facts", |b| {
        b.iter(|| index_digest(&store))
    });
}

criterion_group!(benches, memory);
criterion_main!(benches);
