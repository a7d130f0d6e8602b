//! `SymbolTable`: the `words.txt` / `tokens.txt` files of k2 and OpenFst (one `symbol id`
//! per line), both ways, for printing FSAs with names.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::str::FromStr;

use crate::error::{Error, ParseProblem};

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
