//! The crate's error type: every variant names the file, key, line or byte offset at fault.

use std::fmt;

/// Errors of this crate.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// An rspecifier Kaldi would classify as `kNoRspecifier`.
    Rspecifier {
        /// The rspecifier.
        rspecifier: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A wspecifier Kaldi would classify as `kNoWspecifier`.
    Wspecifier {
        /// The wspecifier.
        wspecifier: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An rxfilename Kaldi would classify as `kNoInput`.
    Rxfilename {
        /// The rxfilename.
        rxfilename: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A wxfilename Kaldi would classify as `kNoOutput`.
    Wxfilename {
        /// The wxfilename.
        wxfilename: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Opening, reading, seeking or writing a file, pipe or standard stream failed.
    Io {
        /// The file or stream.
        name: String,
        /// The I/O error's kind.
        kind: std::io::ErrorKind,
        /// Its message.
        message: String,
    },
    /// A pipe command (`cmd |` or `| cmd`) exited unsuccessfully.
    PipeFailed {
        /// The command.
        command: String,
        /// Its exit status.
        status: String,
    },
    /// An `rxfilename:offset` whose offset lies past the end of the file.
    OffsetPastEnd {
        /// The file.
        name: String,
        /// The offset asked for.
        offset: u64,
        /// The file's length.
        len: u64,
    },
    /// An object that does not parse.
    Object {
        /// The file (or stream) it came from.
        name: String,
        /// Its key in a table, if any.
        key: Option<String>,
        /// Byte offset where the object starts.
        offset: u64,
        /// What the object reader found.
        source: dense_matrix::Error,
    },
    /// An archive that breaks Kaldi's `key SPACE object` layout.
    Archive {
        /// The archive.
        name: String,
        /// Byte offset of the problem.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// A script (`.scp`) line that is not `key rxfilename`.
    ScpLine {
        /// The script file.
        name: String,
        /// Its line number (from 1).
        line: usize,
        /// The line.
        text: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Keys out of the order an option promised (`s`), or repeated.
    KeyOrder {
        /// The archive or script.
        name: String,
        /// The key before.
        previous: String,
        /// The offending key.
        key: String,
        /// "duplicate" or "not sorted".
        reason: &'static str,
    },
    /// `get` called with keys out of order on a `cs` (called-sorted) reader.
    CalledOutOfOrder {
        /// The rspecifier.
        rspecifier: String,
        /// The key asked before.
        previous: String,
        /// The key asked now.
        key: String,
    },
    /// A `[...]` range on an scp entry that does not parse or does not fit the object.
    Range {
        /// The key of the entry.
        key: String,
        /// The range text.
        range: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A key a table cannot hold (empty, longer than [`crate::MAX_KEY_LEN`] bytes, or with
    /// whitespace or control characters).
    InvalidKey {
        /// The key.
        key: String,
    },
    /// Writing through an `scp:` wspecifier a key its script file does not list.
    KeyNotInScript {
        /// The key.
        key: String,
        /// The script file.
        script: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Rspecifier { rspecifier, reason } => {
                write!(f, "invalid rspecifier `{rspecifier}`: {reason}")
            }
            Error::Wspecifier { wspecifier, reason } => {
                write!(f, "invalid wspecifier `{wspecifier}`: {reason}")
            }
            Error::Rxfilename { rxfilename, reason } => {
                write!(f, "invalid rxfilename `{rxfilename}`: {reason}")
            }
            Error::Wxfilename { wxfilename, reason } => {
                write!(f, "invalid wxfilename `{wxfilename}`: {reason}")
            }
            Error::Io {
                name,
                kind,
                message,
            } => write!(f, "{name}: I/O error ({kind:?}): {message}"),
            Error::PipeFailed { command, status } => {
                write!(f, "pipe command `{command}` failed: {status}")
            }
            Error::OffsetPastEnd { name, offset, len } => write!(
                f,
                "{name}: offset {offset} is past the end of the file ({len} bytes)"
            ),
            Error::Object {
                name,
                key,
                offset,
                source,
            } => match key {
                Some(key) => write!(f, "{name}: key `{key}` at byte {offset}: {source}"),
                None => write!(f, "{name}: at byte {offset}: {source}"),
            },
            Error::Archive {
                name,
                offset,
                reason,
            } => write!(f, "{name}: at byte {offset}: {reason}"),
            Error::ScpLine {
                name,
                line,
                text,
                reason,
            } => write!(f, "{name}: line {line} `{text}`: {reason}"),
            Error::KeyOrder {
                name,
                previous,
                key,
                reason,
            } => write!(f, "{name}: key `{key}` after `{previous}`: {reason}"),
            Error::CalledOutOfOrder {
                rspecifier,
                previous,
                key,
            } => write!(
                f,
                "{rspecifier}: key `{key}` asked after `{previous}`, but the `cs` option \
                 promised keys in sorted order"
            ),
            Error::Range { key, range, reason } => {
                write!(f, "key `{key}`: range `[{range}]`: {reason}")
            }
            Error::InvalidKey { key } => write!(
                f,
                "invalid key `{key}`: a key is non-empty, at most {} bytes, without whitespace \
                 or control characters",
                crate::MAX_KEY_LEN
            ),
            Error::KeyNotInScript { key, script } => {
                write!(f, "key `{key}` is not listed in the script file {script}")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Object { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// An I/O error on `name`.
pub(crate) fn io_error(name: &str, e: &std::io::Error) -> Error {
    Error::Io {
        name: name.to_string(),
        kind: e.kind(),
        message: e.to_string(),
    }
}
