//! `SymbolTable`: the `words.txt` / `tokens.txt` files of k2 and OpenFst (one `symbol id`
//! per line), both ways, for printing FSAs with names.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fmt::Write as _;
use std::path::Path;
use std::str::FromStr;

use crate::error::{Error, ParseProblem};
use crate::fsa::Fsa;

/// A two-way map between symbols and integer ids (k2's `SymbolTable`, OpenFst's text symbol
/// tables). Ids are `i32`, as labels are; each symbol and each id appears once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SymbolTable {
    by_id: BTreeMap<i32, String>,
    by_symbol: HashMap<String, i32>,
}

impl SymbolTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `symbol` with `id`; a symbol or id already present is an error
    /// ([`ParseProblem::DuplicateSymbol`] at line 0).
    pub fn add_with_id(&mut self, symbol: &str, id: i32) -> Result<(), Error> {
        if self.by_symbol.contains_key(symbol) || self.by_id.contains_key(&id) {
            return Err(Error::Parse {
                line: 0,
                problem: ParseProblem::DuplicateSymbol {
                    symbol: symbol.to_string(),
                    id: id as i64,
                },
            });
        }
        self.by_symbol.insert(symbol.to_string(), id);
        self.by_id.insert(id, symbol.to_string());
        Ok(())
    }

    /// Adds `symbol` with the next free id (one past the largest, 0 for an empty table),
    /// or returns its id if present (k2's `SymbolTable.add`).
    pub fn add(&mut self, symbol: &str) -> i32 {
        if let Some(&id) = self.by_symbol.get(symbol) {
            return id;
        }
        let id = self.by_id.keys().next_back().map_or(0, |&m| m + 1);
        self.by_symbol.insert(symbol.to_string(), id);
        self.by_id.insert(id, symbol.to_string());
        id
    }

    /// The id of `symbol`.
    pub fn id(&self, symbol: &str) -> Option<i32> {
        self.by_symbol.get(symbol).copied()
    }

    /// The symbol of `id`.
    pub fn symbol(&self, id: i32) -> Option<&str> {
        self.by_id.get(&id).map(String::as_str)
    }

    /// The number of symbols.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// Reads a `words.txt` / `tokens.txt` / `phones.txt` file (k2's
    /// `SymbolTable.from_file`, OpenFst's `SymbolTable::ReadText`): one `symbol id` per line,
    /// blank lines skipped. A malformed line is [`Error::InFile`] naming the file, around
    /// the [`Error::Parse`] with the line; a file that cannot be read, or is not UTF-8, is
    /// [`Error::File`].
    ///
    /// ```
    /// use ragged_fsa::SymbolTable;
    ///
    /// let path = std::env::temp_dir().join(format!("words-{}.txt", std::process::id()));
    /// std::fs::write(&path, "<eps> 0\nHELLO 1\nWORLD 2\n#0 3\n").unwrap();
    /// let words = SymbolTable::from_file(&path).unwrap();
    /// assert_eq!(words.id("#0"), Some(3));
    /// std::fs::write(&path, "<eps> 0\nHELLO one\n").unwrap();
    /// let err = SymbolTable::from_file(&path).unwrap_err().to_string();
    /// assert!(err.ends_with("words-{}.txt: line 2: cannot read symbol id from \"one\""
    ///     .replace("{}", &std::process::id().to_string()).as_str()), "{err}");
    /// # std::fs::remove_file(&path).unwrap();
    /// ```
    #[doc(alias = "read_text")]
    #[doc(alias = "ReadText")]
    #[doc(alias = "load")]
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|err| Error::File {
            path: shown.clone(),
            message: err.to_string(),
        })?;
        let text = std::str::from_utf8(&bytes).map_err(|err| {
            let line = bytes[..err.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            Error::File {
                path: shown.clone(),
                message: format!("line {line} is not UTF-8 text"),
            }
        })?;
        text.parse().map_err(|err| Error::InFile {
            path: shown,
            source: Box::new(err),
        })
    }

    /// Writes the table as `symbol id` lines in id order (k2's `SymbolTable.to_file`,
    /// OpenFst's `WriteText`), what [`SymbolTable::from_file`] reads. A failure is
    /// [`Error::File`] naming the file.
    #[doc(alias = "write_text")]
    #[doc(alias = "WriteText")]
    #[doc(alias = "save")]
    pub fn to_file(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path.as_ref();
        std::fs::write(path, self.to_string()).map_err(|err| Error::File {
            path: path.display().to_string(),
            message: err.to_string(),
        })
    }

    /// The id -> symbol map that [`Fsa::to_dot_with_symbols`](crate::Fsa::to_dot_with_symbols)
    /// takes.
    pub fn to_map(&self) -> HashMap<i32, String> {
        self.by_id.iter().map(|(&k, v)| (k, v.clone())).collect()
    }
}

impl Fsa {
    /// OpenFst text with label names, as `fstprint --isymbols=.. --osymbols=..` prints it:
    /// input labels through `isymbols`, output labels (a transducer's plain `aux_labels`)
    /// through `osymbols` (or `isymbols` when `None`). A label missing from its table is
    /// [`ParseProblem::UnknownSymbol`], with the text line it would have been printed on.
    pub fn to_openfst_with_symbols(
        &self,
        isymbols: &SymbolTable,
        osymbols: Option<&SymbolTable>,
    ) -> Result<String, Error> {
        let numeric = self.to_openfst()?;
        let osymbols = osymbols.unwrap_or(isymbols);
        let columns = label_columns(self);
        let mut out = String::with_capacity(numeric.len());
        for (k, line) in numeric.lines().enumerate() {
            let mut fields: Vec<&str> = line.split_whitespace().collect();
            let mut names = Vec::with_capacity(columns.len());
            if fields.len() > 2 {
                for (column, table, which) in
                    columns
                        .iter()
                        .zip([isymbols, osymbols])
                        .map(|(&column, table)| {
                            (column, table, if column == 2 { "input" } else { "output" })
                        })
                {
                    let id: i32 = fields[column].parse().map_err(|_| Error::Parse {
                        line: k + 1,
                        problem: ParseProblem::BadNumber {
                            token: fields[column].to_string(),
                            field: "label",
                        },
                    })?;
                    let name = table.symbol(id).ok_or_else(|| Error::Parse {
                        line: k + 1,
                        problem: ParseProblem::UnknownSymbol {
                            symbol: id.to_string(),
                            table: which,
                        },
                    })?;
                    names.push((column, name));
                }
            }
            for (column, name) in names {
                fields[column] = name;
            }
            out.push_str(&fields.join(" "));
            out.push('\n');
        }
        Ok(out)
    }

    /// Reads OpenFst text whose labels are names (what [`Fsa::to_openfst_with_symbols`] and
    /// `fstprint` with symbol tables write): input labels through `isymbols`, output labels of
    /// a transducer (`acceptor == false`) through `osymbols` (or `isymbols` when `None`). A
    /// name missing from its table is [`ParseProblem::UnknownSymbol`] at its line.
    pub fn from_openfst_with_symbols(
        s: &str,
        acceptor: bool,
        isymbols: &SymbolTable,
        osymbols: Option<&SymbolTable>,
    ) -> Result<Fsa, Error> {
        let osymbols = osymbols.unwrap_or(isymbols);
        let columns: &[usize] = if acceptor { &[2] } else { &[2, 3] };
        // the numeric text, line for line: fields joined by one space, the label columns'
        // names replaced by their ids (one fields buffer for all lines)
        let mut numeric = String::with_capacity(s.len());
        let mut fields: Vec<&str> = Vec::new();
        for (k, line) in s.lines().enumerate() {
            fields.clear();
            fields.extend(line.split_whitespace());
            let mut ids = [None; 2];
            if fields.len() > 2 {
                for ((id, &column), (table, which)) in ids
                    .iter_mut()
                    .zip(columns)
                    .zip([(isymbols, "input"), (osymbols, "output")])
                {
                    let Some(&name) = fields.get(column) else {
                        continue; // too few fields: the numeric parser names the problem
                    };
                    *id = Some(table.id(name).ok_or_else(|| Error::Parse {
                        line: k + 1,
                        problem: ParseProblem::UnknownSymbol {
                            symbol: name.to_string(),
                            table: which,
                        },
                    })?);
                }
            }
            for (j, field) in fields.iter().enumerate() {
                if j > 0 {
                    numeric.push(' ');
                }
                match columns.iter().position(|&c| c == j).and_then(|at| ids[at]) {
                    Some(id) => {
                        let _ = write!(numeric, "{id}");
                    }
                    None => numeric.push_str(field),
                }
            }
            numeric.push('\n');
        }
        Fsa::from_openfst(&numeric, acceptor)
    }
}

/// The columns of an OpenFst arc line that hold labels: the input label, and the output
/// label when the FSA is written as a transducer (it has plain `aux_labels`).
fn label_columns(fsa: &Fsa) -> &'static [usize] {
    match fsa.aux_labels() {
        Some(crate::attr::Attr::I32(_)) => &[2, 3],
        _ => &[2],
    }
}

impl FromStr for SymbolTable {
    type Err = Error;

    /// Reads `symbol id` lines (blank lines skipped; fields split on whitespace).
    fn from_str(s: &str) -> Result<Self, Error> {
        let mut table = SymbolTable::new();
        for (k, line) in s.lines().enumerate() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.is_empty() {
                continue;
            }
            let at = |problem| Error::Parse {
                line: k + 1,
                problem,
            };
            if fields.len() != 2 {
                return Err(at(ParseProblem::WrongFieldCount {
                    found: fields.len(),
                    expected: "2 (symbol id)".to_string(),
                }));
            }
            let id: i32 = fields[1].parse().map_err(|_| {
                at(ParseProblem::BadNumber {
                    token: fields[1].to_string(),
                    field: "symbol id",
                })
            })?;
            table.add_with_id(fields[0], id).map_err(|err| match err {
                Error::Parse { problem, .. } => at(problem),
                other => other,
            })?;
        }
        Ok(table)
    }
}

impl fmt::Display for SymbolTable {
    /// `symbol id` lines in id order, as k2 and OpenFst write them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (id, symbol) in &self.by_id {
            writeln!(f, "{symbol} {id}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_words_txt() {
        let text = "<eps> 0\na 1\nb 2\n\n#0 3\n";
        let table: SymbolTable = text.parse().unwrap();
        assert_eq!(table.len(), 4);
        assert_eq!(table.id("#0"), Some(3));
        assert_eq!(table.symbol(2), Some("b"));
        assert_eq!(table.to_string(), "<eps> 0\na 1\nb 2\n#0 3\n");
        let mut grown = table.clone();
        assert_eq!(grown.add("c"), 4);
        assert_eq!(grown.add("a"), 1);
        assert_eq!(grown.to_map()[&4], "c");
    }

    fn table(text: &str) -> SymbolTable {
        text.parse().unwrap()
    }

    #[test]
    fn openfst_text_with_names_both_ways() {
        // a transducer from words to their first letters; the weights are costs
        let phones = table("<eps> 0\nk 1\nae 2\nt 3\n");
        let words = table("<eps> 0\ncat 1\ncar 2\n");
        let named = "0 1 k cat 0.5\n1 2 ae <eps>\n2 3 t <eps>\n3\n";
        let numeric = "0 1 1 1 0.5\n1 2 2 0\n2 3 3 0\n3\n";
        let from_names = Fsa::from_openfst_with_symbols(named, false, &phones, Some(&words));
        let from_ids = Fsa::from_openfst(numeric, false).unwrap();
        assert_eq!(from_names.as_ref(), Ok(&from_ids));
        // printing gives back the names in the same places as the numeric text's ids
        let printed = from_ids
            .to_openfst_with_symbols(&phones, Some(&words))
            .unwrap();
        let expected: String = from_ids
            .to_openfst()
            .unwrap()
            .lines()
            .map(|line| {
                let mut f: Vec<String> = line.split_whitespace().map(String::from).collect();
                if f.len() > 2 {
                    f[2] = phones.symbol(f[2].parse().unwrap()).unwrap().to_string();
                    f[3] = words.symbol(f[3].parse().unwrap()).unwrap().to_string();
                }
                f.join(" ") + "\n"
            })
            .collect();
        assert_eq!(printed, expected);
        assert!(printed.starts_with("0 1 k cat"), "{printed}");
        // an acceptor uses one table
        let acceptor = Fsa::from_openfst_with_symbols("0 1 ae\n1\n", true, &phones, None).unwrap();
        assert_eq!(acceptor.labels(), vec![2, -1]);
        assert_eq!(
            acceptor.to_openfst_with_symbols(&phones, None).unwrap(),
            "0 1 ae\n1\n"
        );
    }

    #[test]
    fn unknown_symbols_name_the_line_and_table() {
        let phones = table("<eps> 0\nk 1\n");
        let err =
            Fsa::from_openfst_with_symbols("0 1 k\n1 2 zz\n2\n", true, &phones, None).unwrap_err();
        assert_eq!(
            err,
            Error::Parse {
                line: 2,
                problem: ParseProblem::UnknownSymbol {
                    symbol: "zz".into(),
                    table: "input"
                }
            }
        );
        let words = table("<eps> 0\n");
        let fst = Fsa::from_openfst("0 1 1 7\n1\n", false).unwrap();
        assert_eq!(
            fst.to_openfst_with_symbols(&phones, Some(&words))
                .unwrap_err(),
            Error::Parse {
                line: 1,
                problem: ParseProblem::UnknownSymbol {
                    symbol: "7".into(),
                    table: "output"
                }
            }
        );
    }

    #[test]
    fn files_both_ways_with_the_file_and_line_in_errors() {
        let dir = std::env::temp_dir().join(format!("ragged-fsa-symbols-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("words.txt");
        // Kaldi's words.txt: tabs or spaces, a blank line at the end
        std::fs::write(&path, "<eps>\t0\n!SIL 1\n<UNK>\t2\nA 3\n#0 4\n\n").unwrap();
        let table = SymbolTable::from_file(&path).unwrap();
        let by_hand: Vec<(i32, &str)> =
            vec![(0, "<eps>"), (1, "!SIL"), (2, "<UNK>"), (3, "A"), (4, "#0")];
        assert_eq!(table.len(), by_hand.len());
        for (id, symbol) in by_hand {
            assert_eq!(table.symbol(id), Some(symbol));
            assert_eq!(table.id(symbol), Some(id));
        }
        let copy = dir.join("copy.txt");
        table.to_file(&copy).unwrap();
        assert_eq!(
            std::fs::read_to_string(&copy).unwrap(),
            "<eps> 0\n!SIL 1\n<UNK> 2\nA 3\n#0 4\n"
        );
        assert_eq!(SymbolTable::from_file(&copy).unwrap(), table);

        let shown = path.display().to_string();
        std::fs::write(&path, "a 1\nb 2\nc 2\n").unwrap();
        let err = SymbolTable::from_file(&path).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("{shown}: line 3: symbol \"c\" or id 2 is already in the table").replace(
                "symbol \"c\" or id 2 is already in the table",
                &ParseProblem::DuplicateSymbol {
                    symbol: "c".into(),
                    id: 2
                }
                .to_string()
            )
        );
        assert!(
            matches!(&err, Error::InFile { source, .. } if matches!(**source, Error::Parse { line: 3, .. }))
        );
        assert!(std::error::Error::source(&err).is_some());
        std::fs::write(&path, b"a 1\nb\xff 2\n").unwrap();
        assert_eq!(
            SymbolTable::from_file(&path).unwrap_err().to_string(),
            format!("{shown}: line 2 is not UTF-8 text")
        );
        let missing = dir.join("missing.txt");
        let err = SymbolTable::from_file(&missing).unwrap_err();
        assert!(
            matches!(&err, Error::File { path, .. } if *path == missing.display().to_string()),
            "{err}"
        );
        let err = table
            .to_file(dir.join("no-such-dir").join("w.txt"))
            .unwrap_err();
        assert!(err.to_string().contains("no-such-dir"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_lines_name_the_line() {
        let err = "a 1\nb x\n".parse::<SymbolTable>().unwrap_err();
        assert_eq!(err.to_string(), "line 2: cannot read symbol id from \"x\"");
        let err = "a 1\nb 1\n".parse::<SymbolTable>().unwrap_err();
        assert_eq!(
            err,
            Error::Parse {
                line: 2,
                problem: ParseProblem::DuplicateSymbol {
                    symbol: "b".into(),
                    id: 1
                }
            }
        );
        assert!(matches!(
            "a 1 2\n".parse::<SymbolTable>(),
            Err(Error::Parse {
                line: 1,
                problem: ParseProblem::WrongFieldCount { found: 3, .. }
            })
        ));
    }
}
