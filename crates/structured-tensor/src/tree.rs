//! `Tree`: a document built by a caller that walks its own objects (a binding's walk over
//! Python's dicts, lists and scalars), which ingestion reads with the rules and the code
//! of JSON: `StructuredTensor::from_tree` gives what `from_json_str` gives for the same
//! document written as JSON text.

use std::sync::Arc;

use crate::error::Error;
use crate::json_tree::{Node, View};
use crate::structured::StructuredTensor;

/// One value of a document: what a JSON value can be, with integers beyond `int64` kept
/// as written and object keys shared (a walk over many records with the same keys makes
/// each name once).
#[derive(Debug, Clone, PartialEq)]
pub enum Tree {
    /// `null` (Python's `None`).
    Null,
    /// A bool.
    Bool(bool),
    /// An integer in `int64`'s range.
    Int(i64),
    /// An integer beyond `int64`, in decimal (ingestion refuses it with
    /// [`Error::IntegerOutOfRange`] naming it, as it does such a literal in JSON text).
    BigInt(String),
    /// A float (a finite one: JSON text has no NaN or infinity).
    Float(f64),
    /// A string.
    Str(String),
    /// A list.
    List(Vec<Tree>),
    /// An object, its keys in order and distinct (as a Python dict's are). With a repeated
    /// key the result is a valid tensor, but which of the values it keeps is not specified.
    Dict(Vec<(Arc<str>, Tree)>),
}

/// The entries of a `Tree::Dict`.
type Entries = [(Arc<str>, Tree)];

impl Node for Tree {
    type Dict = Entries;
    fn view(&self) -> View<'_, Self> {
        match self {
            Tree::Null => View::Null,
            Tree::Bool(b) => View::Bool(*b),
            Tree::Int(i) => View::Int(*i),
            Tree::BigInt(s) => View::BigInt(s.clone()),
            Tree::Float(f) => View::Float(*f),
            Tree::Str(s) => View::Str(s),
            Tree::List(items) => View::List(items),
            Tree::Dict(entries) => View::Dict(entries.as_slice()),
        }
    }
    fn dict_len(d: &Entries) -> usize {
        d.len()
    }
    fn dict_entries<'a>(d: &'a Entries) -> impl Iterator<Item = (&'a str, &'a Self)>
    where
        Self: 'a,
    {
        d.iter().map(|(k, v)| (k.as_ref(), v))
    }
    fn dict_get<'a>(d: &'a Entries, key: &str) -> Option<&'a Self> {
        d.iter().find(|(k, _)| k.as_ref() == key).map(|(_, v)| v)
    }
}

impl StructuredTensor {
    /// Builds a struct array from a [`Tree`] (TensorFlow's `from_pyval` on the objects it
    /// was walked from): the rules, results and errors of
    /// [`StructuredTensor::from_json_str`] on the same document as JSON text, records of
    /// one shape read column by column (in parallel over chunks of records when long).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use structured_tensor::{StructuredTensor, Tree};
    /// let record = |age: i64| Tree::Dict(vec![(Arc::from("age"), Tree::Int(age))]);
    /// let st = StructuredTensor::from_tree(&Tree::List(vec![record(12), record(82)]))?;
    /// assert_eq!(st, StructuredTensor::from_json_str(r#"[{"age": 12}, {"age": 82}]"#)?);
    /// # Ok::<(), structured_tensor::Error>(())
    /// ```
    pub fn from_tree(tree: &Tree) -> Result<StructuredTensor, Error> {
        crate::json_in::from_root(tree, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree of a JSON document, built by hand from `serde_json`'s value (the model:
    /// the text reader on the same document).
    fn tree_of(value: &serde_json::Value) -> Tree {
        use serde_json::Value;
        match value {
            Value::Null => Tree::Null,
            Value::Bool(b) => Tree::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Tree::Int(i),
                None if n.is_u64() => Tree::BigInt(n.to_string()),
                None => Tree::Float(n.as_f64().expect("a finite float")),
            },
            Value::String(s) => Tree::Str(s.clone()),
            Value::Array(items) => Tree::List(items.iter().map(tree_of).collect()),
            Value::Object(map) => Tree::Dict(
                map.iter()
                    .map(|(k, v)| (Arc::from(k.as_str()), tree_of(v)))
                    .collect(),
            ),
        }
    }

    #[track_caller]
    fn check(text: &str) {
        let value: serde_json::Value = serde_json::from_str(text).expect("valid JSON");
        let got = StructuredTensor::from_tree(&tree_of(&value));
        let expected = StructuredTensor::from_json_str(text);
        assert_eq!(got, expected, "{text}");
    }

    #[test]
    fn trees_read_as_their_json_text() {
        check(r#"{"a": 1, "b": [1.5, 2], "c": {"d": "x"}}"#);
        check(r#"[{"id": 1, "tags": [1, 2]}, {"id": 2, "tags": []}]"#);
        check(r#"[{"z": 1, "a": 2.5}, {"a": 3, "z": 4}]"#);
        check(r#"[[{"a": [[1], []]}], [], [{"a": [[2, 3]]}, {"a": []}]]"#);
        check(r#"[{"a": true}, {"a": false}]"#);
        check(r#"[{"名前": 1}]"#);
        check(r#"[[], [[]]]"#);
        check(r#"[]"#);
    }

    #[test]
    fn errors_are_those_of_the_json_text() {
        check(r#"[{"a": 1}, {"a": "x"}]"#);
        check(r#"[{"a": 1}, {"b": 1}]"#);
        check(r#"[{"a": 1}, [{"a": 2}]]"#);
        check(r#"{"a": {"b": [1, [2]]}}"#);
        check(r#"[{"a": 18446744073709551615}]"#);
        check(r#"{"a b": 1}"#);
        check(r#"[1, 2]"#);
        check("5");
        let big = Tree::Dict(vec![(
            Arc::from("n"),
            Tree::BigInt("92233720368547758080".to_string()),
        )]);
        assert_eq!(
            StructuredTensor::from_tree(&big),
            StructuredTensor::from_json_str(r#"{"n": 92233720368547758080}"#)
        );
    }
}
