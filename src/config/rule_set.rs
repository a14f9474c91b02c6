//! A tenant's routing rules as the request path reads them: per requested name
//! (`match`), its rules in the order they are tried (priority, then name), and what their
//! conditions read, so a tenant without any `when` pays nothing for facts.

use super::condition::Reads;
use super::rule::{Chain, Rule};
use super::RouteName;
use crate::config::SortedMap;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct RuleSet {
    by_match: SortedMap<String, Vec<Rule>>,
    reads: Reads,
}

impl RuleSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// A rule as written before rules had names (named after its match, priority 0, no `when`).
    pub fn insert(&mut self, matches: RouteName, chain: Chain) {
        self.add(Rule::unconditional(matches, chain));
    }

    /// Adds `rule`, replacing the rule of the same name wherever it was (names are unique).
    pub fn add(&mut self, rule: Rule) {
        self.remove(rule.name.as_str());
        let list = self.by_match.entry(rule.matches.to_string()).or_default();
        let at = list.partition_point(|r| r.order_key() < rule.order_key());
        list.insert(at, rule);
        self.reads = self.compute_reads();
    }

    /// Removes the rule called `name`; whether there was one.
    pub fn remove(&mut self, name: &str) -> bool {
        let mut found = false;
        for list in self.by_match.values_mut() {
            let before = list.len();
            list.retain(|r| r.name.as_str() != name);
            found |= list.len() != before;
        }
        self.by_match.retain(|_, l| !l.is_empty());
        if found {
            self.reads = self.compute_reads();
        }
        found
    }

    fn compute_reads(&self) -> Reads {
        self.iter()
            .filter_map(|r| r.when.as_ref())
            .fold(Reads::default(), |acc, w| acc.with(w.reads()))
    }

    /// The rules a request naming `requested` tries, in order (empty: no rule matches it).
    pub fn for_match(&self, requested: &str) -> &[Rule] {
        self.by_match
            .get(requested)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The rule called `name`.
    pub fn named(&self, name: &str) -> Option<&Rule> {
        self.iter().find(|r| r.name.as_str() == name)
    }

    /// The chain of the rule called `name`.
    pub fn get(&self, name: &str) -> Option<&Chain> {
        self.named(name).map(|r| &r.chain)
    }

    /// Every rule, by match, then in the order it is tried.
    pub fn iter(&self) -> impl Iterator<Item = &Rule> {
        self.by_match.values().flatten()
    }

    /// Every rule's chain.
    pub fn values(&self) -> impl Iterator<Item = &Chain> {
        self.iter().map(|r| &r.chain)
    }

    pub fn len(&self) -> usize {
        self.by_match.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.by_match.is_empty()
    }

    /// What the rules' conditions read of a request.
    pub fn reads(&self) -> Reads {
        self.reads
    }
}

impl FromIterator<Rule> for RuleSet {
    fn from_iter<I: IntoIterator<Item = Rule>>(rules: I) -> Self {
        let mut set = Self::new();
        rules.into_iter().for_each(|r| set.add(r));
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::admin_body::{parse_body, RuleBody};

    fn rule(json: &str) -> Rule {
        parse_body::<RuleBody>(json.as_bytes())
            .unwrap()
            .validate(5)
            .unwrap()
    }

    fn names(set: &RuleSet, m: &str) -> Vec<String> {
        set.for_match(m)
            .iter()
            .map(|r| r.name.to_string())
            .collect()
    }

    #[test]
    fn rules_sharing_a_match_are_tried_by_priority_then_by_name() {
        let set: RuleSet = [
            rule(r#"{"name":"b","match":"best","priority":1,"chain":["m"]}"#),
            rule(r#"{"name":"z","match":"best","chain":["m"]}"#),
            rule(r#"{"name":"a","match":"best","priority":1,"chain":["m"]}"#),
            rule(r#"{"name":"c","match":"best","priority":-3,"chain":["m"]}"#),
        ]
        .into_iter()
        .collect();
        assert_eq!(names(&set, "best"), ["c", "z", "a", "b"]);
        assert_eq!(set.len(), 4);
    }

    #[test]
    fn a_rule_written_again_under_its_name_replaces_the_old_one_even_across_matches() {
        let mut set = RuleSet::new();
        set.add(rule(r#"{"name":"r","match":"a","chain":["m"]}"#));
        set.add(rule(r#"{"name":"r","match":"b","chain":["n"]}"#));
        assert!(set.for_match("a").is_empty());
        assert_eq!(names(&set, "b"), ["r"]);
        assert!(set.remove("r") && !set.remove("r") && set.is_empty());
    }

    #[test]
    fn a_tenant_without_any_when_reads_no_facts() {
        let mut set = RuleSet::new();
        set.add(rule(r#"{"match":"a","chain":["m"]}"#));
        assert!(!set.reads().any);
        set.add(rule(
            r#"{"name":"t","match":"a","when":{"metadata.team":"x"},"chain":["m"]}"#,
        ));
        assert!(set.reads().any && set.reads().metadata && !set.reads().has_images);
        set.remove("t");
        assert!(!set.reads().any);
    }

    #[test]
    fn a_rule_reading_params_stream_is_known_so_the_response_cache_keys_stream() {
        let mut set = RuleSet::new();
        set.add(rule(
            r#"{"name":"t","match":"a","when":{"params.tools":true},"chain":["m"]}"#,
        ));
        assert!(!set.reads().stream);
        set.add(rule(
            r#"{"name":"s","match":"a","when":{"$not":{"params.stream":true}},"chain":["m"]}"#,
        ));
        assert!(set.reads().stream, "read under a $not too");
        set.remove("s");
        assert!(!set.reads().stream);
    }
}
