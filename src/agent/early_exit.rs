//! Stagnation early-exit: stop a tool loop that repeats itself instead of paying for it.
//!
//! Each turn's tool batch gets a `Fingerprint`: per call, `name:` + its arguments as canonical
//! JSON (object keys sorted recursively, no insignificant whitespace, strings kept exactly); the
//! per-call signatures sorted, joined by newlines, hashed with SHA-256; the first 8 bytes in hex.
//! So `[read A, read B]` and `[read B, read A]` match, and so do `{"a":1,"b":2}` and
//! `{"b":2,"a":1}`. The `StagnationGuard` fires when the same fingerprint comes `threshold` turns
//! in a row, or when two fingerprints alternate for `threshold` whole cycles (A B A B A B). It
//! fires *before* the batch runs: the caller answers that batch with "not executed" results.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The fingerprint of one tool batch: 16 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Fingerprint(pub String);

/// Compact JSON with object keys sorted at every depth; strings are kept exactly.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*key).clone()).to_string());
                out.push(':');
                write_canonical(&map[key.as_str()], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

impl Fingerprint {
    /// The fingerprint of a batch of `(name, arguments)` calls.
    pub fn of<'a>(calls: impl IntoIterator<Item = (&'a str, &'a Value)>) -> Fingerprint {
        let mut signatures: Vec<String> = calls
            .into_iter()
            .map(|(name, args)| format!("{name}:{}", canonical_json(args)))
            .collect();
        signatures.sort();
        let digest = Sha256::digest(signatures.join("\n").as_bytes());
        Fingerprint(digest.iter().take(8).map(|b| format!("{b:02x}")).collect())
    }
}

/// Why the guard stopped the loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stagnation {
    /// The same batch `repeats` turns in a row.
    Repeat {
        fingerprint: Fingerprint,
        repeats: u32,
    },
    /// Two batches alternating for `cycles` whole cycles.
    Cycle {
        fingerprint: Fingerprint,
        cycles: u32,
    },
}

/// Watches the fingerprints of one prompt's turns.
#[derive(Debug, Clone)]
pub struct StagnationGuard {
    threshold: u32,
    enabled: bool,
    seen: Vec<Fingerprint>,
}

impl StagnationGuard {
    /// A guard that fires at `threshold` repeats (or cycles); disabled when `enabled` is false.
    pub fn new(enabled: bool, threshold: u32) -> Self {
        StagnationGuard {
            threshold: threshold.max(2),
            enabled,
            seen: Vec::new(),
        }
    }

    /// A turn without tool calls: progress, so counting starts again.
    pub fn reset(&mut self) {
        self.seen.clear();
    }

    /// Records a batch about to run; `Some` means it must not run.
    pub fn observe(&mut self, fingerprint: Fingerprint) -> Option<Stagnation> {
        self.seen.push(fingerprint.clone());
        if !self.enabled {
            return None;
        }
        let n = self.threshold as usize;
        let repeats = self
            .seen
            .iter()
            .rev()
            .take_while(|f| **f == fingerprint)
            .count();
        if repeats >= n {
            return Some(Stagnation::Repeat {
                fingerprint,
                repeats: repeats as u32,
            });
        }
        let len = self.seen.len();
        if len >= 2 * n {
            let (a, b) = (&self.seen[len - 1], &self.seen[len - 2]);
            let alternating = a != b
                && self.seen[len - 2 * n..]
                    .iter()
                    .rev()
                    .enumerate()
                    .all(|(i, f)| f == if i % 2 == 0 { a } else { b });
            if alternating {
                return Some(Stagnation::Cycle {
                    fingerprint,
                    cycles: self.threshold,
                });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fp(calls: &[(&str, Value)]) -> Fingerprint {
        Fingerprint::of(calls.iter().map(|(n, a)| (*n, a)))
    }

    #[test]
    fn order_of_calls_does_not_matter() {
        let a = fp(&[
            ("read_file", json!({"file": "a"})),
            ("read_file", json!({"file": "b"})),
        ]);
        let b = fp(&[
            ("read_file", json!({"file": "b"})),
            ("read_file", json!({"file": "a"})),
        ]);
        assert_eq!(a, b);
        assert_eq!(a.0.len(), 16);
    }

    #[test]
    fn order_of_keys_does_not_matter_at_any_depth() {
        let a = fp(&[(
            "t",
            json!({"a": 1, "b": {"x": [1, {"p": 1, "q": 2}], "y": 2}}),
        )]);
        let b = fp(&[(
            "t",
            json!({"b": {"y": 2, "x": [1, {"q": 2, "p": 1}]}, "a": 1}),
        )]);
        assert_eq!(a, b);
    }

    #[test]
    fn different_arguments_and_names_differ() {
        assert_ne!(
            fp(&[("read_file", json!({"file": "a"}))]),
            fp(&[("read_file", json!({"file": "b"}))])
        );
        assert_ne!(
            fp(&[("read_file", json!({"file": "a"}))]),
            fp(&[("list_directory", json!({"file": "a"}))])
        );
        assert_ne!(
            fp(&[("t", json!([1, 2]))]),
            fp(&[("t", json!([2, 1]))]),
            "array order is meaningful"
        );
    }

    #[test]
    fn whitespace_inside_string_values_matters() {
        assert_ne!(
            fp(&[("t", json!({"s": "a b"}))]),
            fp(&[("t", json!({"s": "a  b"}))])
        );
        assert_eq!(
            canonical_json(&json!({"b": "x y", "a": [1, 2]})),
            r#"{"a":[1,2],"b":"x y"}"#
        );
    }

    #[test]
    fn fires_on_the_third_identical_batch_and_resets_on_progress() {
        let mut guard = StagnationGuard::new(true, 3);
        let a = Fingerprint("a".into());
        assert_eq!(guard.observe(a.clone()), None);
        assert_eq!(guard.observe(a.clone()), None);
        assert_eq!(
            guard.observe(a.clone()),
            Some(Stagnation::Repeat {
                fingerprint: a.clone(),
                repeats: 3
            })
        );
        guard.reset();
        assert_eq!(guard.observe(a.clone()), None);
        let mut off = StagnationGuard::new(false, 3);
        for _ in 0..10 {
            assert_eq!(off.observe(a.clone()), None);
        }
    }

    #[test]
    fn detects_a_two_batch_cycle_counted_in_cycles() {
        let mut guard = StagnationGuard::new(true, 3);
        let (a, b) = (Fingerprint("a".into()), Fingerprint("b".into()));
        for f in [&a, &b, &a, &b, &a] {
            assert_eq!(guard.observe(f.clone()), None);
        }
        assert_eq!(
            guard.observe(b.clone()),
            Some(Stagnation::Cycle {
                fingerprint: b,
                cycles: 3
            })
        );
    }

    #[test]
    fn a_threshold_below_two_is_two() {
        let mut guard = StagnationGuard::new(true, 1);
        let a = Fingerprint("a".into());
        assert_eq!(guard.observe(a.clone()), None);
        assert!(guard.observe(a).is_some());
    }
}
