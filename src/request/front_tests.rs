//! The first three stages' order, with fakes: what a request reads, and what it never reaches.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::fakes::Request;
use super::{front, BodyLimits, CallerStore, Progress};
use crate::api::{ApiError, ErrorKind};
use crate::callers::auth::{hash_key, mint_caller_key};
use crate::config::caller_key::CallerKeyMac;
use crate::config::policy::KeyPolicy;
use crate::config::settings::EndUserSettings;
use crate::config::{CallerKey, RouteName, TenantConfig, TenantId};
use crate::routing::test_config::cfg;
use crate::surfaces::Surface;
use futures::executor::block_on;
use std::cell::Cell;
use std::rc::Rc;

const LIMITS: BodyLimits = BodyLimits {
    bytes: 1_000,
    values: 100,
};

/// One tenant `t`, one minted key; counts the reads D1 would serve.
struct Callers {
    mac: CallerKeyMac,
    key: String,
    caller: CallerKey,
    cfg: Rc<TenantConfig>,
    key_reads: Cell<usize>,
    config_reads: Cell<usize>,
}

impl Callers {
    fn new(policy: KeyPolicy, cfg: TenantConfig) -> Self {
        let mac = CallerKeyMac::derive(&[9; 32]);
        let (id, key) = mint_caller_key(&[7; 32], Some(&mac));
        let caller = CallerKey {
            tenant: TenantId::parse("t").unwrap(),
            id,
            policy: Rc::new(policy),
            generation: 3,
        };
        Self {
            mac,
            key,
            caller,
            cfg: Rc::new(cfg),
            key_reads: Cell::new(0),
            config_reads: Cell::new(0),
        }
    }

    fn any() -> Self {
        Self::new(KeyPolicy::default(), cfg())
    }

    fn reads(&self) -> usize {
        self.key_reads.get() + self.config_reads.get()
    }
}

impl CallerStore for Callers {
    fn mac(&self) -> Option<CallerKeyMac> {
        Some(self.mac.clone())
    }

    async fn key(&self, hash: &str) -> Result<Option<CallerKey>, ApiError> {
        self.key_reads.set(self.key_reads.get() + 1);
        Ok((hash == hash_key(&self.key)).then(|| self.caller.clone()))
    }

    async fn config(&self, tenant: &TenantId) -> Result<Option<Rc<TenantConfig>>, ApiError> {
        self.config_reads.set(self.config_reads.get() + 1);
        Ok((tenant == &self.cfg.tenant).then(|| self.cfg.clone()))
    }
}

const CHAT: &str = r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}"#;

/// Runs the three stages; the error kind, and whether the digest was taken.
fn run(req: &Request, callers: &Callers, progress: &mut Progress) -> (Option<ErrorKind>, bool) {
    let digested = Cell::new(false);
    let digest = |_: &TenantConfig, _: &crate::api::ChatRequest| {
        digested.set(true);
        Some([1; 32])
    };
    let at = (Surface::Chat, LIMITS, "req_1");
    let result = block_on(front(req, callers, at, progress, digest));
    (result.err().map(|e| e.kind()), digested.get())
}

#[test]
fn a_forged_key_costs_no_d1_read_and_reads_no_body() {
    let callers = Callers::any();
    let forged = format!("{}0", &callers.key[..callers.key.len() - 1]);
    let forged = if forged == callers.key {
        format!("{}1", &callers.key[..callers.key.len() - 1])
    } else {
        forged
    };
    let req = Request::bearer(&forged, CHAT);
    let mut progress = Progress::default();
    assert_eq!(
        run(&req, &callers, &mut progress),
        (Some(ErrorKind::InvalidApiKey), false)
    );
    assert_eq!((callers.reads(), req.body_reads.get()), (0, 0));
    assert_eq!(progress, Progress::default());
}

#[test]
fn a_token_no_minted_key_can_be_costs_no_read() {
    let callers = Callers::any();
    for token in ["sk-live-abc", "cg_short", "cg_XYZ"] {
        let req = Request::bearer(token, CHAT);
        let (kind, _) = run(&req, &callers, &mut Progress::default());
        assert_eq!(kind, Some(ErrorKind::InvalidApiKey), "{token}");
    }
    assert_eq!(callers.reads(), 0);
}

#[test]
fn a_well_formed_unknown_key_is_401_after_one_lookup_and_reads_no_body() {
    let callers = Callers::any();
    let other = Callers::new(KeyPolicy::default(), cfg());
    let (_, unknown) = mint_caller_key(&[8; 32], Some(&other.mac));
    let req = Request::bearer(&unknown, CHAT);
    let (kind, digested) = run(&req, &callers, &mut Progress::default());
    assert_eq!((kind, digested), (Some(ErrorKind::InvalidApiKey), false));
    assert_eq!(
        (callers.key_reads.get(), callers.config_reads.get()),
        (1, 0)
    );
    assert_eq!(req.body_reads.get(), 0);
}

#[test]
fn no_credential_is_401_and_reads_nothing() {
    let callers = Callers::any();
    let req = Request::new(&[], CHAT);
    assert_eq!(
        run(&req, &callers, &mut Progress::default()).0,
        Some(ErrorKind::InvalidApiKey)
    );
    assert_eq!((callers.reads(), req.body_reads.get()), (0, 0));
}

#[test]
fn an_authorization_header_that_is_not_bearer_wins_over_x_api_key() {
    let callers = Callers::any();
    let key = callers.key.clone();
    let req = Request::new(&[("authorization", "Basic abc"), ("x-api-key", &key)], CHAT);
    assert_eq!(
        run(&req, &callers, &mut Progress::default()).0,
        Some(ErrorKind::InvalidApiKey)
    );
    let req = Request::new(&[("x-api-key", &key)], CHAT);
    assert_eq!(run(&req, &callers, &mut Progress::default()).0, None);
}

#[test]
fn a_body_over_its_byte_limit_is_413_and_nothing_digests_it() {
    let callers = Callers::any();
    let big = format!(r#"{{"model":"gpt-4o","pad":"{}"}}"#, "x".repeat(2_000));
    let req = Request::bearer(&callers.key.clone(), &big);
    let mut progress = Progress::default();
    let (kind, digested) = run(&req, &callers, &mut progress);
    assert_eq!((kind, digested), (Some(ErrorKind::BodyTooLarge), false));
    assert_eq!(progress.tenant.as_ref().map(|t| t.as_str()), Some("t"));
    assert_eq!(progress.requested, None, "a body not read names no model");
}

#[test]
fn a_body_past_its_depth_or_value_limits_is_never_digested() {
    let callers = Callers::any();
    let deep = format!(
        r#"{{"model":"gpt-4o","x":{}1{}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let many = format!(r#"{{"model":"gpt-4o","x":[{}1]}}"#, "1,".repeat(150));
    for body in [deep, many] {
        let req = Request::bearer(&callers.key.clone(), &body);
        let (kind, digested) = run(&req, &callers, &mut Progress::default());
        assert!(kind.is_some(), "refused");
        assert!(!digested, "the digest never sees a body past its limits");
    }
}

#[test]
fn a_scoped_key_is_refused_before_the_name_is_resolved_and_the_model_is_logged() {
    let policy = KeyPolicy {
        models: Some(vec![RouteName::parse("gpt-4o-mini").unwrap()]),
        ..KeyPolicy::default()
    };
    let callers = Callers::new(policy, cfg());
    let req = Request::bearer(&callers.key.clone(), CHAT);
    let mut progress = Progress::default();
    let (kind, _) = run(&req, &callers, &mut progress);
    assert_eq!(kind, Some(ErrorKind::ModelNotAllowed));
    assert_eq!(progress.requested.as_deref(), Some("gpt-4o"));
    assert!(!progress.requested_configured);
}

#[test]
fn a_tenant_that_requires_an_end_user_refuses_a_request_naming_none_with_param_user() {
    let mut tenant = cfg();
    tenant.settings.limits.end_user = Some(EndUserSettings {
        required: true,
        ..EndUserSettings::default()
    });
    let callers = Callers::new(KeyPolicy::default(), tenant);
    let req = Request::bearer(&callers.key.clone(), CHAT);
    assert_eq!(
        run(&req, &callers, &mut Progress::default()).0,
        Some(ErrorKind::InvalidRequest)
    );
    let named = Request::new(
        &[
            ("authorization", &format!("Bearer {}", callers.key)),
            ("x-cognigate-user", "u-1"),
        ],
        CHAT,
    );
    assert_eq!(run(&named, &callers, &mut Progress::default()).0, None);
}

#[test]
fn a_request_that_passes_carries_who_asked_for_whom_and_its_digest() {
    let callers = Callers::any();
    let req = Request::new(
        &[
            ("authorization", &format!("Bearer {}", callers.key)),
            ("x-cognigate-user", " alice "),
        ],
        CHAT,
    );
    let mut progress = Progress::default();
    let at = (Surface::Chat, LIMITS, "req_9");
    let digest = |_: &TenantConfig, _: &crate::api::ChatRequest| Some([2; 32]);
    let scoped = block_on(front(&req, &callers, at, &mut progress, digest)).unwrap();
    assert_eq!(scoped.pending.request_id, "req_9");
    assert_eq!(scoped.pending.key_id, callers.caller.id);
    assert_eq!(scoped.pending.end_user.as_deref(), Some("alice"));
    assert_eq!(
        (scoped.pending.requested.as_str(), scoped.pending.generation),
        ("gpt-4o", 3)
    );
    assert_eq!(scoped.digest, Some([2; 32]));
    assert_eq!(
        (callers.key_reads.get(), callers.config_reads.get()),
        (1, 1)
    );
    assert_eq!(req.body_reads.get(), 1, "the body is read once");
    assert_eq!(progress.requested.as_deref(), Some("gpt-4o"));
}
