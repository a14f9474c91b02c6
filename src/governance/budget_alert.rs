//! `budget.exceeded`: a budget refusal becomes an event (and a webhook alert) once per
//! scope (the tenant, a key, an end user) and window, not once per refused request: a caller
//! retrying against a spent budget would otherwise write an event per request. Each isolate
//! remembers what it reported; several isolates may each report the same window once.
//!
//! What an isolate remembers is bounded in all and shared fairly between its tenants
//! (`config::tenant_table`): a tenant whose scopes fill the table stops having its new scopes
//! reported (until some expire), while another tenant's scope is still reported and remembered,
//! room made for it from the tenant holding the most. So one tenant's flood of scopes can neither
//! silence another tenant's alert nor make it repeat.

use super::refusals::Denial;
use crate::config::tenant_table::TenantTable;

/// Scopes remembered at most per isolate, of every tenant.
const MAX_SCOPES: usize = 1_000;
/// A refusal without a known end (no `Retry-After`) is reported again after this long.
const DEFAULT_WINDOW_MS: u64 = 3_600_000;

/// What the event says: whose budget, as `reason`, and the scope it is counted under.
pub fn describe(refusal: Denial, key_id: &str, end_user: Option<&str>) -> Option<(String, String)> {
    match refusal {
        Denial::TenantBudget => Some(("tenant".into(), "the tenant's budget is spent".into())),
        Denial::KeyBudget => Some((
            format!("key:{key_id}"),
            format!("the budget of API key {key_id} is spent"),
        )),
        Denial::EndUserBudget => {
            let who = end_user.unwrap_or("");
            Some((
                format!("end_user:{who}"),
                format!("the budget of end user '{who}' is spent"),
            ))
        }
        _ => None,
    }
}

/// Each reported scope of each tenant, and when its window ends.
#[derive(Debug)]
pub struct Reported {
    until: TenantTable<String, u64>,
}

impl Default for Reported {
    fn default() -> Self {
        Self {
            until: TenantTable::new(MAX_SCOPES),
        }
    }
}

impl Reported {
    /// Whether this refusal of `tenant` is the first of its scope's window (and so is reported).
    pub fn first(
        &mut self,
        tenant: &str,
        scope: &str,
        now: u64,
        retry_after_secs: Option<u64>,
    ) -> bool {
        self.until.retain(|until| *until > now);
        if self.until.get(tenant, scope).is_some() || self.until.full_for(tenant) {
            return false;
        }
        let window =
            retry_after_secs.map_or(DEFAULT_WINDOW_MS, |s| s.saturating_mul(1000).max(1000));
        self.until
            .put(tenant, scope.to_owned(), now.saturating_add(window));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spent_budget_is_reported_once_per_scope_and_window_not_per_request() {
        let mut r = Reported::default();
        assert!(r.first("acme", "tenant", 0, Some(60)));
        assert!(
            !r.first("acme", "tenant", 1_000, Some(60)),
            "a retry is not another event"
        );
        assert!(
            r.first("acme", "key:ck_1", 1_000, Some(60)),
            "another scope is"
        );
        assert!(
            r.first("other", "tenant", 1_000, Some(60)),
            "so is another tenant's"
        );
        assert!(
            r.first("acme", "tenant", 60_000, Some(60)),
            "the next window is"
        );
        assert!(r.first("x", "tenant", 0, None));
        assert!(!r.first("x", "tenant", DEFAULT_WINDOW_MS - 1, None));
    }

    #[test]
    fn one_tenant_flooding_scopes_can_neither_silence_nor_repeat_another_tenants_alert() {
        let mut r = Reported::default();
        let flood = |r: &mut Reported, from: usize, to: usize| {
            (from..to)
                .filter(|i| r.first("flood", &format!("end_user:u{i}"), 10, None))
                .count()
        };
        assert_eq!(flood(&mut r, 0, MAX_SCOPES), MAX_SCOPES);
        assert!(
            r.first("victim", "tenant", 20, None),
            "the full table does not silence another tenant"
        );
        assert_eq!(
            flood(&mut r, MAX_SCOPES, 3 * MAX_SCOPES),
            0,
            "the flooder's new scopes wait for its own to expire"
        );
        assert!(
            !r.first("victim", "tenant", 30, None),
            "the victim's alert is not repeated"
        );
        // Nor is the flooder's scope that made room reported again: its tenant's share is full.
        assert_eq!(flood(&mut r, 0, MAX_SCOPES), 0);
        assert!(!r.first("victim", "tenant", 40, None));
        // Once the windows end, both are reported again.
        let later = 20 + DEFAULT_WINDOW_MS;
        assert!(r.first("victim", "tenant", later, None));
        assert!(r.first("flood", "end_user:u7", later, None));
    }

    #[test]
    fn only_budget_refusals_are_budget_events() {
        assert_eq!(describe(Denial::KeyRpm, "ck_1", None), None);
        let (scope, reason) = describe(Denial::KeyBudget, "ck_1", None).unwrap();
        assert_eq!(scope, "key:ck_1");
        assert!(reason.contains("ck_1"));
        assert_eq!(
            describe(Denial::EndUserBudget, "k", Some("u1")).unwrap().0,
            "end_user:u1"
        );
    }
}
