//! The alert settings over the in-memory store: the webhook's signing secret is shown once
//! by the PUT that sets a `webhook_url`, stored sealed, never shown again, and rotated with the URL.

use crate::support::admin_world::{AdminWorld as World, NOW};
use cognigate::admin::{Admin, CommandError, Context, Reply, Verb};
use cognigate::api::Endpoint;
use cognigate::config::TenantId;
use futures::executor::block_on;
use serde_json::{json, Value};
use std::cell::Cell;

const SETTINGS: &str = "/admin/v1/tenants/acme/settings";

/// The admin core with a CSPRNG stand-in that never repeats itself (a rotated secret differs).
fn call(
    w: &World,
    counter: &Cell<u8>,
    verb: Verb,
    path: &str,
    body: &str,
) -> Result<Value, (u16, Value)> {
    let random = |buf: &mut [u8]| {
        counter.set(counter.get().wrapping_add(1));
        buf.iter_mut()
            .enumerate()
            .for_each(|(i, b)| *b = (i as u8) ^ counter.get());
        true
    };
    let cx = Context {
        now: NOW,
        defaults: &w.defaults,
        allow_http_upstreams: w.allow_http,
        kek: Some(&w.kek),
        random: &random,
    };
    let admin = Admin::new(&w.store, &w.routing, cx);
    match block_on(admin.handle(verb, Endpoint::parse(path).unwrap(), body.as_bytes(), None)) {
        Ok(Reply::Json(_, body)) => Ok(serde_json::from_slice(&body).unwrap()),
        Ok(Reply::OpenApi(_)) => panic!("not a settings answer"),
        Err(CommandError::Api(e)) => Err((e.status(), serde_json::from_str(&e.to_json()).unwrap())),
        Err(CommandError::Store(e)) => panic!("store fault: {e:?}"),
    }
}

fn stored_secret(w: &World) -> Option<String> {
    let t = TenantId::parse("acme").unwrap();
    let sealed = w.store.data(&t)?.alert_secret?;
    Some(w.kek.open_alert_secret(&t, &sealed).unwrap())
}

#[test]
fn the_put_that_sets_a_webhook_url_shows_the_secret_once_and_later_reads_never_do() {
    let w = World::with_acme();
    let c = Cell::new(0);
    let body =
        r#"{"alerts":{"webhook_url":"https://hooks.example/cg","events":["breaker.opened"]}}"#;
    let answer = call(&w, &c, Verb::Put, SETTINGS, body).unwrap();
    let secret = answer["alerts"]["secret"].as_str().unwrap().to_owned();
    assert!(
        secret.starts_with("whsec_") && secret.len() == 6 + 64,
        "{secret}"
    );
    assert_eq!(
        stored_secret(&w).as_deref(),
        Some(secret.as_str()),
        "stored sealed"
    );
    let sealed = w
        .store
        .data(&TenantId::parse("acme").unwrap())
        .unwrap()
        .alert_secret
        .unwrap();
    assert!(
        !sealed.contains(&secret["whsec_".len()..]),
        "never in the clear"
    );
    let read = call(&w, &c, Verb::Get, SETTINGS, "").unwrap();
    assert_eq!(
        read["alerts"],
        json!({"webhook_url": "https://hooks.example/cg", "events": ["breaker.opened"]})
    );
    let tenant = call(&w, &c, Verb::Get, "/admin/v1/tenants/acme", "").unwrap();
    assert!(!tenant.to_string().contains("whsec_"));
    // The same URL again: the secret stays, and is not shown.
    let again = call(&w, &c, Verb::Put, SETTINGS, body).unwrap();
    assert_eq!(again["alerts"].get("secret"), None);
    assert_eq!(stored_secret(&w).as_deref(), Some(secret.as_str()));
}

#[test]
fn setting_a_new_url_rotates_the_secret() {
    let w = World::with_acme();
    let c = Cell::new(0);
    let first = call(
        &w,
        &c,
        Verb::Put,
        SETTINGS,
        r#"{"alerts":{"webhook_url":"https://a.example/"}}"#,
    )
    .unwrap()["alerts"]["secret"]
        .clone();
    let second = call(
        &w,
        &c,
        Verb::Put,
        SETTINGS,
        r#"{"alerts":{"webhook_url":"https://b.example/"}}"#,
    )
    .unwrap()["alerts"]["secret"]
        .clone();
    assert!(second.is_string());
    assert_ne!(first, second);
    assert_eq!(stored_secret(&w).as_deref(), second.as_str());
}

#[test]
fn a_plain_http_webhook_is_refused_like_an_upstream_and_nothing_is_stored() {
    let w = World::with_acme();
    let c = Cell::new(0);
    let (status, body) = call(
        &w,
        &c,
        Verb::Put,
        SETTINGS,
        r#"{"alerts":{"webhook_url":"http://127.0.0.1:9/h"}}"#,
    )
    .unwrap_err();
    assert_eq!(status, 400);
    assert_eq!(body["error"]["param"], json!("alerts.webhook_url"));
    assert_eq!(stored_secret(&w), None);
    let mut w = w;
    w.allow_http = true;
    assert!(call(
        &w,
        &c,
        Verb::Put,
        SETTINGS,
        r#"{"alerts":{"webhook_url":"http://127.0.0.1:9/h"}}"#
    )
    .is_ok());
    // Alerts removed: the secret goes with them.
    call(&w, &c, Verb::Put, SETTINGS, "{}").unwrap();
    assert_eq!(stored_secret(&w), None);
}
