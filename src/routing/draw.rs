//! A request's 64 random bits serve several draws (exploration, which stale model, each spread's
//! member); each use mixes them apart first so the draws are not correlated.

/// The 64-bit golden-ratio increment (splitmix64's stream step).
pub const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// splitmix64's finaliser: every input bit moves every output bit.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
