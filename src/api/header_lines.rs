//! A request's headers as one text, `name\nvalue\n` per header, read across the JS/wasm boundary
//! in one call (`edge::js_fetch::header_lines`) instead of one `Headers.get` per lookup.
//!
//! The text is the runtime's own iteration of `Headers`: names lowercased, each name once with its
//! values combined as `get` combines them. A name or value cannot hold a newline (the runtime
//! refuses one when the headers are made), so the pairs split cleanly.

/// The value `get(name)` gives, from the text: names compare case-insensitively, as `get` does.
pub fn find<'a>(lines: &'a str, name: &str) -> Option<&'a str> {
    pairs(lines)
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
}

/// Every `(name, value)` of the text, in the runtime's order.
pub fn pairs(lines: &str) -> impl Iterator<Item = (&str, &str)> {
    let mut parts = lines.split('\n');
    std::iter::from_fn(move || Some((parts.next()?, parts.next()?)))
}

#[cfg(test)]
mod tests {
    use super::{find, pairs};

    const LINES: &str = "authorization\nBearer k\ncontent-length\n42\nx-empty\n\n";

    #[test]
    fn a_header_reads_as_headers_get_reads_it() {
        assert_eq!(find(LINES, "authorization"), Some("Bearer k"));
        assert_eq!(find(LINES, "Content-Length"), Some("42"));
        assert_eq!(find(LINES, "x-empty"), Some(""));
    }

    #[test]
    fn a_missing_header_is_none_and_no_value_is_read_as_a_name() {
        assert_eq!(find(LINES, "x-api-key"), None);
        assert_eq!(find(LINES, "Bearer k"), None);
        assert_eq!(find(LINES, "42"), None);
        assert_eq!(find("", "authorization"), None);
    }

    #[test]
    fn every_pair_is_read_in_order() {
        let all: Vec<_> = pairs(LINES).collect();
        assert_eq!(
            all,
            [
                ("authorization", "Bearer k"),
                ("content-length", "42"),
                ("x-empty", "")
            ]
        );
    }
}
