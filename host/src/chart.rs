//! Charts as SVG or PNG with plotters: the format follows the file's extension. PNG text
//! needs a system font (fontconfig's `sans-serif`; Debian's `fonts-dejavu-core`, which
//! `test.sh` installs). Files are written atomically: drawn to a temporary file beside the
//! target, then renamed.

use crate::plot::Series;
use anyhow::{anyhow, bail, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

const COLORS: [RGBColor; 10] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x7f, 0x7f, 0x7f),
];

const SIZE: (u32, u32) = (900, 540);

/// Which axes are logarithmic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axes {
    Linear,
    LogLog,
}

pub struct LineChart<'a> {
    pub title: &'a str,
    pub xlabel: &'a str,
    pub ylabel: &'a str,
    pub series: &'a [Series],
    pub axes: Axes,
}

/// One bar per entry; `groups` are bars of one color (e.g. measured vs projected).
pub struct BarChart<'a> {
    pub title: &'a str,
    pub ylabel: &'a str,
    /// `(label, value, group)`.
    pub bars: &'a [(String, f64, usize)],
    pub group_names: &'a [&'a str],
    pub log_y: bool,
}

fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("drawing the chart failed: {e}")
}

/// Write a chart to `path` as SVG or PNG (by extension) through `draw`.
fn render(
    path: &Path,
    draw: impl Fn(&DrawingArea<SVGBackend, Shift>) -> Result<()>,
    draw_png: impl Fn(&DrawingArea<BitMapBackend, Shift>) -> Result<()>,
) -> Result<()> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if !matches!(ext.as_str(), "svg" | "png") {
        bail!("plot file {} must end in .svg or .png", path.display());
    }
    let tmp = edgeflow_flow::temp_beside(path, &ext)?;
    // made here so an unwritable place is reported in words; the backends' own I/O errors
    // come out as debug dumps
    if let Err(e) = std::fs::File::create(&tmp) {
        bail!(
            "cannot write {}: {}",
            path.display(),
            crate::paths::io_reason(&e)
        );
    }
    let result = match ext.as_str() {
        "svg" => {
            let root = SVGBackend::new(&tmp, SIZE).into_drawing_area();
            draw(&root).and_then(|_| root.present().map_err(err))
        }
        "png" => {
            let root = BitMapBackend::new(&tmp, SIZE).into_drawing_area();
            draw_png(&root).and_then(|_| root.present().map_err(err))
        }
        _ => unreachable!("the extension is checked above"),
    };
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e.context(format!("writing {}", path.display())));
    }
    edgeflow_flow::commit_temp(&tmp, path)
}

/// Whether a plot path asks for PNG.
pub fn is_png(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("png"))
}

pub fn line_chart(path: &Path, c: &LineChart) -> Result<()> {
    render(path, |r| draw_lines(r, c), |r| draw_lines(r, c))
}

pub fn bar_chart(path: &Path, c: &BarChart) -> Result<()> {
    render(path, |r| draw_bars(r, c), |r| draw_bars(r, c))
}

fn range(v: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = v
        .filter(|x| x.is_finite() && (!log || *x > 0.0))
        .fold((f64::MAX, f64::MIN), |a, x| (a.0.min(x), a.1.max(x)));
    if lo > hi {
        return if log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        lo /= 1.5;
        hi *= 1.5;
    } else {
        let pad = ((hi - lo) * 0.05).max(1e-9);
        lo -= pad;
        hi += pad;
    }
    (lo, hi)
}

fn draw_lines<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, c: &LineChart) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let log = c.axes == Axes::LogLog;
    let (x0, x1) = range(
        c.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)),
        log,
    );
    let (y0, y1) = range(
        c.series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        log,
    );
    // the legend gets its own column on the right, so it never hides a line
    let (plot_area, legend_area) = root.split_horizontally(SIZE.0 - 240);
    let mut b = ChartBuilder::on(&plot_area);
    b.caption(c.title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(80);
    for (i, s) in c.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let y = 60 + 22 * i as i32;
        legend_area
            .draw(&PathElement::new(
                vec![(4, y), (28, y)],
                color.stroke_width(3),
            ))
            .map_err(err)?;
        legend_area
            .draw(&Text::new(s.name.clone(), (34, y - 7), ("sans-serif", 13)))
            .map_err(err)?;
    }
    macro_rules! body {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc(c.xlabel)
                .y_desc(c.ylabel)
                .x_labels(10)
                .y_labels(10)
                .x_label_formatter(&|v| si(*v))
                .y_label_formatter(&|v| si(*v))
                .light_line_style(RGBColor(0xee, 0xee, 0xee))
                .label_style(("sans-serif", 13))
                .axis_desc_style(("sans-serif", 15))
                .draw()
                .map_err(err)?;
            for (i, s) in c.series.iter().enumerate() {
                let color = COLORS[i % COLORS.len()];
                let pts: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(|p| !log || (p.0 > 0.0 && p.1 > 0.0))
                    .collect();
                chart
                    .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                    .map_err(err)?;
                chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                    .map_err(err)?;
            }
        }};
    }
    if log {
        body!(b
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
            .map_err(err)?);
    } else {
        body!(b.build_cartesian_2d(x0..x1, y0..y1).map_err(err)?);
    }
    Ok(())
}

/// Resource utilisation: one horizontal bar per resource, percent of the part, with the
/// 100 % line; a bar past it is a resource the design overflows.
pub fn resource_chart(path: &Path, title: &str, rows: &[(String, f64, f64, f64)]) -> Result<()> {
    render(
        path,
        |r| draw_resources(r, title, rows),
        |r| draw_resources(r, title, rows),
    )
}

fn draw_resources<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    rows: &[(String, f64, f64, f64)],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let n = rows.len().max(1);
    let top = rows
        .iter()
        .map(|r| if r.1.is_finite() { r.1 } else { 100.0 })
        .fold(100.0, f64::max)
        * 1.25;
    let labels: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 18))
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(190)
        .build_cartesian_2d(0.0..top, -0.6..(n as f64 - 0.4))
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc("% of the part used")
        .x_label_formatter(&|v| si(*v))
        .y_labels(n)
        .y_label_formatter(&|v: &f64| {
            let i = (n as f64 - 1.0 - v).round();
            if (n as f64 - 1.0 - v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
                labels[i as usize].clone()
            } else {
                String::new()
            }
        })
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 15))
        .draw()
        .map_err(err)?;
    for (i, (_, pct, used, avail)) in rows.iter().enumerate() {
        let y = (n - 1 - i) as f64;
        let shown = if pct.is_finite() { *pct } else { top };
        let color = if *pct > 100.0 { COLORS[1] } else { COLORS[0] };
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(0.0, y - 0.35), (shown, y + 0.35)],
                color.filled(),
            )))
            .map_err(err)?;
        let text = if pct.is_finite() {
            format!(" {:.1}%  ({} of {})", pct, si(*used), si(*avail))
        } else {
            format!(" {} used, none available", si(*used))
        };
        chart
            .draw_series(std::iter::once(Text::new(
                text,
                (shown, y + 0.1),
                ("sans-serif", 13),
            )))
            .map_err(err)?;
    }
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(100.0, -0.6), (100.0, n as f64 - 0.4)],
            BLACK.stroke_width(2),
        )))
        .map_err(err)?;
    Ok(())
}

/// Horizontal bars, so long labels (backend, board @ clock) stay readable.
fn draw_bars<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, c: &BarChart) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let n = c.bars.len().max(1);
    let (mut x0, mut x1) = range(c.bars.iter().map(|b| b.1), c.log_y);
    if c.log_y {
        x1 *= 3.0; // room for the value labels
    } else {
        x0 = x0.min(0.0);
        x1 += (x1 - x0) * 0.15;
    }
    let labels: Vec<String> = c.bars.iter().map(|b| b.0.clone()).collect();
    // the legend gets its own strip under the chart, so it never hides a bar
    let (chart_area, legend_area) = root.split_vertically(SIZE.1 - 36);
    let mut x = 270;
    for (g, name) in c.group_names.iter().enumerate() {
        let color = COLORS[g % COLORS.len()];
        legend_area
            .draw(&Rectangle::new([(x, 10), (x + 14, 24)], color.filled()))
            .map_err(err)?;
        legend_area
            .draw(&Text::new(
                name.to_string(),
                (x + 20, 10),
                ("sans-serif", 13),
            ))
            .map_err(err)?;
        x += 30 + 7 * name.len() as i32;
    }
    let mut b = ChartBuilder::on(&chart_area);
    b.caption(c.title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(270);
    // bar i sits at y = n - 1 - i, so the first bar is on top
    let y_of = move |i: usize| (n - 1 - i) as f64;
    macro_rules! body {
        ($chart:expr, $base:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .disable_y_mesh()
                .x_desc(c.ylabel)
                .y_labels(n)
                .y_label_formatter(&|v: &f64| {
                    let i = (n as f64 - 1.0 - v).round();
                    if (n as f64 - 1.0 - v - i).abs() < 1e-6
                        && i >= 0.0
                        && (i as usize) < labels.len()
                    {
                        labels[i as usize].clone()
                    } else {
                        String::new()
                    }
                })
                .x_label_formatter(&|v| si(*v))
                .light_line_style(RGBColor(0xee, 0xee, 0xee))
                .label_style(("sans-serif", 13))
                .axis_desc_style(("sans-serif", 15))
                .draw()
                .map_err(err)?;
            for g in 0..c.group_names.len() {
                let color = COLORS[g % COLORS.len()];
                let bars: Vec<(f64, f64)> = c
                    .bars
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| b.2 == g && b.1 > 0.0)
                    .map(|(i, b)| (y_of(i), b.1))
                    .collect();
                chart
                    .draw_series(bars.iter().map(|&(y, v)| {
                        Rectangle::new([($base, y - 0.35), (v, y + 0.35)], color.filled())
                    }))
                    .map_err(err)?;
                chart
                    .draw_series(bars.iter().map(|&(y, v)| {
                        Text::new(format!(" {}", si(v)), (v, y + 0.15), ("sans-serif", 13))
                    }))
                    .map_err(err)?;
            }
        }};
    }
    let yr = -0.6..(n as f64 - 0.4);
    if c.log_y {
        body!(
            b.build_cartesian_2d((x0..x1).log_scale(), yr)
                .map_err(err)?,
            x0
        );
    } else {
        body!(b.build_cartesian_2d(x0..x1, yr).map_err(err)?, 0.0);
    }
    Ok(())
}

/// A number with an SI suffix: 16.6k, 2.94M.
pub fn si(v: f64) -> String {
    let a = v.abs();
    if a < 1.0 {
        let t = format!("{v:.4}");
        return t.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    let (d, suf) = if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let x = v / d;
    let digits = if x.abs() >= 100.0 || x.fract().abs() < 1e-9 {
        0
    } else if x.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{x:.digits$}{suf}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_svg_and_png_and_rejects_other_extensions() {
        let dir = std::env::temp_dir().join(format!("edgeflow-chart-{}", std::process::id()));
        let s = [Series {
            name: "a".into(),
            points: vec![(1.0, 10.0), (100.0, 1000.0)],
        }];
        let c = LineChart {
            title: "t",
            xlabel: "x",
            ylabel: "y",
            series: &s,
            axes: Axes::LogLog,
        };
        line_chart(&dir.join("l.svg"), &c).unwrap();
        assert!(std::fs::read_to_string(dir.join("l.svg"))
            .unwrap()
            .contains("<svg"));
        line_chart(&dir.join("l.png"), &c).unwrap();
        let png = std::fs::read(dir.join("l.png")).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        let bars = [("x".to_string(), 5.0, 0), ("y".to_string(), 50.0, 1)];
        let b = BarChart {
            title: "b",
            ylabel: "v",
            bars: &bars,
            group_names: &["m", "p"],
            log_y: true,
        };
        bar_chart(&dir.join("b.png"), &b).unwrap();
        let rows = [
            ("LUT (LUT4)".to_string(), 40.0, 2112.0, 5280.0),
            ("DSP (SB_MAC16)".to_string(), 125.0, 10.0, 8.0),
        ];
        resource_chart(&dir.join("r.svg"), "r", &rows).unwrap();
        let e = line_chart(&dir.join("l.pdf"), &c).unwrap_err().to_string();
        assert!(e.contains("must end in .svg or .png"), "{e}");
        // a write that fails (no files can be made in /proc): a sentence naming the chart's
        // path, not a debug dump or a temporary name
        for name in ["/proc/l.png", "/proc/l.svg"] {
            let e = format!("{:#}", line_chart(Path::new(name), &c).unwrap_err());
            assert!(e.contains(name), "{e}");
            for bad in [".tmp-", "Os {", "kind:", "BackendError"] {
                assert!(!e.contains(bad), "{e}");
            }
        }
        assert!(
            std::fs::read_dir(&dir).unwrap().all(|f| !f
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with('.')),
            "no temporary files left"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
