//! Validated names. Each is checked once where it enters (admin path or body) and trusted after.

use std::borrow::Borrow;
use std::fmt;

/// Why a name was refused; the message names the rule it broke.
#[derive(Debug, Clone, PartialEq, Eq, displaydoc::Display)]
pub enum NameError {
    /// {what} must be 1 to {max} characters long
    Length { what: &'static str, max: usize },
    /// {what} must start with a letter or digit
    Start { what: &'static str },
    /// {what} may only contain {allowed}
    Charset {
        what: &'static str,
        allowed: &'static str,
    },
}

impl std::error::Error for NameError {}

struct Rule {
    what: &'static str,
    max: usize,
    lowercase_only: bool,
    extra: &'static str,
    allowed: &'static str,
}

fn check(rule: &Rule, s: &str) -> Result<(), NameError> {
    if s.is_empty() || s.len() > rule.max {
        return Err(NameError::Length {
            what: rule.what,
            max: rule.max,
        });
    }
    let alnum = |c: char| {
        c.is_ascii_digit()
            || c.is_ascii_lowercase()
            || (!rule.lowercase_only && c.is_ascii_uppercase())
    };
    if !s.chars().next().is_some_and(alnum) {
        return Err(NameError::Start { what: rule.what });
    }
    if !s.chars().all(|c| alnum(c) || rule.extra.contains(c)) {
        return Err(NameError::Charset {
            what: rule.what,
            allowed: rule.allowed,
        });
    }
    Ok(())
}

/// The rule as a JSON Schema `pattern` for the OpenAPI document: the same length, first
/// character and charset as `check` (a host test holds the two together; the schemathesis run
/// sends names drawn from the pattern).
fn pattern(rule: &Rule) -> String {
    let alnum = if rule.lowercase_only {
        "a-z0-9"
    } else {
        "A-Za-z0-9"
    };
    // '-' goes last in the class, where it is a literal.
    let extra: String = rule.extra.chars().filter(|&c| c != '-').collect();
    let dash = if rule.extra.contains('-') { "-" } else { "" };
    format!("^[{alnum}][{alnum}{extra}{dash}]{{0,{}}}$", rule.max - 1)
}

macro_rules! validated_name {
    ($(#[$doc:meta])* $name:ident, $rule:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            pub fn parse(s: &str) -> Result<Self, NameError> {
                check(&$rule, s).map(|()| Self(s.to_owned()))
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = NameError;
            fn try_from(s: String) -> Result<Self, NameError> {
                check(&$rule, &s).map(|()| Self(s))
            }
        }

        impl From<$name> for String {
            fn from(n: $name) -> String {
                n.0
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        /// Tests name fixtures with literals; a literal that breaks the rule fails the test.
        #[cfg(test)]
        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self::parse(s).expect("a valid name in a test")
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl $name {
            /// The rule as a regular expression (see `pattern`).
            pub fn pattern() -> String {
                pattern(&$rule)
            }
        }

        #[cfg(not(target_arch = "wasm32"))]
        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn inline_schema() -> bool {
                true
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({"type": "string", "pattern": Self::pattern()})
            }
        }
    };
}

const SLUG: &str = "lowercase letters, digits and '-'";
const MODEL_CHARS: &str = "letters, digits and . _ - : / @ +";

validated_name!(
    /// `[a-z0-9][a-z0-9-]{0,62}`: used in URLs and Durable Object names.
    TenantId,
    Rule { what: "tenant id", max: 63, lowercase_only: true, extra: "-", allowed: SLUG }
);
validated_name!(
    /// A tenant-scoped provider name such as `openai` or `together`.
    ProviderName,
    Rule { what: "provider name", max: 63, lowercase_only: true, extra: "-_", allowed: "lowercase letters, digits, '-' and '_'" }
);
validated_name!(
    /// A catalog model id; may contain `/` (`meta-llama/Llama-3.3-70B`).
    ModelId,
    Rule { what: "model id", max: 128, lowercase_only: false, extra: "._-:/@+", allowed: MODEL_CHARS }
);
validated_name!(
    /// An alias name such as `fast`.
    AliasName,
    Rule { what: "alias name", max: 128, lowercase_only: false, extra: "._-:/@+", allowed: MODEL_CHARS }
);
validated_name!(
    /// What a caller may put in `model`, and so what a routing rule matches and a chain lists.
    RouteName,
    Rule { what: "model name", max: 128, lowercase_only: false, extra: "._-:/@+", allowed: MODEL_CHARS }
);
validated_name!(
    /// A capability a model advertises (`chat`, `tools`, `vision`).
    Capability,
    Rule { what: "capability", max: 32, lowercase_only: true, extra: "-_", allowed: "lowercase letters, digits, '-' and '_'" }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenant_id_matches_the_documented_pattern() {
        assert!(TenantId::parse("acme").is_ok());
        assert!(TenantId::parse("a-1").is_ok());
        assert!(TenantId::parse(&"a".repeat(63)).is_ok());
        assert!(TenantId::parse(&"a".repeat(64)).is_err());
        assert!(TenantId::parse("-acme").is_err());
        assert!(TenantId::parse("Acme").is_err());
        assert!(TenantId::parse("ac_me").is_err());
        assert!(TenantId::parse("").is_err());
    }

    #[test]
    fn model_ids_may_contain_slashes() {
        assert!(ModelId::parse("meta-llama/Llama-3.3-70B").is_ok());
        assert!(ModelId::parse("gpt-4o-2024-08-06").is_ok());
        assert!(ModelId::parse("/leading").is_err());
        assert!(ModelId::parse("has space").is_err());
    }

    #[test]
    fn the_documented_patterns_state_each_rule() {
        assert_eq!(TenantId::pattern(), "^[a-z0-9][a-z0-9-]{0,62}$");
        assert_eq!(ProviderName::pattern(), "^[a-z0-9][a-z0-9_-]{0,62}$");
        assert_eq!(ModelId::pattern(), "^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$");
        assert_eq!(RouteName::pattern(), ModelId::pattern());
    }

    #[test]
    fn every_name_drawn_from_a_pattern_parses() {
        use proptest::prelude::*;
        use proptest::test_runner::TestRunner;
        type Parses = fn(&str) -> bool;
        let cases: [(String, Parses); 6] = [
            (TenantId::pattern(), |s| TenantId::parse(s).is_ok()),
            (ProviderName::pattern(), |s| ProviderName::parse(s).is_ok()),
            (ModelId::pattern(), |s| ModelId::parse(s).is_ok()),
            (AliasName::pattern(), |s| AliasName::parse(s).is_ok()),
            (RouteName::pattern(), |s| RouteName::parse(s).is_ok()),
            (Capability::pattern(), |s| Capability::parse(s).is_ok()),
        ];
        for (pattern, parses) in cases {
            // The generator takes the pattern without its anchors.
            let body = &pattern[1..pattern.len() - 1];
            let strategy = proptest::string::string_regex(body).unwrap();
            TestRunner::default()
                .run(&strategy, |s| {
                    prop_assert!(parses(&s), "{s:?} from {pattern}");
                    Ok(())
                })
                .unwrap();
        }
    }

    #[test]
    fn refusal_names_the_rule() {
        let err = TenantId::parse("Bad").err().map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("tenant id must start with a letter or digit")
        );
    }
}
