//! What a caller key may do (its policy) and what a tenant allows in total and per end user.
//! Every value is validated where it enters (the admin body) and trusted after.

use super::period::Period;
use crate::config::settings::EndUserSettings;
use crate::config::{ConfigError, RouteName};
use serde::{Deserialize, Deserializer, Serialize};

/// Most names one key's `models` may list.
const MAX_ALLOWED_MODELS: usize = 256;
const MAX_RPM: u32 = 1_000_000;
const MAX_TPM: u64 = 1_000_000_000_000;
const MAX_BUDGET_USD: f64 = 1_000_000_000.0;

/// `{"usd": 25.0, "period": "day"}`: once spend in the period reaches `usd`, requests are refused.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    pub usd: f64,
    pub period: Period,
}

impl Budget {
    fn validate(self, field: &str) -> Result<Self, ConfigError> {
        if self.usd.is_finite() && (0.0..=MAX_BUDGET_USD).contains(&self.usd) {
            Ok(self)
        } else {
            Err(ConfigError::invalid(
                &format!("{field}.usd"),
                format!("must be a number from 0 to {MAX_BUDGET_USD}"),
            ))
        }
    }

    /// Spend has reached the budget (a budget of 0 refuses everything).
    pub fn reached(&self, spent: f64) -> bool {
        spent >= self.usd
    }
}

fn positive<T: PartialOrd + From<u8> + std::fmt::Display + Copy>(
    field: &str,
    v: Option<T>,
    max: T,
) -> Result<Option<T>, ConfigError> {
    match v {
        Some(v) if v < T::from(1) || v > max => {
            Err(ConfigError::invalid(field, format!("must be 1 to {max}")))
        }
        _ => Ok(v),
    }
}

/// A caller key's policy. Every field is optional; a key without any is unrestricted.
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KeyPolicy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The names (model id, alias or rule name, as a caller sends them) this key may request;
    /// sorted and without duplicates. `None`: any name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<RouteName>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rpm: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpm: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
}

impl KeyPolicy {
    /// The requested name, as sent, is one this key may use.
    pub fn allows(&self, requested: &str) -> bool {
        self.models.as_ref().is_none_or(|names| {
            names
                .binary_search_by(|n| n.as_str().cmp(requested))
                .is_ok()
        })
    }

    /// The key has a limit that needs counters (the allow-list needs none).
    pub fn is_limited(&self) -> bool {
        self.rpm.is_some() || self.tpm.is_some() || self.budget.is_some()
    }
}

/// One field of a PATCH: absent leaves it, `null` clears it, a value sets it.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Change<T> {
    #[default]
    Keep,
    Clear,
    Set(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Change<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Option::<T>::deserialize(d)? {
            None => Self::Clear,
            Some(v) => Self::Set(v),
        })
    }
}

/// In a schema a change is what it reads: the value, or `null` to clear it.
#[cfg(not(target_arch = "wasm32"))]
impl<T: schemars::JsonSchema> schemars::JsonSchema for Change<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        <Option<T>>::schema_name()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <Option<T>>::json_schema(generator)
    }
}

impl<T> Change<T> {
    fn apply(self, slot: &mut Option<T>) {
        match self {
            Self::Keep => {}
            Self::Clear => *slot = None,
            Self::Set(v) => *slot = Some(v),
        }
    }
}

/// The body of `POST .../api-keys` (applied to an empty policy) and of `PATCH .../api-keys/{id}`
/// (applied to the stored one).
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyPolicyChange {
    #[serde(default)]
    pub name: Change<String>,
    #[serde(default)]
    pub models: Change<Vec<RouteName>>,
    #[serde(default)]
    pub rpm: Change<u32>,
    #[serde(default)]
    pub tpm: Change<u64>,
    #[serde(default)]
    pub budget: Change<Budget>,
}

impl KeyPolicyChange {
    /// The policy after this change, validated as a whole.
    pub fn apply_to(self, mut policy: KeyPolicy) -> Result<KeyPolicy, ConfigError> {
        self.name.apply(&mut policy.name);
        self.models.apply(&mut policy.models);
        self.rpm.apply(&mut policy.rpm);
        self.tpm.apply(&mut policy.tpm);
        self.budget.apply(&mut policy.budget);
        validate_key_policy(policy)
    }
}

fn validate_key_policy(mut p: KeyPolicy) -> Result<KeyPolicy, ConfigError> {
    if let Some(name) = &p.name {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > 200 || name.chars().any(char::is_control) {
            return Err(ConfigError::invalid(
                "name",
                "must be 1 to 200 printable characters",
            ));
        }
        p.name = Some(name.to_owned());
    }
    if let Some(models) = &mut p.models {
        super::sort::sort(models);
        models.dedup();
        if models.is_empty() || models.len() > MAX_ALLOWED_MODELS {
            return Err(ConfigError::invalid(
                "models",
                format!("must list 1 to {MAX_ALLOWED_MODELS} names (null allows every name)"),
            ));
        }
    }
    p.rpm = positive("rpm", p.rpm, MAX_RPM)?;
    p.tpm = positive("tpm", p.tpm, MAX_TPM)?;
    p.budget = p.budget.map(|b| b.validate("budget")).transpose()?;
    Ok(p)
}

/// The counted part of a tenant's `end_user` setting (`EndUserSettings::limits`): the limits
/// that apply to each end user separately and need the ledger's counters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndUserLimits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rpm: Option<u32>,
}

/// Checks the tenant's `budget` and `end_user` settings: `end_user` must say something
/// (`EndUserSettings::validate`, checked first), then every value must be in range.
pub fn validate_tenant_limits(
    budget: Option<Budget>,
    end_user: Option<EndUserSettings>,
) -> Result<(), ConfigError> {
    end_user.map(|e| e.validate()).transpose()?;
    budget.map(|b| b.validate("budget")).transpose()?;
    if let Some(e) = end_user {
        e.budget
            .map(|b| b.validate("end_user.budget"))
            .transpose()?;
        positive("end_user.rpm", e.rpm, MAX_RPM)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::admin_body::parse_body;

    fn change(body: &str) -> Result<KeyPolicyChange, ConfigError> {
        parse_body(body.as_bytes())
    }

    fn created(body: &str) -> Result<KeyPolicy, ConfigError> {
        change(body)?.apply_to(KeyPolicy::default())
    }

    fn err(r: Result<KeyPolicy, ConfigError>) -> String {
        r.err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn the_issue_example_policy_is_accepted_with_its_models_sorted() {
        let p = created(
            r#"{"name":"ci-bot","models":["gpt-4o","fast","fast"],"rpm":60,"tpm":200000,"budget":{"usd":25.0,"period":"day"}}"#,
        )
        .unwrap();
        let names: Vec<&str> = p.models.iter().flatten().map(|m| m.as_str()).collect();
        assert_eq!(names, ["fast", "gpt-4o"]);
        assert_eq!((p.rpm, p.tpm), (Some(60), Some(200_000)));
        assert_eq!(p.budget.map(|b| b.period), Some(Period::Day));
        assert!(p.is_limited());
    }

    #[test]
    fn only_a_listed_name_is_allowed_exactly_as_sent() {
        let p = created(r#"{"models":["fast","gpt-4o"]}"#).unwrap();
        assert!(p.allows("fast") && p.allows("gpt-4o"));
        assert!(!p.allows("best") && !p.allows("FAST") && !p.allows("gpt-4o "));
        assert!(!p.is_limited(), "an allow-list needs no counters");
        assert!(KeyPolicy::default().allows("anything"));
    }

    #[test]
    fn an_empty_model_list_and_non_positive_limits_are_refused_with_the_field_named() {
        assert_eq!(
            err(created(r#"{"models":[]}"#)),
            "models: must list 1 to 256 names (null allows every name)"
        );
        assert_eq!(err(created(r#"{"rpm":0}"#)), "rpm: must be 1 to 1000000");
        assert!(err(created(r#"{"tpm":-5}"#)).starts_with("tpm: invalid value"));
        assert_eq!(
            err(created(r#"{"budget":{"usd":-1,"period":"day"}}"#)),
            "budget.usd: must be a number from 0 to 1000000000"
        );
        assert!(err(created(r#"{"budget":{"usd":1,"period":"week"}}"#))
            .starts_with("budget.period: unknown variant `week`"));
        assert!(err(created(r#"{"models":["has space"]}"#)).starts_with("models[0]:"));
        assert!(err(created(r#"{"colour":"red"}"#)).contains("unknown field `colour`"));
    }

    #[test]
    fn a_patch_keeps_absent_fields_clears_null_ones_and_sets_the_rest() {
        let before = created(
            r#"{"name":"bot","models":["fast"],"rpm":5,"budget":{"usd":1,"period":"month"}}"#,
        )
        .unwrap();
        let after = change(r#"{"models":null,"rpm":7}"#)
            .unwrap()
            .apply_to(before.clone())
            .unwrap();
        assert_eq!(after.name.as_deref(), Some("bot"));
        assert_eq!(after.models, None);
        assert_eq!(after.rpm, Some(7));
        assert_eq!(after.budget, before.budget);
    }

    #[test]
    fn tenant_end_user_limits_need_a_budget_or_an_rpm() {
        let e = |b: Option<Budget>, rpm| {
            validate_tenant_limits(
                None,
                Some(EndUserSettings {
                    budget: b,
                    rpm,
                    required: false,
                }),
            )
        };
        assert!(e(None, None).is_err());
        assert!(e(None, Some(3)).is_ok());
        assert_eq!(
            e(None, Some(0)).err().map(|e| e.to_string()).as_deref(),
            Some("end_user.rpm: must be 1 to 1000000")
        );
        let nan = Budget {
            usd: f64::NAN,
            period: Period::Day,
        };
        assert!(validate_tenant_limits(Some(nan), None).is_err());
    }
}
