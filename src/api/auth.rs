//! Credentials: caller keys are shown once and stored as SHA-256; secrets compare in constant time.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Hex SHA-256 of a caller key: the only form in which it is stored or cached.
pub fn hash_key(key: &str) -> String {
    ::hex::encode(Sha256::digest(key.as_bytes()))
}

/// Compares two secrets without an early exit. Both sides are hashed first so that neither the
/// content nor the length of the expected secret leaks through timing.
pub fn secrets_match(given: &str, expected: &str) -> bool {
    let a = Sha256::digest(given.as_bytes());
    let b = Sha256::digest(expected.as_bytes());
    bool::from(a.as_slice().ct_eq(b.as_slice())) && !expected.is_empty()
}

/// `Authorization: Bearer <token>` → token.
pub fn bearer(header: Option<&str>) -> Option<&str> {
    let value = header?.trim();
    let (scheme, token) = value.split_once(' ')?;
    (scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty()).then(|| token.trim())
}

/// Whether `key` has the shape `mint_caller_key` gives (`cg_` and 48 lowercase hex digits). Any
/// other bearer token cannot be a caller key, so it is refused without a D1 query.
pub fn is_caller_key_shaped(key: &str) -> bool {
    key.strip_prefix("cg_").is_some_and(|hex| {
        hex.len() == 48
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// A new caller key and its id from 32 bytes of CSPRNG output.
pub fn mint_caller_key(random: &[u8; 32]) -> (String, String) {
    let id = format!("ck_{}", ::hex::encode(&random[..8]));
    let key = format!("cg_{}", ::hex::encode(&random[8..]));
    (id, key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching_secrets_match_and_others_do_not() {
        assert!(secrets_match("s3cret", "s3cret"));
        assert!(!secrets_match("s3cre", "s3cret"));
        assert!(
            !secrets_match("", ""),
            "an unset admin secret never matches"
        );
    }

    #[test]
    fn bearer_is_case_insensitive_and_requires_a_token() {
        assert_eq!(bearer(Some("Bearer abc")), Some("abc"));
        assert_eq!(bearer(Some("bearer abc")), Some("abc"));
        assert_eq!(bearer(Some("Basic abc")), None);
        assert_eq!(bearer(Some("Bearer ")), None);
        assert_eq!(bearer(None), None);
    }

    #[test]
    fn minted_key_is_prefixed_and_its_hash_is_not_the_key() {
        let (id, key) = mint_caller_key(&[7; 32]);
        assert!(id.starts_with("ck_") && key.starts_with("cg_"));
        assert_eq!(key.len(), 3 + 48);
        assert_ne!(hash_key(&key), key);
        assert_eq!(hash_key(&key).len(), 64);
        assert!(is_caller_key_shaped(&key));
    }

    #[test]
    fn tokens_that_no_minted_key_could_be_are_not_caller_key_shaped() {
        let (_, key) = mint_caller_key(&[7; 32]);
        for token in [
            "sk-random",
            "cg_",
            &key[..key.len() - 1],
            &format!("{key}0"),
            &key.replace("cg_", "CG_"),
            &key.to_uppercase(),
        ] {
            assert!(!is_caller_key_shaped(token), "{token}");
        }
    }
}
