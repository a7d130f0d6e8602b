//! The compact binary form of an FSA or FsaVec, for pickling (and shipping by Ray): the row
//! splits, the 16-byte arcs and every attribute, little-endian. Reading checks every length
//! before allocating and builds the object through ragged-fsa's checked constructors, so a
//! truncated or forged byte string is an error, never a crash.

use ragged_core::{Ragged, RaggedShape};
use ragged_fsa::{Arc, Attr, Fsa, FsaVec};

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
    let ragged = Ragged::new(shape, arcs).map_err(|e| e.to_string())?;
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
                Attr::Ragged(Ragged::new(shape, v).map_err(|e| e.to_string())?)
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
