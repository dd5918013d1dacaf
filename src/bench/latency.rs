//! The bench's clock for the user's wait: a per-request latency model and the wall-clock time a
//! run keeps the user waiting, so parallel mode's trade (more tokens, less time) shows beside
//! its cost.
//!
//! A request takes a fixed overhead (connection, queueing, time to first token), plus a time per
//! input token the model had to process (uncached or written to the cache), a much smaller time
//! per token read from the cache, plus a time per output token. The figures are round public
//! orders of magnitude, not measurements of this machine (`docs/benchmark.md` states them):
//! Sonnet-class output at about 60 tokens a second, GPT-4.1 at about 80, prefill near 10,000
//! tokens a second, a cache read ten times faster. Tools run locally and count as no time, and
//! the user's pauses are not waiting. What a newcomer gets wrong: specialists run at once, so a
//! dispatch waits for its slowest lane, not for the sum of the lanes.

use super::ProviderModel;
use super::fake::Logged;

/// One family's latency figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    /// Seconds every request takes before its first token.
    pub overhead_s: f64,
    /// Milliseconds per input token processed (uncached or written to the cache).
    pub fresh_ms: f64,
    /// Milliseconds per input token read from the cache.
    pub read_ms: f64,
    /// Milliseconds per output token.
    pub output_ms: f64,
}

impl Latency {
    /// The figures for family `pm`.
    pub fn of(pm: ProviderModel) -> Latency {
        match pm {
            ProviderModel::Anthropic => Latency {
                overhead_s: 1.0,
                fresh_ms: 0.1,
                read_ms: 0.01,
                output_ms: 16.0,
            },
            ProviderModel::OpenAi => Latency {
                overhead_s: 0.6,
                fresh_ms: 0.1,
                read_ms: 0.01,
                output_ms: 12.0,
            },
        }
    }

    /// Seconds one request takes.
    pub fn seconds(&self, l: &Logged) -> f64 {
        let u = &l.usage;
        let fresh = (u.uncached_input + u.cache_write()) as f64;
        self.overhead_s
            + (fresh * self.fresh_ms
                + u.cache_read as f64 * self.read_ms
                + u.output as f64 * self.output_ms)
                / 1000.0
    }

    /// Seconds the user waits for the requests in `log`: the main loop's one after another,
    /// each group of specialists' lanes at once (a group waits for its slowest lane), the lanes
    /// of one dispatch being at most `CHATCLI_AGENT_MAX_PARALLEL` in the bench.
    pub fn wall_seconds(&self, log: &[Logged]) -> f64 {
        let mut main = 0.0;
        let mut lanes: Vec<f64> = Vec::new();
        for l in log {
            let s = self.seconds(l);
            match l.lane {
                None => main += s,
                Some(i) => {
                    if lanes.len() <= i {
                        lanes.resize(i + 1, 0.0);
                    }
                    if let Some(t) = lanes.get_mut(i) {
                        *t += s;
                    }
                }
            }
        }
        main + lanes.iter().copied().fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::UsageRecord;

    fn logged(uncached: u64, read: u64, output: u64, lane: Option<usize>) -> Logged {
        Logged {
            usage: UsageRecord {
                uncached_input: uncached,
                cache_read: read,
                output,
                ..UsageRecord::default()
            },
            floor_read: 0,
            floor_fresh: 0,
            fixed: 0,
            lane,
        }
    }

    #[test]
    fn lanes_run_at_once_and_the_main_loop_waits_for_the_slowest() {
        let l = Latency::of(ProviderModel::Anthropic);
        // 1 s + 10,000 × 0.1 ms + 1,000 × 0.01 ms + 100 × 16 ms = 1 + 1 + 0.01 + 1.6.
        let one = l.seconds(&logged(10_000, 1_000, 100, None));
        assert!((one - 3.61).abs() < 1e-9, "{one}");
        let log = [
            logged(10_000, 1_000, 100, None),
            logged(0, 0, 0, Some(0)),
            logged(0, 0, 0, Some(0)),
            logged(0, 0, 0, Some(1)),
            logged(0, 0, 0, None),
        ];
        // main 3.61 + 1; lane 0 takes 2 s, lane 1 one: the dispatch waits 2 s, not 3.
        let wall = l.wall_seconds(&log);
        assert!((wall - 6.61).abs() < 1e-9, "{wall}");
        // A cache read is faster than the same tokens processed.
        assert!(l.seconds(&logged(0, 10_000, 0, None)) < l.seconds(&logged(10_000, 0, 0, None)));
    }
}
