//! `SymbolTable`: the `words.txt` / `tokens.txt` files of k2 and OpenFst (one `symbol id`
//! per line), both ways, for printing FSAs with names.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
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
        let mut numeric = String::with_capacity(s.len());
        for (k, line) in s.lines().enumerate() {
            let mut fields: Vec<String> = line.split_whitespace().map(str::to_string).collect();
            if fields.len() > 2 {
                for (&column, (table, which)) in columns
                    .iter()
                    .zip([(isymbols, "input"), (osymbols, "output")])
                {
                    let Some(name) = fields.get(column) else {
                        continue; // too few fields: the numeric parser names the problem
                    };
                    let id = table.id(name).ok_or_else(|| Error::Parse {
                        line: k + 1,
                        problem: ParseProblem::UnknownSymbol {
                            symbol: name.clone(),
                            table: which,
                        },
                    })?;
                    fields[column] = id.to_string();
                }
            }
            numeric.push_str(&fields.join(" "));
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
