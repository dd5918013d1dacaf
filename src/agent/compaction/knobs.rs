//! The reference system's microcompact knobs under chatcli's schedules: which schedule a user's
//! knobs select, and the one notice naming a knob that does nothing.
//!
//! Mental model: `TRUNCATE_TURNS`, `SUMMARIZE_TURNS`, `HEAD_CHARS` and `TAIL_CHARS` describe
//! stages (whole, then head + tail, then a summary line) that only the `batched` and `eager`
//! schedules have; the default `consumed` schedule places each result once, on arrival. So a
//! stage knob set while `CHATCLI_MICROCOMPACT_SCHEDULE` is unset selects `batched`, the cheaper
//! of the two staged schedules in `chatcli bench`'s totals on both cache families
//! (`docs/benchmark.md`, "The reference system's knobs");
//! `MIN_CONTENT` is honoured by every schedule (under `consumed`, results shorter than it stay
//! whole). What a newcomer gets wrong: a knob next to an explicit `consumed` schedule, or with
//! microcompact off, still does nothing — that is said once, at the session's start.

use super::{Schedule, Settings};

/// The knobs that only the staged schedules read, in the order the notice names them.
pub const STAGE_KNOBS: [&str; 4] = [
    "CHATCLI_MICROCOMPACT_TRUNCATE_TURNS",
    "CHATCLI_MICROCOMPACT_SUMMARIZE_TURNS",
    "CHATCLI_MICROCOMPACT_HEAD_CHARS",
    "CHATCLI_MICROCOMPACT_TAIL_CHARS",
];

/// The schedule when the user named none: `batched` if a stage knob is set, else the default.
pub fn implied_schedule(stage_knobs_set: [bool; 4]) -> Schedule {
    if stage_knobs_set.iter().any(|set| *set) {
        Schedule::Batched
    } else {
        Schedule::default()
    }
}

impl Settings {
    /// The stage knobs the user set that these settings never read.
    pub fn unused_knobs(&self) -> Vec<&'static str> {
        let staged = self.enabled && self.schedule != Schedule::Consumed;
        if staged {
            return Vec::new();
        }
        STAGE_KNOBS
            .iter()
            .zip(self.stage_knobs_set)
            .filter(|(_, set)| *set)
            .map(|(name, _)| *name)
            .collect()
    }

    /// The start-of-session notice naming the knobs that have no effect, if any.
    pub fn unused_knobs_notice(&self) -> Option<String> {
        let unused = self.unused_knobs();
        if unused.is_empty() {
            return None;
        }
        let why = if self.enabled {
            "under CHATCLI_MICROCOMPACT_SCHEDULE=consumed, which places each result once on \
             arrival; set the schedule to batched or eager (or leave it unset) for the stages"
        } else {
            "with CHATCLI_MICROCOMPACT=off, which sends every tool result whole"
        };
        let verb = if unused.len() == 1 { "has" } else { "have" };
        Some(format!("{} {verb} no effect {why}", unused.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stage_knob_selects_batched_and_an_ignored_one_is_named() {
        assert_eq!(implied_schedule([false; 4]), Schedule::Consumed);
        assert_eq!(
            implied_schedule([true, false, false, false]),
            Schedule::Batched
        );
        let consumed = Settings {
            stage_knobs_set: [true, true, false, false],
            ..Settings::default()
        };
        assert_eq!(
            consumed.unused_knobs_notice().as_deref(),
            Some(
                "CHATCLI_MICROCOMPACT_TRUNCATE_TURNS, CHATCLI_MICROCOMPACT_SUMMARIZE_TURNS have \
                 no effect under CHATCLI_MICROCOMPACT_SCHEDULE=consumed, which places each \
                 result once on arrival; set the schedule to batched or eager (or leave it \
                 unset) for the stages"
            )
        );
        let batched = Settings {
            schedule: Schedule::Batched,
            ..consumed
        };
        assert_eq!(batched.unused_knobs_notice(), None);
        let off = Settings {
            enabled: false,
            stage_knobs_set: [false, false, true, false],
            ..batched
        };
        assert!(
            off.unused_knobs_notice().is_some_and(|n| n.starts_with(
                "CHATCLI_MICROCOMPACT_HEAD_CHARS has no effect with CHATCLI_MICROCOMPACT=off"
            )),
            "{:?}",
            off.unused_knobs_notice()
        );
        assert_eq!(Settings::default().unused_knobs_notice(), None);
    }
}
