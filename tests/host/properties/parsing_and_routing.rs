//! Property tests of the parsers (Retry-After, SSE, the admin bodies) and of chains and aliases.
//! Any failure proptest finds is kept in `parsing_and_routing.proptest-regressions` beside this
//! file and replayed first, forever.

use cognigate::api::ChatRequest;
use cognigate::cascade::retry_after::{imf_fixdate, park_ms};
use cognigate::config::admin_body::{
    parse_body, AliasBody, ModelBody, ProviderBody, RuleBody, TenantBody,
};
use cognigate::config::{
    Alias, AliasName, CatalogModel, Chain, CostTier, Defaults, ModelId, ProviderName, RouteName,
    SettingsOverrides, TenantConfig, TenantId,
};
use cognigate::providers::{anthropic, StreamDecoder};
use cognigate::routing::{build_chain, resolve::satisfies, resolve_alias, RouteInput};
use cognigate::stream::{Relay, SseParser};
use proptest::prelude::*;

proptest! {
    #![proptest_config(super::config())]

    // ---- Retry-After ----------------------------------------------------------------------

    #[test]
    fn retry_after_never_panics(value in ".{0,64}", now in any::<u64>()) {
        let _ = park_ms(&value, now);
    }

    #[test]
    fn retry_after_seconds_are_exact(secs in 1u64..10_000_000, now in 0u64..4_000_000_000_000) {
        prop_assert_eq!(park_ms(&secs.to_string(), now), Some(secs * 1000));
    }

    #[test]
    fn retry_after_dates_park_until_that_second(now_s in 1_000_000_000u64..3_000_000_000, ahead in 1u64..1_000_000) {
        let now = now_s * 1000;
        prop_assert_eq!(park_ms(&imf_fixdate(now + ahead * 1000), now), Some(ahead * 1000));
        prop_assert_eq!(park_ms(&imf_fixdate(now.saturating_sub(ahead * 1000)), now), None);
    }

    // ---- SSE parsing and the relay -------------------------------------------------------

    #[test]
    fn sse_parsing_is_independent_of_chunking(bytes in proptest::collection::vec(any::<u8>(), 0..2048), cut in 0usize..2048) {
        let cut = cut.min(bytes.len());
        let mut whole = SseParser::default();
        let all = whole.push(&bytes).unwrap_or_default();
        let mut split = SseParser::default();
        let mut parts = split.push(&bytes[..cut]).unwrap_or_default();
        parts.extend(split.push(&bytes[cut..]).unwrap_or_default());
        prop_assert_eq!(&all, &parts);
        let raw: Vec<u8> = all.iter().flat_map(|e| e.raw.clone()).collect();
        prop_assert_eq!(&bytes[..raw.len()], &raw[..], "events are a prefix of the input, byte for byte");
        prop_assert_eq!(raw.len() + whole.pending(), bytes.len());
    }

    #[test]
    fn sse_like_streams_never_panic_the_relay_or_the_anthropic_translator(
        lines in proptest::collection::vec(
            prop_oneof![
                Just("data: [DONE]".to_owned()),
                Just("data: {\"error\":{\"message\":\"x\"}}".to_owned()),
                Just("event: message_stop".to_owned()),
                Just("event: error".to_owned()),
                Just(": ping".to_owned()),
                Just(String::new()),
                "data: \\{[a-z\":,\\[\\]{}0-9]{0,40}\\}",
                ".{0,30}",
            ],
            0..40,
        ),
        chunk in 1usize..64,
    ) {
        let text = lines.join("\n");
        let mut decoder = StreamDecoder::new(cognigate::providers::Dialect::Anthropic, "m", 0);
        let mut relay = Relay::default();
        for c in text.as_bytes().chunks(chunk) {
            let _ = decoder.decode(c.to_vec());
            let _ = relay.on_chunk(c);
        }
        let _ = relay.on_end();
    }

    // ---- admin body parsers ----------------------------------------------------------------

    #[test]
    fn admin_parsers_never_panic_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = parse_body::<TenantBody>(&bytes).map(TenantBody::validate);
        let _ = parse_body::<ProviderBody>(&bytes).map(|b| b.validate(ProviderName::parse("p").unwrap()));
        let _ = parse_body::<ModelBody>(&bytes).map(|b| b.validate(ModelId::parse("m").unwrap()));
        let _ = parse_body::<AliasBody>(&bytes).map(AliasBody::validate);
        let _ = parse_body::<RuleBody>(&bytes).map(|b| b.validate(5));
        let _ = parse_body::<SettingsOverrides>(&bytes);
        let _ = ChatRequest::parse(&bytes);
    }

    #[test]
    fn admin_parsers_never_panic_on_json_shaped_input(json in arb_json(3)) {
        let bytes = json.to_string().into_bytes();
        let _ = parse_body::<ProviderBody>(&bytes).map(|b| b.validate(ProviderName::parse("p").unwrap()));
        let _ = parse_body::<ModelBody>(&bytes).map(|b| b.validate(ModelId::parse("m").unwrap()));
        let _ = parse_body::<AliasBody>(&bytes).map(AliasBody::validate);
        let _ = parse_body::<RuleBody>(&bytes).map(|b| b.validate(5));
        if let Ok(req) = ChatRequest::parse(&bytes) {
            let model = ModelBody { ..parse_body(br#"{"provider":"p","context_window":8}"#).unwrap() }
                .validate(ModelId::parse("m").unwrap()).unwrap();
            let _ = anthropic::request::body(&model, &req);
            let _ = cognigate::providers::openai::body(&model, &req);
        }
    }

    // ---- resolution and chains -------------------------------------------------------------

    #[test]
    fn chains_are_deterministic_distinct_and_drawn_from_the_catalog(cfg in arb_tenant(), name in "[a-e][0-9]?") {
        let first = build_chain(&cfg, &name, &RouteInput::unmeasured()).map(|c| c.candidates.iter().map(|x| x.model.id.to_string()).collect::<Vec<_>>());
        let again = build_chain(&cfg, &name, &RouteInput::unmeasured()).map(|c| c.candidates.iter().map(|x| x.model.id.to_string()).collect::<Vec<_>>());
        prop_assert_eq!(&first, &again);
        if let Ok(ids) = first {
            let mut unique = ids.clone();
            unique.sort();
            unique.dedup();
            prop_assert_eq!(unique.len(), ids.len(), "no model twice");
            prop_assert!(ids.len() <= cfg.rules.get(name.as_str()).map_or(1, Chain::len), "one per position");
            prop_assert!(ids.iter().all(|id| cfg.models.contains_key(id.as_str())));
        }
    }

    #[test]
    fn an_unpinned_alias_picks_a_satisfying_model_no_other_beats(cfg in arb_tenant()) {
        for alias in cfg.aliases.values().filter(|a| a.pin.is_none()) {
            let picked = resolve_alias(&cfg.models, alias);
            let eligible: Vec<&CatalogModel> = cfg.models.values().filter(|m| satisfies(m, alias)).collect();
            prop_assert_eq!(picked.is_some(), !eligible.is_empty());
            if let Some(p) = picked {
                prop_assert!(satisfies(p, alias));
                let rank = |m: &CatalogModel| alias.provider_preference.iter().position(|x| *x == m.provider).unwrap_or(usize::MAX);
                for m in &eligible {
                    prop_assert!(rank(p) <= rank(m));
                    if rank(p) == rank(m) {
                        match alias.cost_tier {
                            CostTier::Best => prop_assert!(p.price() >= m.price()),
                            _ => prop_assert!(p.price() <= m.price()),
                        }
                    }
                }
            }
        }
    }
}

fn arb_json(depth: u32) -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(serde_json::Value::from),
        "[a-z_]{0,12}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(depth, 64, 8, |inner| {
        let keys = prop_oneof![
            Just("model".to_owned()),
            Just("messages".to_owned()),
            Just("role".to_owned()),
            Just("content".to_owned()),
            Just("keys".to_owned()),
            Just("kind".to_owned()),
            Just("base_url".to_owned()),
            Just("provider".to_owned()),
            Just("context_window".to_owned()),
            Just("chain".to_owned()),
            Just("match".to_owned()),
            Just("tools".to_owned()),
            Just("tool_calls".to_owned()),
            Just("stop".to_owned()),
            Just("secret".to_owned()),
            "[a-z]{1,8}",
        ];
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
            proptest::collection::btree_map(keys, inner, 0..5)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

fn arb_tenant() -> impl Strategy<Value = TenantConfig> {
    let model = (
        "[a-e][0-9]",
        0usize..3,
        0u32..4,
        1u32..200_000,
        proptest::bits::u8::between(0, 3),
    );
    let alias = (
        "[a-e][0-9]?",
        proptest::option::of("[a-e][0-9]"),
        proptest::bits::u8::between(0, 3),
        proptest::option::of(1u32..200_000),
        proptest::collection::vec(0usize..3, 0..3),
        0u8..3,
    );
    let rule = (
        "[a-e][0-9]?",
        proptest::collection::vec("[a-e][0-9]?", 1..6),
    );
    (
        proptest::collection::vec(model, 0..12),
        proptest::collection::vec(alias, 0..5),
        proptest::collection::vec(rule, 0..4),
    )
        .prop_map(|(models, aliases, rules)| {
            let providers = ["p0", "p1", "p2"];
            let caps_of = |bits: u8| {
                let mut caps: Vec<_> = ["chat", "tools"]
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| bits & (1 << i) != 0)
                    .map(|(_, c)| cognigate::config::Capability::parse(c).unwrap())
                    .collect();
                caps.sort();
                caps
            };
            let mut cfg =
                TenantConfig::empty(TenantId::parse("t").unwrap(), Defaults::default().settings);
            for p in providers {
                let body: ProviderBody =
                    parse_body(br#"{"kind":"openai","base_url":"http://x/v1","keys":["k"]}"#)
                        .unwrap();
                let name = ProviderName::parse(p).unwrap();
                cfg.providers.insert(
                    name.clone(),
                    body.validate(name).unwrap().resolve(|_| None).unwrap(),
                );
            }
            for (id, p, price, ctx, caps) in models {
                let id = ModelId::parse(&id).unwrap();
                cfg.models.insert(
                    id.clone(),
                    CatalogModel {
                        id: id.clone(),
                        provider: ProviderName::parse(providers[p]).unwrap(),
                        upstream_model: id.to_string(),
                        capabilities: caps_of(caps).into(),
                        context_window: ctx,
                        input_price_per_mtok: f64::from(price),
                        output_price_per_mtok: 0.0,
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
            for (name, pin, caps, min_ctx, pref, tier) in aliases {
                let Ok(name) = AliasName::parse(&name) else {
                    continue;
                };
                if cfg.models.contains_key(name.as_str()) {
                    continue;
                }
                let mut preference: Vec<ProviderName> = pref
                    .iter()
                    .map(|i| ProviderName::parse(providers[*i]).unwrap())
                    .collect();
                preference.dedup();
                cfg.aliases.insert(
                    name,
                    Alias {
                        pin: pin.map(|p| ModelId::parse(&p).unwrap()),
                        capabilities: caps_of(caps).into(),
                        min_context_window: min_ctx,
                        provider_preference: preference,
                        cost_tier: [CostTier::Cheapest, CostTier::Balanced, CostTier::Best]
                            [usize::from(tier)],
                        ..Alias::default()
                    },
                );
            }
            for (m, chain) in rules {
                let entries = chain
                    .iter()
                    .map(|e| cognigate::config::ChainEntry::Name(RouteName::parse(e).unwrap()))
                    .collect();
                cfg.rules.insert(
                    RouteName::parse(&m).unwrap(),
                    Chain::new(entries, 5).unwrap(),
                );
            }
            cfg
        })
}
