use super::*;
use serde_json::{json, Value};

const IMAGE: usize = IMAGE_BYTES;

fn counted(v: &Value) -> usize {
    counted_bytes(&v.to_string())
}

fn len(v: &Value) -> usize {
    v.to_string().len()
}

/// A JSON string token's size, quotes included.
fn token(s: &str) -> usize {
    Value::from(s).to_string().len()
}

fn prose(bytes: usize) -> String {
    "The quick brown fox jumps over the lazy dog. "
        .repeat(bytes / 45 + 1)
        .chars()
        .take(bytes)
        .collect()
}

#[test]
fn a_large_text_in_a_part_labelled_as_an_image_counts_as_text() {
    let text = prose(400_000);
    for part in [
        json!({"type": "image", "text": text}),
        json!({"type": "image_url", "text": text}),
        json!({"type": "input_image", "text": text}),
        json!({"type": "image", "source": {"type": "text", "text": text}}),
        json!({"type": "image_url", "image_url": {"detail": text}}),
    ] {
        let messages = json!([{"role": "user", "content": [part]}]);
        assert_eq!(
            counted(&messages),
            len(&messages) + IMAGE,
            "every byte as text, plus the one image its label claims"
        );
    }
}

#[test]
fn a_payload_that_is_not_an_image_counts_as_text() {
    let text = prose(400_000);
    let long_url = format!("https://example.com/{}", "a".repeat(MAX_URL_BYTES));
    for part in [
        json!({"type": "image_url", "image_url": {"url": text}}),
        json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{text}")}}),
        json!({"type": "image_url", "image_url": {"url": format!("https://example.com/?q={text}")}}),
        json!({"type": "image_url", "image_url": {"url": long_url}}),
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": text}}),
        json!({"type": "input_image", "image_url": text}),
    ] {
        let messages = json!([{"role": "user", "content": [part]}]);
        assert_eq!(
            counted(&messages),
            len(&messages) + IMAGE,
            "{}",
            &part.to_string()[..80]
        );
    }
}

#[test]
fn a_recognised_payload_counts_one_image_and_the_rest_of_its_part_counts_as_text() {
    let base64 = "iVBORw0KGgo+/=".repeat(30_000);
    let data_url = format!("data:image/png;base64,{base64}");
    let https = "https://example.com/cat.png?size=large";
    let cases = [
        (
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": base64}}),
            token(&base64),
        ),
        (
            json!({"type": "image", "source": {"type": "url", "url": https}}),
            token(https),
        ),
        (
            json!({"type": "image_url", "image_url": {"url": data_url, "detail": "high"}}),
            token(&data_url),
        ),
        (
            json!({"type": "image_url", "image_url": {"url": https}}),
            token(https),
        ),
        (
            json!({"type": "image_url", "image_url": https}),
            token(https),
        ),
        (
            json!({"type": "input_image", "image_url": data_url, "detail": "auto"}),
            token(&data_url),
        ),
    ];
    for (part, payload) in cases {
        let messages =
            json!([{"role": "user", "content": [{"type": "text", "text": "what is this?"}, part]}]);
        assert_eq!(counted(&messages), len(&messages) - payload + IMAGE);
    }
    // Escaped slashes and line breaks are still base64.
    let escaped = r#"[{"type":"image","source":{"type":"base64","data":"iVBO\/Rw\n0KGgo="}}]"#;
    assert_eq!(counted_bytes(escaped), escaped.len() - 18 + IMAGE);
}

#[test]
fn a_payload_where_its_parts_type_does_not_read_one_counts_as_text() {
    let base64 = "A".repeat(100_000);
    let data_url = format!("data:image/png;base64,{base64}");
    for part in [
        json!({"type": "image_url", "source": {"type": "base64", "data": base64}}),
        json!({"type": "image", "image_url": {"url": data_url}}),
        json!({"type": "image", "data": base64}),
        json!({"type": "image", "url": data_url}),
        json!({"type": "input_image", "image_url": {"data": base64}}),
        json!({"type": "text", "image_url": {"url": data_url}}),
    ] {
        let counted = counted(&part);
        assert!(counted >= len(&part), "{counted} < {}", len(&part));
    }
}

#[test]
fn a_part_with_two_types_is_no_image_and_a_repeated_payload_counts_only_its_last_value() {
    let base64 = "A".repeat(100_000);
    let two_types = format!(r#"{{"type":"image","type":"text","source":{{"data":"{base64}"}}}}"#);
    assert_eq!(counted_bytes(&two_types), two_types.len());
    // The last `data` is what a provider reads: the first, hidden one, counts as text.
    let text = prose(1_000);
    let repeated = format!(r#"{{"type":"image","source":{{"data":"{base64}","data":"{text}"}}}}"#);
    assert_eq!(counted_bytes(&repeated), repeated.len() + IMAGE);
}

#[test]
fn images_nested_in_tool_results_and_objects_each_count_once() {
    let base64 = "A".repeat(50_000);
    let image = json!({"type": "image", "source": {"type": "base64", "data": base64}});
    let messages = json!([{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": [image, image]},
        image,
    ]}]);
    assert_eq!(
        counted(&messages),
        len(&messages) - 3 * token(&base64) + 3 * IMAGE
    );
}

#[test]
fn text_without_image_parts_and_text_that_is_not_json_count_every_byte() {
    for raw in [
        r#""describe the image""#,
        r#"[{"role":"user","content":"image_url \"image\" {\"type\":\"image\"}"}]"#,
        r#"[{"type":"image","source":{"data":"AAAA"}"#,
        r#"{"type":"image"]"#,
        r#"[{"type":"image","source":{"data":"AAAA}]"#,
    ] {
        assert_eq!(counted_bytes(raw), raw.len(), "{raw}");
    }
    let number = r#"[{"type":"image","image_url":12345,"n":[1,true,null]}]"#;
    assert_eq!(counted_bytes(number), number.len() + IMAGE);
}

#[test]
fn a_deep_or_wide_field_is_read_in_one_pass() {
    // 128 levels (the parser's limit) of image parts, and 50,000 parts side by side.
    let mut deep = String::from(r#""x""#);
    for _ in 0..127 {
        deep = format!(r#"{{"type":"image","source":{{"data":"QUJD"}},"content":{deep}}}"#);
    }
    assert_eq!(counted_bytes(&deep), deep.len() - 127 * 6 + 127 * IMAGE);
    let part = r#"{"type":"image_url","image_url":{"url":"https://e.com/a.png"}},"#;
    let wide = format!("[{}0]", part.repeat(50_000));
    let url = token("https://e.com/a.png");
    assert_eq!(
        counted_bytes(&wide),
        wide.len() - 50_000 * url + 50_000 * IMAGE
    );
}
