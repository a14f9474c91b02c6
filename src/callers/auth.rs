//! Credentials: caller keys are shown once, carry a MAC and are stored as SHA-256; secrets
//! compare in constant time.

use crate::config::caller_key::{CallerKeyMac, MAC_BYTES};
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

/// Hex digits of a caller key's secret (24 random bytes) and of its MAC.
const SECRET_HEX: usize = 48;
const TAG_HEX: usize = 2 * MAC_BYTES;

fn is_lower_hex(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Whether a bearer token may be a caller key, judged without storage. A minted key is `cg_`, 48
/// lowercase hex digits, `_` and the 32 hex digits of the MAC of everything before the `_`; a key
/// minted before keys carried a MAC is `cg_` and the 48 digits alone, and is looked up as it
/// always was. A MAC that does not verify under `mac` means no minted key can be the token, so it
/// is refused without a D1 query. With no `CG_KEK` there is nothing to verify against, and the
/// token is looked up.
pub fn may_be_caller_key(key: &str, mac: Option<&CallerKeyMac>) -> bool {
    let Some(rest) = key.strip_prefix("cg_") else {
        return false;
    };
    let Some((secret, tag)) = rest.split_once('_') else {
        return is_lower_hex(rest, SECRET_HEX);
    };
    if !is_lower_hex(secret, SECRET_HEX) || !is_lower_hex(tag, TAG_HEX) {
        return false;
    }
    let body = &key[..key.len() - tag.len() - 1];
    mac.is_none_or(|m| ::hex::decode(tag).is_ok_and(|t| m.verify(body, &t)))
}

/// A new caller key and its id from 32 bytes of CSPRNG output; with `mac` (the deployment has a
/// `CG_KEK`) the key carries its MAC, else it has the older shape.
pub fn mint_caller_key(random: &[u8; 32], mac: Option<&CallerKeyMac>) -> (String, String) {
    let id = format!("ck_{}", ::hex::encode(&random[..8]));
    let body = format!("cg_{}", ::hex::encode(&random[8..]));
    let key = match mac {
        Some(m) => format!("{body}_{}", ::hex::encode(m.tag(&body))),
        None => body,
    };
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

    fn mac(kek: u8) -> CallerKeyMac {
        CallerKeyMac::derive(&[kek; 32])
    }

    #[test]
    fn minted_key_is_prefixed_and_its_hash_is_not_the_key() {
        let (id, key) = mint_caller_key(&[7; 32], Some(&mac(1)));
        assert!(id.starts_with("ck_") && key.starts_with("cg_"));
        assert_eq!(key.len(), 3 + 48 + 1 + 32);
        assert_ne!(hash_key(&key), key);
        assert_eq!(hash_key(&key).len(), 64);
        assert!(may_be_caller_key(&key, Some(&mac(1))));
    }

    #[test]
    fn a_minted_key_carries_a_mac_that_verifies_under_its_deployment_secret() {
        let (_, key) = mint_caller_key(&[7; 32], Some(&mac(1)));
        let (body, tag) = key.rsplit_once('_').unwrap();
        assert_eq!(tag, ::hex::encode(mac(1).tag(body)));
        assert!(may_be_caller_key(&key, Some(&mac(1))));
    }

    #[test]
    fn a_key_whose_mac_fails_is_refused_without_a_lookup() {
        let (_, key) = mint_caller_key(&[7; 32], Some(&mac(1)));
        // Every single hex digit changed, in the secret and in the tag, breaks the MAC.
        for i in 3..key.len() {
            if key.as_bytes()[i] == b'_' {
                continue;
            }
            let mut tampered = key.clone().into_bytes();
            tampered[i] = if tampered[i] == b'0' { b'1' } else { b'0' };
            let tampered = String::from_utf8(tampered).unwrap();
            assert!(!may_be_caller_key(&tampered, Some(&mac(1))), "{tampered}");
        }
        let random = format!("cg_{}_{}", "ab".repeat(24), "cd".repeat(16));
        assert!(!may_be_caller_key(&random, Some(&mac(1))));
    }

    #[test]
    fn a_key_minted_under_another_deployment_secret_is_refused() {
        let (_, key) = mint_caller_key(&[7; 32], Some(&mac(2)));
        assert!(!may_be_caller_key(&key, Some(&mac(1))));
    }

    #[test]
    fn a_key_minted_before_keys_carried_a_mac_is_still_looked_up() {
        let (_, old) = mint_caller_key(&[7; 32], None);
        assert_eq!(old.len(), 3 + 48);
        assert!(may_be_caller_key(&old, Some(&mac(1))));
        assert!(may_be_caller_key(&old, None));
        // Without a CG_KEK nothing can be verified: a MAC'd key is looked up like any other.
        let (_, key) = mint_caller_key(&[7; 32], Some(&mac(1)));
        assert!(may_be_caller_key(&key, None));
    }

    #[test]
    fn tokens_that_no_minted_key_could_be_are_not_caller_keys() {
        let (_, old) = mint_caller_key(&[7; 32], None);
        let (_, key) = mint_caller_key(&[7; 32], Some(&mac(1)));
        for token in [
            "sk-random",
            "cg_",
            &old[..old.len() - 1],
            &format!("{old}0"),
            &old.replace("cg_", "CG_"),
            &old.to_uppercase(),
            &key[..key.len() - 1],
            &format!("{key}0"),
            &format!("{old}_"),
            &key.to_uppercase().replace("CG_", "cg_"),
            &key.replacen('_', "-", 2),
            &format!("{key}_{}", "0".repeat(32)),
        ] {
            assert!(!may_be_caller_key(token, Some(&mac(1))), "{token}");
        }
    }
}
