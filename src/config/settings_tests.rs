use super::*;

#[test]
fn absent_overrides_fall_back_to_vars() {
    let d = Defaults::from_vars(|n| (n == "BREAKER_WINDOW_MS").then(|| "1000".to_owned()));
    let d = d.unwrap_or_default();
    let o = SettingsOverrides {
        max_fallback_depth: Some(3),
        ..Default::default()
    };
    let s = d.effective(&o);
    assert_eq!(s.max_fallback_depth, 3);
    assert_eq!(s.breaker.window_ms, 1000);
    assert_eq!(s.breaker.error_threshold, 5);
}

#[test]
fn issue_17_settings_are_off_by_default_and_absent_from_the_seed_000_view() {
    let d = Defaults::default();
    let s = d.effective(&SettingsOverrides::default());
    assert!(!s.context_window_guard);
    assert!(s.breaker.open_durations_ms.is_single());
    assert_eq!(
        serde_json::to_value(s).unwrap(),
        serde_json::json!({"max_fallback_depth": 5, "breaker": {"error_threshold": 5, "window_ms": 30000, "open_duration_ms": 60000}})
    );
    let o: SettingsOverrides = serde_json::from_str(
        r#"{"context_window_guard": true, "breaker": {"open_durations_ms": [1000, 3000]}}"#,
    )
    .unwrap();
    let s = d.effective(&o);
    assert!(s.context_window_guard);
    assert_eq!(s.breaker.open_ms(0), 1_000);
    assert_eq!(s.breaker.open_ms(5), 3_000);
}

#[test]
fn malformed_var_is_named() {
    let err = Defaults::from_vars(|n| (n == "REQUEST_BUDGET_MS").then(|| "soon".to_owned()));
    assert_eq!(
        err.err().as_deref(),
        Some("var REQUEST_BUDGET_MS must be a positive integer")
    );
}

fn err_text<T: std::fmt::Debug>(r: Result<T, crate::config::ConfigError>) -> String {
    r.err().map(|e| e.to_string()).unwrap_or_default()
}

#[test]
fn tenant_limits_and_default_model_are_settings_checked_like_the_rest() {
    let o = crate::config::admin_body::parse_body::<SettingsOverrides>(
        br#"{"budget":{"usd":10,"period":"month"},"end_user":{"rpm":5},"default_model":"fast"}"#,
    )
    .and_then(crate::config::admin_body::validate_settings)
    .unwrap();
    let s = Defaults::default().effective(&o);
    assert_eq!(
        s.limits.default_model.as_ref().map(|m| m.as_str()),
        Some("fast")
    );
    let view = serde_json::to_value(&s).unwrap();
    assert_eq!(
        view["budget"],
        serde_json::json!({"usd": 10.0, "period": "month"})
    );
    assert_eq!(view["end_user"], serde_json::json!({"rpm": 5}));
    let e = err_text(
        crate::config::admin_body::parse_body::<SettingsOverrides>(
            br#"{"end_user":{"budget":{"usd":-2,"period":"day"}}}"#,
        )
        .and_then(crate::config::admin_body::validate_settings),
    );
    assert_eq!(
        e,
        "end_user.budget.usd: must be a number from 0 to 1000000000"
    );
    let e = err_text(crate::config::admin_body::parse_body::<SettingsOverrides>(
        br#"{"default_model":"no spaces"}"#,
    ));
    assert!(e.starts_with("default_model:"), "{e}");
}

#[test]
fn end_user_required_alone_is_a_setting_that_needs_no_counters() {
    let parse = |body: &str| {
        crate::config::admin_body::parse_body::<SettingsOverrides>(body.as_bytes())
            .and_then(crate::config::admin_body::validate_settings)
    };
    let o = parse(r#"{"end_user":{"required":true}}"#).unwrap();
    let s = Defaults::default().effective(&o);
    assert!(s.limits.end_user_required());
    assert_eq!(s.limits.end_user_limits(), None, "no ledger call for it");
    let view = serde_json::to_value(&s).unwrap();
    assert_eq!(view["end_user"], serde_json::json!({"required": true}));
    let o = parse(r#"{"end_user":{"required":true,"rpm":3}}"#).unwrap();
    let s = Defaults::default().effective(&o);
    assert_eq!(s.limits.end_user_limits().and_then(|l| l.rpm), Some(3));
    assert!(!Defaults::default()
        .effective(&parse(r#"{"end_user":{"rpm":3}}"#).unwrap())
        .limits
        .end_user_required());
    assert_eq!(
        err_text(parse(r#"{"end_user":{"required":false}}"#)),
        "end_user: must set budget, rpm or required: true (null for no end-user rules)"
    );
    assert!(err_text(parse(r#"{"end_user":{"required":"yes"}}"#)).starts_with("end_user.required:"));
    assert_eq!(
        err_text(parse(r#"{"end_user":{"required":true,"rpm":0}}"#)),
        "end_user.rpm: must be 1 to 1000000"
    );
}

fn parse_settings(body: &str) -> Result<SettingsOverrides, crate::config::ConfigError> {
    crate::config::admin_body::parse_body::<SettingsOverrides>(body.as_bytes())
        .and_then(crate::config::admin_body::validate_settings)
}

#[test]
fn issue_25_settings_default_to_probes_on_and_seed_004s_degraded_table() {
    let s = Defaults::default().effective(&SettingsOverrides::default());
    assert!(s.probes);
    assert_eq!(
        s.degraded,
        DegradedSettings {
            healthy_ratio: 0.5,
            entry_grace_ms: 60_000,
            exit_grace_ms: 120_000,
            min_providers: 3
        }
    );
    assert_eq!(s.alerts, None);
    let o = parse_settings(
        r#"{"probes":false,"degraded":{"entry_grace_ms":0,"min_providers":2},
            "alerts":{"webhook_url":"https://h.example/hook","events":["tenant.degraded"]}}"#,
    )
    .unwrap();
    let s = Defaults::default().effective(&o);
    assert!(!s.probes);
    assert_eq!(s.degraded.entry_grace_ms, 0);
    assert_eq!(s.degraded.exit_grace_ms, 120_000);
    let view = serde_json::to_value(&s).unwrap();
    assert_eq!(view["probes"], serde_json::json!(false));
    assert_eq!(
        view["alerts"],
        serde_json::json!({"webhook_url": "https://h.example/hook", "events": ["tenant.degraded"]})
    );
}

#[test]
fn bad_issue_25_settings_are_refused_with_their_field_path() {
    let cases = [
        (
            r#"{"degraded":{"healthy_ratio":1.5}}"#,
            "degraded.healthy_ratio",
        ),
        (
            r#"{"degraded":{"min_providers":0}}"#,
            "degraded.min_providers",
        ),
        (
            r#"{"degraded":{"exit_grace_ms":999999999999}}"#,
            "degraded.exit_grace_ms",
        ),
        (r#"{"degraded":{"ratio":0.5}}"#, "degraded"),
        (
            r#"{"alerts":{"webhook_url":"ftp://x"}}"#,
            "alerts.webhook_url",
        ),
        (
            r#"{"alerts":{"webhook_url":"https://x/","events":[]}}"#,
            "alerts.events",
        ),
        (
            r#"{"alerts":{"webhook_url":"https://x/","events":["nope"]}}"#,
            "alerts.events",
        ),
        (
            r#"{"alerts":{"webhook_url":"https://x/","secret":"s"}}"#,
            "alerts",
        ),
        (r#"{"probes":"no"}"#, "probes"),
    ];
    for (body, field) in cases {
        let e = parse_settings(body).unwrap_err();
        assert!(e.to_string().starts_with(field), "{body}: {e}");
    }
}

#[test]
fn while_degraded_exploration_is_off_and_the_view_is_unchanged() {
    let o: SettingsOverrides = serde_json::from_str(r#"{"exploration_share": 0.3}"#).unwrap();
    let s = Defaults::default().effective(&o);
    let view = serde_json::to_value(&s).unwrap();
    let degraded = s.clone().with_degraded_since(Some(7));
    assert_eq!(degraded.exploration_share, 0.0);
    assert_eq!(degraded.degraded_since, Some(7));
    assert_eq!(s.with_degraded_since(None).exploration_share, 0.3);
    let mut shown = serde_json::to_value(&degraded).unwrap();
    shown["exploration_share"] = serde_json::json!(0.3);
    assert_eq!(shown, view, "degraded_since is never shown");
}
