//! The ratio charts beside `docs/BENCHMARKS.md`: one SVG per machine section and crate,
//! a bar per table row (ours / peer, the median over the rounds) with its spread as a
//! whisker, a line at 1.0, a ratio axis with its tick values and a title. The SVG is
//! written by hand (a few rectangles, lines and texts) from the rows of the table itself,
//! so the charts and the table always show the same figures.

use std::fmt::Write as _;

/// The folder of the charts, beside the benchmarks document.
pub const CHART_DIR: &str = "bench-charts";

/// How a section's chart line begins (it is written again on every run).
const CHARTS_LINE: &str = "Charts (ours / peer; a bar is the median ratio, its whisker the \
spread over the rounds, below the 1.0 line we are faster):";

/// One bar: a table row that has a ratio.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// The crate the workload belongs to.
    pub krate: String,
    /// `workload vs peer`.
    pub label: String,
    /// The median ratio ours / peer.
    pub ratio: f64,
    /// The (lowest, highest) ratio of the rounds, when there were several.
    pub spread: Option<(f64, f64)>,
}

/// The bars of a section's table rows (`| crate | workload | ours | peer | peer time |
/// ratio | spread |`, or the older form without the spread); rows without a ratio (`—`)
/// have none.
pub fn bars_of(section: &str) -> Vec<Bar> {
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line
                .strip_prefix("| ")?
                .trim_end_matches(" |")
                .split(" | ")
                .collect();
            if cells.len() < 6 {
                return None;
            }
            let ratio: f64 = cells[5].parse().ok()?;
            let spread = cells.get(6).and_then(|text| {
                let range = text.split(',').next()?;
                let (low, high) = range.split_once('–')?;
                Some((low.trim().parse().ok()?, high.trim().parse().ok()?))
            });
            // the peer's name without its version: `k2 (k2 1.23.2)` -> `k2`
            let peer = cells[3].split(" (").next().unwrap_or(cells[3]);
            Some(Bar {
                krate: cells[0].to_string(),
                label: format!("{} vs {peer}", cells[1]),
                ratio,
                spread,
            })
        })
        .collect()
}

/// The file name of the chart of `krate` in the section headed `heading`: the CPU and
/// level of the heading in lower case, `-masked-avx2` for an emulated AVX2-only section.
pub fn chart_file(heading: &str, krate: &str) -> String {
    let title = heading
        .trim_start_matches("## ")
        .trim_start_matches("Machine: ");
    let (machine, masked) = match title.split_once(", AVX-512 masked") {
        Some((machine, _)) => (machine, "-masked-avx2"),
        None => (title, ""),
    };
    let mut slug = String::new();
    for c in machine.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    format!("{}{masked}-{krate}.svg", slug.trim_matches('-'))
}

/// A section's body with its chart line (re)written after its notes, and the charts it
/// links: (file name, SVG text), one per crate with a ratio.
pub fn with_charts(heading: &str, body: &str) -> (String, Vec<(String, String)>) {
    let mut kept: String = body
        .lines()
        .filter(|line| !line.starts_with(CHARTS_LINE))
        .map(|line| format!("{line}\n"))
        .collect();
    // the blank line that stood before the old chart line goes with it
    kept.truncate(kept.trim_end_matches('\n').len());
    kept.push('\n');
    let bars = bars_of(body);
    let mut crates: Vec<&str> = bars.iter().map(|bar| bar.krate.as_str()).collect();
    crates.dedup();
    let machine = heading
        .trim_start_matches("## ")
        .trim_start_matches("Machine: ");
    let mut charts = Vec::new();
    let mut links = Vec::new();
    for krate in crates {
        let of_crate: Vec<Bar> = bars.iter().filter(|b| b.krate == krate).cloned().collect();
        let file = chart_file(heading, krate);
        charts.push((
            file.clone(),
            svg(&format!("{krate}: ours / peer"), machine, &of_crate),
        ));
        links.push(format!("[{krate}]({CHART_DIR}/{file})"));
    }
    if !links.is_empty() {
        let _ = writeln!(kept, "\n{CHARTS_LINE} {}", links.join(", "));
    }
    (kept, charts)
}

/// A tick step of about a sixth of `span`: 1, 2, 2.5 or 5 times a power of ten.
fn tick_step(span: f64) -> f64 {
    let rough = span / 6.0;
    let power = 10f64.powf(rough.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|step| *step >= rough)
        .unwrap_or(10.0 * power)
}

/// Escapes text for SVG.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Horizontal geometry of a chart, in pixels.
const LEFT_PAD: f64 = 12.0;
const PLOT_WIDTH: f64 = 480.0;
const ROW: f64 = 18.0;
const BAR: f64 = 12.0;
const TOP: f64 = 58.0;
const BOTTOM: f64 = 46.0;
/// Width of a label character at font size 11 (sans-serif, generous).
const CHAR_WIDTH: f64 = 6.2;

/// The SVG of one chart: a horizontal bar per `bars` entry on a ratio axis from 0.
pub fn svg(title: &str, subtitle: &str, bars: &[Bar]) -> String {
    let longest = bars
        .iter()
        .map(|b| b.label.chars().count())
        .max()
        .unwrap_or(0);
    let left = LEFT_PAD + longest as f64 * CHAR_WIDTH + 8.0;
    let width = left + PLOT_WIDTH + 24.0;
    let plot_height = ROW * bars.len() as f64;
    let height = TOP + plot_height + BOTTOM;
    let highest = bars
        .iter()
        .map(|b| b.spread.map_or(b.ratio, |(_, high)| high.max(b.ratio)))
        .fold(1.0, f64::max);
    let step = tick_step(highest * 1.1);
    let axis_max = ((highest * 1.05) / step).ceil() * step;
    let x = |ratio: f64| left + ratio / axis_max * PLOT_WIDTH;

    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"sans-serif\" font-size=\"11\">"
    );
    let _ = writeln!(
        out,
        "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text class=\"title\" x=\"{LEFT_PAD}\" y=\"20\" font-size=\"15\" font-weight=\"bold\">{}</text>\n\
         <text x=\"{LEFT_PAD}\" y=\"38\" fill=\"#555\">{}</text>",
        xml(title),
        xml(subtitle)
    );
    // the ratio axis: grid lines and tick values
    let bottom = TOP + plot_height;
    let mut tick = 0.0;
    while tick <= axis_max + step * 1e-6 {
        let at = x(tick);
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{at:.1}\" y1=\"{TOP}\" x2=\"{at:.1}\" y2=\"{bottom}\" \
             stroke=\"#ddd\"/>\n<text class=\"tick\" x=\"{at:.1}\" y=\"{:.1}\" \
             text-anchor=\"middle\">{}</text>",
            bottom + 14.0,
            format_tick(tick)
        );
        tick += step;
    }
    let _ = writeln!(
        out,
        "<line x1=\"{left:.1}\" y1=\"{bottom}\" x2=\"{:.1}\" y2=\"{bottom}\" stroke=\"black\"/>\n\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">time ours / time peer (below 1.0: \
         ours faster)</text>",
        left + PLOT_WIDTH,
        left + PLOT_WIDTH / 2.0,
        bottom + 34.0
    );
    for (index, bar) in bars.iter().enumerate() {
        let top = TOP + ROW * index as f64 + (ROW - BAR) / 2.0;
        let middle = top + BAR / 2.0;
        // green: faster over every round; red: slower over every round; grey: not settled
        let (low, high) = bar.spread.unwrap_or((bar.ratio, bar.ratio));
        let fill = if high < 1.0 {
            "#4c9a5b"
        } else if low > 1.0 {
            "#c0504d"
        } else {
            "#999"
        };
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n\
             <rect class=\"bar\" x=\"{left:.1}\" y=\"{top:.1}\" width=\"{:.2}\" \
             height=\"{BAR}\" fill=\"{fill}\"><title>{}: {:.2}</title></rect>",
            left - 6.0,
            middle + 4.0,
            xml(&bar.label),
            bar.ratio / axis_max * PLOT_WIDTH,
            xml(&bar.label),
            bar.ratio
        );
        if let Some((low, high)) = bar.spread {
            let _ = writeln!(
                out,
                "<path class=\"spread\" d=\"M{:.1} {middle:.1}H{:.1}M{:.1} {:.1}V{:.1}M{:.1} \
                 {:.1}V{:.1}\" stroke=\"black\"/>",
                x(low),
                x(high),
                x(low),
                middle - 4.0,
                middle + 4.0,
                x(high),
                middle - 4.0,
                middle + 4.0
            );
        }
    }
    let one = x(1.0);
    let _ = writeln!(
        out,
        "<line class=\"one\" x1=\"{one:.1}\" y1=\"{:.1}\" x2=\"{one:.1}\" y2=\"{bottom}\" \
         stroke=\"black\" stroke-dasharray=\"4 3\"/>\n</svg>",
        TOP - 6.0
    );
    out
}

/// A tick value with no trailing zeros: `0`, `0.25`, `1.5`, `2`.
fn format_tick(value: f64) -> String {
    let text = format!("{value:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of attribute `name` in each element of `svg` of class `class`.
    fn attribute(svg: &str, class: &str, name: &str) -> Vec<f64> {
        svg.split('<')
            .filter(|element| element.contains(&format!("class=\"{class}\"")))
            .map(|element| {
                let start = element.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
                let rest = &element[start..];
                rest[..rest.find('"').unwrap()].parse().unwrap()
            })
            .collect()
    }

    #[test]
    fn a_bar_per_row_with_a_ratio_and_its_length_in_proportion() {
        let section = "- date: d\n\n\
            | crate | workload | ours | peer | peer time | ratio ours/peer | spread over rounds |\n\
            | --- | --- | ---: | --- | ---: | ---: | --- |\n\
            | fsa | w1 | 1 ms | k2 (k2 1.23.2) | 2 ms | 0.50 | 0.40–0.60 |\n\
            | fsa | w2 | 2 ms | torch | 1 ms | 2.00 | 0.90–2.40, *not settled* |\n\
            | fsa | alone | 1 ms | — | — | — | — |\n\
            | fsa | w3 | 1 ms | p | 1 ms | 1.00 | one round |\n";
        let bars = bars_of(section);
        assert_eq!(bars.len(), 3);
        assert_eq!(bars[0].label, "w1 vs k2");
        assert_eq!(bars[1].spread, Some((0.9, 2.4)));
        assert_eq!(bars[2].spread, None);
        let chart = svg("fsa: ours / peer", "Machine X", &bars);
        // 2.4 * 1.05 = 2.52 -> ticks every 0.5 to 3
        let widths = attribute(&chart, "bar", "width");
        assert_eq!(widths.len(), 3);
        for (width, ratio) in widths.iter().zip([0.5, 2.0, 1.0]) {
            assert!(
                (width - ratio / 3.0 * PLOT_WIDTH).abs() < 0.01,
                "{width} {ratio}"
            );
        }
        // the 1.0 line, where a bar of ratio 1.0 ends
        let bar_x = attribute(&chart, "bar", "x")[0];
        let one = attribute(&chart, "one", "x1");
        assert_eq!(one.len(), 1);
        assert!((one[0] - (bar_x + widths[2])).abs() < 0.1, "{one:?}");
        let ticks: Vec<&str> = chart
            .split("<text class=\"tick\"")
            .skip(1)
            .map(|t| &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()])
            .collect();
        assert_eq!(ticks, ["0", "0.5", "1", "1.5", "2", "2.5", "3"]);
        assert!(chart.contains(">fsa: ours / peer</text>"));
        assert_eq!(chart.matches("class=\"spread\"").count(), 2);
    }

    #[test]
    fn the_chart_line_is_written_once_per_run_and_names_each_crate() {
        let heading = "## Machine: AMD EPYC (family 25, model 17), x86-64-v4 (AVX-512)";
        let body = "| a | w | 1 s | p | 2 s | 0.50 | one round |\n\
                    | b | w | 1 s | p | 1 s | 1.00 | one round |\n\nNotes:\n\n- a note\n";
        let (once, charts) = with_charts(heading, body);
        let names: Vec<&str> = charts.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(
            names,
            [
                "amd-epyc-family-25-model-17-x86-64-v4-avx-512-a.svg",
                "amd-epyc-family-25-model-17-x86-64-v4-avx-512-b.svg"
            ]
        );
        assert!(once.contains(
            "[a](bench-charts/amd-epyc-family-25-model-17-x86-64-v4-avx-512-a.svg), [b]("
        ));
        let (twice, _) = with_charts(heading, &once);
        assert_eq!(twice, once);
        assert_eq!(
            chart_file(
                "## Machine: X, v4, AVX-512 masked to AVX2 on both sides",
                "c"
            ),
            "x-v4-masked-avx2-c.svg"
        );
    }

    #[test]
    fn tick_steps_are_round() {
        assert_eq!(tick_step(2.52), 0.5);
        assert_eq!(tick_step(1.1), 0.2);
        assert_eq!(tick_step(5.0), 1.0);
        assert_eq!(tick_step(12.0), 2.0);
        assert_eq!(tick_step(14.0), 2.5);
    }
}
