use super::*;

fn delivery(id: &str, at: u64) -> Delivery {
    Delivery {
        id: id.into(),
        kind: "breaker.opened".into(),
        body: r#"{"type":"breaker.opened"}"#.into(),
        created_at: at,
        attempts: 0,
        due_at: at,
        generation: Some(1),
    }
}

#[test]
fn the_signature_signs_the_timestamp_and_the_body_with_the_whole_secret() {
    // Python: hmac.new(b"whsec_test", b"1700000000." + body, hashlib.sha256).hexdigest()
    let body = br#"{"type":"breaker.opened"}"#;
    assert_eq!(
        signature(b"whsec_test", 1_700_000_000, body),
        "t=1700000000,v1=bff416a313c3f6668b5f1139803575047180dfbbb8a9bc0b1dc374785f58c896"
    );
}

#[test]
fn a_receiver_refuses_a_replay_outside_five_minutes_and_any_changed_timestamp_or_body() {
    let (secret, body, t) = (b"whsec_abc".as_slice(), b"{}".as_slice(), 1_700_000_000);
    let header = signature(secret, t, body);
    let check = |h: &str, b: &[u8], now: u64| verify(secret, h, b, now, SIGNATURE_TOLERANCE_S);
    assert!(check(&header, body, t));
    assert!(check(&header, body, t + 300), "inside the window");
    assert!(
        !check(&header, body, t + 301),
        "a replay after five minutes"
    );
    assert!(
        !check(&header, body, t - 301),
        "a timestamp from the future"
    );
    assert!(!check(&header, b"{ }", t), "another body");
    let moved = header.replacen("t=1700000000", "t=1700000100", 1);
    assert!(!check(&moved, body, t + 100), "a timestamp moved forward");
    assert!(
        !verify(b"whsec_other", &header, body, t, 300),
        "another secret"
    );
    assert!(!check("v1=00", body, t) && !check("", body, t));
}

#[test]
fn retries_back_off_and_stop_a_day_after_the_event() {
    assert_eq!(retry_at(0, 1, 0), Some(10_000));
    assert_eq!(retry_at(0, 2, 10_000), Some(40_000));
    assert_eq!(retry_at(0, 3, 40_000), Some(130_000));
    assert_eq!(
        retry_at(0, 12, 1_000_000),
        Some(1_000_000 + 7_200_000),
        "at most 2 h apart"
    );
    assert_eq!(retry_at(0, 12, 86_000_000), None, "never past a day");
    // The whole schedule from one event: every try inside the day, the gaps never shrinking.
    let (mut now, mut attempts, mut gaps) = (0u64, 1u32, vec![]);
    while let Some(next) = retry_at(0, attempts, now) {
        gaps.push(next - now);
        now = next;
        attempts += 1;
    }
    assert!(now <= GIVE_UP_AFTER_MS);
    assert!(gaps.windows(2).all(|w| w[0] <= w[1]));
    assert!(attempts > 10);
}

#[test]
fn a_delivered_post_leaves_the_outbox_and_a_failed_one_waits_for_its_retry() {
    let mut o = Outbox::default();
    o.push(delivery("a", 0));
    o.push(delivery("b", 0));
    let due = o.take_due(0);
    assert_eq!(due.len(), 2);
    let ok = o
        .record_attempt("a", Attempt::Delivered { status: 204 }, 100)
        .unwrap();
    assert!(ok.delivered);
    assert_eq!(ok.kind(), "alert.delivered");
    let failed = o
        .record_attempt(
            "b",
            Attempt::Failed {
                status: Some(302),
                error: "redirect".into(),
            },
            100,
        )
        .unwrap();
    assert_eq!(failed.kind(), "alert.failed");
    assert_eq!(failed.retry_at, Some(10_100));
    assert_eq!(o.next_alarm(), Some(10_100));
    assert!(o.take_due(10_000).is_empty(), "not before its retry");
    assert_eq!(o.take_due(10_100)[0].attempts, 2);
}

#[test]
fn a_delivery_still_failing_after_a_day_is_given_up() {
    let mut o = Outbox::default();
    o.push(delivery("a", 0));
    let mut now = 0;
    let mut last = None;
    while let Some(d) = o.take_due(now).pop() {
        last = o.record_attempt(
            &d.id,
            Attempt::Failed {
                status: Some(500),
                error: "500".into(),
            },
            now,
        );
        match o.next_alarm() {
            Some(next) => now = next,
            None => break,
        }
    }
    assert!(o.is_empty());
    let last = last.unwrap();
    assert_eq!(last.retry_at, None);
    assert!(now <= GIVE_UP_AFTER_MS);
}

#[test]
fn a_delivery_queued_for_a_deleted_tenant_never_reaches_the_tenant_created_again() {
    let mut o = Outbox::default();
    o.push(delivery("old", 0));
    let legacy = Delivery {
        generation: None,
        ..delivery("legacy", 0)
    };
    o.push(legacy.clone());
    let new = Delivery {
        generation: Some(2),
        ..delivery("new", 5)
    };
    assert!(new.of_generation(2) && legacy.of_generation(2));
    assert!(!delivery("old", 0).of_generation(2));
    o.push(new);
    assert_eq!(o.drop_older_generations(2), 1);
    assert_eq!(o.ids(), ["legacy", "new"]);
    assert_eq!(o.drop_older_generations(2), 0);
}

#[test]
fn a_full_outbox_drops_its_oldest_delivery() {
    let mut o = Outbox::default();
    for i in 0..MAX_PENDING {
        assert!(o.push(delivery(&i.to_string(), 0)).is_none());
    }
    assert_eq!(
        o.push(delivery("new", 0)).map(|d| d.id),
        Some("0".to_owned())
    );
    assert_eq!(o.take_due(0).len(), BATCH);
}

#[test]
fn a_delivery_taken_is_not_due_again_until_settled_and_news_queued_meanwhile_is_kept() {
    let mut o = Outbox::default();
    o.push(delivery("a", 0));
    assert_eq!(o.take_due(0).len(), 1);
    assert!(o.take_due(1_000).is_empty(), "in flight");
    assert_eq!(o.next_alarm(), Some(IN_FLIGHT_MS));
    let known = o.ids();
    let mut stored = o.clone();
    stored.push(delivery("b", 5));
    o.record_attempt("a", Attempt::Delivered { status: 200 }, 2_000);
    let merged = o.merged_with(stored, &known);
    assert_eq!(merged.ids(), vec!["b".to_owned()]);
}

#[test]
fn a_queued_event_carries_its_type_and_is_due_at_once_under_a_random_id() {
    let d = Delivery::queued(
        "breaker.opened".into(),
        r#"{"model":"m1"}"#,
        Some([0xab; 12]),
        1_000,
        Some(3),
    );
    assert_eq!(d.id, format!("evt_{}", "ab".repeat(12)));
    let body: serde_json::Value = serde_json::from_str(&d.body).unwrap();
    assert_eq!(
        body,
        serde_json::json!({"model": "m1", "type": "breaker.opened"})
    );
    assert_eq!((d.created_at, d.due_at, d.attempts), (1_000, 1_000, 0));
    assert_eq!(d.generation, Some(3));
}

#[test]
fn without_random_bytes_the_id_is_the_time_and_an_unreadable_record_is_posted_as_null() {
    let d = Delivery::queued("alert.failed".into(), "not json", None, 42, None);
    assert_eq!(d.id, "evt_42");
    assert_eq!(d.body, "null");
}

#[test]
fn only_a_2xx_delivers_and_a_redirect_fails_with_its_status() {
    assert_eq!(Attempt::answered(204), Attempt::Delivered { status: 204 });
    for status in [302, 404, 500] {
        assert_eq!(
            Attempt::answered(status),
            Attempt::Failed {
                status: Some(status),
                error: format!("the webhook answered {status}"),
            }
        );
    }
}

#[test]
fn no_answer_fails_without_a_status_naming_the_timeout_or_the_error() {
    let timed_out = Attempt::unanswered(None, 10_000);
    assert_eq!(
        timed_out,
        Attempt::Failed {
            status: None,
            error: "no answer within 10000 ms".into(),
        }
    );
    let refused = Attempt::unanswered(Some("connection refused".into()), 10_000);
    assert!(
        matches!(refused, Attempt::Failed { status: None, error } if error == "connection refused")
    );
}
