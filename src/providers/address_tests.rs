use super::*;
use crate::config::provider::test_provider as provider;
use crate::config::Provider;

fn key(p: &Provider) -> &ProviderKey {
    p.keys.first().unwrap()
}

#[test]
fn azure_calls_the_deployment_path_with_the_api_version() {
    let p = provider(
        r#"{"kind":"azure_openai","base_url":"https://r.openai.azure.com","api_version":"2024-10-21","keys":["azure-key-1234567890"]}"#,
    );
    let chat = path(&p, key(&p), "gpt-4o", Operation::Chat { stream: true });
    assert_eq!(
        chat,
        "openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21"
    );
    let emb = path(&p, key(&p), "te-3", Operation::Embeddings);
    assert_eq!(
        emb,
        "openai/deployments/te-3/embeddings?api-version=2024-10-21"
    );
}

#[test]
fn a_bedrock_model_id_is_percent_encoded_in_the_path() {
    let p = provider(
        r#"{"kind":"bedrock","base_url":"https://bedrock-runtime.us-east-1.amazonaws.com","region":"us-east-1","keys":["AKIDEXAMPLE:secretsecretsecret"]}"#,
    );
    let id = "anthropic.claude-3-5-sonnet-20240620-v1:0";
    assert_eq!(
        path(&p, key(&p), id, Operation::Chat { stream: false }),
        "model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse"
    );
    assert_eq!(
        path(&p, key(&p), id, Operation::Chat { stream: true }),
        "model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream"
    );
}

#[test]
fn gemini_methods_follow_the_operation() {
    let p = provider(
        r#"{"kind":"gemini","base_url":"https://generativelanguage.googleapis.com/v1beta","keys":["AIzaSyExampleKey0000000"]}"#,
    );
    let k = key(&p);
    assert_eq!(
        path(&p, k, "gemini-2.5-flash", Operation::Chat { stream: false }),
        "models/gemini-2.5-flash:generateContent"
    );
    assert_eq!(
        path(&p, k, "gemini-2.5-flash", Operation::Chat { stream: true }),
        "models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(
        path(&p, k, "text-embedding-004", Operation::Embeddings),
        "models/text-embedding-004:batchEmbedContents"
    );
}

#[test]
fn a_vertex_express_key_calls_google_models_without_project_or_location() {
    let p = provider(
        r#"{"kind":"vertex","base_url":"https://aiplatform.googleapis.com","project":"proj","region":"global","publisher":"google","keys":["AQ.ExpressKey000000000"]}"#,
    );
    assert_eq!(
        path(
            &p,
            key(&p),
            "gemini-2.5-pro",
            Operation::Chat { stream: true }
        ),
        "v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    );
}

#[test]
fn a_model_name_cannot_leave_its_path_segment() {
    assert_eq!(encode("a/../b?x=1#f", false), "a%2F..%2Fb%3Fx%3D1%23f");
    assert_eq!(encode("a b/é", true), "a%20b/%C3%A9");
}

#[test]
fn a_bedrock_access_key_signs_the_host_and_path_as_sent() {
    let p = provider(
        r#"{"kind":"bedrock","base_url":"http://127.0.0.1:9000","region":"us-east-1","keys":["AKIDEXAMPLE:secretsecret:TOKEN"]}"#,
    );
    let k = key(&p);
    assert_eq!(
        crate::providers::credentials::key_use(&p, k),
        crate::providers::credentials::KeyUse::Signature
    );
    let url = "http://127.0.0.1:9000/model/a%3A0/converse";
    let h = crate::providers::credentials::signature_headers(&p, k, url, b"{}", 1_700_000_000_000);
    let get = |n: &str| h.iter().find(|(k, _)| *k == n).map(|(_, v)| v.as_str());
    assert_eq!(get("x-amz-date"), Some("20231114T221320Z"));
    assert_eq!(get("x-amz-security-token"), Some("TOKEN"));
    let auth = get("authorization").unwrap();
    assert!(auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20231114/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature="), "{auth}");
}
