//! Kaldi's tables: `SequentialTableReader`, `RandomAccessTableReader`, `TableWriter`, and
//! the single-object `read_kaldi_object` / `write_kaldi_object`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, Write};
use std::marker::PhantomData;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use dense_matrix::Error as ObjError;

use crate::holder::{is_token, read_binary_marker, Holder, MAX_TEXT_LINE_LEN};
use crate::range::split_range;
use crate::specifier::{
    classify_rxfilename, InputKind, Rspecifier, RspecifierKind, RspecifierOptions, Wspecifier,
    WspecifierKind, WspecifierOptions,
};
use crate::stream::{Input, LineBounded, Output};
use crate::Error;

/// Reads one value at the input's position: the `\0B` marker decides binary or text.
fn read_value<T: Holder>(input: &mut Input, key: Option<&str>) -> Result<T, Error> {
    read_object::<T, T>(input, key, |input, binary| {
        // a float matrix or vector in its own precision goes straight into new memory
        if binary {
            if let Some(value) = crate::fresh::read_new::<T>(input)? {
                return Ok(value);
            }
        } else if T::BINARY_MARKER {
            // a text matrix, vector, ... : its lines bounded
            return T::read(&mut LineBounded::new(input, MAX_TEXT_LINE_LEN), false);
        }
        T::read(input, binary)
    })
}

/// [`read_value`] into `value`, reusing its memory ([`Holder::read_into`]).
fn read_value_into<T: Holder>(
    input: &mut Input,
    key: Option<&str>,
    value: &mut T,
) -> Result<(), Error> {
    read_object::<T, ()>(input, key, |input, binary| {
        if !binary && T::BINARY_MARKER {
            return value.read_into(&mut LineBounded::new(input, MAX_TEXT_LINE_LEN), false);
        }
        value.read_into(input, binary)
    })
}

/// Runs `read` after the marker (for holders that have one) and names the input, key and
/// offset in its error.
fn read_object<T: Holder, V>(
    input: &mut Input,
    key: Option<&str>,
    read: impl FnOnce(&mut Input, bool) -> Result<V, ObjError>,
) -> Result<V, Error> {
    let offset = input.pos();
    let result = if T::BINARY_MARKER {
        read_binary_marker(input).and_then(|binary| read(input, binary))
    } else {
        read(input, false)
    };
    result.map_err(|source| {
        if let Some(pipe) = input.pipe_failure() {
            return pipe;
        }
        Error::Object {
            name: input.name().to_string(),
            key: key.map(str::to_string),
            offset,
            source,
        }
    })
}

/// Where a value read from a table goes: a new value, or the caller's, read over in place.
enum Slot<'a, T> {
    New(Option<T>),
    Reuse(&'a mut T),
}

impl<T: Holder> Slot<'_, T> {
    /// Reads the value at the input's position into the slot.
    fn fill(&mut self, input: &mut Input, key: &str) -> Result<(), Error> {
        match self {
            Slot::New(value) => *value = Some(read_value(input, Some(key))?),
            Slot::Reuse(value) => read_value_into(input, Some(key), *value)?,
        }
        Ok(())
    }

    /// The value read (the slot has been filled).
    fn value(&self) -> &T {
        match self {
            Slot::New(value) => value.as_ref().expect("the slot was filled"),
            Slot::Reuse(value) => value,
        }
    }

    /// Puts `value` into the slot.
    fn put(&mut self, value: T) {
        match self {
            Slot::New(slot) => *slot = Some(value),
            Slot::Reuse(slot) => **slot = value,
        }
    }

    /// The new value read (a `New` slot that has been filled).
    fn take(self) -> T {
        match self {
            Slot::New(value) => value.expect("the slot was filled"),
            Slot::Reuse(_) => unreachable!("only a new slot is taken"),
        }
    }
}

/// Writes the marker (in binary mode) and the value.
fn write_value<T: Holder>(
    output: &mut Output,
    key: Option<&str>,
    value: &T,
    binary: bool,
) -> Result<(), Error> {
    let offset = output.pos();
    let result = if binary && T::BINARY_MARKER {
        output
            .write_all(b"\0B")
            .map_err(|e| ObjError::Io {
                kind: e.kind(),
                message: e.to_string(),
            })
            .and_then(|()| value.write(output, true))
    } else {
        value.write(output, binary)
    };
    result.map_err(|source| match source {
        ObjError::Io { kind, message } => Error::Io {
            name: output.name().to_string(),
            kind,
            message,
        },
        source => Error::Object {
            name: output.name().to_string(),
            key: key.map(str::to_string),
            offset,
            source,
        },
    })
}

/// The longest archive key read or written, in bytes. Kaldi's keys are tokens (utterance
/// or speaker ids, tens of bytes) read with `is >> key`, which has no limit: a file with
/// no whitespace (`ark:/dev/zero`) would be read into one key until memory runs out.
pub const MAX_KEY_LEN: usize = 1 << 16;

/// Reads an archive key (Kaldi's `is >> key`) and the one space or tab after it; `None`
/// at the end of the archive; a key longer than [`MAX_KEY_LEN`] is an error at its offset.
fn read_key(input: &mut Input) -> Result<Option<String>, Error> {
    loop {
        let buf = input.fill()?;
        if buf.is_empty() {
            return Ok(None);
        }
        let n = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
        let all = n == buf.len();
        input.consume(n);
        if !all {
            break;
        }
    }
    let start = input.pos();
    let name = input.name().to_string();
    let archive_err = |offset, reason| Error::Archive {
        name: name.clone(),
        offset,
        reason,
    };
    let mut key = Vec::new();
    loop {
        let buf = input.fill()?;
        if buf.is_empty() {
            break;
        }
        let n = buf.iter().take_while(|b| !b.is_ascii_whitespace()).count();
        if key.len() + n > MAX_KEY_LEN {
            return Err(archive_err(
                start,
                format!(
                    "a key longer than {MAX_KEY_LEN} bytes (the archive's bytes from here \
                     hold no space or newline)"
                ),
            ));
        }
        key.extend_from_slice(&buf[..n]);
        let done = n < buf.len();
        input.consume(n);
        if done {
            break;
        }
    }
    let key = match String::from_utf8(key) {
        Ok(key) => key,
        Err(e) => {
            return Err(archive_err(
                start,
                format!(
                    "the key is not UTF-8: `{}`",
                    String::from_utf8_lossy(e.as_bytes()).escape_debug()
                ),
            ))
        }
    };
    if !is_token(&key) {
        return Err(archive_err(
            start,
            format!(
                "expected a key, found `{}` (an object without its key?)",
                key.escape_debug()
            ),
        ));
    }
    let next = input.fill()?.first().copied();
    match next {
        Some(b' ' | b'\t') => input.consume(1),
        Some(b'\n') => {}
        Some(other) => {
            return Err(archive_err(
                input.pos(),
                format!("expected a space after key `{key}`, found byte {other}"),
            ))
        }
        None => {
            return Err(archive_err(
                input.pos(),
                format!("the archive ends after key `{key}`"),
            ))
        }
    }
    Ok(Some(key))
}

/// One entry of a script file: the key, the rxfilename, the optional range.
#[derive(Debug, Clone)]
struct ScpEntry {
    key: String,
    rxfilename: String,
    range: Option<String>,
}

/// Kaldi's `SplitStringOnFirstSpace` and range split of one scp line.
fn parse_scp_line(name: &str, line_no: usize, line: &[u8]) -> Result<ScpEntry, Error> {
    let text = String::from_utf8_lossy(line).into_owned();
    let err = |reason| Error::ScpLine {
        name: name.to_string(),
        line: line_no,
        text: text.clone(),
        reason,
    };
    let line = std::str::from_utf8(line).map_err(|_| err("not UTF-8"))?;
    let line = line.trim_matches(|c: char| c.is_ascii_whitespace());
    let (key, rest) = line
        .split_once([' ', '\t'])
        .ok_or_else(|| err("expected `key rxfilename`, separated by a space"))?;
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace());
    if key.is_empty() || rest.is_empty() {
        return Err(err("expected `key rxfilename`, separated by a space"));
    }
    let (rxfilename, range) = if rest.ends_with(']') {
        let (file, range) =
            split_range(rest).ok_or_else(|| err("cannot make sense of the `[...]` range"))?;
        (file.to_string(), Some(range.to_string()))
    } else {
        (rest.to_string(), None)
    };
    Ok(ScpEntry {
        key: key.to_string(),
        rxfilename,
        range,
    })
}

/// The longest script (`.scp`) line read, in bytes, newline excluded: a key, an
/// rxfilename (perhaps a pipe command) and a range take far less, and a file with no
/// newline (`scp:/dev/zero`) would otherwise be read into one line until memory runs out.
pub const MAX_SCP_LINE_LEN: usize = 1 << 20;

/// Reads the next scp line (without its newline), which will be line `line_no`; `None` at
/// the end; a line longer than [`MAX_SCP_LINE_LEN`] is an error.
fn next_scp_line(script: &mut Input, line_no: usize) -> Result<Option<Vec<u8>>, Error> {
    let mut line = Vec::new();
    let mut read_any = false;
    loop {
        let buf = script.fill()?;
        if buf.is_empty() {
            break;
        }
        read_any = true;
        let (n, ends) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let content = line.len() + n - usize::from(ends);
        if content > MAX_SCP_LINE_LEN {
            let start = String::from_utf8_lossy(&line[..line.len().min(64)]).into_owned();
            return Err(Error::ScpLine {
                name: script.name().to_string(),
                line: line_no,
                text: format!("{start}..."),
                reason: "longer than MAX_SCP_LINE_LEN (1 MiB) without a newline",
            });
        }
        line.extend_from_slice(&buf[..n]);
        script.consume(n);
        if ends {
            break;
        }
    }
    if !read_any {
        return Ok(None);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(line))
}

/// How many data files an scp reader keeps open at once (Kaldi's scripts usually point
/// into one archive per job: `raw_mfcc.1.ark` ... `raw_mfcc.N.ark`).
const OPEN_DATA_FILES: usize = 32;

/// The data files of scp entries, kept open by path, so entries in the same archives are
/// read at their offsets without reopening (and, files being read with positioned reads,
/// without a seek).
#[derive(Default)]
struct DataFiles {
    open: HashMap<String, Input>,
}

impl DataFiles {
    /// Reads the object an scp entry names into `slot`, with its range applied.
    fn read<T: Holder>(&mut self, entry: &ScpEntry, slot: &mut Slot<'_, T>) -> Result<(), Error> {
        match classify_rxfilename(&entry.rxfilename)? {
            InputKind::OffsetFile { path, offset } => {
                if !self.open.contains_key(&path) {
                    if self.open.len() >= OPEN_DATA_FILES {
                        // any one goes; the next entries name the archive they need
                        let victim = self.open.keys().next().cloned().expect("not empty");
                        self.open.remove(&victim);
                    }
                    let input = Input::open_file(path.clone())?;
                    self.open.insert(path.clone(), input);
                }
                let input = self.open.get_mut(&path).expect("opened above");
                input.seek_to(offset)?;
                slot.fill(input, &entry.key)?;
            }
            _ => {
                // a whole file, `-` or a pipe: opened for this entry only
                let mut input = Input::open(&entry.rxfilename)?;
                slot.fill(&mut input, &entry.key)?;
                input.finish()?;
            }
        }
        if let Some(range) = &entry.range {
            let part = slot
                .value()
                .extract_range(range)
                .map_err(|reason| Error::Range {
                    key: entry.key.clone(),
                    range: range.clone(),
                    reason,
                })?;
            slot.put(part);
        }
        Ok(())
    }
}

enum SequentialState {
    Archive(Input),
    Script {
        script: Input,
        line_no: usize,
        data: DataFiles,
    },
    Done,
}

/// The reader itself, run in the caller's thread or in the `bg` thread.
struct PlainReader<T: Holder> {
    options: RspecifierOptions,
    state: SequentialState,
    _holder: PhantomData<fn() -> T>,
}

/// The `bg` read-ahead: a thread runs the plain reader and hands its items over a channel
/// of one record, so the next value is read while the caller works on this one.
struct Background<T: Holder> {
    items: Receiver<Result<(String, T), Error>>,
    /// Values `next_into` has replaced, handed back for the thread to read into.
    recycle: SyncSender<T>,
    thread: Option<JoinHandle<()>>,
}

impl<T: Holder> Background<T> {
    /// The next item from the thread; `None` once it has finished (a panic in it is
    /// passed on, as a plain reader's would have been).
    fn receive(&mut self) -> Option<Result<(String, T), Error>> {
        match self.items.recv() {
            Ok(item) => Some(item),
            Err(_) => {
                if let Some(thread) = self.thread.take() {
                    if let Err(panic) = thread.join() {
                        std::panic::resume_unwind(panic);
                    }
                }
                None
            }
        }
    }
}

enum Mode<T: Holder> {
    Plain(PlainReader<T>),
    Background(Background<T>),
}

/// Kaldi's `SequentialTableReader`: the (key, value) pairs of an `ark:` or `scp:`
/// rspecifier, in order. Iteration stops after the first error. With the `bg` option the
/// reading happens in a background thread, one record ahead of the caller, as in Kaldi's
/// `SequentialTableReaderBackgroundImpl`; the items and errors are the same, in the same
/// order.
#[doc(alias = "SequentialBaseFloatMatrixReader")]
#[doc(alias = "SequentialInt32VectorReader")]
pub struct SequentialTableReader<T: Holder> {
    mode: Mode<T>,
}

impl<T: Holder> SequentialTableReader<T> {
    /// Opens an rspecifier such as `ark:feats.ark`, `scp:feats.scp`,
    /// `ark:gunzip -c feats.ark.gz |`, `ark,p:-` or `ark,bg:feats.ark`.
    pub fn open(rspecifier: &str) -> Result<Self, Error> {
        let spec = Rspecifier::parse(rspecifier)?;
        let input = Input::open(&spec.rxfilename)?;
        let state = match spec.kind {
            RspecifierKind::Archive => SequentialState::Archive(input),
            RspecifierKind::Script => SequentialState::Script {
                script: input,
                line_no: 0,
                data: DataFiles::default(),
            },
        };
        let plain = PlainReader {
            options: spec.options,
            state,
            _holder: PhantomData,
        };
        if !spec.options.background {
            return Ok(SequentialTableReader {
                mode: Mode::Plain(plain),
            });
        }
        // one record in the channel (and one being read): Kaldi's read-ahead of one
        let (sender, items) = sync_channel(1);
        // the values `next_into` gives back: the thread reads into them rather than into
        // new ones (at most the two in flight and the caller's go round)
        let (recycle, recycled) = sync_channel::<T>(2);
        let mut plain = plain;
        let thread = std::thread::Builder::new()
            .name("kaldi-io-bg".into())
            .spawn(move || loop {
                let item = match recycled.try_recv() {
                    Ok(mut value) => {
                        let read = plain.step(&mut Slot::Reuse(&mut value));
                        read.map(|read| read.map(|key| (key, value)))
                    }
                    Err(_) => plain.next(),
                };
                let Some(item) = item else { break };
                if sender.send(item).is_err() {
                    break; // the caller dropped the reader
                }
            })
            .map_err(|e| crate::error::io_error(rspecifier, &e))?;
        Ok(SequentialTableReader {
            mode: Mode::Background(Background {
                items,
                recycle,
                thread: Some(thread),
            }),
        })
    }

    /// Reads the next entry into `value` and returns its key (`None` at the end): the
    /// same entries and errors as the iterator, but the value is read over the caller's,
    /// reusing its memory ([`Holder::read_into`]: a matrix or vector of no fewer elements
    /// is neither reallocated nor zeroed), as Kaldi's readers reuse their holder's. A loop
    /// that works on each value in turn reads into memory that is already in the cache.
    /// With `bg`, the thread's value is swapped in and the caller's handed back to the
    /// thread to read a later entry into. After an error `value` holds some valid value,
    /// and later calls return `None`.
    ///
    /// ```
    /// # use dense_matrix::Matrix;
    /// # use kaldi_io::{SequentialTableReader, TableWriter};
    /// # let dir = std::env::temp_dir().join(format!("kaldi-io-next-into-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let ark = dir.join("feats.ark");
    /// # let mut w = TableWriter::<Matrix<f32>>::create(&format!("ark:{}", ark.display())).unwrap();
    /// # w.write("a", &Matrix::from_rows(&[[1.0, 2.0]])).unwrap();
    /// # w.write("b", &Matrix::from_rows(&[[3.0], [4.0]])).unwrap();
    /// # w.finish().unwrap();
    /// let mut reader = SequentialTableReader::<Matrix<f32>>::open(&format!("ark:{}", ark.display()))?;
    /// let mut feats = Matrix::empty();
    /// let mut total = 0.0;
    /// while let Some(_key) = reader.next_into(&mut feats)? {
    ///     total += feats.sum();
    /// }
    /// assert_eq!(total, 10.0);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), kaldi_io::Error>(())
    /// ```
    pub fn next_into(&mut self, value: &mut T) -> Result<Option<String>, Error> {
        match &mut self.mode {
            Mode::Plain(plain) => plain.step(&mut Slot::Reuse(value)).transpose(),
            Mode::Background(bg) => match bg.receive() {
                Some(Ok((key, read))) => {
                    let old = std::mem::replace(value, read);
                    // a full channel or a finished thread: the old value is dropped
                    let _ = bg.recycle.try_send(old);
                    Ok(Some(key))
                }
                Some(Err(e)) => Err(e),
                None => Ok(None),
            },
        }
    }
}

impl<T: Holder> PlainReader<T> {
    /// Reads the next entry into `slot` and returns its key; `None` at the end.
    fn next_entry(&mut self, slot: &mut Slot<'_, T>) -> Result<Option<String>, Error> {
        match &mut self.state {
            SequentialState::Done => Ok(None),
            SequentialState::Archive(input) => {
                let Some(key) = read_key(input)? else {
                    input.finish()?;
                    return Ok(None);
                };
                slot.fill(input, &key)?;
                Ok(Some(key))
            }
            SequentialState::Script {
                script,
                line_no,
                data,
            } => loop {
                let Some(line) = next_scp_line(script, *line_no + 1)? else {
                    script.finish()?;
                    return Ok(None);
                };
                *line_no += 1;
                let entry = parse_scp_line(script.name(), *line_no, &line)?;
                match data.read::<T>(&entry, slot) {
                    Ok(()) => return Ok(Some(entry.key)),
                    // `p`: an entry that cannot be read is skipped
                    Err(_) if self.options.permissive => continue,
                    Err(e) => return Err(e),
                }
            },
        }
    }

    /// [`PlainReader::next_entry`] with the iterator's rules: the end or an error ends the
    /// reading, and `p` on an archive turns an error into the end, as in Kaldi.
    fn step(&mut self, slot: &mut Slot<'_, T>) -> Option<Result<String, Error>> {
        match self.next_entry(slot) {
            Ok(Some(key)) => Some(Ok(key)),
            Ok(None) => {
                self.state = SequentialState::Done;
                None
            }
            Err(e) => {
                self.state = SequentialState::Done;
                if self.options.permissive {
                    None
                } else {
                    Some(Err(e))
                }
            }
        }
    }
}

impl<T: Holder> Iterator for PlainReader<T> {
    type Item = Result<(String, T), Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut slot = Slot::New(None);
        let key = self.step(&mut slot)?;
        Some(key.map(|key| (key, slot.take())))
    }
}

impl<T: Holder> Iterator for SequentialTableReader<T> {
    type Item = Result<(String, T), Error>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.mode {
            Mode::Plain(plain) => plain.next(),
            Mode::Background(bg) => bg.receive(),
        }
    }
}

/// A random-access archive: read on as far as the keys asked need, the values read kept.
struct ArchiveTable<T> {
    input: Option<Input>,
    name: String,
    cache: BTreeMap<String, T>,
    last_read: Option<String>,
    seen: HashSet<String>,
}

enum RandomState<T> {
    Archive(ArchiveTable<T>),
    Script {
        entries: HashMap<String, ScpEntry>,
        data: DataFiles,
    },
}

/// Kaldi's `RandomAccessTableReader`: values by key from an `ark:` or `scp:` rspecifier,
/// with the options `s` (sorted keys: a missing key is known absent as soon as a larger
/// one is read), `cs` (keys asked in sorted order: earlier values are dropped), `o` (each
/// key asked once: values are not kept after `get`) and `p` (unreadable values count as
/// absent).
#[doc(alias = "RandomAccessBaseFloatMatrixReader")]
#[doc(alias = "RandomAccessDoubleMatrixReader")]
pub struct RandomAccessTableReader<T: Holder> {
    rspecifier: String,
    options: RspecifierOptions,
    state: RandomState<T>,
    last_asked: Option<String>,
}

impl<T: Holder> RandomAccessTableReader<T> {
    /// Opens an rspecifier; an `scp:` script is read (and its keys checked) at once.
    pub fn open(rspecifier: &str) -> Result<Self, Error> {
        let spec = Rspecifier::parse(rspecifier)?;
        let mut input = Input::open(&spec.rxfilename)?;
        let state = match spec.kind {
            RspecifierKind::Archive => RandomState::Archive(ArchiveTable {
                name: input.name().to_string(),
                input: Some(input),
                cache: BTreeMap::new(),
                last_read: None,
                seen: HashSet::new(),
            }),
            RspecifierKind::Script => {
                let mut entries = HashMap::new();
                let mut previous: Option<String> = None;
                let mut line_no = 0;
                while let Some(line) = next_scp_line(&mut input, line_no + 1)? {
                    line_no += 1;
                    let entry = parse_scp_line(input.name(), line_no, &line)?;
                    let order_err = |previous: &str, reason| Error::KeyOrder {
                        name: input.name().to_string(),
                        previous: previous.to_string(),
                        key: entry.key.clone(),
                        reason,
                    };
                    if let Some(prev) = &previous {
                        if spec.options.sorted && *prev > entry.key {
                            return Err(order_err(
                                prev,
                                "not sorted, but the `s` option says it is",
                            ));
                        }
                    }
                    if entries.contains_key(&entry.key) {
                        return Err(order_err(&entry.key, "duplicate key"));
                    }
                    previous = Some(entry.key.clone());
                    entries.insert(entry.key.clone(), entry);
                }
                input.finish()?;
                RandomState::Script {
                    entries,
                    data: DataFiles::default(),
                }
            }
        };
        Ok(RandomAccessTableReader {
            rspecifier: rspecifier.to_string(),
            options: spec.options,
            state,
            last_asked: None,
        })
    }

    /// Whether `key` is present (Kaldi's `HasKey`): `get(key)` is `Some`.
    pub fn has_key(&mut self, key: &str) -> Result<bool, Error> {
        // `o` would drop the value on the first look: look without consuming
        let once = std::mem::replace(&mut self.options.once, false);
        let found = self.get(key).map(|v| v.is_some());
        self.options.once = once;
        found
    }

    /// The value of `key`, `None` if the table has none.
    pub fn get(&mut self, key: &str) -> Result<Option<T>, Error> {
        let mut slot = Slot::New(None);
        Ok(if self.lookup(key, &mut slot)? {
            Some(slot.take())
        } else {
            None
        })
    }

    /// [`RandomAccessTableReader::get`] into `value`, reusing its memory
    /// ([`Holder::read_into`]: through an `scp:`, a matrix or vector of no fewer elements is
    /// read over in place, neither reallocated nor zeroed); `false` (and `value` untouched)
    /// if the table has no `key`. After an error `value` holds some valid value.
    pub fn get_into(&mut self, key: &str, value: &mut T) -> Result<bool, Error> {
        self.lookup(key, &mut Slot::Reuse(value))
    }

    /// Finds `key` and reads its value into `slot`; whether the table has it.
    fn lookup(&mut self, key: &str, slot: &mut Slot<'_, T>) -> Result<bool, Error> {
        if self.options.called_sorted {
            if let Some(previous) = &self.last_asked {
                if previous.as_str() > key {
                    return Err(Error::CalledOutOfOrder {
                        rspecifier: self.rspecifier.clone(),
                        previous: previous.clone(),
                        key: key.to_string(),
                    });
                }
            }
            self.last_asked = Some(key.to_string());
        }
        let options = self.options;
        match &mut self.state {
            RandomState::Script { entries, data } => {
                let Some(entry) = entries.get(key) else {
                    return Ok(false);
                };
                let read = data.read::<T>(entry, slot);
                if options.once {
                    entries.remove(key);
                }
                match read {
                    Ok(()) => Ok(true),
                    Err(_) if options.permissive => Ok(false),
                    Err(e) => Err(e),
                }
            }
            RandomState::Archive(archive) => match archive.get(key, options)? {
                Some(value) => {
                    slot.put(value);
                    Ok(true)
                }
                None => Ok(false),
            },
        }
    }
}

impl<T: Holder> ArchiveTable<T> {
    /// The value of `key`, from the values read so far or by reading on.
    fn get(&mut self, key: &str, options: RspecifierOptions) -> Result<Option<T>, Error> {
        let ArchiveTable {
            input,
            name,
            cache,
            last_read,
            seen,
        } = self;
        if options.called_sorted {
            // keys before this one will not be asked again
            let keep = cache.split_off(key);
            *cache = keep;
        }
        if let Some(value) = cache.get(key) {
            return Ok(Some(if options.once {
                cache.remove(key).expect("present")
            } else {
                value.clone()
            }));
        }
        if options.sorted && last_read.as_deref().is_some_and(|last| last >= key) {
            return Ok(None);
        }
        loop {
            let Some(reader) = input.as_mut() else {
                return Ok(None);
            };
            let next = match read_key(reader) {
                Ok(Some(k)) => read_value::<T>(reader, Some(&k)).map(|v| Some((k, v))),
                Ok(None) => reader.finish().map(|()| None),
                Err(e) => Err(e),
            };
            let (k, value) = match next {
                Ok(Some(entry)) => entry,
                Ok(None) => {
                    *input = None;
                    return Ok(None);
                }
                Err(_) if options.permissive => {
                    *input = None;
                    return Ok(None);
                }
                Err(e) => {
                    *input = None;
                    return Err(e);
                }
            };
            let order_err = |previous: &str, reason| Error::KeyOrder {
                name: name.clone(),
                previous: previous.to_string(),
                key: k.clone(),
                reason,
            };
            if let Some(last) = last_read.as_deref() {
                if options.sorted && last >= k.as_str() {
                    let reason = if last == k {
                        "duplicate key"
                    } else {
                        "not sorted, but the `s` option says it is"
                    };
                    return Err(order_err(last, reason));
                }
            }
            if !options.sorted && !seen.insert(k.clone()) {
                return Err(order_err(&k, "duplicate key"));
            }
            *last_read = Some(k.clone());
            if k == key {
                if !options.once {
                    cache.insert(k, value.clone());
                }
                return Ok(Some(value));
            }
            let passed = k.as_str() > key;
            if !options.called_sorted || passed {
                cache.insert(k, value);
            }
            if options.sorted && passed {
                return Ok(None);
            }
        }
    }
}

enum WriterState {
    Archive(Output),
    Both {
        archive: Output,
        archive_name: String,
        script: Output,
    },
    Script {
        script: String,
        targets: HashMap<String, String>,
    },
}

/// Kaldi's `TableWriter`: writes (key, value) pairs to an `ark:`, `scp:` or `ark,scp:`
/// wspecifier, binary (`b`, the default) or text (`t`), flushing after each value with
/// `f`.
#[doc(alias = "BaseFloatMatrixWriter")]
#[doc(alias = "CompressedMatrixWriter")]
pub struct TableWriter<T: Holder> {
    options: WspecifierOptions,
    state: WriterState,
    _holder: PhantomData<fn(&T)>,
}

impl<T: Holder> TableWriter<T> {
    /// Creates the archive (and script) a wspecifier names; for `scp:`, reads the script
    /// file that maps each key to its wxfilename.
    pub fn create(wspecifier: &str) -> Result<Self, Error> {
        let spec = Wspecifier::parse(wspecifier)?;
        let state = match spec.kind {
            WspecifierKind::Archive { archive } => WriterState::Archive(Output::open(&archive)?),
            WspecifierKind::Both { archive, script } => WriterState::Both {
                archive: Output::open(&archive)?,
                archive_name: archive,
                script: Output::open(&script)?,
            },
            WspecifierKind::Script { script } => {
                let mut input = Input::open(&script)?;
                let mut targets = HashMap::new();
                let mut line_no = 0;
                while let Some(line) = next_scp_line(&mut input, line_no + 1)? {
                    line_no += 1;
                    let entry = parse_scp_line(input.name(), line_no, &line)?;
                    targets.insert(entry.key, entry.rxfilename);
                }
                input.finish()?;
                WriterState::Script { script, targets }
            }
        };
        Ok(TableWriter {
            options: spec.options,
            state,
            _holder: PhantomData,
        })
    }

    /// Writes one value under `key` (a token: non-empty, no whitespace, at most
    /// [`MAX_KEY_LEN`] bytes).
    pub fn write(&mut self, key: &str, value: &T) -> Result<(), Error> {
        if !is_token(key) || key.len() > MAX_KEY_LEN {
            return Err(Error::InvalidKey {
                key: key.to_string(),
            });
        }
        let binary = self.options.binary;
        match &mut self.state {
            WriterState::Archive(archive) => {
                write_key(archive, key)?;
                write_value(archive, Some(key), value, binary)?;
                if self.options.flush {
                    archive.flush()?;
                }
            }
            WriterState::Both {
                archive,
                archive_name,
                script,
            } => {
                write_key(archive, key)?;
                let offset = archive.pos();
                write_value(archive, Some(key), value, binary)?;
                let line = format!("{key} {archive_name}:{offset}\n");
                script
                    .write_all(line.as_bytes())
                    .map_err(|e| crate::error::io_error(script.name(), &e))?;
                if self.options.flush {
                    archive.flush()?;
                    script.flush()?;
                }
            }
            WriterState::Script { script, targets } => match targets.get(key) {
                Some(wxfilename) => write_kaldi_object(wxfilename, value, binary)?,
                None if self.options.permissive => {}
                None => {
                    return Err(Error::KeyNotInScript {
                        key: key.to_string(),
                        script: script.clone(),
                    })
                }
            },
        }
        Ok(())
    }

    /// Flushes and closes; for a pipe, waits for the command and reports its failure.
    pub fn finish(mut self) -> Result<(), Error> {
        match &mut self.state {
            WriterState::Archive(archive) => archive.finish(),
            WriterState::Both {
                archive, script, ..
            } => {
                let a = archive.finish();
                let s = script.finish();
                a.and(s)
            }
            WriterState::Script { .. } => Ok(()),
        }
    }
}

fn write_key(archive: &mut Output, key: &str) -> Result<(), Error> {
    archive
        .write_all(key.as_bytes())
        .and_then(|()| archive.write_all(b" "))
        .map_err(|e| crate::error::io_error(archive.name(), &e))
}

/// Kaldi's `ReadKaldiObject`: one object from an rxfilename (a file, `file:offset`, `-`,
/// `command |`), binary or text as its `\0B` marker says; a trailing `[...]` range applies
/// to matrices and vectors as on scp lines.
#[doc(alias = "ReadKaldiObject")]
pub fn read_kaldi_object<T: Holder>(rxfilename: &str) -> Result<T, Error> {
    let (file, range) = match split_range(rxfilename) {
        Some((file, range)) if rxfilename.ends_with(']') => (file, Some(range)),
        _ => (rxfilename, None),
    };
    let mut input = Input::open(file)?;
    let value = read_value::<T>(&mut input, None)?;
    input.finish()?;
    match range {
        None => Ok(value),
        Some(range) => value.extract_range(range).map_err(|reason| Error::Range {
            key: rxfilename.to_string(),
            range: range.to_string(),
            reason,
        }),
    }
}

/// Kaldi's `WriteKaldiObject`: one object to a wxfilename (a file, `-`, `| command`),
/// with the `\0B` marker in binary mode.
#[doc(alias = "WriteKaldiObject")]
pub fn write_kaldi_object<T: Holder>(
    wxfilename: &str,
    value: &T,
    binary: bool,
) -> Result<(), Error> {
    let mut output = Output::open(wxfilename)?;
    write_value(&mut output, None, value, binary)?;
    output.finish()
}
