//! Real-world JSON: [`JsonOptions`] (nulls and missing keys, any field name, a spec, the
//! batch size), `from_json_with_options` and the JSON Lines reader `from_json_lines`,
//! whose errors name the record (and, for text, the line and column).

use std::collections::BTreeMap;
use std::io::BufRead;
use std::ops::Range;

use indexmap::IndexMap;
use rayon::prelude::*;
use serde_json::Value;

use crate::array::Array;
use crate::error::{is_valid_field_name, Error, FieldPath};
use crate::partition::{self, RowPartition};
use crate::schema::{self, default_values, Kind, Node};
use crate::spec::{FieldSpec, Spec};
use crate::structured::{FieldValue, StructuredTensor};
use crate::text_columns::Records;
use crate::validity::Validity;
use crate::values::{DType, Values};

/// How real-world JSON is read. The default is TensorFlow's rules (no nulls, no missing
/// keys, field names `^[a-zA-Z][a-zA-Z0-9_]*$`, types inferred), with errors that name
/// the record; each `with_*` method turns one thing on.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct JsonOptions {
    /// `null` values and keys missing from some records are nulls (the leaves below
    /// become nullable); a `null` where a list is expected is an empty list, and a `null`
    /// where an object is expected makes every leaf of that struct null. Off: refused.
    pub nulls: bool,
    /// Any UTF-8 field name (`user-id`, `_id`, `@timestamp`); off: TensorFlow's rule.
    pub any_field_names: bool,
    /// The spec every record must fit (types are then not inferred).
    pub spec: Option<Spec>,
    /// JSON Lines: records parsed and converted per batch (memory is bounded by one
    /// batch of parsed records); batches of at least 1,024 records are parsed in
    /// parallel.
    pub batch_size: usize,
    /// Default values by field path, as `tf.io.FixedLenFeature`'s `default_value`: a key
    /// missing from a record's object reads as its default (as if the record held it),
    /// with or without `nulls`; an explicit `null` stays a null. A struct field's default
    /// is an object. Each path must name a field of the spec (given or inferred) and its
    /// default must fit that field's type, else the read fails naming the path.
    pub defaults: BTreeMap<FieldPath, Value>,
}

impl Default for JsonOptions {
    fn default() -> JsonOptions {
        JsonOptions {
            nulls: false,
            any_field_names: false,
            spec: None,
            batch_size: 65_536,
            defaults: BTreeMap::new(),
        }
    }
}

impl JsonOptions {
    /// Nulls and missing keys read as nulls.
    pub fn with_nulls(mut self, nulls: bool) -> JsonOptions {
        self.nulls = nulls;
        self
    }

    /// Any UTF-8 field name allowed.
    pub fn with_any_field_names(mut self, any: bool) -> JsonOptions {
        self.any_field_names = any;
        self
    }

    /// Records read under `spec`.
    pub fn with_spec(mut self, spec: Spec) -> JsonOptions {
        self.spec = Some(spec);
        self
    }

    /// JSON Lines records per batch (at least 1).
    pub fn with_batch_size(mut self, batch_size: usize) -> JsonOptions {
        self.batch_size = batch_size.max(1);
        self
    }

    /// `value` read where the key `path` (field names from the root) is missing from a
    /// record (see [`JsonOptions::defaults`]).
    pub fn with_default(mut self, path: &[&str], value: Value) -> JsonOptions {
        let path = FieldPath(path.iter().map(|name| name.to_string()).collect());
        self.defaults.insert(path, value);
        self
    }

    /// True when these are TensorFlow's rules (the `from_json` readers apply).
    fn is_tensorflow(&self) -> bool {
        !self.nulls && !self.any_field_names && self.defaults.is_empty()
    }
}

/// Wraps `source` as an error of record `record`.
fn in_record(record: usize, line: Option<usize>, column: Option<usize>, source: Error) -> Error {
    Error::InRecord {
        record,
        line,
        column,
        source: Box::new(source),
    }
}

/// The first record of `items` whose prefix `items[..=k]` fails `f` (a binary search:
/// an error that needs two records, such as two types, belongs to the later one).
fn first_failing(items: &[Value], f: impl Fn(&Value) -> bool) -> usize {
    let (mut lo, mut hi) = (0usize, items.len());
    // invariant: items[..lo] passes, items[..hi] fails
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        if f(&Value::Array(items[..mid].to_vec())) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi.saturating_sub(1)
}

impl StructuredTensor {
    /// [`StructuredTensor::from_json`] (or, with a spec, `from_json_with_spec`) under
    /// `options`: with the default options the same result, and an error in a list of
    /// records is [`Error::InRecord`] naming the record (the first whose prefix fails,
    /// so a type that conflicts with an earlier record's is blamed on the later one).
    /// With `nulls` or `any_field_names` the input must be an object or a list of
    /// objects (records), read by the rules of [`JsonOptions`].
    pub fn from_json_with_options(
        value: &Value,
        options: &JsonOptions,
    ) -> Result<StructuredTensor, Error> {
        let read = |v: &Value| -> Result<StructuredTensor, Error> {
            if options.is_tensorflow() {
                match &options.spec {
                    Some(spec) => StructuredTensor::from_json_with_spec(v, spec),
                    None => StructuredTensor::from_json(v),
                }
            } else {
                read_records(v, options)
            }
        };
        match read(value) {
            Ok(st) => Ok(st),
            Err(e) => match value {
                Value::Array(items) if !items.is_empty() && options.is_tensorflow() => {
                    let k = first_failing(items, |v| read(v).is_ok());
                    Err(in_record(k, None, None, e))
                }
                _ => Err(e),
            },
        }
    }

    /// Reads JSON Lines (one JSON object per line; blank lines are skipped) as a rank-1
    /// struct array, a batch of `options.batch_size` records at a time: each batch is
    /// parsed (in parallel when large) and converted, and the batches' types are unified
    /// (an empty list takes a later batch's type, `int64` widens to `float64`) unless
    /// `options.spec` fixes them. Every error is [`Error::InRecord`] with the record's
    /// index, its line and (for syntax errors) the column.
    pub fn from_json_lines(
        reader: impl BufRead,
        options: &JsonOptions,
    ) -> Result<StructuredTensor, Error> {
        let mut lines = LineBatches::new(reader, options.batch_size);
        let mut batches = Vec::new();
        if options.is_tensorflow() && options.spec.is_none() {
            // Under TensorFlow's rules the batches the one-pass text reader takes append
            // to one set of columns, which become the result: memory holds the result's
            // columns and one batch, with no tensor per batch to join at the end. The
            // first batch it declines, or whose columns do not fit the earlier ones', goes
            // the general way below with the batches after it, the records before it
            // joining them as one batch (their types are what unifying their batches
            // gives: int64 and float64 make float64, an empty list takes the other's).
            let mut records: Option<Records> = None;
            while let Some(batch) = lines.next() {
                let batch = batch?;
                let fits = match (Records::read(&batch.text), &mut records) {
                    (Some(more), Some(records)) => records.append(more),
                    (Some(first), None) => {
                        records = Some(first);
                        true
                    }
                    (None, _) => false,
                };
                if !fits {
                    batches.extend(records.take().map(finish_records));
                    batches.push(read_batch(&batch, options)?);
                    break;
                }
                lines.recycle(batch);
            }
            if let Some(records) = records {
                return Ok(finish_records(records));
            }
        }
        for batch in lines {
            batches.push(read_batch(&batch?, options)?);
        }
        if batches.is_empty() {
            let spec = options.spec.clone().unwrap_or(Spec {
                shape: vec![None],
                fields: IndexMap::new(),
            });
            return StructuredTensor::from_json_with_spec(&Value::Array(Vec::new()), &spec);
        }
        let refs: Vec<&StructuredTensor> = batches.iter().collect();
        let spec = match &options.spec {
            Some(s) => s.clone(),
            None if options.nulls => Spec::infer_allowing_missing(&refs)?,
            None => Spec::infer(&refs)?,
        };
        let conformed: Vec<StructuredTensor> = batches
            .iter()
            .map(|b| b.conform(&spec))
            .collect::<Result<_, _>>()?;
        let refs: Vec<&StructuredTensor> = conformed.iter().collect();
        if refs.len() == 1 {
            return Ok(conformed.into_iter().next().expect("one batch"));
        }
        StructuredTensor::concat(&refs, 0)
    }
}

/// The struct array of records the text reader filled (its row splits are built in
/// order from 0, so they always make a partition).
fn finish_records(records: Records) -> StructuredTensor {
    records
        .finish()
        .expect("row splits built in order make a partition")
}

/// The batches of a JSON Lines input as rank-1 struct arrays, each typed on its own (or
/// by `options.spec`); [`StructuredTensor::from_json_lines`] unifies and joins them. Use
/// it to process a large input a batch at a time.
pub fn json_lines_batches<'a, R: BufRead + 'a>(
    reader: R,
    options: &'a JsonOptions,
) -> impl Iterator<Item = Result<StructuredTensor, Error>> + 'a {
    let mut lines = LineBatches::new(reader, options.batch_size);
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed {
            return None;
        }
        let result = lines.next()?.and_then(|batch| {
            let st = read_batch(&batch, options);
            lines.recycle(batch);
            st
        });
        failed = result.is_err();
        Some(result)
    })
}

/// One batch of JSON Lines as read: the records' lines joined as one JSON list, and
/// where each record sits.
struct LineBatch {
    /// `[`, the records' lines separated by `,`, `]`.
    text: String,
    /// Per record: its index in the input, its line number and its bytes in `text`.
    records: Vec<(usize, usize, Range<usize>)>,
}

/// Reads JSON Lines a batch of records at a time, skipping blank lines, counting records
/// and lines; after a read error it ends.
struct LineBatches<R> {
    reader: R,
    batch_size: usize,
    line_no: usize,
    record_no: usize,
    done: bool,
    /// A batch handed back, whose buffers the next batch reuses.
    spare: Option<LineBatch>,
}

impl<R: BufRead> LineBatches<R> {
    fn new(reader: R, batch_size: usize) -> LineBatches<R> {
        LineBatches {
            reader,
            batch_size: batch_size.max(1),
            line_no: 0,
            record_no: 0,
            done: false,
            spare: None,
        }
    }

    /// Hands a batch back once read, so that the next one fills its buffers.
    fn recycle(&mut self, batch: LineBatch) {
        self.spare = Some(batch);
    }
}

impl<R: BufRead> Iterator for LineBatches<R> {
    type Item = Result<LineBatch, Error>;

    fn next(&mut self) -> Option<Result<LineBatch, Error>> {
        if self.done {
            return None;
        }
        let mut batch = self.spare.take().unwrap_or(LineBatch {
            text: String::new(),
            records: Vec::new(),
        });
        batch.text.clear();
        batch.records.clear();
        batch.text.push('[');
        while batch.records.len() < self.batch_size {
            // where the text stands before this line (and the comma before it)
            let mark = batch.text.len();
            if !batch.records.is_empty() {
                batch.text.push(',');
            }
            let start = batch.text.len();
            match self.reader.read_line(&mut batch.text) {
                Ok(0) => {
                    batch.text.truncate(mark);
                    self.done = true;
                    break;
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(in_record(
                        self.record_no,
                        Some(self.line_no + 1),
                        None,
                        Error::Json {
                            message: format!("cannot read the line: {e}"),
                        },
                    )));
                }
                Ok(_) => {
                    // the line without its end, as `BufRead::lines` gives it
                    if batch.text.ends_with('\n') {
                        batch.text.pop();
                        if batch.text.ends_with('\r') {
                            batch.text.pop();
                        }
                    }
                    self.line_no += 1;
                    if batch.text[start..].trim().is_empty() {
                        batch.text.truncate(mark);
                        continue;
                    }
                    let end = batch.text.len();
                    batch
                        .records
                        .push((self.record_no, self.line_no, start..end));
                    self.record_no += 1;
                }
            }
        }
        if batch.records.is_empty() {
            return None;
        }
        batch.text.push(']');
        Some(Ok(batch))
    }
}

/// One batch of JSON Lines records, parsed and converted.
fn read_batch(batch: &LineBatch, options: &JsonOptions) -> Result<StructuredTensor, Error> {
    if options.is_tensorflow() && options.spec.is_none() {
        // TensorFlow's rules: the batch as one JSON list through the columnar text reader;
        // on any error, the per-record path below finds the record to name
        if let Ok(st) = StructuredTensor::from_json_str(&batch.text) {
            if st.rank() == 1 {
                return Ok(st);
            }
        }
    }
    let parse = |(record, line, range): &(usize, usize, Range<usize>)| -> Result<Value, Error> {
        serde_json::from_str::<Value>(&batch.text[range.clone()]).map_err(|e| {
            in_record(
                *record,
                Some(*line),
                Some(e.column()),
                Error::Json {
                    message: e.to_string(),
                },
            )
        })
    };
    let values: Vec<Value> = if batch.records.len() >= 1024 {
        batch
            .records
            .par_iter()
            .map(parse)
            .collect::<Result<_, _>>()?
    } else {
        batch.records.iter().map(parse).collect::<Result<_, _>>()?
    };
    if let Some(k) = values.iter().position(|v| !v.is_object()) {
        let (record, line, _) = &batch.records[k];
        return Err(in_record(
            *record,
            Some(*line),
            None,
            Error::NotAStruct {
                found: json_kind(&values[k]),
            },
        ));
    }
    let relocate = |e: Error| match e {
        Error::InRecord { record, source, .. } => {
            let (r, line, _) = &batch.records[record];
            in_record(*r, Some(*line), None, *source)
        }
        other => other,
    };
    let value = Value::Array(values);
    let mut opts = options.clone();
    if opts.is_tensorflow() && opts.spec.is_none() {
        // the records' types are inferred by the records reader, which names the record
        // of a conflict directly
        opts.nulls = false;
        let spec = infer_records(&value, &opts).map_err(relocate)?;
        opts.spec = Some(spec);
        return read_records(&value, &opts).map_err(relocate);
    }
    read_records(&value, &opts).map_err(relocate)
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "None",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// The spec of a record or a list of records, by [`JsonOptions`]' rules; an error names
/// the record where the types first conflict.
fn infer_records(value: &Value, options: &JsonOptions) -> Result<Spec, Error> {
    let root = FieldPath::root();
    let (items, rank): (&[Value], usize) = match value {
        Value::Array(items) => (items, 1),
        Value::Object(_) => (std::slice::from_ref(value), 0),
        other => {
            return Err(Error::NotAStruct {
                found: json_kind(other),
            })
        }
    };
    let mut node = Node::unknown(false);
    for (k, item) in items.iter().enumerate() {
        let at = |e: Error| {
            if rank == 1 {
                in_record(k, None, None, e)
            } else {
                e
            }
        };
        if !item.is_object() {
            return Err(at(Error::NotAStruct {
                found: json_kind(item),
            }));
        }
        let n = Node::observe(item, &root).map_err(at)?;
        check_nulls(&n, options, &root).map_err(at)?;
        node = if k == 0 {
            n
        } else {
            schema::unify(node, n, &root, options.nulls).map_err(at)?
        };
    }
    check_names(&node, options, &root)?;
    let spec = match node.to_field_spec(rank) {
        FieldSpec::Struct(s) => s,
        _ => Spec {
            shape: vec![None; rank],
            fields: IndexMap::new(),
        },
    };
    Ok(spec)
}

/// TensorFlow mode refuses a `null`.
fn check_nulls(node: &Node, options: &JsonOptions, path: &FieldPath) -> Result<(), Error> {
    if options.nulls {
        return Ok(());
    }
    if node.nullable {
        return Err(Error::ParsePath {
            path: path.clone(),
            source: Box::new(Error::SpecValue {
                problem: "null values are not supported (JsonOptions::with_nulls reads them)"
                    .to_string(),
            }),
        });
    }
    match &node.kind {
        Kind::List(inner) => check_nulls(inner, options, path),
        Kind::Object(fields) => fields
            .iter()
            .try_for_each(|(k, f)| check_nulls(f, options, &path.child(k))),
        _ => Ok(()),
    }
}

fn check_names(node: &Node, options: &JsonOptions, path: &FieldPath) -> Result<(), Error> {
    match &node.kind {
        Kind::List(inner) => check_names(inner, options, path),
        Kind::Object(fields) => {
            for (k, f) in fields {
                if !options.any_field_names && !is_valid_field_name(k) {
                    return Err(Error::InvalidFieldName {
                        name: k.clone(),
                        path: path.clone(),
                    });
                }
                check_names(f, options, &path.child(k))?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Records (an object, or a list of objects) read by [`JsonOptions`]' rules, under
/// `options.spec` or the spec inferred from them.
pub(crate) fn read_records(
    value: &Value,
    options: &JsonOptions,
) -> Result<StructuredTensor, Error> {
    let spec = match &options.spec {
        Some(s) => s.clone(),
        None => infer_records(value, options)?,
    };
    let (items, rank): (&[Value], usize) = match value {
        Value::Array(items) => (items, 1),
        Value::Object(_) => (std::slice::from_ref(value), 0),
        other => {
            return Err(Error::NotAStruct {
                found: json_kind(other),
            })
        }
    };
    if spec.rank() != rank {
        return Err(Error::SchemaMismatch {
            path: FieldPath::root(),
            expected: spec.to_string(),
            found: format!("records of rank {rank}"),
            file: None,
        });
    }
    let root = FieldPath::root();
    let mut col = Col::plan_struct(&spec, rank, &root, options)?;
    if let Some(path) = options
        .defaults
        .keys()
        .find(|path| !spec_has_field(&spec, path))
    {
        return Err(Error::SchemaMismatch {
            path: path.clone(),
            expected: format!("a field of the spec {spec}"),
            found: "a default value".to_string(),
            file: None,
        });
    }
    for (k, item) in items.iter().enumerate() {
        let r = match &mut col {
            Col::Struct {
                fields, defaults, ..
            } => push_object(fields, defaults, Some(item), &root, options),
            Col::Leaf { .. } => unreachable!("the root is a struct"),
        };
        r.map_err(|e| {
            if rank == 1 {
                in_record(k, None, None, e)
            } else {
                e
            }
        })?;
    }
    let nrows = if rank == 0 { 1 } else { items.len() };
    match col.finish(nrows, &[], rank)? {
        FieldValue::Struct(s) => Ok(s),
        FieldValue::Array(_) => unreachable!("the root is a struct"),
    }
}

/// A column being built: a leaf or a struct, with the splits of its own list dimensions.
enum Col {
    Leaf {
        dtype: DType,
        own: usize,
        /// The spec's static sizes of the own dimensions.
        sizes: Vec<Option<usize>>,
        splits: Vec<Vec<i32>>,
        values: Values,
        valid: Vec<bool>,
        nullable: bool,
    },
    Struct {
        own: usize,
        rank: usize,
        splits: Vec<Vec<i32>>,
        fields: Vec<(String, Col)>,
        /// Each field's default value (`JsonOptions::defaults`), checked to fit it.
        defaults: Vec<Option<Value>>,
    },
}

impl Col {
    /// The column of a struct at `path` of spec `spec` under a struct of rank
    /// `parent_rank`.
    fn plan_struct(
        spec: &Spec,
        parent_rank: usize,
        path: &FieldPath,
        options: &JsonOptions,
    ) -> Result<Col, Error> {
        let mut fields = Vec::with_capacity(spec.fields.len());
        let mut defaults = Vec::with_capacity(spec.fields.len());
        for (name, f) in &spec.fields {
            if !options.any_field_names && !is_valid_field_name(name) {
                return Err(Error::InvalidFieldName {
                    name: name.clone(),
                    path: FieldPath::root(),
                });
            }
            let field_path = path.child(name);
            let col = Col::plan(f, spec.rank(), &field_path, options)?;
            let default = options.defaults.get(&field_path).cloned();
            if let Some(d) = &default {
                // The default must fit the field: read once into a scratch column.
                let mut scratch = Col::plan(f, spec.rank(), &field_path, options)?;
                scratch.push(Some(d), &field_path, options)?;
            }
            fields.push((name.clone(), col));
            defaults.push(default);
        }
        let own = spec.rank().saturating_sub(parent_rank);
        Ok(Col::Struct {
            own,
            rank: spec.rank(),
            splits: vec![vec![0]; own],
            fields,
            defaults,
        })
    }

    /// The column of field `spec` at `path` under a struct of rank `parent_rank`.
    fn plan(
        spec: &FieldSpec,
        parent_rank: usize,
        path: &FieldPath,
        options: &JsonOptions,
    ) -> Result<Col, Error> {
        match spec {
            FieldSpec::Struct(s) => Col::plan_struct(s, parent_rank, path, options),
            leaf => {
                let (inner, nullable) = schema::strip_nullable(leaf);
                let shape = match inner {
                    FieldSpec::Tensor { shape, .. } | FieldSpec::Ragged { shape, .. } => shape,
                    _ => unreachable!("a leaf spec"),
                };
                let (dtype, rank, _) = schema::leaf_dtype_rank(leaf).expect("a leaf spec");
                let own = rank.saturating_sub(parent_rank);
                Ok(Col::Leaf {
                    dtype,
                    own,
                    sizes: shape[parent_rank.min(shape.len())..].to_vec(),
                    splits: vec![vec![0]; own],
                    values: Values::empty(dtype),
                    valid: Vec::new(),
                    nullable,
                })
            }
        }
    }

    /// Appends one element of the struct above: `v` (`None` for a missing key).
    fn push(
        &mut self,
        v: Option<&Value>,
        path: &FieldPath,
        options: &JsonOptions,
    ) -> Result<(), Error> {
        match self {
            Col::Leaf { own, .. } => {
                let own = *own;
                self.push_leaf(v, 0, own, path, options)
            }
            Col::Struct { own, .. } => {
                let own = *own;
                self.push_struct(v, 0, own, path, options)
            }
        }
    }

    fn push_leaf(
        &mut self,
        v: Option<&Value>,
        level: usize,
        own: usize,
        path: &FieldPath,
        options: &JsonOptions,
    ) -> Result<(), Error> {
        let Col::Leaf {
            dtype,
            splits,
            values,
            valid,
            nullable,
            ..
        } = self
        else {
            unreachable!("push_leaf on a leaf")
        };
        if level < own {
            match v {
                Some(Value::Array(items)) => {
                    let last = *splits[level].last().expect("leading 0");
                    let next = partition::offset(last as usize + items.len())?;
                    splits[level].push(next);
                    for item in items {
                        self.push_leaf(Some(item), level + 1, own, path, options)?;
                    }
                    Ok(())
                }
                None | Some(Value::Null) if options.nulls => {
                    // a null or missing list is an empty list
                    let last = *splits[level].last().expect("leading 0");
                    splits[level].push(last);
                    Ok(())
                }
                other => Err(value_error(path, other, "a list")),
            }
        } else {
            match v {
                None | Some(Value::Null) => {
                    if !options.nulls {
                        return Err(value_error(path, v, "a value"));
                    }
                    let _ = nullable;
                    values.extend_from(&default_values(*dtype, 1), 0, 1);
                    valid.push(false);
                    Ok(())
                }
                Some(x) => {
                    push_scalar(values, *dtype, x, path)?;
                    valid.push(true);
                    Ok(())
                }
            }
        }
    }

    fn push_struct(
        &mut self,
        v: Option<&Value>,
        level: usize,
        own: usize,
        path: &FieldPath,
        options: &JsonOptions,
    ) -> Result<(), Error> {
        let Col::Struct {
            splits,
            fields,
            defaults,
            ..
        } = self
        else {
            unreachable!("push_struct on a struct")
        };
        if level < own {
            match v {
                Some(Value::Array(items)) => {
                    let last = *splits[level].last().expect("leading 0");
                    splits[level].push(partition::offset(last as usize + items.len())?);
                    for item in items {
                        self.push_struct(Some(item), level + 1, own, path, options)?;
                    }
                    Ok(())
                }
                None | Some(Value::Null) if options.nulls => {
                    let last = *splits[level].last().expect("leading 0");
                    splits[level].push(last);
                    Ok(())
                }
                other => Err(value_error(path, other, "a list")),
            }
        } else {
            match v {
                Some(Value::Object(_)) | None | Some(Value::Null) => {
                    // a null struct: every leaf below is null (with the option)
                    if (v.is_none() || v == Some(&Value::Null)) && !options.nulls {
                        return Err(value_error(path, v, "an object"));
                    }
                    push_object(fields, defaults, v, path, options)
                }
                other => Err(value_error(path, other, "an object")),
            }
        }
    }

    /// The built field: `nrows` outer rows, the struct above's `partitions` (rank
    /// `parent_rank`).
    fn finish(
        self,
        nrows: usize,
        partitions: &[RowPartition],
        parent_rank: usize,
    ) -> Result<FieldValue, Error> {
        let own_partitions = |splits: Vec<Vec<i32>>,
                              sizes: &[Option<usize>]|
         -> Result<(usize, Vec<RowPartition>), Error> {
            let mut parts = partitions.to_vec();
            let mut rows = nrows;
            for (k, s) in splits.into_iter().enumerate() {
                let n = s.len() - 1;
                let lens: Vec<usize> = s.windows(2).map(|w| (w[1] - w[0]) as usize).collect();
                let uniform = match lens.first() {
                    Some(&l) if lens.iter().all(|&x| x == l) => Some(l),
                    _ => sizes.get(k + 1).copied().flatten(),
                };
                if parent_rank == 0 && k == 0 {
                    // the field's own outer dimension: its rows are the list's elements
                    rows = *s.last().expect("leading 0") as usize;
                    let _ = n;
                    continue;
                }
                parts.push(partition::from_splits_maybe_uniform(s, uniform)?);
            }
            Ok((rows, parts))
        };
        match self {
            Col::Leaf {
                own,
                sizes,
                splits,
                values,
                valid,
                nullable,
                ..
            } => {
                let (rows, parts) = own_partitions(splits, &sizes)?;
                let rank = parent_rank + own;
                let array = if rank == 0 {
                    Array::scalar(values.get(0))
                } else {
                    Array::from_partitions(rows, parts, values)?
                };
                let needs_bitmap = nullable || valid.iter().any(|v| !v);
                Ok(FieldValue::Array(if needs_bitmap {
                    array.with_validity(Some(Validity::from_bools(&valid)))?
                } else {
                    array
                }))
            }
            Col::Struct {
                rank,
                splits,
                fields,
                ..
            } => {
                let (rows, parts) = own_partitions(splits, &[])?;
                let mut out = IndexMap::new();
                for (name, f) in fields {
                    out.insert(name, f.finish(rows, &parts, rank)?);
                }
                let rows = if rank == 0 { 1 } else { rows };
                Ok(FieldValue::Struct(StructuredTensor::from_parts_unchecked(
                    rank, rows, parts, out,
                )))
            }
        }
    }
}

/// Pushes an object's fields (`None` or `null`: every field missing, and null, defaults
/// or not); a key missing from an object takes its field's default when it has one.
fn push_object(
    fields: &mut [(String, Col)],
    defaults: &[Option<Value>],
    v: Option<&Value>,
    path: &FieldPath,
    options: &JsonOptions,
) -> Result<(), Error> {
    let map = match v {
        Some(Value::Object(m)) => Some(m),
        _ => None,
    };
    if let Some(m) = map {
        if m.len() > fields.len() || m.keys().any(|k| !fields.iter().any(|(n, _)| n == k)) {
            if let Some(extra) = m.keys().find(|k| !fields.iter().any(|(n, _)| n == *k)) {
                return Err(Error::SchemaMismatch {
                    path: path.child(extra),
                    expected: "no such field".to_string(),
                    found: format!("a key {extra:?}"),
                    file: None,
                });
            }
        }
    }
    for ((name, col), default) in fields.iter_mut().zip(defaults) {
        let item = map.and_then(|m| m.get(name.as_str()));
        let item = match (item, map, default) {
            (None, Some(_), Some(d)) => Some(d),
            _ => item,
        };
        if item.is_none() && map.is_some() && !options.nulls {
            return Err(Error::MissingKey {
                key: name.clone(),
                path: path.clone(),
            });
        }
        col.push(item, &path.child(name), options)?;
    }
    Ok(())
}

/// True when `path` names a field of `spec` (through nested structs).
fn spec_has_field(spec: &Spec, path: &FieldPath) -> bool {
    let mut here = spec;
    for (k, name) in path.0.iter().enumerate() {
        match here.fields.get(name) {
            Some(FieldSpec::Struct(s)) => here = s,
            Some(_) => return k + 1 == path.0.len(),
            None => return false,
        }
    }
    !path.0.is_empty()
}

fn value_error(path: &FieldPath, v: Option<&Value>, wanted: &str) -> Error {
    let found = match v {
        None => "a missing key".to_string(),
        Some(Value::Null) => "null".to_string(),
        Some(x) => {
            let mut s = x.to_string();
            if s.len() > 40 {
                let mut end = 40;
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                s.truncate(end);
                s.push_str("...");
            }
            s
        }
    };
    Error::SchemaMismatch {
        path: path.clone(),
        expected: wanted.to_string(),
        found,
        file: None,
    }
}

/// Appends scalar `x` as `dtype` (JSON integers into any numeric type they fit, floats
/// into float types, strings into strings or bytes).
fn push_scalar(
    values: &mut Values,
    dtype: DType,
    x: &Value,
    path: &FieldPath,
) -> Result<(), Error> {
    let bad = || Error::SchemaMismatch {
        path: path.clone(),
        expected: dtype.name().to_string(),
        found: x.to_string(),
        file: None,
    };
    match (values, x) {
        (Values::I64(v), Value::Number(n)) => v.to_mut().push(n.as_i64().ok_or_else(bad)?),
        (Values::I32(v), Value::Number(n)) => v.to_mut().push(
            n.as_i64()
                .and_then(|i| i32::try_from(i).ok())
                .ok_or_else(bad)?,
        ),
        (Values::U8(v), Value::Number(n)) => v.to_mut().push(
            n.as_i64()
                .and_then(|i| u8::try_from(i).ok())
                .ok_or_else(bad)?,
        ),
        (Values::F64(v), Value::Number(n)) => v.to_mut().push(n.as_f64().ok_or_else(bad)?),
        (Values::F32(v), Value::Number(n)) => v.to_mut().push(n.as_f64().ok_or_else(bad)? as f32),
        (Values::Bool(v), Value::Bool(b)) => v.push(*b),
        (Values::Str(c), Value::String(s)) => c.push(s),
        (Values::Bytes(c), Value::String(s)) => c.push(s.as_bytes()),
        _ => return Err(bad()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nulls_and_missing_keys_read_as_nulls() {
        let v = json!([{"a": 1, "b": "x"}, {"a": null}, {"b": "z", "a": 3}]);
        let st =
            StructuredTensor::from_json_with_options(&v, &JsonOptions::default().with_nulls(true))
                .unwrap();
        assert_eq!(
            st.to_json(),
            json!([{"a": 1, "b": "x"}, {"a": null, "b": null}, {"a": 3, "b": "z"}])
        );
        let e = StructuredTensor::from_json_with_options(&v, &JsonOptions::default()).unwrap_err();
        assert!(e.to_string().starts_with("record 1"), "{e}");
    }
}
