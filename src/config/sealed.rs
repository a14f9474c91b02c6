//! Provider keys at rest: sealed with AES-256-GCM under the key-encryption key (`CG_KEK`), a fresh
//! nonce per key, and the tenant and provider bound as associated data, so a row copied to another
//! tenant or provider does not open. Keys may instead name a Worker secret, resolved at load.

use super::caller_key::CallerKeyMac;
use super::names::{ProviderName, TenantId};
use super::ConfigError;
use aes_gcm::aead::{Aead, Payload};
use aes_gcm::{Aes256Gcm, KeyInit, Nonce};

/// The key-encryption key: 32 bytes, given as 64 hex characters. It also yields the MAC key of
/// caller keys (`CallerKeyMac`), derived from it so a deployment has one secret to keep.
#[derive(Clone)]
pub struct Kek(Aes256Gcm, CallerKeyMac);

impl std::fmt::Debug for Kek {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Kek(…)")
    }
}

#[derive(Debug, Clone, PartialEq, Eq, displaydoc::Display)]
pub enum SealError {
    /// CG_KEK must be 64 hex characters (32 bytes)
    BadKek,
    /// the sealed key is malformed
    Malformed,
    /// the sealed key does not open under this key, tenant and provider
    Mismatch,
}

impl std::error::Error for SealError {}

fn unhex(s: &str) -> Option<Vec<u8>> {
    ::hex::decode(s).ok()
}

fn aad(tenant: &TenantId, provider: &ProviderName) -> Vec<u8> {
    format!("cognigate/v1/{tenant}/{provider}").into_bytes()
}

/// A tenant's webhook signing secret is bound to the tenant and to its purpose: `#`
/// is no provider name's character, so a sealed provider key never opens as it, nor the reverse.
fn alert_aad(tenant: &TenantId) -> Vec<u8> {
    format!("cognigate/v1/{tenant}#alerts").into_bytes()
}

/// An export header's value is bound to the tenant and the header's name, under a purpose no
/// provider name or alert can spell (`#otel:`).
fn otel_aad(tenant: &TenantId, header: &str) -> Vec<u8> {
    format!("cognigate/v1/{tenant}#otel:{header}").into_bytes()
}

impl Kek {
    pub fn from_hex(s: &str) -> Result<Self, SealError> {
        let bytes: [u8; 32] = unhex(s.trim())
            .and_then(|b| b.try_into().ok())
            .ok_or(SealError::BadKek)?;
        Aes256Gcm::new_from_slice(&bytes)
            .map(|aead| Self(aead, CallerKeyMac::derive(&bytes)))
            .map_err(|_| SealError::BadKek)
    }

    /// The MAC key caller keys are minted and checked with.
    pub fn caller_key_mac(&self) -> &CallerKeyMac {
        &self.1
    }

    /// `v1:<nonce hex>:<ciphertext+tag hex>`. The nonce must never repeat under one KEK: the edge
    /// draws it from the runtime's CSPRNG.
    pub fn seal(
        &self,
        tenant: &TenantId,
        provider: &ProviderName,
        plaintext: &str,
        nonce: [u8; 12],
    ) -> Result<String, ConfigError> {
        self.seal_with(&aad(tenant, provider), plaintext, nonce)
    }

    /// The tenant's webhook signing secret, sealed like a provider key (`alert_aad`).
    pub fn seal_alert_secret(
        &self,
        tenant: &TenantId,
        plaintext: &str,
        nonce: [u8; 12],
    ) -> Result<String, ConfigError> {
        self.seal_with(&alert_aad(tenant), plaintext, nonce)
    }

    pub fn open_alert_secret(&self, tenant: &TenantId, sealed: &str) -> Result<String, SealError> {
        self.open_with(&alert_aad(tenant), sealed)
    }

    /// A literal `otel.headers` value, sealed like a provider key (`otel_aad`).
    pub fn seal_otel_header(
        &self,
        tenant: &TenantId,
        header: &str,
        plaintext: &str,
        nonce: [u8; 12],
    ) -> Result<String, ConfigError> {
        self.seal_with(&otel_aad(tenant, header), plaintext, nonce)
    }

    pub fn open_otel_header(
        &self,
        tenant: &TenantId,
        header: &str,
        sealed: &str,
    ) -> Result<String, SealError> {
        self.open_with(&otel_aad(tenant, header), sealed)
    }

    fn seal_with(
        &self,
        aad: &[u8],
        plaintext: &str,
        nonce: [u8; 12],
    ) -> Result<String, ConfigError> {
        let ct = self
            .0
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: plaintext.as_bytes(),
                    aad,
                },
            )
            .map_err(|_| ConfigError::invalid("keys", "could not be sealed"))?;
        Ok(format!(
            "v1:{}:{}",
            ::hex::encode(nonce),
            ::hex::encode(&ct)
        ))
    }

    pub fn open(
        &self,
        tenant: &TenantId,
        provider: &ProviderName,
        sealed: &str,
    ) -> Result<String, SealError> {
        self.open_with(&aad(tenant, provider), sealed)
    }

    fn open_with(&self, aad: &[u8], sealed: &str) -> Result<String, SealError> {
        let mut parts = sealed.splitn(3, ':');
        let (Some("v1"), Some(nonce), Some(ct)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(SealError::Malformed);
        };
        let nonce = unhex(nonce)
            .filter(|n| n.len() == 12)
            .ok_or(SealError::Malformed)?;
        let ct = unhex(ct).ok_or(SealError::Malformed)?;
        let plain = self
            .0
            .decrypt(Nonce::from_slice(&nonce), Payload { msg: &ct, aad })
            .map_err(|_| SealError::Mismatch)?;
        String::from_utf8(plain).map_err(|_| SealError::Mismatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEK: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    fn ids(t: &str, p: &str) -> (TenantId, ProviderName) {
        (TenantId::parse(t).unwrap(), ProviderName::parse(p).unwrap())
    }

    #[test]
    fn a_sealed_key_opens_for_its_own_tenant_and_provider() {
        let kek = Kek::from_hex(KEK).unwrap();
        let (t, p) = ids("acme", "openai");
        let sealed = kek.seal(&t, &p, "sk-secret-1234", [7; 12]).unwrap();
        assert!(!sealed.contains("sk-secret"));
        assert_eq!(kek.open(&t, &p, &sealed).unwrap(), "sk-secret-1234");
    }

    #[test]
    fn a_row_copied_to_another_tenant_or_provider_does_not_open() {
        let kek = Kek::from_hex(KEK).unwrap();
        let (t, p) = ids("acme", "openai");
        let sealed = kek.seal(&t, &p, "sk-secret", [7; 12]).unwrap();
        let (other_t, other_p) = ids("evil", "openai2");
        assert_eq!(kek.open(&other_t, &p, &sealed), Err(SealError::Mismatch));
        assert_eq!(kek.open(&t, &other_p, &sealed), Err(SealError::Mismatch));
    }

    #[test]
    fn another_kek_or_a_flipped_bit_does_not_open() {
        let kek = Kek::from_hex(KEK).unwrap();
        let (t, p) = ids("acme", "openai");
        let sealed = kek.seal(&t, &p, "sk-secret", [7; 12]).unwrap();
        let other = Kek::from_hex(&"ab".repeat(32)).unwrap();
        assert_eq!(other.open(&t, &p, &sealed), Err(SealError::Mismatch));
        let mut tampered = sealed.clone().into_bytes();
        let last = tampered.len() - 1;
        tampered[last] = if tampered[last] == b'0' { b'1' } else { b'0' };
        let tampered = String::from_utf8(tampered).unwrap();
        assert_eq!(kek.open(&t, &p, &tampered), Err(SealError::Mismatch));
        assert_eq!(kek.open(&t, &p, "v2:zz"), Err(SealError::Malformed));
    }

    #[test]
    fn distinct_nonces_give_distinct_ciphertexts_for_the_same_key() {
        let kek = Kek::from_hex(KEK).unwrap();
        let (t, p) = ids("acme", "openai");
        let a = kek.seal(&t, &p, "sk-same", [1; 12]).unwrap();
        let b = kek.seal(&t, &p, "sk-same", [2; 12]).unwrap();
        assert_ne!(a, b);
    }

    #[test]
    fn kek_must_be_32_bytes_of_hex() {
        assert!(Kek::from_hex("abcd").is_err());
        assert!(Kek::from_hex(&"zz".repeat(32)).is_err());
        assert!(Kek::from_hex(&format!("{KEK}00")).is_err());
        // `u8::from_str_radix` takes "+f" as 15: a KEK with signs in it must not parse.
        assert!(Kek::from_hex(&"+f".repeat(32)).is_err());
    }

    #[test]
    fn an_alert_secret_opens_only_as_that_tenants_alert_secret() {
        let kek = Kek::from_hex(KEK).unwrap();
        let (t, p) = ids("acme", "alerts");
        let sealed = kek.seal_alert_secret(&t, "whsec_1", [7; 12]).unwrap();
        assert_eq!(kek.open_alert_secret(&t, &sealed).as_deref(), Ok("whsec_1"));
        assert_eq!(kek.open(&t, &p, &sealed), Err(SealError::Mismatch));
        let (other, _) = ids("other", "x");
        assert_eq!(
            kek.open_alert_secret(&other, &sealed),
            Err(SealError::Mismatch)
        );
    }
}
