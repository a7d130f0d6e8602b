//! Schemas as values: a `Spec`'s JSON form, schema inference over many inputs with
//! unification (`Spec::infer`, `Spec::unify`), and `conform`, which casts a struct array
//! to a unified spec (an empty list takes the others' type, `int64` widens to `float64`,
//! a field missing from one input is null there).

use indexmap::IndexMap;
use serde_json::{json, Map, Value};

use crate::array::Array;
use crate::error::{Error, FieldPath};
use crate::partition::{self, RowPartition};
use crate::spec::{FieldSpec, Spec};
use crate::structured::{FieldValue, StructuredTensor};
use crate::validity::Validity;
use crate::values::{DType, Values};

/// The version written into a spec's JSON form. Version 2 lists the fields in order
/// (`"fields": [{"name": "a", ...}, ...]`); version 1's object of fields is still read,
/// its fields in the order the object gives them.
pub const SPEC_JSON_VERSION: u64 = 2;

/// An inferred type, before it is a spec: what was seen at one place of the inputs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub(crate) kind: Kind,
    /// A null, or a missing key, was seen here (or above, for a struct's leaves).
    pub(crate) nullable: bool,
}

/// The shape of a [`Node`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    /// Only nulls or empty lists were seen: the type comes from other inputs, or is
    /// `float64` (TensorFlow's type of an empty list).
    Unknown,
    /// Scalars of one dtype.
    Scalar(DType),
    /// A list of elements of one type.
    List(Box<Node>),
    /// Objects: the keys in order of first appearance.
    Object(Vec<(String, Node)>),
}

impl Node {
    pub(crate) fn unknown(nullable: bool) -> Node {
        Node {
            kind: Kind::Unknown,
            nullable,
        }
    }

    fn of(kind: Kind) -> Node {
        Node {
            kind,
            nullable: false,
        }
    }

    /// A short description for errors: `int64`, `list<string>`, `struct{a, b}`.
    pub(crate) fn describe(&self) -> String {
        match &self.kind {
            Kind::Unknown => "an empty list or null".to_string(),
            Kind::Scalar(d) => d.name().to_string(),
            Kind::List(inner) => format!("list<{}>", inner.describe()),
            Kind::Object(fields) => {
                let names: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
                format!("struct{{{}}}", names.join(", "))
            }
        }
    }

    /// The type of a JSON value (`nulls`: `null` is allowed and marks the place nullable).
    pub(crate) fn observe(v: &Value, path: &FieldPath) -> Result<Node, Error> {
        Ok(match v {
            Value::Null => Node::unknown(true),
            Value::Bool(_) => Node::of(Kind::Scalar(DType::Bool)),
            Value::String(_) => Node::of(Kind::Scalar(DType::Str)),
            Value::Number(n) => {
                if n.is_i64() {
                    Node::of(Kind::Scalar(DType::I64))
                } else if n.is_u64() {
                    return Err(Error::ParsePath {
                        path: path.clone(),
                        source: Box::new(Error::IntegerOutOfRange {
                            value: n.to_string(),
                        }),
                    });
                } else {
                    Node::of(Kind::Scalar(DType::F64))
                }
            }
            Value::Array(items) => {
                let mut elem = Node::unknown(false);
                for item in items {
                    elem = unify(elem, Node::observe(item, path)?, path, false)?;
                }
                Node::of(Kind::List(Box::new(elem)))
            }
            Value::Object(map) => {
                let mut fields = Vec::with_capacity(map.len());
                for (k, item) in map {
                    fields.push((k.clone(), Node::observe(item, &path.child(k))?));
                }
                Node::of(Kind::Object(fields))
            }
        })
    }

    /// The type of a field value already built (an array with no values is `Unknown`
    /// below its lists: an empty list takes its type from the other inputs).
    pub(crate) fn of_field(value: &FieldValue, parent_rank: usize) -> Node {
        match value {
            FieldValue::Array(a) => {
                // no values, or only nulls: the type comes from the other inputs
                let leaf = if a.values().len() == a.null_count() {
                    Node::unknown(a.is_nullable())
                } else {
                    Node {
                        kind: Kind::Scalar(a.dtype()),
                        nullable: a.is_nullable(),
                    }
                };
                wrap_lists(leaf, a.rank().saturating_sub(parent_rank))
            }
            FieldValue::Struct(s) => {
                let fields = s
                    .fields()
                    .iter()
                    .map(|(k, v)| (k.clone(), Node::of_field(v, s.rank())))
                    .collect();
                wrap_lists(Node::of(Kind::Object(fields)), s.rank() - parent_rank)
            }
        }
    }

    /// The type a spec field describes (`parent_rank` dimensions belong to the structs
    /// above it).
    pub(crate) fn of_spec(spec: &FieldSpec, parent_rank: usize) -> Node {
        match spec {
            FieldSpec::Tensor { shape, dtype } | FieldSpec::Ragged { shape, dtype, .. } => {
                wrap_lists(
                    Node::of(Kind::Scalar(*dtype)),
                    shape.len().saturating_sub(parent_rank),
                )
            }
            FieldSpec::Nullable(inner) => {
                let mut node = Node::of_spec(inner, parent_rank);
                set_leaf_nullable(&mut node);
                node
            }
            FieldSpec::Struct(s) => {
                let fields = s
                    .fields
                    .iter()
                    .map(|(k, v)| (k.clone(), Node::of_spec(v, s.rank())))
                    .collect();
                wrap_lists(Node::of(Kind::Object(fields)), s.rank() - parent_rank)
            }
        }
    }

    /// The field spec of this type under `parent_rank` outer dimensions (sizes unknown).
    pub(crate) fn to_field_spec(&self, parent_rank: usize) -> FieldSpec {
        let mut lists = 0;
        let mut node = self;
        while let Kind::List(inner) = &node.kind {
            lists += 1;
            node = inner;
        }
        let rank = parent_rank + lists;
        match &node.kind {
            Kind::Object(fields) => FieldSpec::Struct(Spec {
                shape: vec![None; rank],
                fields: fields
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_field_spec(rank)))
                    .collect(),
            }),
            Kind::Scalar(_) | Kind::Unknown => {
                let dtype = match node.kind {
                    Kind::Scalar(d) => d,
                    _ => DType::F64,
                };
                let shape = vec![None; rank];
                let leaf = if rank >= 2 {
                    FieldSpec::Ragged {
                        shape,
                        dtype,
                        ragged_rank: rank - 1,
                    }
                } else {
                    FieldSpec::Tensor { shape, dtype }
                };
                if node.nullable {
                    FieldSpec::Nullable(Box::new(leaf))
                } else {
                    leaf
                }
            }
            Kind::List(_) => unreachable!("lists were unwrapped above"),
        }
    }
}

/// `node` under `n` levels of lists.
fn wrap_lists(mut node: Node, n: usize) -> Node {
    for _ in 0..n {
        node = Node::of(Kind::List(Box::new(node)));
    }
    node
}

/// Marks the leaf under a node's lists nullable.
fn set_leaf_nullable(node: &mut Node) {
    match &mut node.kind {
        Kind::List(inner) => set_leaf_nullable(inner),
        _ => node.nullable = true,
    }
}

/// Marks every leaf below `node` nullable (a struct missing, or null, somewhere).
fn set_all_nullable(node: &mut Node) {
    match &mut node.kind {
        Kind::List(inner) => set_all_nullable(inner),
        Kind::Object(fields) => fields.iter_mut().for_each(|(_, f)| set_all_nullable(f)),
        _ => node.nullable = true,
    }
}

/// The type both `a` and `b` fit: `Unknown` takes the other's type, `int64` and `float64`
/// give `float64` (as TensorFlow's rule for one list), lists unify their elements, objects
/// their keys (a key missing on one side makes its leaves nullable when `missing_ok`, else
/// it is an error). Anything else is [`Error::SchemaMismatch`] naming the path and both
/// types.
pub(crate) fn unify(a: Node, b: Node, path: &FieldPath, missing_ok: bool) -> Result<Node, Error> {
    let nullable = a.nullable || b.nullable;
    let mismatch = |a: &Node, b: &Node| Error::SchemaMismatch {
        path: path.clone(),
        expected: a.describe(),
        found: b.describe(),
        file: None,
    };
    let kind = match (a.kind, b.kind) {
        (Kind::Unknown, mut other) | (mut other, Kind::Unknown) => {
            if nullable {
                if let Kind::Object(fields) = &mut other {
                    // a null where the other side has a struct: all its leaves are null
                    fields.iter_mut().for_each(|(_, f)| set_all_nullable(f));
                }
            }
            other
        }
        (Kind::Scalar(x), Kind::Scalar(y)) if x == y => Kind::Scalar(x),
        (Kind::Scalar(DType::I64), Kind::Scalar(DType::F64))
        | (Kind::Scalar(DType::F64), Kind::Scalar(DType::I64)) => Kind::Scalar(DType::F64),
        (Kind::List(x), Kind::List(y)) => Kind::List(Box::new(unify(*x, *y, path, missing_ok)?)),
        (Kind::Object(x), Kind::Object(y)) => {
            let mut out: Vec<(String, Node)> = Vec::with_capacity(x.len().max(y.len()));
            let mut right: IndexMap<String, Node> = y.into_iter().collect();
            let mut order_right = Vec::new();
            for (k, _) in right.iter() {
                order_right.push(k.clone());
            }
            for (k, mut v) in x {
                match right.shift_remove(&k) {
                    Some(w) => out.push((k.clone(), unify(v, w, &path.child(&k), missing_ok)?)),
                    None if missing_ok => {
                        set_all_nullable(&mut v);
                        out.push((k, v));
                    }
                    None => {
                        return Err(Error::MissingKey {
                            key: k,
                            path: path.clone(),
                        })
                    }
                }
            }
            for (k, mut v) in right {
                if !missing_ok {
                    return Err(Error::MissingKey {
                        key: k,
                        path: path.clone(),
                    });
                }
                set_all_nullable(&mut v);
                out.push((k, v));
            }
            Kind::Object(out)
        }
        (x, y) => {
            return Err(mismatch(
                &Node {
                    kind: x,
                    nullable: false,
                },
                &Node {
                    kind: y,
                    nullable: false,
                },
            ))
        }
    };
    Ok(Node { kind, nullable })
}

impl Spec {
    /// The spec every input fits (TensorFlow has none): the inputs' specs unified, every
    /// size left out (`None`). A leaf with no values (an empty list in every row) takes
    /// its type from the other inputs; `int64` and `float64` give `float64`; a leaf that
    /// is nullable in one input is nullable. All inputs need one rank and the same fields
    /// (see [`Spec::infer_allowing_missing`]). A conflict is [`Error::SchemaMismatch`]
    /// naming the field path and both types; an empty list of inputs is
    /// [`Error::ConcatEmpty`].
    pub fn infer(inputs: &[&StructuredTensor]) -> Result<Spec, Error> {
        infer_tensors(inputs, false)
    }

    /// [`Spec::infer`] where a field missing from some inputs is a nullable field of the
    /// others' type (null in those inputs once conformed).
    pub fn infer_allowing_missing(inputs: &[&StructuredTensor]) -> Result<Spec, Error> {
        infer_tensors(inputs, true)
    }

    /// The spec both `self` and `other` fit, by the rules of [`Spec::infer`] (from the
    /// specs alone, a leaf cannot be known empty: dtypes must agree or widen).
    pub fn unify(&self, other: &Spec) -> Result<Spec, Error> {
        if self.rank() != other.rank() {
            return Err(Error::SchemaMismatch {
                path: FieldPath::root(),
                expected: format!("a struct of rank {}", self.rank()),
                found: format!("a struct of rank {}", other.rank()),
                file: None,
            });
        }
        let a = Node::of_spec(&FieldSpec::Struct(self.clone()), 0);
        let b = Node::of_spec(&FieldSpec::Struct(other.clone()), 0);
        let node = unify(a, b, &FieldPath::root(), false)?;
        Ok(node_to_spec(&node, self.rank()))
    }

    /// This spec with every size left out (`None`) and every leaf `Ragged` from its second
    /// dimension on (`Tensor` at rank 0 and 1): the type shared by inputs whose sizes
    /// differ.
    pub fn without_sizes(&self) -> Spec {
        node_to_spec(
            &Node::of_spec(&FieldSpec::Struct(self.clone()), 0),
            self.rank(),
        )
    }

    /// The spec in its JSON form (stable; see the crate guide), the fields as a list in
    /// their order: `{"version": 2, "shape": [null, 3], "fields": [{"name": "a", "kind":
    /// "tensor", "shape": [null], "dtype": "int64"}, {"name": "b", "kind": "ragged",
    /// "shape": [null, null], "dtype": "string", "ragged_rank": 1, "nullable": true},
    /// {"name": "c", "kind": "struct", "shape": [null], "fields": [...]}]}`.
    pub fn to_json(&self) -> Value {
        let mut out = spec_body(self);
        out.insert("version".into(), json!(SPEC_JSON_VERSION));
        Value::Object(out)
    }

    /// Reads the JSON form of [`Spec::to_json`]; anything else is [`Error::SpecJson`]
    /// naming where.
    pub fn from_json(value: &Value) -> Result<Spec, Error> {
        let obj = value
            .as_object()
            .ok_or_else(|| spec_err("$", "not an object"))?;
        let version = match obj.get("version") {
            Some(v) if matches!(v.as_u64(), Some(1 | 2)) => v.as_u64().unwrap_or_default(),
            Some(v) => {
                return Err(spec_err(
                    "$.version",
                    format!("version {v} is not 1 or {SPEC_JSON_VERSION}"),
                ))
            }
            None => return Err(spec_err("$", "no \"version\"")),
        };
        spec_from_body(obj, "$", version)
    }
}

/// A spec built from a node of rank `rank` (an object under `rank` lists).
pub(crate) fn node_to_spec(node: &Node, rank: usize) -> Spec {
    match node.to_field_spec(0) {
        FieldSpec::Struct(s) => s,
        _ => Spec {
            shape: vec![None; rank],
            fields: IndexMap::new(),
        },
    }
}

fn infer_tensors(inputs: &[&StructuredTensor], missing_ok: bool) -> Result<Spec, Error> {
    let first = inputs.first().ok_or(Error::ConcatEmpty)?;
    let rank = first.rank();
    let mut node: Option<Node> = None;
    for st in inputs {
        if st.rank() != rank {
            return Err(Error::SchemaMismatch {
                path: FieldPath::root(),
                expected: format!("a struct of rank {rank}"),
                found: format!("a struct of rank {}", st.rank()),
                file: None,
            });
        }
        let n = Node::of_field(&FieldValue::Struct((*st).clone()), 0);
        node = Some(match node {
            None => n,
            Some(prev) => unify(prev, n, &FieldPath::root(), missing_ok)?,
        });
    }
    Ok(node_to_spec(&node.expect("one input at least"), rank))
}

fn spec_err(at: &str, problem: impl Into<String>) -> Error {
    Error::SpecJson {
        at: at.to_string(),
        problem: problem.into(),
    }
}

fn shape_json(shape: &[Option<usize>]) -> Value {
    Value::Array(shape.iter().map(|d| json!(d)).collect())
}

fn spec_body(spec: &Spec) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("shape".into(), shape_json(&spec.shape));
    let fields: Vec<Value> = spec
        .fields
        .iter()
        .map(|(k, v)| {
            let mut field = field_json(v);
            if let Value::Object(m) = &mut field {
                m.insert("name".into(), json!(k));
            }
            field
        })
        .collect();
    out.insert("fields".into(), Value::Array(fields));
    out
}

fn field_json(spec: &FieldSpec) -> Value {
    match spec {
        FieldSpec::Tensor { shape, dtype } => {
            json!({"kind": "tensor", "shape": shape_json(shape), "dtype": dtype.name()})
        }
        FieldSpec::Ragged {
            shape,
            dtype,
            ragged_rank,
        } => json!({"kind": "ragged", "shape": shape_json(shape), "dtype": dtype.name(),
                    "ragged_rank": ragged_rank}),
        FieldSpec::Struct(s) => {
            let mut body = spec_body(s);
            body.insert("kind".into(), json!("struct"));
            Value::Object(body)
        }
        FieldSpec::Nullable(inner) => {
            let mut v = field_json(inner);
            if let Value::Object(m) = &mut v {
                m.insert("nullable".into(), json!(true));
            }
            v
        }
    }
}

/// The dtype named `name` (TensorFlow's names, as `DType::name` gives them).
pub(crate) fn dtype_from_name(name: &str) -> Option<DType> {
    [
        DType::I64,
        DType::F64,
        DType::Bool,
        DType::Str,
        DType::I32,
        DType::F32,
        DType::U8,
        DType::Bytes,
    ]
    .into_iter()
    .find(|d| d.name() == name)
}

fn shape_from_json(v: Option<&Value>, at: &str) -> Result<Vec<Option<usize>>, Error> {
    let items = v
        .and_then(Value::as_array)
        .ok_or_else(|| spec_err(at, "\"shape\" is not a list"))?;
    items
        .iter()
        .map(|d| match d {
            Value::Null => Ok(None),
            other => other
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| spec_err(at, format!("dimension {other} is not a size or null"))),
        })
        .collect()
}

/// The fields of a JSON spec body as `(name, field)` pairs in order, with the place of
/// each: version 1 has an object of fields, version 2 a list of fields with their `name`.
fn fields_of_body<'v>(
    obj: &'v Map<String, Value>,
    at: &str,
    version: u64,
) -> Result<Vec<(&'v str, &'v Value, String)>, Error> {
    if version == 1 {
        let fields = obj
            .get("fields")
            .and_then(Value::as_object)
            .ok_or_else(|| spec_err(at, "\"fields\" is not an object"))?;
        return Ok(fields
            .iter()
            .map(|(name, f)| (name.as_str(), f, format!("{at}.fields.{name}")))
            .collect());
    }
    let fields = obj
        .get("fields")
        .and_then(Value::as_array)
        .ok_or_else(|| spec_err(at, "\"fields\" is not a list"))?;
    let mut out: Vec<(&str, &Value, String)> = Vec::with_capacity(fields.len());
    let mut seen = std::collections::HashSet::with_capacity(fields.len());
    for (i, f) in fields.iter().enumerate() {
        let here = format!("{at}.fields[{i}]");
        let name = f
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| spec_err(&here, "no \"name\""))?;
        if !seen.insert(name) {
            return Err(spec_err(&here, format!("field {name:?} is listed twice")));
        }
        out.push((name, f, format!("{at}.fields.{name}")));
    }
    Ok(out)
}

fn spec_from_body(obj: &Map<String, Value>, at: &str, version: u64) -> Result<Spec, Error> {
    let shape = shape_from_json(obj.get("shape"), at)?;
    let mut fields = IndexMap::new();
    for (name, f, here) in fields_of_body(obj, at, version)? {
        let field = field_from_json(f, &here, version)?;
        let field_rank = match &field {
            FieldSpec::Tensor { shape, .. } | FieldSpec::Ragged { shape, .. } => shape.len(),
            FieldSpec::Struct(s) => s.rank(),
            FieldSpec::Nullable(inner) => match &**inner {
                FieldSpec::Tensor { shape, .. } | FieldSpec::Ragged { shape, .. } => shape.len(),
                _ => 0,
            },
        };
        if field_rank < shape.len() {
            return Err(spec_err(
                &here,
                format!(
                    "rank {field_rank} is below the struct's rank {}",
                    shape.len()
                ),
            ));
        }
        fields.insert(name.to_string(), field);
    }
    Ok(Spec { shape, fields })
}

fn field_from_json(v: &Value, at: &str, version: u64) -> Result<FieldSpec, Error> {
    let obj = v.as_object().ok_or_else(|| spec_err(at, "not an object"))?;
    let kind = obj
        .get("kind")
        .and_then(Value::as_str)
        .ok_or_else(|| spec_err(at, "no \"kind\""))?;
    let dtype = || -> Result<DType, Error> {
        let name = obj
            .get("dtype")
            .and_then(Value::as_str)
            .ok_or_else(|| spec_err(at, "no \"dtype\""))?;
        dtype_from_name(name).ok_or_else(|| spec_err(at, format!("unknown dtype {name:?}")))
    };
    let nullable = match obj.get("nullable") {
        None | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(other) => return Err(spec_err(at, format!("\"nullable\" is {other}"))),
    };
    let leaf = match kind {
        "tensor" => FieldSpec::Tensor {
            shape: shape_from_json(obj.get("shape"), at)?,
            dtype: dtype()?,
        },
        "ragged" => {
            let shape = shape_from_json(obj.get("shape"), at)?;
            let ragged_rank = obj
                .get("ragged_rank")
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| spec_err(at, "no \"ragged_rank\""))?;
            if ragged_rank == 0 || ragged_rank >= shape.len().max(1) {
                return Err(spec_err(
                    at,
                    format!(
                        "ragged_rank {ragged_rank} is not between 1 and rank - 1 = {}",
                        shape.len().saturating_sub(1)
                    ),
                ));
            }
            FieldSpec::Ragged {
                shape,
                dtype: dtype()?,
                ragged_rank,
            }
        }
        "struct" => {
            if nullable {
                return Err(spec_err(at, "a struct cannot be nullable (its leaves can)"));
            }
            return Ok(FieldSpec::Struct(spec_from_body(obj, at, version)?));
        }
        other => return Err(spec_err(at, format!("unknown kind {other:?}"))),
    };
    Ok(if nullable {
        FieldSpec::Nullable(Box::new(leaf))
    } else {
        leaf
    })
}

/// The leaf spec under a `Nullable` (or the spec itself) and whether it was nullable.
pub(crate) fn strip_nullable(spec: &FieldSpec) -> (&FieldSpec, bool) {
    match spec {
        FieldSpec::Nullable(inner) => (inner, true),
        other => (other, false),
    }
}

/// A leaf's dtype and rank (nullability aside); `None` for a struct.
pub(crate) fn leaf_dtype_rank(spec: &FieldSpec) -> Option<(DType, usize, bool)> {
    let (leaf, nullable) = strip_nullable(spec);
    match leaf {
        FieldSpec::Tensor { shape, dtype } | FieldSpec::Ragged { shape, dtype, .. } => {
            Some((*dtype, shape.len(), nullable))
        }
        _ => None,
    }
}

/// A field of spec `spec` holding `n_elems` elements under the struct's dimensions
/// (`nrows` outer rows, the struct's `partitions`): every leaf null, every list of the
/// field's own dimensions empty (a null list reads as an empty list). What a field
/// missing from an input becomes once conformed.
pub(crate) fn null_field(
    spec: &FieldSpec,
    nrows: usize,
    partitions: &[RowPartition],
    n_elems: usize,
    struct_rank: usize,
    path: &FieldPath,
) -> Result<FieldValue, Error> {
    let own_parts = |rank: usize| -> Result<Vec<RowPartition>, Error> {
        let mut parts = partitions.to_vec();
        let mut rows = n_elems;
        for level in struct_rank..rank {
            // the first own dimension has `n_elems` empty rows; deeper ones none
            let p = partition::from_splits(vec![0; rows + 1])?;
            if level > 0 {
                parts.push(p);
            }
            rows = 0;
        }
        Ok(parts)
    };
    match spec {
        FieldSpec::Struct(s) => {
            let parts = own_parts(s.rank())?;
            let elems = if s.rank() > struct_rank { 0 } else { n_elems };
            let rows = if struct_rank == 0 && s.rank() > 0 {
                0
            } else {
                nrows
            };
            let mut fields = IndexMap::new();
            for (k, f) in &s.fields {
                fields.insert(
                    k.clone(),
                    null_field(f, rows, &parts, elems, s.rank(), &path.child(k))?,
                );
            }
            Ok(FieldValue::Struct(StructuredTensor::from_parts_unchecked(
                s.rank(),
                rows,
                parts,
                fields,
            )))
        }
        leaf => {
            let (dtype, rank, _) = leaf_dtype_rank(leaf).expect("a leaf spec");
            let parts = own_parts(rank)?;
            let n_values = if rank > struct_rank { 0 } else { n_elems };
            let values = default_values(dtype, n_values);
            let rows = if struct_rank == 0 && rank > 0 {
                0
            } else {
                nrows
            };
            let array = if rank == 0 {
                Array::scalar(values.get(0))
            } else {
                Array::from_partitions(rows, parts, values)?
            };
            Ok(FieldValue::Array(
                array.with_validity(Some(Validity::all_null(n_values)))?,
            ))
        }
    }
}

/// `n` default values (zero, false, empty) of `dtype`: what lies under a null.
pub(crate) fn default_values(dtype: DType, n: usize) -> Values {
    match dtype {
        DType::I64 => Values::I64(vec![0; n].into()),
        DType::F64 => Values::F64(vec![0.0; n].into()),
        DType::Bool => Values::Bool(vec![false; n]),
        DType::I32 => Values::I32(vec![0; n].into()),
        DType::F32 => Values::F32(vec![0.0; n].into()),
        DType::U8 => Values::U8(vec![0; n].into()),
        DType::Str => Values::Str(std::iter::repeat_n("", n).collect()),
        DType::Bytes => Values::Bytes(std::iter::repeat_n(Vec::<u8>::new(), n).collect()),
    }
}

impl StructuredTensor {
    /// This struct array cast to `spec` (a spec from [`Spec::infer`] or [`Spec::unify`],
    /// or one given): an array with no values takes the spec's type (an empty list becomes
    /// an empty list of structs when the spec says so), `int64` and `int32` widen to
    /// `float64` (and `int32` to `int64`), a leaf becomes nullable (all valid) when the
    /// spec's is, and a field the spec has but this struct lacks is all null when the
    /// spec's leaves there are nullable. Nothing else changes; sizes are not checked
    /// (a `None`-sized spec fits any). Anything else is [`Error::SchemaMismatch`] naming
    /// the field path and both types.
    pub fn conform(&self, spec: &Spec) -> Result<StructuredTensor, Error> {
        conform_struct(self, spec, &FieldPath::root())
    }
}

fn mismatch_at(path: &FieldPath, expected: &FieldSpec, found: String) -> Error {
    Error::SchemaMismatch {
        path: path.clone(),
        expected: expected.to_string(),
        found,
        file: None,
    }
}

fn all_leaves_nullable(spec: &FieldSpec) -> bool {
    match spec {
        FieldSpec::Nullable(_) => true,
        FieldSpec::Struct(s) => s.fields.values().all(all_leaves_nullable),
        _ => false,
    }
}

fn conform_struct(
    st: &StructuredTensor,
    spec: &Spec,
    path: &FieldPath,
) -> Result<StructuredTensor, Error> {
    if st.rank() != spec.rank() {
        return Err(Error::SchemaMismatch {
            path: path.clone(),
            expected: spec.to_string(),
            found: format!("a struct of rank {}", st.rank()),
            file: None,
        });
    }
    if let Some(extra) = st.fields().keys().find(|k| !spec.fields.contains_key(*k)) {
        return Err(Error::SchemaMismatch {
            path: path.child(extra),
            expected: "no such field".to_string(),
            found: FieldSpec::of(&st.fields()[extra]).to_string(),
            file: None,
        });
    }
    let mut fields = IndexMap::new();
    for (name, fspec) in &spec.fields {
        let here = path.child(name);
        let value = match st.fields().get(name) {
            Some(v) => conform_field(v, fspec, st, &here)?,
            None if all_leaves_nullable(fspec) => null_field(
                fspec,
                st.nrows().unwrap_or(1),
                st.row_partitions(),
                st.num_structs(),
                st.rank(),
                &here,
            )?,
            None => {
                return Err(Error::SchemaMismatch {
                    path: here,
                    expected: fspec.to_string(),
                    found: "a missing field".to_string(),
                    file: None,
                })
            }
        };
        fields.insert(name.clone(), value);
    }
    Ok(StructuredTensor::from_parts_unchecked(
        st.rank(),
        st.nrows().unwrap_or(1),
        st.row_partitions().to_vec(),
        fields,
    )
    .tagged(st.shape_dtype()))
}

fn conform_field(
    value: &FieldValue,
    spec: &FieldSpec,
    parent: &StructuredTensor,
    path: &FieldPath,
) -> Result<FieldValue, Error> {
    match (value, spec) {
        (FieldValue::Struct(s), FieldSpec::Struct(sp)) => {
            Ok(FieldValue::Struct(conform_struct(s, sp, path)?))
        }
        (FieldValue::Array(a), FieldSpec::Struct(sp)) if a.values().len() == a.null_count() => {
            // an empty list of structs, or structs that were all null, read (from JSON or
            // a file) as an array without valid values: structs whose leaves are null
            if a.rank() != sp.rank() {
                return Err(mismatch_at(path, spec, FieldSpec::of_array(a).to_string()));
            }
            let parts = a.row_partitions().to_vec();
            let nrows = a.nrows().unwrap_or(1);
            let mut fields = IndexMap::new();
            for (k, f) in &sp.fields {
                fields.insert(
                    k.clone(),
                    null_field(
                        f,
                        nrows,
                        &parts,
                        a.values().len(),
                        sp.rank(),
                        &path.child(k),
                    )?,
                );
            }
            Ok(FieldValue::Struct(
                StructuredTensor::from_parts_unchecked(sp.rank(), nrows, parts, fields)
                    .tagged(parent.shape_dtype()),
            ))
        }
        (FieldValue::Array(a), leaf) => {
            let Some((dtype, rank, nullable)) = leaf_dtype_rank(leaf) else {
                return Err(mismatch_at(path, spec, FieldSpec::of_array(a).to_string()));
            };
            if a.rank() < rank && a.values().len() == a.null_count() && nullable {
                // nulls where the others have lists: null lists, read as empty lists
                return null_field(
                    leaf,
                    a.nrows().unwrap_or(1),
                    a.row_partitions(),
                    a.values().len(),
                    a.rank(),
                    path,
                )
                .map(|f| match f {
                    FieldValue::Array(x) => {
                        let n = x.values().len();
                        FieldValue::Array(
                            x.with_validity(Some(Validity::all_valid(n)))
                                .expect("a bitmap of the values' length"),
                        )
                    }
                    other => other,
                });
            }
            if a.rank() != rank {
                return Err(mismatch_at(path, spec, FieldSpec::of_array(a).to_string()));
            }
            if a.is_nullable() && !nullable && a.null_count() > 0 {
                return Err(mismatch_at(path, spec, FieldSpec::of_array(a).to_string()));
            }
            let mut out = a.clone();
            if a.dtype() != dtype && a.null_count() == a.values().len() {
                // only nulls: their (default) values take the spec's dtype
                out = out.with_values(default_values(dtype, a.values().len()))?;
            } else if a.dtype() != dtype {
                let values = cast_values(a.values(), dtype)
                    .ok_or_else(|| mismatch_at(path, spec, FieldSpec::of_array(a).to_string()))?;
                out = out.with_values(values)?;
            }
            if nullable && !out.is_nullable() {
                out = out.with_validity(Some(Validity::all_valid(out.values().len())))?;
            }
            Ok(FieldValue::Array(out))
        }
        (FieldValue::Struct(s), _) => Err(mismatch_at(path, spec, s.spec().to_string())),
    }
}

/// `values` as `dtype` when that loses nothing by the rules of [`StructuredTensor::conform`].
fn cast_values(values: &Values, dtype: DType) -> Option<Values> {
    if values.is_empty() {
        return Some(Values::empty(dtype));
    }
    Some(match (values, dtype) {
        (Values::I64(v), DType::F64) => Values::F64(v.iter().map(|&x| x as f64).collect()),
        (Values::I32(v), DType::F64) => Values::F64(v.iter().map(|&x| f64::from(x)).collect()),
        (Values::I32(v), DType::I64) => Values::I64(v.iter().map(|&x| i64::from(x)).collect()),
        (Values::U8(v), DType::I64) => Values::I64(v.iter().map(|&x| i64::from(x)).collect()),
        (Values::F32(v), DType::F64) => Values::F64(v.iter().map(|&x| f64::from(x)).collect()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_json_round_trips_and_names_bad_places() {
        let b = FieldSpec::Nullable(Box::new(FieldSpec::Ragged {
            shape: vec![None, Some(3)],
            dtype: DType::Str,
            ragged_rank: 1,
        }));
        let a = FieldSpec::Tensor {
            shape: vec![None],
            dtype: DType::I64,
        };
        // written b before a: the list keeps that order
        let spec = Spec {
            shape: vec![None],
            fields: IndexMap::from([("b".to_string(), b), ("a".to_string(), a)]),
        };
        let j = spec.to_json();
        assert_eq!(
            j,
            json!({"version": 2, "shape": [null], "fields": [
                {"name": "b", "kind": "ragged", "shape": [null, 3], "dtype": "string",
                 "ragged_rank": 1, "nullable": true},
                {"name": "a", "kind": "tensor", "shape": [null], "dtype": "int64"}]})
        );
        let back = Spec::from_json(&j).unwrap();
        assert_eq!(back, spec);
        assert_eq!(back.fields.keys().collect::<Vec<_>>(), ["b", "a"]);
        // version 1's object of fields still reads, in the object's order as written
        let v1 = json!({"version": 1, "shape": [null], "fields": {
            "b": {"kind": "ragged", "shape": [null, 3], "dtype": "string",
                  "ragged_rank": 1, "nullable": true},
            "a": {"kind": "tensor", "shape": [null], "dtype": "int64"}}});
        let old = Spec::from_json(&v1).unwrap();
        assert_eq!(old, spec);
        assert_eq!(old.fields.keys().collect::<Vec<_>>(), ["b", "a"]);
        let bad = json!({"version": 1, "shape": [null], "fields": {"a": {"kind": "tensor",
            "shape": [null], "dtype": "int65"}}});
        assert_eq!(
            Spec::from_json(&bad).unwrap_err().to_string(),
            "spec JSON at $.fields.a: unknown dtype \"int65\""
        );
        for (bad, message) in [
            (
                json!({"version": 2, "shape": [null], "fields": [{"name": "a", "kind": "tensor",
                    "shape": [null], "dtype": "int65"}]}),
                "spec JSON at $.fields.a: unknown dtype \"int65\"",
            ),
            (
                json!({"version": 2, "shape": [null], "fields": [{"kind": "tensor"}]}),
                "spec JSON at $.fields[0]: no \"name\"",
            ),
            (
                json!({"version": 2, "shape": [], "fields": [
                    {"name": "a", "kind": "tensor", "shape": [], "dtype": "int64"},
                    {"name": "a", "kind": "tensor", "shape": [], "dtype": "int64"}]}),
                "spec JSON at $.fields[1]: field \"a\" is listed twice",
            ),
            (
                json!({"version": 2, "shape": [], "fields": {}}),
                "spec JSON at $: \"fields\" is not a list",
            ),
            (
                json!({"version": 3, "shape": [], "fields": []}),
                "spec JSON at $.version: version 3 is not 1 or 2",
            ),
        ] {
            assert_eq!(Spec::from_json(&bad).unwrap_err().to_string(), message);
        }
        assert!(Spec::from_json(&json!({"shape": []})).is_err());
    }

    #[test]
    fn unify_widens_and_fills_unknown() {
        let p = FieldPath::root();
        let a = Node::observe(&json!({"x": 1, "s": []}), &p).unwrap();
        let b = Node::observe(&json!({"x": 2.5, "s": [{"t": "a"}]}), &p).unwrap();
        let u = unify(a, b, &p, false).unwrap();
        assert_eq!(u.describe(), "struct{x, s}");
        let spec = node_to_spec(&u, 0);
        assert_eq!(
            spec.to_string(),
            "StructuredTensorSpec(shape=(), fields={\"x\": TensorSpec(shape=(), dtype=float64), \
             \"s\": StructuredTensorSpec(shape=(None,), fields={\"t\": TensorSpec(shape=(None,), \
             dtype=string)})})"
        );
        let c = Node::observe(&json!({"x": "no"}), &p).unwrap();
        let e = unify(u, c, &p, true).unwrap_err();
        assert_eq!(
            e.to_string(),
            "field ('x',) has type string, but the schema has float64"
        );
    }
}
