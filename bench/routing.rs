//! The pure routing decision (resolve + chain + candidate ordering) on a catalog of 500 models and
//! 50 aliases. A plain timing loop (criterion would double the bench's compile time): batches of
//! decisions, p50/p99 of the per-decision time over batches. Run: `cargo bench --bench routing`.
//! Also the context-window truncation of a long conversation (linear in the number of
//! messages; 30,000 messages in under 100 ms).

use cognigate::api::ChatRequest;
use cognigate::cascade::context_window::{fit, fitted_request, Fit};
use cognigate::config::admin_body::{parse_body, ProviderBody};
use cognigate::config::{
    Alias, AliasName, Capability, CatalogModel, Chain, ChainEntry, CostTier, Defaults, ModelId,
    ProviderName, RouteName, TenantConfig, TenantId,
};
use cognigate::routing::{build_chain, RouteInput};
use std::hint::black_box;
use std::time::Instant;

fn catalog() -> TenantConfig {
    let providers: Vec<ProviderName> = (0..10)
        .filter_map(|i| ProviderName::parse(&format!("p{i}")).ok())
        .collect();
    let caps = |i: usize| {
        let mut c: Vec<Capability> = ["chat", "tools", "vision", "json"]
            .iter()
            .enumerate()
            .filter(|(b, _)| !i.is_multiple_of(b + 2) || *b == 0)
            .filter_map(|(_, c)| Capability::parse(c).ok())
            .collect();
        c.sort();
        c
    };
    let Ok(tenant) = TenantId::parse("bench") else {
        unreachable!("a valid tenant id")
    };
    let mut cfg = TenantConfig::empty(tenant, Defaults::default().settings);
    for p in &providers {
        let body: Option<ProviderBody> =
            parse_body(br#"{"kind":"openai","base_url":"http://x/v1","keys":["k1","k2"]}"#).ok();
        let valid = body.and_then(|b| b.validate(p.clone()).ok());
        if let Some(provider) = valid.and_then(|v| v.resolve(|_| None)) {
            cfg.providers.insert(p.clone(), provider);
        }
    }
    for i in 0..500usize {
        let Ok(id) = ModelId::parse(&format!("vendor-{}/model-{i}", i % 7)) else {
            continue;
        };
        cfg.models.insert(
            id.clone(),
            CatalogModel {
                upstream_model: id.to_string(),
                id,
                provider: providers[i % providers.len()].clone(),
                capabilities: caps(i).into(),
                context_window: [8_000, 32_000, 128_000, 200_000][i % 4],
                input_price_per_mtok: ((i * 37) % 100) as f64 / 10.0,
                output_price_per_mtok: ((i * 53) % 100) as f64 / 5.0,
                cached_input_price_per_mtok: None,
                cache_write_price_per_mtok: None,
                cache_write_1h_price_per_mtok: None,
                max_output_tokens: None,
                fallback_model: None,
                min_cache_tokens: 1_024,
                quality_rank: None,
            },
        );
    }
    for i in 0..50usize {
        let Ok(name) = AliasName::parse(&format!("alias-{i}")) else {
            continue;
        };
        cfg.aliases.insert(
            name,
            Alias {
                pin: i
                    .is_multiple_of(5)
                    .then(|| ModelId::parse("retired-model").ok())
                    .flatten(),
                capabilities: caps(i * 3).into(),
                min_context_window: Some([8_000, 32_000, 128_000][i % 3]),
                provider_preference: providers.iter().skip(i % 4).take(3).cloned().collect(),
                cost_tier: [CostTier::Cheapest, CostTier::Balanced, CostTier::Best][i % 3],
                ..Alias::default()
            },
        );
    }
    let chain: Vec<ChainEntry> = [
        "alias-7",
        "vendor-3/model-10",
        "alias-20",
        "alias-33",
        "alias-49",
    ]
    .iter()
    .filter_map(|n| RouteName::parse(n).ok())
    .map(ChainEntry::Name)
    .collect();
    if let (Ok(m), Ok(c)) = (RouteName::parse("app"), Chain::new(chain, 5)) {
        cfg.rules.insert(m, c);
    }
    cfg
}

fn measure(label: &str, cfg: &TenantConfig, name: &str) {
    const BATCH: usize = 1_000;
    const BATCHES: usize = 200;
    let mut per_decision_ns: Vec<f64> = Vec::with_capacity(BATCHES);
    for _ in 0..20 {
        black_box(build_chain(cfg, name, &RouteInput::unmeasured()).ok());
    }
    for _ in 0..BATCHES {
        let t = Instant::now();
        for _ in 0..BATCH {
            black_box(
                build_chain(black_box(cfg), black_box(name), &RouteInput::unmeasured())
                    .map(|c| c.candidates.len())
                    .ok(),
            );
        }
        per_decision_ns.push(t.elapsed().as_nanos() as f64 / BATCH as f64);
    }
    per_decision_ns.sort_by(f64::total_cmp);
    let p = |q: f64| per_decision_ns[((per_decision_ns.len() - 1) as f64 * q) as usize] / 1000.0;
    let candidates = build_chain(cfg, name, &RouteInput::unmeasured())
        .map(|c| c.candidates.len())
        .unwrap_or(0);
    println!(
        "{{\"case\":\"{label}\",\"candidates\":{candidates},\"p50_us\":{:.3},\"p99_us\":{:.3}}}",
        p(0.5),
        p(0.99)
    );
}

/// The first decision after a config is loaded resolves every alias once (then they are cached).
fn measure_cold(cfg: &TenantConfig) {
    let mut samples: Vec<f64> = Vec::with_capacity(200);
    for _ in 0..200 {
        let fresh = cfg.clone_unresolved();
        let t = Instant::now();
        black_box(
            build_chain(black_box(&fresh), "alias-20", &RouteInput::unmeasured())
                .map(|c| c.candidates.len())
                .ok(),
        );
        samples.push(t.elapsed().as_nanos() as f64 / 1000.0);
    }
    samples.sort_by(f64::total_cmp);
    println!(
        "{{\"case\":\"first decision after a config load (resolves all 50 aliases)\",\"p50_us\":{:.3},\"p99_us\":{:.3}}}",
        samples[100],
        samples[197]
    );
}

/// A conversation of `n` messages: a system prompt, then user / assistant turns with a tool call
/// and its result every tenth turn (so truncation keeps pairs together all the way).
fn conversation(n: usize) -> Option<ChatRequest> {
    let text = "x".repeat(200);
    let mut messages = vec![r#"{"role":"system","content":"be brief"}"#.to_owned()];
    let mut turn = 0usize;
    while messages.len() < n {
        messages.push(format!(r#"{{"role":"user","content":"{turn} {text}"}}"#));
        if turn.is_multiple_of(10) {
            messages.push(format!(
                r#"{{"role":"assistant","tool_calls":[{{"id":"c{turn}","type":"function","function":{{"name":"f","arguments":"{{}}"}}}}]}}"#
            ));
            messages.push(format!(
                r#"{{"role":"tool","tool_call_id":"c{turn}","content":"{text}"}}"#
            ));
        }
        messages.push(format!(r#"{{"role":"assistant","content":"{text}"}}"#));
        turn += 1;
    }
    messages.truncate(n.saturating_sub(1));
    messages.push(r#"{"role":"user","content":"and now?"}"#.to_owned());
    let body = format!(
        r#"{{"model":"m","max_tokens":100,"messages":[{}]}}"#,
        messages.join(",")
    );
    // Larger than the gateway's default JSON value limit: this measures truncation, not parsing.
    ChatRequest::parse_bounded(body.into_bytes(), 10_000_000).ok()
}

/// `X-CogniGate-Truncate: oldest` on one candidate whose window holds about half the prompt:
/// the fit check and the rebuilt body, as the request path runs them.
fn measure_truncation(n: usize) {
    let Some(req) = conversation(n) else {
        println!("{{\"case\":\"truncate {n} messages\",\"error\":\"bad conversation\"}}");
        return;
    };
    let bytes = req.raw("messages").map_or(0, str::len);
    let window = u32::try_from(bytes / 8).unwrap_or(u32::MAX);
    let mut samples: Vec<f64> = Vec::with_capacity(20);
    let mut dropped = 0;
    for _ in 0..20 {
        let t = Instant::now();
        if let Fit::Truncated { dropped: d } = fit(black_box(&req), window, true) {
            dropped = d;
        }
        black_box(fitted_request(black_box(&req), window).map(|r| r.body_len()));
        samples.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    samples.sort_by(f64::total_cmp);
    println!(
        "{{\"case\":\"truncate {n} messages (fit + rebuilt body)\",\"messages_bytes\":{bytes},\"dropped\":{dropped},\"p50_ms\":{:.3},\"max_ms\":{:.3}}}",
        samples[10],
        samples[19]
    );
}

fn main() {
    for n in [3_000, 30_000] {
        measure_truncation(n);
    }
    let cfg = catalog();
    measure_cold(&cfg);
    println!(
        "{{\"catalog_models\":{},\"aliases\":{}}}",
        cfg.models.len(),
        cfg.aliases.len()
    );
    measure("model by id", &cfg, "vendor-3/model-10");
    measure("alias", &cfg, "alias-20");
    measure("rule of 5 (4 aliases + 1 model)", &cfg, "app");
}
