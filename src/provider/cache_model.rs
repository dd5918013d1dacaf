//! A model of provider prompt caches, computed from request bytes alone.
//!
//! A request is a sequence of segments in wire order (each tool, each system block, each
//! message), each with its o200k token count, how many content blocks it holds and the hash of
//! everything up to and including it.
//! - Anthropic semantics: at each `cache_control` marker the prefix up to it is written if it
//!   holds at least 1,024 tokens; a request reads the longest prefix written before that ends at
//!   or up to 20 content blocks before one of its markers; input after the last marker is
//!   uncached; an entry lives 5 minutes (written at 1.25× the input price) or 1 hour (2×) from
//!   its last use, as its marker asked (`write_ttl`), and a read refreshes it for its own
//!   lifetime.
//! - OpenAI semantics: automatic; the longest prefix shared with an earlier request is read,
//!   counted from 1,024 tokens in steps of 128 (billed at the expected remainder, half a step:
//!   see `openai_cached`); cached tokens are part of the prompt tokens.
//!   Prefixes are kept after their last use for a time the model does not know exactly: in
//!   memory, OpenAI's guide says "typically cleared within 5 to 10 minutes of inactivity", so a
//!   prefix idle up to 5 minutes is kept, one idle 10 minutes or more is gone, and in between
//!   it is kept with a chance falling evenly from 1 to 0 (a request after a 7½-minute pause is
//!   billed half as a hit, half as a miss: the expected bill, not either end of the range);
//!   extended (`24h`), 24 hours.
//! - The floor: perfect prefix caching without a price for it — every token of a prefix sent
//!   before is read at the cache-read price, every other token costs plain input (no write
//!   premium, no minimum, no marker limit, no TTL). A provider's cache can only read a prefix
//!   that was sent before and never charges less than input for the rest, so no client sending
//!   these requests can pay less: `cost ≥ floor` holds for every run.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use crate::conversation::ModelRequest;
use crate::provider::UsageRecord;
use crate::provider::cache_policy::{
    OPENAI_EXTENDED_SECS, OPENAI_IN_MEMORY_MAX_SECS, OPENAI_IN_MEMORY_SECS,
};

/// Smallest cacheable prefix, in tokens.
pub const MIN_PREFIX: u64 = 1024;
/// How far back from a marker Anthropic looks for an earlier write, in content blocks.
pub const LOOKBACK: usize = 20;
/// Cache entry lifetime after its last use, in seconds (Anthropic's default marker).
pub const TTL_SECS: u64 = 300;
/// An Anthropic entry written by a 1-hour marker, in seconds.
pub const TTL_LONG_SECS: u64 = 3600;
/// OpenAI counts cached tokens in steps of this many beyond the minimum.
pub const STEP: u64 = 128;

/// How long OpenAI keeps a prefix after its last use: surely up to `sure` seconds, surely not
/// from `most` on, and in between with a chance falling evenly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub sure: u64,
    pub most: u64,
}

impl Retention {
    /// In memory: "typically cleared within 5 to 10 minutes of inactivity".
    pub const IN_MEMORY: Retention = Retention {
        sure: OPENAI_IN_MEMORY_SECS,
        most: OPENAI_IN_MEMORY_MAX_SECS,
    };
    /// Extended (`24h`).
    pub const EXTENDED: Retention = Retention {
        sure: OPENAI_EXTENDED_SECS,
        most: OPENAI_EXTENDED_SECS,
    };

    /// The chance a prefix idle `age` seconds is still kept.
    pub fn kept(&self, age: u64) -> f64 {
        if age <= self.sure {
            1.0
        } else if age >= self.most {
            0.0
        } else {
            (self.most - age) as f64 / (self.most - self.sure) as f64
        }
    }
}

/// How a provider caches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Semantics {
    Anthropic,
    OpenAi,
}

/// One unit of a request: the hash of the prefix ending with it, its own tokens and how many
/// content blocks it holds (a tool or a system block is one; a message one per block).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub prefix_hash: u64,
    pub tokens: u64,
    pub blocks: usize,
}

/// Builds segments of one block each from per-unit (content hash, tokens), chaining the hashes.
pub fn chain(units: &[(u64, u64)]) -> Vec<Segment> {
    let mut running: u64 = 0xcbf2_9ce4_8422_2325;
    units
        .iter()
        .map(|(hash, tokens)| {
            running = (running ^ hash)
                .wrapping_mul(0x0100_0000_01b3)
                .rotate_left(17)
                ^ tokens;
            Segment {
                prefix_hash: running,
                tokens: *tokens,
                blocks: 1,
            }
        })
        .collect()
}

/// A provider's cache over a session, with a clock in seconds.
#[derive(Debug, Clone)]
pub struct CacheModel {
    semantics: Semantics,
    /// Anthropic: written prefixes, when they expire and their lifetime.
    written: HashMap<u64, (u64, u64)>,
    /// OpenAI: every prefix sent before, and when it was last used.
    sent: HashMap<u64, u64>,
    /// The floor: every prefix sent before, whatever the rules.
    floor_seen: HashSet<u64>,
    pub now: u64,
    /// Anthropic: the lifetime of entries the next request's markers write, in seconds.
    pub write_ttl: u64,
    /// OpenAI: how long a prefix is kept after its last use.
    pub retention: Retention,
}

/// What OpenAI reads of a shared prefix of `shared` tokens, expected: it reads from 1,024 on
/// in steps of 128, so the last step's remainder is not read. Which side of a step a request
/// lands on depends on the model's own token count (its chat template, its rendering of the
/// tools), which these o200k counts of the JSON miss by more than a step; so the remainder is
/// billed at its expectation, half a step, not at the value the estimate happens to give (a
/// few tokens more or less in a prefix then moved a request's bill by up to 127 tokens). The
/// 1,024-token minimum is applied to the estimate as it is (near it, a prefix is read whole or
/// not at all).
fn openai_cached(shared: u64) -> u64 {
    if shared >= MIN_PREFIX {
        MIN_PREFIX.max(shared - STEP / 2)
    } else {
        0
    }
}

fn prefix_tokens(segments: &[Segment], end: usize) -> u64 {
    segments.iter().take(end).map(|s| s.tokens).sum()
}

/// The segments whose end a marker after segment `m` can find, newest first: `m` itself and
/// those ending at most `LOOKBACK` blocks before it.
fn within_lookback(segments: &[Segment], m: usize) -> impl Iterator<Item = usize> + '_ {
    let mut back = 0usize;
    (0..=m).rev().take_while(move |&i| {
        let ok = back <= LOOKBACK;
        // The blocks between the end of segment i - 1 and the marker.
        back += segments.get(i).map_or(0, |s| s.blocks);
        ok
    })
}

impl CacheModel {
    /// An empty cache.
    pub fn new(semantics: Semantics) -> Self {
        CacheModel {
            semantics,
            written: HashMap::new(),
            sent: HashMap::new(),
            floor_seen: HashSet::new(),
            now: 0,
            write_ttl: TTL_SECS,
            retention: Retention::IN_MEMORY,
        }
    }

    /// Whose rules it bills by.
    pub fn semantics(&self) -> Semantics {
        self.semantics
    }

    /// Usage of a request of `segments` with cache markers after the segments at `markers`
    /// (ignored under OpenAI semantics).
    pub fn account(&mut self, segments: &[Segment], markers: &[usize]) -> UsageRecord {
        let total: u64 = segments.iter().map(|s| s.tokens).sum();
        match self.semantics {
            Semantics::OpenAi => {
                let now = self.now;
                let retention = self.retention;
                self.sent
                    .retain(|_, used| now.saturating_sub(*used) < retention.most);
                // A prefix is never idle longer than a longer one (a request refreshes every
                // prefix it holds), so under one clearing time the prefixes kept are the
                // shortest ones: the expected read is each step's tokens times the chance that
                // the prefix ending with it is kept.
                let mut expected = 0.0;
                let (mut shared, mut below) = (0u64, 0u64);
                for segment in segments {
                    let Some(used) = self.sent.get(&segment.prefix_hash) else {
                        break;
                    };
                    shared += segment.tokens;
                    let read = openai_cached(shared);
                    let kept = retention.kept(now.saturating_sub(*used));
                    expected += kept * read.saturating_sub(below) as f64;
                    below = read;
                }
                let cached = (expected.round() as u64).min(total);
                self.sent
                    .extend(segments.iter().map(|s| (s.prefix_hash, now)));
                UsageRecord {
                    uncached_input: total - cached,
                    cache_read: cached,
                    ..UsageRecord::default()
                }
            }
            Semantics::Anthropic => {
                let now = self.now;
                self.written.retain(|_, (expires, _)| *expires > now);
                // The longest earlier write ending at, or up to 20 blocks before, a marker.
                let mut read_end = 0usize;
                for &m in markers.iter().filter(|m| **m < segments.len()) {
                    if let Some(end) = within_lookback(segments, m).find(|i| {
                        segments
                            .get(*i)
                            .is_some_and(|s| self.written.contains_key(&s.prefix_hash))
                    }) {
                        read_end = read_end.max(end + 1);
                    }
                }
                let read = prefix_tokens(segments, read_end);
                // A read refreshes the entry for its own lifetime.
                if let Some(last) = read_end.checked_sub(1).and_then(|i| segments.get(i))
                    && let Some((expires, ttl)) = self.written.get_mut(&last.prefix_hash)
                {
                    *expires = now + *ttl;
                }
                let mut written_end = read_end;
                for (m, segment) in markers
                    .iter()
                    .filter_map(|&m| segments.get(m).map(|s| (m, s)))
                {
                    if prefix_tokens(segments, m + 1) >= MIN_PREFIX {
                        // An entry already there keeps its own lifetime (no free upgrade).
                        let ttl = match self.written.get(&segment.prefix_hash) {
                            Some((_, ttl)) => *ttl,
                            None => self.write_ttl,
                        };
                        self.written.insert(segment.prefix_hash, (now + ttl, ttl));
                        written_end = written_end.max(m + 1);
                    }
                }
                let write = prefix_tokens(segments, written_end) - read;
                let long = self.write_ttl > TTL_SECS;
                UsageRecord {
                    uncached_input: total - read - write,
                    cache_read: read,
                    cache_write_5m: if long { 0 } else { write },
                    cache_write_1h: if long { write } else { 0 },
                    ..UsageRecord::default()
                }
            }
        }
    }

    /// The floor for this request: (tokens of a prefix sent before, the other tokens).
    pub fn floor(&mut self, segments: &[Segment]) -> (u64, u64) {
        let common = segments
            .iter()
            .take_while(|s| self.floor_seen.contains(&s.prefix_hash))
            .count();
        let read = prefix_tokens(segments, common);
        let total: u64 = segments.iter().map(|s| s.tokens).sum();
        self.floor_seen
            .extend(segments.iter().map(|s| s.prefix_hash));
        (read, total - read)
    }
}

/// A 64-bit hash of `bytes` (std's SipHash: stable within a run, which is all the model needs).
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// How a text's tokens are counted: exactly (`tokens::count`, the benchmark) or roughly (the
/// demo, which must not load the encoder).
pub type Counter = fn(&str) -> u64;

/// Tokens of `text` by `counter`, memoised by its hash.
pub fn count(memo: &mut HashMap<u64, u64>, hash: u64, text: &str, counter: Counter) -> u64 {
    *memo.entry(hash).or_insert_with(|| counter(text))
}

/// The request as cache segments (tools, system blocks, messages) and where markers go; each
/// distinct text is counted once with `counter` and remembered in `memo`.
pub fn segments(
    request: &ModelRequest,
    memo: &mut HashMap<u64, u64>,
    markers: bool,
    counter: Counter,
) -> (Vec<Segment>, Vec<usize>) {
    let mut units = Vec::new();
    // The unit of each message, for the rolling marker, and its content blocks.
    let mut message_units = Vec::new();
    let mut blocks = Vec::new();
    for tool in &request.tools {
        let text = serde_json::to_string(tool).unwrap_or_default();
        let h = hash_bytes(text.as_bytes());
        units.push((h, count(memo, h, &text, counter)));
    }
    for block in &request.system {
        let h = hash_bytes(block.text.as_bytes());
        units.push((h, count(memo, h, &block.text, counter)));
    }
    for message in &request.messages {
        let text = serde_json::to_string(message).unwrap_or_default();
        let h = hash_bytes(text.as_bytes());
        message_units.push(units.len());
        // Every block of the message, including those a wire drops (empty text, unsigned
        // thinking): the count errs towards "out of reach".
        blocks.push(message.content.len().max(1));
        units.push((h, count(memo, h, &text, counter)));
    }
    let mut at = Vec::new();
    if markers {
        let tools = request.tools.len();
        if tools > 0 {
            at.push(tools - 1);
        }
        if let Some(i) = request.system.iter().rposition(|b| b.stable) {
            at.push(tools + i);
        }
        // The rolling marker, where the provider puts it (`ModelRequest::rolling_marker`).
        // and the bridge where the previous request's was (`ModelRequest::bridge_marker`).
        for m in [request.bridge_marker(), request.rolling_marker()] {
            if let Some(unit) = m.and_then(|m| message_units.get(m)) {
                at.push(*unit);
            }
        }
    }
    let mut segments = chain(&units);
    for (unit, n) in message_units.iter().zip(blocks) {
        if let Some(segment) = segments.get_mut(*unit) {
            segment.blocks = n;
        }
    }
    (segments, at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(tokens: &[u64]) -> Vec<Segment> {
        let units: Vec<(u64, u64)> = tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (i as u64 + 1, *t))
            .collect();
        chain(&units)
    }

    #[test]
    fn anthropic_writes_at_markers_and_reads_the_longest_earlier_write() {
        let mut cache = CacheModel::new(Semantics::Anthropic);
        // tools 600, system 600 (marker), message 300 (marker).
        let first = segs(&[600, 600, 300]);
        let u1 = cache.account(&first, &[1, 2]);
        assert_eq!(
            (u1.cache_read, u1.cache_write_5m, u1.uncached_input),
            (0, 1500, 0)
        );
        // The next request extends the conversation by one message and moves the rolling marker.
        let second = segs(&[600, 600, 300, 200]);
        let u2 = cache.account(&second, &[1, 3]);
        assert_eq!(
            (u2.cache_read, u2.cache_write_5m, u2.uncached_input),
            (1500, 200, 0)
        );
    }

    #[test]
    fn anthropic_needs_1024_tokens_and_markers() {
        let mut cache = CacheModel::new(Semantics::Anthropic);
        let small = segs(&[300, 300, 300]);
        let u = cache.account(&small, &[2]);
        assert_eq!(
            (u.cache_read, u.cache_write_5m, u.uncached_input),
            (0, 0, 900),
            "under the minimum"
        );
        let u = cache.account(&small, &[2]);
        assert_eq!(u.cache_read, 0);
        let big = segs(&[800, 800, 300]);
        let u = cache.account(&big, &[]);
        assert_eq!(
            (u.cache_read, u.cache_write_5m, u.uncached_input),
            (0, 0, 1900),
            "no marker, no cache"
        );
        let u = cache.account(&big, &[1]);
        assert_eq!(
            (u.cache_write_5m, u.uncached_input),
            (1600, 300),
            "input after the last marker is uncached"
        );
    }

    #[test]
    fn anthropic_lookback_is_20_segments() {
        let mut cache = CacheModel::new(Semantics::Anthropic);
        let mut tokens = vec![1100];
        tokens.extend(std::iter::repeat_n(10, 30));
        let all = segs(&tokens);
        cache.account(&all[..1], &[0]);
        // A marker 20 segments after the write finds it; 21 segments after does not.
        let near = cache.account(&all[..21], &[20]);
        assert_eq!(near.cache_read, 1100);
        let mut fresh = CacheModel::new(Semantics::Anthropic);
        fresh.account(&all[..1], &[0]);
        let far = fresh.account(&all[..23], &[22]);
        assert_eq!(far.cache_read, 0);
    }

    #[test]
    fn anthropic_lookback_counts_content_blocks_and_a_bridge_reaches_past_it() {
        let mut cache = CacheModel::new(Semantics::Anthropic);
        // Prefix (written), then a turn of 12 calls and 12 results: 24 blocks in two segments.
        let mut all = segs(&[1100, 120, 120]);
        all[1].blocks = 12;
        all[2].blocks = 12;
        cache.account(&all[..1], &[0]);
        let mut without = cache.clone();
        let far = without.account(&all, &[2]);
        assert_eq!(far.cache_read, 0, "24 blocks back is out of reach");
        let bridged = cache.account(&all, &[0, 2]);
        assert_eq!(
            (bridged.cache_read, bridged.cache_write_5m),
            (1100, 240),
            "the bridge finds the earlier write"
        );
        // 20 blocks back is still found.
        let mut near = CacheModel::new(Semantics::Anthropic);
        near.account(&all[..1], &[0]);
        let mut twenty = all.clone();
        twenty[1].blocks = 10;
        twenty[2].blocks = 10;
        assert_eq!(near.account(&twenty, &[2]).cache_read, 1100);
    }

    #[test]
    fn anthropic_entries_expire_after_five_minutes_unless_used() {
        let mut cache = CacheModel::new(Semantics::Anthropic);
        let s = segs(&[1200, 100]);
        cache.account(&s, &[0]);
        cache.now = 200;
        assert_eq!(
            cache.account(&s, &[0]).cache_read,
            1200,
            "a read refreshes the TTL"
        );
        cache.now = 450;
        assert_eq!(cache.account(&s, &[0]).cache_read, 1200);
        cache.now = 800;
        assert_eq!(cache.account(&s, &[0]).cache_read, 0, "expired");
    }

    #[test]
    fn a_one_hour_entry_outlives_a_pause_that_empties_the_five_minute_cache_and_costs_2x() {
        let s = segs(&[1200, 100]);
        let mut short = CacheModel::new(Semantics::Anthropic);
        let mut long = CacheModel::new(Semantics::Anthropic);
        long.write_ttl = TTL_LONG_SECS;
        let first = long.account(&s, &[0]);
        assert_eq!((first.cache_write_1h, first.cache_write_5m), (1200, 0));
        short.account(&s, &[0]);
        // Twenty minutes later.
        short.now = 1200;
        long.now = 1200;
        assert_eq!(
            short.account(&s, &[0]).cache_write_5m,
            1200,
            "written again"
        );
        let after = long.account(&s, &[0]);
        assert_eq!((after.cache_read, after.cache_write()), (1200, 0));
        // The read refreshed it for another hour.
        long.now = 1200 + 3500;
        assert_eq!(long.account(&s, &[0]).cache_read, 1200);
    }

    #[test]
    fn openai_forgets_within_5_to_10_minutes_in_memory_but_not_with_24h() {
        let s = segs(&[1100, 100]);
        let mut memory = CacheModel::new(Semantics::OpenAi);
        let mut extended = CacheModel::new(Semantics::OpenAi);
        extended.retention = Retention::EXTENDED;
        memory.account(&s, &[]);
        extended.account(&s, &[]);
        memory.now = 5 * 60;
        extended.now = 5 * 60;
        assert_eq!(memory.account(&s, &[]).cache_read, 1136, "5 minutes: kept");
        // 7½ minutes idle: kept or not, even odds; billed as half of each.
        memory.now += 450;
        assert_eq!(memory.account(&s, &[]).cache_read, 568, "7½ minutes");
        memory.now += 11 * 60;
        extended.now += 11 * 60 + 3 * 3600;
        assert_eq!(
            memory.account(&s, &[]).cache_read,
            0,
            "11 minutes idle: gone"
        );
        assert_eq!(extended.account(&s, &[]).cache_read, 1136);
    }

    #[test]
    fn openai_bills_each_prefix_by_its_own_idle_time() {
        let (a, b, c) = (1100, 100, 100);
        let mut memory = CacheModel::new(Semantics::OpenAi);
        let all = segs(&[a, b, c]);
        memory.account(&all, &[]);
        memory.now = 100;
        memory.account(&all[..2], &[]);
        memory.now = 400;
        memory.account(&all[..1], &[]);
        // At 500 s the prefixes are idle 100 s (kept), 400 s (kept at ⅔) and 500 s (⅓):
        // 1,036 + ⅔ × 100 + ⅓ × 100.
        memory.now = 500;
        assert_eq!(memory.account(&all, &[]).cache_read, 1136);
    }

    #[test]
    fn openai_reads_the_common_prefix_from_1024_less_half_a_step() {
        let mut cache = CacheModel::new(Semantics::OpenAi);
        let first = segs(&[700, 600, 50]);
        let u1 = cache.account(&first, &[]);
        assert_eq!((u1.cache_read, u1.uncached_input), (0, 1350));
        let second = segs(&[700, 600, 50, 400]);
        let u2 = cache.account(&second, &[]);
        // 1,350 shared → 1,350 − 64 = 1,286 cached (the last step's remainder, expected).
        assert_eq!((u2.cache_read, u2.uncached_input), (1286, 464));
        // Twenty tokens more in the prefix are twenty more read, never a step's worth less.
        let mut longer = CacheModel::new(Semantics::OpenAi);
        longer.account(&segs(&[720, 600, 50]), &[]);
        let u3 = longer.account(&segs(&[720, 600, 50, 400]), &[]);
        assert_eq!((u3.cache_read, u3.uncached_input), (1306, 464));
        // Just over the minimum, the minimum is read.
        let mut edge = CacheModel::new(Semantics::OpenAi);
        edge.account(&segs(&[1050]), &[]);
        assert_eq!(edge.account(&segs(&[1050, 10]), &[]).cache_read, 1024);
        let small = segs(&[500]);
        let mut fresh = CacheModel::new(Semantics::OpenAi);
        fresh.account(&small, &[]);
        assert_eq!(
            fresh.account(&small, &[]).cache_read,
            0,
            "under 1,024 nothing is cached"
        );
    }

    #[test]
    fn the_floor_reads_every_shared_prefix() {
        let mut cache = CacheModel::new(Semantics::Anthropic);
        assert_eq!(cache.floor(&segs(&[10, 20])), (0, 30));
        assert_eq!(cache.floor(&segs(&[10, 20, 5])), (30, 5));
    }
}
