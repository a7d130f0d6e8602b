//! Opening rxfilenames and wxfilenames: files, `file:offset`, `-`, and pipes through
//! `std::process`, with a byte count kept for error messages and scp offsets.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::mem::MaybeUninit;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use crate::error::io_error;
use crate::specifier::{classify_rxfilename, classify_wxfilename, InputKind, OutputKind};
use crate::Error;

/// Buffer size of inputs. Object data is read in larger pieces, which go around this
/// buffer straight into the reader's memory, so the buffer serves keys, headers, scp lines
/// and small objects; kept small, it copies little of each large object twice and a
/// random access reads little more than its object (measured: 4 KiB reads a float
/// archive through its scp faster than 64 KiB or 256 KiB).
const INPUT_BUFFER: usize = 1 << 12;

/// Buffer size of outputs (writes larger than it go straight to the file).
const OUTPUT_BUFFER: usize = 1 << 16;

fn shell(command: &str) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c").arg(command);
    c
}

/// Where an input's bytes come from. A regular file is read with positioned reads
/// (`pread`) at its own cursor, so moving to an scp entry's offset costs no system call,
/// and its length is looked up once when opened (again only when an offset lies past it).
/// Any other file (a FIFO, `/dev/stdin`, a `<(...)` descriptor, a device) cannot be read
/// at a position, and is read in sequence, as a pipe is.
enum Source {
    File {
        file: File,
        pos: u64,
        len: u64,
    },
    Stream(File),
    Stdin(io::Stdin),
    Pipe {
        stdout: ChildStdout,
        /// Whether a read has returned the end of the command's output.
        ended: bool,
    },
    /// A pipe whose end we have closed: reads return the end of data.
    Closed,
}

/// Reads at byte `pos` of `file` without moving the file's own cursor.
#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, pos)
}

/// Reads at byte `pos` of `file` (Windows moves the cursor; only ours is used).
#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, pos)
}

/// Reads at byte `pos` of `file` into memory that need not be initialised; returns how
/// many bytes it wrote at the start of `buf`, each of them initialised.
#[cfg(unix)]
fn read_at_uninit(file: &File, buf: &mut [MaybeUninit<u8>], pos: u64) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let offset = libc::off_t::try_from(pos)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset past off_t"))?;
    // SAFETY: `buf` is a live, exclusive slice, so its `buf.len()` bytes may be written
    // through its pointer (`MaybeUninit<u8>` bytes need no initialisation before a write);
    // `pread` writes at most that many bytes there and returns their count or -1, and the
    // descriptor stays open while `file` is borrowed. A short or empty read (the end of a
    // truncated file) returns fewer bytes, and only the returned count is taken as
    // initialised (`read_uninit`; tested with archives cut inside a matrix).
    let n = unsafe { libc::pread(file.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), offset) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Reads at byte `pos` of `file` into memory that need not be initialised, through a
/// zeroed stack buffer (targets without `pread` from `libc`).
#[cfg(not(unix))]
fn read_at_uninit(file: &File, buf: &mut [MaybeUninit<u8>], pos: u64) -> io::Result<usize> {
    let mut bytes = [0u8; 1 << 12];
    let want = buf.len().min(bytes.len());
    let n = read_at(file, &mut bytes[..want], pos)?;
    for (dst, &b) in buf.iter_mut().zip(&bytes[..n]) {
        dst.write(b);
    }
    Ok(n)
}

/// Reads at byte `pos` of `file` through its cursor (targets without positioned reads).
#[cfg(not(any(unix, windows)))]
fn read_at(mut file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    file.seek(SeekFrom::Start(pos))?;
    file.read(buf)
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::File { file, pos, .. } => {
                let n = read_at(file, buf, *pos)?;
                *pos += n as u64;
                Ok(n)
            }
            Source::Stream(file) => file.read(buf),
            Source::Stdin(s) => s.read(buf),
            Source::Pipe { stdout, ended } => {
                let n = stdout.read(buf)?;
                if n == 0 && !buf.is_empty() {
                    *ended = true;
                }
                Ok(n)
            }
            Source::Closed => Ok(0),
        }
    }
}

impl Seek for Source {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        match self {
            Source::File { pos, len, .. } => {
                let target = match to {
                    SeekFrom::Start(offset) => Some(offset),
                    SeekFrom::Current(delta) => pos.checked_add_signed(delta),
                    SeekFrom::End(delta) => len.checked_add_signed(delta),
                };
                *pos = target.ok_or_else(|| {
                    io::Error::new(io::ErrorKind::InvalidInput, "seek before the start")
                })?;
                Ok(*pos)
            }
            _ => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "cannot seek in a pipe, a FIFO or standard input",
            )),
        }
    }
}

/// An open rxfilename: a buffered reader that counts the bytes it hands out.
pub(crate) struct Input {
    name: String,
    reader: BufReader<Source>,
    pos: u64,
    child: Option<Child>,
}

impl Input {
    /// Kaldi's `Input::Open`: a file, `file:offset` (seeking, and checking the offset
    /// against the file's length), `-` for standard input, or `command |`.
    pub(crate) fn open(rxfilename: &str) -> Result<Input, Error> {
        match classify_rxfilename(rxfilename)? {
            InputKind::Stdin => Ok(Input::new(
                "standard input".into(),
                Source::Stdin(io::stdin()),
                None,
            )),
            InputKind::File(path) => Input::open_file(path),
            InputKind::OffsetFile { path, offset } => {
                let mut input = Input::open_file(path)?;
                input.seek_to(offset)?;
                Ok(input)
            }
            InputKind::Pipe(command) => {
                let mut child = shell(&command)
                    .stdout(Stdio::piped())
                    .spawn()
                    .map_err(|e| io_error(&command, &e))?;
                let stdout = child.stdout.take().expect("stdout was piped");
                let source = Source::Pipe {
                    stdout,
                    ended: false,
                };
                Ok(Input::new(command, source, Some(child)))
            }
        }
    }

    /// Opens a plain file (no offset), noting its length; a file that is not a regular
    /// file (a FIFO, `/dev/stdin`, a device) is read in sequence, as Kaldi's `ifstream`
    /// reads it (positioned reads fail there with "Illegal seek").
    pub(crate) fn open_file(path: String) -> Result<Input, Error> {
        let file = File::open(&path).map_err(|e| io_error(&path, &e))?;
        let meta = file.metadata().map_err(|e| io_error(&path, &e))?;
        let source = if meta.is_file() {
            Source::File {
                file,
                pos: 0,
                len: meta.len(),
            }
        } else {
            Source::Stream(file)
        };
        Ok(Input::new(path, source, None))
    }

    fn new(name: String, source: Source, child: Option<Child>) -> Input {
        Input {
            name,
            reader: BufReader::with_capacity(INPUT_BUFFER, source),
            pos: 0,
            child,
        }
    }

    /// The file's name or the pipe's command.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The buffered bytes (refilled when empty; empty at the end of data).
    pub(crate) fn fill(&mut self) -> Result<&[u8], Error> {
        match self.reader.fill_buf() {
            Ok(buf) => Ok(buf),
            Err(e) => Err(io_error(&self.name, &e)),
        }
    }

    /// Bytes consumed so far (the absolute offset, for files).
    pub(crate) fn pos(&self) -> u64 {
        self.pos
    }

    /// Moves to byte `offset` of a file, keeping the buffer when the target is inside it;
    /// an offset past the end is an error.
    pub(crate) fn seek_to(&mut self, offset: u64) -> Result<(), Error> {
        if offset == self.pos {
            return Ok(());
        }
        let len = match self.reader.get_mut() {
            Source::File { file, len, .. } => {
                if offset > *len {
                    // the file may have grown since it was opened
                    *len = file.metadata().map_err(|e| io_error(&self.name, &e))?.len();
                }
                *len
            }
            _ => {
                return Err(Error::Io {
                    name: self.name.clone(),
                    kind: io::ErrorKind::Unsupported,
                    message: format!(
                        "cannot seek to byte {offset} in a pipe, a FIFO or standard input"
                    ),
                })
            }
        };
        if offset > len {
            return Err(Error::OffsetPastEnd {
                name: self.name.clone(),
                offset,
                len,
            });
        }
        let delta = offset as i128 - self.pos as i128;
        self.reader
            .seek_relative(delta as i64)
            .map_err(|e| io_error(&self.name, &e))?;
        self.pos = offset;
        Ok(())
    }

    /// Fills `buf` (memory that need not be initialised) with the next bytes, as many as
    /// there are up to its length; returns how many it wrote at its start, each of them
    /// initialised (fewer than `buf.len()` only at the end of the data). The bytes already
    /// buffered come first; the rest of a file goes straight into `buf`, one positioned
    /// read for all of it where the file has it.
    pub(crate) fn read_uninit(&mut self, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            let direct = self.reader.buffer().is_empty() && buf.len() - filled >= INPUT_BUFFER;
            let n = match self.reader.get_mut() {
                Source::File { file, pos, .. } if direct => {
                    match read_at_uninit(file, &mut buf[filled..], *pos) {
                        Ok(n) => {
                            *pos += n as u64;
                            n
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => return Err(e),
                    }
                }
                _ => {
                    let have = match self.reader.fill_buf() {
                        Ok(have) => have,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => return Err(e),
                    };
                    let n = have.len().min(buf.len() - filled);
                    for (dst, &b) in buf[filled..filled + n].iter_mut().zip(have) {
                        dst.write(b);
                    }
                    self.reader.consume(n);
                    n
                }
            };
            if n == 0 {
                break;
            }
            filled += n;
            self.pos += n as u64;
        }
        Ok(filled)
    }

    /// Closes a pipe, waits for its command and reports its failure; a no-op for files.
    ///
    /// As Kaldi's `pclose`, our end is closed first and what the command has not yet
    /// written is not read: a command that writes on (`yes`) is stopped by `SIGPIPE`
    /// rather than drained for ever. A command stopped so, when we closed before the end
    /// of its output, has not failed; any other unsuccessful exit is a failure.
    pub(crate) fn finish(&mut self) -> Result<(), Error> {
        if let Some(mut child) = self.child.take() {
            let source = std::mem::replace(self.reader.get_mut(), Source::Closed);
            let closed_early = matches!(source, Source::Pipe { ended: false, .. });
            drop(source); // closes our end of the pipe
            let status = child.wait().map_err(|e| io_error(&self.name, &e))?;
            let stopped_by_us = closed_early && killed_by_sigpipe(status);
            if !(status.success() || stopped_by_us) {
                return Err(Error::PipeFailed {
                    command: self.name.clone(),
                    status: status.to_string(),
                });
            }
        }
        Ok(())
    }

    /// For a pipe whose output ended early: the command's failure, if it failed.
    pub(crate) fn pipe_failure(&mut self) -> Option<Error> {
        self.child.as_ref()?;
        self.finish().err()
    }
}

/// Whether a command was stopped by `SIGPIPE`: killed by the signal, or a shell whose
/// last command was, which exits with 128 + 13.
#[cfg(unix)]
fn killed_by_sigpipe(status: std::process::ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal() == Some(libc::SIGPIPE) || status.code() == Some(128 + libc::SIGPIPE)
}

/// No `SIGPIPE` off Unix: a command that exits early exits with its own status.
#[cfg(not(unix))]
fn killed_by_sigpipe(_status: std::process::ExitStatus) -> bool {
    false
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.reader.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl BufRead for Input {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.reader.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.reader.consume(amt);
        self.pos += amt as u64;
    }
}

impl Drop for Input {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

enum Sink {
    File(File),
    Stdout(io::Stdout),
    Pipe(ChildStdin),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::File(f) => f.write(buf),
            Sink::Stdout(s) => s.write(buf),
            Sink::Pipe(p) => p.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::File(f) => f.flush(),
            Sink::Stdout(s) => s.flush(),
            Sink::Pipe(p) => p.flush(),
        }
    }
}

/// An open wxfilename: a buffered writer that counts the bytes written.
pub(crate) struct Output {
    name: String,
    writer: Option<BufWriter<Sink>>,
    pos: u64,
    child: Option<Child>,
}

impl Output {
    /// Kaldi's `Output::Open`: a file (created or truncated), `-` for standard output, or
    /// `| command`.
    pub(crate) fn open(wxfilename: &str) -> Result<Output, Error> {
        let (name, sink, child) = match classify_wxfilename(wxfilename)? {
            OutputKind::Stdout => (
                "standard output".to_string(),
                Sink::Stdout(io::stdout()),
                None,
            ),
            OutputKind::File(path) => {
                let file = File::create(&path).map_err(|e| io_error(&path, &e))?;
                (path, Sink::File(file), None)
            }
            OutputKind::Pipe(command) => {
                let mut child = shell(&command)
                    .stdin(Stdio::piped())
                    .spawn()
                    .map_err(|e| io_error(&command, &e))?;
                let stdin = child.stdin.take().expect("stdin was piped");
                (command, Sink::Pipe(stdin), Some(child))
            }
        };
        Ok(Output {
            name,
            writer: Some(BufWriter::with_capacity(OUTPUT_BUFFER, sink)),
            pos: 0,
            child,
        })
    }

    /// The file's name or the pipe's command.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Bytes written so far.
    pub(crate) fn pos(&self) -> u64 {
        self.pos
    }

    /// Flushes the buffer to the file or pipe.
    pub(crate) fn flush(&mut self) -> Result<(), Error> {
        if let Some(w) = self.writer.as_mut() {
            w.flush().map_err(|e| io_error(&self.name, &e))?;
        }
        Ok(())
    }

    /// Flushes, closes, and for a pipe waits for the command and reports its failure.
    pub(crate) fn finish(&mut self) -> Result<(), Error> {
        let flushed = self.flush();
        self.writer = None; // closes the pipe's stdin so the command sees the end
        if let Some(mut child) = self.child.take() {
            let status = child.wait().map_err(|e| io_error(&self.name, &e))?;
            if !status.success() {
                return Err(Error::PipeFailed {
                    command: self.name.clone(),
                    status: status.to_string(),
                });
            }
        }
        flushed
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let w = self
            .writer
            .as_mut()
            .ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "output already closed"))?;
        let n = w.write(buf)?;
        self.pos += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.writer.as_mut() {
            Some(w) => w.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// How far past its bound a [`LineBounded`] line may go before the error: more than the
/// input's buffer.
const LINE_SLACK: usize = 4 * INPUT_BUFFER;

/// A text object's input with a bound on its lines: more than `max` bytes without a newline
/// is an `InvalidData` error, not a line that grows until memory runs out (dense-matrix's
/// text readers read whole lines). The error comes once the line passes `max` by
/// [`LINE_SLACK`], so a holder that bounds its own lines at `max` (and reports them in its
/// own words) meets its bound first.
pub(crate) struct LineBounded<'a, R> {
    inner: &'a mut R,
    max: usize,
    /// Bytes of the current line consumed so far.
    line: usize,
}

impl<'a, R: BufRead> LineBounded<'a, R> {
    pub(crate) fn new(inner: &'a mut R, max: usize) -> Self {
        LineBounded {
            inner,
            max,
            line: 0,
        }
    }
}

impl<R: BufRead> Read for LineBounded<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let buf = self.fill_buf()?;
        let n = buf.len().min(out.len());
        out[..n].copy_from_slice(&buf[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for LineBounded<'_, R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let allowed = (self.max + LINE_SLACK).saturating_sub(self.line);
        let max = self.max;
        let buf = self.inner.fill_buf()?;
        // the line may hold `allowed` more bytes, then its newline
        let window = &buf[..buf.len().min(allowed + 1)];
        if buf.len() > allowed && !window.contains(&b'\n') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a text line longer than {max} bytes (MAX_TEXT_LINE_LEN)"),
            ));
        }
        Ok(buf)
    }

    fn consume(&mut self, n: usize) {
        // the same bytes `fill_buf` handed out (still buffered: nothing consumed since)
        if let Ok(buf) = self.inner.fill_buf() {
            let taken = &buf[..n.min(buf.len())];
            match taken.iter().rposition(|&b| b == b'\n') {
                Some(p) => self.line = taken.len() - p - 1,
                None => self.line += taken.len(),
            }
        }
        self.inner.consume(n);
    }
}

#[cfg(test)]
mod line_bound_tests {
    use std::io::{BufRead, BufReader, Cursor, Read};

    use super::{LineBounded, LINE_SLACK};

    /// Reads all of `text` line by line through a `LineBounded` of `max` over a reader with
    /// a 7-byte buffer (so lines cross many buffers).
    fn lines(text: &[u8], max: usize) -> std::io::Result<Vec<Vec<u8>>> {
        let mut inner = BufReader::with_capacity(7, Cursor::new(text.to_vec()));
        let mut bounded = LineBounded::new(&mut inner, max);
        let mut out = Vec::new();
        loop {
            let mut line = Vec::new();
            if bounded.read_until(b'\n', &mut line)? == 0 {
                return Ok(out);
            }
            out.push(line);
        }
    }

    #[test]
    fn lines_up_to_the_bound_and_its_slack_read_and_longer_ones_are_errors() {
        let max = 10;
        let long = vec![b'7'; max + LINE_SLACK];
        let mut text = b"short\n".to_vec();
        text.extend_from_slice(&long);
        text.extend_from_slice(b"\nand again\n");
        text.extend_from_slice(&long);
        let got = lines(&text, max).unwrap();
        assert_eq!(got.len(), 4);
        assert_eq!(got[1].len(), long.len() + 1);
        assert_eq!(got[3], long);
        // one byte more: an error, after no more than the bound, the slack and one buffer
        let mut hostile = b"ok\n".to_vec();
        hostile.extend(std::iter::repeat_n(b'7', max + LINE_SLACK + 1));
        let err = lines(&hostile, max).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("longer than 10 bytes"), "{err}");
        // `read` goes through the same bound
        let mut inner = BufReader::with_capacity(7, Cursor::new(hostile.clone()));
        let mut all = Vec::new();
        let err = LineBounded::new(&mut inner, max)
            .read_to_end(&mut all)
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
        assert!(all.len() <= 3 + max + LINE_SLACK, "{}", all.len());
    }
}
