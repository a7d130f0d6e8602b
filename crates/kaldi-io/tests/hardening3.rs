//! Hardening round 3: pipes closed rather than drained, FIFOs and other files that cannot
//! seek, and the bounds on archive keys, script lines and text values. Every read that could hang runs under a time
//! limit, so a regression fails instead of hanging the suite.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use dense_matrix::{Error as DmError, Vector};
use kaldi_io::{
    read_kaldi_object, Error, Holder, RandomAccessTableReader, SequentialTableReader, TableWriter,
    MAX_KEY_LEN, MAX_SCP_LINE_LEN, MAX_TEXT_LINE_LEN,
};

/// Generous for a loaded machine; the hangs these tests guard against are for ever.
const LIMIT: Duration = Duration::from_secs(60);

fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("kaldi-io-hardening3")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `f` in a thread and returns its result, or fails the test if it takes longer
/// than [`LIMIT`] (the thread is left behind; the test process ends with the suite).
#[track_caller]
fn within_limit<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(f());
    });
    match receiver.recv_timeout(LIMIT) {
        Ok(value) => value,
        Err(RecvTimeoutError::Timeout) => panic!("{what}: still running after {LIMIT:?}"),
        Err(RecvTimeoutError::Disconnected) => panic!("{what}: the reading thread panicked"),
    }
}

/// Every item of a sequential reader, under the time limit.
#[track_caller]
fn read_all<T: Holder>(rspecifier: &str) -> Vec<Result<(String, T), Error>> {
    let rspecifier = rspecifier.to_string();
    within_limit(&rspecifier.clone(), move || {
        SequentialTableReader::<T>::open(&rspecifier)
            .unwrap()
            .collect()
    })
}

// ---------------------------------------------------------------- item 6: pipes

#[test]
fn a_bad_object_from_an_endless_pipe_is_reported_not_drained() {
    // hardening round 3, item 6: the error path drained `yes` for ever
    let items = read_all::<Vector<f32>>("ark:printf 'k \\0X'; yes |");
    assert_eq!(
        items,
        vec![Err(Error::Object {
            name: "printf 'k \\0X'; yes ".into(),
            key: Some("k".into()),
            offset: 2,
            source: DmError::Format {
                expected: "the binary marker `\\0B`",
                found: "\\0 then byte 88".into(),
            },
        })]
    );
}

#[test]
fn an_object_read_from_an_endless_pipe_returns() {
    // hardening round 3, item 6: `finish` after a good read drained `yes` for ever; the
    // command is stopped by SIGPIPE once we close, which is not a failure
    let value = within_limit("yes 5 |", || read_kaldi_object::<i32>("yes 5 |"));
    assert_eq!(value, Ok(5));
    // a table of the first record of an endless stream: the reader is dropped early
    let first = within_limit("ark:yes 'k 5' |", || {
        SequentialTableReader::<i32>::open("ark:yes 'k 5' |")
            .unwrap()
            .take(3)
            .collect::<Result<Vec<_>, _>>()
    });
    assert_eq!(first.unwrap(), vec![("k".to_string(), 5); 3]);
}

#[test]
fn a_pipe_that_fails_on_its_own_is_still_reported() {
    // the command exits 7 after what we read, before or after we close
    assert_eq!(
        within_limit("echo 5; exit 7 |", || read_kaldi_object::<i32>(
            "echo 5; exit 7 |"
        )),
        Err(Error::PipeFailed {
            command: "echo 5; exit 7 ".into(),
            status: "exit status: 7".into(),
        })
    );
    // the object is bad and the command fails: the failure is what is reported
    assert_eq!(
        read_all::<Vector<f32>>("ark:printf 'k \\0X'; exit 3 |"),
        vec![Err(Error::PipeFailed {
            command: "printf 'k \\0X'; exit 3 ".into(),
            status: "exit status: 3".into(),
        })]
    );
    // read to its end, a command killed by SIGPIPE from elsewhere has failed
    assert_eq!(
        read_all::<i32>("ark:echo 'k 1'; kill -PIPE $$ |"),
        vec![
            Ok(("k".to_string(), 1)),
            Err(Error::PipeFailed {
                command: "echo 'k 1'; kill -PIPE $$ ".into(),
                status: "signal: 13 (SIGPIPE)".into(),
            })
        ]
    );
}

// ---------------------------------------------------------------- item 15: FIFOs

/// A FIFO at `path` (the `mkfifo` command).
fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Writes `bytes` into the FIFO `path` from a thread (opening blocks until a reader
/// opens it).
fn feed(path: &Path, bytes: Vec<u8>) -> std::thread::JoinHandle<()> {
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        // the reader may stop early: a broken pipe is not this writer's failure
        let _ = std::fs::write(&path, bytes);
    })
}

/// An archive of float vectors, binary, of more than one buffer's worth of bytes.
fn vector_archive(dir: &Path) -> (String, Vec<(String, Vector<f32>)>) {
    let path = dir.join("v.ark").display().to_string();
    let entries: Vec<(String, Vector<f32>)> = (0..40)
        .map(|i| {
            let values = (0..100 * i).map(|j| (i * 1000 + j) as f32 * 0.5).collect();
            (format!("utt{i:02}"), Vector::from_vec(values))
        })
        .collect();
    let mut writer = TableWriter::<Vector<f32>>::create(&format!("ark:{path}")).unwrap();
    for (key, value) in &entries {
        writer.write(key, value).unwrap();
    }
    writer.finish().unwrap();
    (path, entries)
}

#[test]
fn a_fifo_reads_as_the_file_does() {
    // hardening round 3, item 15: files were always read with `pread`, which fails on a
    // FIFO with "Illegal seek"
    let dir = scratch("fifo");
    let (ark, entries) = vector_archive(&dir);
    let bytes = std::fs::read(&ark).unwrap();
    assert!(bytes.len() > 1 << 16, "larger than the buffers");
    let fifo = dir.join("v.fifo");
    mkfifo(&fifo);
    for rspecifier in [
        format!("ark:{}", fifo.display()),
        format!("ark,bg:{}", fifo.display()),
    ] {
        let writer = feed(&fifo, bytes.clone());
        let items = read_all::<Vector<f32>>(&rspecifier);
        writer.join().unwrap();
        let items: Vec<_> = items.into_iter().map(Result::unwrap).collect();
        assert_eq!(items, entries, "{rspecifier}");
    }
    // a single object, and an scp entry naming the whole FIFO
    let mut one = Vec::new();
    entries[3].1.write(&mut one, false).unwrap();
    let writer = feed(&fifo, one);
    let path = fifo.display().to_string();
    let value = within_limit("a FIFO", move || read_kaldi_object::<Vector<f32>>(&path));
    writer.join().unwrap();
    assert_eq!(value.unwrap(), entries[3].1);
    let scp = dir.join("v.scp");
    std::fs::write(&scp, format!("only {}\n", fifo.display())).unwrap();
    let mut one = Vec::new();
    entries[5].1.write(&mut one, false).unwrap();
    let writer = feed(&fifo, one);
    let items = read_all::<Vector<f32>>(&format!("scp:{}", scp.display()));
    writer.join().unwrap();
    assert_eq!(items, vec![Ok(("only".to_string(), entries[5].1.clone()))]);
}

#[test]
fn a_device_reads_in_sequence_and_does_not_seek() {
    // a character device is not a regular file: read in sequence (an empty archive)
    assert_eq!(read_all::<i32>("ark:/dev/null"), vec![]);
    // and an offset into it is refused, naming the offset
    match read_kaldi_object::<i32>("/dev/null:5") {
        Err(Error::Io {
            name,
            kind,
            message,
        }) => {
            assert_eq!(name, "/dev/null");
            assert_eq!(kind, std::io::ErrorKind::Unsupported);
            assert_eq!(
                message,
                "cannot seek to byte 5 in a pipe, a FIFO or standard input"
            );
        }
        other => panic!("expected a seek error, got {other:?}"),
    }
}

// ---------------------------------------------------------------- item 10: key length

#[test]
fn an_endless_key_is_an_error_at_its_offset() {
    // hardening round 3, item 10: `ark:/dev/zero` read one key until allocation failed
    let items = read_all::<i32>("ark:/dev/zero");
    assert_eq!(
        items,
        vec![Err(Error::Archive {
            name: "/dev/zero".into(),
            offset: 0,
            reason: format!(
                "a key longer than {MAX_KEY_LEN} bytes (the archive's bytes from here hold \
                 no space or newline)"
            ),
        })]
    );
}

#[test]
fn keys_up_to_the_limit_read_and_write() {
    assert_eq!(MAX_KEY_LEN, 65536);
    let dir = scratch("keys");
    let ark = dir.join("k.ark").display().to_string();
    let longest = "k".repeat(MAX_KEY_LEN);
    let mut writer = TableWriter::<i32>::create(&format!("ark,t:{ark}")).unwrap();
    writer.write("a", &1).unwrap();
    writer.write(&longest, &2).unwrap();
    let too_long = "k".repeat(MAX_KEY_LEN + 1);
    assert_eq!(
        writer.write(&too_long, &3),
        Err(Error::InvalidKey {
            key: too_long.clone()
        })
    );
    writer.finish().unwrap();
    let items: Vec<_> = read_all::<i32>(&format!("ark:{ark}"))
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(items, vec![("a".to_string(), 1), (longest.clone(), 2)]);
    // one byte more, after a first good entry: the error names where the key starts
    let mut bytes = b"a 1\n".to_vec();
    bytes.extend(too_long.as_bytes());
    bytes.extend(b" 3\n");
    std::fs::write(&ark, &bytes).unwrap();
    let items = read_all::<i32>(&format!("ark:{ark}"));
    assert_eq!(items.len(), 2);
    assert_eq!(items[0], Ok(("a".to_string(), 1)));
    assert_eq!(
        items[1],
        Err(Error::Archive {
            name: ark.clone(),
            offset: 4,
            reason: format!(
                "a key longer than {MAX_KEY_LEN} bytes (the archive's bytes from here hold \
                 no space or newline)"
            ),
        })
    );
}

#[test]
fn an_endless_scp_line_is_an_error_naming_the_line() {
    // the same defect as the key's, in script files: `scp:/dev/zero` read one line until
    // allocation failed
    #[track_caller]
    fn check(err: Error, name: &str, line_no: usize) {
        match err {
            Error::ScpLine {
                name: got,
                line,
                text,
                reason,
            } => {
                assert_eq!((got.as_str(), line), (name, line_no));
                assert!(
                    text.ends_with("...") && text.len() <= 64 * 3 + 3,
                    "{text:?}"
                );
                assert_eq!(
                    reason,
                    "longer than MAX_SCP_LINE_LEN (1 MiB) without a newline"
                );
            }
            other => panic!("expected an scp line error, got {other:?}"),
        }
    }
    assert_eq!(MAX_SCP_LINE_LEN, 1 << 20);
    let mut items = read_all::<i32>("scp:/dev/zero");
    assert_eq!(items.len(), 1);
    check(items.pop().unwrap().unwrap_err(), "/dev/zero", 1);
    let opened = within_limit("scp:/dev/zero", || {
        RandomAccessTableReader::<i32>::open("scp:/dev/zero").err()
    });
    check(opened.expect("an error"), "/dev/zero", 1);
    // the longest line is read (and names a file that is not there); one byte more is
    // the error, on its own line number
    let dir = scratch("scp");
    let scp = dir.join("a.scp").display().to_string();
    let longest = format!("k {}", "f".repeat(MAX_SCP_LINE_LEN - 2));
    std::fs::write(&scp, format!("{longest}\n{longest}f\n")).unwrap();
    let items = read_all::<i32>(&format!("scp,p:{scp}"));
    assert!(
        items.is_empty(),
        "the first entry is skipped (p), the second an error"
    );
    let items = read_all::<i32>(&format!("scp:{scp}"));
    assert!(
        matches!(items[..], [Err(Error::Io { .. })]),
        "{:?}",
        items.len()
    );
    let opened = RandomAccessTableReader::<i32>::open(&format!("scp:{scp}")).err();
    check(opened.expect("an error"), &scp, 2);
}

// ------------------------------------------------- text values: the line length bound

#[test]
fn an_endless_text_value_is_an_error_at_its_key_and_offset() {
    // a text value without a newline (`7777...` for ever) ends at MAX_TEXT_LINE_LEN bytes,
    // naming its key and offset, for every holder that reads text by lines; the record
    // before it reads
    assert_eq!(MAX_TEXT_LINE_LEN, 1 << 26);
    let rspecifier = "ark:printf 'k1 1 2\\nk2 '; yes 7 | tr -d '\\n' |";
    #[track_caller]
    fn check<T: Holder + std::fmt::Debug>(
        items: Vec<Result<(String, T), Error>>,
        what: &'static str,
    ) {
        assert_eq!(items.len(), 2, "{items:?}");
        assert!(items[0].is_ok(), "{:?}", items[0]);
        match &items[1] {
            Err(Error::Object {
                key,
                offset,
                source,
                ..
            }) => {
                assert_eq!(key.as_deref(), Some("k2"));
                assert_eq!(*offset, 10);
                assert_eq!(
                    *source,
                    DmError::Format {
                        expected: what,
                        found: format!("more than {MAX_TEXT_LINE_LEN} bytes without a newline"),
                    }
                );
            }
            other => panic!("{other:?}"),
        }
    }
    check(read_all::<Vec<i32>>(rspecifier), "an int32 vector");
    check(read_all::<Vec<String>>(rspecifier), "a token vector");
    check(
        read_all::<Vec<(i32, i32)>>("ark:printf 'k1 1 2\\nk2 '; yes 7 | tr -d '\\n' |"),
        "an int32 pair vector",
    );
    let items = read_all::<String>("ark:printf 'k1 abc\\nk2 '; yes 7 | tr -d '\\n' |");
    check(items, "a token");
}

#[test]
fn an_endless_text_matrix_line_is_an_error_at_its_key_and_offset() {
    // dense-matrix's text readers bound each line at MAX_TEXT_LINE_LEN (and the table
    // reader bounds the lines it hands them at the same length)
    #[track_caller]
    fn check<T: Holder + std::fmt::Debug>(rspecifier: &str, offset: u64) {
        let items = read_all::<T>(rspecifier);
        assert_eq!(items.len(), 2, "{items:?}");
        assert!(items[0].is_ok(), "{:?}", items[0]);
        match &items[1] {
            Err(Error::Object {
                key,
                offset: at,
                source: DmError::Format { found, .. },
                ..
            }) => {
                assert_eq!(key.as_deref(), Some("k2"));
                assert_eq!(*at, offset);
                assert!(
                    found.contains("more than 67108864 bytes without a newline"),
                    "{found}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
    check::<dense_matrix::Matrix<f32>>(
        "ark:printf 'k1  [\\n  1 2 ]\\nk2  [\\n  '; yes 7 | tr -d '\\n' |",
        17,
    );
    check::<Vector<f64>>(
        "ark:printf 'k1  [ 1 2 ]\\nk2  [ '; yes 7 | tr -d '\\n' |",
        15,
    );
    check::<kaldi_io::AnyObject>(
        "ark:printf 'k1  [\\n  1 2 ]\\nk2  [\\n  '; yes 7 | tr -d '\\n' |",
        17,
    );
}
