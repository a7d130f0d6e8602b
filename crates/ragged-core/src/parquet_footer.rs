//! The walk of a Parquet file's footer (its Thrift `FileMetaData`) by Parquet's IDL, before
//! the `parquet` crate parses it: allocation-free, linear in the footer's length, and
//! reading every field the IDL knows as the crate does.
//!
//! The crate reads a known field by the type its IDL gives it, whatever wire type came, and
//! skips an unknown one by its wire type. A walk that followed wire types throughout could
//! thus sit elsewhere in the footer than the crate and never see the counts the crate then
//! reserves by. Here a known field must come with the IDL's wire type (else the footer is
//! corrupt, naming the struct, the field and both types), so up to the first refusal the
//! walk and the crate read the same bytes as the same things; unknown fields are skipped by
//! wire type, as the crate skips them. Every list count and binary length must fit in the
//! bytes left, and the schema's tree must fit in its elements and nest at most
//! [`MAX_SCHEMA_DEPTH`] groups deep.

use std::io::Read;

use super::{ThriftReader, THRIFT_MAX_DEPTH};

/// How deep groups may nest in a file's schema (the root at depth 1). The `parquet` crate
/// builds the schema tree, and its Arrow form, by recursion, one call per level: a schema
/// of 100,000 nested one-child groups would overflow any thread's stack. A ragged column
/// nests two groups per list axis, so this allows some 60 axes.
pub const MAX_SCHEMA_DEPTH: usize = 128;

/// A type of Parquet's IDL (parquet.thrift), as far as the walk needs it.
#[derive(Clone, Copy)]
enum Idl {
    Bool,
    Byte,
    I16,
    /// An i32, or an enum (sent as an i32).
    I32,
    I64,
    Double,
    /// A binary or a string.
    Binary,
    Struct(&'static Struct),
    List(&'static Idl),
}

impl Idl {
    /// The compact protocol's type of a field (or list element) of this type; a bool field
    /// is also 1 (true) or 2 (false), a bool element also 1.
    fn wire(self) -> u8 {
        match self {
            Idl::Bool => 2,
            Idl::Byte => 3,
            Idl::I16 => 4,
            Idl::I32 => 5,
            Idl::I64 => 6,
            Idl::Double => 7,
            Idl::Binary => 8,
            Idl::List(_) => 9,
            Idl::Struct(_) => 12,
        }
    }

    /// Whether `kind` is this type's wire type.
    fn sent_as(self, kind: u8) -> bool {
        kind == self.wire() || matches!((self, kind), (Idl::Bool, 1))
    }

    /// The type's name in messages.
    fn name(self) -> &'static str {
        match self {
            Idl::Bool => "bool",
            Idl::Byte => "byte",
            Idl::I16 => "i16",
            Idl::I32 => "i32",
            Idl::I64 => "i64",
            Idl::Double => "double",
            Idl::Binary => "binary",
            Idl::List(_) => "list",
            Idl::Struct(s) => s.name,
        }
    }
}

/// A struct (or union) of Parquet's IDL: its name and its fields (id, name, type).
struct Struct {
    name: &'static str,
    fields: &'static [(i16, &'static str, Idl)],
}

/// A struct with no fields (the members of `ColumnOrder` and `TimeUnit`, most of
/// `LogicalType`'s).
static EMPTY: Struct = Struct {
    name: "an empty struct",
    fields: &[],
};

static KEY_VALUE: Struct = Struct {
    name: "KeyValue",
    fields: &[(1, "key", Idl::Binary), (2, "value", Idl::Binary)],
};

static TIME_UNIT: Struct = Struct {
    name: "TimeUnit",
    fields: &[
        (1, "MILLIS", Idl::Struct(&EMPTY)),
        (2, "MICROS", Idl::Struct(&EMPTY)),
        (3, "NANOS", Idl::Struct(&EMPTY)),
    ],
};

static DECIMAL_TYPE: Struct = Struct {
    name: "DecimalType",
    fields: &[(1, "scale", Idl::I32), (2, "precision", Idl::I32)],
};

static TIME_TYPE: Struct = Struct {
    name: "TimeType",
    fields: &[
        (1, "isAdjustedToUTC", Idl::Bool),
        (2, "unit", Idl::Struct(&TIME_UNIT)),
    ],
};

static TIMESTAMP_TYPE: Struct = Struct {
    name: "TimestampType",
    fields: &[
        (1, "isAdjustedToUTC", Idl::Bool),
        (2, "unit", Idl::Struct(&TIME_UNIT)),
    ],
};

static INT_TYPE: Struct = Struct {
    name: "IntType",
    fields: &[(1, "bitWidth", Idl::Byte), (2, "isSigned", Idl::Bool)],
};

static VARIANT_TYPE: Struct = Struct {
    name: "VariantType",
    fields: &[(1, "specification_version", Idl::Byte)],
};

static GEOMETRY_TYPE: Struct = Struct {
    name: "GeometryType",
    fields: &[(1, "crs", Idl::Binary)],
};

static GEOGRAPHY_TYPE: Struct = Struct {
    name: "GeographyType",
    fields: &[(1, "crs", Idl::Binary), (2, "algorithm", Idl::I32)],
};

static LOGICAL_TYPE: Struct = Struct {
    name: "LogicalType",
    fields: &[
        (1, "STRING", Idl::Struct(&EMPTY)),
        (2, "MAP", Idl::Struct(&EMPTY)),
        (3, "LIST", Idl::Struct(&EMPTY)),
        (4, "ENUM", Idl::Struct(&EMPTY)),
        (5, "DECIMAL", Idl::Struct(&DECIMAL_TYPE)),
        (6, "DATE", Idl::Struct(&EMPTY)),
        (7, "TIME", Idl::Struct(&TIME_TYPE)),
        (8, "TIMESTAMP", Idl::Struct(&TIMESTAMP_TYPE)),
        (10, "INTEGER", Idl::Struct(&INT_TYPE)),
        (11, "UNKNOWN", Idl::Struct(&EMPTY)),
        (12, "JSON", Idl::Struct(&EMPTY)),
        (13, "BSON", Idl::Struct(&EMPTY)),
        (14, "UUID", Idl::Struct(&EMPTY)),
        (15, "FLOAT16", Idl::Struct(&EMPTY)),
        (16, "VARIANT", Idl::Struct(&VARIANT_TYPE)),
        (17, "GEOMETRY", Idl::Struct(&GEOMETRY_TYPE)),
        (18, "GEOGRAPHY", Idl::Struct(&GEOGRAPHY_TYPE)),
        (19, "FILE", Idl::Struct(&EMPTY)),
    ],
};

static SCHEMA_ELEMENT: Struct = Struct {
    name: "SchemaElement",
    fields: &[
        (1, "type", Idl::I32),
        (2, "type_length", Idl::I32),
        (3, "repetition_type", Idl::I32),
        (4, "name", Idl::Binary),
        (5, "num_children", Idl::I32),
        (6, "converted_type", Idl::I32),
        (7, "scale", Idl::I32),
        (8, "precision", Idl::I32),
        (9, "field_id", Idl::I32),
        (10, "logicalType", Idl::Struct(&LOGICAL_TYPE)),
    ],
};

static STATISTICS: Struct = Struct {
    name: "Statistics",
    fields: &[
        (1, "max", Idl::Binary),
        (2, "min", Idl::Binary),
        (3, "null_count", Idl::I64),
        (4, "distinct_count", Idl::I64),
        (5, "max_value", Idl::Binary),
        (6, "min_value", Idl::Binary),
        (7, "is_max_value_exact", Idl::Bool),
        (8, "is_min_value_exact", Idl::Bool),
        (9, "nan_count", Idl::I64),
    ],
};

static PAGE_ENCODING_STATS: Struct = Struct {
    name: "PageEncodingStats",
    fields: &[
        (1, "page_type", Idl::I32),
        (2, "encoding", Idl::I32),
        (3, "count", Idl::I32),
    ],
};

static SIZE_STATISTICS: Struct = Struct {
    name: "SizeStatistics",
    fields: &[
        (1, "unencoded_byte_array_data_bytes", Idl::I64),
        (2, "repetition_level_histogram", Idl::List(&Idl::I64)),
        (3, "definition_level_histogram", Idl::List(&Idl::I64)),
    ],
};

static BOUNDING_BOX: Struct = Struct {
    name: "BoundingBox",
    fields: &[
        (1, "xmin", Idl::Double),
        (2, "xmax", Idl::Double),
        (3, "ymin", Idl::Double),
        (4, "ymax", Idl::Double),
        (5, "zmin", Idl::Double),
        (6, "zmax", Idl::Double),
        (7, "mmin", Idl::Double),
        (8, "mmax", Idl::Double),
    ],
};

static GEOSPATIAL_STATISTICS: Struct = Struct {
    name: "GeospatialStatistics",
    fields: &[
        (1, "bbox", Idl::Struct(&BOUNDING_BOX)),
        (2, "geospatial_types", Idl::List(&Idl::I32)),
    ],
};

static COLUMN_META_DATA: Struct = Struct {
    name: "ColumnMetaData",
    fields: &[
        (1, "type", Idl::I32),
        (2, "encodings", Idl::List(&Idl::I32)),
        (3, "path_in_schema", Idl::List(&Idl::Binary)),
        (4, "codec", Idl::I32),
        (5, "num_values", Idl::I64),
        (6, "total_uncompressed_size", Idl::I64),
        (7, "total_compressed_size", Idl::I64),
        (8, "key_value_metadata", Idl::List(&Idl::Struct(&KEY_VALUE))),
        (9, "data_page_offset", Idl::I64),
        (10, "index_page_offset", Idl::I64),
        (11, "dictionary_page_offset", Idl::I64),
        (12, "statistics", Idl::Struct(&STATISTICS)),
        (
            13,
            "encoding_stats",
            Idl::List(&Idl::Struct(&PAGE_ENCODING_STATS)),
        ),
        (14, "bloom_filter_offset", Idl::I64),
        (15, "bloom_filter_length", Idl::I32),
        (16, "size_statistics", Idl::Struct(&SIZE_STATISTICS)),
        (
            17,
            "geospatial_statistics",
            Idl::Struct(&GEOSPATIAL_STATISTICS),
        ),
    ],
};

static ENCRYPTION_WITH_COLUMN_KEY: Struct = Struct {
    name: "EncryptionWithColumnKey",
    fields: &[
        (1, "path_in_schema", Idl::List(&Idl::Binary)),
        (2, "key_metadata", Idl::Binary),
    ],
};

static COLUMN_CRYPTO_META_DATA: Struct = Struct {
    name: "ColumnCryptoMetaData",
    fields: &[
        (1, "ENCRYPTION_WITH_FOOTER_KEY", Idl::Struct(&EMPTY)),
        (
            2,
            "ENCRYPTION_WITH_COLUMN_KEY",
            Idl::Struct(&ENCRYPTION_WITH_COLUMN_KEY),
        ),
    ],
};

static COLUMN_CHUNK: Struct = Struct {
    name: "ColumnChunk",
    fields: &[
        (1, "file_path", Idl::Binary),
        (2, "file_offset", Idl::I64),
        (3, "meta_data", Idl::Struct(&COLUMN_META_DATA)),
        (4, "offset_index_offset", Idl::I64),
        (5, "offset_index_length", Idl::I32),
        (6, "column_index_offset", Idl::I64),
        (7, "column_index_length", Idl::I32),
        (8, "crypto_metadata", Idl::Struct(&COLUMN_CRYPTO_META_DATA)),
        (9, "encrypted_column_metadata", Idl::Binary),
    ],
};

static SORTING_COLUMN: Struct = Struct {
    name: "SortingColumn",
    fields: &[
        (1, "column_idx", Idl::I32),
        (2, "descending", Idl::Bool),
        (3, "nulls_first", Idl::Bool),
    ],
};

static ROW_GROUP: Struct = Struct {
    name: "RowGroup",
    fields: &[
        (1, "columns", Idl::List(&Idl::Struct(&COLUMN_CHUNK))),
        (2, "total_byte_size", Idl::I64),
        (3, "num_rows", Idl::I64),
        (
            4,
            "sorting_columns",
            Idl::List(&Idl::Struct(&SORTING_COLUMN)),
        ),
        (5, "file_offset", Idl::I64),
        (6, "total_compressed_size", Idl::I64),
        (7, "ordinal", Idl::I16),
    ],
};

static COLUMN_ORDER: Struct = Struct {
    name: "ColumnOrder",
    fields: &[
        (1, "TYPE_ORDER", Idl::Struct(&EMPTY)),
        (2, "IEEE_754_TOTAL_ORDER", Idl::Struct(&EMPTY)),
        (3, "INT96_TIMESTAMP_ORDER", Idl::Struct(&EMPTY)),
    ],
};

static AES_GCM: Struct = Struct {
    name: "AesGcmV1",
    fields: &[
        (1, "aad_prefix", Idl::Binary),
        (2, "aad_file_unique", Idl::Binary),
        (3, "supply_aad_prefix", Idl::Bool),
    ],
};

static AES_GCM_CTR: Struct = Struct {
    name: "AesGcmCtrV1",
    fields: &[
        (1, "aad_prefix", Idl::Binary),
        (2, "aad_file_unique", Idl::Binary),
        (3, "supply_aad_prefix", Idl::Bool),
    ],
};

static ENCRYPTION_ALGORITHM: Struct = Struct {
    name: "EncryptionAlgorithm",
    fields: &[
        (1, "AES_GCM_V1", Idl::Struct(&AES_GCM)),
        (2, "AES_GCM_CTR_V1", Idl::Struct(&AES_GCM_CTR)),
    ],
};

/// The type of `FileMetaData`'s field 2, the schema.
static SCHEMA: Idl = Idl::List(&Idl::Struct(&SCHEMA_ELEMENT));

/// `FileMetaData`; its field 2, the schema, is walked apart (see
/// [`ThriftReader::file_meta_data`]) and is here for its type only.
static FILE_META_DATA: Struct = Struct {
    name: "FileMetaData",
    fields: &[
        (1, "version", Idl::I32),
        (2, "schema", SCHEMA),
        (3, "num_rows", Idl::I64),
        (4, "row_groups", Idl::List(&Idl::Struct(&ROW_GROUP))),
        (5, "key_value_metadata", Idl::List(&Idl::Struct(&KEY_VALUE))),
        (6, "created_by", Idl::Binary),
        (7, "column_orders", Idl::List(&Idl::Struct(&COLUMN_ORDER))),
        (
            8,
            "encryption_algorithm",
            Idl::Struct(&ENCRYPTION_ALGORITHM),
        ),
        (9, "footer_signing_key_metadata", Idl::Binary),
    ],
};

/// Why a footer is refused: it is corrupt (a message for "the footer is corrupt: ..."), or
/// its schema's tree does not fit (a whole message).
#[derive(Debug, PartialEq)]
pub(super) enum Refusal {
    Corrupt(String),
    Schema(String),
}

impl From<String> for Refusal {
    fn from(problem: String) -> Refusal {
        Refusal::Corrupt(problem)
    }
}

/// The groups of the schema read so far whose children have not all come (the `parquet`
/// crate's recursion while it builds the tree), in a fixed array.
struct OpenGroups {
    /// Children still to come of each open group, outermost first.
    remaining: [u32; MAX_SCHEMA_DEPTH],
    depth: usize,
    /// Their sum: each needs one schema element at least.
    pending: u64,
}

impl OpenGroups {
    /// Takes schema element `index` (of `len`), declaring `declared` children (0 where
    /// absent); the message of the first rule it breaks.
    fn take(&mut self, index: u64, len: u64, declared: i32) -> Result<(), String> {
        if self.depth > 0 {
            self.remaining[self.depth - 1] -= 1;
            self.pending -= 1;
        }
        let left = len - index - 1;
        // negative counts are the parquet crate's to refuse (it does, allocating nothing)
        if declared > 0 {
            let declared = declared as u32;
            if u64::from(declared) > left {
                return Err(format!(
                    "schema element {index} of the footer declares {declared} children, but \
                     the schema ends {left} element{} after it",
                    if left == 1 { "" } else { "s" }
                ));
            }
            self.pending += u64::from(declared);
            if self.pending > left {
                return Err(format!(
                    "schema element {index} of the footer declares {declared} children, but \
                     with the {} its enclosing groups still expect, the {left} element{} \
                     after it are too few",
                    self.pending - u64::from(declared),
                    if left == 1 { "" } else { "s" }
                ));
            }
            if self.depth == MAX_SCHEMA_DEPTH {
                return Err(format!(
                    "schema element {index} of the footer opens a group nested deeper than \
                     {MAX_SCHEMA_DEPTH}"
                ));
            }
            self.remaining[self.depth] = declared;
            self.depth += 1;
        } else {
            while self.depth > 0 && self.remaining[self.depth - 1] == 0 {
                self.depth -= 1;
            }
        }
        Ok(())
    }
}

impl<R: Read> ThriftReader<'_, R> {
    /// Walks a `FileMetaData` (see the module's documentation). Its first schema list is
    /// the one the `parquet` crate builds the schema from; a later one it skips.
    pub(super) fn file_meta_data(&mut self) -> Result<(), Refusal> {
        let mut schema_seen = false;
        let mut refusal = None;
        let walked = self.fields(0, |thrift, id, kind| {
            if id != 2 || schema_seen {
                return thrift.known_field(&FILE_META_DATA, id, kind, 0);
            }
            schema_seen = true;
            if !SCHEMA.sent_as(kind) {
                return Err(wire_mismatch(&FILE_META_DATA, 2, "schema", SCHEMA, kind));
            }
            let in_schema = |e: String| format!("FileMetaData.schema (field 2): {e}");
            let len = thrift
                .list_header(Idl::Struct(&SCHEMA_ELEMENT), 1)
                .map_err(in_schema)?;
            let mut open = OpenGroups {
                remaining: [0; MAX_SCHEMA_DEPTH],
                depth: 0,
                pending: 0,
            };
            for index in 0..len {
                let declared = thrift
                    .idl_struct(&SCHEMA_ELEMENT, 2, Some(5))
                    .map_err(|e| in_schema(format!("element {index}: {e}")))?;
                if let Err(message) = open.take(index, len, declared.unwrap_or(0)) {
                    refusal = Some(message);
                    // ends the walk; the refusal above is the one reported
                    return Err(String::new());
                }
            }
            Ok(true)
        });
        match (walked, refusal) {
            (_, Some(message)) => Err(Refusal::Schema(message)),
            (Err(problem), None) => Err(Refusal::Corrupt(problem)),
            (Ok(()), None) => Ok(()),
        }
    }

    /// Reads field `id` (wire type `kind`) of a `desc` struct by the IDL when the IDL has
    /// it, and returns true; returns false for a field to skip by its wire type.
    fn known_field(
        &mut self,
        desc: &'static Struct,
        id: i16,
        kind: u8,
        depth: u32,
    ) -> Result<bool, String> {
        let Some(&(_, name, idl)) = desc.fields.iter().find(|field| field.0 == id) else {
            return Ok(false);
        };
        if !idl.sent_as(kind) {
            return Err(wire_mismatch(desc, id, name, idl, kind));
        }
        self.idl_value(idl, depth)
            .map_err(|e| format!("{}.{name} (field {id}): {e}", desc.name))?;
        Ok(true)
    }

    /// Reads a `desc` struct by the IDL, fields at `depth`; the value of its i32 field
    /// `watch` (the last one sent), if any.
    fn idl_struct(
        &mut self,
        desc: &'static Struct,
        depth: u32,
        watch: Option<i16>,
    ) -> Result<Option<i32>, String> {
        if depth > THRIFT_MAX_DEPTH {
            return Err(format!("structs nested deeper than {THRIFT_MAX_DEPTH}"));
        }
        let mut watched = None;
        self.fields(depth, |thrift, id, kind| {
            if Some(id) == watch && kind == Idl::I32.wire() {
                // as the crate reads an i32: a zigzag varint cut to 32 bits
                watched = Some(thrift.zigzag()? as i32);
                return Ok(true);
            }
            thrift.known_field(desc, id, kind, depth)
        })?;
        Ok(watched)
    }

    /// Reads one value of IDL type `idl`, a field's or a list element's (nested values at
    /// `depth + 1`).
    fn idl_value(&mut self, idl: Idl, depth: u32) -> Result<(), String> {
        match idl {
            // a bool field's value is its wire type
            Idl::Bool => Ok(()),
            Idl::Byte => self.byte().map(drop),
            Idl::I16 | Idl::I32 | Idl::I64 => self.varint().map(drop),
            Idl::Double => self.skip_bytes(8),
            Idl::Binary => {
                let n = self.varint()?;
                self.skip_bytes(n)
            }
            Idl::Struct(desc) => self.idl_struct(desc, depth + 1, None).map(drop),
            Idl::List(&element) => {
                let len = self.list_header(element, depth + 1)?;
                for index in 0..len {
                    match element {
                        // a bool in a list is a byte
                        Idl::Bool => self.byte().map(drop),
                        _ => self.idl_value(element, depth + 1),
                    }
                    .map_err(|e| format!("element {index}: {e}"))?;
                }
                Ok(())
            }
        }
    }

    /// A list's header: its length, which must fit in the bytes left, its elements of
    /// `element`'s wire type (an empty list's may be any).
    fn list_header(&mut self, element: Idl, depth: u32) -> Result<u64, String> {
        if depth > THRIFT_MAX_DEPTH {
            return Err(format!("structs nested deeper than {THRIFT_MAX_DEPTH}"));
        }
        let header = self.byte()?;
        let len = match header >> 4 {
            15 => self.varint()?,
            n => u64::from(n),
        };
        if len == 0 {
            return Ok(0);
        }
        let kind = header & 0x0f;
        if !element.sent_as(kind) {
            return Err(format!(
                "a list of elements of wire type {kind}, where Parquet's IDL has {} ({})",
                element.wire(),
                element.name()
            ));
        }
        // every element takes a byte at least
        if len > self.limit - self.read {
            return Err(format!(
                "a list of {len} elements runs past {}",
                self.within
            ));
        }
        Ok(len)
    }
}

/// The message for field `id` of `desc` sent with the wire type `kind`.
fn wire_mismatch(desc: &Struct, id: i16, name: &str, idl: Idl, kind: u8) -> String {
    format!(
        "{} field {id} ({name}) has the wire type {kind}, where Parquet's IDL has {} ({})",
        desc.name,
        idl.wire(),
        idl.name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::metadata::ParquetMetaDataReader;

    /// A Thrift compact-protocol writer for hand-encoded footers: bytes, and the last field
    /// id of each open struct.
    struct Writer(Vec<u8>, Vec<i16>);

    impl Writer {
        fn new() -> Writer {
            Writer(Vec::new(), vec![0])
        }

        fn varint(&mut self, mut v: u64) -> &mut Writer {
            while v >= 0x80 {
                self.0.push(v as u8 | 0x80);
                v >>= 7;
            }
            self.0.push(v as u8);
            self
        }

        fn int(&mut self, v: i64) -> &mut Writer {
            self.varint(((v << 1) ^ (v >> 63)) as u64)
        }

        /// A field header: the id as a delta where it fits, else in full.
        fn field(&mut self, id: i16, kind: u8) -> &mut Writer {
            let last = self.1.last_mut().expect("an open struct");
            let delta = id - *last;
            *last = id;
            if (1..=15).contains(&delta) {
                self.0.push((delta as u8) << 4 | kind);
                self
            } else {
                self.0.push(kind);
                self.int(i64::from(id))
            }
        }

        fn i32(&mut self, id: i16, v: i64) -> &mut Writer {
            self.field(id, 5).int(v)
        }

        fn i64(&mut self, id: i16, v: i64) -> &mut Writer {
            self.field(id, 6).int(v)
        }

        fn bin(&mut self, id: i16, v: &[u8]) -> &mut Writer {
            self.field(id, 8).varint(v.len() as u64);
            self.0.extend_from_slice(v);
            self
        }

        /// A list header of `n` elements of wire type `kind`.
        fn list(&mut self, n: u64, kind: u8) -> &mut Writer {
            if n < 15 {
                self.0.push((n as u8) << 4 | kind);
                self
            } else {
                self.0.push(0xf0 | kind);
                self.varint(n)
            }
        }

        /// Opens a struct (a field's value or a list element).
        fn open(&mut self) -> &mut Writer {
            self.1.push(0);
            self
        }

        /// Closes a struct with its stop byte.
        fn close(&mut self) -> &mut Writer {
            self.0.push(0);
            self.1.pop();
            self
        }

        /// A schema element of `name` with `children` (a group) or, with none, an optional
        /// INT64 leaf.
        fn element(&mut self, name: &[u8], children: Option<i64>) -> &mut Writer {
            self.open();
            match children {
                Some(n) => self.bin(4, name).i32(5, n),
                None => self.i32(1, 2).i32(3, 1).bin(4, name),
            };
            self.close()
        }

        /// `FileMetaData`'s version and schema: a root over the leaf `a` (all a test
        /// footer's fields up to the row groups).
        fn version_and_schema(&mut self) -> &mut Writer {
            self.i32(1, 2).field(2, 9).list(2, 12);
            self.element(b"root", Some(1)).element(b"a", None)
        }

        /// A `ColumnChunk` of the leaf `a` at byte 4, `meta` its `ColumnMetaData`'s fields.
        fn chunk(&mut self, meta: impl FnOnce(&mut Writer)) -> &mut Writer {
            self.open().i64(2, 4).field(3, 12).open();
            meta(self);
            self.close().close()
        }
    }

    /// A valid `ColumnMetaData`'s fields: INT64, PLAIN, path `a`, uncompressed, no values,
    /// data at byte 4.
    fn plain_meta(w: &mut Writer) {
        w.i32(1, 2).field(2, 9).list(1, 5).int(0);
        w.field(3, 9).list(1, 8).varint(1).0.push(b'a');
        w.i32(4, 0).i64(5, 0).i64(6, 0).i64(7, 0).i64(9, 4);
    }

    /// A footer of one row group of one column chunk whose metadata `meta` writes.
    fn footer(meta: impl FnOnce(&mut Writer)) -> Vec<u8> {
        let mut w = Writer::new();
        w.version_and_schema().i64(3, 0).field(4, 9).list(1, 12);
        w.open().field(1, 9).list(1, 12).chunk(meta);
        w.i64(2, 0).i64(3, 0).close().close();
        w.0
    }

    fn walk(footer: &[u8]) -> Result<(), Refusal> {
        let mut bytes = footer;
        ThriftReader::new(&mut bytes, footer.len() as u64, "the footer").file_meta_data()
    }

    /// The walk's message for a corrupt `footer`, which must hold `part`.
    #[track_caller]
    fn corrupt(footer: &[u8], part: &str) {
        match walk(footer) {
            Err(Refusal::Corrupt(message)) => assert!(message.contains(part), "{message}"),
            other => panic!("{other:?}, not corrupt: {part}"),
        }
    }

    #[test]
    fn a_valid_footer_walks_as_the_parquet_crate_reads_it() {
        let valid = footer(plain_meta);
        assert_eq!(walk(&valid), Ok(()));
        // the peer: the parquet crate reads the hand-encoded footer as meant
        let metadata = ParquetMetaDataReader::decode_metadata(&valid).unwrap();
        assert_eq!(metadata.num_row_groups(), 1);
        assert_eq!(metadata.row_group(0).column(0).data_page_offset(), 4);
        // statistics, encoding stats, size statistics and a key-value pair as the IDL has
        // them walk too, and the crate reads them
        let full = footer(|w| {
            plain_meta(w);
            w.field(12, 12)
                .open()
                .bin(1, &[0; 8])
                .bin(2, &[0; 8])
                .i64(3, 0);
            w.field(7, 1).field(8, 2).close();
            w.field(13, 9)
                .list(1, 12)
                .open()
                .i32(1, 0)
                .i32(2, 0)
                .i32(3, 1)
                .close();
            w.field(16, 12)
                .open()
                .i64(1, 0)
                .field(2, 9)
                .list(2, 6)
                .int(1)
                .int(0);
            w.close();
        });
        assert_eq!(walk(&full), Ok(()));
        ParquetMetaDataReader::decode_metadata(&full).unwrap();
    }

    #[test]
    fn a_list_field_sent_with_another_wire_type_is_refused_naming_the_place() {
        // RowGroup.columns (a list) sent as a binary: the crate would read a list header
        // from the binary's length byte, and its elements from the bytes of the binary
        let mut w = Writer::new();
        w.version_and_schema().i64(3, 0).field(4, 9).list(1, 12);
        w.open()
            .bin(1, &[0x1c; 4])
            .i64(2, 0)
            .i64(3, 0)
            .close()
            .close();
        corrupt(
            &w.0,
            "FileMetaData.row_groups (field 4): element 0: RowGroup field 1 (columns) has \
             the wire type 8, where Parquet's IDL has 9 (list)",
        );
        // RowGroup.sorting_columns sent as a struct
        let mut w = Writer::new();
        w.version_and_schema().i64(3, 0).field(4, 9).list(1, 12);
        w.open().field(1, 9).list(1, 12).chunk(plain_meta);
        w.field(4, 12).open().close().close().close();
        corrupt(
            &w.0,
            "RowGroup field 4 (sorting_columns) has the wire type 12",
        );
        // ColumnChunk.meta_data sent as a list
        let mut w = Writer::new();
        w.version_and_schema().i64(3, 0).field(4, 9).list(1, 12);
        w.open()
            .field(1, 9)
            .list(1, 12)
            .open()
            .i64(2, 4)
            .field(3, 9)
            .list(0, 12);
        w.close().close().close();
        corrupt(
            &w.0,
            "RowGroup.columns (field 1): element 0: ColumnChunk field 3 (meta_data) has the \
             wire type 9, where Parquet's IDL has 12 (ColumnMetaData)",
        );
        // ColumnMetaData.encodings sent as an i32, and its path as a binary
        corrupt(
            &footer(|w| {
                w.i32(1, 2).i32(2, 0);
            }),
            "ColumnChunk.meta_data (field 3): ColumnMetaData field 2 (encodings) has the wire \
             type 5, where Parquet's IDL has 9 (list)",
        );
        corrupt(
            &footer(|w| {
                w.bin(3, b"a");
            }),
            "ColumnMetaData field 3 (path_in_schema) has the wire type 8",
        );
        // a list of the wrong element type: encodings as binaries
        corrupt(
            &footer(|w| {
                w.field(2, 9).list(1, 8).varint(0);
            }),
            "ColumnMetaData.encodings (field 2): a list of elements of wire type 8, where \
             Parquet's IDL has 5 (i32)",
        );
        // schema fields too: num_children sent as an i64, a name as a double
        let mut w = Writer::new();
        w.i32(1, 2)
            .field(2, 9)
            .list(1, 12)
            .open()
            .bin(4, b"r")
            .i64(5, 0)
            .close();
        corrupt(
            &w.0,
            "FileMetaData.schema (field 2): element 0: SchemaElement field 5 (num_children) \
             has the wire type 6, where Parquet's IDL has 5 (i32)",
        );
        let mut w = Writer::new();
        w.i32(1, 2).field(2, 9).list(1, 12).open().field(4, 7);
        w.0.extend([0; 8]);
        w.close();
        corrupt(&w.0, "SchemaElement field 4 (name) has the wire type 7");
        // a logicalType sent as a binary (found by fuzzing), and a bool as an i32
        let mut w = Writer::new();
        w.i32(1, 2)
            .field(2, 9)
            .list(1, 12)
            .open()
            .bin(4, b"r")
            .bin(10, b"x")
            .close();
        corrupt(
            &w.0,
            "SchemaElement field 10 (logicalType) has the wire type 8, where Parquet's IDL \
             has 12 (LogicalType)",
        );
        let mut w = Writer::new();
        w.i32(1, 2)
            .field(2, 9)
            .list(1, 12)
            .open()
            .bin(4, b"r")
            .field(10, 12)
            .open();
        w.field(8, 12).open().i32(1, 1).close().close().close();
        corrupt(
            &w.0,
            "LogicalType.TIMESTAMP (field 8): TimestampType field 1 (isAdjustedToUTC) has the \
             wire type 5, where Parquet's IDL has 2 (bool)",
        );
    }

    #[test]
    fn counts_past_the_end_are_refused_wherever_they_nest() {
        // path_in_schema declaring 1000 names in a footer of some 60 bytes
        corrupt(
            &footer(|w| {
                w.field(3, 9).list(1000, 8);
            }),
            "ColumnMetaData.path_in_schema (field 3): a list of 1000 elements runs past the \
             footer",
        );
        // a size statistics histogram of 2^40 entries
        corrupt(
            &footer(|w| {
                w.field(16, 12).open().field(2, 9).list(1 << 40, 6);
            }),
            "SizeStatistics.repetition_level_histogram (field 2): a list of 1099511627776",
        );
        // a statistics value of 2^31 bytes
        corrupt(
            &footer(|w| {
                w.field(12, 12).open().field(1, 8).varint(1 << 31);
            }),
            "Statistics.max (field 1): a binary field of 2147483648 bytes runs past",
        );
        // the row groups and the schema themselves
        let mut w = Writer::new();
        w.version_and_schema()
            .i64(3, 0)
            .field(4, 9)
            .list(i32::MAX as u64, 12);
        corrupt(
            &w.0,
            "FileMetaData.row_groups (field 4): a list of 2147483647",
        );
        let mut w = Writer::new();
        w.i32(1, 2).field(2, 9).list(128, 12);
        corrupt(
            &w.0,
            "FileMetaData.schema (field 2): a list of 128 elements runs past",
        );
        // a footer cut short
        let valid = footer(plain_meta);
        corrupt(&valid[..valid.len() - 3], "runs past the end of the footer");
    }

    #[test]
    fn skipped_booleans_take_no_byte_as_in_the_parquet_crate() {
        // an unknown field 20 of FileMetaData: a list of 3 booleans, followed at once (the
        // crate skips them without reading a byte) by a schema whose root declares 5
        // children: the walk sees that schema where the crate does
        let mut w = Writer::new();
        w.field(20, 9).list(3, 1);
        w.field(1, 5).int(2).field(2, 9).list(2, 12);
        w.element(b"root", Some(5)).element(b"a", None).close();
        assert_eq!(
            walk(&w.0),
            Err(Refusal::Schema(
                "schema element 0 of the footer declares 5 children, but the schema ends 1 \
                 element after it"
                    .to_string()
            ))
        );
        // the crate reads the same schema there (and refuses it itself)
        let err = ParquetMetaDataReader::decode_metadata(&w.0).unwrap_err();
        assert!(err.to_string().contains("Index out of bound"), "{err}");
        // booleans take no byte, so the crate's loop is counted: a list of 2^20 of them in
        // a few bytes, or short lists of them adding up past the footer's length
        let mut w = Writer::new();
        w.field(20, 9).list(1 << 20, 2).close();
        corrupt(&w.0, "a list of 1048576 elements runs past the footer");
        let mut w = Writer::new();
        w.field(20, 9).list(40, 9);
        for _ in 0..40 {
            w.list(10, 1);
        }
        w.bin(21, &[0; 20]).close();
        corrupt(
            &w.0,
            "skipped booleans in lists and maps, which take no byte",
        );
        // a map of booleans to booleans alike
        let mut w = Writer::new();
        w.field(20, 11).varint(1 << 20).0.push(0x12);
        corrupt(&w.0, "a map of 1048576 entries runs past the footer");
    }

    #[test]
    fn the_schema_tree_must_fit_its_elements_and_nest_at_most_the_limit() {
        /// A footer whose schema elements declare `children` (None: a leaf).
        fn schema(children: &[Option<i64>]) -> Vec<u8> {
            let mut w = Writer::new();
            w.i32(1, 2).field(2, 9).list(children.len() as u64, 12);
            for (i, &n) in children.iter().enumerate() {
                w.element(format!("e{i}").as_bytes(), n);
            }
            w.close();
            w.0
        }
        assert_eq!(walk(&schema(&[Some(2), None, None])), Ok(()));
        assert_eq!(walk(&schema(&[Some(2), Some(2), None, None, None])), Ok(()));
        // the fuzzed file's root: 2^31 - 1 children with one element after it
        let message = |text: &str| Err(Refusal::Schema(text.to_string()));
        assert_eq!(
            walk(&schema(&[Some(i32::MAX as i64), None])),
            message(
                "schema element 0 of the footer declares 2147483647 children, but the schema \
                 ends 1 element after it"
            )
        );
        // a nested group may not claim its parent's later siblings: its 2 children and the
        // root's second need 3 elements, and 2 follow
        assert_eq!(
            walk(&schema(&[Some(2), Some(2), None, None])),
            message(
                "schema element 1 of the footer declares 2 children, but with the 1 its \
                 enclosing groups still expect, the 2 elements after it are too few"
            )
        );
        // the count is an i32 as the crate reads it: 2^32 + 1 is 1
        let mut w = Writer::new();
        w.i32(1, 2)
            .field(2, 9)
            .list(2, 12)
            .open()
            .bin(4, b"r")
            .i32(5, (1 << 32) + 1);
        w.close().element(b"a", None).close();
        assert_eq!(walk(&w.0), Ok(()));
        // negative counts are the crate's to refuse (it does, allocating nothing)
        assert_eq!(walk(&schema(&[Some(-1), None])), Ok(()));
        // a chain of one-child groups: 128 deep walks, 129 is refused
        let chain = |groups: usize| {
            let mut elements = vec![Some(1); groups];
            elements.push(None);
            schema(&elements)
        };
        assert_eq!(walk(&chain(MAX_SCHEMA_DEPTH)), Ok(()));
        assert_eq!(
            walk(&chain(MAX_SCHEMA_DEPTH + 1)),
            message("schema element 128 of the footer opens a group nested deeper than 128")
        );
        // a second schema list is skipped by the crate: its counts are not the tree's
        let mut w = Writer::new();
        w.i32(1, 2).field(2, 9).list(2, 12);
        w.element(b"root", Some(1)).element(b"a", None);
        w.field(2, 9).list(1, 12).element(b"x", Some(5)).close();
        assert_eq!(walk(&w.0), Ok(()));
    }

    #[test]
    fn structs_nested_past_the_limit_are_refused() {
        // an unknown field 20 of FileMetaData holding structs 20 deep
        let mut w = Writer::new();
        w.field(20, 12);
        for _ in 0..20 {
            w.0.push(0x1c);
        }
        w.0.extend([0; 22]);
        corrupt(&w.0, "structs nested deeper than 16");
        // field ids beyond i16 are refused, as the crate refuses them
        let mut w = Writer::new();
        w.field(32767, 6).int(0).0.extend([0x16, 0x00, 0x00]);
        corrupt(&w.0, "a field id beyond i16");
    }
}
