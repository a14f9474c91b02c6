use super::*;

fn parse(surface: Surface, body: &str) -> Inbound {
    Inbound::parse(surface, body.as_bytes().to_vec(), 1_000, None, None).unwrap()
}

#[test]
fn embeddings_with_stream_true_are_a_400_invalid_request_naming_stream() {
    let body = r#"{"model":"m","input":"x","stream":true}"#;
    let e = Inbound::parse(Surface::Embeddings, body.into(), 1_000, None, None).unwrap_err();
    assert_eq!(e.status(), 400);
    assert_eq!(e.param(), Some("stream"));
    let v: serde_json::Value = serde_json::from_str(&e.to_json()).unwrap();
    assert_eq!(v["error"]["code"], "invalid_request");
    assert_eq!(v["error"]["type"], "invalid_request_error");
    let off = parse(
        Surface::Embeddings,
        r#"{"model":"m","input":"x","stream":false}"#,
    );
    assert!(!off.stream());
}

#[test]
fn embeddings_are_unsupported_on_anthropic_and_native_on_openai() {
    let e = parse(Surface::Embeddings, r#"{"model":"m","input":"x"}"#);
    let provider = |kind: &str| {
        let body = format!(
            r#"{{"kind":"{kind}","base_url":"https://x.example","keys":["k-0123456789abcdef"]}}"#
        );
        let b: crate::config::admin_body::ProviderBody =
            crate::config::admin_body::parse_body(body.as_bytes()).unwrap();
        let name = crate::config::ProviderName::parse("p").unwrap();
        b.validate(name).unwrap().resolve(|_| None).unwrap()
    };
    let (anthropic, openai) = (provider("anthropic"), provider("openai"));
    assert!(!e.supported(&anthropic));
    assert!(e.supported(&openai) && e.native(Dialect::Openai));
    let model: crate::config::admin_body::ModelBody =
        crate::config::admin_body::parse_body(br#"{"provider":"p","context_window":8000}"#)
            .unwrap();
    let model = model
        .validate(crate::config::ModelId::parse("m").unwrap())
        .unwrap();
    assert_eq!(
        e.path(&openai, openai.keys.first().unwrap(), &model),
        "embeddings"
    );
}

#[test]
fn usage_is_read_from_the_upstream_answer_before_the_surface_translation() {
    let m = parse(
        Surface::Messages,
        r#"{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}]}"#,
    );
    let native = r#"{"type":"message","content":[],"usage":{"input_tokens":4,"cache_read_input_tokens":10,"output_tokens":2}}"#;
    let chat = r#"{"choices":[{"message":{"content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":14,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":10}}}"#;
    let r = parse(Surface::Responses, r#"{"model":"m","input":"x"}"#);
    let want = crate::usage::TokenCounts::new(14, 2, 10);
    for (inbound, dialect, answer, what) in [
        (
            &m,
            Dialect::Anthropic,
            native,
            "the Messages surface from a Messages answer",
        ),
        (
            &m,
            Dialect::Openai,
            chat,
            "the Messages surface from a chat answer",
        ),
        (
            &r,
            Dialect::Anthropic,
            native,
            "the Responses surface from a Messages answer",
        ),
    ] {
        let a = inbound
            .read_answer(dialect, answer.as_bytes().to_vec(), 0)
            .unwrap();
        assert_eq!(a.usage, Some(want), "{what}");
    }
    let e = parse(Surface::Embeddings, r#"{"model":"m","input":"x"}"#);
    let a = e
        .read_answer(
            Dialect::Openai,
            br#"{"data":[{"embedding":[0.5]}],"usage":{"prompt_tokens":3}}"#.to_vec(),
            0,
        )
        .unwrap();
    assert_eq!(a.usage.map(|t| t.prompt), Some(3));
    let a = e
        .read_answer(Dialect::Openai, br#"{"data":[]}"#.to_vec(), 0)
        .unwrap();
    assert_eq!(a.usage, None, "no usage: unknown");
}

#[test]
fn text_labelled_as_an_image_is_estimated_as_text_on_every_surface() {
    let text = "Read me as text. ".repeat(25_000);
    let at_least = crate::usage::estimate::tokens_for_bytes(text.len());
    let bodies = [
        (
            Surface::Chat,
            serde_json::json!({"model": "m", "messages": [{"role": "user",
            "content": [{"type": "image_url", "image_url": {"url": text}}]}]}),
        ),
        (
            Surface::Messages,
            serde_json::json!({"model": "m", "max_tokens": 5, "messages": [
            {"role": "user", "content": [{"type": "image", "text": text}]}]}),
        ),
        (
            Surface::Messages,
            serde_json::json!({"model": "m", "max_tokens": 5, "messages": [
            {"role": "user", "content": [{"type": "image", "source": {"type": "base64",
                "media_type": "image/png", "data": text}}]}]}),
        ),
        (
            Surface::Responses,
            serde_json::json!({"model": "m", "input": [{"role": "user",
            "content": [{"type": "input_image", "image_url": text}]}]}),
        ),
    ];
    for (surface, body) in bodies {
        let n = parse(surface, &body.to_string()).prompt_tokens();
        assert!(n >= at_least, "{surface:?}: {n} < {at_least}");
    }
}

#[test]
fn a_native_answer_of_the_wrong_shape_is_the_candidates_failure() {
    let m = parse(
        Surface::Messages,
        r#"{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}]}"#,
    );
    let read = |b: &str| m.read_response(Dialect::Anthropic, b.as_bytes().to_vec(), 0);
    assert!(read(r#"{"type":"message","content":[]}"#).is_ok());
    assert!(read(r#"{"type":"error"}"#).is_err());
    let e = parse(Surface::Embeddings, r#"{"model":"m","input":"x"}"#);
    assert!(e.read_response(Dialect::Openai, b"{}".to_vec(), 0).is_err());
}
