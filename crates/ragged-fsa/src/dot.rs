//! Graphviz output in the style of k2's `to_dot`/`draw`: states as circles (the final one
//! double-circled), arcs labelled `label/score` or `label:aux/score`.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::attr::{Attr, AUX_LABELS};
use crate::fsa::Fsa;
use crate::symbol_table::SymbolTable;
use crate::text::ShortScore;

fn label_text(label: String, aux: Option<String>, score: f32) -> String {
    let score = ShortScore(score);
    match aux {
        Some(aux) => format!("{label}:{aux}/{score}"),
        None => format!("{label}/{score}"),
    }
}

/// A label through a table (quotes escaped for dot), or as a number when it has no entry.
fn name_in(symbols: Option<&SymbolTable>, label: i32) -> String {
    symbols
        .and_then(|table| table.symbol(label))
        .map_or_else(|| label.to_string(), |s| s.replace('"', "\\\""))
}

impl Fsa {
    /// The FSA in Graphviz's dot language, drawn left to right like k2's `to_dot`: the start
    /// state bold, the final state a double circle, each arc labelled `label/score` (or
    /// `label:aux_label/score` for a transducer; ragged aux labels as `a b c`, `<eps>` when
    /// empty). Scores are printed in the shortest form that reads back to the same `f32`
    /// (`-4.440892e-16`, `0.5`).
    #[doc(alias = "draw")]
    #[doc(alias = "to_graphviz")]
    pub fn to_dot(&self, title: &str) -> String {
        self.dot_with(title, &|label| label.to_string(), &|label| {
            label.to_string()
        })
    }

    /// [`Fsa::to_dot`] with labels and aux labels shown through one id -> symbol map;
    /// labels missing from it are shown as numbers. For a transducer whose labels and aux
    /// labels are numbered by different tables (phones and words), use
    /// [`Fsa::to_dot_with_symbol_tables`].
    pub fn to_dot_with_symbols(&self, title: &str, symbols: &HashMap<i32, String>) -> String {
        let name = |label: i32| {
            symbols
                .get(&label)
                .map(|s| s.replace('"', "\\\""))
                .unwrap_or_else(|| label.to_string())
        };
        self.dot_with(title, &name, &name)
    }

    /// [`Fsa::to_dot`] with labels shown through `labels_sym` and aux labels through
    /// `aux_labels_sym` (k2's `fsa.labels_sym` and `fsa.aux_labels_sym`, which `fsa.draw`
    /// uses): phones and words each by their own table. `None`, or a label missing from
    /// its table, shows the number.
    ///
    /// ```
    /// use ragged_fsa::{Fsa, SymbolTable, TextFormat};
    ///
    /// let phones: SymbolTable = "<eps> 0\nk 1\nae 2\nt 3\n".parse().unwrap();
    /// let words: SymbolTable = "<eps> 0\ncat 1\n".parse().unwrap();
    /// let lexicon = Fsa::from_text(
    ///     "0 1 1 1 0\n1 2 2 0 0\n2 3 3 0 0\n3 4 -1 -1 0\n4\n",
    ///     &TextFormat::transducer(),
    /// )
    /// .unwrap();
    /// let dot = lexicon.to_dot_with_symbol_tables("L", Some(&phones), Some(&words));
    /// assert!(dot.contains("0 -> 1 [label = \"k:cat/0\""));
    /// assert!(dot.contains("1 -> 2 [label = \"ae:<eps>/0\""));
    /// assert!(dot.contains("3 -> 4 [label = \"-1:-1/0\""));
    /// ```
    #[doc(alias = "draw")]
    #[doc(alias = "labels_sym")]
    #[doc(alias = "aux_labels_sym")]
    pub fn to_dot_with_symbol_tables(
        &self,
        title: &str,
        labels_sym: Option<&SymbolTable>,
        aux_labels_sym: Option<&SymbolTable>,
    ) -> String {
        self.dot_with(title, &|label| name_in(labels_sym, label), &|label| {
            name_in(aux_labels_sym, label)
        })
    }

    fn dot_with(
        &self,
        title: &str,
        label_name: &dyn Fn(i32) -> String,
        aux_name: &dyn Fn(i32) -> String,
    ) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "digraph FSA {{");
        let _ = writeln!(out, "  rankdir = LR;");
        let _ = writeln!(out, "  label = \"{}\";", title.replace('"', "\\\""));
        let _ = writeln!(out, "  center = 1;");
        let _ = writeln!(out, "  ranksep = \"0.4\";");
        let _ = writeln!(out, "  nodesep = \"0.25\";");
        let n = self.num_states();
        for state in 0..n {
            let shape = if state + 1 == n {
                "doublecircle"
            } else {
                "circle"
            };
            let style = if state == 0 { ", style = bold" } else { "" };
            let _ = writeln!(
                out,
                "  {state} [label = \"{state}\", shape = {shape}{style}, fontsize = 14]"
            );
        }
        let aux = self.attr(AUX_LABELS);
        for (i, arc) in self.arcs().values().iter().enumerate() {
            let aux_text = match aux {
                Some(Attr::I32(v)) => Some(aux_name(v[i])),
                Some(Attr::Ragged(r)) => {
                    let splits = r.shape().row_splits(1);
                    let list = &r.values()[splits[i] as usize..splits[i + 1] as usize];
                    Some(if list.is_empty() {
                        "<eps>".to_string()
                    } else {
                        list.iter()
                            .map(|&v| aux_name(v))
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                }
                _ => None,
            };
            let _ = writeln!(
                out,
                "  {} -> {} [label = \"{}\", fontsize = 14];",
                arc.src_state,
                arc.dest_state,
                label_text(label_name(arc.label), aux_text, arc.score)
            );
        }
        out.push_str("}\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::Fsa;

    #[test]
    fn dot_marks_start_and_final_states() {
        let fsa: Fsa = "0 1 10 0.1\n0 2 20 0.2\n1 2 -1 0.5\n2\n".parse().unwrap();
        let dot = fsa.to_dot("simple");
        assert!(dot.starts_with("digraph FSA {\n  rankdir = LR;\n  label = \"simple\";"));
        assert!(dot.contains("  0 [label = \"0\", shape = circle, style = bold, fontsize = 14]"));
        assert!(dot.contains("  2 [label = \"2\", shape = doublecircle, fontsize = 14]"));
        assert!(dot.contains("  0 -> 1 [label = \"10/0.1\", fontsize = 14];"));
        assert!(dot.contains("  1 -> 2 [label = \"-1/0.5\", fontsize = 14];"));
        assert!(dot.ends_with("}\n"));
        let symbols = std::collections::HashMap::from([(10, "a\"b".to_string())]);
        let named = fsa.to_dot_with_symbols("t", &symbols);
        assert!(named.contains("  0 -> 1 [label = \"a\\\"b/0.1\", fontsize = 14];"));
        assert!(named.contains("  0 -> 2 [label = \"20/0.2\""));
    }

    #[test]
    fn dot_shows_plain_and_ragged_aux_labels() {
        use crate::{Attr, TextFormat};
        let fst =
            Fsa::from_text("0 1 1 7 0.5\n1 2 -1 -1 0\n2\n", &TextFormat::transducer()).unwrap();
        let dot = fst.to_dot("fst");
        assert!(dot.contains("  0 -> 1 [label = \"1:7/0.5\", fontsize = 14];"));
        assert!(dot.contains("  1 -> 2 [label = \"-1:-1/0\", fontsize = 14];"));
        let ragged = ragged_core::Ragged::from_nested(vec![vec![7, 8], vec![]]).unwrap();
        let lexicon = fst.with_attr("aux_labels", Attr::Ragged(ragged)).unwrap();
        let dot = lexicon.to_dot("lexicon");
        assert!(dot.contains("  0 -> 1 [label = \"1:7 8/0.5\", fontsize = 14];"));
        assert!(dot.contains("  1 -> 2 [label = \"-1:<eps>/0\", fontsize = 14];"));
    }

    #[test]
    fn dot_draws_labels_and_aux_labels_through_their_own_tables() {
        use crate::{Attr, SymbolTable, TextFormat};
        // phone 1 is "k", word 1 is "cat": one table for both would draw "k:k"
        let phones: SymbolTable = "<eps> 0\nk 1\nae 2\n".parse().unwrap();
        let words: SymbolTable = "<eps> 0\ncat 1\nca\"t 2\n".parse().unwrap();
        let fst = Fsa::from_text(
            "0 1 1 1 0.5\n1 2 2 2 0\n2 3 7 9 0\n3 4 -1 -1 0\n4\n",
            &TextFormat::transducer(),
        )
        .unwrap();
        let dot = fst.to_dot_with_symbol_tables("L", Some(&phones), Some(&words));
        let arcs: Vec<&str> = dot.lines().filter(|l| l.contains("->")).collect();
        assert_eq!(
            arcs,
            [
                "  0 -> 1 [label = \"k:cat/0.5\", fontsize = 14];",
                "  1 -> 2 [label = \"ae:ca\\\"t/0\", fontsize = 14];",
                "  2 -> 3 [label = \"7:9/0\", fontsize = 14];",
                "  3 -> 4 [label = \"-1:-1/0\", fontsize = 14];",
            ]
        );
        // no tables: the plain drawing; one side only: the other as numbers
        assert_eq!(
            fst.to_dot_with_symbol_tables("L", None, None),
            fst.to_dot("L")
        );
        let words_only = fst.to_dot_with_symbol_tables("L", None, Some(&words));
        assert!(words_only.contains("  0 -> 1 [label = \"1:cat/0.5\""));
        // ragged aux labels, each value through the word table
        let ragged =
            ragged_core::Ragged::from_nested(vec![vec![1, 2], vec![], vec![1], vec![]]).unwrap();
        let lexicon = fst
            .clone()
            .with_attr("aux_labels", Attr::Ragged(ragged))
            .unwrap();
        let dot = lexicon.to_dot_with_symbol_tables("L", Some(&phones), Some(&words));
        assert!(
            dot.contains("  0 -> 1 [label = \"k:cat ca\\\"t/0.5\""),
            "{dot}"
        );
        assert!(dot.contains("  1 -> 2 [label = \"ae:<eps>/0\""), "{dot}");
        // the one-map call is unchanged: both columns through the same map
        let one = fst.to_dot_with_symbols("L", &phones.to_map());
        assert!(one.contains("  0 -> 1 [label = \"k:k/0.5\""), "{one}");
    }

    #[test]
    fn dot_prints_scores_in_the_shortest_form_that_reads_back() {
        let tiny = -4.440_892e-16_f32;
        let arcs = vec![
            crate::Arc::new(0, 1, 3, tiny),
            crate::Arc::new(0, 1, 4, 0.25),
            crate::Arc::new(1, 2, -1, -1e20),
        ];
        let fsa = Fsa::from_arcs(arcs.clone(), 3).unwrap();
        let dot = fsa.to_dot("scores");
        assert!(
            dot.contains("  0 -> 1 [label = \"3/-4.440892e-16\", fontsize = 14];"),
            "{dot}"
        );
        assert!(
            dot.contains("  0 -> 1 [label = \"4/0.25\", fontsize = 14];"),
            "{dot}"
        );
        assert!(
            dot.contains("  1 -> 2 [label = \"-1/-1e20\", fontsize = 14];"),
            "{dot}"
        );
        // each printed score reads back to the arc's score, bit for bit
        let printed: Vec<f32> = dot
            .lines()
            .filter(|l| l.contains("->"))
            .map(|l| {
                let label = l.split('"').nth(1).unwrap();
                label.rsplit('/').next().unwrap().parse().unwrap()
            })
            .collect();
        let want: Vec<u32> = arcs.iter().map(|a| a.score.to_bits()).collect();
        assert_eq!(
            printed.iter().map(|s| s.to_bits()).collect::<Vec<_>>(),
            want
        );
        // the text formats print the same way and read back the same FSA
        let text = fsa.to_string();
        assert!(text.contains("0 1 3 -4.440892e-16\n"), "{text}");
        assert_eq!(text.parse::<Fsa>().unwrap(), fsa);
        let openfst = fsa.to_openfst().unwrap();
        assert!(openfst.contains("0 1 3 4.440892e-16\n"), "{openfst}");
        assert_eq!(Fsa::from_openfst(&openfst, true).unwrap(), fsa);
    }
}
