//! This isolate's prompt-cache affinity memory: which model served each conversation
//! last, per tenant, requested name and prefix hash (`routing::affinity::AffinityMemory`, at most
//! `CAPACITY` conversations in all; when full, the least recently served of the tenant holding
//! the most is evicted, so no tenant pushes out another's). Per isolate: a conversation served
//! by another isolate starts over there (a `miss`), which costs a cache miss, never an answer.

use crate::cascade::CandidateAttempt;
use crate::config::{ModelId, TenantConfig};
use crate::routing::affinity::{window_s, AffinityMemory, ConversationKey, CAPACITY};
use crate::routing::facts::RequestFacts;
use crate::routing::AffinityUse;
use crate::surfaces::prefix::prefix_hash;
use crate::surfaces::{Inbound, Surface};
use std::cell::RefCell;

thread_local! {
    static MEMORY: RefCell<AffinityMemory> = RefCell::new(AffinityMemory::new(CAPACITY));
}

/// A request whose requested name has `cache_affinity_s` (not embeddings): its conversation
/// (`None` without a stable prefix, e.g. no user message first) and, once routed, whether
/// affinity chose its model.
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
    pub fn remembered(&self) -> Option<(ModelId, u64)> {
        let key = self.key.as_ref()?;
        MEMORY.with(|m| m.borrow().remembered(key).map(|(id, at)| (id.clone(), at)))
    }

    /// What `build_chain` said of affinity (`None` only if the name has none: a miss).
    pub fn routed(self, used: Option<AffinityUse>) -> Self {
        Self {
            used: used.unwrap_or(AffinityUse::Miss),
            ..self
        }
    }

    /// A served answer (by the last attempt): its model is what this conversation goes to next
    /// time. The `X-CogniGate-Cache-Affinity` value.
    pub fn served(&self, by: Option<&CandidateAttempt>, now_ms: u64) -> &'static str {
        let model = by.and_then(|a| ModelId::parse(&a.model).ok());
        if let (Some(key), Some(model)) = (&self.key, model) {
            MEMORY.with(|m| m.borrow_mut().served(key.clone(), model, now_ms));
        }
        self.used.as_str()
    }
}
