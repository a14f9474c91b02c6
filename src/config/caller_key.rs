//! Who is calling: the caller key a request presented, as the request path knows it.

use super::names::TenantId;
use crate::config::KeyPolicy;
use serde::{Deserialize, Serialize};
use std::rc::Rc;

/// A caller key found by its hash: the tenant it belongs to, its public id (`ck_...`), which
/// usage records and limits are kept under, and its policy (read with it, so a warm request
/// needs no query for it). The key itself is never held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallerKey {
    pub tenant: TenantId,
    pub id: String,
    /// Shared: every request of the key clones the cached entry.
    #[serde(default)]
    pub policy: Rc<KeyPolicy>,
    /// The generation of its tenant (`usage::generation`), read with the key: a key belongs to
    /// the creation of the tenant it was minted in, so usage of a key that outlived its tenant
    /// in a cache carries a deleted generation and is dropped.
    #[serde(default)]
    pub generation: u64,
}

/// The deployment secret that caller keys carry a MAC under: HMAC-SHA256 keyed by `CG_KEK` over
/// a fixed label, so it is a key of its own (neither the KEK nor anything sealed under it).
/// Held as HMAC state already keyed with it: each tag or check clones that state instead of
/// keying again. Shared, so the isolate's copy is handed to each request by reference count.
#[derive(Clone)]
pub struct CallerKeyMac {
    keyed: Rc<HmacSha256>,
    /// The derived key itself, for the tests' eyes only.
    #[cfg(test)]
    key: [u8; 32],
}

impl std::fmt::Debug for CallerKeyMac {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CallerKeyMac(…)")
    }
}

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// Bytes of HMAC-SHA256 a key carries: 128 bits, so a forged tag is a 2^-128 guess.
pub const MAC_BYTES: usize = 16;

const DERIVATION_LABEL: &[u8] = b"cognigate caller-key mac v1";

/// HMAC-SHA256 under a 32-byte key. RFC 2104 pads a key shorter than the block (64 bytes) with
/// zeros, so the padded key is the same key; taking it whole makes construction infallible.
fn keyed(key: &[u8; 32]) -> HmacSha256 {
    use hmac::digest::KeyInit;
    let mut block = [0u8; 64];
    block[..32].copy_from_slice(key);
    <HmacSha256 as KeyInit>::new(&block.into())
}

/// HMAC-SHA256 of `msg` under `key`.
fn hmac(key: &[u8; 32], msg: &[u8]) -> HmacSha256 {
    use hmac::Mac;
    let mut mac = keyed(key);
    mac.update(msg);
    mac
}

impl CallerKeyMac {
    /// Derived from the 32 bytes of `CG_KEK`.
    pub fn derive(kek: &[u8; 32]) -> Self {
        use hmac::Mac;
        let key: [u8; 32] = hmac(kek, DERIVATION_LABEL).finalize().into_bytes().into();
        Self {
            keyed: Rc::new(keyed(&key)),
            #[cfg(test)]
            key,
        }
    }

    /// The keyed state, fed `body`.
    fn over(&self, body: &str) -> HmacSha256 {
        use hmac::Mac;
        let mut mac = HmacSha256::clone(&self.keyed);
        mac.update(body.as_bytes());
        mac
    }

    /// The tag of `body` (the key without its tag).
    pub fn tag(&self, body: &str) -> [u8; MAC_BYTES] {
        use hmac::Mac;
        let full = self.over(body).finalize().into_bytes();
        let mut tag = [0u8; MAC_BYTES];
        tag.copy_from_slice(&full[..MAC_BYTES]);
        tag
    }

    /// `tag` is `body`'s, compared in constant time.
    pub fn verify(&self, body: &str, tag: &[u8]) -> bool {
        use hmac::Mac;
        tag.len() == MAC_BYTES && self.over(body).verify_truncated_left(tag).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hmac::Mac;

    #[test]
    fn the_padded_key_is_the_same_hmac_key() {
        let key = [0x42u8; 32];
        let mut plain = <HmacSha256 as Mac>::new_from_slice(&key).unwrap();
        plain.update(b"msg");
        assert_eq!(
            hmac(&key, b"msg").finalize().into_bytes(),
            plain.finalize().into_bytes()
        );
    }

    #[test]
    fn the_mac_key_is_neither_the_kek_nor_the_same_under_another_kek() {
        let a = CallerKeyMac::derive(&[1; 32]);
        let b = CallerKeyMac::derive(&[2; 32]);
        assert_ne!(a.key, [1; 32]);
        assert_ne!(a.tag("cg_x"), b.tag("cg_x"));
        assert!(a.verify("cg_x", &a.tag("cg_x")));
        assert!(!b.verify("cg_x", &a.tag("cg_x")));
        assert!(!a.verify("cg_y", &a.tag("cg_x")));
        assert!(!a.verify("cg_x", &a.tag("cg_x")[..8]), "a short tag");
    }
}
