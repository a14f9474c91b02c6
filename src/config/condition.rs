//! A routing rule's `when`: a condition over what the request is, validated
//! when written and again when read back, so the request path only ever evaluates a valid one
//! (`routing::condition`).
//!
//! The language: an object of clauses, all of which must hold (several keys mean all of them).
//! A key is a field (`params.model`, `params.stream`, `params.tools`, `params.max_tokens`,
//! `params.has_images`, `params.endpoint`, `params.task`, `params.agent`, `metadata.<key>`;
//! `condition_field`) whose value is a bare value (`$eq`)
//! or an object of operators (`$eq $ne $gt $gte $lt $lte $in $nin $regex $exists`, all of which
//! must hold), or a combinator (`$and`/`$or`: a non-empty array of conditions; `$not`: one
//! condition). Every refusal names the JSON path of the problem under `when`
//! (`when.$and[0].params.max_tokens`).

use super::condition_field::Kind;
pub use super::condition_field::{Field, AGENTS, ENDPOINTS, KEYS, TASKS};
use super::condition_pattern::{pattern, Pattern};
use super::ConfigError;
use serde_json::{Map, Value};

/// Nesting depth: the `when` object is level 1, each `$and`/`$or` element or `$not` operand one
/// more. Four levels state any rule worth writing and keep evaluation shallow.
pub const MAX_DEPTH: usize = 4;
/// Comparisons per rule (each field operator counts once; `{"$gt": 1, "$lt": 9}` is two).
pub const MAX_CLAUSES: usize = 32;
/// The longest `$regex` pattern, in characters.
pub const MAX_REGEX_CHARS: usize = 256;
/// What a compiled pattern may take (`regex_lite`'s approximate size limit, bytes): a 256-char
/// pattern of nested repetitions stays far below it, `a{1000}{1000}` does not.
pub const REGEX_SIZE_LIMIT: usize = 64 * 1024;
/// Values an `$in`/`$nin` list may hold (its clause is one comparison per value).
pub const MAX_LIST_VALUES: usize = 64;
/// The longest `metadata.<key>` key, in bytes.
pub const MAX_METADATA_KEY: usize = 64;

/// A value a field is compared with (its kind checked against the field's when written).
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Str(String),
    Bool(bool),
    Num(f64),
}

/// One operator applied to a field.
#[derive(Debug, Clone, PartialEq)]
pub enum Test {
    Eq(Scalar),
    Ne(Scalar),
    Gt(f64),
    Gte(f64),
    Lt(f64),
    Lte(f64),
    In(Vec<Scalar>),
    Nin(Vec<Scalar>),
    Regex(Pattern),
    Exists(bool),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    All(Vec<Condition>),
    Any(Vec<Condition>),
    Not(Box<Condition>),
    Test(Field, Test),
}

/// What a set of conditions reads beyond the parsed body's own fields, so the request path
/// computes only that (the metadata header, a scan of the messages for images).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reads {
    /// Some rule has a `when` at all: without one, no facts are built.
    pub any: bool,
    pub metadata: bool,
    pub has_images: bool,
    /// Some rule reads `params.stream`: a streamed and a plain request may take other routes.
    pub stream: bool,
    /// Some condition reads `params.task`: only then are the tools and last turn scanned.
    pub task: bool,
    /// Some condition reads `params.agent` (or `params.task`, which a coding agent decides).
    pub agent: bool,
}

impl Reads {
    pub fn with(self, other: Reads) -> Reads {
        Reads {
            any: self.any || other.any,
            metadata: self.metadata || other.metadata,
            has_images: self.has_images || other.has_images,
            stream: self.stream || other.stream,
            task: self.task || other.task,
            agent: self.agent || other.agent,
        }
    }
}

/// A rule's `when`: the validated condition, and its JSON as written (shown back and stored).
#[derive(Debug, Clone, PartialEq)]
pub struct When {
    condition: Condition,
    json: Map<String, Value>,
    reads: Reads,
}

impl When {
    /// Validates `json` (the `when` object); errors name their path under `when`.
    pub fn parse(json: Map<String, Value>) -> Result<Self, ConfigError> {
        let mut clauses = 0;
        let condition = object(&json, "when", 1, &mut clauses)?;
        let mut reads = Reads {
            any: true,
            ..Reads::default()
        };
        note_reads(&condition, &mut reads);
        Ok(Self {
            condition,
            json,
            reads,
        })
    }

    pub fn condition(&self) -> &Condition {
        &self.condition
    }

    pub fn json(&self) -> &Map<String, Value> {
        &self.json
    }

    pub fn reads(&self) -> Reads {
        self.reads
    }
}

fn note_reads(c: &Condition, reads: &mut Reads) {
    match c {
        Condition::All(cs) | Condition::Any(cs) => cs.iter().for_each(|c| note_reads(c, reads)),
        Condition::Not(c) => note_reads(c, reads),
        Condition::Test(Field::Metadata(_), _) => reads.metadata = true,
        Condition::Test(Field::HasImages, _) => reads.has_images = true,
        Condition::Test(Field::Stream, _) => reads.stream = true,
        Condition::Test(Field::Task, _) => (reads.task, reads.agent) = (true, true),
        Condition::Test(Field::Agent, _) => reads.agent = true,
        Condition::Test(..) => {}
    }
}

fn bad(path: &str, why: impl Into<String>) -> ConfigError {
    ConfigError::invalid(path, why)
}

/// A condition object at `path`, `depth` levels deep.
fn object(
    obj: &Map<String, Value>,
    path: &str,
    depth: usize,
    clauses: &mut usize,
) -> Result<Condition, ConfigError> {
    if depth > MAX_DEPTH {
        return Err(bad(path, format!("nested deeper than {MAX_DEPTH} levels")));
    }
    if obj.is_empty() {
        return Err(bad(path, "must hold at least one clause"));
    }
    let mut all = Vec::with_capacity(obj.len());
    for (key, value) in obj {
        let at = format!("{path}.{key}");
        let c = match key.as_str() {
            "$and" | "$or" => {
                let list = list_of_conditions(value, &at, depth, clauses)?;
                if key == "$and" {
                    Condition::All(list)
                } else {
                    Condition::Any(list)
                }
            }
            "$not" => match value {
                Value::Object(o) => Condition::Not(Box::new(object(o, &at, depth + 1, clauses)?)),
                _ => return Err(bad(&at, "must be a condition object")),
            },
            k if k.starts_with('$') => return Err(bad(&at, format!("unknown operator '{k}'"))),
            k => {
                let field = Field::parse(k)
                    .ok_or_else(|| bad(&at, format!("unknown key '{k}': use {KEYS}")))?;
                tests(field, value, &at, clauses)?
            }
        };
        all.push(c);
    }
    Ok(match all.len() {
        1 => all.remove(0),
        _ => Condition::All(all),
    })
}

fn list_of_conditions(
    value: &Value,
    at: &str,
    depth: usize,
    clauses: &mut usize,
) -> Result<Vec<Condition>, ConfigError> {
    let Value::Array(items) = value else {
        return Err(bad(at, "must be a non-empty array of condition objects"));
    };
    if items.is_empty() {
        return Err(bad(at, "must be a non-empty array of condition objects"));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let at = format!("{at}[{i}]");
            match item {
                Value::Object(o) => object(o, &at, depth + 1, clauses),
                _ => Err(bad(&at, "must be a condition object")),
            }
        })
        .collect()
}

/// A field's clauses: a bare value (`$eq`) or an object of operators, all of which must hold.
fn tests(
    field: Field,
    value: &Value,
    at: &str,
    clauses: &mut usize,
) -> Result<Condition, ConfigError> {
    let ops = match value {
        Value::Object(ops) => ops,
        bare => {
            count(clauses, at)?;
            return Ok(Condition::Test(
                field.clone(),
                Test::Eq(scalar(field.kind(), bare, at)?),
            ));
        }
    };
    if ops.is_empty() {
        return Err(bad(at, "must be a value or an object of operators"));
    }
    let mut all = Vec::with_capacity(ops.len());
    for (op, v) in ops {
        let at = format!("{at}.{op}");
        count(clauses, &at)?;
        all.push(Condition::Test(field.clone(), test(&field, op, v, &at)?));
    }
    Ok(match all.len() {
        1 => all.remove(0),
        _ => Condition::All(all),
    })
}

fn count(clauses: &mut usize, at: &str) -> Result<(), ConfigError> {
    *clauses += 1;
    if *clauses > MAX_CLAUSES {
        return Err(bad(
            at,
            format!("a rule may hold at most {MAX_CLAUSES} clauses"),
        ));
    }
    Ok(())
}

fn test(field: &Field, op: &str, v: &Value, at: &str) -> Result<Test, ConfigError> {
    let kind = field.kind();
    let number = |v: &Value| match (kind, v.as_f64()) {
        (Kind::Num, Some(n)) => Ok(n),
        (Kind::Num, None) => Err(bad(at, "must be a number")),
        _ => Err(bad(at, format!("{op} applies to numeric fields only"))),
    };
    Ok(match op {
        "$eq" => Test::Eq(scalar(kind, v, at)?),
        "$ne" => Test::Ne(scalar(kind, v, at)?),
        "$gt" => Test::Gt(number(v)?),
        "$gte" => Test::Gte(number(v)?),
        "$lt" => Test::Lt(number(v)?),
        "$lte" => Test::Lte(number(v)?),
        "$in" | "$nin" => {
            let Value::Array(items) = v else {
                return Err(bad(at, "must be an array"));
            };
            if items.is_empty() || items.len() > MAX_LIST_VALUES {
                let why = format!("must list 1 to {MAX_LIST_VALUES} values");
                return Err(bad(at, why));
            }
            let values = items
                .iter()
                .enumerate()
                .map(|(i, item)| scalar(kind, item, &format!("{at}[{i}]")))
                .collect::<Result<Vec<_>, _>>()?;
            if op == "$in" {
                Test::In(values)
            } else {
                Test::Nin(values)
            }
        }
        "$regex" => {
            if !matches!(kind, Kind::Str | Kind::OneOf(_)) {
                return Err(bad(at, "$regex applies to string fields only"));
            }
            let Value::String(p) = v else {
                return Err(bad(at, "must be a string"));
            };
            Test::Regex(pattern(p, at)?)
        }
        "$exists" => match v {
            Value::Bool(b) => Test::Exists(*b),
            _ => return Err(bad(at, "must be true or false")),
        },
        other => return Err(bad(at, format!("unknown operator '{other}'"))),
    })
}

fn scalar(kind: Kind, v: &Value, at: &str) -> Result<Scalar, ConfigError> {
    match (kind, v) {
        (Kind::Str, Value::String(s)) => Ok(Scalar::Str(s.clone())),
        (Kind::OneOf(set), Value::String(s)) if set.contains(&s.as_str()) => {
            Ok(Scalar::Str(s.clone()))
        }
        (Kind::OneOf(set), _) => Err(bad(at, format!("must be one of {}", set.join(", ")))),
        (Kind::Bool, Value::Bool(b)) => Ok(Scalar::Bool(*b)),
        (Kind::Num, Value::Number(n)) => n
            .as_f64()
            .map(Scalar::Num)
            .ok_or_else(|| bad(at, "must be a number")),
        (Kind::Str, _) => Err(bad(at, "must be a string")),
        (Kind::Bool, _) => Err(bad(at, "must be true or false")),
        (Kind::Num, _) => Err(bad(at, "must be a number")),
    }
}

#[cfg(test)]
#[path = "condition_tests.rs"]
mod tests;
