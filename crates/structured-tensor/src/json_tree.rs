//! The JSON trees ingestion reads (`serde_json::Value` and the text reader's `TNode`, seen
//! through one `View`) and the leaf `Column`s it fills, shared by the tree walk
//! (`json_in.rs`) and the one-pass column reader (`text_columns.rs`).

use serde_json::Value;

use crate::strings::StringColumn;
use crate::text::TNode;
use crate::values::Values;

/// One JSON value as ingestion sees it, whatever tree holds it.
pub(crate) enum View<'a, N: Node> {
    Null,
    Bool(bool),
    Int(i64),
    BigInt(String),
    Float(f64),
    Str(&'a str),
    List(&'a [N]),
    Dict(&'a N::Dict),
}

/// A JSON tree ingestion can read: `serde_json::Value` or the text reader's `TNode`.
pub(crate) trait Node: Sized + Sync {
    /// The object type.
    type Dict: ?Sized;
    fn view(&self) -> View<'_, Self>;
    fn dict_len(d: &Self::Dict) -> usize;
    fn dict_entries<'a>(d: &'a Self::Dict) -> impl Iterator<Item = (&'a str, &'a Self)>
    where
        Self: 'a;
    fn dict_get<'a>(d: &'a Self::Dict, key: &str) -> Option<&'a Self>;
}

impl Node for Value {
    type Dict = serde_json::Map<String, Value>;
    fn view(&self) -> View<'_, Self> {
        match self {
            Value::Null => View::Null,
            Value::Bool(b) => View::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => View::Int(i),
                None if n.is_u64() => View::BigInt(n.to_string()),
                None => View::Float(n.as_f64().unwrap_or_default()),
            },
            Value::String(s) => View::Str(s),
            Value::Array(items) => View::List(items),
            Value::Object(map) => View::Dict(map),
        }
    }
    fn dict_len(d: &Self::Dict) -> usize {
        d.len()
    }
    fn dict_entries<'a>(d: &'a Self::Dict) -> impl Iterator<Item = (&'a str, &'a Self)>
    where
        Self: 'a,
    {
        d.iter().map(|(k, v)| (k.as_str(), v))
    }
    fn dict_get<'a>(d: &'a Self::Dict, key: &str) -> Option<&'a Self> {
        d.get(key)
    }
}

type TDict<'t> = [(std::borrow::Cow<'t, str>, TNode<'t>)];

impl<'t> Node for TNode<'t> {
    type Dict = TDict<'t>;
    fn view(&self) -> View<'_, Self> {
        match self {
            TNode::Null => View::Null,
            TNode::Bool(b) => View::Bool(*b),
            TNode::Int(i) => View::Int(*i),
            TNode::BigInt(s) => View::BigInt(s.to_string()),
            TNode::Float(f) => View::Float(*f),
            TNode::Str(s) => View::Str(s),
            TNode::List(items) => View::List(items),
            TNode::Dict(entries) => View::Dict(entries.as_slice()),
        }
    }
    fn dict_len(d: &TDict<'t>) -> usize {
        d.len()
    }
    fn dict_entries<'a>(d: &'a TDict<'t>) -> impl Iterator<Item = (&'a str, &'a Self)>
    where
        Self: 'a,
    {
        d.iter().map(|(k, v)| (k.as_ref(), v))
    }
    fn dict_get<'a>(d: &'a TDict<'t>, key: &str) -> Option<&'a Self> {
        d.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// The deepest nesting of lists and objects along one path that ingestion accepts (its
/// walks recurse, and this keeps them far from the end of a thread's stack).
pub(crate) const MAX_NESTING: usize = 1000;

/// The scalars of a leaf column being filled, its dtype fixed by the first scalar (an
/// `int64` column turns `float64` at the first float, as a mixed list does).
pub(crate) enum Column {
    Empty,
    I64(Vec<i64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    Str(StringColumn),
}

impl Column {
    /// Appends a scalar; `None` for anything the general path must judge (a list, a dict,
    /// `null`, an integer beyond `int64`, a dtype that does not combine).
    pub(crate) fn push<N: Node>(&mut self, v: View<'_, N>, capacity: usize) -> Option<()> {
        match (&mut *self, v) {
            (Column::I64(c), View::Int(i)) => c.push(i),
            (Column::F64(c), View::Float(f)) => c.push(f),
            (Column::F64(c), View::Int(i)) => c.push(i as f64),
            (Column::Str(c), View::Str(s)) => c.push(s),
            (Column::Bool(c), View::Bool(b)) => c.push(b),
            (Column::I64(c), View::Float(f)) => {
                let mut floats = widen(c, capacity.max(c.len() + 1));
                floats.push(f);
                *self = Column::F64(floats);
            }
            (Column::Empty, first) => {
                *self = match first {
                    View::Int(_) => Column::I64(Vec::with_capacity(capacity)),
                    View::Float(_) => Column::F64(Vec::with_capacity(capacity)),
                    View::Str(_) => Column::Str(StringColumn::with_capacity(capacity, 0)),
                    View::Bool(_) => Column::Bool(Vec::with_capacity(capacity)),
                    _ => return None,
                };
                return self.push(first, capacity);
            }
            _ => return None,
        }
        Some(())
    }

    /// Number of scalars pushed so far.
    pub(crate) fn len(&self) -> usize {
        match self {
            Column::Empty => 0,
            Column::I64(c) => c.len(),
            Column::F64(c) => c.len(),
            Column::Bool(c) => c.len(),
            Column::Str(c) => c.len(),
        }
    }

    /// Appends the scalars of `other` after those of `self`, as if pushed one by one;
    /// `None` when the dtypes do not combine.
    pub(crate) fn append(&mut self, other: Column) -> Option<()> {
        match (&mut *self, other) {
            (_, Column::Empty) => {}
            (Column::Empty, other) => *self = other,
            (Column::I64(a), Column::I64(b)) => a.extend(b),
            (Column::F64(a), Column::F64(b)) => a.extend(b),
            (Column::F64(a), Column::I64(b)) => a.extend(b.into_iter().map(|x| x as f64)),
            (Column::I64(a), Column::F64(b)) => {
                let mut floats = widen(a, a.len() + b.len());
                floats.extend(b);
                *self = Column::F64(floats);
            }
            (Column::Bool(a), Column::Bool(b)) => a.extend(b),
            (Column::Str(a), Column::Str(b)) => a.extend_from(&b, 0, b.len()),
            _ => return None,
        }
        Some(())
    }

    /// True when [`Column::append`] of `other` would succeed (the dtypes combine).
    pub(crate) fn combines(&self, other: &Column) -> bool {
        matches!(
            (self, other),
            (_, Column::Empty)
                | (Column::Empty, _)
                | (
                    Column::I64(_) | Column::F64(_),
                    Column::I64(_) | Column::F64(_)
                )
                | (Column::Bool(_), Column::Bool(_))
                | (Column::Str(_), Column::Str(_))
        )
    }

    /// The filled buffer, trimmed to its length (`float64` when there was no scalar, as
    /// TensorFlow's default).
    pub(crate) fn finish(self) -> Values {
        fn exact<T>(mut v: Vec<T>) -> Vec<T> {
            v.shrink_to_fit();
            v
        }
        match self {
            Column::Empty => Values::F64(Vec::new().into()),
            Column::I64(c) => Values::I64(exact(c).into()),
            Column::F64(c) => Values::F64(exact(c).into()),
            Column::Bool(c) => Values::Bool(exact(c)),
            Column::Str(mut c) => {
                c.shrink_to_fit();
                Values::Str(c)
            }
        }
    }
}

/// The `int64` scalars of a column turned `float64`, with room for `capacity`.
fn widen(ints: &[i64], capacity: usize) -> Vec<f64> {
    let mut floats = Vec::with_capacity(capacity);
    floats.extend(ints.iter().map(|&x| x as f64));
    floats
}
