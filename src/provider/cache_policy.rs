//! The pause-aware cache lifetime (`CHATCLI_PROMPT_CACHE_TTL`, default `auto`): how long the
//! cache entries a request writes should live, decided per request from the session's rhythm.
//!
//! Anthropic's 5-minute entry costs 1.25× the input price to write, the 1-hour entry 2×; both
//! read at 0.1× and a read refreshes the entry. A session without pauses never lets a 5-minute
//! entry lapse, so `auto` starts with 5 minutes and pays nothing extra there; once the user has
//! been idle for more than 2 minutes between two requests (they read, run tests, go to a
//! meeting: their rhythm says longer pauses will come) every marker asks for 1 hour, so the
//! next long pause reads the conversation instead of writing it again. The 2 minutes were
//! chosen on the benchmark's scripted day (docs/benchmark.md): waiting for a pause past 5
//! minutes lost that first pause's rewrite and cost 10% more. OpenAI's extended `24h` retention costs
//! the same as in-memory, so `auto` asks for it from the first request on the models that offer
//! it. `5m` (alias `in_memory`) and `1h` (alias `24h`) fix the lifetime. What a newcomer gets
//! wrong: the benchmark's model and the real providers must take the same decision from the
//! same clock readings, so both call `PausePolicy::lifetime`; neither decides on its own.

use crate::provider::anthropic::CacheTtl;

/// The lifetime a request's cache entries get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifetime {
    /// Anthropic 5 minutes; OpenAI in memory.
    Short,
    /// Anthropic 1 hour; OpenAI `24h` where the model offers it.
    Long,
}

/// Idle time between two requests after which `auto` asks for the long lifetime, in seconds:
/// a human pause, far above the seconds between the requests of one tool loop.
pub const PAUSE_SECS: u64 = 120;

/// The shortest time OpenAI's in-memory retention keeps a prefix after its last use, in
/// seconds ("typically cleared within 5 to 10 minutes of inactivity"): the lifetime a keep-warm
/// ping must beat.
pub const OPENAI_IN_MEMORY_SECS: u64 = 300;
/// The longest ("within 5 to 10 minutes"): a prefix idle this long is gone.
pub const OPENAI_IN_MEMORY_MAX_SECS: u64 = 600;
/// OpenAI's extended retention, in seconds.
pub const OPENAI_EXTENDED_SECS: u64 = 86_400;

/// How long OpenAI keeps `model`'s prefix after a request: `24h` where it is asked for and the
/// model offers it, else the in-memory lower bound.
pub fn openai_lifetime(model: &str, extended_asked: bool) -> u64 {
    if extended_asked && crate::provider::openai_responses::offers_extended_retention(model) {
        OPENAI_EXTENDED_SECS
    } else {
        OPENAI_IN_MEMORY_SECS
    }
}

/// One session's lifetime decisions.
#[derive(Debug, Clone)]
pub struct PausePolicy {
    setting: CacheTtl,
    /// When the previous request was sent, in seconds.
    last: Option<u64>,
    /// The longest idle time seen between two requests, in seconds.
    longest_idle: u64,
    /// The lifetime the last request's entries got.
    current: Option<Lifetime>,
}

impl Lifetime {
    /// An Anthropic entry's lifetime in seconds: 5 minutes or 1 hour.
    pub fn anthropic_secs(self) -> u64 {
        match self {
            Lifetime::Short => 300,
            Lifetime::Long => 3_600,
        }
    }
}

impl PausePolicy {
    /// The policy `setting` asks for.
    pub fn new(setting: CacheTtl) -> Self {
        PausePolicy {
            setting,
            last: None,
            longest_idle: 0,
            current: None,
        }
    }

    /// The Anthropic lifetime of a request sent at `now` (seconds); remembers the time.
    pub fn lifetime(&mut self, now: u64) -> Lifetime {
        let idle = self.last.map_or(0, |last| now.saturating_sub(last));
        let lifetime = self.after_idle(idle);
        self.longest_idle = self.longest_idle.max(idle);
        self.last = Some(now);
        self.current = Some(lifetime);
        lifetime
    }

    /// The lifetime a request sent `idle` seconds after the last one would get, without
    /// sending it.
    pub fn after_idle(&self, idle: u64) -> Lifetime {
        match self.setting {
            CacheTtl::FiveMinutes => Lifetime::Short,
            CacheTtl::OneHour => Lifetime::Long,
            CacheTtl::Auto if self.longest_idle.max(idle) > PAUSE_SECS => Lifetime::Long,
            CacheTtl::Auto => Lifetime::Short,
        }
    }

    /// What the last request's entries are written with again if they lapse: the lifetime of a
    /// request sent after an idle time as long as theirs (a keep-warm ping weighs itself against
    /// that write, `agent::keepwarm`). `None` before any request.
    pub fn after_lapse(&self) -> Option<Lifetime> {
        self.current
            .map(|lifetime| self.after_idle(lifetime.anthropic_secs()))
    }

    /// The lifetime the last request's entries got, if a request was sent; a keep-warm ping
    /// asks for it again without counting as a request (`agent::keepwarm`).
    pub fn last_lifetime(&self) -> Option<Lifetime> {
        self.current
    }

    /// Whether an OpenAI model that offers extended retention is asked for `24h`.
    pub fn extended_retention(&self) -> bool {
        self.setting != CacheTtl::FiveMinutes
    }

    /// The longest idle time seen between two requests, in seconds.
    pub fn longest_idle(&self) -> u64 {
        self.longest_idle
    }
}

/// What the policy does for `model`, in one line for `/config`: which lifetime its entries
/// get and when, or that nothing is asked (`CHATCLI_PROMPT_CACHE=off`, or a model whose
/// provider caches on its own terms).
pub fn describe(setting: CacheTtl, prompt_cache: bool, model: &str) -> String {
    let name = setting.name();
    if !prompt_cache {
        return "off: no cache markers, no retention asked (CHATCLI_PROMPT_CACHE=off)".into();
    }
    let claude = model.to_ascii_lowercase().contains("claude");
    let extended = crate::provider::openai_responses::offers_extended_retention(model);
    match (setting, claude, extended) {
        (CacheTtl::Auto, true, _) => format!(
            "{name}: 5-minute cache entries, 1-hour ones from the first pause over {} min",
            PAUSE_SECS / 60
        ),
        (CacheTtl::FiveMinutes, true, _) => format!("{name}: 5-minute cache entries"),
        (CacheTtl::OneHour, true, _) => format!("{name}: 1-hour cache entries"),
        (CacheTtl::FiveMinutes, false, true) => {
            format!("{name}: in-memory retention (typically 5-10 min idle)")
        }
        (_, false, true) => format!("{name}: 24h retention asked (same price as in-memory)"),
        (_, false, false) => format!("{name}: the provider's own caching; no lifetime to ask"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_line_says_what_each_model_gets() {
        assert_eq!(
            describe(CacheTtl::Auto, true, "claude-sonnet-4-5"),
            "auto: 5-minute cache entries, 1-hour ones from the first pause over 2 min"
        );
        assert_eq!(
            describe(CacheTtl::Auto, true, "gpt-5.1"),
            "auto: 24h retention asked (same price as in-memory)"
        );
        assert!(describe(CacheTtl::FiveMinutes, true, "gpt-4.1").contains("in-memory"));
        assert!(describe(CacheTtl::OneHour, true, "claude-opus-4-5").contains("1-hour"));
        assert!(describe(CacheTtl::Auto, true, "gpt-5-mini").contains("provider's own"));
        assert!(describe(CacheTtl::Auto, false, "claude-sonnet-4-5").starts_with("off"));
    }

    #[test]
    fn auto_stays_short_without_pauses_and_goes_long_after_the_first_human_pause() {
        let mut p = PausePolicy::new(CacheTtl::Auto);
        for t in (0..600).step_by(12) {
            assert_eq!(p.lifetime(t), Lifetime::Short, "no pause at {t}");
        }
        // A minute and a half: still a tool loop's rhythm, or a quick reply.
        assert_eq!(p.lifetime(600 + 90), Lifetime::Short);
        // What a request after a lapse would get, asked without sending one.
        assert_eq!(p.after_lapse(), Some(Lifetime::Long));
        assert_eq!(p.after_idle(60), Lifetime::Short);
        assert_eq!(PausePolicy::new(CacheTtl::Auto).after_lapse(), None);
        // Four minutes idle: the user pauses; from now on 1 hour.
        assert_eq!(p.lifetime(690 + 240), Lifetime::Long);
        assert_eq!(p.lifetime(930 + 12), Lifetime::Long);
        assert!(p.extended_retention());
    }

    #[test]
    fn fixed_settings_never_change() {
        let mut short = PausePolicy::new(CacheTtl::FiveMinutes);
        let mut long = PausePolicy::new(CacheTtl::OneHour);
        for t in [0, 10, 5000] {
            assert_eq!(short.lifetime(t), Lifetime::Short);
            assert_eq!(long.lifetime(t), Lifetime::Long);
        }
        assert!(!short.extended_retention() && long.extended_retention());
    }
}
