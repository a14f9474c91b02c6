//! `GET /admin/v1/tenants/{t}/explain` through the admin core's dispatch, over the
//! in-memory store and routing state: the route, the query's 400s and the request path's 404.

use crate::support::admin_world::AdminWorld;
use crate::support::fakes::tenant;
use cognigate::admin::Verb;
use cognigate::config::TenantId;
use std::rc::Rc;

/// A world whose tenant `acme` exists, with the request path's config of `fakes::tenant`.
fn world() -> AdminWorld {
    let w = AdminWorld::with_acme();
    w.routing.configs.borrow_mut().insert(
        TenantId::parse("acme").unwrap(),
        Rc::new(tenant(1, "failover")),
    );
    w
}

#[test]
fn explain_answers_the_chain_in_order_with_each_candidates_decision() {
    let w = world();
    let v = w.ok(Verb::Get, "/admin/v1/tenants/acme/explain?model=chain", "");
    let models: Vec<(&str, &str, u64)> = v["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let (m, d) = (
                c["model"].as_str().unwrap(),
                c["decision"].as_str().unwrap(),
            );
            (m, d, c["position"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(
        models,
        [("m1", "try", 0), ("m2", "try", 1), ("m3", "try", 2)]
    );
    assert_eq!(v["model"], "chain");
}

#[test]
fn a_bad_query_value_is_a_400_in_the_admin_error_shape_and_an_unknown_name_404_model_not_found() {
    let w = world();
    for (query, param) in [
        ("model=chain&stream=maybe", "stream"),
        ("model=chain&metadata=not-json", "metadata"),
        ("tools=true", "model"),
    ] {
        let (status, body) = w
            .call(
                Verb::Get,
                &format!("/admin/v1/tenants/acme/explain?{query}"),
                "",
            )
            .unwrap_err();
        assert_eq!(status, 400, "{query}");
        assert_eq!(body["error"]["code"], "invalid_request");
        assert_eq!(body["error"]["param"], param);
    }
    let (status, body) = w
        .call(Verb::Get, "/admin/v1/tenants/acme/explain?model=nope", "")
        .unwrap_err();
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &"model_not_found".into())
    );
    let (status, _) = w
        .call(Verb::Get, "/admin/v1/tenants/ghost/explain?model=chain", "")
        .unwrap_err();
    assert_eq!(status, 404, "no such tenant");
    let (status, _) = w
        .call(Verb::Post, "/admin/v1/tenants/acme/explain?model=chain", "")
        .unwrap_err();
    assert_eq!(status, 405);
}
