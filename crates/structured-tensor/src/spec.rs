//! `Spec`: the type of a struct array (shape plus field types), comparable and printable.

use std::fmt;
use std::hash::{Hash, Hasher};

use indexmap::IndexMap;

use crate::array::Array;
use crate::error::ShapeDisplay;
use crate::structured::{FieldValue, StructuredTensor};
use crate::values::DType;

/// The type of one field.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FieldSpec {
    /// A dense array (TensorFlow's `TensorSpec`).
    Tensor {
        /// Static shape.
        shape: Vec<Option<usize>>,
        /// Element type.
        dtype: DType,
    },
    /// A ragged array (TensorFlow's `RaggedTensorSpec`).
    Ragged {
        /// Static shape (`None` for ragged dimensions).
        shape: Vec<Option<usize>>,
        /// Element type.
        dtype: DType,
        /// Number of partitions down to the innermost ragged one.
        ragged_rank: usize,
    },
    /// A nested struct array.
    Struct(Spec),
    /// A leaf (`Tensor` or `Ragged`) whose values may be null: a validity bitmap beside
    /// the values, as Arrow has (not in TensorFlow).
    Nullable(Box<FieldSpec>),
}

/// The type of a struct array (TensorFlow's `StructuredTensor.Spec`): its static shape and
/// the type of every field.
///
/// The fields keep the order they were written in; two specs with the same fields in a
/// different order are equal (and hash alike), as two struct arrays are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// Static shape (`None` for ragged dimensions).
    pub shape: Vec<Option<usize>>,
    /// Field types by name, in the order they were written.
    pub fields: IndexMap<String, FieldSpec>,
}

impl Hash for Spec {
    /// Hashes the fields in name order, so that equal specs (whatever their field order)
    /// hash alike.
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.shape.hash(state);
        let mut fields: Vec<(&String, &FieldSpec)> = self.fields.iter().collect();
        fields.sort_unstable_by(|a, b| a.0.cmp(b.0));
        fields.hash(state);
    }
}

impl Spec {
    /// The spec of a struct array.
    pub fn of(st: &StructuredTensor) -> Spec {
        Spec {
            shape: st.shape(),
            fields: st
                .fields()
                .iter()
                .map(|(k, v)| (k.clone(), FieldSpec::of(v)))
                .collect(),
        }
    }

    /// The rank.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
}

impl FieldSpec {
    /// The spec of a field value.
    pub fn of(value: &FieldValue) -> FieldSpec {
        match value {
            FieldValue::Array(a) => FieldSpec::of_array(a),
            FieldValue::Struct(s) => FieldSpec::Struct(Spec::of(s)),
        }
    }

    /// The spec of a leaf array.
    pub fn of_array(a: &Array) -> FieldSpec {
        let leaf = FieldSpec::of_array_values(a);
        if a.is_nullable() {
            FieldSpec::Nullable(Box::new(leaf))
        } else {
            leaf
        }
    }

    /// The spec of a leaf array's values, nullability aside.
    fn of_array_values(a: &Array) -> FieldSpec {
        let shape = a.shape();
        match a
            .row_partitions()
            .iter()
            .rposition(|p| p.uniform_row_length().is_none())
        {
            None => FieldSpec::Tensor {
                shape,
                dtype: a.dtype(),
            },
            Some(last_ragged) => FieldSpec::Ragged {
                shape,
                dtype: a.dtype(),
                ragged_rank: last_ragged + 1,
            },
        }
    }
}

impl fmt::Display for FieldSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldSpec::Tensor { shape, dtype } => {
                write!(
                    f,
                    "TensorSpec(shape={}, dtype={dtype})",
                    ShapeDisplay(shape)
                )
            }
            FieldSpec::Ragged {
                shape,
                dtype,
                ragged_rank,
            } => write!(
                f,
                "RaggedTensorSpec(shape={}, dtype={dtype}, ragged_rank={ragged_rank})",
                ShapeDisplay(shape)
            ),
            FieldSpec::Struct(s) => write!(f, "{s}"),
            FieldSpec::Nullable(inner) => write!(f, "Nullable({inner})"),
        }
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "StructuredTensorSpec(shape={}, fields={{",
            ShapeDisplay(&self.shape)
        )?;
        for (i, (k, v)) in self.fields.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "\"{k}\": {v}")?;
        }
        f.write_str("})")
    }
}
