//! Charts as SVG or PNG with plotters: the format follows the file's extension. PNG text
//! needs a system font (fontconfig's `sans-serif`; Debian's `fonts-dejavu-core`, which
//! `test.sh` installs). Files are written atomically: drawn to a temporary file beside the
//! target, then renamed.

use crate::plot::Series;
use anyhow::{anyhow, bail, Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

const COLORS: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
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

fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("drawing the chart failed: {e:?}")
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
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create directory {}", dir.display()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}.{ext}", std::process::id()));
    let result = match ext.as_str() {
        "svg" => {
            let root = SVGBackend::new(&tmp, SIZE).into_drawing_area();
            draw(&root).and_then(|_| root.present().map_err(err))
        }
        "png" => {
            let root = BitMapBackend::new(&tmp, SIZE).into_drawing_area();
            draw_png(&root).and_then(|_| root.present().map_err(err))
        }
        _ => bail!("plot file {} must end in .svg or .png", path.display()),
    };
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e.context(format!("writing {}", path.display())));
    }
    std::fs::rename(&tmp, path).with_context(|| {
        format!(
            "cannot move {} into place as {}",
            tmp.display(),
            path.display()
        )
    })
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

fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1e-2..1e5).contains(&a) {
        format!("{v:.0e}")
    } else if v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
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
    let mut b = ChartBuilder::on(root);
    b.caption(c.title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(80);
    macro_rules! body {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc(c.xlabel)
                .y_desc(c.ylabel)
                .x_label_formatter(&|v| fmt_num(*v))
                .y_label_formatter(&|v| fmt_num(*v))
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
                    .map_err(err)?
                    .label(s.name.as_str())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(3))
                    });
                chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                    .map_err(err)?;
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 13))
                .draw()
                .map_err(err)?;
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

fn draw_bars<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, c: &BarChart) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let n = c.bars.len().max(1);
    let (mut y0, y1) = range(c.bars.iter().map(|b| b.1), c.log_y);
    if !c.log_y {
        y0 = y0.min(0.0);
    }
    let labels: Vec<String> = c.bars.iter().map(|b| b.0.clone()).collect();
    let mut b = ChartBuilder::on(root);
    b.caption(c.title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(150)
        .y_label_area_size(80);
    macro_rules! body {
        ($chart:expr, $base:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .y_desc(c.ylabel)
                .x_labels(n)
                .x_label_formatter(&|v: &f64| {
                    let i = v.round() as i64;
                    if (v - i as f64).abs() < 1e-6 && i >= 0 && (i as usize) < labels.len() {
                        labels[i as usize].clone()
                    } else {
                        String::new()
                    }
                })
                .y_label_formatter(&|v| fmt_num(*v))
                .x_label_style(
                    ("sans-serif", 12)
                        .into_font()
                        .transform(FontTransform::Rotate90),
                )
                .light_line_style(RGBColor(0xee, 0xee, 0xee))
                .axis_desc_style(("sans-serif", 15))
                .draw()
                .map_err(err)?;
            for (g, name) in c.group_names.iter().enumerate() {
                let color = COLORS[g % COLORS.len()];
                let bars: Vec<(f64, f64)> = c
                    .bars
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| b.2 == g && b.1 > 0.0)
                    .map(|(i, b)| (i as f64, b.1))
                    .collect();
                chart
                    .draw_series(bars.iter().map(|&(x, v)| {
                        Rectangle::new([(x - 0.35, $base), (x + 0.35, v)], color.filled())
                    }))
                    .map_err(err)?
                    .label(*name)
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled())
                    });
                chart
                    .draw_series(
                        bars.iter()
                            .map(|&(x, v)| Text::new(fmt_num(v), (x - 0.3, v), ("sans-serif", 11))),
                    )
                    .map_err(err)?;
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 13))
                .draw()
                .map_err(err)?;
        }};
    }
    let xr = -0.6..(n as f64 - 0.4);
    if c.log_y {
        body!(
            b.build_cartesian_2d(xr, (y0..y1).log_scale())
                .map_err(err)?,
            y0
        );
    } else {
        body!(b.build_cartesian_2d(xr, y0..y1).map_err(err)?, 0.0);
    }
    Ok(())
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
        let e = line_chart(&dir.join("l.pdf"), &c).unwrap_err().to_string();
        assert!(e.contains("must end in .svg or .png"), "{e}");
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
