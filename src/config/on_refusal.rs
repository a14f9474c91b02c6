//! What a safety refusal does: answered as it is, or sent once more to the
//! next candidate of the chain.

use serde::{Deserialize, Serialize};

/// Alias or rule field `on_refusal`; `answer` (the default) hands the refusal back.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnRefusal {
    #[default]
    Answer,
    /// A non-streamed refusal goes once to the next candidate (`X-CogniGate-Policy-Fallback`).
    Fallback,
}

impl OnRefusal {
    pub fn is_answer(&self) -> bool {
        *self == Self::Answer
    }
}
