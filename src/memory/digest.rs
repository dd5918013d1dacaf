//! What the prompt carries of memory: the index digest (stable, in the system prompt), the full
//! retrieval block and the auto-recall block (volatile, in the newest user turn).
//!
//! The digest is a function of the store alone — no clock, no query — and is frozen when the
//! session starts, so it sits in the cached prefix and does not grow with the store.

use super::{CATEGORIES, Fact, Store, top_tags};

/// Longest digest, in characters (cut at whole lines).
pub const DIGEST_CAP: usize = 600;
/// Header of the auto-recall block.
pub const AUTORECALL_HEADER: &str = "[MEMORY AUTO-RECALL]";
/// Bytes the auto-recall block may take.
pub const AUTORECALL_BUDGET: usize = 700;

/// The compact, turn-independent digest of the store.
pub fn index_digest(store: &Store) -> String {
    let mut lines = Vec::new();
    let profile = super::profile::profile_summary(store);
    if !profile.is_empty() {
        lines.push(format!("Profile: {}", profile.join(" · ")));
    }
    let projects = super::profile::index_projects(store);
    if !projects.is_empty() {
        lines.push(format!("Projects: {}", projects.join(", ")));
    }
    let topics = top_tags(&store.facts, 8);
    if !topics.is_empty() {
        lines.push(format!("Topics: {}", topics.join(", ")));
    }
    if store.facts.is_empty() && lines.is_empty() {
        return String::new();
    }
    let counts: Vec<String> = CATEGORIES
        .iter()
        .filter_map(|c| {
            let n = store.facts.iter().filter(|f| f.category == *c).count();
            (n > 0).then(|| format!("{c} {n}"))
        })
        .collect();
    lines.push(format!(
        "Facts: {} stored ({})",
        store.facts.len(),
        counts.join(", ")
    ));
    lines.push("For details call the memory tool with action \"recall\" and a query.".to_string());
    cap_lines(&lines, DIGEST_CAP)
}

/// Whole lines of `lines` while they fit in `cap` characters; the last line (the instruction)
/// is kept first.
fn cap_lines(lines: &[String], cap: usize) -> String {
    let Some((last, rest)) = lines.split_last() else {
        return String::new();
    };
    let mut used = last.chars().count();
    let mut kept = Vec::new();
    for line in rest {
        let len = line.chars().count() + 1;
        if used + len > cap {
            break;
        }
        used += len;
        kept.push(line.as_str());
    }
    kept.push(last);
    kept.join("\n")
}

/// `- [category] content` lines for these facts, within `budget` bytes.
pub fn fact_lines(facts: &[&Fact], budget: usize) -> String {
    let mut out = String::new();
    for fact in facts {
        let line = format!(
            "- [{}] {}\n",
            fact.category,
            fact.content.replace('\n', " ")
        );
        if out.len() + line.len() > budget {
            break;
        }
        out.push_str(&line);
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{NewFact, Project};

    #[test]
    fn the_digest_of_500_facts_is_small_whole_lines_and_stable() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(dir.path()).expect("open");
        store.profile.name = "Ana".into();
        store.profile.role = "backend engineer".into();
        store.profile.projects = (0..9)
            .map(|i| Project {
                name: format!("proj{i}"),
                last_active: i,
            })
            .collect();
        let news: Vec<NewFact> = (0..500)
            .map(|i| NewFact {
                content: format!(
                    "Fact item{i} about subsystem{} and module{}",
                    i * 7919 % 1000,
                    i * 31 % 97
                ),
                category: CATEGORIES[i % 6].into(),
                tags: vec![format!("tag{}", i % 12)],
                source: "import".into(),
            })
            .collect();
        store.add_all(news).expect("import");
        let digest = index_digest(&store);
        assert!(
            digest.chars().count() <= DIGEST_CAP,
            "{}",
            digest.chars().count()
        );
        assert!(digest.starts_with("Profile: Ana · backend engineer"));
        assert!(digest.contains("Projects: proj8, proj7, proj6, proj5, proj4, proj3\n"));
        assert_eq!(store.facts.len(), 500);
        assert!(digest.contains("Facts: 500 stored (architecture 84, pattern 84, preference 83, gotcha 83, project 83, personal 83)"));
        assert!(
            digest
                .ends_with("For details call the memory tool with action \"recall\" and a query.")
        );
        assert_eq!(digest, index_digest(&store));
    }
}
