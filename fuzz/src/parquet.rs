//! structured-tensor's Parquet readers: `read_parquet` (and ragged-core's
//! `read_ragged_parquet`) on any bytes, with declared sizes (page sizes, chunk sizes, list
//! lengths) overwritten by hostile values, and `read_parquet_dir` on small directory trees
//! of nested and hive `k=v` directories (keys repeated), symbolic links to ancestors and to
//! other directories, small Parquet files and garbage. Either must end, with a tensor or an
//! error, never a panic or an abort; a tensor that was read survives a write-read round
//! trip, and a directory read whole has the rows of its files read one by one.

use std::cell::Cell;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use structured_tensor::{
    parquet_dir_files, read_parquet, read_parquet_dir, write_parquet, Compression, ParquetOptions,
    PartitionMode, StructuredTensor,
};

use crate::Bytes;

/// Inputs longer than this are ignored.
pub const MAX_LEN: usize = 1 << 16;

/// The most operations a `parquet_dir` input builds its tree with.
const MAX_TREE_OPS: usize = 32;

/// The values a `parquet_read` input may write over a declared size: the edges of i32 and
/// i64, negatives, and sizes far beyond any file.
const HOSTILE_SIZES: [i64; 8] = [
    i32::MAX as i64,
    i32::MIN as i64,
    -1,
    0,
    1 << 31,
    1 << 40,
    i64::MAX,
    255,
];

/// A scratch path of this process and thread, under the system's temporary directory; the
/// same one on every call, so a long fuzzing run leaves one file or tree behind at most.
fn scratch(kind: &str) -> PathBuf {
    thread_local! {
        static ID: Cell<u64> = const { Cell::new(0) };
    }
    let id = ID.with(|id| {
        if id.get() == 0 {
            use std::hash::{BuildHasher, RandomState};
            id.set(RandomState::new().hash_one(std::thread::current().id()) | 1);
        }
        id.get()
    });
    std::env::temp_dir().join(format!("fuzz-{kind}-{}-{id:016x}", std::process::id()))
}

/// The first byte picks the mode: even, the rest is the file as it is; odd, the next two
/// bytes are a position and the third picks one of `HOSTILE_SIZES`, written as a Thrift
/// varint over the varint at that position of the file (the rest), the footer length
/// updated when the position lies in the footer.
pub fn parquet_read(data: &[u8]) {
    if data.len() > MAX_LEN {
        return;
    }
    let mut bytes = Bytes::new(data);
    let file = if bytes.byte() & 1 == 0 {
        bytes.rest().to_vec()
    } else {
        let position = usize::from(bytes.u16());
        let value = HOSTILE_SIZES[usize::from(bytes.byte()) % HOSTILE_SIZES.len()];
        overwrite_varint(bytes.rest(), position, value)
    };
    let path = scratch("parquet-read").with_extension("parquet");
    if fs::write(&path, &file).is_err() {
        return;
    }
    let read = read_parquet(&path);
    // the ragged reader goes through the same checks and must end alike
    let _ = ragged_core::read_ragged_parquet::<i64>(&path, "a");
    let _ = ragged_core::read_ragged_parquet::<f64>(&path, "x");
    let _ = fs::remove_file(&path);
    if let Ok(st) = read {
        round_trip(&st, &path);
    }
}

/// `st` written and read back: the same tensor.
fn round_trip(st: &StructuredTensor, path: &Path) {
    let options = ParquetOptions {
        row_group_size: 2,
        compression: Compression::Snappy,
    };
    // a tensor with no fields has no Arrow form; any other that was read can be written
    if st.fields().is_empty() {
        return;
    }
    write_parquet(path, st, &options)
        .unwrap_or_else(|e| panic!("a tensor read from Parquet does not write back: {e}\n{st}"));
    let again = read_parquet(path);
    let _ = fs::remove_file(path);
    let again = again.unwrap_or_else(|e| panic!("our own file does not read back: {e}\n{st}"));
    // a NaN read from the file is unequal to itself, but prints alike
    assert!(
        again == *st || again.to_string() == st.to_string(),
        "Parquet round trip:\n{st}\n{again}"
    );
}

/// `file` with the varint at `position % len` replaced by `value`'s zigzag varint; when
/// the position lies in the footer (as the file's tail declares it), the footer length is
/// updated by the change in length.
fn overwrite_varint(file: &[u8], position: usize, value: i64) -> Vec<u8> {
    if file.is_empty() {
        return Vec::new();
    }
    let start = position % file.len();
    let old_len = file[start..]
        .iter()
        .take(10)
        .position(|b| b & 0x80 == 0)
        .map_or(1, |i| i + 1);
    let mut zigzag = ((value << 1) ^ (value >> 63)) as u64;
    let mut new = Vec::new();
    loop {
        let b = (zigzag & 0x7f) as u8;
        zigzag >>= 7;
        if zigzag == 0 {
            new.push(b);
            break;
        }
        new.push(b | 0x80);
    }
    let mut out = file[..start].to_vec();
    out.extend(&new);
    out.extend(&file[start + old_len..]);
    let n = file.len();
    if n >= 12 && &file[n - 4..] == b"PAR1" && out.len() >= 8 {
        let footer_len = u32::from_le_bytes([file[n - 8], file[n - 7], file[n - 6], file[n - 5]]);
        let footer_start = (n - 8).saturating_sub(footer_len as usize);
        if start >= footer_start && start < n - 8 {
            let grown = footer_len as i64 + new.len() as i64 - old_len as i64;
            if let Ok(grown) = u32::try_from(grown) {
                let m = out.len();
                out[m - 8..m - 4].copy_from_slice(&grown.to_le_bytes());
            }
        }
    }
    out
}

/// Small valid Parquet files of a few schemas (scalars, strings, a nested struct with
/// lists), written once per process; `parquet_dir` places them in its trees.
fn small_files() -> &'static [Vec<u8>] {
    static FILES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    FILES.get_or_init(|| {
        let path = scratch("parquet-seed").with_extension("parquet");
        let records = [
            serde_json::json!([{"a": 1}, {"a": 2}]),
            serde_json::json!([{"a": 3}]),
            serde_json::json!([{"a": 4, "s": "x"}]),
            serde_json::json!([{"a": 5, "n": {"x": [1.5, 2.5]}}, {"a": 6, "n": {"x": []}}]),
        ];
        let files = records
            .iter()
            .map(|json| {
                let st = StructuredTensor::from_json(json).expect("a valid seed tensor");
                write_parquet(&path, &st, &ParquetOptions::default()).expect("a seed write");
                fs::read(&path).expect("the seed file")
            })
            .collect();
        let _ = fs::remove_file(&path);
        files
    })
}

/// Directory names, hive keys among them (repeated, null, badly escaped or named).
const DIR_NAMES: [&str; 12] = [
    "a",
    "b",
    "k=1",
    "k=2",
    "j=x",
    "k=a%20b",
    "_hidden",
    ".dot",
    "k=__HIVE_DEFAULT_PARTITION__",
    "1k=bad",
    "k=%zz",
    "a=1",
];

/// File and link names, hidden ones among them.
const FILE_NAMES: [&str; 6] = [
    "part-0.parquet",
    "part-1.parquet",
    "_SUCCESS",
    ".part-0.parquet.partial",
    "x",
    "l",
];

/// Builds a tree from the bytes (each operation a byte for its kind and bytes for its
/// arguments), then lists and reads it in both modes.
pub fn parquet_dir(data: &[u8]) {
    if data.len() > MAX_LEN {
        return;
    }
    let root = scratch("parquet-dir");
    let _ = fs::remove_dir_all(&root);
    if fs::create_dir_all(&root).is_err() {
        return;
    }
    build_tree(&root, &mut Bytes::new(data));
    check_tree(&root);
    let _ = fs::remove_dir_all(&root);
}

fn build_tree(root: &Path, bytes: &mut Bytes<'_>) {
    let mut dirs = vec![root.to_path_buf()];
    for _ in 0..MAX_TREE_OPS {
        if bytes.is_empty() {
            break;
        }
        let op = bytes.byte();
        let parent = dirs[usize::from(bytes.byte()) % dirs.len()].clone();
        match op % 6 {
            0 | 1 => {
                let dir = parent.join(DIR_NAMES[usize::from(bytes.byte()) % DIR_NAMES.len()]);
                if fs::create_dir_all(&dir).is_ok() && !dirs.contains(&dir) {
                    dirs.push(dir);
                }
            }
            2 => {
                let name = FILE_NAMES[usize::from(bytes.byte()) % FILE_NAMES.len()];
                let files = small_files();
                let file = &files[usize::from(bytes.byte()) % files.len()];
                let _ = fs::write(parent.join(name), file);
            }
            3 => {
                // garbage, or a valid file cut short
                let name = FILE_NAMES[usize::from(bytes.byte()) % FILE_NAMES.len()];
                let len = usize::from(bytes.byte() % 64);
                let files = small_files();
                let file = &files[usize::from(bytes.byte()) % files.len()];
                let _ = fs::write(parent.join(name), &file[..len.min(file.len())]);
            }
            4 => {
                // a link to an ancestor: `.`, `..`, `../..` (relative, never above the
                // root, counted where the parent really is), or the root itself
                let Some(depth) = depth_below(root, &parent) else {
                    continue;
                };
                let up = usize::from(bytes.byte() % 4);
                let target = if up == 3 {
                    root.to_path_buf()
                } else if up == 0 {
                    PathBuf::from(".")
                } else {
                    PathBuf::from(vec![".."; up.min(depth).max(1)].join("/"))
                };
                if up > depth && up != 3 {
                    continue;
                }
                let name = DIR_NAMES[usize::from(bytes.byte()) % DIR_NAMES.len()];
                symlink(&target, &parent.join(name));
            }
            _ => {
                // a link to any directory of the tree (a sibling, a descendant, itself)
                let target = dirs[usize::from(bytes.byte()) % dirs.len()].clone();
                let name = DIR_NAMES[usize::from(bytes.byte()) % DIR_NAMES.len()];
                symlink(&target, &parent.join(name));
            }
        }
    }
}

/// How many directories `dir` lies below `root`, symbolic links resolved; `None` outside.
fn depth_below(root: &Path, dir: &Path) -> Option<usize> {
    let root = fs::canonicalize(root).ok()?;
    let dir = fs::canonicalize(dir).ok()?;
    Some(dir.strip_prefix(root).ok()?.components().count())
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) {
    let _ = std::os::unix::fs::symlink(target, link);
}

#[cfg(not(unix))]
fn symlink(_target: &Path, _link: &Path) {}

/// Lists and reads the tree at `root`: each call ends (the engine's time limit catches a
/// hang), and the modes agree: `PerFile` has one tensor per listed file, and `Combined`
/// their rows one after another.
fn check_tree(root: &Path) {
    let listed = parquet_dir_files(root);
    let per_file = read_parquet_dir(root, PartitionMode::PerFile);
    let combined = read_parquet_dir(root, PartitionMode::Combined);
    match (&listed, &per_file) {
        (Ok(parts), Ok(tensors)) => assert!(
            parts.len() == tensors.len(),
            "{} files listed, {} read",
            parts.len(),
            tensors.len()
        ),
        // the read lists the tree first, so it fails as the listing does
        (Err(a), Err(b)) => assert!(a == b, "the listing's error {a} is not the read's {b}"),
        (Err(a), Ok(_)) => panic!("the listing fails ({a}) but the read does not"),
        (Ok(_), Err(_)) => {}
    }
    match (&per_file, &combined) {
        (Ok(tensors), Ok(one)) => {
            assert!(one.len() == 1, "Combined gave {} tensors", one.len());
            let rows: usize = tensors.iter().map(|t| t.nrows().unwrap_or(0)).sum();
            assert!(
                one[0].nrows() == Some(rows),
                "Combined has {:?} rows, the files {rows}",
                one[0].nrows()
            );
        }
        (Ok(_), Err(e)) => panic!("PerFile reads the tree, Combined fails: {e}"),
        (Err(a), Err(b)) => assert!(a == b, "the modes fail apart: {a} / {b}"),
        (Err(_), Ok(_)) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overwrite_varint_replaces_one_varint_and_keeps_the_rest() {
        // 0x96 0x01 is 150; i32::MAX in zigzag form takes five bytes
        assert_eq!(
            overwrite_varint(&[7, 0x96, 0x01, 9], 1, i32::MAX as i64),
            vec![7, 0xfe, 0xff, 0xff, 0xff, 0x0f, 9]
        );
        assert_eq!(overwrite_varint(&[7, 8], 3, -1), vec![7, 1]);
        assert_eq!(overwrite_varint(&[], 3, -1), Vec::<u8>::new());
    }

    #[test]
    fn overwrite_varint_updates_the_footer_length() {
        // a fake file: magic, one data byte, a 2-byte footer, its length, magic
        let file = [b"PAR1".as_slice(), &[5, 0x02, 0x00], &[2, 0, 0, 0], b"PAR1"].concat();
        let out = overwrite_varint(&file, 5, 1 << 40);
        let n = out.len();
        assert_eq!(&out[n - 4..], b"PAR1");
        let footer_len = u32::from_le_bytes(out[n - 8..n - 4].try_into().unwrap());
        assert_eq!(footer_len as usize, n - 8 - 5);
    }

    #[test]
    fn a_tree_of_two_links_to_itself_ends_with_an_error() {
        // a file, then two links to `.` in the root
        let script = [2, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 1];
        parquet_dir(&script);
    }
}
