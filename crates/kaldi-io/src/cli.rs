//! Kaldi's `ParseOptions` for command-line tools on kaldi-io (the crate's `copy-feats`,
//! `copy-matrix`, `compute-cmvn-stats` and the others use it): `--name=value` options
//! before the positional arguments, `--` ending them, `_` and `-` alike in names, Kaldi's
//! boolean spellings, `--config=FILE`, `--help` and `--print-args`.

use std::collections::BTreeMap;

use crate::{Error, Holder, SequentialTableReader, TableWriter};

/// The type of an option, which decides how its value is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// `true`/`t`/`1` or `false`/`f`/`0` (any case); `--name` alone is `true`.
    Bool,
    /// An `i32`.
    Int,
    /// A floating-point number.
    Float,
    /// Any text (`--name=` gives the empty string).
    String,
}

#[derive(Debug, Clone)]
struct Registered {
    kind: OptionKind,
    default: String,
    help: String,
    value: String,
}

/// What [`ParseOptions::read`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// The positional arguments, in order.
    Args(Vec<String>),
    /// `--help` was given: print [`ParseOptions::usage`] and exit 0.
    Help,
}

/// Kaldi's `ParseOptions`: options registered with a default and help text, read from
/// the command line (and `--config` files), then read back by name.
///
/// ```
/// use kaldi_io::cli::{OptionKind, ParseOptions, Parsed};
///
/// let mut po = ParseOptions::new("Usage: tool [options] <in> <out>\n");
/// po.register("binary", OptionKind::Bool, "true", "Write in binary mode");
/// po.register("scale", OptionKind::Float, "1.0", "Scale the values");
/// let args = ["--binary=f", "--scale=0.5", "ark:in.ark", "--", "-"];
/// let Parsed::Args(positional) = po.read(args.iter().map(|s| s.to_string())).unwrap() else {
///     unreachable!()
/// };
/// assert_eq!(positional, ["ark:in.ark", "-"]);
/// assert!(!po.get_bool("binary"));
/// assert_eq!(po.get_f64("scale"), 0.5);
/// ```
#[derive(Debug, Clone)]
pub struct ParseOptions {
    usage: String,
    options: BTreeMap<String, Registered>,
    print_args: bool,
    command_line: Vec<String>,
}

/// Kaldi's name normalisation: `_` and `-` are the same in option names.
fn normalize(name: &str) -> String {
    name.replace('_', "-")
}

/// Kaldi's boolean spellings (`ParseOptions::ToBool`).
fn to_bool(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "t" | "1" | "" => Some(true),
        "false" | "f" | "0" => Some(false),
        _ => None,
    }
}

impl ParseOptions {
    /// A parser with the tool's usage text and Kaldi's standard options (`--config`,
    /// `--help`, `--print-args`, `--verbose`).
    pub fn new(usage: &str) -> Self {
        let mut po = Self {
            usage: usage.to_string(),
            options: BTreeMap::new(),
            print_args: true,
            command_line: Vec::new(),
        };
        po.register(
            "config",
            OptionKind::String,
            "",
            "Configuration file to read (this option may be repeated)",
        );
        po.register("help", OptionKind::Bool, "false", "Print out usage message");
        po.register(
            "print-args",
            OptionKind::Bool,
            "true",
            "Print the command line arguments (to stderr)",
        );
        po.register(
            "verbose",
            OptionKind::Int,
            "0",
            "Verbose level (higher->more logging)",
        );
        po
    }

    /// Registers an option with its default value (as text) and help.
    ///
    /// # Panics
    /// If `default` is not a valid value of `kind` (a bug in the tool, not user input).
    pub fn register(&mut self, name: &str, kind: OptionKind, default: &str, help: &str) {
        assert!(
            check(kind, default).is_ok(),
            "default {default:?} of --{name} is not a {kind:?}"
        );
        self.options.insert(
            normalize(name),
            Registered {
                kind,
                default: default.to_string(),
                help: help.to_string(),
                value: default.to_string(),
            },
        );
    }

    /// The usage text followed by every option with its help, type and default, as
    /// Kaldi's `PrintUsage` lays it out.
    pub fn usage(&self) -> String {
        let mut out = self.usage.clone();
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("Options:\n");
        for (name, opt) in &self.options {
            let kind = match opt.kind {
                OptionKind::Bool => "bool",
                OptionKind::Int => "int",
                OptionKind::Float => "float",
                OptionKind::String => "string",
            };
            out.push_str(&format!(
                "  --{name:<24} : {} ({kind}, default = {})\n",
                opt.help, opt.default
            ));
        }
        out
    }

    /// Reads the arguments after the program name: options up to the first argument that
    /// does not start with `--` (or up to a lone `--`), the rest positional, less the first
    /// lone `--`. An unknown
    /// option, a value of the wrong type or a non-boolean option without `=value` is an
    /// error naming it. `--config=FILE` reads `--name=value` lines from FILE (`#` starts a
    /// comment) before the command line's own options, which win.
    pub fn read(&mut self, args: impl IntoIterator<Item = String>) -> Result<Parsed, String> {
        let args: Vec<String> = args.into_iter().collect();
        self.command_line = args.clone();
        let mut split = args.len();
        for (i, arg) in args.iter().enumerate() {
            if arg == "--" || !arg.starts_with("--") {
                split = i;
                break;
            }
        }
        // config files first, so that the command line wins
        for arg in &args[..split] {
            let (name, value) = split_long(arg)?;
            if name == "config" {
                let value = value.ok_or("--config needs a file name: --config=FILE")?;
                self.read_config(&value)?;
            }
        }
        for arg in &args[..split] {
            let (name, value) = split_long(arg)?;
            if name != "config" {
                self.set(&name, value)?;
            }
        }
        // one lone `--` is dropped, as in Kaldi: the one that ends the options, or else
        // the first among the positional arguments
        let mut dash_seen = false;
        let mut rest = Vec::new();
        for arg in &args[split..] {
            if arg == "--" && !dash_seen {
                dash_seen = true;
            } else {
                rest.push(arg.clone());
            }
        }
        self.print_args = self.get_bool("print-args");
        if self.get_bool("help") {
            return Ok(Parsed::Help);
        }
        Ok(Parsed::Args(rest))
    }

    fn read_config(&mut self, path: &str) -> Result<(), String> {
        let text = std::fs::read_to_string(path)
            .map_err(|err| format!("cannot read config file {path}: {err}"))?;
        for (k, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            if !line.starts_with("--") {
                return Err(format!(
                    "config file {path}, line {}: {line:?} is not of the form --name=value",
                    k + 1
                ));
            }
            let (name, value) = split_long(line)?;
            self.set(&name, value)
                .map_err(|err| format!("config file {path}, line {}: {err}", k + 1))?;
        }
        Ok(())
    }

    fn set(&mut self, name: &str, value: Option<String>) -> Result<(), String> {
        let Some(opt) = self.options.get_mut(name) else {
            return Err(format!("invalid option --{name}"));
        };
        let value = match (opt.kind, value) {
            (OptionKind::Bool, None) => String::new(),
            (_, None) => {
                return Err(format!(
                    "invalid option --{name} (option format is --{name}=value)"
                ))
            }
            (_, Some(v)) => v,
        };
        check(opt.kind, &value)
            .map_err(|what| format!("invalid value {value:?} for --{name} (expected {what})"))?;
        opt.value = value;
        Ok(())
    }

    /// Whether `--print-args` (Kaldi's default: true) asks for the command line on
    /// standard error.
    pub fn print_args(&self) -> bool {
        self.print_args
    }

    /// The command line as read (after the program name), for `--print-args`.
    pub fn command_line(&self) -> &[String] {
        &self.command_line
    }

    fn value(&self, name: &str) -> &Registered {
        match self.options.get(&normalize(name)) {
            Some(opt) => opt,
            None => panic!("option --{name} was never registered"),
        }
    }

    /// A boolean option's value.
    ///
    /// # Panics
    /// If `name` was not registered (a bug in the tool).
    pub fn get_bool(&self, name: &str) -> bool {
        to_bool(&self.value(name).value).unwrap_or(false)
    }

    /// An integer option's value.
    ///
    /// # Panics
    /// If `name` was not registered (a bug in the tool).
    pub fn get_i32(&self, name: &str) -> i32 {
        self.value(name).value.trim().parse().unwrap_or(0)
    }

    /// A floating-point option's value.
    ///
    /// # Panics
    /// If `name` was not registered (a bug in the tool).
    pub fn get_f64(&self, name: &str) -> f64 {
        self.value(name).value.trim().parse().unwrap_or(0.0)
    }

    /// A string option's value.
    ///
    /// # Panics
    /// If `name` was not registered (a bug in the tool).
    pub fn get_string(&self, name: &str) -> &str {
        &self.value(name).value
    }
}

/// The table loop of Kaldi's copying tools (`copy-feats`, `copy-matrix`, `copy-int-vector`,
/// `apply-cmvn`): creates the writer of `wspecifier`, reads each `(key, value)` of
/// `rspecifier` in turn, hands it to `each`, writes what `each` returns (`None`: nothing
/// for this key), and finishes the writer; returns the number of values written. The first
/// error, of the tables or of `each`, stops the loop.
pub fn copy_table<T: Holder, U: Holder, E: From<Error>>(
    rspecifier: &str,
    wspecifier: &str,
    mut each: impl FnMut(&str, T) -> Result<Option<U>, E>,
) -> Result<usize, E> {
    let mut writer = TableWriter::<U>::create(wspecifier)?;
    let mut written = 0;
    for entry in SequentialTableReader::<T>::open(rspecifier)? {
        let (key, value) = entry?;
        if let Some(out) = each(&key, value)? {
            writer.write(&key, &out)?;
            written += 1;
        }
    }
    writer.finish()?;
    Ok(written)
}

/// What a tool's body reports: `Ok(true)` when it did something (exit 0), `Ok(false)` when
/// there was nothing to do (exit 1, as Kaldi's tools do when no entry was copied), or the
/// error that stopped it (printed as `<tool>: ERROR: ...`, exit 255, Kaldi's `return -1`).
pub type ToolResult = Result<bool, Box<dyn std::error::Error>>;

/// Runs a Kaldi-style tool: reads the options, prints the command line when
/// `--print-args` is on, prints the usage and exits 1 on a bad option or when
/// `num_args_ok` refuses the number of positional arguments, 0 on `--help`; then runs
/// `body` on the options and the positional arguments.
pub fn run_tool(
    name: &str,
    po: &mut ParseOptions,
    args: impl IntoIterator<Item = String>,
    num_args_ok: impl Fn(usize) -> bool,
    body: impl FnOnce(&ParseOptions, &[String]) -> ToolResult,
) -> std::process::ExitCode {
    use std::process::ExitCode;
    let parsed = po.read(args);
    if po.print_args() {
        let mut line = name.to_string();
        for arg in po.command_line() {
            line.push(' ');
            line.push_str(arg);
        }
        eprintln!("{line}");
    }
    let positional = match parsed {
        Ok(Parsed::Help) => {
            eprint!("{}", po.usage());
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("{name}: ERROR: {message}\n\n{}", po.usage());
            return ExitCode::from(1);
        }
        Ok(Parsed::Args(positional)) => positional,
    };
    if !num_args_ok(positional.len()) {
        eprint!("{}", po.usage());
        return ExitCode::from(1);
    }
    match body(po, &positional) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(err) => {
            eprintln!("{name}: ERROR: {err}");
            ExitCode::from(255)
        }
    }
}

/// `--name=value` or `--name` into the normalised name and the value.
fn split_long(arg: &str) -> Result<(String, Option<String>), String> {
    let body = arg
        .strip_prefix("--")
        .ok_or_else(|| format!("{arg:?} is not an option"))?;
    let (name, value) = match body.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (body, None),
    };
    if name.is_empty() {
        return Err(format!("invalid option {arg:?}"));
    }
    Ok((normalize(name), value))
}

/// Whether `value` is a valid `kind`; the expected form otherwise.
fn check(kind: OptionKind, value: &str) -> Result<(), &'static str> {
    let ok = match kind {
        OptionKind::Bool => to_bool(value).is_some(),
        OptionKind::Int => value.trim().parse::<i32>().is_ok(),
        OptionKind::Float => value.trim().parse::<f64>().is_ok(),
        OptionKind::String => true,
    };
    if ok {
        Ok(())
    } else {
        Err(match kind {
            OptionKind::Bool => "true or false",
            OptionKind::Int => "an integer",
            OptionKind::Float => "a number",
            OptionKind::String => "text",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parser() -> ParseOptions {
        let mut po = ParseOptions::new("Usage: t <a> <b>\n");
        po.register("binary", OptionKind::Bool, "true", "binary output");
        po.register("scale", OptionKind::Float, "1.0", "scale");
        po.register("compression-method", OptionKind::Int, "1", "method");
        po.register("spk2utt", OptionKind::String, "", "map");
        po
    }

    fn read(po: &mut ParseOptions, args: &[&str]) -> Result<Parsed, String> {
        po.read(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn options_as_kaldi_reads_them() {
        let mut po = parser();
        let parsed = read(
            &mut po,
            &[
                "--binary=F",
                "--compression_method=3",
                "--spk2utt=ark:s",
                "a",
                "--scale=2",
                "b",
            ],
        )
        .unwrap();
        // options stop at the first positional argument, as in Kaldi
        assert_eq!(
            parsed,
            Parsed::Args(vec!["a".into(), "--scale=2".into(), "b".into()])
        );
        assert!(!po.get_bool("binary"));
        assert_eq!(po.get_i32("compression-method"), 3);
        assert_eq!(po.get_string("spk2utt"), "ark:s");
        assert_eq!(po.get_f64("scale"), 1.0);
        let mut po = parser();
        assert_eq!(
            read(&mut po, &["--binary", "--", "--x", "--", "y"]).unwrap(),
            Parsed::Args(vec!["--x".into(), "--".into(), "y".into()])
        );
        assert!(po.get_bool("binary"));
        assert!(po.print_args());
        let mut po = parser();
        assert_eq!(read(&mut po, &["--help", "a"]).unwrap(), Parsed::Help);
        assert!(po
            .usage()
            .contains("  --binary                   : binary output (bool, default = true)"));
    }

    #[test]
    fn bad_options_are_named() {
        let check = |args: &[&str], want: &str| {
            assert_eq!(read(&mut parser(), args).unwrap_err(), want, "{args:?}");
        };
        check(&["--nope=1", "a"], "invalid option --nope");
        check(
            &["--binary=yes"],
            "invalid value \"yes\" for --binary (expected true or false)",
        );
        check(
            &["--scale=x"],
            "invalid value \"x\" for --scale (expected a number)",
        );
        check(
            &["--compression-method=1.5"],
            "invalid value \"1.5\" for --compression-method (expected an integer)",
        );
        check(
            &["--scale"],
            "invalid option --scale (option format is --scale=value)",
        );
        check(&["--=3"], "invalid option \"--=3\"");
    }

    #[test]
    fn config_files_come_first_and_the_command_line_wins() {
        let dir = std::env::temp_dir().join(format!("kaldi-io-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let conf = dir.join("a.conf");
        std::fs::write(&conf, "# comment\n--scale=3 # three\n--binary=false\n\n").unwrap();
        let mut po = parser();
        let config = format!("--config={}", conf.display());
        read(&mut po, &["--scale=4", &config, "x"]).unwrap();
        assert_eq!(po.get_f64("scale"), 4.0);
        assert!(!po.get_bool("binary"));
        std::fs::write(&conf, "--scale=3\nscale=4\n").unwrap();
        let err = read(&mut parser(), &[&config]).unwrap_err();
        assert!(
            err.ends_with("line 2: \"scale=4\" is not of the form --name=value"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
