//! Histograms as standalone SVG files (`check --plot DIR`): a plain bar
//! chart any browser or document tool shows, with no plotting library.

use std::fmt::Write as _;
use std::path::Path;

use crate::summary::Summary;

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 400.0;
const MARGIN: f64 = 60.0;

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A bar chart of `bars` (label, value) with axis titles.
pub fn bar_chart(title: &str, x_title: &str, y_title: &str, bars: &[(String, u64)]) -> String {
    let max = bars.iter().map(|b| b.1).max().unwrap_or(0).max(1) as f64;
    let plot_w = WIDTH - 2.0 * MARGIN;
    let plot_h = HEIGHT - 2.0 * MARGIN;
    let slot = plot_w / bars.len().max(1) as f64;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="15">{}</text>"#,
        WIDTH / 2.0,
        escape(title)
    );
    let (x0, y0) = (MARGIN, HEIGHT - MARGIN);
    let _ = writeln!(
        svg,
        r#"<line x1="{x0}" y1="{y0}" x2="{}" y2="{y0}" stroke="black"/>"#,
        WIDTH - MARGIN
    );
    let _ = writeln!(
        svg,
        r#"<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{MARGIN}" stroke="black"/>"#
    );
    for (i, (label, value)) in bars.iter().enumerate() {
        let h = *value as f64 / max * plot_h;
        let x = x0 + i as f64 * slot;
        let _ = writeln!(
            svg,
            r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="#4a7ab5"><title>{}: {value}</title></rect>"##,
            x + slot * 0.1,
            y0 - h,
            slot * 0.8,
            escape(label)
        );
        // Label every bar when they fit, else about ten of them.
        let step = bars.len().div_ceil(12).max(1);
        if i % step == 0 {
            let _ = writeln!(
                svg,
                r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
                x + slot / 2.0,
                y0 + 16.0,
                escape(label)
            );
        }
    }
    let _ = writeln!(
        svg,
        r#"<text x="{x0}" y="{}" text-anchor="end" dx="-4">{}</text>"#,
        MARGIN + 4.0,
        max as u64
    );
    let _ = writeln!(
        svg,
        r#"<text x="{x0}" y="{y0}" text-anchor="end" dx="-4">0</text>"#
    );
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        WIDTH / 2.0,
        HEIGHT - 16.0,
        escape(x_title)
    );
    let _ = writeln!(
        svg,
        r#"<text x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">{}</text>"#,
        HEIGHT / 2.0,
        HEIGHT / 2.0,
        escape(y_title)
    );
    svg.push_str("</svg>\n");
    svg
}

/// Writes hops.svg and link-load.svg into `dir`; returns their paths.
pub fn write_histograms(summary: &Summary, dir: &Path) -> Result<Vec<String>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let hops: Vec<(String, u64)> = summary
        .hops
        .iter()
        .map(|(h, n)| (h.to_string(), *n))
        .collect();
    let loads: Vec<(String, u64)> = summary
        .link_load_buckets(30)
        .into_iter()
        .map(|(lo, hi, n)| {
            (
                if lo == hi {
                    lo.to_string()
                } else {
                    format!("{lo}-{hi}")
                },
                n as u64,
            )
        })
        .collect();
    let charts = [
        (
            "hops.svg",
            bar_chart("Inter-switch hops per route", "hops", "routes", &hops),
        ),
        (
            "link-load.svg",
            bar_chart(
                "Routes per inter-switch channel",
                "routes on the channel",
                "channels",
                &loads,
            ),
        ),
    ];
    let mut written = Vec::new();
    for (name, svg) in charts {
        let path = dir.join(name);
        std::fs::write(&path, svg).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push(path.display().to_string());
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_to_the_largest_value() {
        let svg = bar_chart("t", "x", "y", &[("1".into(), 10), ("2".into(), 5)]);
        assert!(svg.starts_with("<svg"));
        assert_eq!(svg.matches("<rect x=").count(), 2);
        assert!(
            svg.contains(r#"height="280.0""#),
            "the larger bar fills the plot: {svg}"
        );
        assert!(svg.contains(r#"height="140.0""#));
        assert!(bar_chart("a<b", "x", "y", &[]).contains("a&lt;b"));
    }
}
