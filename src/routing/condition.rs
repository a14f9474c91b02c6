//! Which rule gives a request its chain. Conditions (validated by `config::condition`)
//! are evaluated against the request's facts; evaluation never fails: a clause that cannot apply
//! (a value the request does not have, no facts at all) is false. `$not` negates what its operand
//! evaluated to, so `{"$not": {"metadata.team": "x"}}` holds without the label while
//! `{"metadata.team": {"$ne": "x"}}` needs one.

use super::facts::RequestFacts;
use crate::config::condition::{Condition, Field, Scalar, Test};
use crate::config::{Rule, TenantConfig};

/// The rule a request naming `requested` takes: its rules in priority then name order, the first
/// whose `when` holds or that has none. `None`: the name resolves as if no rule existed.
pub fn matched_rule<'c>(
    cfg: &'c TenantConfig,
    requested: &str,
    facts: Option<&RequestFacts>,
) -> Option<&'c Rule> {
    cfg.rules
        .for_match(requested)
        .iter()
        .find(|r| r.when.as_ref().is_none_or(|w| holds(w.condition(), facts)))
}

/// A value of the request, borrowed from its facts.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fact<'f> {
    Str(&'f str),
    Bool(bool),
    Num(f64),
}

/// Whether `c` holds for this request.
pub fn holds(c: &Condition, facts: Option<&RequestFacts>) -> bool {
    match c {
        Condition::All(cs) => cs.iter().all(|c| holds(c, facts)),
        Condition::Any(cs) => cs.iter().any(|c| holds(c, facts)),
        Condition::Not(c) => !holds(c, facts),
        Condition::Test(field, test) => passes(fact(field, facts), test),
    }
}

fn fact<'f>(field: &Field, facts: Option<&'f RequestFacts>) -> Option<Fact<'f>> {
    let f = facts?;
    Some(match field {
        Field::Model => Fact::Str(&f.model),
        Field::Stream => Fact::Bool(f.stream),
        Field::Tools => Fact::Bool(f.tools),
        Field::HasImages => Fact::Bool(f.has_images),
        Field::Endpoint => Fact::Str(f.endpoint.as_str()),
        Field::Task => Fact::Str(f.task?.as_str()),
        Field::Agent => Fact::Str(f.agent?.as_str()),
        Field::MaxTokens => Fact::Num(f.max_tokens? as f64),
        Field::Metadata(k) => Fact::Str(f.metadata.get(k)?),
    })
}

/// `Some(equal)` when the two are of one kind; `None` when the comparison cannot apply.
fn same(v: Fact<'_>, s: &Scalar) -> Option<bool> {
    match (v, s) {
        (Fact::Str(a), Scalar::Str(b)) => Some(a == b),
        (Fact::Bool(a), Scalar::Bool(b)) => Some(a == *b),
        (Fact::Num(a), Scalar::Num(b)) => Some(a == *b),
        _ => None,
    }
}

fn passes(v: Option<Fact<'_>>, test: &Test) -> bool {
    let (v, test) = match (v, test) {
        (v, Test::Exists(want)) => return v.is_some() == *want,
        (None, _) => return false,
        (Some(v), test) => (v, test),
    };
    match test {
        Test::Eq(s) => same(v, s) == Some(true),
        Test::Ne(s) => same(v, s) == Some(false),
        Test::Gt(x) => matches!(v, Fact::Num(n) if n > *x),
        Test::Gte(x) => matches!(v, Fact::Num(n) if n >= *x),
        Test::Lt(x) => matches!(v, Fact::Num(n) if n < *x),
        Test::Lte(x) => matches!(v, Fact::Num(n) if n <= *x),
        Test::In(list) => list.iter().any(|s| same(v, s) == Some(true)),
        Test::Nin(list) => list.iter().all(|s| same(v, s) == Some(false)),
        Test::Regex(p) => matches!(v, Fact::Str(s) if p.is_match(s)),
        Test::Exists(_) => false,
    }
}

#[cfg(test)]
#[path = "condition_tests.rs"]
mod tests;
