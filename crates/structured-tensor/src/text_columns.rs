//! One-pass readers for the common shape of JSON: a list of objects that all list the same
//! keys in the same order, each value a scalar, a list of scalars or such an object. Values
//! go straight into columns, from the text with no tree in between, or from a parsed tree
//! record by record (in parallel over chunks of records) instead of field by field. Any
//! other input makes them answer `None`, and the general reader (the ingestion rules)
//! decides.

use std::sync::Arc;

use indexmap::IndexMap;
use rayon::prelude::*;

use crate::array::Array;
use crate::error::is_valid_field_name;
use crate::json_tree::{Column, Node, View, MAX_NESTING};
use crate::partition;
use crate::structured::{FieldValue, StructuredTensor};
use crate::text::Parser;

/// Where the values of one field go.
enum Slot {
    /// One scalar per record.
    Scalar(Column),
    /// One list of scalars per record: the scalars and the splits between records.
    List { column: Column, splits: Vec<i32> },
    /// One object per record, its fields in the order the first record lists them.
    Struct(Vec<(String, Slot)>),
}

impl Slot {
    /// The slot for a value shaped like `node`, which sits `depth` deep in lists and field
    /// names together (`None` for a shape this reader leaves alone: `null`, a list of lists
    /// or of objects, an invalid field name, nesting deeper than the general rules accept).
    fn of<N: Node>(node: &N, rows: usize, depth: usize) -> Option<Slot> {
        if depth > MAX_NESTING {
            return None;
        }
        Some(match node.view() {
            View::Null => return None,
            View::List(_) if depth == MAX_NESTING => return None,
            View::Dict(entries) => Slot::Struct(
                N::dict_entries(entries)
                    .map(|(k, v)| {
                        if !is_valid_field_name(k) {
                            return None;
                        }
                        Some((k.to_string(), Slot::of(v, rows, depth + 1)?))
                    })
                    .collect::<Option<Vec<_>>>()?,
            ),
            View::List(_) => Slot::List {
                column: Column::Empty,
                splits: {
                    let mut splits = Vec::with_capacity(rows + 1);
                    splits.push(0);
                    splits
                },
            },
            _ => Slot::Scalar(Column::Empty),
        })
    }

    /// Appends the value of one record, given as a tree.
    fn fill<N: Node>(&mut self, node: &N, rows: usize) -> Option<()> {
        match (self, node.view()) {
            (Slot::Scalar(column), view) => column.push(view, rows),
            (Slot::List { column, splits }, View::List(items)) => {
                for item in items {
                    column.push(item.view(), 2 * rows)?;
                }
                splits.push(partition::offset(column.len()).ok()?);
                Some(())
            }
            (Slot::Struct(fields), View::Dict(entries)) if N::dict_len(entries) == fields.len() => {
                for ((name, slot), (key, value)) in fields.iter_mut().zip(N::dict_entries(entries))
                {
                    if name != key {
                        return None;
                    }
                    slot.fill(value, rows)?;
                }
                Some(())
            }
            _ => None,
        }
    }

    /// Appends the records of `other` (a slot of the same schema) after those of `self`;
    /// `None` when a column's dtypes do not combine.
    fn append(&mut self, other: Slot) -> Option<()> {
        match (self, other) {
            (Slot::Scalar(a), Slot::Scalar(b)) => a.append(b),
            (
                Slot::List { column, splits },
                Slot::List {
                    column: more,
                    splits: more_splits,
                },
            ) => {
                let base = *splits.last().expect("splits start with 0");
                splits.reserve(more_splits.len() - 1);
                for &s in &more_splits[1..] {
                    splits.push(base.checked_add(s)?);
                }
                column.append(more)
            }
            (Slot::Struct(fields), Slot::Struct(more)) => {
                for ((_, slot), (_, other)) in fields.iter_mut().zip(more) {
                    slot.append(other)?;
                }
                Some(())
            }
            _ => unreachable!("slots of one schema have the same shape"),
        }
    }

    /// True when `other` (the same records' slot from another batch) can be appended:
    /// the same shape and field names in the same order, dtypes that combine and row
    /// splits that stay within `i32`. [`Slot::append`] then cannot fail part way.
    fn fits(&self, other: &Slot) -> bool {
        match (self, other) {
            (Slot::Scalar(a), Slot::Scalar(b)) => a.combines(b),
            (
                Slot::List { column, splits },
                Slot::List {
                    column: more,
                    splits: more_splits,
                },
            ) => {
                let last = |s: &[i32]| i64::from(*s.last().expect("splits start with 0"));
                column.combines(more) && last(splits) + last(more_splits) <= i64::from(i32::MAX)
            }
            (Slot::Struct(fields), Slot::Struct(more)) => fields_fit(fields, more),
            _ => false,
        }
    }

    /// Reads the value of one record from the text.
    fn read(&mut self, p: &mut Parser<'_>, depth: usize, rows: usize) -> Option<()> {
        match self {
            Slot::Scalar(column) => read_scalar(p, column, depth, rows),
            Slot::List { column, splits } => {
                p.eat(b'[').ok()?;
                p.skip_ws();
                if p.peek() == Some(b']') {
                    p.eat(b']').ok()?;
                } else {
                    loop {
                        read_scalar(p, column, depth + 1, 2 * rows)?;
                        p.skip_ws();
                        match p.peek()? {
                            b',' => p.eat(b',').ok()?,
                            b']' => {
                                p.eat(b']').ok()?;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                splits.push(partition::offset(column.len()).ok()?);
                Some(())
            }
            Slot::Struct(fields) => {
                p.eat(b'{').ok()?;
                let n = fields.len();
                for (i, (name, slot)) in fields.iter_mut().enumerate() {
                    p.skip_ws();
                    let same = p.eat_plain_key(name)
                        || (p.peek() == Some(b'"') && p.string().ok()? == name.as_str());
                    if !same {
                        return None;
                    }
                    p.eat(b':').ok()?;
                    slot.read(p, depth + 1, rows)?;
                    p.eat(if i + 1 < n { b',' } else { b'}' }).ok()?;
                }
                if n == 0 {
                    p.eat(b'}').ok()?;
                }
                Some(())
            }
        }
    }

    /// The field value of `nrows` records.
    fn finish(self, nrows: usize) -> Option<FieldValue> {
        Some(match self {
            Slot::Scalar(column) => FieldValue::Array(Array::from_parts_unchecked(
                1,
                nrows,
                Vec::new(),
                Arc::new(column.finish()),
            )),
            Slot::List { column, mut splits } => FieldValue::Array(Array::from_parts_unchecked(
                2,
                nrows,
                vec![partition::from_splits({
                    splits.shrink_to_fit();
                    splits
                })
                .ok()?],
                Arc::new(column.finish()),
            )),
            Slot::Struct(fields) => FieldValue::Struct(finish_struct(fields, nrows)?),
        })
    }
}

/// True when the struct fields `more` can be appended to `fields` ([`Slot::fits`]).
fn fields_fit(fields: &[(String, Slot)], more: &[(String, Slot)]) -> bool {
    fields.len() == more.len()
        && fields
            .iter()
            .zip(more)
            .all(|((name, a), (key, b))| name == key && a.fits(b))
}

/// The rank-1 struct array of `nrows` records from the slots of its fields.
fn finish_struct(fields: Vec<(String, Slot)>, nrows: usize) -> Option<StructuredTensor> {
    let mut out = IndexMap::new();
    for (name, slot) in fields {
        out.insert(name, slot.finish(nrows)?);
    }
    Some(StructuredTensor::from_parts_unchecked(
        1,
        nrows,
        Vec::new(),
        out,
    ))
}

/// Reads one scalar into `column` (`None` for a list, an object or a scalar it refuses).
fn read_scalar(
    p: &mut Parser<'_>,
    column: &mut Column,
    depth: usize,
    capacity: usize,
) -> Option<()> {
    p.skip_ws();
    if matches!(p.peek()?, b'[' | b'{') {
        return None;
    }
    let node = p.value(depth).ok()?;
    column.push(node.view(), capacity)
}

/// The struct array of a text holding a non-empty list of objects of one shape, or `None`
/// when the text is anything else (then nothing is decided here).
pub(crate) fn read_records(text: &str) -> Option<StructuredTensor> {
    Records::read(text)?.finish()
}

/// Records read by the one-pass text reader and not yet made a struct array: the columns
/// being filled. Batches of JSON Lines append to one another here, so that the records of
/// all batches go into one set of columns, with no tensor per batch to join at the end.
pub(crate) struct Records {
    /// The slots of the records' fields.
    fields: Vec<(String, Slot)>,
    /// Records read so far.
    nrows: usize,
}

impl Records {
    /// The records of a text holding a non-empty list of objects of one shape, or `None`
    /// when the text is anything else (as [`read_records`]).
    pub(crate) fn read(text: &str) -> Option<Records> {
        let (schema, nrows) = read_slot(text)?;
        match schema {
            Slot::Struct(fields) => Some(Records { fields, nrows }),
            _ => None,
        }
    }

    /// Appends the records of `other` after these, as if they came in one text; `false`
    /// (and nothing changed) when they do not fit: other fields, field order or shapes,
    /// dtypes that do not combine, row splits beyond `i32`.
    pub(crate) fn append(&mut self, other: Records) -> bool {
        if !fields_fit(&self.fields, &other.fields) {
            return false;
        }
        for ((_, slot), (_, more)) in self.fields.iter_mut().zip(other.fields) {
            slot.append(more)
                .expect("slots that fit append without failing");
        }
        self.nrows += other.nrows;
        true
    }

    /// The rank-1 struct array of the records (`None` if a row partition is refused).
    pub(crate) fn finish(self) -> Option<StructuredTensor> {
        finish_struct(self.fields, self.nrows)
    }
}

/// The slot filled from a text holding a non-empty list of objects of one shape, and the
/// number of records, or `None` when the text is anything else.
fn read_slot(text: &str) -> Option<(Slot, usize)> {
    let mut p = Parser::new(text);
    p.eat(b'[').ok()?;
    p.skip_ws();
    if p.peek()? != b'{' {
        return None;
    }
    let start = p.position();
    let first = p.value(1).ok()?;
    // Room for as many records as there would be if all were as long as the first.
    let rows = (text.len() / (p.position() - start).max(1)).min(1 << 24) + 1;
    let mut schema = Slot::of(&first, rows, 1)?;
    schema.fill(&first, rows)?;
    drop(first);
    let mut nrows = 1usize;
    loop {
        p.skip_ws();
        match p.peek()? {
            b',' => {
                p.eat(b',').ok()?;
                schema.read(&mut p, 1, rows)?;
                nrows += 1;
            }
            b']' => {
                p.eat(b']').ok()?;
                break;
            }
            _ => return None,
        }
    }
    if !p.at_end() {
        return None;
    }
    Some((schema, nrows))
}

#[cfg(test)]
thread_local! {
    /// Set while a test asks what the general rules alone make of an input.
    static OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with the tree reader switched off on this thread: the tests' oracle for it.
#[cfg(test)]
pub(crate) fn general_only<T>(f: impl FnOnce() -> T) -> T {
    OFF.with(|off| off.set(true));
    let out = f();
    OFF.with(|off| off.set(false));
    out
}

/// Records per chunk of the parallel tree reader.
const CHUNK: usize = 4096;

/// The struct array of a non-empty list of objects of one shape, read record by record from
/// a parsed tree (in parallel over chunks of records when `par`), or `None` when the list
/// is anything else (then nothing is decided here). `depth` is how deep the records sit in
/// lists and field names together: 1 for a list at the root, one more for each field name
/// above the list.
pub(crate) fn read_tree<N: Node>(items: &[N], depth: usize, par: bool) -> Option<StructuredTensor> {
    #[cfg(test)]
    if OFF.with(std::cell::Cell::get) {
        return None;
    }
    let first = items.first()?;
    if !matches!(first.view(), View::Dict(_)) {
        return None;
    }
    let read_chunk = |chunk: &[N]| -> Option<Slot> {
        let mut slot = Slot::of(first, chunk.len(), depth)?;
        for item in chunk {
            slot.fill(item, chunk.len())?;
        }
        Some(slot)
    };
    let schema = if par && items.len() >= 2 * CHUNK {
        let chunks: Vec<Option<Slot>> = items.par_chunks(CHUNK).map(read_chunk).collect();
        let mut chunks = chunks.into_iter();
        let mut schema = chunks.next()??;
        for chunk in chunks {
            schema.append(chunk?)?;
        }
        schema
    } else {
        read_chunk(items)?
    };
    match schema {
        Slot::Struct(fields) => finish_struct(fields, items.len()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json_in::from_root;
    use crate::json_tree::MAX_NESTING;
    use serde_json::{json, Value};

    /// What the general rules alone make of `v` (sequentially, so on this thread).
    fn from_root_general(v: &Value) -> Result<StructuredTensor, crate::Error> {
        general_only(|| from_root(v, false))
    }

    /// A deterministic stream of numbers.
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    /// A random value of the shape `kind` (0..6: int, float, string, bool, int list,
    /// float or mixed list, string list, nested object).
    fn value_of(kind: u64, r: &mut Lcg, depth: usize) -> Value {
        match kind {
            0 => json!(r.below(100) as i64 - 50),
            1 => json!(r.below(40) as f64 / 4.0),
            2 => json!(["a", "b\"c", "d\\u00e9", "\u{e9}t\u{e9}"][r.below(4) as usize]),
            3 => json!(r.below(2) == 0),
            4 => Value::Array((0..r.below(4)).map(|_| json!(r.below(9))).collect()),
            5 => Value::Array(
                (0..r.below(4))
                    .map(|_| value_of(r.below(2), r, depth))
                    .collect(),
            ),
            6 => Value::Array((0..r.below(3)).map(|_| value_of(2, r, depth)).collect()),
            _ if depth < 2 => json!({"x": value_of(r.below(5), r, depth + 1), "y_1": [true]}),
            _ => json!(1),
        }
    }

    /// Something out of the ordinary for one record.
    fn oddity(r: &mut Lcg) -> Value {
        match r.below(9) {
            0 => Value::Null,
            1 => json!(u64::MAX),
            2 => json!([[1], [2]]),
            3 => json!([{"a": 1}]),
            4 => json!({"z": 1}),
            5 => json!("s"),
            6 => json!(2.5),
            7 => json!([]),
            _ => json!([1, "a"]),
        }
    }

    fn records(r: &mut Lcg) -> Value {
        let nfields = r.below(4) as usize;
        let names = ["age", "b", "c2", "Dd"];
        let kinds: Vec<u64> = (0..nfields).map(|_| r.below(8)).collect();
        let n = 1 + r.below(12) as usize;
        let odd = r.below(3) == 0;
        let out: Vec<Value> = (0..n)
            .map(|i| {
                let mut m = serde_json::Map::new();
                for (f, &k) in kinds.iter().enumerate() {
                    let v = if odd && i == n - 1 && f == 0 {
                        oddity(r)
                    } else {
                        value_of(k, r, 0)
                    };
                    m.insert(names[f].to_string(), v);
                }
                if odd && i == n - 1 && r.below(4) == 0 {
                    m.insert("extra".to_string(), json!(1));
                }
                Value::Object(m)
            })
            .collect();
        Value::Array(out)
    }

    #[test]
    fn one_pass_reader_matches_the_general_path() {
        let mut r = Lcg(11);
        let mut answered = 0;
        let mut declined = 0;
        for case in 0..1500 {
            let v = records(&mut r);
            let mut text = if case % 3 == 0 {
                serde_json::to_string_pretty(&v).unwrap()
            } else {
                serde_json::to_string(&v).unwrap()
            };
            if case % 7 == 0 {
                // Reordered keys in the last record: the general path decides.
                text = text.replace("{\"age\":1,\"b\"", "{\"b\"");
            }
            let parsed: Value = serde_json::from_str(&text).unwrap();
            let general = from_root_general(&parsed);
            match read_records(&text) {
                Some(st) => {
                    answered += 1;
                    assert_eq!(Ok(st), general, "{text}");
                }
                None => declined += 1,
            }
            let Value::Array(items) = &parsed else {
                unreachable!("records() makes a list")
            };
            // The tree reader takes what the text reader takes (and maybe more).
            match read_tree(items, 1, false) {
                Some(st) => assert_eq!(Ok(st), general, "{text}"),
                None => assert!(read_records(&text).is_none(), "{text}"),
            }
            assert_eq!(StructuredTensor::from_json_str(&text), general, "{text}");
            assert_eq!(StructuredTensor::from_json(&parsed), general, "{text}");
            // The same records as a field of an object.
            let wrapped = json!({ "data": parsed });
            assert_eq!(
                StructuredTensor::from_json(&wrapped),
                from_root_general(&wrapped),
                "{text}"
            );
        }
        assert!(answered > 600 && declined > 100, "{answered} {declined}");
    }

    /// Around the nesting limit the tree reader takes only what the general rules take, and
    /// reads it as they do, for a list at the root and one under field names.
    #[test]
    fn tree_reader_respects_the_nesting_limit() {
        for (k, leaf) in ((MAX_NESTING - 4)..(MAX_NESTING + 3))
            .flat_map(|k| [(k, json!(1)), (k, json!([1, 2])), (k, json!([]))])
        {
            let mut v = json!({ "x": leaf });
            for _ in 0..k {
                v = json!({ "a": v });
            }
            let list = Value::Array(vec![v]);
            let Value::Array(items) = &list else {
                unreachable!()
            };
            let general = from_root_general(&list);
            if let Some(st) = read_tree(items, 1, false) {
                assert_eq!(Ok(st), general, "root list, {k} levels");
            }
            assert_eq!(StructuredTensor::from_json(&list), general, "{k}");
            let wrapped = json!({"b": {"c": list}});
            assert_eq!(
                StructuredTensor::from_json(&wrapped),
                from_root_general(&wrapped),
                "wrapped, {k} levels"
            );
            // Free on a thread with room for serde_json's recursive drop.
            std::thread::Builder::new()
                .stack_size(64 << 20)
                .spawn(move || drop((list, wrapped)))
                .unwrap()
                .join()
                .unwrap();
        }
    }

    /// Many records, so the tree reader splits them into chunks: dtypes that change from
    /// one chunk to the next, lists empty in a whole chunk, and a clash in a late chunk.
    #[test]
    fn tree_reader_chunks_agree_with_the_general_path() {
        let n = 5 * CHUNK + 17;
        let record = |i: usize| {
            let late = i >= 3 * CHUNK;
            json!({
                // int64 in the early chunks, a float in a late one: float64 throughout.
                "a": if i == 4 * CHUNK + 5 { json!(0.5) } else { json!(i) },
                // Empty lists for the first chunks, strings after.
                "l": if late { json!(["x", format!("s{i}")]) } else { json!([]) },
                // Floats in the first chunk, ints after.
                "f": if i < CHUNK { json!([i as f64 + 0.25]) } else { json!([i, 1]) },
                "s": {"b": i.is_multiple_of(2), "c": [i % 3]},
            })
        };
        let v = Value::Array((0..n).map(record).collect());
        let general = from_root_general(&v).unwrap();
        let Value::Array(items) = &v else {
            unreachable!()
        };
        assert_eq!(read_tree(items, 1, true).as_ref(), Some(&general));
        assert_eq!(read_tree(items, 1, false).as_ref(), Some(&general));
        assert_eq!(StructuredTensor::from_json(&v).unwrap().to_json(), {
            // The expected JSON, written out: `a` and `f` become float64.
            let expect: Vec<Value> = (0..n)
                .map(|i| {
                    let mut r = record(i);
                    let a = r["a"].as_f64().unwrap();
                    r["a"] = json!(a);
                    let f: Vec<f64> = r["f"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|x| x.as_f64().unwrap())
                        .collect();
                    r["f"] = json!(f);
                    r
                })
                .collect();
            Value::Array(expect)
        });

        // Strings in one late chunk, ints in the others: each chunk reads, but the
        // columns do not combine, so the reader declines and the rules reject.
        let mut bad: Vec<Value> = (0..n).map(record).collect();
        for r in &mut bad[4 * CHUNK..5 * CHUNK] {
            r["s"]["c"] = json!(["x"]);
        }
        assert!(read_tree(&bad, 1, true).is_none());
        let bad = Value::Array(bad);
        assert_eq!(StructuredTensor::from_json(&bad), from_root_general(&bad));
        assert!(StructuredTensor::from_json(&bad).is_err());
    }

    #[test]
    fn texts_the_reader_declines() {
        for text in [
            "[]",
            "{}",
            "[1, 2]",
            "[{\"a\": 1}, {\"b\": 1}]",
            "[{\"a\": 1}, {\"a\": 1, \"b\": 2}]",
            "[{\"a\": 1, \"b\": 2}, {\"b\": 2, \"a\": 1}]",
            "[{\"a\": 1}, {\"a\": null}]",
            "[{\"a\": 1}, {\"a\": \"x\"}]",
            "[{\"a\": [1]}, {\"a\": [[1]]}]",
            "[{\"a\": 1}, {\"a\": 1}] x",
            "[{\"a\": 1}, {\"a\": 1}",
            "[{\"1a\": 1}]",
            "[{\"a\": 1}, [{\"a\": 1}]]",
            "[{\"a\": 99999999999999999999}]",
        ] {
            assert!(read_records(text).is_none(), "{text}");
        }
        // Keys in the same order with other spacing, escapes and a float after ints: read.
        let st =
            read_records("[ {\"a\" : 1 ,\"s\":\"x\\ny\"} ,{\"a\":2.5,\"s\":\"\\u00e9\"}]").unwrap();
        assert_eq!(
            st.to_json(),
            json!([{"a": 1.0, "s": "x\ny"}, {"a": 2.5, "s": "\u{e9}"}])
        );
    }
}
