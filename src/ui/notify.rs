//! Getting the user's attention when chatcli needs them and the terminal is not focused: a
//! finished answer, an approval that waits. The terminal's focus events say when to; the
//! sequence is one the terminal itself turns into a bell or a desktop notification, so it
//! works over SSH and in tmux without a desktop library. Nothing is sent while focused.

/// How chatcli gets the user's attention when a turn ends or an approval waits while the
/// terminal is not focused (`CHATCLI_NOTIFY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Notify {
    /// The terminal bell (BEL), which every terminal and tmux pass on.
    #[default]
    Bell,
    /// OSC 9 (iTerm2, WezTerm, Windows Terminal, kitty, ghostty): a desktop notification.
    Osc9,
    /// OSC 777 (urxvt, foot, Konsole and others): a desktop notification with a title.
    Osc777,
    /// Nothing.
    Off,
}

impl Notify {
    /// Reads `CHATCLI_NOTIFY`: `bell` (default), `osc9`, `osc777` or `off`.
    pub fn parse(value: &str) -> Result<Notify, super::UiError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "bell" | "on" => Ok(Notify::Bell),
            "osc9" => Ok(Notify::Osc9),
            "osc777" => Ok(Notify::Osc777),
            "off" | "0" | "false" => Ok(Notify::Off),
            other => Err(super::UiError::Notify(other.to_string())),
        }
    }

    /// The bytes that notify `message`; `None` when off.
    pub fn sequence(self, message: &str) -> Option<String> {
        // A control character inside the text would end the sequence early.
        let clean: String = message.chars().filter(|c| !c.is_control()).collect();
        match self {
            Notify::Bell => Some("\x07".into()),
            Notify::Osc9 => Some(format!("\x1b]9;{clean}\x07")),
            Notify::Osc777 => Some(format!("\x1b]777;notify;chatcli;{clean}\x07")),
            Notify::Off => None,
        }
    }
}

/// Whether the user is looking, and how to call them when not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attention {
    /// Whether the terminal has the focus (focus events; assumed until told otherwise).
    pub focused: bool,
    /// How to notify when a turn ends or an approval waits while unfocused.
    pub notify: Notify,
}

impl Default for Attention {
    fn default() -> Self {
        Attention {
            focused: true,
            notify: Notify::default(),
        }
    }
}

impl Attention {
    /// The bytes that notify `message`; `None` while focused or when off.
    pub fn sequence(&self, message: &str) -> Option<String> {
        if self.focused {
            return None;
        }
        self.notify.sequence(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_parse_and_never_carry_control_characters() {
        assert_eq!(Notify::parse("OSC9").ok(), Some(Notify::Osc9));
        assert!(
            Notify::parse("loud")
                .unwrap_err()
                .to_string()
                .contains("CHATCLI_NOTIFY")
        );
        assert_eq!(
            Notify::Osc777.sequence("done\x07\x1b"),
            Some("\x1b]777;notify;chatcli;done\x07".into())
        );
        assert_eq!(Notify::Off.sequence("x"), None);
    }
}
