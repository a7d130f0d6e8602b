//! The crate's error type, the field-path type used in messages, and the panic helper.

use std::fmt;

use crate::values::DType;

/// A path of field names (TensorFlow's tuple of strings), printed like a Python tuple:
/// `()`, `('a',)`, `('a', 'b')`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FieldPath(pub Vec<String>);

impl FieldPath {
    /// The empty path (the root struct).
    pub fn root() -> FieldPath {
        FieldPath(Vec::new())
    }

    /// This path extended by one name.
    pub fn child(&self, name: &str) -> FieldPath {
        let mut names = self.0.clone();
        names.push(name.to_string());
        FieldPath(names)
    }

    /// The names of the path.
    pub fn names(&self) -> &[String] {
        &self.0
    }

    /// Number of names.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True for the root path.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, name) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "'{name}'")?;
        }
        if self.0.len() == 1 {
            f.write_str(",")?;
        }
        f.write_str(")")
    }
}

impl From<&str> for FieldPath {
    fn from(name: &str) -> FieldPath {
        FieldPath(vec![name.to_string()])
    }
}

impl From<String> for FieldPath {
    fn from(name: String) -> FieldPath {
        FieldPath(vec![name])
    }
}

impl From<&[&str]> for FieldPath {
    fn from(names: &[&str]) -> FieldPath {
        FieldPath(names.iter().map(|s| s.to_string()).collect())
    }
}

impl<const N: usize> From<[&str; N]> for FieldPath {
    fn from(names: [&str; N]) -> FieldPath {
        FieldPath(names.iter().map(|s| s.to_string()).collect())
    }
}

impl From<Vec<&str>> for FieldPath {
    fn from(names: Vec<&str>) -> FieldPath {
        FieldPath(names.into_iter().map(str::to_string).collect())
    }
}

impl From<Vec<String>> for FieldPath {
    fn from(names: Vec<String>) -> FieldPath {
        FieldPath(names)
    }
}

impl From<&FieldPath> for FieldPath {
    fn from(path: &FieldPath) -> FieldPath {
        path.clone()
    }
}

/// A shape printed like TensorFlow's `TensorShape`: `()`, `(5,)`, `(2, None)`.
pub(crate) struct ShapeDisplay<'a>(pub &'a [Option<usize>]);

impl fmt::Display for ShapeDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match d {
                Some(n) => write!(f, "{n}")?,
                None => f.write_str("None")?,
            }
        }
        if self.0.len() == 1 {
            f.write_str(",")?;
        }
        f.write_str(")")
    }
}

/// Errors of this crate. Messages follow TensorFlow's in substance and name the offending
/// value and its position (a field path, an axis, an index).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A field name that does not match `^[a-zA-Z][a-zA-Z0-9_]*$`.
    InvalidFieldName {
        /// The rejected name.
        name: String,
        /// Path of the struct that holds it.
        path: FieldPath,
    },
    /// A value under `path` could not be converted (TensorFlow's `Error parsing path`).
    ParsePath {
        /// Path of the field whose values failed.
        path: FieldPath,
        /// What went wrong.
        source: Box<Error>,
    },
    /// Two elements of one array have types that do not combine (int and float do).
    MixedTypes {
        /// The dtype seen first.
        first: DType,
        /// The dtype it clashes with.
        second: DType,
    },
    /// A JSON `null`, which has no tensor dtype.
    NullValue,
    /// An integer outside the `int64` range.
    IntegerOutOfRange {
        /// The integer as written.
        value: String,
    },
    /// Scalars at different list depths inside one value.
    ScalarDepthMismatch {
        /// Depth of the first scalar.
        first: usize,
        /// Depth of a scalar that disagrees.
        second: usize,
    },
    /// Empty lists nested deeper than the scalars of the same value.
    EmptyListTooDeep {
        /// Depth of the scalars.
        scalar_depth: usize,
        /// Depth of the deepest empty list.
        empty_depth: usize,
    },
    /// Dictionaries found at two different list depths.
    InconsistentDictDepth {
        /// Path of the value.
        path: FieldPath,
        /// One depth at which dictionaries were found.
        first: usize,
        /// Another depth.
        second: usize,
    },
    /// A non-dictionary where the depth of the dictionaries says one must be.
    ExpectedDict {
        /// Path of the value.
        path: FieldPath,
        /// List depth of the offending element.
        depth: usize,
        /// What was found instead (`a number`, `a list`, ...).
        found: &'static str,
    },
    /// A dict inside a value read as a leaf array (`Array::from_json`).
    DictInArray {
        /// List depth of the dict.
        depth: usize,
    },
    /// A key present in one struct of a list but missing in a sibling.
    MissingKey {
        /// Path of the list of structs.
        path: FieldPath,
        /// The missing key.
        key: String,
    },
    /// `from_json` of something that is neither an object nor a nested list of objects.
    NotAStruct {
        /// What was found (`a number`, `a list of numbers`, ...).
        found: &'static str,
    },
    /// A field path that does not exist.
    FieldNotFound {
        /// The path asked for.
        path: FieldPath,
    },
    /// A field whose outer shape disagrees with the struct's shape.
    IncompatibleFieldShape {
        /// Field name.
        field: String,
        /// The field's outer shape (its first `rank` dimensions).
        field_shape: Vec<Option<usize>>,
        /// The struct's shape.
        shape: Vec<Option<usize>>,
    },
    /// `row_partitions` given for a rank below 2.
    RowPartitionsBelowRank2,
    /// `row_partitions` of the wrong length.
    RowPartitionsLength {
        /// `rank - 1`.
        expected: usize,
        /// The number given.
        got: usize,
    },
    /// `nrows` given for a rank-0 struct.
    NrowsAtRank0,
    /// Rank 1, no fields and no `nrows`.
    NrowsRequired,
    /// Rank > 1, no fields and no `row_partitions` (and the shape is not fully known).
    RowPartitionsRequired,
    /// Fields (or `nrows`) disagree on the number of rows.
    IncompatibleNrows {
        /// The number of rows expected.
        expected: usize,
        /// The number found.
        got: usize,
        /// The field that disagrees, if any.
        field: Option<String>,
    },
    /// A field whose row partition at `axis` differs from the struct's.
    IncompatibleRowSplits {
        /// The field that disagrees.
        field: String,
        /// The axis whose partition differs (1-based, as `row_splits(axis)`).
        axis: usize,
    },
    /// A static dimension that disagrees with the row lengths found.
    IncompatibleDim {
        /// The axis.
        axis: usize,
        /// The static size asked for.
        expected: usize,
    },
    /// An axis outside `-rank..rank`.
    AxisOutOfRange {
        /// The argument's name (`outer_axis`, `inner_axis`).
        name: &'static str,
        /// The axis given.
        axis: isize,
        /// The rank.
        rank: usize,
    },
    /// `merge_dims` with `outer_axis > inner_axis`.
    AxisOrder {
        /// The outer axis (after normalisation).
        outer: usize,
        /// The inner axis (after normalisation).
        inner: usize,
    },
    /// An operation that needs rank >= 1 on a rank-0 struct.
    RankTooLow {
        /// The struct's shape.
        shape: Vec<Option<usize>>,
    },
    /// A row partition whose `nvals` differs from the number of rows it partitions.
    PartitionMismatch {
        /// The partition's `nvals`.
        nvals: usize,
        /// The rows to partition.
        nrows: usize,
    },
    /// A partition whose row count differs from the number of positions above it.
    LayerMismatch {
        /// The axis the partition splits (1 = the first partition).
        axis: usize,
        /// The positions the dimension above has.
        expected: usize,
        /// The rows the partition has.
        got: usize,
    },
    /// `promote` with a path shorter than two names.
    PromotePathTooShort {
        /// The path given.
        path: FieldPath,
    },
    /// `with_updates` with an empty name.
    UpdateEmptyName {
        /// The full path of the update.
        path: FieldPath,
    },
    /// `with_updates` that updates a field and one of its descendants.
    UpdateParentAndChild {
        /// The parent path.
        parent: FieldPath,
        /// The child path.
        child: FieldPath,
    },
    /// `with_updates` below a field that does not exist.
    UpdateMissingParent {
        /// The full path of the update.
        path: FieldPath,
        /// The missing parent.
        parent: FieldPath,
    },
    /// `with_updates` below a field that is not a struct.
    UpdateParentNotStruct {
        /// The full path of the update.
        path: FieldPath,
        /// The parent that is an array.
        parent: FieldPath,
    },
    /// A transforming update of a field that does not exist.
    UpdateTransformMissing {
        /// The full path.
        path: FieldPath,
    },
    /// Deleting a field that does not exist.
    UpdateDeleteMissing {
        /// The full path.
        path: FieldPath,
    },
    /// `with_updates` produced a field that does not fit the struct.
    UpdateFailed {
        /// Path of the struct being rebuilt (empty for the root).
        path: FieldPath,
        /// Why.
        source: Box<Error>,
    },
    /// At rank 0, an index key that is neither a field name nor a full slice.
    ScalarKey {
        /// The key, printed.
        key: String,
    },
    /// At rank `rank`, the key after `rank` positional keys is not a field name.
    KeyNotFieldName {
        /// The key, printed.
        key: String,
        /// Its position in the key list.
        position: usize,
    },
    /// An index key that is not supported (`...`, `newaxis`, a name where a position goes).
    UnsupportedKey {
        /// The key, printed.
        key: String,
    },
    /// More positional keys than an array has dimensions.
    TooManyIndices {
        /// The array's rank.
        rank: usize,
        /// Keys given.
        got: usize,
    },
    /// An integer index outside a dimension.
    IndexOutOfRange {
        /// The index given.
        index: isize,
        /// The dimension's size.
        size: usize,
        /// The axis.
        axis: usize,
    },
    /// A slice with step 0.
    ZeroSliceStep,
    /// A row partition or offsets that are invalid or overflow `i32`.
    InvalidPartition {
        /// What was wrong.
        what: String,
    },
    /// Flat values whose count does not match the partitions.
    ValuesLength {
        /// The count the partitions require.
        expected: usize,
        /// The count given.
        got: usize,
    },
    /// A value of the wrong dtype.
    DTypeMismatch {
        /// The dtype required.
        expected: DType,
        /// The dtype found.
        got: DType,
    },
    /// A field value of the wrong kind (array where a struct is needed, or the reverse).
    NotAnArray {
        /// Path of the value.
        path: FieldPath,
    },
    /// An error of the ragged layer (an invalid or overflowing partition).
    Ragged(ragged_core::Error),
    /// `from_fields_and_rank` with no fields.
    NoFields,
    /// JSON nested deeper than the ingestion limit.
    NestingTooDeep {
        /// The limit on lists plus objects along one path.
        limit: usize,
        /// Path of the struct where the limit was reached.
        path: FieldPath,
    },
    /// JSON text that does not parse.
    Json {
        /// The parser's message.
        message: String,
    },
    /// An Arrow array this conversion cannot take, or a tensor Arrow cannot hold (feature
    /// `arrow`).
    Arrow {
        /// The field path where it happened (the root for the array given).
        path: FieldPath,
        /// What was wrong.
        problem: String,
    },
    /// `concat` or `stack` of an empty list.
    ConcatEmpty,
    /// `concat` of structs whose field paths differ (the paths in some but not all).
    ConcatPathsDiffer {
        /// The paths present in some, but not all, inputs (sorted).
        paths: Vec<FieldPath>,
    },
    /// `concat` of structs whose nested structs (or roots) differ in rank.
    ConcatSubmessageRanks {
        /// The path of the first struct whose rank differs (the root is `()`).
        path: FieldPath,
    },
    /// `concat` of leaf fields of different rank.
    ConcatRankMismatch {
        /// The field.
        path: FieldPath,
        /// The input whose field differs.
        index: usize,
        /// The rank of the field in input 0.
        expected: usize,
        /// The rank found.
        got: usize,
    },
    /// `concat` on an inner axis of inputs whose outer dimensions differ.
    ConcatShapeMismatch {
        /// The input whose shape differs from input 0's.
        index: usize,
        /// The concat axis.
        axis: usize,
    },
    /// A `gather` index outside `0..size`.
    GatherIndexOutOfRange {
        /// Position of the index in the flattened indices.
        position: usize,
        /// The index given.
        index: i64,
        /// The size of the gathered dimension (of that row, when ragged).
        size: usize,
    },
    /// `random_shuffle` of a rank-0 struct.
    ShuffleScalar,
    /// `boolean_mask` with a mask whose length is not the struct's row count.
    BooleanMaskLength {
        /// The struct's row count.
        expected: usize,
        /// The mask's length.
        got: usize,
    },
    /// An op that is not defined for a dtype (`ones_like` of strings).
    UnsupportedDType {
        /// The op.
        op: &'static str,
        /// The dtype asked for.
        dtype: DType,
    },
    /// A batched `gather` (`batch_dims = 1`) on axis 0: the axis must come after the batch.
    GatherBatchAxis {
        /// The axis given (after normalisation).
        axis: usize,
    },
    /// A batched `gather` whose indices do not have one entry per batch row.
    GatherBatchLength {
        /// The params' row count.
        expected: usize,
        /// The number of index entries.
        got: usize,
    },
    /// `gather_with_batch_dims`: `batch_dims` outside `0..=rank(indices)` (after adding
    /// `rank(indices)` to a negative one).
    GatherBatchDimsRange {
        /// The `batch_dims` given.
        batch_dims: isize,
        /// The rank of the indices.
        indices_rank: usize,
    },
    /// `gather_with_batch_dims`: `batch_dims` not below the rank of the params.
    GatherBatchDimsRank {
        /// The `batch_dims` (non-negative).
        batch_dims: usize,
        /// The rank of the params.
        rank: usize,
    },
    /// `gather_with_batch_dims`: an axis inside the batch dimensions.
    GatherAxisInBatch {
        /// The axis (non-negative).
        axis: usize,
        /// The `batch_dims`.
        batch_dims: usize,
    },
    /// `gather_with_batch_dims`: the first `batch_dims` dimensions of the indices and the
    /// params differ (their sizes, or the row lengths of a ragged one).
    GatherBatchShape {
        /// The first batch dimension that differs.
        axis: usize,
        /// The indices' static shape.
        indices_shape: Vec<Option<usize>>,
        /// The params' static shape.
        params_shape: Vec<Option<usize>>,
    },
    /// `gather_with_batch_dims`: indices that are not `int32` or `int64`.
    GatherIndicesDType {
        /// The dtype given.
        dtype: DType,
    },
    /// `DynamicRaggedShape::try_new`: partition `axis` has a row count other than the elements
    /// of partition `axis - 1`.
    ShapeMisaligned {
        /// The partition whose rows do not match.
        axis: usize,
        /// The previous partition's element count.
        expected: usize,
        /// This partition's row count.
        got: usize,
    },
    /// `DynamicRaggedShape::try_new`: the last partition's element count is not
    /// `inner_shape[0]` (or the inner shape is empty under partitions).
    ShapeInnerMismatch {
        /// The last partition's element count.
        nvals: usize,
        /// The inner shape given.
        inner_shape: Vec<usize>,
    },
    /// A `DynamicRaggedShape` argument out of its range (TensorFlow's `ValueError`s of
    /// `from_lengths`, `_with_num_row_partitions`, `_alt_inner_shape`, slicing).
    ShapeArgument {
        /// What is wrong, in TensorFlow's words, with the values.
        problem: String,
    },
    /// `DynamicRaggedShape` indexing past the rank, or still negative after adding it.
    ShapeIndex {
        /// The index given (after adding the rank to a negative one).
        index: isize,
        /// The rank.
        rank: usize,
    },
    /// `DynamicRaggedShape` dimension asked of a ragged dimension.
    ShapeNotUniform {
        /// The dimension.
        index: usize,
    },
    /// Two shapes (or a value and a shape) that do not broadcast: in dimension `axis`, at
    /// flattened position `position` of the dimensions before it, the sizes differ and
    /// neither dimension is uniformly 1.
    CannotBroadcast {
        /// The dimension of the result.
        axis: usize,
        /// The position of the dimensions before `axis` (flattened).
        position: usize,
        /// The size on the first side.
        left: usize,
        /// The size on the second side (the target's, for `broadcast_to`).
        right: usize,
    },
    /// A shape or row partition dtype other than `int32`/`int64`, or two shapes with row
    /// partitions of different dtypes.
    ShapeDType {
        /// What is wrong.
        problem: String,
    },
    /// `from_json_with_spec`: a value that does not fit the spec (a scalar for a list, a
    /// key the spec lacks or misses, another rank, incompatible sizes).
    SpecMismatch {
        /// Where.
        path: FieldPath,
        /// The value, the spec and what differs.
        problem: String,
    },
    /// `from_json_with_spec`: elements that cannot take the spec's dtype or layout (an
    /// integer out of range, a float for an integer type, ragged rows for a dense field).
    SpecValue {
        /// What is wrong.
        problem: String,
    },
    /// Offsets and bytes that do not make a string column (see `StringColumn`).
    InvalidStringColumn {
        /// The position in the offsets (or the element) where the problem is.
        index: usize,
        /// What is wrong there.
        what: String,
    },
    /// A Parquet file whose content the conversion cannot take (a column type we do not
    /// hold, a null, a bad field name: the source names the column's path) (feature
    /// `parquet`).
    InParquetFile {
        /// The file.
        path: std::path::PathBuf,
        /// The conversion's error.
        source: Box<Error>,
    },
    /// A file of a Parquet directory whose type differs from the first file's (feature
    /// `parquet`).
    ParquetSchemaMismatch {
        /// The file that differs.
        path: std::path::PathBuf,
        /// The first file of the directory (sorted order).
        first: std::path::PathBuf,
        /// The first file's type, sizes left out.
        expected: String,
        /// This file's type, sizes left out.
        found: String,
    },
    /// A directory of hive partitions (`key=value/...`) we cannot read or write as asked
    /// (feature `parquet`).
    HivePartition {
        /// The file or directory.
        path: std::path::PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// A Parquet directory without data files (feature `parquet`).
    ParquetDirEmpty {
        /// The directory.
        dir: std::path::PathBuf,
    },
    /// An error in one record of a JSON document or JSON Lines input: the record's index
    /// (0-based) and, for text, its line and the column within that line (1-based).
    InRecord {
        /// The record's index in the input (0-based).
        record: usize,
        /// The line the record is on (1-based), for text input.
        line: Option<usize>,
        /// The column within that line (1-based, in bytes), when the parser gave one.
        column: Option<usize>,
        /// What was wrong.
        source: Box<Error>,
    },
    /// A value whose type does not fit a schema (a spec given or unified from other
    /// inputs): the field path, both types, and the file when there is one.
    SchemaMismatch {
        /// The field path.
        path: FieldPath,
        /// The type the schema has there.
        expected: String,
        /// The type found.
        found: String,
        /// The file read, if any.
        file: Option<std::path::PathBuf>,
    },
    /// A spec's JSON form that cannot be read (see `Spec::from_json`).
    SpecJson {
        /// Where in the JSON, as a path of keys.
        at: String,
        /// What is wrong.
        problem: String,
    },
    /// A directory reached a second time while listing a Parquet directory, through a
    /// symbolic link (a loop, or a second path to the same files) (feature `parquet`).
    ParquetDirRevisit {
        /// The path that leads to it again.
        path: std::path::PathBuf,
        /// The path it was first reached by.
        first: std::path::PathBuf,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::ConcatEmpty => f.write_str("values must not be an empty list"),
            Error::ConcatPathsDiffer { paths } => {
                f.write_str("Some paths are present in some, but not all, structured tensors: {")?;
                for (i, p) in paths.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{p}")?;
                }
                f.write_str("}")
            }
            Error::ConcatSubmessageRanks { path } => {
                write!(f, "Ranks of sub-message do not match (at path {path})")
            }
            Error::ConcatRankMismatch {
                path,
                index,
                expected,
                got,
            } => write!(
                f,
                "field {path} of value {index} must have rank {expected} like value 0's, \
                 but has rank {got}"
            ),
            Error::ConcatShapeMismatch { index, axis } => write!(
                f,
                "value {index} has outer dimensions (before axis {axis}) incompatible with value 0's"
            ),
            Error::GatherIndexOutOfRange {
                position,
                index,
                size,
            } => write!(f, "indices[{position}] = {index} is not in [0, {size})"),
            Error::ShuffleScalar => f.write_str("Cannot shuffle a scalar StructuredTensor"),
            Error::BooleanMaskLength { expected, got } => write!(
                f,
                "mask has {got} elements but the struct has {expected} rows"
            ),
            Error::UnsupportedDType { op, dtype } => write!(f, "{op} is not defined for {dtype}"),
            Error::GatherBatchAxis { axis } => write!(
                f,
                "batch_dims=1 out of bounds: expected batch_dims <= axis, got axis={axis}"
            ),
            Error::GatherBatchLength { expected, got } => write!(
                f,
                "indices have {got} batch rows but params have {expected} rows"
            ),
            Error::GatherBatchDimsRange {
                batch_dims,
                indices_rank,
            } => write!(
                f,
                "batch_dims={batch_dims} must be between 0 and rank(indices)={indices_rank}"
            ),
            Error::GatherBatchDimsRank { batch_dims, rank } => write!(
                f,
                "batch_dims must be less than rank(params) (batch_dims={batch_dims}, rank={rank})"
            ),
            Error::GatherAxisInBatch { axis, batch_dims } => write!(
                f,
                "axis must be greater than or equal to batch_dims (axis={axis}, \
                 batch_dims={batch_dims})"
            ),
            Error::GatherBatchShape {
                axis,
                indices_shape,
                params_shape,
            } => write!(
                f,
                "batch shape from indices {} does not match params shape {} (dimension {axis} \
                 differs)",
                ShapeDisplay(indices_shape),
                ShapeDisplay(params_shape)
            ),
            Error::ShapeMisaligned {
                axis,
                expected,
                got,
            } => write!(
                f,
                "RowPartitions in DynamicRaggedShape do not align between {} and {axis} \
                 ({expected} values against {got} rows)",
                axis - 1
            ),
            Error::ShapeInnerMismatch { nvals, inner_shape } => write!(
                f,
                "Last row partition does not match inner_shape. (the partition has {nvals} \
                 values, inner_shape is {inner_shape:?})"
            ),
            Error::ShapeArgument { problem } => f.write_str(problem),
            Error::ShapeIndex { index, rank } => {
                if *index < 0 {
                    write!(f, "Index must be non-negative: {index}")
                } else {
                    write!(f, "Index is too big: {index}>={rank}")
                }
            }
            Error::ShapeNotUniform { index } => write!(f, "Index {index} is not uniform"),
            Error::CannotBroadcast {
                axis,
                position,
                left,
                right,
            } => write!(
                f,
                "Cannot broadcast: dimension {axis} has size {left} against {right} at \
                 position {position}"
            ),
            Error::ShapeDType { problem } => f.write_str(problem),
            Error::SpecMismatch { path, problem } => {
                write!(f, "Value at {path} does not match typespec: {problem}")
            }
            Error::SpecValue { problem } => f.write_str(problem),
            Error::GatherIndicesDType { dtype } => {
                write!(f, "indices must be int32 or int64, got {dtype}")
            }
            Error::Arrow { path, problem } => {
                write!(f, "Arrow conversion at path {path}: {problem}")
            }
            Error::InvalidFieldName { name, path } => write!(
                f,
                "Field name '{name}' is not currently allowed. Names must match \
                 ^[a-zA-Z][a-zA-Z0-9_]*$ (struct at path {path})"
            ),
            Error::ParsePath { path, source } => write!(f, "Error parsing path {path}: {source}"),
            Error::MixedTypes { first, second } => write!(
                f,
                "values of incompatible types {first} and {second} in one array"
            ),
            Error::NullValue => f.write_str("null values are not supported"),
            Error::IntegerOutOfRange { value } => {
                write!(f, "integer {value} does not fit in int64")
            }
            Error::ScalarDepthMismatch { first, second } => write!(
                f,
                "all scalar values must have the same nesting depth (found depths {first} and {second})"
            ),
            Error::EmptyListTooDeep {
                scalar_depth,
                empty_depth,
            } => write!(
                f,
                "empty list nesting ({empty_depth}) is greater than scalar value nesting ({scalar_depth})"
            ),
            Error::InconsistentDictDepth {
                path,
                first,
                second,
            } => write!(
                f,
                "Inconsistent depth of dictionaries at path {path}: found at list depths {first} and {second}"
            ),
            Error::ExpectedDict { path, depth, found } => write!(
                f,
                "Expected dict or nested list/tuple of dict at path {path}: found {found} at list depth {depth}"
            ),
            Error::DictInArray { depth } => write!(
                f,
                "a leaf array cannot hold a dict (found one at list depth {depth}); \
                 StructuredTensor::from_json reads dicts"
            ),
            Error::MissingKey { path, key } => write!(
                f,
                "key '{key}' is missing from a struct at path {path} but present in a sibling struct"
            ),
            Error::NotAStruct { found } => write!(
                f,
                "a StructuredTensor is built from an object or a nested list of objects, found {found}"
            ),
            Error::FieldNotFound { path } => write!(f, "Field path {path} not found"),
            Error::IncompatibleFieldShape {
                field,
                field_shape,
                shape,
            } => write!(
                f,
                "Field {field} has shape {}, which is incompatible with the shape that was \
                 specified or inferred from other fields: {}",
                ShapeDisplay(field_shape),
                ShapeDisplay(shape)
            ),
            Error::RowPartitionsBelowRank2 => {
                f.write_str("row_partitions must be None or [] if shape.rank<2")
            }
            Error::RowPartitionsLength { expected, got } => write!(
                f,
                "len(row_partitions) must be shape.rank-1 (expected {expected}, got {got})"
            ),
            Error::NrowsAtRank0 => f.write_str("nrows must be None if shape.rank==0"),
            Error::NrowsRequired => {
                f.write_str("nrows must be specified if rank==1 and `fields` is empty.")
            }
            Error::RowPartitionsRequired => {
                f.write_str("row_partitions must be specified if rank>1 and `fields` is empty.")
            }
            Error::IncompatibleNrows {
                expected,
                got,
                field,
            } => match field {
                Some(name) => write!(
                    f,
                    "fields have incompatible nrows: field {name} has {got} rows, expected {expected}"
                ),
                None => write!(f, "fields have incompatible nrows: {got} rows, expected {expected}"),
            },
            Error::IncompatibleRowSplits { field, axis } => write!(
                f,
                "field {field} has incompatible row_splits at axis {axis}"
            ),
            Error::IncompatibleDim { axis, expected } => write!(
                f,
                "dimension {axis} is not uniform with size {expected} as the shape requires"
            ),
            Error::AxisOutOfRange { name, axis, rank } => write!(
                f,
                "{name}={axis} out of bounds: expected {}<={name}<{rank} (rank(self)={rank})",
                -(*rank as isize)
            ),
            Error::AxisOrder { outer, inner } => write!(
                f,
                "Expected outer_axis ({outer}) to be less than or equal to inner_axis ({inner})"
            ),
            Error::RankTooLow { shape } => {
                write!(f, "Shape {} must have rank at least 1", ShapeDisplay(shape))
            }
            Error::PartitionMismatch { nvals, nrows } => write!(
                f,
                "row_partition has nvals={nvals} but the value it partitions has {nrows} rows"
            ),
            Error::LayerMismatch {
                axis,
                expected,
                got,
            } => write!(
                f,
                "the row partition of axis {axis} has {got} rows, but the dimension above it has \
                 {expected} positions"
            ),
            Error::PromotePathTooShort { path } => write!(
                f,
                "source_path must have length at least two, got {path}"
            ),
            Error::UpdateEmptyName { path } => write!(
                f,
                "`StructuredTensor.with_updates` does not allow empty names {path}."
            ),
            Error::UpdateParentAndChild { parent, child } => write!(
                f,
                "`StructuredTensor.with_updates` does not allow both parent and child nodes to be \
                 updated: parent={parent}, child={child}. If needed you can update child nodes in \
                 the parent update value."
            ),
            Error::UpdateMissingParent { path, parent } => write!(
                f,
                "`StructuredTensor.with_updates` cannot create new sub-field {path} if parent \
                 field {parent} is not set."
            ),
            Error::UpdateParentNotStruct { path, parent } => write!(
                f,
                "`StructuredTensor.with_updates` cannot create new sub-field {path} if parent \
                 structure {parent} is not a `StructuredTensor` that can contain sub-structures \
                 -- it is an array."
            ),
            Error::UpdateTransformMissing { path } => write!(
                f,
                "`StructuredTensor.with_updates` cannot update the field {path} because a \
                 transforming function was given, but that field does not already exist."
            ),
            Error::UpdateDeleteMissing { path } => write!(
                f,
                "`StructuredTensor.with_updates` cannot delete field {path} because it is not present."
            ),
            Error::UpdateFailed { path, source } => {
                if path.is_empty() {
                    write!(f, "`StructuredTensor.with_updates` failed: {source}")
                } else {
                    write!(f, "`StructuredTensor.with_updates` failed for field {path}: {source}")
                }
            }
            Error::ScalarKey { key } => write!(
                f,
                "Key for indexing a StructuredTensor must be a string or a full slice (':'), got {key}"
            ),
            Error::KeyNotFieldName { key, position } => write!(
                f,
                "Key for indexing a StructuredTensor must be a string, got {key} at position {position}"
            ),
            Error::UnsupportedKey { key } => write!(f, "Slicing not supported for {key}"),
            Error::TooManyIndices { rank, got } => write!(
                f,
                "too many indices: {got} positional keys for an array of rank {rank}"
            ),
            Error::IndexOutOfRange { index, size, axis } => write!(
                f,
                "index {index} out of bounds for axis {axis} with size {size}"
            ),
            Error::ZeroSliceStep => f.write_str("slice step cannot be zero"),
            Error::InvalidPartition { what } => write!(f, "invalid row partition: {what}"),
            Error::ValuesLength { expected, got } => write!(
                f,
                "the partitions need {expected} flat values, got {got}"
            ),
            Error::DTypeMismatch { expected, got } => {
                write!(f, "expected dtype {expected}, got {got}")
            }
            Error::NotAnArray { path } => {
                write!(f, "the value at path {path} is a StructuredTensor, not an array")
            }
            Error::Ragged(e) => write!(f, "{e}"),
            Error::NoFields => f.write_str("Must provide at least one field"),
            Error::NestingTooDeep { limit, path } => write!(
                f,
                "JSON nested deeper than {limit} lists and objects at path {path}"
            ),
            Error::Json { message } => write!(f, "invalid JSON text: {message}"),
            Error::InRecord {
                record,
                line,
                column,
                source,
            } => {
                write!(f, "record {record}")?;
                match (line, column) {
                    (Some(l), Some(c)) => write!(f, " (line {l}, column {c})")?,
                    (Some(l), None) => write!(f, " (line {l})")?,
                    _ => {}
                }
                write!(f, ": {source}")
            }
            Error::SchemaMismatch {
                path,
                expected,
                found,
                file,
            } => {
                if let Some(file) = file {
                    write!(f, "{}: ", file.display())?;
                }
                write!(
                    f,
                    "field {path} has type {found}, but the schema has {expected}"
                )
            }
            Error::SpecJson { at, problem } => {
                write!(f, "spec JSON at {at}: {problem}")
            }
            Error::InvalidStringColumn { index, what } => {
                write!(f, "invalid string column at offset {index}: {what}")
            }
            Error::InParquetFile { path, source } => {
                write!(f, "Parquet file {}: {source}", path.display())
            }
            Error::ParquetSchemaMismatch {
                path,
                first,
                expected,
                found,
            } => write!(
                f,
                "Parquet file {} has type {found}, but the first file {} has {expected}",
                path.display(),
                first.display()
            ),
            Error::HivePartition { path, problem } => {
                write!(f, "hive partitions at {}: {problem}", path.display())
            }
            Error::ParquetDirEmpty { dir } => write!(
                f,
                "Parquet directory {} holds no data files (names starting with '.' or '_' \
                 are skipped)",
                dir.display()
            ),
            Error::ParquetDirRevisit { path, first } => write!(
                f,
                "Parquet directory {} is {} again (through a symbolic link); each directory \
                 is read once, so links to an ancestor or to another directory of the tree \
                 are refused",
                path.display(),
                first.display()
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::ParsePath { source, .. }
            | Error::UpdateFailed { source, .. }
            | Error::InParquetFile { source, .. }
            | Error::InRecord { source, .. } => Some(&**source),
            Error::Ragged(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ragged_core::Error> for Error {
    fn from(e: ragged_core::Error) -> Error {
        Error::Ragged(e)
    }
}

/// Panics for an out-of-range index with the index and the size in the message.
#[cold]
#[track_caller]
pub(crate) fn index_panic(what: &str, index: usize, size: usize) -> ! {
    panic!("{what} {index} out of bounds for a value with {size} elements")
}

/// True when `name` is a valid field name: `^[a-zA-Z][a-zA-Z0-9_]*$`.
pub fn is_valid_field_name(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check_name(name: &str, ok: bool) {
        assert_eq!(is_valid_field_name(name), ok, "{name:?}");
    }

    #[test]
    fn field_name_rule() {
        check_name("a", true);
        check_name("Foo", true);
        check_name("f3_1", true);
        check_name("a_b_9", true);
        check_name("", false);
        check_name("_", false);
        check_name("_a", false);
        check_name("1a", false);
        check_name("a-b", false);
        check_name("a b", false);
        check_name("é", false);
        check_name("aé", false);
    }

    #[test]
    fn paths_print_like_python_tuples() {
        assert_eq!(FieldPath::root().to_string(), "()");
        assert_eq!(FieldPath::from("a").to_string(), "('a',)");
        assert_eq!(FieldPath::from(["a", "b"]).to_string(), "('a', 'b')");
        assert_eq!(ShapeDisplay(&[]).to_string(), "()");
        assert_eq!(ShapeDisplay(&[Some(5)]).to_string(), "(5,)");
        assert_eq!(ShapeDisplay(&[Some(2), None]).to_string(), "(2, None)");
    }
}
