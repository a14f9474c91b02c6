//! `budget.exceeded` (issue 25): a budget refusal becomes an event (and a webhook alert) once per
//! scope (the tenant, a key, an end user) and window, not once per refused request: a caller
//! retrying against a spent budget would otherwise write an event per request. Each isolate
//! remembers what it reported; several isolates may each report the same window once.

use super::refusals::Refusal;
use crate::config::SortedMap;

/// Scopes remembered at most per isolate; past it nothing more is reported until some expire.
const MAX_SCOPES: usize = 1_000;
/// A refusal without a known end (no `Retry-After`) is reported again after this long.
const DEFAULT_WINDOW_MS: u64 = 3_600_000;

/// What the event says: whose budget, as `reason`, and the scope it is counted under.
pub fn describe(
    refusal: Refusal,
    key_id: &str,
    end_user: Option<&str>,
) -> Option<(String, String)> {
    match refusal {
        Refusal::TenantBudget => Some(("tenant".into(), "the tenant's budget is spent".into())),
        Refusal::KeyBudget => Some((
            format!("key:{key_id}"),
            format!("the budget of API key {key_id} is spent"),
        )),
        Refusal::EndUserBudget => {
            let who = end_user.unwrap_or("");
            Some((
                format!("end_user:{who}"),
                format!("the budget of end user '{who}' is spent"),
            ))
        }
        _ => None,
    }
}

#[derive(Debug, Default)]
pub struct Reported {
    until: SortedMap<String, u64>,
}

impl Reported {
    /// Whether this refusal is the first of its scope's window (and so is reported).
    pub fn first(&mut self, scope: &str, now: u64, retry_after_secs: Option<u64>) -> bool {
        self.until.retain(|_, until| *until > now);
        if self.until.contains_key(scope) || self.until.len() >= MAX_SCOPES {
            return false;
        }
        let window =
            retry_after_secs.map_or(DEFAULT_WINDOW_MS, |s| s.saturating_mul(1000).max(1000));
        self.until
            .insert(scope.to_owned(), now.saturating_add(window));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spent_budget_is_reported_once_per_scope_and_window_not_per_request() {
        let mut r = Reported::default();
        assert!(r.first("acme/tenant", 0, Some(60)));
        assert!(
            !r.first("acme/tenant", 1_000, Some(60)),
            "a retry is not another event"
        );
        assert!(
            r.first("acme/key:ck_1", 1_000, Some(60)),
            "another scope is"
        );
        assert!(
            r.first("acme/tenant", 60_000, Some(60)),
            "the next window is"
        );
        assert!(r.first("x", 0, None));
        assert!(!r.first("x", DEFAULT_WINDOW_MS - 1, None));
    }

    #[test]
    fn only_budget_refusals_are_budget_events() {
        assert_eq!(describe(Refusal::KeyRpm, "ck_1", None), None);
        let (scope, reason) = describe(Refusal::KeyBudget, "ck_1", None).unwrap();
        assert_eq!(scope, "key:ck_1");
        assert!(reason.contains("ck_1"));
        assert_eq!(
            describe(Refusal::EndUserBudget, "k", Some("u1")).unwrap().0,
            "end_user:u1"
        );
    }
}
