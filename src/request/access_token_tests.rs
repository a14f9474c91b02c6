use super::*;
use crate::config::cloud_key::tests::account;
use futures::executor::block_on;
use std::cell::Cell;

/// A token endpoint that answers `answer` and counts what it was asked.
struct Endpoint {
    answer: fn() -> Posted,
    signed: Cell<u32>,
    posted: RefCell<Vec<(String, String)>>,
}

impl Endpoint {
    fn answering(answer: fn() -> Posted) -> Self {
        Self {
            answer,
            signed: Cell::new(0),
            posted: RefCell::new(Vec::new()),
        }
    }
}

impl TokenEndpoint for Endpoint {
    async fn sign(&self, _der: &[u8], _data: &[u8]) -> Option<Vec<u8>> {
        self.signed.set(self.signed.get() + 1);
        Some(vec![1, 2, 3])
    }
    async fn post_form(&self, url: &str, form: String, _timeout_ms: u64) -> Posted {
        self.posted.borrow_mut().push((url.to_owned(), form));
        (self.answer)()
    }
}

fn granted() -> Posted {
    Posted::Answered {
        status: 200,
        body: br#"{"access_token":"ya29.granted","expires_in":3599}"#.to_vec(),
    }
}

fn token(e: &Endpoint, cache: &RefCell<TokenCache>, at: u64) -> Result<String, UpstreamReply<()>> {
    block_on(access_token(e, cache, &account(""), 5_000, || at))
}

#[test]
fn a_token_is_exchanged_once_and_reused_until_five_minutes_before_it_expires() {
    let (e, cache) = (Endpoint::answering(granted), RefCell::default());
    assert_eq!(
        token(&e, &cache, 1_000).ok().as_deref(),
        Some("ya29.granted")
    );
    assert_eq!(
        token(&e, &cache, 2_000).ok().as_deref(),
        Some("ya29.granted")
    );
    assert_eq!((e.signed.get(), e.posted.borrow().len()), (1, 1));
    let (url, form) = e.posted.borrow()[0].clone();
    assert_eq!(url, "https://oauth2.googleapis.com/token");
    assert!(
        form.ends_with(".AQID"),
        "the signature closes the assertion: {form}"
    );
    // Past the refresh point, a new exchange.
    assert!(token(&e, &cache, 1_000 + 3_599_000 - 300_000).is_ok());
    assert_eq!(e.posted.borrow().len(), 2);
}

#[test]
fn a_refused_exchange_is_the_keys_auth_failure_and_keeps_nothing() {
    let e = Endpoint::answering(|| Posted::Answered {
        status: 400,
        body: br#"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#.to_vec(),
    });
    let cache = RefCell::default();
    match token(&e, &cache, 0) {
        Err(UpstreamReply::Status {
            status: 401, text, ..
        }) => {
            assert!(
                text.contains("invalid_grant") && !text.contains("PRIVATE"),
                "{text}"
            );
        }
        other => panic!("{:?}", other.err().map(|_| ())),
    }
    assert!(cache.borrow().is_empty());
}

#[test]
fn an_endpoint_that_does_not_answer_is_the_calls_timeout_or_network_failure() {
    let cache = RefCell::default();
    let e = Endpoint::answering(|| Posted::TimedOut);
    assert!(matches!(token(&e, &cache, 0), Err(UpstreamReply::Timeout)));
    let e = Endpoint::answering(|| Posted::Failed("connection refused".into()));
    assert!(matches!(
        token(&e, &cache, 0),
        Err(UpstreamReply::Network(_))
    ));
}

#[test]
fn a_key_that_is_no_service_account_is_refused_before_anything_is_signed_or_sent() {
    let (e, cache) = (Endpoint::answering(granted), RefCell::default());
    let r: Result<String, UpstreamReply<()>> =
        block_on(access_token(&e, &cache, "AQ.api-key", 5_000, || 0));
    assert!(matches!(r, Err(UpstreamReply::Status { status: 401, .. })));
    assert_eq!((e.signed.get(), e.posted.borrow().len()), (0, 0));
}
