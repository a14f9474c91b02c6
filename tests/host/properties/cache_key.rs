//! Property tests of the response cache's key: "the key's canonical form is
//! host-tested, including property tests that key order and number spelling do not matter".

use cognigate::api::ChatRequest;
use cognigate::response_cache::key::{
    body_digest, canonical_number, key_with_body, response_key, KeyInput,
};
use proptest::prelude::*;

/// A JSON value whose numbers are exact decimals `mantissa × 10^exp`.
#[derive(Debug, Clone)]
enum J {
    Null,
    Bool(bool),
    Num(i64, i8),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

fn json() -> impl Strategy<Value = J> {
    let leaf = prop_oneof![
        Just(J::Null),
        any::<bool>().prop_map(J::Bool),
        (any::<i64>(), -20i8..20).prop_map(|(m, e)| J::Num(m, e)),
        "[a-zA-Z0-9 é\"\\\\]{0,8}".prop_map(J::Str),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(J::Arr),
            proptest::collection::btree_map("[a-z]{1,5}", inner, 0..5)
                .prop_map(|m| J::Obj(m.into_iter().collect())),
        ]
    })
}

/// One way to write `m × 10^e`, chosen by `style`.
fn spell(m: i64, e: i8, style: u8) -> String {
    let e = i32::from(e);
    match style % 4 {
        0 => format!("{m}e{e}"),
        1 => format!("{m}.000E{e:+}"),
        // Shift a zero into the mantissa: m0 × 10^(e-1).
        2 => format!("{}e{}", i128::from(m) * 10, e - 1),
        _ => {
            if (0..6).contains(&e) {
                format!("{}", i128::from(m) * 10i128.pow(e as u32))
            } else {
                format!("{m}e{e}")
            }
        }
    }
}

/// Writes `j` with object keys in an order and numbers in a spelling picked from `seed`.
fn write(j: &J, seed: &mut u64, out: &mut String) {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let pick = (*seed >> 33) as u8;
    match j {
        J::Null => out.push_str("null"),
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Num(m, e) => out.push_str(&spell(*m, *e, pick)),
        J::Str(s) => out.push_str(&serde_json::to_string(s).unwrap()),
        J::Arr(items) => {
            out.push_str(if pick.is_multiple_of(2) { "[" } else { "[ " });
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(v, seed, out);
            }
            out.push(']');
        }
        J::Obj(fields) => {
            let mut fields: Vec<&(String, J)> = fields.iter().collect();
            let n = fields.len().max(1);
            fields.rotate_left(pick as usize % n);
            if pick.is_multiple_of(3) {
                fields.reverse();
            }
            out.push('{');
            for (i, (k, v)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(if pick.is_multiple_of(2) { "," } else { ",\n " });
                }
                out.push_str(&serde_json::to_string(k).unwrap());
                out.push(':');
                write(v, seed, out);
            }
            out.push('}');
        }
    }
}

/// `m × 10^e` with the mantissa's trailing zeros moved into the exponent (0 is one value).
fn reduced(m: i64, e: i8) -> (i128, i32) {
    let (mut m, mut e) = (i128::from(m), i32::from(e));
    if m == 0 {
        return (0, 0);
    }
    while m % 10 == 0 {
        m /= 10;
        e += 1;
    }
    (m, e)
}

fn input(body: &str) -> KeyInput<'_> {
    KeyInput {
        tenant: "t",
        generation: 1,
        scope: None,
        surface: "chat_completions",
        requested: "m",
        stream: None,
        headers: &[],
        body: body.as_bytes(),
    }
}

fn key(body: &str) -> Option<String> {
    response_key(&input(body))
}

proptest! {
    #![proptest_config(super::config())]

    #[test]
    fn key_order_and_number_spelling_do_not_change_the_key(
        fields in proptest::collection::btree_map("[a-z_]{1,8}", json(), 0..6),
        a in any::<u64>(),
        b in any::<u64>(),
    ) {
        let body = J::Obj(fields.into_iter().collect());
        let (mut sa, mut sb) = (String::new(), String::new());
        write(&body, &mut a.clone(), &mut sa);
        write(&body, &mut b.clone(), &mut sb);
        let ka = key(&sa);
        prop_assert!(ka.is_some(), "{sa}");
        prop_assert_eq!(ka, key(&sb), "{} vs {}", sa, sb);
    }

    #[test]
    fn the_request_paths_key_from_the_parsed_request_is_the_key_of_the_body_as_sent(
        fields in proptest::collection::btree_map("[a-z_]{1,8}", json(), 0..6),
        seed in any::<u64>(),
    ) {
        let mut fields = fields;
        fields.insert("model".to_owned(), J::Str("m".to_owned()));
        let mut body = String::new();
        write(&J::Obj(fields.into_iter().collect()), &mut seed.clone(), &mut body);
        // Fields a parse refuses in these types are dropped from the property, not the body.
        if let Ok(parsed) = ChatRequest::parse(body.as_bytes()) {
            let digest = body_digest(parsed.fields()).expect("a parsed body has a digest");
            prop_assert_eq!(Some(key_with_body(&input(""), &digest)), key(&body), "{}", body);
        }
    }

    #[test]
    fn different_numbers_never_share_a_spelling(m1 in any::<i64>(), e1 in -20i8..20, m2 in any::<i64>(), e2 in -20i8..20, s in any::<u8>()) {
        let same = reduced(m1, e1) == reduced(m2, e2);
        let (a, b) = (canonical_number(&spell(m1, e1, s)), canonical_number(&spell(m2, e2, s / 3)));
        prop_assert_eq!(a == b, same, "{} {}", a, b);
    }

    #[test]
    fn any_change_to_a_value_changes_the_key(m in any::<i64>(), e in -5i8..5, text in "[a-z]{0,6}") {
        let one = format!(r#"{{"model":"m","temperature":{m}e{e},"messages":[{{"role":"user","content":"{text}"}}]}}"#);
        let other = format!(r#"{{"model":"m","temperature":{}e{e},"messages":[{{"role":"user","content":"{text}"}}]}}"#, i128::from(m) + 1);
        let longer = format!(r#"{{"model":"m","temperature":{m}e{e},"messages":[{{"role":"user","content":"{text}x"}}]}}"#);
        prop_assert_ne!(key(&one), key(&other));
        prop_assert_ne!(key(&one), key(&longer));
    }
}
