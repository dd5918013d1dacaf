//! How long to wait before sending a failed request again.
//!
//! Exponential backoff from one second, doubling, capped at 30 s, with ±20% jitter so that many
//! clients hit by the same overload do not come back in step. A provider's `Retry-After` wins
//! (capped at two minutes).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Default retries (`CHATCLI_MAX_RETRIES`).
pub const DEFAULT_MAX_RETRIES: u32 = 4;
const BASE: Duration = Duration::from_secs(1);
const CAP: Duration = Duration::from_secs(30);
const RETRY_AFTER_CAP: Duration = Duration::from_secs(120);

/// The wait before attempt `attempt` (1-based).
pub fn delay(attempt: u32, retry_after: Option<Duration>) -> Duration {
    if let Some(after) = retry_after {
        return after.min(RETRY_AFTER_CAP);
    }
    let exp = BASE
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(10))
        .min(CAP);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .subsec_nanos();
    // A factor in [0.8, 1.2) from the clock's nanoseconds: enough spread, no RNG needed.
    let factor = 0.8 + f64::from(nanos % 1000) / 1000.0 * 0.4;
    exp.mul_f64(factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_honours_retry_after() {
        for (attempt, base) in [(1u32, 1.0f64), (2, 2.0), (3, 4.0), (4, 8.0), (9, 30.0)] {
            let d = delay(attempt, None).as_secs_f64();
            assert!(
                d >= base * 0.8 - 1e-9 && d < base * 1.2,
                "attempt {attempt}: {d}"
            );
        }
        assert_eq!(
            delay(1, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
        assert_eq!(delay(1, Some(Duration::from_secs(9999))), RETRY_AFTER_CAP);
    }
}
