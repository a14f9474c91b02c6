//! `openapi.json` checked against the types: each operation's request and response
//! schemas, its error answers and the path parameters are derived from the serde types with
//! schemars (a host-only dependency) and compared with the document by shape (`shape.rs`). A field
//! added to a body or view type and not to the document fails here, naming the type and field.
//!
//! One row per operation (a new operation is one line in `OPERATIONS`): `api::endpoint::tests`
//! holds the document's operation list to the router's, and
//! `every_operation_has_one_row_in_the_schema_table` holds this table to that list, so an
//! operation without a row fails.

mod shape;

use super::views::{
    AliasView, Deleted, EventView, Explanation, KeyView, List, ModelView, NewKeyView, PolicyView,
    ProviderView, ResetView, RuleView, StatsRow, TenantStats, TenantSummary, TenantView, UsageView,
    WrittenRuleView,
};
use crate::api::endpoint::{ADMIN_OPERATIONS, CALLER_OPERATIONS, CONSOLE_OPERATIONS, OPENAPI};
use crate::api::error::Envelope;
use crate::config::admin_body::{
    AliasBody, BreakerReset, ModelBody, ProviderBody, RuleBody, TenantBody,
};
use crate::config::chain_preset::SortBody;
use crate::config::KeyPolicyChange;
use crate::config::{
    AliasName, ModelId, ProviderName, RouteName, Settings, SettingsOverrides, TenantId,
};
use crate::health::provider_health::ProviderHealth;
use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::Value;
use shape::{differences, shape};

/// A derived JSON Schema (subschemas inlined).
type Derive = fn() -> Value;

/// What a body of `T` may be, as serde reads it: defaulted and `Option` fields are optional.
fn req<T: JsonSchema>() -> Value {
    let mut settings = SchemaSettings::draft2020_12().for_deserialize();
    settings.inline_subschemas = true;
    settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// What an answer of `T` is, as serde writes it: skipped-when-empty fields are optional.
fn resp<T: JsonSchema>() -> Value {
    let mut settings = SchemaSettings::draft2020_12().for_serialize();
    settings.inline_subschemas = true;
    let mut schema = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    absent_not_null(&mut schema);
    schema
}

/// An answer's field is optional only when serde skips it (`skip_serializing_if`), and every
/// such `Option` here is skipped when `None`: absent, never `null`. schemars cannot see the
/// predicate and still admits `null`; this takes it out.
fn absent_not_null(schema: &mut Value) {
    match schema {
        Value::Object(obj) => {
            let required: Vec<Value> = obj
                .get("required")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if let Some(Value::Object(props)) = obj.get_mut("properties") {
                for (name, field) in props.iter_mut() {
                    if !required.contains(&Value::String(name.clone())) {
                        strip_null(field);
                    }
                }
            }
            obj.values_mut().for_each(absent_not_null);
        }
        Value::Array(items) => items.iter_mut().for_each(absent_not_null),
        _ => {}
    }
}

fn strip_null(field: &mut Value) {
    let null = Value::String("null".into());
    if let Some(Value::Array(types)) = field.get_mut("type") {
        types.retain(|t| *t != null);
        if let [only] = types.as_slice() {
            field["type"] = only.clone();
        }
    }
    if let Some(Value::Array(branches)) = field.get_mut("anyOf") {
        branches.retain(|b| b.get("type") != Some(&null));
    }
}

struct Op {
    method: &'static str,
    path: &'static str,
    /// `None`: no body, or (caller surfaces) a body the gateway reads field by field, not as a type.
    request: Option<Derive>,
    status: &'static str,
    /// `None`: not a typed admin view (the document itself; the caller surfaces' answers).
    response: Option<Derive>,
}

const fn op(
    method: &'static str,
    path: &'static str,
    request: Option<Derive>,
    status: &'static str,
    response: Option<Derive>,
) -> Op {
    Op {
        method,
        path,
        request,
        status,
        response,
    }
}

type L<T> = List<T>;

#[rustfmt::skip]
const OPERATIONS: &[Op] = &[
    op("get", "/admin/v1/openapi.json", None, "200", None),
    op("get", "/admin/v1/metrics", None, "200", None),
    op("get", "/admin/v1/tenants", None, "200", Some(resp::<L<TenantSummary>>)),
    op("post", "/admin/v1/tenants", Some(req::<TenantBody>), "201", Some(resp::<TenantView<'static>>)),
    op("get", "/admin/v1/tenants/{tenant}", None, "200", Some(resp::<TenantView<'static>>)),
    op("delete", "/admin/v1/tenants/{tenant}", None, "200", Some(resp::<Deleted<'static>>)),
    op("get", "/admin/v1/tenants/{tenant}/api-keys", None, "200", Some(resp::<L<KeyView<'static>>>)),
    op("post", "/admin/v1/tenants/{tenant}/api-keys", Some(req::<KeyPolicyChange>), "201", Some(resp::<NewKeyView<'static>>)),
    op("patch", "/admin/v1/tenants/{tenant}/api-keys/{key_id}", Some(req::<KeyPolicyChange>), "200", Some(resp::<PolicyView<'static>>)),
    op("delete", "/admin/v1/tenants/{tenant}/api-keys/{key_id}", None, "200", Some(resp::<Deleted<'static>>)),
    op("get", "/admin/v1/tenants/{tenant}/providers", None, "200", Some(resp::<L<ProviderView<'static>>>)),
    op("get", "/admin/v1/tenants/{tenant}/providers/{provider}", None, "200", Some(resp::<ProviderView<'static>>)),
    op("put", "/admin/v1/tenants/{tenant}/providers/{provider}", Some(req::<ProviderBody>), "200", Some(resp::<ProviderView<'static>>)),
    op("delete", "/admin/v1/tenants/{tenant}/providers/{provider}", None, "200", Some(resp::<Deleted<'static>>)),
    op("get", "/admin/v1/tenants/{tenant}/models", None, "200", Some(resp::<L<ModelView<'static>>>)),
    op("get", "/admin/v1/tenants/{tenant}/models/{model}", None, "200", Some(resp::<ModelView<'static>>)),
    op("put", "/admin/v1/tenants/{tenant}/models/{model}", Some(req::<ModelBody>), "200", Some(resp::<ModelView<'static>>)),
    op("delete", "/admin/v1/tenants/{tenant}/models/{model}", None, "200", Some(resp::<Deleted<'static>>)),
    op("get", "/admin/v1/tenants/{tenant}/aliases", None, "200", Some(resp::<L<AliasView<'static>>>)),
    op("get", "/admin/v1/tenants/{tenant}/aliases/{alias}", None, "200", Some(resp::<AliasView<'static>>)),
    op("put", "/admin/v1/tenants/{tenant}/aliases/{alias}", Some(req::<AliasBody>), "200", Some(resp::<AliasView<'static>>)),
    op("delete", "/admin/v1/tenants/{tenant}/aliases/{alias}", None, "200", Some(resp::<Deleted<'static>>)),
    op("get", "/admin/v1/tenants/{tenant}/routing-rules", None, "200", Some(resp::<L<RuleView<'static>>>)),
    op("put", "/admin/v1/tenants/{tenant}/routing-rules", Some(req::<RuleBody>), "200", Some(resp::<WrittenRuleView<'static>>)),
    op("delete", "/admin/v1/tenants/{tenant}/routing-rules/{rule}", None, "200", Some(resp::<Deleted<'static>>)),
    op("post", "/admin/v1/tenants/{tenant}/routing-rules/{rule}/sort", Some(req::<SortBody>), "200", Some(resp::<RuleView<'static>>)),
    op("get", "/admin/v1/tenants/{tenant}/settings", None, "200", Some(resp::<Settings>)),
    op("put", "/admin/v1/tenants/{tenant}/settings", Some(req::<SettingsOverrides>), "200", Some(resp::<Settings>)),
    op("get", "/admin/v1/tenants/{tenant}/events", None, "200", Some(resp::<L<EventView>>)),
    op("post", "/admin/v1/tenants/{tenant}/breakers/reset", Some(req::<BreakerReset>), "200", Some(resp::<ResetView>)),
    op("get", "/admin/v1/tenants/{tenant}/usage", None, "200", Some(resp::<UsageView>)),
    op("get", "/admin/v1/tenants/{tenant}/stats", None, "200", Some(resp::<TenantStats>)),
    op("get", "/admin/v1/tenants/{tenant}/explain", None, "200", Some(resp::<Explanation>)),
    op("post", "/v1/chat/completions", None, "200", None),
    op("post", "/v1/messages", None, "200", None),
    op("post", "/v1/messages/count_tokens", None, "200", None),
    op("post", "/v1/responses", None, "200", None),
    op("post", "/v1/embeddings", None, "200", None),
    op("get", "/v1/models", None, "200", None),
    op("get", "/v1/models/metrics", None, "200", Some(resp::<L<StatsRow>>)),
    op("get", "/v1/models/{model}", None, "200", None),
    op("get", "/v1/health", None, "200", None),
    op("get", "/v1/providers/health", None, "200", Some(resp::<L<ProviderHealth>>)),
    op("get", "/console", None, "200", None),
    op("get", "/console/app.js", None, "200", None),
    op("get", "/console/app.css", None, "200", None),
];

/// Path parameters by name, and the type each is parsed into (`None`: taken as any string).
const PATH_PARAMETERS: &[(&str, Option<Derive>)] = &[
    ("tenant", Some(req::<TenantId>)),
    ("provider", Some(req::<ProviderName>)),
    ("model", Some(req::<ModelId>)),
    ("alias", Some(req::<AliasName>)),
    ("rule", Some(req::<RouteName>)),
    ("key_id", None),
];

fn document() -> Value {
    serde_json::from_str(OPENAPI).unwrap()
}

/// Every way the document's `schema` fails to describe the derived one, named after the type.
fn compare(doc: &Value, schema: &Value, derived: &Value) -> Vec<String> {
    let name = derived["title"].as_str().unwrap_or("?");
    let mut out = Vec::new();
    differences(name, &shape(schema, doc), &shape(derived, doc), &mut out);
    out
}

fn json_schema(content_holder: &Value) -> &Value {
    &content_holder["content"]["application/json"]["schema"]
}

#[test]
fn every_operation_has_one_row_in_the_schema_table() {
    let mut rows: Vec<(&str, &str)> = OPERATIONS.iter().map(|o| (o.method, o.path)).collect();
    let mut routed: Vec<(&str, &str)> = ADMIN_OPERATIONS
        .iter()
        .chain(CALLER_OPERATIONS)
        .chain(CONSOLE_OPERATIONS)
        .copied()
        .collect();
    rows.sort_unstable();
    routed.sort_unstable();
    assert_eq!(rows, routed, "one row in OPERATIONS per routed operation");
}

#[test]
fn each_request_and_answer_schema_in_the_document_matches_its_serde_type() {
    let doc = document();
    let mut problems = Vec::new();
    for o in OPERATIONS {
        let operation = &doc["paths"][o.path][o.method];
        let label = format!("{} {}", o.method.to_uppercase(), o.path);
        let body = operation.get("requestBody");
        match (o.request, body) {
            (Some(derive), Some(body)) => {
                for p in compare(&doc, json_schema(&doc_resolve(&doc, body)), &derive()) {
                    problems.push(format!("{label} request body: {p}"));
                }
            }
            (Some(_), None) => problems.push(format!("{label}: the document has no request body")),
            (None, Some(_)) if o.path.starts_with("/admin/") => problems.push(format!(
                "{label}: a request body in the document and no type"
            )),
            _ => {}
        }
        let answer = &operation["responses"][o.status];
        if answer.is_null() {
            problems.push(format!("{label}: no {} answer in the document", o.status));
        } else if let Some(derive) = o.response {
            for p in compare(&doc, json_schema(&doc_resolve(&doc, answer)), &derive()) {
                problems.push(format!("{label} {} answer: {p}", o.status));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "openapi.json disagrees with the types:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_admin_refusal_is_documented_as_the_error_envelope() {
    let doc = document();
    let envelope = resp::<Envelope<'static>>();
    let mut problems = Vec::new();
    for o in OPERATIONS.iter().filter(|o| o.path.starts_with("/admin/")) {
        let responses = doc["paths"][o.path][o.method]["responses"]
            .as_object()
            .unwrap();
        for (status, answer) in responses.iter().filter(|(s, _)| s.as_str() >= "400") {
            for p in compare(&doc, json_schema(&doc_resolve(&doc, answer)), &envelope) {
                problems.push(format!(
                    "{} {} {status}: {p}",
                    o.method.to_uppercase(),
                    o.path
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn path_parameters_carry_the_patterns_the_router_enforces() {
    let doc = document();
    let mut problems = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        let declared = item["parameters"].as_array().into_iter().flatten();
        let per_op = item
            .as_object()
            .unwrap()
            .values()
            .flat_map(|op| op["parameters"].as_array().into_iter().flatten());
        for param in declared.chain(per_op).filter(|p| p["in"] == "path") {
            let name = param["name"].as_str().unwrap();
            match PATH_PARAMETERS.iter().find(|(n, _)| *n == name) {
                None => problems.push(format!("{path}: no row for path parameter `{name}`")),
                Some((_, Some(derive))) => {
                    for p in compare(&doc, &param["schema"], &derive()) {
                        problems.push(format!("{path} `{name}`: {p}"));
                    }
                }
                Some((_, None)) => {}
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_field_added_to_a_type_and_not_to_the_document_is_named() {
    let doc = document();
    let schema = json_schema(&doc["paths"]["/admin/v1/tenants"]["post"]["requestBody"]).clone();
    let mut derived = req::<TenantBody>();
    assert!(compare(&doc, &schema, &derived).is_empty());
    derived["properties"]["colour"] = serde_json::json!({"type": "string"});
    derived["required"]
        .as_array_mut()
        .unwrap()
        .push("colour".into());
    let found = compare(&doc, &schema, &derived);
    assert!(
        found.contains(
            &"TenantBody: field `colour` is in the type but not in the document".to_owned()
        ),
        "{found:?}"
    );
    assert!(
        found.contains(
            &"TenantBody: field `colour` is required in the type, optional in the document"
                .to_owned()
        ),
        "{found:?}"
    );
}

/// A response or request body given as `$ref` to `#/components/...`.
fn doc_resolve(doc: &Value, v: &Value) -> Value {
    match v
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
    {
        Some(pointer) => doc.pointer(pointer).cloned().unwrap_or(Value::Null),
        None => v.clone(),
    }
}
