//! The `dynamic context` volatile block: date, local time to the minute, time zone and working
//! directory.
//!
//! It rides in the newest user turn (never the system prompt) and `VolatileTracker` sends it
//! again only when its text changed, so a prompt sent within the same minute in the same
//! directory carries nothing new. The local offset comes from the C library's `localtime_r`
//! (honouring `TZ` and `/etc/localtime`); tests pin a `TimeZone::Fixed` instead, because the
//! machine's zone is not theirs to choose.

use std::path::Path;

/// Where the local offset comes from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TimeZone {
    /// The system's zone, asked at each request (a daylight-saving switch shows up).
    #[default]
    System,
    /// A fixed offset east of UTC, in seconds, with its abbreviation.
    Fixed { offset_secs: i32, name: String },
}

impl TimeZone {
    /// UTC, fixed.
    pub fn utc() -> TimeZone {
        TimeZone::Fixed {
            offset_secs: 0,
            name: "UTC".into(),
        }
    }

    /// (offset east of UTC in seconds, abbreviation) at Unix time `secs`.
    pub fn offset_at(&self, secs: u64) -> (i32, String) {
        match self {
            TimeZone::Fixed { offset_secs, name } => (*offset_secs, name.clone()),
            TimeZone::System => system_offset(secs).unwrap_or((0, "UTC".into())),
        }
    }
}

#[cfg(unix)]
fn system_offset(secs: u64) -> Option<(i32, String)> {
    let t = libc::time_t::try_from(secs).ok()?;
    // SAFETY: `tm` is plain old data; zeroed is a valid value for it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: localtime_r only reads `t` and writes `tm`, both alive for the call.
    if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
        return None;
    }
    let name = if tm.tm_zone.is_null() {
        String::new()
    } else {
        // SAFETY: a non-null tm_zone points at a NUL-terminated static string of the C library.
        unsafe { std::ffi::CStr::from_ptr(tm.tm_zone) }
            .to_string_lossy()
            .into_owned()
    };
    Some((i32::try_from(tm.tm_gmtoff).unwrap_or(0), name))
}

#[cfg(not(unix))]
fn system_offset(_secs: u64) -> Option<(i32, String)> {
    None
}

const WEEKDAYS: [&str; 7] = [
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
];

/// The block's text at Unix time `secs` in `zone`, for a session working in `cwd`.
pub fn dynamic_context(secs: u64, zone: &TimeZone, cwd: &Path) -> String {
    let (offset, name) = zone.offset_at(secs);
    let local = secs.saturating_add_signed(i64::from(offset));
    let (year, month, day) = crate::clock::civil_from_days((local / 86_400) as i64);
    let (hour, minute) = ((local % 86_400) / 3600, (local % 3600) / 60);
    // in bounds: a number modulo 7 indexes the seven days.
    #[allow(clippy::indexing_slicing)]
    let weekday = WEEKDAYS[((local / 86_400) % 7) as usize];
    let sign = if offset < 0 { '-' } else { '+' };
    let abs = offset.unsigned_abs();
    let zone_text = format!("UTC{sign}{:02}:{:02}", abs / 3600, (abs % 3600) / 60);
    let named = if name.is_empty() || name == zone_text {
        zone_text
    } else {
        format!("{name}, {zone_text}")
    };
    format!(
        "Today is {year:04}-{month:02}-{day:02} ({weekday}), {hour:02}:{minute:02} local time (time zone {named}).\nWorking directory: {}",
        cwd.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_date_time_zone_and_directory() {
        let zone = TimeZone::Fixed {
            offset_secs: -3 * 3600,
            name: "-03".into(),
        };
        // 2026-11-30 00:53:20 UTC is still the 29th, a Sunday, in UTC-3.
        assert_eq!(
            dynamic_context(1_796_000_000, &zone, Path::new("/w")),
            "Today is 2026-11-29 (Sunday), 21:53 local time (time zone -03, UTC-03:00).\nWorking directory: /w"
        );
        assert_eq!(
            dynamic_context(1_796_000_000, &TimeZone::utc(), Path::new("/w")),
            "Today is 2026-11-30 (Monday), 00:53 local time (time zone UTC, UTC+00:00).\nWorking directory: /w"
        );
    }

    #[test]
    fn the_system_zone_answers() {
        let (offset, _) = TimeZone::System.offset_at(1_796_000_000);
        assert!(offset.abs() <= 14 * 3600);
    }
}
