//! The names MCP tools are offered under and the schemas they are offered with.
//!
//! A server tool becomes `mcp__<server>__<tool>`: characters outside `[A-Za-z0-9_-]` become `_`
//! and the name is cut to 64 characters (the strictest provider limit). A name that is too long
//! or already taken ends in `_` and 8 hex digits of a hash of the original server and tool
//! names, assigned in sorted (server, tool) order, so the same servers always yield the same
//! names. Schemas are reduced to the keywords every provider accepts (Gemini's function
//! declarations are the narrowest: no `$ref`, no `additionalProperties`, one `type`).

use std::collections::BTreeSet;

use serde_json::{Map, Value};
use sha2::Digest;

/// Longest tool name any provider accepts.
pub const MAX_NAME: usize = 64;

/// `[A-Za-z0-9_-]` kept, anything else `_`.
pub fn sanitize(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn hash8(server: &str, tool: &str) -> String {
    let digest = sha2::Sha256::digest(format!("{server}\0{tool}").as_bytes());
    digest.iter().take(4).map(|b| format!("{b:02x}")).collect()
}

/// The offered names of `(server, tool)` pairs, in the order given; give them sorted.
pub fn assign(pairs: &[(String, String)]) -> Vec<String> {
    let mut taken = BTreeSet::new();
    let mut names = Vec::with_capacity(pairs.len());
    for (server, tool) in pairs {
        let plain = format!("mcp__{}__{}", sanitize(server), sanitize(tool));
        let mut name = if plain.len() <= MAX_NAME && !taken.contains(&plain) {
            plain
        } else {
            let head: String = plain.chars().take(MAX_NAME - 9).collect();
            format!("{head}_{}", hash8(server, tool))
        };
        let mut n = 2;
        while taken.contains(&name) {
            // Two hashes colliding: practically never, but the rule stays deterministic.
            let head: String = name.chars().take(MAX_NAME - 12).collect();
            name = format!("{head}_{n:03}");
            n += 1;
        }
        taken.insert(name.clone());
        names.push(name);
    }
    names
}

/// Keywords kept in an adapted schema.
const KEPT: &[&str] = &[
    "type",
    "description",
    "enum",
    "properties",
    "required",
    "items",
    "format",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "nullable",
    "anyOf",
];

/// The input schema as offered: local `$ref`s inlined, type arrays reduced to one type plus
/// `nullable`, unknown keywords dropped, and always an object with `properties`.
pub fn adapt_schema(schema: &Value) -> Value {
    let defs = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .cloned()
        .unwrap_or(Value::Null);
    let mut out = adapt(schema, &defs, 0);
    if let Value::Object(map) = &mut out {
        map.insert("type".into(), Value::String("object".into()));
        map.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
    } else {
        out = serde_json::json!({"type": "object", "properties": {}});
    }
    out
}

fn adapt(schema: &Value, defs: &Value, depth: usize) -> Value {
    let Value::Object(map) = schema else {
        return Value::Object(Map::new());
    };
    if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
        let name = reference
            .strip_prefix("#/$defs/")
            .or_else(|| reference.strip_prefix("#/definitions/"));
        return match name.and_then(|n| defs.get(n)) {
            Some(target) if depth < 8 => adapt(target, defs, depth + 1),
            // A recursive or foreign reference: the model gets an untyped value.
            _ => Value::Object(Map::new()),
        };
    }
    let mut out = Map::new();
    for (key, value) in map {
        if !KEPT.contains(&key.as_str()) {
            continue;
        }
        let adapted = match key.as_str() {
            "type" => match value {
                Value::Array(types) => {
                    let named: Vec<&str> = types
                        .iter()
                        .filter_map(Value::as_str)
                        .filter(|t| *t != "null")
                        .collect();
                    if named.len() < types.len() {
                        out.insert("nullable".into(), Value::Bool(true));
                    }
                    match named.first() {
                        Some(t) => Value::String((*t).to_string()),
                        None => continue,
                    }
                }
                other => other.clone(),
            },
            "properties" => match value {
                Value::Object(props) => Value::Object(
                    props
                        .iter()
                        .map(|(k, v)| (k.clone(), adapt(v, defs, depth)))
                        .collect(),
                ),
                _ => continue,
            },
            "items" => adapt(value, defs, depth),
            "anyOf" => match value {
                Value::Array(options) => {
                    Value::Array(options.iter().map(|o| adapt(o, defs, depth)).collect())
                }
                _ => continue,
            },
            _ => value.clone(),
        };
        out.insert(key.clone(), adapted);
    }
    Value::Object(out)
}

/// The first sentence of a description (up to the first `. ` or line break, at most 160
/// characters), for the deferred catalog.
pub fn first_sentence(description: &str) -> String {
    let text = description.trim();
    let line = text.lines().next().unwrap_or_default();
    // Up to and with the period (one byte) of the first `. `.
    let sentence = match line.split_once(". ") {
        Some((before, _)) => line.get(..=before.len()).unwrap_or(line),
        None => line,
    };
    let (cut, more) = crate::tools::take_chars(sentence.trim(), 160);
    if more {
        format!("{cut}…")
    } else {
        cut.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(s, t)| (s.to_string(), t.to_string()))
            .collect()
    }

    #[test]
    fn names_are_sanitised_cut_and_collisions_resolved_the_same_way_every_time() {
        let long = "a".repeat(80);
        let input = pairs(&[
            ("my.server", "get weather"),
            ("my_server", "get_weather"),
            ("s", &long),
        ]);
        let names = assign(&input);
        assert_eq!(names[0], "mcp__my_server__get_weather");
        assert_ne!(names[1], names[0], "a collision gets its own name");
        assert!(names[1].starts_with("mcp__my_server__get_weather_"));
        assert!(names.iter().all(|n| n.len() <= MAX_NAME), "{names:?}");
        assert!(names.iter().all(|n| {
            n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        }));
        assert_eq!(assign(&input), names, "deterministic");
    }

    #[test]
    fn schemas_keep_the_common_subset() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "additionalProperties": false,
            "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}},
            "properties": {
                "where": {"$ref": "#/$defs/Point"},
                "note": {"type": ["string", "null"], "default": "x", "description": "a note"}
            },
            "required": ["where"]
        });
        assert_eq!(
            adapt_schema(&schema),
            json!({
                "type": "object",
                "properties": {
                    "where": {"type": "object", "properties": {"x": {"type": "number"}}},
                    "note": {"type": "string", "nullable": true, "description": "a note"}
                },
                "required": ["where"]
            })
        );
        assert_eq!(
            adapt_schema(&json!({})),
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn catalog_lines_take_the_first_sentence() {
        assert_eq!(
            first_sentence("Echoes the input. Use it to test.\nMore."),
            "Echoes the input."
        );
        assert_eq!(first_sentence("Adds two numbers"), "Adds two numbers");
    }
}
