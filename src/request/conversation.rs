//! A conversation under a name with prompt-cache affinity: which model served its stable prefix
//! last, read before routing and written when an answer is served. The memory itself is the
//! isolate's (`routing::affinity::AffinityMemory`); a conversation served by another isolate
//! starts over there (a `miss`), which costs a cache miss, never an answer.

use crate::cascade::CandidateAttempt;
use crate::config::{ModelId, TenantConfig};
use crate::routing::affinity::{window_s, AffinityMemory, ConversationKey};
use crate::routing::facts::RequestFacts;
use crate::routing::AffinityUse;
use crate::surfaces::prefix::prefix_hash;
use crate::surfaces::{Inbound, Surface};

/// A request whose requested name has `cache_affinity_s` (not embeddings): its conversation
/// (`None` without a stable prefix, e.g. no user message first) and, once routed, whether
/// affinity chose its model.
#[derive(Debug)]
pub struct Conversation {
    key: Option<ConversationKey>,
    used: AffinityUse,
}

impl Conversation {
    /// `None` when the requested name has no affinity: nothing is hashed or remembered.
    pub fn of(cfg: &TenantConfig, inbound: &Inbound, facts: Option<&RequestFacts>) -> Option<Self> {
        window_s(cfg, inbound.model(), facts)?;
        if inbound.surface() == Surface::Embeddings {
            // Embeddings have no conversation: no memory and no header.
            return None;
        }
        let key = prefix_hash(inbound).map(|prefix| ConversationKey {
            tenant: cfg.tenant.to_string(),
            requested: inbound.model().to_owned(),
            prefix,
        });
        Some(Self {
            key,
            used: AffinityUse::Miss,
        })
    }

    /// The model that served this conversation last, and when.
    pub fn remembered(&self, memory: &AffinityMemory) -> Option<(ModelId, u64)> {
        let key = self.key.as_ref()?;
        memory.remembered(key).map(|(id, at)| (id.clone(), at))
    }

    /// What `build_chain` said of affinity (`None` only if the name has none: a miss).
    pub fn routed(self, used: Option<AffinityUse>) -> Self {
        Self {
            used: used.unwrap_or(AffinityUse::Miss),
            ..self
        }
    }

    /// A served answer (by `by`, the attempt that served it): its model is what this
    /// conversation goes to next time. The `X-CogniGate-Cache-Affinity` value.
    pub fn served(
        &self,
        by: Option<&CandidateAttempt>,
        now_ms: u64,
        memory: &mut AffinityMemory,
    ) -> &'static str {
        let model = by.and_then(|a| ModelId::parse(&a.model).ok());
        if let (Some(key), Some(model)) = (&self.key, model) {
            memory.served(key.clone(), model, now_ms);
        }
        self.used.as_str()
    }
}
