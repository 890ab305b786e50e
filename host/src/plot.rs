//! Line charts as self-contained SVG: no fonts or system libraries needed, so plots render
//! the same on a CI machine as on a laptop.

use anyhow::Result;
use std::fmt::Write;
use std::path::Path;

pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

fn nice_ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let span = (hi - lo).max(1e-12);
    let raw = span / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= n as f64)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut v = Vec::new();
    while t <= hi + step * 1e-9 {
        v.push(t);
        t += step;
    }
    v
}

fn fmt_tick(v: f64, log: bool) -> String {
    if log {
        let x = 10f64.powf(v);
        if x >= 1e4 || x < 1e-2 {
            format!("{x:.0e}")
        } else {
            format!("{x}")
        }
    } else if v.abs() >= 1e4 {
        format!("{v:.1e}")
    } else if v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// An SVG line chart; with `log_xy` both axes are log10.
pub fn line_chart(
    title: &str,
    xlabel: &str,
    ylabel: &str,
    series: &[Series],
    log_xy: bool,
) -> String {
    let (w, h, ml, mr, mt, mb) = (720.0, 440.0, 80.0, 170.0, 40.0, 60.0);
    let tf = |v: f64| if log_xy { v.max(1e-300).log10() } else { v };
    let pts: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|s| s.points.iter().map(|&(x, y)| (tf(x), tf(y))).collect())
        .collect();
    let all: Vec<(f64, f64)> = pts.iter().flatten().cloned().collect();
    let (mut x0, mut x1) = all
        .iter()
        .fold((f64::MAX, f64::MIN), |a, p| (a.0.min(p.0), a.1.max(p.0)));
    let (mut y0, mut y1) = all
        .iter()
        .fold((f64::MAX, f64::MIN), |a, p| (a.0.min(p.1), a.1.max(p.1)));
    if all.is_empty() {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if x1 - x0 < 1e-12 {
        x1 = x0 + 1.0;
    }
    let pad = ((y1 - y0) * 0.05).max(1e-9);
    y0 -= pad;
    y1 += pad;
    let px = |x: f64| ml + (x - x0) / (x1 - x0) * (w - ml - mr);
    let py = |y: f64| h - mb - (y - y0) / (y1 - y0) * (h - mt - mb);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/>"#
    );
    let _ = write!(
        s,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="15">{}</text>"#,
        (ml + w - mr) / 2.0,
        esc(title)
    );
    for t in nice_ticks(x0, x1, 8) {
        let x = px(t);
        let _ = write!(
            s,
            r##"<line x1="{x:.1}" y1="{mt}" x2="{x:.1}" y2="{:.1}" stroke="#e5e5e5"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            h - mb,
            h - mb + 16.0,
            fmt_tick(t, log_xy)
        );
    }
    for t in nice_ticks(y0, y1, 8) {
        let y = py(t);
        let _ = write!(
            s,
            r##"<line x1="{ml}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e5e5e5"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            w - mr,
            ml - 6.0,
            y + 4.0,
            fmt_tick(t, log_xy)
        );
    }
    let _ = write!(
        s,
        r#"<rect x="{ml}" y="{mt}" width="{}" height="{}" fill="none" stroke="black"/>"#,
        w - ml - mr,
        h - mt - mb
    );
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (ml + w - mr) / 2.0,
        h - 18.0,
        esc(xlabel)
    );
    let _ = write!(
        s,
        r#"<text transform="translate(18,{}) rotate(-90)" text-anchor="middle">{}</text>"#,
        (mt + h - mb) / 2.0,
        esc(ylabel)
    );
    for (i, (ser, p)) in series.iter().zip(&pts).enumerate() {
        let c = COLORS[i % COLORS.len()];
        let path: Vec<String> = p
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = write!(
            s,
            r#"<polyline fill="none" stroke="{c}" stroke-width="2" points="{}"/>"#,
            path.join(" ")
        );
        for &(x, y) in p {
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"/>"#,
                px(x),
                py(y)
            );
        }
        let ly = mt + 10.0 + 20.0 * i as f64;
        let _ = write!(
            s,
            r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{c}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
            w - mr + 10.0,
            w - mr + 30.0,
            w - mr + 36.0,
            ly + 4.0,
            esc(&ser.name)
        );
    }
    s.push_str("</svg>\n");
    s
}

fn esc(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

pub fn save(path: &Path, svg: &str) -> Result<()> {
    crate::util::write_atomic(path, svg.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_places_points_inside_the_frame() {
        let svg = line_chart(
            "t",
            "x",
            "y",
            &[Series {
                name: "a<b".into(),
                points: vec![(1.0, 10.0), (2.0, 20.0)],
            }],
            false,
        );
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert!(svg.contains("a&lt;b"));
        // first point at the left edge of the plot area, last at the right edge
        assert!(
            svg.contains(r#"cx="80.0""#) && svg.contains(r#"cx="550.0""#),
            "{svg}"
        );
    }
}
