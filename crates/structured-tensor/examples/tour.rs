//! A tour of structured-tensor on the seed's people/shoes example: shapes and row
//! partitions, `field_value`, `merge_dims`, `promote`, `with_updates` (shoe sizes US -> EU)
//! and indexing; with the feature `parquet`, a Parquet file written and read back, its
//! schema printed. Writes its results as JSON (and Parquet) under `DEMO_OUT_DIR`
//! (default `target/demo/structured-tensor`).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use structured_tensor::{FieldValue, Key, RowPartition, StructuredTensor, Update};

fn splits(st: &StructuredTensor) -> Vec<Vec<i32>> {
    st.row_partitions()
        .iter()
        .map(|p| p.row_splits().to_vec())
        .collect()
}

fn write(dir: &Path, name: &str, value: &Value) -> Result<(), Box<dyn std::error::Error>> {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(value)?)?;
    println!("artefact: {}", path.display());
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out: PathBuf = std::env::var_os("DEMO_OUT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/demo/structured-tensor"));
    std::fs::create_dir_all(&out)?;

    println!("== A scalar StructuredTensor: one person");
    let s1 = StructuredTensor::from_json(&json!({"age": 82, "nicknames": ["Bob", "Bobby"]}))?;
    println!(
        "s1.shape = {:?}; s1[\"age\"] = {}",
        s1.shape(),
        s1.get(&[Key::field("age")])?.to_json()
    );

    println!("\n== A vector of people (the seed's shoes example)");
    let people_json = json!([
        {"age": 12, "nicknames": ["Josaphine"], "shoes": {"sizes": [8.0, 7.5, 7.5]}},
        {"age": 82, "nicknames": ["Bob", "Bobby"], "shoes": {"sizes": [11.0, 11.5, 12.0]}},
        {"age": 42, "nicknames": ["Elmo"], "shoes": {"sizes": [9.0, 9.5, 10.0]}},
    ]);
    let people = StructuredTensor::from_json(&people_json)?;
    println!("shape = {:?}, nrows = {:?}", people.shape(), people.nrows());
    println!("spec  = {}", people.spec());
    println!(
        "people[0][\"age\"] = {}",
        people.get(&[0.into(), "age".into()])?.to_json()
    );
    println!(
        "field_value(\"nicknames\") = {}",
        people.field_value("nicknames")?
    );
    println!(
        "field_value((\"shoes\", \"sizes\")) = {}",
        people.field_value(["shoes", "sizes"])?
    );
    assert_eq!(people.to_json(), people_json, "from_json(v).to_json() == v");
    write(&out, "people.json", &people.to_json())?;

    println!(
        "\n== Row partitions of the seed's s1..s5 (x = {{'a': 1, 'b': ['foo', 'bar', 'baz']}})"
    );
    let x = json!({"a": 1, "b": ["foo", "bar", "baz"]});
    let shapes = [
        ("s1", json!([[x, x, x, x], [x, x, x, x]])),
        ("s2", json!([[x, x], [x, x], [x, x], [x, x]])),
        ("s3", json!([[x, x, x], [], [x, x, x, x], [x]])),
        ("s4", json!([[[x, x], [x, x]], [[x, x], [x, x]]])),
        ("s5", json!([[[x, x], [x]], [[x, x]], [[x, x], [x]]])),
    ];
    let mut partitions_out = serde_json::Map::new();
    for (name, v) in &shapes {
        let s = StructuredTensor::from_json(v)?;
        println!(
            "{name}: shape = {:?}, row_splits = {:?}",
            s.shape(),
            splits(&s)
        );
        partitions_out.insert(name.to_string(), json!(splits(&s)));
    }
    write(&out, "row_partitions.json", &Value::Object(partitions_out))?;

    println!("\n== partition_outer_dimension, then merge_dims");
    let households = people.partition_outer_dimension(&RowPartition::from_row_lengths(&[2, 1])?)?;
    println!(
        "households: shape = {:?}, row_splits = {:?}",
        households.shape(),
        splits(&households)
    );
    println!(
        "households[:, :, \"age\"] = {}",
        households
            .get(&[Key::all(), Key::all(), "age".into()])?
            .to_json()
    );
    let merged = households.merge_dims(0, 1)?;
    println!(
        "merge_dims(0, 1): shape = {:?}, equal to people: {}",
        merged.shape(),
        merged == people
    );
    write(&out, "households.json", &households.to_json())?;

    println!("\n== promote((\"shoes\", \"sizes\"), \"shoe_sizes\")");
    let promoted = people.promote(["shoes", "sizes"], "shoe_sizes")?;
    println!("field names: {:?}", promoted.field_names());
    println!(
        "shoe_sizes = {}",
        promoted.field_value("shoe_sizes")?.to_json()
    );
    let docs = StructuredTensor::from_json(&json!([
        {"docs": [{"tokens": [1, 2]}, {"tokens": [3]}]},
        {"docs": [{"tokens": [7]}]}]))?;
    let docs_tokens = docs.promote(["docs", "tokens"], "docs_tokens")?;
    println!(
        "docstring: st2[0]['docs_tokens'] = {}, st2[1]['docs_tokens'] = {}",
        docs_tokens
            .get(&[0.into(), "docs_tokens".into()])?
            .to_json(),
        docs_tokens
            .get(&[1.into(), "docs_tokens".into()])?
            .to_json()
    );
    write(&out, "promoted.json", &promoted.to_json())?;

    println!("\n== with_updates: shoe sizes US -> EU (round(us * 2.54 + 17))");
    let us_to_europe = Update::transform(|t: &FieldValue| {
        let sizes = t.as_array().expect("shoe sizes are an array");
        Ok(FieldValue::Array(
            sizes.map_f64(|us| (us * 2.54 + 17.0).round())?,
        ))
    });
    let shoes_eu = people.with_updates(vec![(["shoes", "sizes"], us_to_europe)])?;
    println!(
        "EU sizes = {}",
        shoes_eu.field_value(["shoes", "sizes"])?.to_json()
    );
    let older = people.with_updates(vec![
        (
            "age",
            Update::transform(|a: &FieldValue| {
                Ok(FieldValue::Array(
                    a.as_array().expect("age").map_i64(|y| y + 1)?,
                ))
            }),
        ),
        ("nicknames", Update::Delete),
    ])?;
    println!("a year later, without nicknames: {}", older.to_json());
    write(&out, "shoes_eu.json", &shoes_eu.to_json())?;

    println!("\n== Indexing");
    let picks = [
        ("people[1]", vec![Key::Index(1)]),
        (
            "people[-1, \"nicknames\", 0]",
            vec![Key::Index(-1), "nicknames".into(), Key::Index(0)],
        ),
        (
            "people[::2, \"age\"]",
            vec![Key::slice(None, None, Some(2)), "age".into()],
        ),
        (
            "people[:, \"nicknames\", :1]",
            vec![
                Key::all(),
                "nicknames".into(),
                Key::slice(None, Some(1), None),
            ],
        ),
        (
            "people[::-1, \"shoes\", \"sizes\", -1]",
            vec![
                Key::slice(None, None, Some(-1)),
                "shoes".into(),
                "sizes".into(),
                Key::Index(-1),
            ],
        ),
    ];
    let mut index_out = serde_json::Map::new();
    for (label, keys) in picks {
        let v = people.get(&keys)?.to_json();
        println!("{label} = {v}");
        index_out.insert(label.to_string(), v);
    }
    match people.get(&[Key::all(), Key::Index(1)]) {
        Err(e) => println!("people[:, 1] -> error: {e}"),
        Ok(v) => println!("people[:, 1] = {v}"),
    }
    match StructuredTensor::from_json(&json!([{"a": 1}, {"a": "c"}])) {
        Err(e) => println!("from_json([{{'a': 1}}, {{'a': 'c'}}]) -> error: {e}"),
        Ok(_) => println!("unexpectedly accepted"),
    }
    write(&out, "indexing.json", &Value::Object(index_out))?;
    parquet_round_trip(&out, &people)?;
    Ok(())
}

/// The people written to a Parquet file and read back; the file's schema as Parquet's Arrow
/// reader sees it (what pyarrow, Spark or DataFusion would see), and ours.
#[cfg(feature = "parquet")]
fn parquet_round_trip(
    out: &Path,
    people: &StructuredTensor,
) -> Result<(), Box<dyn std::error::Error>> {
    use structured_tensor::{read_parquet, write_parquet, Compression, ParquetOptions};

    println!("\n== Parquet: the people written to a file and read back");
    let path = out.join("people.parquet");
    let options = ParquetOptions {
        compression: Compression::Snappy,
        ..ParquetOptions::default()
    };
    write_parquet(&path, people, &options)?;
    println!("artefact: {}", path.display());
    let file = std::fs::File::open(&path)?;
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)?;
    println!(
        "the file: {} rows in {} row group(s), columns:",
        reader.metadata().file_metadata().num_rows(),
        reader.metadata().num_row_groups()
    );
    for field in reader.schema().fields() {
        println!("  {}: {}", field.name(), field.data_type());
    }
    let back = read_parquet(&path)?;
    println!("read back: spec = {}", back.spec());
    println!("read back == written: {}", back == *people);
    Ok(())
}

#[cfg(not(feature = "parquet"))]
fn parquet_round_trip(
    _out: &Path,
    _people: &StructuredTensor,
) -> Result<(), Box<dyn std::error::Error>> {
    println!(
        "\n== Parquet: run with `--features parquet` to write a Parquet file and read it back"
    );
    Ok(())
}
