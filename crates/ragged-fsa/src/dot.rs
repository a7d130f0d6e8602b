//! Graphviz output in the style of k2's `to_dot`/`draw`: states as circles (the final one
//! double-circled), arcs labelled `label/score` or `label:aux/score`.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::attr::{Attr, AUX_LABELS};
use crate::fsa::Fsa;

fn label_text(label: String, aux: Option<String>, score: f32) -> String {
    match aux {
        Some(aux) => format!("{label}:{aux}/{score}"),
        None => format!("{label}/{score}"),
    }
}

impl Fsa {
    /// The FSA in Graphviz's dot language, drawn left to right like k2's `to_dot`: the start
    /// state bold, the final state a double circle, each arc labelled `label/score` (or
    /// `label:aux_label/score` for a transducer; ragged aux labels as `a b c`, `<eps>` when
    /// empty).
    pub fn to_dot(&self, title: &str) -> String {
        self.to_dot_with_symbols(title, &HashMap::new())
    }

    /// [`Fsa::to_dot`] with labels and aux labels shown through a symbol table (k2's
    /// `symbols`/`aux_symbols`); labels missing from the table are shown as numbers.
    pub fn to_dot_with_symbols(&self, title: &str, symbols: &HashMap<i32, String>) -> String {
        let name = |label: i32| {
            symbols
                .get(&label)
                .map(|s| s.replace('"', "\\\""))
                .unwrap_or_else(|| label.to_string())
        };
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
                Some(Attr::I32(v)) => Some(name(v[i])),
                Some(Attr::Ragged(r)) => {
                    let splits = r.shape().row_splits(1);
                    let list = &r.values()[splits[i] as usize..splits[i + 1] as usize];
                    Some(if list.is_empty() {
                        "<eps>".to_string()
                    } else {
                        list.iter().map(|&v| name(v)).collect::<Vec<_>>().join(" ")
                    })
                }
                _ => None,
            };
            let _ = writeln!(
                out,
                "  {} -> {} [label = \"{}\", fontsize = 14];",
                arc.src_state,
                arc.dest_state,
                label_text(name(arc.label), aux_text, arc.score)
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
}
