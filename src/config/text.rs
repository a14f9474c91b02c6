//! Cutting text that crosses a trust boundary (log lines, end-user ids) to a byte budget
//! without splitting a character: here, below every layer that needs it.

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub fn truncated(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut cut = max;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    &s[..cut]
}
