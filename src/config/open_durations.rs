//! `breaker.open_durations_ms`: each failed probe re-opens for the
//! next duration of the list, staying on the last; a successful probe goes back to the first. The
//! empty list is the default and means `[open_duration_ms]`, the spec's fixed duration.
//!
//! Held in a fixed array so `BreakerSettings` stays `Copy` (it rides along every report).

use serde::{Deserialize, Serialize};

pub const MAX_OPEN_DURATIONS: usize = 8;

#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Vec<u64>", into = "Vec<u64>")]
pub struct OpenDurations {
    len: u8,
    ms: [u64; MAX_OPEN_DURATIONS],
}

impl OpenDurations {
    /// No list: the breaker's `open_duration_ms` is the only duration.
    pub const SINGLE: Self = Self {
        len: 0,
        ms: [0; MAX_OPEN_DURATIONS],
    };

    pub fn is_single(&self) -> bool {
        self.len == 0
    }

    pub fn as_slice(&self) -> &[u64] {
        &self.ms[..usize::from(self.len)]
    }

    /// The duration for the `level`th consecutive opening (0 = the trip), the last one repeating.
    pub fn at(&self, level: u32, fixed_ms: u64) -> u64 {
        let list = self.as_slice();
        let i = usize::try_from(level).unwrap_or(usize::MAX);
        list.get(i).or(list.last()).copied().unwrap_or(fixed_ms)
    }

    /// The shortest duration in force, for bounds that must hold whichever level applies.
    pub fn shortest(&self, fixed_ms: u64) -> u64 {
        self.as_slice().iter().copied().min().unwrap_or(fixed_ms)
    }
}

impl Default for OpenDurations {
    fn default() -> Self {
        Self::SINGLE
    }
}

impl TryFrom<Vec<u64>> for OpenDurations {
    type Error = String;

    fn try_from(list: Vec<u64>) -> Result<Self, String> {
        if list.len() > MAX_OPEN_DURATIONS {
            return Err(format!("at most {MAX_OPEN_DURATIONS} durations"));
        }
        let mut ms = [0; MAX_OPEN_DURATIONS];
        ms[..list.len()].copy_from_slice(&list);
        Ok(Self {
            len: u8::try_from(list.len()).map_err(|_| "too many durations")?,
            ms,
        })
    }
}

impl From<OpenDurations> for Vec<u64> {
    fn from(d: OpenDurations) -> Self {
        d.as_slice().to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_level_takes_the_next_duration_and_the_last_one_repeats() {
        let d = OpenDurations::try_from(vec![5_000, 10_000, 20_000]).unwrap();
        let got: Vec<u64> = (0..5).map(|l| d.at(l, 60_000)).collect();
        assert_eq!(got, [5_000, 10_000, 20_000, 20_000, 20_000]);
        assert_eq!(d.shortest(60_000), 5_000);
    }

    #[test]
    fn no_list_is_the_fixed_open_duration_at_every_level() {
        let d = OpenDurations::SINGLE;
        assert_eq!(d.at(0, 60_000), 60_000);
        assert_eq!(d.at(7, 60_000), 60_000);
        assert_eq!(serde_json::to_string(&d).unwrap(), "[]");
    }

    #[test]
    fn more_than_eight_durations_are_refused() {
        assert!(serde_json::from_str::<OpenDurations>("[1,2,3,4,5,6,7,8,9]").is_err());
        let d: OpenDurations = serde_json::from_str("[1000,3000]").unwrap();
        assert_eq!(serde_json::to_string(&d).unwrap(), "[1000,3000]");
    }
}
