//! Kaldi's rspecifier / wspecifier grammar (`ClassifyRspecifier`, `ClassifyWspecifier`) and
//! its rxfilename / wxfilename kinds (`ClassifyRxfilename`, `ClassifyWxfilename`).

use crate::Error;

/// What an rspecifier reads: an archive or a script of rxfilenames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RspecifierKind {
    /// `ark:`
    Archive,
    /// `scp:`
    Script,
}

/// The options of an rspecifier, Kaldi's `RspecifierOptions`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RspecifierOptions {
    /// `o` (`no` undoes): each key is asked for at most once.
    pub once: bool,
    /// `s` (`ns`): the keys of the archive or script are sorted.
    pub sorted: bool,
    /// `cs` (`ncs`): `get` is called with keys in sorted order.
    pub called_sorted: bool,
    /// `p` (`np`): an object that cannot be read counts as absent instead of an error.
    pub permissive: bool,
    /// `bg`: a sequential reader reads ahead in a background thread (ignored by random access).
    pub background: bool,
}

/// A parsed rspecifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rspecifier {
    /// Archive or script.
    pub kind: RspecifierKind,
    /// The rxfilename after the colon.
    pub rxfilename: String,
    /// The options before it.
    pub options: RspecifierOptions,
}

/// What a wspecifier writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WspecifierKind {
    /// `ark:` an archive.
    Archive {
        /// Where the archive goes.
        archive: String,
    },
    /// `scp:` each object to the wxfilename its key has in an existing script file.
    Script {
        /// The script file (an rxfilename: it is read).
        script: String,
    },
    /// `ark,scp:` an archive and a script pointing into it.
    Both {
        /// Where the archive goes.
        archive: String,
        /// Where the script goes.
        script: String,
    },
}

/// The options of a wspecifier, Kaldi's `WspecifierOptions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WspecifierOptions {
    /// `b` (default) or `t`: binary or text mode.
    pub binary: bool,
    /// `f` / `nf`: flush after each object (Kaldi's default: no).
    pub flush: bool,
    /// `p`: with `scp:`, keys the script does not list are skipped instead of an error.
    pub permissive: bool,
}

impl Default for WspecifierOptions {
    fn default() -> Self {
        WspecifierOptions {
            binary: true,
            flush: false,
            permissive: false,
        }
    }
}

/// A parsed wspecifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wspecifier {
    /// Archive, script or both, with their filenames.
    pub kind: WspecifierKind,
    /// The options.
    pub options: WspecifierOptions,
}

/// The part before the colon split on `,` and ` `, keeping empty pieces (Kaldi's
/// `SplitStringToVector(before, ", ", false, ..)`), and the part after it.
fn split_specifier(spec: &str) -> Option<(Vec<&str>, &str)> {
    let colon = spec.find(':')?;
    let (before, after) = (&spec[..colon], &spec[colon + 1..]);
    let pieces = if before.is_empty() {
        Vec::new()
    } else {
        before.split([',', ' ']).collect()
    };
    Some((pieces, after))
}

fn ends_with_space(s: &str) -> bool {
    s.as_bytes().last().is_some_and(u8::is_ascii_whitespace)
}

impl Rspecifier {
    /// Kaldi's `ClassifyRspecifier`: `[options,](ark|scp)[,options]:rxfilename`, options
    /// among `b t o no s ns cs ncs p np bg`; exactly one of `ark` and `scp`.
    pub fn parse(rspecifier: &str) -> Result<Self, Error> {
        let err = |reason| Error::Rspecifier {
            rspecifier: rspecifier.to_string(),
            reason,
        };
        let (pieces, after) = split_specifier(rspecifier)
            .ok_or_else(|| err("no `:` (expected `ark:` or `scp:` before the filename)"))?;
        if ends_with_space(rspecifier) {
            return Err(err("trailing whitespace"));
        }
        let mut kind = None;
        let mut options = RspecifierOptions::default();
        for piece in pieces {
            match piece {
                "b" | "t" => {}
                "o" => options.once = true,
                "no" => options.once = false,
                "p" => options.permissive = true,
                "np" => options.permissive = false,
                "s" => options.sorted = true,
                "ns" => options.sorted = false,
                "cs" => options.called_sorted = true,
                "ncs" => options.called_sorted = false,
                "bg" => options.background = true,
                "ark" | "scp" => {
                    if kind.is_some() {
                        return Err(err("`ark` and `scp` may appear only once, not both"));
                    }
                    kind = Some(if piece == "ark" {
                        RspecifierKind::Archive
                    } else {
                        RspecifierKind::Script
                    });
                }
                _ => {
                    return Err(err(
                        "unknown option (known: ark scp b t o no s ns cs ncs p np bg)",
                    ))
                }
            }
        }
        let kind = kind.ok_or_else(|| err("neither `ark` nor `scp` before the `:`"))?;
        Ok(Rspecifier {
            kind,
            rxfilename: after.to_string(),
            options,
        })
    }
}

impl Wspecifier {
    /// Kaldi's `ClassifyWspecifier`: `ark:`, `scp:` or `ark,scp:archive,script`, options
    /// among `b t f nf p`; `scp` before `ark` or repeated is invalid.
    pub fn parse(wspecifier: &str) -> Result<Self, Error> {
        let err = |reason| Error::Wspecifier {
            wspecifier: wspecifier.to_string(),
            reason,
        };
        let (pieces, after) = split_specifier(wspecifier)
            .ok_or_else(|| err("no `:` (expected `ark:`, `scp:` or `ark,scp:`)"))?;
        if ends_with_space(wspecifier) {
            return Err(err("trailing whitespace"));
        }
        #[derive(PartialEq)]
        enum Seen {
            None,
            Ark,
            Scp,
            Both,
        }
        let mut seen = Seen::None;
        let mut options = WspecifierOptions::default();
        for piece in pieces {
            match piece {
                "b" => options.binary = true,
                "t" => options.binary = false,
                "f" => options.flush = true,
                "nf" => options.flush = false,
                "p" => options.permissive = true,
                "ark" => {
                    if seen != Seen::None {
                        return Err(err("`ark` must come once, before `scp`"));
                    }
                    seen = Seen::Ark;
                }
                "scp" => {
                    seen = match seen {
                        Seen::None => Seen::Scp,
                        Seen::Ark => Seen::Both,
                        _ => return Err(err("`scp` may appear only once")),
                    }
                }
                _ => return Err(err("unknown option (known: ark scp b t f nf p)")),
            }
        }
        let kind = match seen {
            Seen::None => return Err(err("neither `ark` nor `scp` before the `:`")),
            Seen::Ark => WspecifierKind::Archive {
                archive: after.to_string(),
            },
            Seen::Scp => WspecifierKind::Script {
                script: after.to_string(),
            },
            Seen::Both => {
                let comma = after
                    .find(',')
                    .ok_or_else(|| err("`ark,scp:` needs two filenames: `archive,script`"))?;
                WspecifierKind::Both {
                    archive: after[..comma].to_string(),
                    script: after[comma + 1..].to_string(),
                }
            }
        };
        Ok(Wspecifier { kind, options })
    }
}

/// Kaldi's input kinds (`InputType`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputKind {
    /// `""` or `-`.
    Stdin,
    /// A plain file.
    File(String),
    /// `file:offset`.
    OffsetFile {
        /// The file.
        path: String,
        /// The byte offset.
        offset: u64,
    },
    /// `command |`: the command's standard output.
    Pipe(String),
}

/// Kaldi's output kinds (`OutputType`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputKind {
    /// `""` or `-`.
    Stdout,
    /// A plain file.
    File(String),
    /// `| command`: the command's standard input.
    Pipe(String),
}

/// True where Kaldi's classifiers take a filename for a mistyped specifier (`ark:x`).
fn looks_like_specifier(name: &str) -> bool {
    (name.starts_with('a') || name.starts_with('s'))
        && name.contains(':')
        && (Wspecifier::parse(name).is_ok() || Rspecifier::parse(name).is_ok())
}

/// If `name` ends in `:digits` (and has something before the colon), the split.
fn split_offset(name: &str) -> Option<(&str, &str)> {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits == name.len() {
        return None;
    }
    let head = &name[..name.len() - digits];
    let path = head.strip_suffix(':')?;
    Some((path, &name[name.len() - digits..]))
}

/// Kaldi's `ClassifyRxfilename`.
pub fn classify_rxfilename(rxfilename: &str) -> Result<InputKind, Error> {
    let err = |reason| Error::Rxfilename {
        rxfilename: rxfilename.to_string(),
        reason,
    };
    if rxfilename.is_empty() || rxfilename == "-" {
        return Ok(InputKind::Stdin);
    }
    if rxfilename.starts_with('|') {
        return Err(err(
            "`| command` is an output pipe; an input pipe is `command |`",
        ));
    }
    if let Some(command) = rxfilename.strip_suffix('|') {
        return Ok(InputKind::Pipe(command.to_string()));
    }
    let first = rxfilename.as_bytes()[0];
    if first.is_ascii_whitespace() || ends_with_space(rxfilename) {
        return Err(err("leading or trailing whitespace"));
    }
    if looks_like_specifier(rxfilename) {
        return Err(err(
            "an rspecifier or wspecifier where a filename was expected",
        ));
    }
    if let Some((path, digits)) = split_offset(rxfilename) {
        let offset = digits
            .parse::<u64>()
            .map_err(|_| err("the byte offset does not fit in 64 bits"))?;
        return Ok(InputKind::OffsetFile {
            path: path.to_string(),
            offset,
        });
    }
    if rxfilename.contains('|') {
        return Err(err("`|` inside the name (an input pipe ends with `|`)"));
    }
    Ok(InputKind::File(rxfilename.to_string()))
}

/// Kaldi's `ClassifyWxfilename`.
pub fn classify_wxfilename(wxfilename: &str) -> Result<OutputKind, Error> {
    let err = |reason| Error::Wxfilename {
        wxfilename: wxfilename.to_string(),
        reason,
    };
    if wxfilename.is_empty() || wxfilename == "-" {
        return Ok(OutputKind::Stdout);
    }
    if let Some(command) = wxfilename.strip_prefix('|') {
        return Ok(OutputKind::Pipe(command.to_string()));
    }
    let first = wxfilename.as_bytes()[0];
    if first.is_ascii_whitespace() || ends_with_space(wxfilename) {
        return Err(err("leading or trailing whitespace"));
    }
    if wxfilename.ends_with('|') {
        return Err(err(
            "`command |` is an input pipe; an output pipe is `| command`",
        ));
    }
    if looks_like_specifier(wxfilename) {
        return Err(err(
            "an rspecifier or wspecifier where a filename was expected",
        ));
    }
    if split_offset(wxfilename).is_some() {
        return Err(err("a byte offset (`file:123`) cannot be written to"));
    }
    if wxfilename.contains('|') {
        return Err(err("`|` inside the name (an output pipe starts with `|`)"));
    }
    Ok(OutputKind::File(wxfilename.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check_r(spec: &str, kind: RspecifierKind, file: &str, options: RspecifierOptions) {
        let r = Rspecifier::parse(spec).unwrap();
        assert_eq!(
            r,
            Rspecifier {
                kind,
                rxfilename: file.into(),
                options
            }
        );
    }

    #[track_caller]
    fn check_r_err(spec: &str, reason: &str) {
        match Rspecifier::parse(spec) {
            Err(Error::Rspecifier {
                rspecifier,
                reason: got,
            }) => {
                assert_eq!((rspecifier.as_str(), got), (spec, reason))
            }
            other => panic!("{spec}: {other:?}"),
        }
    }

    #[test]
    fn rspecifiers_as_kaldi_classifies_them() {
        use RspecifierKind::*;
        let none = RspecifierOptions::default();
        check_r("ark:foo.ark", Archive, "foo.ark", none);
        check_r("scp:-", Script, "-", none);
        check_r("ark:gunzip -c x.gz |", Archive, "gunzip -c x.gz |", none);
        check_r("b,ark:a:b", Archive, "a:b", none);
        let all = RspecifierOptions {
            once: true,
            sorted: true,
            called_sorted: true,
            permissive: true,
            background: true,
        };
        check_r("ark,o,s,cs,p,bg:x", Archive, "x", all);
        check_r("t,o,s,cs,p,bg,scp:x", Script, "x", all);
        check_r("ark,o,no,s,ns,cs,ncs,p,np:x", Archive, "x", none);
        check_r(
            "ark s:x",
            Archive,
            "x",
            RspecifierOptions {
                sorted: true,
                ..none
            },
        );
        check_r_err(
            "foo.ark",
            "no `:` (expected `ark:` or `scp:` before the filename)",
        );
        check_r_err(
            "ark,scp:x",
            "`ark` and `scp` may appear only once, not both",
        );
        check_r_err(
            "ark,ark:x",
            "`ark` and `scp` may appear only once, not both",
        );
        check_r_err(
            "ark,f:x",
            "unknown option (known: ark scp b t o no s ns cs ncs p np bg)",
        );
        // Kaldi keeps the empty piece between `,` and ` `, which is no option
        check_r_err(
            "ark, s:x",
            "unknown option (known: ark scp b t o no s ns cs ncs p np bg)",
        );
        check_r_err("s,cs:x", "neither `ark` nor `scp` before the `:`");
        check_r_err("ark:x ", "trailing whitespace");
    }

    #[track_caller]
    fn check_w(spec: &str, kind: WspecifierKind, binary: bool, flush: bool, permissive: bool) {
        let w = Wspecifier::parse(spec).unwrap();
        let options = WspecifierOptions {
            binary,
            flush,
            permissive,
        };
        assert_eq!(w, Wspecifier { kind, options });
    }

    #[track_caller]
    fn check_w_err(spec: &str, reason: &str) {
        match Wspecifier::parse(spec) {
            Err(Error::Wspecifier {
                wspecifier,
                reason: got,
            }) => {
                assert_eq!((wspecifier.as_str(), got), (spec, reason))
            }
            other => panic!("{spec}: {other:?}"),
        }
    }

    #[test]
    fn wspecifiers_as_kaldi_classifies_them() {
        let ark = |a: &str| WspecifierKind::Archive { archive: a.into() };
        check_w("ark:foo.ark", ark("foo.ark"), true, false, false);
        check_w("ark,t:-", ark("-"), false, false, false);
        check_w("ark,t,b,f:x", ark("x"), true, true, false);
        check_w("ark,f,nf:x", ark("x"), true, false, false);
        check_w(
            "scp,p:w.scp",
            WspecifierKind::Script {
                script: "w.scp".into(),
            },
            true,
            false,
            true,
        );
        check_w(
            "ark,scp,t:a.ark,a.scp",
            WspecifierKind::Both {
                archive: "a.ark".into(),
                script: "a.scp".into(),
            },
            false,
            false,
            false,
        );
        check_w_err("scp,ark:a,b", "`ark` must come once, before `scp`");
        check_w_err("ark,scp,scp:a,b", "`scp` may appear only once");
        check_w_err(
            "ark,scp:a.ark",
            "`ark,scp:` needs two filenames: `archive,script`",
        );
        check_w_err("ark,s:x", "unknown option (known: ark scp b t f nf p)");
        check_w_err("t:x", "neither `ark` nor `scp` before the `:`");
        check_w_err("ark:x\t", "trailing whitespace");
    }

    #[test]
    fn rxfilenames_and_wxfilenames() {
        use InputKind::*;
        assert_eq!(classify_rxfilename("-").unwrap(), Stdin);
        assert_eq!(classify_rxfilename("").unwrap(), Stdin);
        assert_eq!(classify_rxfilename("a.ark").unwrap(), File("a.ark".into()));
        assert_eq!(
            classify_rxfilename("d/a.ark:1234").unwrap(),
            OffsetFile {
                path: "d/a.ark".into(),
                offset: 1234
            }
        );
        assert_eq!(classify_rxfilename("a:b").unwrap(), File("a:b".into()));
        assert_eq!(classify_rxfilename("a2").unwrap(), File("a2".into()));
        assert_eq!(
            classify_rxfilename("cat x |").unwrap(),
            Pipe("cat x ".into())
        );
        let reason = |r: Result<InputKind, Error>| match r {
            Err(Error::Rxfilename { reason, .. }) => reason,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            reason(classify_rxfilename("| gzip")),
            "`| command` is an output pipe; an input pipe is `command |`"
        );
        assert_eq!(
            reason(classify_rxfilename(" a")),
            "leading or trailing whitespace"
        );
        assert_eq!(
            reason(classify_rxfilename("ark:a.ark")),
            "an rspecifier or wspecifier where a filename was expected"
        );
        assert_eq!(
            reason(classify_rxfilename("a|b")),
            "`|` inside the name (an input pipe ends with `|`)"
        );
        assert_eq!(
            reason(classify_rxfilename("a:99999999999999999999999")),
            "the byte offset does not fit in 64 bits"
        );
        assert_eq!(classify_wxfilename("-").unwrap(), OutputKind::Stdout);
        assert_eq!(
            classify_wxfilename("| gzip -c > x.gz").unwrap(),
            OutputKind::Pipe(" gzip -c > x.gz".into())
        );
        assert_eq!(
            classify_wxfilename("out.ark").unwrap(),
            OutputKind::File("out.ark".into())
        );
        match classify_wxfilename("out.ark:12") {
            Err(Error::Wxfilename { reason, .. }) => {
                assert_eq!(reason, "a byte offset (`file:123`) cannot be written to")
            }
            other => panic!("{other:?}"),
        }
        match classify_wxfilename("cat |") {
            Err(Error::Wxfilename { reason, .. }) => assert_eq!(
                reason,
                "`command |` is an input pipe; an output pipe is `| command`"
            ),
            other => panic!("{other:?}"),
        }
    }
}
