//! The stable prefix of a conversation, as prompt-cache affinity remembers it: its
//! leading system (or developer) messages and its first user message. Providers cache a prompt by
//! its prefix, and these are what every later turn of the conversation resends unchanged.
//!
//! Read from the chat view every surface translates to (Messages' `system`, Responses'
//! `instructions` become system messages there), and only hashed: no prompt text is kept.

use super::Inbound;
use serde::Deserialize;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use std::borrow::Cow;

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    role: Cow<'a, str>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

/// 64 bits of the SHA-256 of the stable prefix; `None` for embeddings (no conversation) or a
/// request with no user message before anything else.
pub fn prefix_hash(inbound: &Inbound) -> Option<u64> {
    if inbound.surface() == super::Surface::Embeddings {
        return None;
    }
    let messages: Vec<&RawValue> = serde_json::from_str(inbound.chat().raw("messages")?).ok()?;
    let mut hash = Sha256::new();
    for raw in messages {
        let m: Message<'_> = serde_json::from_str(raw.get()).ok()?;
        let content = m.content.map_or("null", RawValue::get);
        // Lengths first, so no two different prefixes hash the same bytes.
        for part in [m.role.as_ref(), content] {
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part.as_bytes());
        }
        match m.role.as_ref() {
            "user" => {
                let digest = hash.finalize();
                let mut first = [0u8; 8];
                first.copy_from_slice(digest.get(..8)?);
                return Some(u64::from_le_bytes(first));
            }
            "system" | "developer" => {}
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::surfaces::Surface;

    fn hash(surface: Surface, body: &str) -> Option<u64> {
        let inbound =
            Inbound::parse(surface, body.as_bytes().to_vec(), 10_000, None, None).unwrap();
        prefix_hash(&inbound)
    }

    const TURN_1: &str = r#"{"model":"x","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}]}"#;
    const TURN_2: &str = r#"{"model":"x","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"},{"role":"user","content":"More"}]}"#;

    #[test]
    fn later_turns_of_a_conversation_share_its_prefix_hash() {
        assert!(hash(Surface::Chat, TURN_1).is_some());
        assert_eq!(hash(Surface::Chat, TURN_1), hash(Surface::Chat, TURN_2));
    }

    #[test]
    fn another_system_prompt_or_first_user_turn_is_another_conversation() {
        let other_user = TURN_1.replace("\"Hi\"", "\"Hey\"");
        let other_system = TURN_1.replace("Be brief.", "Be long.");
        let no_system = r#"{"model":"x","messages":[{"role":"user","content":"Hi"}]}"#;
        let base = hash(Surface::Chat, TURN_1);
        for other in [other_user.as_str(), other_system.as_str(), no_system] {
            assert_ne!(hash(Surface::Chat, other), base, "{other}");
        }
    }

    #[test]
    fn messages_and_responses_conversations_have_a_prefix_and_embeddings_none() {
        let m1 = r#"{"model":"x","max_tokens":5,"system":"S","messages":[{"role":"user","content":"Hi"}]}"#;
        let m2 = r#"{"model":"x","max_tokens":5,"system":"S","messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Yo"},{"role":"user","content":"And?"}]}"#;
        assert!(hash(Surface::Messages, m1).is_some());
        assert_eq!(hash(Surface::Messages, m1), hash(Surface::Messages, m2));
        let r1 = r#"{"model":"x","instructions":"S","input":"Hi"}"#;
        let r2 = r#"{"model":"x","instructions":"S","input":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Yo"},{"role":"user","content":"And?"}]}"#;
        assert!(hash(Surface::Responses, r1).is_some());
        assert_eq!(hash(Surface::Responses, r1), hash(Surface::Responses, r2));
        let e = r#"{"model":"x","input":"Hi"}"#;
        assert_eq!(hash(Surface::Embeddings, e), None);
    }
}
