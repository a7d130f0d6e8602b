//! kaldi-io's sequential table reader over inputs that cannot seek: the bytes are written
//! to a file and read through `ark:file`, on Unix through a named FIFO fed by a thread, and,
//! for one input in eight, through a pipe (`ark:cat file |`). They must give the same keys,
//! the same values (compared by their binary writing) and the same errors (with the input's
//! name set aside); none may panic or hang (a pipe is closed, never drained, once the reader
//! stops).
//!
//! The pipe starts two processes (`sh`, `cat`), which cost about twenty times the rest of an
//! input: run on every input, they held the target near 200 inputs a second. What a pipe
//! adds to a FIFO (a child to wait for, its exit status, `SIGPIPE` when the reader stops
//! early) does not depend on the archive's bytes beyond where reading stops, so the top
//! three bits of the selector byte choose it, and the FIFO, which reads every input without
//! seeking, is made by `mkfifo(3)` rather than a `mkfifo` process.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use dense_matrix::{Matrix, Vector};
use kaldi_io::{Error, Holder, SequentialTableReader};

/// Inputs longer than this are ignored.
pub const MAX_LEN: usize = 1 << 16;

/// The selector bits that, all set, add the read through a pipe (one input in eight).
pub const PIPE_BITS: u8 = 0xE0;

/// What a reader gave: each entry's key and its value written in binary, then the error
/// that ended the table, if one did.
type Outcome = (Vec<(String, Vec<u8>)>, Option<String>);

/// The first byte picks the holder (the byte modulo 6) and the options: bit 3 `p`, bit 4
/// `bg`; when its top three bits are all set ([`PIPE_BITS`]) the archive is also read
/// through a pipe. The rest is the archive.
pub fn kaldi_tables(data: &[u8]) {
    if data.len() > MAX_LEN {
        return;
    }
    let Some((&selector, archive)) = data.split_first() else {
        return;
    };
    let mut options = String::from("ark");
    if selector & 0x08 != 0 {
        options.push_str(",p");
    }
    if selector & 0x10 != 0 {
        options.push_str(",bg");
    }
    let pipe = selector & PIPE_BITS == PIPE_BITS;
    match selector % 6 {
        0 => agree::<i32>(&options, archive, pipe),
        1 => agree::<Vector<f32>>(&options, archive, pipe),
        2 => agree::<Matrix<f32>>(&options, archive, pipe),
        3 => agree::<String>(&options, archive, pipe),
        4 => agree::<Vec<i32>>(&options, archive, pipe),
        _ => agree::<Matrix<f64>>(&options, archive, pipe),
    }
}

/// A fresh scratch folder for one input (fuzzing runs inputs in one process, one by one;
/// the replay test may run them from several threads).
fn scratch() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("fuzz-kaldi-tables-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// Every entry of `rspecifier`, values written in binary; errors with `names` replaced by
/// `<input>`, so the three inputs' errors compare.
fn outcome<T: Holder>(rspecifier: &str, names: &[&str]) -> Outcome {
    let reader = match SequentialTableReader::<T>::open(rspecifier) {
        Ok(reader) => reader,
        Err(e) => return (Vec::new(), Some(anonymous(&e, names))),
    };
    let mut entries = Vec::new();
    for item in reader {
        match item {
            Ok((key, value)) => {
                let mut bytes = Vec::new();
                value
                    .write(&mut bytes, true)
                    .unwrap_or_else(|e| panic!("key `{key}` read but does not write: {e}"));
                entries.push((key, bytes));
            }
            Err(e) => return (entries, Some(anonymous(&e, names))),
        }
    }
    (entries, None)
}

/// The error's message with each of `names` (longest first) as `<input>`.
fn anonymous(e: &Error, names: &[&str]) -> String {
    let mut text = e.to_string();
    for name in names {
        text = text.replace(name, "<input>");
    }
    text
}

/// Reads `archive` as a file, through a FIFO and, when `pipe`, through a pipe, and checks
/// that the outcomes agree.
fn agree<T: Holder>(options: &str, archive: &[u8], pipe: bool) {
    let dir = scratch();
    let file = dir.join("a.ark");
    std::fs::write(&file, archive).expect("the archive written");
    let file_name = file.display().to_string();
    let command = format!("cat '{file_name}' ");
    let fifo = dir.join("a.fifo");
    let fifo_name = fifo.display().to_string();
    let names = [command.as_str(), fifo_name.as_str(), file_name.as_str()];

    let from_file = outcome::<T>(&format!("{options}:{file_name}"), &names);
    if pipe {
        let from_pipe = outcome::<T>(&format!("{options}:{command}|"), &names);
        assert_eq!(
            from_file, from_pipe,
            "a file and a pipe of the same bytes disagree"
        );
    }
    if let Some(from_fifo) = through_fifo::<T>(options, &fifo, archive, &names) {
        assert_eq!(
            from_file, from_fifo,
            "a file and a FIFO of the same bytes disagree"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The outcome of reading the bytes through a FIFO at `fifo`, fed by a thread; `None`
/// where FIFOs cannot be made.
#[cfg(unix)]
fn through_fifo<T: Holder>(
    options: &str,
    fifo: &Path,
    archive: &[u8],
    names: &[&str],
) -> Option<Outcome> {
    use std::os::unix::ffi::OsStrExt;
    let Ok(name) = std::ffi::CString::new(fifo.as_os_str().as_bytes()) else {
        return None;
    };
    // SAFETY: `name` is a NUL-terminated string that outlives the call, which only reads it.
    if unsafe { libc::mkfifo(name.as_ptr(), 0o600) } != 0 {
        return None;
    }
    let bytes = archive.to_vec();
    let path = fifo.to_path_buf();
    // opening blocks until the reader opens; a reader that stops early closes its end,
    // and the write fails with a broken pipe (std ignores SIGPIPE), so the thread ends
    let writer = std::thread::spawn(move || {
        let _ = std::fs::write(&path, bytes);
    });
    let result = outcome::<T>(&format!("{options}:{}", fifo.display()), names);
    writer.join().expect("the FIFO's writer");
    Some(result)
}

#[cfg(not(unix))]
fn through_fifo<T: Holder>(_: &str, _: &Path, _: &[u8], _: &[&str]) -> Option<Outcome> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archives_good_and_bad_agree() {
        kaldi_tables(b"\x00a 1\nb 2\n");
        kaldi_tables(b"\x08a 1\nb x\n");
        kaldi_tables(b"\x10a 1\nb 2\nc");
        let mut vector = b"\x01k \0BFV \x04\x02\0\0\0".to_vec();
        vector.extend(1.5f32.to_le_bytes());
        vector.extend((-2.0f32).to_le_bytes());
        kaldi_tables(&vector);
        kaldi_tables(&vector[..vector.len() - 3]);
        kaldi_tables(b"\x02k \0X");
        kaldi_tables(&[0x03; 5000]);
        // with the pipe: selectors 0xE4 (i32) and 0xFC (i32, `p`, `bg`)
        kaldi_tables(b"\xE4a 1\nb 2\n");
        kaldi_tables(b"\xFCa 1\nb x\n");
        kaldi_tables(b"\xE6k \0X");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_name_with_a_nul_is_refused_before_mkfifo() {
        let hostile = Path::new("a\0b.fifo");
        assert!(through_fifo::<i32>("ark", hostile, b"a 1\n", &[]).is_none());
    }

    #[test]
    fn outcome_names_errors_without_the_input() {
        let dir = scratch();
        let file = dir.join("a.ark");
        std::fs::write(&file, b"k x\n").unwrap();
        let name = file.display().to_string();
        let (entries, error) = outcome::<i32>(&format!("ark:{name}"), &[&name]);
        assert!(entries.is_empty());
        assert_eq!(
            error.unwrap(),
            "<input>: key `k` at byte 2: line 1: `x`: not an int32"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
