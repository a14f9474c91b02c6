//! What two JSON Schemas must agree on, whoever wrote them: a schema reduced to its shape (the JSON
//! types it admits, enumerated values, pattern, properties and which are required, whether other
//! properties are refused, array items, the alternatives of a union). Descriptions, defaults,
//! formats and numeric bounds are documentation only: the serde types do not carry them.

use crate::config::{SortedMap, SortedSet};
use serde_json::Value;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shape {
    pub types: SortedSet<String>,
    /// `enum` / `const` values, as JSON text.
    pub values: Option<SortedSet<String>>,
    pub pattern: Option<String>,
    pub properties: SortedMap<String, Shape>,
    pub required: SortedSet<String>,
    /// `additionalProperties: false`.
    pub closed: bool,
    pub items: Option<Box<Shape>>,
    /// The alternatives of a union of structured schemas (an untagged enum), in order.
    pub variants: Vec<Shape>,
}

/// The shape of `schema`, resolving `$ref`s (`#/...`) against `root`.
pub fn shape(schema: &Value, root: &Value) -> Shape {
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        let resolved = target
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer));
        return match resolved {
            Some(s) => shape(s, root),
            None => Shape {
                types: SortedSet::from([format!("unresolved {target}")]),
                ..Shape::default()
            },
        };
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        return all
            .iter()
            .map(|part| shape(part, root))
            .reduce(both)
            .unwrap_or_default();
    }
    let union = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array);
    if let Some(branches) = union {
        return union_of(branches.iter().map(|b| shape(b, root)).collect());
    }
    let mut s = Shape {
        values: values_of(schema),
        pattern: schema
            .get("pattern")
            .and_then(Value::as_str)
            .map(str::to_owned),
        closed: schema.get("additionalProperties") == Some(&Value::Bool(false)),
        ..Shape::default()
    };
    match schema.get("type") {
        Some(Value::String(t)) => {
            s.types.insert(t.clone());
        }
        Some(Value::Array(ts)) => {
            s.types
                .extend(ts.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        _ => {
            let from_values = enumerated(schema).into_iter().map(json_type);
            s.types.extend(from_values);
        }
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        s.types.insert("object".into());
        s.properties = props
            .iter()
            .map(|(k, v)| (k.clone(), shape(v, root)))
            .collect();
    }
    if let Some(req) = schema.get("required").and_then(Value::as_array) {
        s.required = req
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
    }
    if let Some(items) = schema.get("items") {
        s.items = Some(Box::new(shape(items, root)));
    }
    s
}

/// `allOf` of object parts (a view with a flattened part): every part's properties and required
/// fields; closed if any part is.
fn both(mut a: Shape, b: Shape) -> Shape {
    a.types.extend(b.types);
    a.properties.extend(b.properties);
    a.required.extend(b.required);
    a.closed |= b.closed;
    a
}

fn enumerated(schema: &Value) -> Vec<&Value> {
    match (schema.get("enum"), schema.get("const")) {
        (Some(Value::Array(vs)), _) => vs.iter().collect(),
        (_, Some(v)) => vec![v],
        _ => Vec::new(),
    }
}

fn values_of(schema: &Value) -> Option<SortedSet<String>> {
    let vs = enumerated(schema);
    (!vs.is_empty()).then(|| vs.iter().map(|v| v.to_string()).collect())
}

fn json_type(v: &Value) -> String {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
    .into()
}

fn is_scalar(s: &Shape) -> bool {
    s.properties.is_empty() && s.items.is_none() && s.variants.is_empty()
}

/// `anyOf` / `oneOf`: a `null` branch makes the rest nullable; scalar branches merge (an enum
/// stays an enum only if every branch enumerates); structured branches stay alternatives.
fn union_of(branches: Vec<Shape>) -> Shape {
    let is_null = |b: &Shape| b.types.len() == 1 && b.types.contains("null");
    let nullable = branches.iter().any(is_null);
    let mut rest: Vec<Shape> = branches.into_iter().filter(|b| !is_null(b)).collect();
    let mut merged = if rest.len() == 1 {
        rest.remove(0)
    } else if rest.iter().all(is_scalar) {
        let values = rest
            .iter()
            .map(|b| b.values.clone())
            .collect::<Option<Vec<_>>>()
            .map(|sets| sets.into_iter().flatten().collect());
        let patterns: SortedSet<_> = rest.iter().filter_map(|b| b.pattern.clone()).collect();
        Shape {
            types: rest.iter().flat_map(|b| b.types.clone()).collect(),
            values,
            pattern: (patterns.len() == 1 && rest.len() == 1)
                .then(|| patterns.into_iter().next())
                .flatten(),
            ..Shape::default()
        }
    } else {
        Shape {
            types: rest.iter().flat_map(|b| b.types.clone()).collect(),
            variants: rest,
            ..Shape::default()
        }
    };
    if nullable {
        merged.types.insert("null".into());
    }
    merged
}

/// Every way `document` fails to describe `derived`, each naming the field (`at`) it is about.
pub fn differences(at: &str, document: &Shape, derived: &Shape, out: &mut Vec<String>) {
    let say = |out: &mut Vec<String>, what: String| out.push(format!("{at}: {what}"));
    // The document may state a pattern the type leaves to validation code; it may not drop or
    // change one the type states.
    if document.types != derived.types {
        say(
            out,
            format!(
                "the type admits {:?}, the document {:?}",
                derived.types, document.types
            ),
        );
    }
    // Likewise enumerated values (an event's `event` is a `String` in the type).
    if derived.values.is_some() && document.values != derived.values {
        say(
            out,
            format!(
                "the type's values are {:?}, the document's {:?}",
                derived.values, document.values
            ),
        );
    }
    if derived.pattern.is_some() && document.pattern != derived.pattern {
        say(
            out,
            format!(
                "the type's pattern is {:?}, the document's {:?}",
                derived.pattern, document.pattern
            ),
        );
    }
    if document.closed != derived.closed {
        say(
            out,
            format!(
                "the type {} unknown fields, the document {}",
                if derived.closed { "refuses" } else { "allows" },
                if document.closed {
                    "refuses them"
                } else {
                    "allows them"
                }
            ),
        );
    }
    for (name, field) in &derived.properties {
        match document.properties.get(name) {
            None => say(
                out,
                format!("field `{name}` is in the type but not in the document"),
            ),
            Some(doc) => differences(&format!("{at}.{name}"), doc, field, out),
        }
    }
    for name in document.properties.keys() {
        if !derived.properties.contains_key(name) {
            say(
                out,
                format!("field `{name}` is in the document but not in the type"),
            );
        }
    }
    for name in derived.required.symmetric_difference(&document.required) {
        let (ty, doc) = if derived.required.contains(name) {
            ("required", "optional")
        } else {
            ("optional", "required")
        };
        say(
            out,
            format!("field `{name}` is {ty} in the type, {doc} in the document"),
        );
    }
    match (&document.items, &derived.items) {
        (Some(doc), Some(ty)) => differences(&format!("{at}[]"), doc, ty, out),
        (None, None) => {}
        (doc, _) => say(
            out,
            format!(
                "array items are described {} the document",
                if doc.is_some() {
                    "only in"
                } else {
                    "in the type, not in"
                }
            ),
        ),
    }
    if document.variants.len() != derived.variants.len() {
        say(
            out,
            format!(
                "the type has {} alternatives, the document {}",
                derived.variants.len(),
                document.variants.len()
            ),
        );
    }
    for (i, (doc, ty)) in document.variants.iter().zip(&derived.variants).enumerate() {
        differences(&format!("{at}|{i}"), doc, ty, out);
    }
}
