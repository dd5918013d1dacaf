//! What the terminal can show and wants: dark or light background, colour at all (`NO_COLOR`),
//! and 24-bit colour or the 256-colour palette.
//!
//! Each answer is read from the environment once per process. The background comes from
//! `CHATCLI_THEME=light|dark` when set, else from `COLORFGBG` (set by rxvt, Konsole and some
//! others), else it is taken as dark: chatcli does not query the terminal (an OSC 11 round trip
//! would race with the first key press), so a light terminal that sets neither is drawn for dark.
//! This module is a leaf: it imports nothing of ours.

use std::sync::OnceLock;

/// The terminal's background, for choosing the code-highlighting theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Background {
    Dark,
    Light,
}

/// `CHATCLI_THEME` as the configuration resolved it (`config.toml` included), set once at start.
static THEME: OnceLock<Option<String>> = OnceLock::new();

/// Takes the resolved `CHATCLI_THEME` before the first frame.
pub fn set_theme(value: Option<&str>) {
    let _ = THEME.set(value.map(str::to_string));
}

/// The background chosen for this process (see the module note for the order of sources).
pub fn background() -> Background {
    static CHOSEN: OnceLock<Background> = OnceLock::new();
    *CHOSEN.get_or_init(|| {
        let theme = match THEME.get() {
            Some(set) => set.clone(),
            None => std::env::var("CHATCLI_THEME").ok(),
        };
        let colorfgbg = std::env::var("COLORFGBG").ok();
        let chosen = choose_background(theme.as_deref(), colorfgbg.as_deref());
        if let Some(value) = theme.filter(|v| parse_theme(v).is_none()) {
            tracing::warn!(
                "CHATCLI_THEME must be light or dark (got {value:?}); using the detected background"
            );
        }
        chosen
    })
}

/// The background from `CHATCLI_THEME`'s and `COLORFGBG`'s values; dark when neither says.
pub fn choose_background(theme: Option<&str>, colorfgbg: Option<&str>) -> Background {
    theme
        .and_then(parse_theme)
        .or_else(|| colorfgbg.and_then(from_colorfgbg))
        .unwrap_or(Background::Dark)
}

fn parse_theme(value: &str) -> Option<Background> {
    match value.trim().to_ascii_lowercase().as_str() {
        "dark" => Some(Background::Dark),
        "light" => Some(Background::Light),
        _ => None,
    }
}

/// `COLORFGBG` is `fg;bg` (sometimes `fg;default;bg`) in ANSI colour numbers: 7 (light grey)
/// and 9–15 (the bright colours) are light backgrounds, 0–6 and 8 are dark.
fn from_colorfgbg(value: &str) -> Option<Background> {
    let bg: u8 = value.rsplit(';').next()?.trim().parse().ok()?;
    Some(match bg {
        7 | 9..=15 => Background::Light,
        _ => Background::Dark,
    })
}

/// Whether the user asked for no colour: `NO_COLOR` set to anything but the empty string
/// (<https://no-color.org>).
pub fn no_color_requested() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Whether the terminal says it shows 24-bit colour (`COLORTERM=truecolor` or `24bit`); without
/// that, highlighted code is drawn from the 256-colour palette.
pub fn truecolor() -> bool {
    static CHOSEN: OnceLock<bool> = OnceLock::new();
    *CHOSEN.get_or_init(|| {
        std::env::var("COLORTERM").is_ok_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "truecolor" | "24bit"
            )
        })
    })
}

/// The xterm 256-colour palette index nearest to an RGB colour (its 6×6×6 cube or grey ramp).
pub fn xterm_256(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let nearest = |c: u8| -> usize {
        (0..6)
            .min_by_key(|&i| (i32::from(LEVELS[i]) - i32::from(c)).abs())
            .unwrap_or(0)
    };
    let (ri, gi, bi) = (nearest(r), nearest(g), nearest(b));
    let cube = (LEVELS[ri], LEVELS[gi], LEVELS[bi]);
    let distance = |(x, y, z): (u8, u8, u8)| {
        let d = |a: u8, b: u8| (i32::from(a) - i32::from(b)).pow(2);
        d(x, r) + d(y, g) + d(z, b)
    };
    // Greys 232–255 run from 8 to 238 in steps of 10.
    let mean = (u32::from(r) + u32::from(g) + u32::from(b)) / 3;
    let grey_index = (mean.saturating_sub(3) / 10).min(23) as u8;
    let grey = 8 + grey_index * 10;
    if distance((grey, grey, grey)) < distance(cube) {
        232 + grey_index
    } else {
        16 + 36 * ri as u8 + 6 * gi as u8 + bi as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chatcli_theme_overrides_colorfgbg_and_dark_is_the_default() {
        assert_eq!(choose_background(None, None), Background::Dark);
        assert_eq!(choose_background(Some("light"), None), Background::Light);
        assert_eq!(
            choose_background(Some("DARK"), Some("0;15")),
            Background::Dark
        );
        assert_eq!(choose_background(None, Some("0;15")), Background::Light);
        assert_eq!(
            choose_background(None, Some("15;default;0")),
            Background::Dark
        );
        assert_eq!(
            choose_background(Some("sepia"), Some("0;7")),
            Background::Light
        );
        assert_eq!(choose_background(None, Some("garbage")), Background::Dark);
    }

    #[test]
    fn rgb_maps_to_the_nearest_palette_entry() {
        assert_eq!(xterm_256(0, 0, 0), 16);
        assert_eq!(xterm_256(255, 255, 255), 231);
        assert_eq!(xterm_256(255, 0, 0), 196);
        assert_eq!(xterm_256(128, 128, 128), 244);
    }
}
