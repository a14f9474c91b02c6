//! The ledger's rules, with time passed in.

use super::admission::*;
use super::refusals::{Admission, Denial};
use super::reserve::Need;
use crate::config::policy::{Budget, EndUserLimits, KeyPolicy};
use crate::config::Period;
use crate::config::TenantId;
use crate::usage::{Outcome, TokenCounts, UsageRecord};

// 2024-03-10T12:00:00Z
pub(super) const T0: u64 = 1_710_072_000_000;

pub(super) fn req(key: &str) -> AdmitRequest {
    AdmitRequest {
        key_id: key.into(),
        key_rpm: None,
        key_tpm: None,
        key_budget: None,
        tenant_budget: None,
        end_user: None,
        need: Need::default(),
        request_id: Some("req".into()),
        slice_id: None,
        returns: Vec::new(),
        release_after_ms: 0,
    }
}

pub(super) fn budget(usd: f64, period: Period) -> Option<Budget> {
    Some(Budget { usd, period })
}

pub(super) fn served(key: &str, user: Option<&str>, tokens: u64, cost: f64) -> SettleEntry {
    SettleEntry {
        record: UsageRecord {
            at_ms: T0,
            request_id: String::new(),
            tenant: TenantId::parse("t").unwrap(),
            key_id: key.into(),
            end_user: user.map(str::to_owned),
            requested: "m".into(),
            served_model: None,
            provider: None,
            tokens: Some(TokenCounts::new(tokens, 0, 0)),
            cost_usd: Some(cost),
            usage_source: Default::default(),
            generation: 0,
            outcome: Outcome::Served,
            cache_hit: false,
            saved_usd: None,
            cache_savings_usd: None,
        },
        track_end_user: true,
        hold: None,
        merged: 0,
    }
}

fn refusal(v: Admission) -> Option<(Denial, Option<u64>)> {
    match v {
        Admission::Admit => None,
        Admission::Deny {
            denial: refusal,
            retry_after_secs,
        } => Some((refusal, retry_after_secs)),
    }
}

#[test]
fn a_tenant_without_limits_and_an_unlimited_key_make_no_admission_call() {
    let open = KeyPolicy::default();
    assert_eq!(
        AdmitRequest::needed("k", &open, None, None, Some("u")),
        None
    );
    // End-user limits only apply when the request names an end user.
    let eu = Some(EndUserLimits {
        budget: None,
        rpm: Some(1),
    });
    assert_eq!(AdmitRequest::needed("k", &open, None, eu, None), None);
    assert!(AdmitRequest::needed("k", &open, None, eu, Some("u")).is_some());
    assert!(AdmitRequest::needed("k", &open, budget(1.0, Period::Day), None, None).is_some());
    let limited = KeyPolicy {
        rpm: Some(5),
        ..KeyPolicy::default()
    };
    assert!(AdmitRequest::needed("k", &limited, None, None, None).is_some());
}

#[test]
fn an_rpm_2_key_gets_429_on_its_third_request_in_a_minute_with_retry_after() {
    let mut l = Ledger::default();
    let r = AdmitRequest {
        key_rpm: Some(2),
        ..req("k")
    };
    assert_eq!(l.admit(&r, T0), Admission::Admit);
    assert_eq!(l.admit(&r, T0 + 1_000), Admission::Admit);
    // The first request leaves the window at T0 + 60 s: 50 s from T0 + 10 s.
    assert_eq!(
        refusal(l.admit(&r, T0 + 10_000)),
        Some((Denial::KeyRpm, Some(50)))
    );
    // A refused request counts toward nothing, so the wait does not grow.
    assert_eq!(
        refusal(l.admit(&r, T0 + 10_000)),
        Some((Denial::KeyRpm, Some(50)))
    );
    assert_eq!(l.admit(&r, T0 + 60_000), Admission::Admit);
    // Another key of the same tenant has its own minute.
    assert_eq!(
        l.admit(
            &AdmitRequest {
                key_rpm: Some(2),
                ..req("other")
            },
            T0
        ),
        Admission::Admit
    );
}

#[test]
fn tokens_count_toward_tpm_once_usage_is_known() {
    let mut l = Ledger::default();
    let r = AdmitRequest {
        key_tpm: Some(100),
        ..req("k")
    };
    assert_eq!(l.admit(&r, T0), Admission::Admit);
    // Admitted while the first request's tokens are not known yet.
    assert_eq!(l.admit(&r, T0 + 1), Admission::Admit);
    l.settle(&served("k", None, 100, 0.0), T0 + 2_000);
    assert_eq!(
        refusal(l.admit(&r, T0 + 3_000)),
        Some((Denial::KeyTpm, Some(59)))
    );
    assert_eq!(l.admit(&r, T0 + 62_000), Admission::Admit);
}

#[test]
fn a_key_budget_refuses_with_402_once_its_period_spend_reaches_it() {
    let mut l = Ledger::default();
    let r = AdmitRequest {
        key_budget: budget(0.001, Period::Day),
        ..req("k")
    };
    assert_eq!(l.admit(&r, T0), Admission::Admit);
    let changed = l.settle(&served("k", None, 10, 0.0006), T0).changed;
    assert!(changed.contains(&ScopeId::Key("k".into())));
    assert_eq!(l.admit(&r, T0), Admission::Admit);
    l.settle(&served("k", None, 10, 0.0006), T0);
    let refused = refusal(l.admit(&r, T0));
    assert_eq!(refused, Some((Denial::KeyBudget, None)));
    assert_eq!(Denial::KeyBudget.status(), 402);
    assert_eq!(Denial::KeyBudget.code(), "budget_exceeded");
    // The next UTC day starts from zero.
    assert_eq!(l.admit(&r, T0 + 86_400_000), Admission::Admit);
}

#[test]
fn a_tenant_budget_blocks_every_key() {
    let mut l = Ledger::default();
    l.settle(&served("a", None, 1, 2.0), T0);
    let tb = budget(2.0, Period::Month);
    for key in ["a", "b", "never-seen"] {
        let r = AdmitRequest {
            tenant_budget: tb,
            ..req(key)
        };
        let refused = refusal(l.admit(&r, T0));
        assert_eq!(refused, Some((Denial::TenantBudget, None)));
    }
    assert_eq!(Denial::TenantBudget.code(), "tenant_budget_exceeded");
}

#[test]
fn two_end_users_with_a_budget_are_limited_separately() {
    let mut l = Ledger::default();
    let limits = EndUserLimits {
        budget: budget(1.0, Period::Total),
        rpm: None,
    };
    let r = |u: &str| AdmitRequest {
        end_user: Some((u.into(), limits)),
        ..req("k")
    };
    l.settle(&served("k", Some("alice"), 1, 1.0), T0);
    assert_eq!(
        refusal(l.admit(&r("alice"), T0)),
        Some((Denial::EndUserBudget, None))
    );
    assert_eq!(l.admit(&r("bob"), T0), Admission::Admit);
    assert_eq!(Denial::EndUserBudget.code(), "end_user_budget_exceeded");
}

#[test]
fn end_user_rpm_limits_that_user_only() {
    let mut l = Ledger::default();
    let limits = EndUserLimits {
        budget: None,
        rpm: Some(1),
    };
    let r = |u: &str| AdmitRequest {
        end_user: Some((u.into(), limits)),
        ..req("k")
    };
    assert_eq!(l.admit(&r("alice"), T0), Admission::Admit);
    assert_eq!(
        refusal(l.admit(&r("alice"), T0)),
        Some((Denial::EndUserRpm, Some(60)))
    );
    assert_eq!(l.admit(&r("bob"), T0), Admission::Admit);
}

#[test]
fn budgets_are_checked_before_rates_and_a_refusal_counts_nothing() {
    let mut l = Ledger::default();
    l.settle(&served("k", None, 1, 5.0), T0);
    let r = AdmitRequest {
        key_rpm: Some(1),
        key_budget: budget(1.0, Period::Total),
        ..req("k")
    };
    assert_eq!(refusal(l.admit(&r, T0)), Some((Denial::KeyBudget, None)));
    // The refused request was not counted toward rpm.
    let rpm_only = AdmitRequest {
        key_rpm: Some(1),
        ..req("k")
    };
    assert_eq!(l.admit(&rpm_only, T0), Admission::Admit);
}

#[test]
fn end_user_spend_is_kept_only_for_a_tenant_that_limits_end_users() {
    let mut l = Ledger::default();
    let mut e = served("k", Some("alice"), 1, 1.0);
    e.track_end_user = false;
    let changed = l.settle(&e, T0).changed;
    assert_eq!(changed, vec![ScopeId::Tenant, ScopeId::Key("k".into())]);
    assert!(!l.is_loaded(&ScopeId::EndUser("alice".into())));
}

#[test]
fn stored_spend_loaded_after_an_eviction_still_counts_and_memory_is_never_replaced() {
    let mut l = Ledger::default();
    let mut stored = crate::usage::Spend::default();
    stored.add(T0, 3.0);
    l.load(ScopeId::Key("k".into()), Some(stored));
    let r = AdmitRequest {
        key_budget: budget(3.0, Period::Day),
        ..req("k")
    };
    assert_eq!(refusal(l.admit(&r, T0)), Some((Denial::KeyBudget, None)));
    l.load(ScopeId::Key("k".into()), None);
    assert_eq!(l.spend(&ScopeId::Key("k".into())), Some(stored));
}

#[test]
fn idle_end_users_are_forgotten_from_memory_past_the_cap_but_active_ones_stay() {
    let mut l = Ledger::default();
    let limits = EndUserLimits {
        budget: None,
        rpm: Some(1),
    };
    for i in 0..=MAX_END_USERS_IN_MEMORY {
        l.load(ScopeId::EndUser(format!("idle-{i}")), None);
    }
    let active = AdmitRequest {
        end_user: Some(("busy".into(), limits)),
        ..req("k")
    };
    assert_eq!(l.admit(&active, T0), Admission::Admit);
    l.forget_idle_end_users(T0 + 1);
    assert!(!l.is_loaded(&ScopeId::EndUser("idle-0".into())));
    assert_eq!(
        refusal(l.admit(&active, T0 + 2)).map(|r| r.0),
        Some(Denial::EndUserRpm)
    );
}
