//! What the scheduled pass deletes: events older than `EVENTS_RETENTION_DAYS` (30 by
//! default) and usage roll-ups older than `USAGE_RETENTION_DAYS` (400: a year and a month, so a
//! year-on-year monthly report still has its month).

pub const DEFAULT_EVENTS_DAYS: u64 = 30;
pub const DEFAULT_USAGE_DAYS: u64 = 400;
const DAY_MS: u64 = 86_400_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub events_days: u64,
    pub usage_days: u64,
}

impl Default for Retention {
    fn default() -> Self {
        Self {
            events_days: DEFAULT_EVENTS_DAYS,
            usage_days: DEFAULT_USAGE_DAYS,
        }
    }
}

/// Rows strictly older than these go: an event whose `at`, a roll-up whose `minute`, is below.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cutoffs {
    pub events_before_ms: u64,
    pub usage_before_minute: u64,
}

impl Retention {
    /// Reads the two vars through `lookup`; a malformed one is an error naming it.
    pub fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let read = |name: &str, default: u64| match lookup(name) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|d| (1..=36_500).contains(d))
                .ok_or_else(|| {
                    format!("var {name} must be a whole number of days from 1 to 36500")
                }),
        };
        Ok(Self {
            events_days: read("EVENTS_RETENTION_DAYS", DEFAULT_EVENTS_DAYS)?,
            usage_days: read("USAGE_RETENTION_DAYS", DEFAULT_USAGE_DAYS)?,
        })
    }

    pub fn cutoffs(&self, now_ms: u64) -> Cutoffs {
        let usage = now_ms.saturating_sub(self.usage_days.saturating_mul(DAY_MS));
        Cutoffs {
            events_before_ms: now_ms.saturating_sub(self.events_days.saturating_mul(DAY_MS)),
            // A roll-up's `minute` is the first ms of its minute: keep the whole cut minute.
            usage_before_minute: usage - usage % 60_000,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_older_than_30_days_and_roll_ups_older_than_400_days_are_cut() {
        let now = 500 * DAY_MS + 12_345;
        let c = Retention::default().cutoffs(now);
        assert_eq!(c.events_before_ms, 470 * DAY_MS + 12_345);
        assert_eq!(c.usage_before_minute, 100 * DAY_MS);
        assert_eq!(
            Retention::default().cutoffs(5),
            Cutoffs {
                events_before_ms: 0,
                usage_before_minute: 0
            }
        );
    }

    #[test]
    fn the_vars_override_the_defaults_and_a_bad_one_is_named() {
        let r = Retention::from_vars(|n| (n == "EVENTS_RETENTION_DAYS").then(|| "7".to_owned()));
        assert_eq!(
            r,
            Ok(Retention {
                events_days: 7,
                usage_days: 400
            })
        );
        let r = Retention::from_vars(|n| (n == "USAGE_RETENTION_DAYS").then(|| "0".to_owned()));
        assert!(r.unwrap_err().contains("USAGE_RETENTION_DAYS"));
    }
}
