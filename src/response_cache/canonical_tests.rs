use super::*;

fn token(text: &str) -> Token {
    value_token(text).unwrap_or_else(|| panic!("not JSON? {text}"))
}

#[test]
fn one_value_under_the_rules_is_one_token_whatever_its_spelling() {
    for (a, b) in [
        (
            r#"{"b":1,"a":[1.0,"\u0041"]}"#,
            " { \"a\" : [ 1 , \"A\" ] ,\n\"b\" : 10e-1 } ",
        ),
        (
            r#"{"x":{"z":null,"y":true}}"#,
            r#"{"x":{"y":true,"z":null}}"#,
        ),
        (r#"{"\u00e9":1}"#, r#"{"é":1}"#),
        ("-0", "0.000"),
        ("[]", "[ ]"),
        ("{}", "{ }"),
    ] {
        assert_eq!(token(a), token(b), "{a} vs {b}");
    }
}

#[test]
fn different_values_never_share_a_token() {
    let long = "x".repeat(200);
    let longer = format!("\"{long}y\"");
    let long = format!("\"{long}\"");
    let distinct = [
        "null",
        "true",
        "false",
        "0",
        "1",
        r#""1""#,
        r#""null""#,
        "[]",
        "{}",
        "[[]]",
        "[null]",
        "[1,2]",
        "[2,1]",
        "[[1],2]",
        "[1,[2]]",
        r#"{"a":[]}"#,
        r#"{"a":{}}"#,
        r#"{"a":1,"b":2}"#,
        r#"{"a":2,"b":1}"#,
        r#"{"ab":1}"#,
        r#"{"a":"b1"}"#,
        r#"{"a":1,"a":2}"#,
        r#"{"a":2,"a":1}"#,
        &long,
        &longer,
    ];
    for (i, a) in distinct.iter().enumerate() {
        for b in &distinct[i + 1..] {
            assert_ne!(token(a), token(b), "{a} vs {b}");
        }
    }
    assert_eq!(
        token(&long),
        token(&long.clone()),
        "a long string is one digest"
    );
}

#[test]
fn text_that_is_not_json_has_no_token() {
    for bad in [
        "",
        " ",
        "{",
        "}",
        "[1,]",
        "[,1]",
        "[1 2]",
        r#"{"a":}"#,
        r#"{"a" 1}"#,
        r#"{"a":1,}"#,
        r#"{1:2}"#,
        "[1]]",
        "{}x",
        "01",
        "1.",
        ".5",
        "-",
        "1e",
        "+1",
        "tru",
        "nul",
        r#""abc"#,
        r#""\x""#,
        r#"["a"}"#,
        r#"{"a":1]"#,
        "[\"\\",
        "NaN",
    ] {
        assert_eq!(value_token(bad), None, "{bad:?}");
    }
}

#[test]
fn a_value_200_000_levels_deep_is_walked_without_recursion_in_one_pass() {
    // Recursion would overflow the test's stack; re-reading each level's text would take hours.
    let n = 200_000;
    let deep = format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert!(value_token(&deep).is_some());
    let objects = format!("{}1{}", r#"{"a":"#.repeat(n), "}".repeat(n));
    assert!(value_token(&objects).is_some());
    assert_ne!(value_token(&deep), value_token(&deep[1..deep.len() - 1]));
}
