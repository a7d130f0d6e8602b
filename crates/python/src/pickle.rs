//! The compact binary forms of the Python objects, for pickling (and shipping by Ray).
//!
//! An FSA or FsaVec: the row splits, the 16-byte arcs and every attribute, little-endian.
//! A `StructuredTensor`: its Arrow form (a struct array, in lists above rank 1) as an Arrow
//! IPC stream of one column, the bytes pyarrow's `ipc.open_stream` reads too; a rank-0
//! tensor, which has no Arrow form, as its JSON text. Reading checks every length before
//! allocating and builds the object through the crates' checked constructors, so a
//! truncated or forged byte string is an error, never a crash.

use std::io::Cursor;
use std::sync::Arc as Shared;

use arrow_array::{Array, RecordBatch, StructArray};
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{Field, Schema};
use ragged_core::{Ragged, RaggedShape};
use ragged_fsa::{Arc, Attr, Fsa, FsaVec};
use structured_tensor::{ArrowOptions, StructuredTensor};

use crate::Inner;

const MAGIC: &[u8; 8] = b"arrFSA01";

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_i32s(out: &mut Vec<u8>, v: &[i32]) {
    put_u64(out, v.len() as u64);
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

/// Encodes `inner`.
pub fn encode(inner: &Inner) -> Vec<u8> {
    let arcs = match inner {
        Inner::One(f) => f.arcs(),
        Inner::Vec(v) => v.arcs(),
    };
    let attrs = match inner {
        Inner::One(f) => f.attrs(),
        Inner::Vec(v) => v.attrs(),
    };
    let mut out = Vec::with_capacity(16 + arcs.num_elements() * 16);
    out.extend_from_slice(MAGIC);
    out.push(arcs.num_axes() as u8);
    for axis in 1..arcs.num_axes() {
        put_i32s(&mut out, arcs.row_splits(axis));
    }
    put_u64(&mut out, arcs.num_elements() as u64);
    for a in arcs.values() {
        for x in [a.src_state, a.dest_state, a.label, a.score.to_bits() as i32] {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    put_u64(&mut out, attrs.len() as u64);
    for (name, attr) in attrs {
        put_u64(&mut out, name.len() as u64);
        out.extend_from_slice(name.as_bytes());
        match attr {
            Attr::I32(v) => {
                out.push(0);
                put_i32s(&mut out, v);
            }
            Attr::F32(v) => {
                out.push(1);
                let bits: Vec<i32> = v.iter().map(|x| x.to_bits() as i32).collect();
                put_i32s(&mut out, &bits);
            }
            Attr::Ragged(r) => {
                out.push(2);
                put_i32s(&mut out, r.row_splits(1));
                put_i32s(&mut out, r.values());
            }
        }
    }
    out
}

/// A reader over the bytes that refuses to run past their end.
struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.data.len() {
            return Err(format!(
                "truncated FSA bytes: {n} bytes wanted, {} left",
                self.data.len()
            ));
        }
        let (head, tail) = self.data.split_at(n);
        self.data = tail;
        Ok(head)
    }

    fn u64(&mut self) -> Result<u64, String> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    /// A length whose `width`-byte items must fit in what is left.
    fn len(&mut self, width: usize) -> Result<usize, String> {
        let n = self.u64()?;
        let left = (self.data.len() / width) as u64;
        if n > left {
            return Err(format!(
                "corrupt FSA bytes: a length of {n} with room for {left}"
            ));
        }
        Ok(n as usize)
    }

    fn i32s(&mut self) -> Result<Vec<i32>, String> {
        let n = self.len(4)?;
        let b = self.take(n * 4)?;
        Ok(b.chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect())
    }
}

/// Decodes what [`encode`] wrote.
pub fn decode(data: &[u8]) -> Result<Inner, String> {
    let mut r = Reader { data };
    if r.take(MAGIC.len())? != MAGIC {
        return Err("not the binary form of an FSA (bad magic bytes)".into());
    }
    let axes = r.take(1)?[0] as usize;
    if !(2..=3).contains(&axes) {
        return Err(format!("an FSA has 2 or 3 axes, not {axes}"));
    }
    let mut splits = Vec::new();
    for _ in 1..axes {
        splits.push(r.i32s()?);
    }
    let n = r.len(16)?;
    let raw = r.take(n * 16)?;
    let word = |c: &[u8], k: usize| i32::from_le_bytes(c[4 * k..4 * k + 4].try_into().expect("4"));
    let arcs: Vec<Arc> = raw
        .chunks_exact(16)
        .map(|c| Arc {
            src_state: word(c, 0),
            dest_state: word(c, 1),
            label: word(c, 2),
            score: f32::from_bits(word(c, 3) as u32),
        })
        .collect();
    let shape = RaggedShape::from_row_splits(splits).map_err(|e| e.to_string())?;
    let ragged = Ragged::try_new(shape, arcs).map_err(|e| e.to_string())?;
    let mut inner = if axes == 2 {
        Inner::One(Fsa::from_ragged(ragged).map_err(|e| e.to_string())?)
    } else {
        Inner::Vec(FsaVec::from_ragged(ragged).map_err(|e| e.to_string())?)
    };
    let count = r.len(9)?;
    for _ in 0..count {
        let len = r.len(1)?;
        let name = std::str::from_utf8(r.take(len)?)
            .map_err(|_| "an attribute name is not UTF-8".to_string())?
            .to_string();
        let kind = r.take(1)?[0];
        let attr = match kind {
            0 => Attr::I32(r.i32s()?),
            1 => Attr::F32(
                r.i32s()?
                    .into_iter()
                    .map(|b| f32::from_bits(b as u32))
                    .collect(),
            ),
            2 => {
                let s = r.i32s()?;
                let v = r.i32s()?;
                let shape = RaggedShape::from_row_splits(vec![s]).map_err(|e| e.to_string())?;
                Attr::Ragged(Ragged::try_new(shape, v).map_err(|e| e.to_string())?)
            }
            other => return Err(format!("unknown attribute kind {other}")),
        };
        inner.set_attr(&name, attr).map_err(|e| e.to_string())?;
    }
    if !r.data.is_empty() {
        return Err(format!("{} bytes after the FSA", r.data.len()));
    }
    Ok(inner)
}

const ST_MAGIC: &[u8; 8] = b"arrST001";
/// The kind byte after [`ST_MAGIC`]: an Arrow IPC stream follows.
const ST_ARROW: u8 = 0;
/// The kind byte after [`ST_MAGIC`]: JSON text follows (rank 0).
const ST_JSON: u8 = 1;

/// Encodes a structured tensor: magic, kind, then an Arrow IPC stream (rank 1 and up) or
/// the JSON text (rank 0).
pub fn encode_structured(st: &StructuredTensor) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    out.extend_from_slice(ST_MAGIC);
    if st.rank() == 0 {
        out.push(ST_JSON);
        out.extend_from_slice(st.to_json_string().as_bytes());
        return Ok(out);
    }
    out.push(ST_ARROW);
    let array: arrow_array::ArrayRef = if st.rank() == 1 {
        let batch = st.to_record_batch().map_err(|e| e.to_string())?;
        Shared::new(StructArray::from(batch))
    } else {
        st.to_arrow().map_err(|e| e.to_string())?
    };
    let schema = Shared::new(Schema::new(vec![Field::new(
        "st",
        array.data_type().clone(),
        array.is_nullable(),
    )]));
    let batch = RecordBatch::try_new(schema.clone(), vec![array]).map_err(|e| e.to_string())?;
    let mut writer = StreamWriter::try_new(&mut out, &schema).map_err(|e| e.to_string())?;
    writer.write(&batch).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    drop(writer);
    Ok(out)
}

/// Decodes what [`encode_structured`] wrote. Arrow's IPC reader checks the flatbuffers and
/// the buffers against the schema; the tensor is then built by the crate's checked
/// `from_arrow` (nulls and any field name allowed: the tensor that was written held them).
pub fn decode_structured(data: &[u8]) -> Result<StructuredTensor, String> {
    let bad = |why: String| format!("corrupt StructuredTensor bytes: {why}");
    if data.len() < ST_MAGIC.len() + 1 || &data[..ST_MAGIC.len()] != ST_MAGIC {
        return Err("not the binary form of a StructuredTensor (bad magic bytes)".into());
    }
    let body = &data[ST_MAGIC.len() + 1..];
    match data[ST_MAGIC.len()] {
        ST_JSON => {
            let text = std::str::from_utf8(body).map_err(|e| bad(e.to_string()))?;
            StructuredTensor::from_json_str(text).map_err(|e| bad(e.to_string()))
        }
        ST_ARROW => {
            check_ipc_stream(body).map_err(bad)?;
            // Arrow's reader still asserts on some forged inputs the walk above cannot see
            // (a validated array over a buffer too short for its type): such a panic is
            // caught here and reported as corrupt bytes, like every other refusal
            let read = std::panic::catch_unwind(|| -> Result<RecordBatch, String> {
                let mut reader =
                    StreamReader::try_new(Cursor::new(body), None).map_err(|e| e.to_string())?;
                let batch = reader
                    .next()
                    .ok_or_else(|| "the Arrow stream holds no batch".to_string())?
                    .map_err(|e| e.to_string())?;
                if reader.next().is_some() {
                    return Err("the Arrow stream holds more than one batch".into());
                }
                Ok(batch)
            });
            let batch = match read {
                Ok(result) => result.map_err(bad)?,
                Err(_) => return Err(bad("Arrow's IPC reader refused the stream".into())),
            };
            if batch.num_columns() != 1 {
                return Err(bad(format!(
                    "{} columns where one is written",
                    batch.num_columns()
                )));
            }
            let options = ArrowOptions::default()
                .with_nulls(true)
                .with_any_field_names(true);
            StructuredTensor::from_arrow_with_options(batch.column(0).as_ref(), &options)
                .map_err(|e| bad(e.to_string()))
        }
        other => Err(bad(format!("unknown kind byte {other}"))),
    }
}

/// Walks the messages of an Arrow IPC stream before Arrow's reader sees them: each
/// message's metadata is a verified flatbuffer, its body lies inside the bytes, every
/// buffer of a record batch lies inside its body (Arrow's reader slices buffers without
/// checking and would panic on a forged offset), nothing is compressed, and the stream
/// ends with its end-of-stream marker and nothing after it.
fn check_ipc_stream(mut data: &[u8]) -> Result<(), String> {
    let mut index = 0usize;
    loop {
        let word = |d: &[u8]| -> Result<u32, String> {
            d.get(..4)
                .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
                .ok_or_else(|| format!("truncated at message {index}"))
        };
        let mut meta_len = word(data)?;
        data = &data[4..];
        if meta_len == 0xFFFF_FFFF {
            meta_len = word(data)?;
            data = &data[4..];
        }
        if meta_len == 0 {
            return if data.is_empty() {
                Ok(())
            } else {
                Err(format!("{} bytes after the end of the stream", data.len()))
            };
        }
        let meta_len = meta_len as usize;
        let meta = data.get(..meta_len).ok_or_else(|| {
            format!(
                "message {index}: {meta_len} bytes of metadata, {} left",
                data.len()
            )
        })?;
        data = &data[meta_len..];
        let message = arrow_ipc::root_as_message(meta)
            .map_err(|e| format!("message {index}: bad metadata ({e})"))?;
        let body_len = usize::try_from(message.bodyLength())
            .ok()
            .filter(|&n| n <= data.len())
            .ok_or_else(|| {
                format!(
                    "message {index}: a body of {} bytes, {} left",
                    message.bodyLength(),
                    data.len()
                )
            })?;
        if let Some(batch) = message.header_as_record_batch() {
            if batch.compression().is_some() {
                return Err(format!(
                    "message {index}: compressed bodies are not written"
                ));
            }
            for (k, buffer) in batch.buffers().into_iter().flatten().enumerate() {
                let end = buffer.offset().checked_add(buffer.length());
                // the format aligns every buffer to 8 bytes; Arrow's typed views of a
                // misaligned one panic
                let inside = buffer.offset() >= 0
                    && buffer.offset() % 8 == 0
                    && buffer.length() >= 0
                    && end.is_some_and(|end| end as u64 <= body_len as u64);
                if !inside {
                    return Err(format!(
                        "message {index}: buffer {k} at {} of {} bytes is misaligned or lies outside a body of {body_len}",
                        buffer.offset(),
                        buffer.length()
                    ));
                }
            }
        } else if message.header_as_schema().is_none() {
            return Err(format!(
                "message {index}: neither a schema nor a record batch"
            ));
        }
        data = &data[body_len..];
        index += 1;
    }
}
