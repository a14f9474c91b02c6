//! The resolve stage: what the request's headers and the isolate's view decide of its route.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::fakes::Request;
use super::resolve::{resolve, Resolved, View};
use crate::api::{ApiError, ChatRequest, ErrorKind};
use crate::cascade::RefusalPolicy;
use crate::config::{CallerKey, ModelId, TenantConfig, TenantId};
use crate::routing::affinity::{AffinityMemory, ConversationKey, CAPACITY};
use crate::routing::test_config::{spread_tenant, Table};
use crate::surfaces::prefix::prefix_hash;
use crate::surfaces::{Inbound, Surface};

const NOW: u64 = 1_000_000;

fn tenant(rule_extra: &str) -> TenantConfig {
    spread_tenant(rule_extra)
}

fn caller() -> CallerKey {
    CallerKey {
        tenant: TenantId::parse("t").unwrap(),
        id: "ck_1".into(),
        policy: Default::default(),
        generation: 1,
    }
}

fn inbound(model: &str) -> Inbound {
    let body = format!(
        r#"{{"model":"{model}","max_tokens":100,"messages":[{{"role":"user","content":"hello there"}}]}}"#
    );
    let sent = ChatRequest::parse_with_default(body.into_bytes(), 1_000, None).unwrap();
    Inbound::of_request(Surface::Chat, sent, 1_000, None).unwrap()
}

fn run<'c>(
    req: &Request,
    c: &'c TenantConfig,
    model: &str,
    memory: &AffinityMemory,
    draw: u64,
) -> Result<Resolved<'c>, ApiError> {
    let view = View {
        observed: &Table::default(),
        memory,
        now_ms: NOW,
        draw,
    };
    resolve(req, c, &caller(), &inbound(model), &view)
}

/// `chat` with no headers, an empty memory and a zero draw.
fn plain(c: &TenantConfig) -> Resolved<'_> {
    let none = Request::new(&[], "");
    run(&none, c, "chat", &AffinityMemory::new(8), 0).unwrap()
}

fn models(r: &Resolved<'_>) -> Vec<String> {
    let ids = r.route.candidates.iter().map(|c| c.model.id.to_string());
    ids.collect()
}

#[test]
fn an_unknown_name_is_refused_at_resolve_before_any_admission() {
    let c = tenant("");
    let err = run(
        &Request::new(&[], ""),
        &c,
        "nope",
        &AffinityMemory::new(8),
        0,
    )
    .err()
    .unwrap();
    assert_eq!(err.status(), 404, "{err:?}");
}

#[test]
fn a_pin_to_a_provider_the_tenant_lacks_is_a_400_and_a_pin_keeps_only_its_provider() {
    let c = tenant("");
    let memory = AffinityMemory::new(8);
    let bad = Request::new(&[("x-cognigate-pin-provider", "nowhere")], "");
    assert_eq!(
        run(&bad, &c, "chat", &memory, 0).err().unwrap().status(),
        400
    );
    let pinned = Request::new(&[("x-cognigate-pin-provider", "together")], "");
    let r = run(&pinned, &c, "chat", &memory, 0).unwrap();
    assert_eq!(models(&r), ["m2"]);
}

#[test]
fn policy_fallback_off_opts_out_of_a_fallback_and_any_other_value_is_ignored() {
    let c = tenant(r#","on_refusal":"fallback""#);
    let memory = AffinityMemory::new(8);
    let policy = |v: &str| {
        let req = Request::new(&[("x-cognigate-policy-fallback", v)], "");
        run(&req, &c, "chat", &memory, 0).unwrap().refusals
    };
    assert_eq!(policy(" OFF "), RefusalPolicy::OptedOut);
    assert_eq!(policy("no"), RefusalPolicy::Fallback);
    let plain = tenant("");
    let off = Request::new(&[("x-cognigate-policy-fallback", "off")], "");
    let r = run(&off, &plain, "chat", &memory, 0).unwrap();
    assert_eq!(r.refusals, RefusalPolicy::Answer, "nothing to opt out of");
}

#[test]
fn truncate_oldest_is_asked_only_by_its_header_value() {
    let c = tenant("");
    let memory = AffinityMemory::new(8);
    let asks = |h: &[(&'static str, &str)]| {
        let r = run(&Request::new(h, ""), &c, "chat", &memory, 0).unwrap();
        r.truncate_oldest
    };
    assert!(asks(&[("x-cognigate-truncate", "Oldest")]));
    assert!(!asks(&[("x-cognigate-truncate", "newest")]));
    assert!(!asks(&[]));
}

#[test]
fn the_reservation_holds_the_prompt_estimate_and_max_tokens_at_the_dearest_candidate() {
    let c = tenant("");
    let r = plain(&c);
    assert!(r.prompt_estimate > 0);
    assert_eq!(r.need.tokens, r.prompt_estimate + 100, "{:?}", r.need);
}

#[test]
fn a_remembered_model_leads_its_conversation_within_the_affinity_window() {
    let c = tenant(r#","cache_affinity_s":60"#);
    let mut memory = AffinityMemory::new(CAPACITY);
    let first = run(&Request::new(&[], ""), &c, "chat", &memory, 0).unwrap();
    let conversation = first.conversation.as_ref().expect("the name has affinity");
    let key = ConversationKey {
        tenant: "t".into(),
        requested: "chat".into(),
        prefix: prefix_hash(&inbound("chat")).unwrap(),
    };
    // Whichever member a draw picks, the remembered one leads.
    for (remembered, draw) in [("m2", 0), ("m1", u64::MAX)] {
        memory.served(
            key.clone(),
            ModelId::parse(remembered).unwrap(),
            NOW - 1_000,
        );
        let r = run(&Request::new(&[], ""), &c, "chat", &memory, draw).unwrap();
        assert_eq!(models(&r)[0], remembered);
        assert_eq!(r.route.affinity.map(|a| a.as_str()), Some("hit"));
    }
    assert!(conversation.remembered(&AffinityMemory::new(8)).is_none());
}

#[test]
fn a_name_without_affinity_has_no_conversation() {
    let c = tenant("");
    let r = plain(&c);
    assert!(r.conversation.is_none());
}

#[test]
fn an_unreadable_metadata_header_is_a_400_before_anything_is_routed() {
    let c = tenant("");
    let memory = AffinityMemory::new(8);
    let bad = Request::new(&[("x-cognigate-metadata", "{not json")], "");
    let err = run(&bad, &c, "chat", &memory, 0).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::InvalidRequest, "{err:?}");
    let good = Request::new(&[("x-cognigate-metadata", r#"{"tier":"gold"}"#)], "");
    assert!(run(&good, &c, "chat", &memory, 0).is_ok());
}
