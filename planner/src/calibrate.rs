//! Fitting the cost model's logic and flip-flop constants ([`crate::catalog::Fit`] and the
//! board's `lut_per_multiplier`) to synthesis reports: least squares over the model's own
//! terms (relative errors for logic, absolute for flip-flops), so a refit after a datapath change is one command (`edgeflow cost
//! --fit`, docs/calibration/reproduce.sh) instead of hand arithmetic.
//!
//! Logic cells of one board holding a network are modelled as
//! `logic_per_board + a·junctions + b·lane_bits + c·lut_multiplier_units`, where `lane_bits`
//! is `Σ z_j · w` and `lut_multiplier_units` counts the multipliers built from logic in
//! 16 × 16 equivalents (`c` is the board's `lut_per_multiplier`). `logic_per_board` is fitted
//! with the rest when the cases include networks of different depths (which separate it from
//! `a`), and held at its measured value otherwise. Flip-flops: `d + e·lane_bits + f·lut_multipliers`.

use crate::catalog::{Board, Fit};
use crate::cost::{single_board_usage, Net};
use serde::{Deserialize, Serialize};

/// The model's terms for one network on one board: what the constants multiply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Terms {
    pub junctions: f64,
    pub lane_bits: f64,
    pub lut_multipliers: f64,
    /// `lut_multipliers` in 16 × 16 equivalents (`w² / 256` each).
    pub lut_multiplier_units: f64,
}

impl Terms {
    pub fn new(net: &Net, board: &Board, z: &[u64]) -> Terms {
        let lut = single_board_usage(net, board, z).lut_multipliers as f64;
        let w = net.width as f64;
        Terms {
            junctions: net.junctions() as f64,
            lane_bits: z.iter().map(|&zj| (zj * net.width) as f64).sum(),
            lut_multipliers: lut,
            lut_multiplier_units: lut * w * w / 256.0,
        }
    }
}

/// One synthesized case: the model's terms and what yosys mapped.
#[derive(Clone, Debug)]
pub struct Case {
    pub name: String,
    pub terms: Terms,
    pub logic: f64,
    pub flip_flops: f64,
}

/// Least squares `min |X·β − y|` by the normal equations with partial pivoting (a handful of
/// columns, so conditioning is not a concern worth a QR). `None` when the columns are
/// linearly dependent.
pub fn least_squares(x: &[Vec<f64>], y: &[f64]) -> Option<Vec<f64>> {
    let n = x.first()?.len();
    let mut a = vec![vec![0.0; n + 1]; n];
    for (row, &yi) in x.iter().zip(y) {
        for i in 0..n {
            for j in 0..n {
                a[i][j] += row[i] * row[j];
            }
            a[i][n] += row[i] * yi;
        }
    }
    let scale = a
        .iter()
        .flat_map(|r| r.iter())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[p][c].abs() <= 1e-9 * scale.max(1.0) {
            return None;
        }
        a.swap(c, p);
        for r in 0..n {
            if r != c {
                let f = a[r][c] / a[c][c];
                for k in c..=n {
                    a[r][k] -= f * a[c][k];
                }
            }
        }
    }
    Some((0..n).map(|i| a[i][n] / a[i][i]).collect())
}

/// Least squares over the columns that vary usefully, with any column whose coefficient
/// comes out negative dropped (a cost cannot be negative) and the rest refitted. Returns one
/// coefficient per column, 0 for dropped ones, or `None` for a column kept at `keep` when it
/// is all zero in the data (nothing to fit it from).
fn nonnegative_fit(x: &[Vec<f64>], y: &[f64]) -> Vec<Option<f64>> {
    let cols = x.first().map_or(0, |r| r.len());
    let mut active: Vec<usize> = (0..cols)
        .filter(|&c| x.iter().any(|r| r[c] != 0.0))
        .collect();
    let absent: Vec<usize> = (0..cols).filter(|c| !active.contains(c)).collect();
    loop {
        let sub: Vec<Vec<f64>> = x
            .iter()
            .map(|r| active.iter().map(|&c| r[c]).collect())
            .collect();
        let beta = least_squares(&sub, y);
        let Some(beta) = beta else {
            // dependent columns: drop the last and try again
            if active.pop().is_none() {
                break;
            }
            continue;
        };
        if let Some(neg) = beta.iter().position(|&b| b < 0.0) {
            active.remove(neg);
            continue;
        }
        let mut out = vec![Some(0.0); cols];
        for (&c, &b) in active.iter().zip(&beta) {
            out[c] = Some(b);
        }
        for &c in &absent {
            out[c] = None;
        }
        return out;
    }
    (0..cols)
        .map(|c| if absent.contains(&c) { None } else { Some(0.0) })
        .collect()
}

/// The fitted constants: `board.fit` with the logic and flip-flop terms replaced, and the
/// board's `lut_per_multiplier` (kept when no case built a multiplier from logic).
pub fn fit(cases: &[Case], board: &Board) -> Result<(Fit, u64), crate::error::TooFewCases> {
    if cases.len() < 3 {
        return Err(crate::error::TooFewCases {
            cases: cases.len(),
            board: board.name.clone(),
        });
    }
    // the board's own logic is fitted too when the cases have networks of different depths,
    // which separate it from the per-junction logic; else it is held at its measured value
    let depths = |d: f64| cases.iter().any(|c| c.terms.junctions != d);
    let free_base = depths(cases[0].terms.junctions);
    let base = if free_base {
        0.0
    } else {
        board.fit.logic_per_board as f64
    };
    // relative least squares (each case's row divided by its synthesized logic, times their
    // mean to keep the numbers' scale): the fit verdict's margin is a relative error, so
    // small networks count as much as large ones
    let mean = cases.iter().map(|c| c.logic).sum::<f64>() / cases.len() as f64;
    let x: Vec<Vec<f64>> = cases
        .iter()
        .map(|c| {
            [
                c.terms.junctions,
                c.terms.lane_bits,
                c.terms.lut_multiplier_units,
                if free_base { 1.0 } else { 0.0 },
            ]
            .iter()
            .map(|v| v * mean / c.logic)
            .collect()
        })
        .collect();
    let y: Vec<f64> = cases
        .iter()
        .map(|c| (c.logic - base) * mean / c.logic)
        .collect();
    let l = nonnegative_fit(&x, &y);
    let xf: Vec<Vec<f64>> = cases
        .iter()
        .map(|c| vec![1.0, c.terms.lane_bits, c.terms.lut_multipliers])
        .collect();
    let yf: Vec<f64> = cases.iter().map(|c| c.flip_flops).collect();
    let f = nonnegative_fit(&xf, &yf);
    let r = |v: Option<f64>, keep: u64| v.map_or(keep, |v| v.round() as u64);
    let mut fit = Fit {
        logic_per_junction: r(l[0], board.fit.logic_per_junction),
        logic_per_lane_bit: r(l[1], board.fit.logic_per_lane_bit),
        logic_per_board: r(l[3], board.fit.logic_per_board),
        logic_serial_link: board.fit.logic_serial_link,
        ff_per_board: r(f[0], board.fit.ff_per_board),
        ff_per_lane_bit: r(f[1], board.fit.ff_per_lane_bit),
        ff_per_lut_multiplier: r(f[2], board.fit.ff_per_lut_multiplier),
        logic_error: 0.0,
    };
    let lpm = r(l[2], board.lut_per_multiplier);
    // the largest relative error of the fitted model on its own cases, in whole percent up
    fit.logic_error = cases
        .iter()
        .map(|c| (predicted_logic(&fit, lpm, &c.terms) / c.logic - 1.0).abs())
        .fold(0.0, f64::max);
    fit.logic_error = (fit.logic_error * 100.0).ceil() / 100.0;
    Ok((fit, lpm))
}

/// The model's logic for a network's terms with constants `f` and `lut_per_multiplier`.
pub fn predicted_logic(f: &Fit, lut_per_multiplier: u64, t: &Terms) -> f64 {
    f.logic_per_board as f64
        + f.logic_per_junction as f64 * t.junctions
        + f.logic_per_lane_bit as f64 * t.lane_bits
        + lut_per_multiplier as f64 * t.lut_multiplier_units
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_squares_recovers_an_exact_linear_law() {
        // y = 3·a + 0.5·b − 2·c on points that pin every coefficient
        let pts = [
            [1.0, 2.0, 0.0],
            [0.0, 4.0, 1.0],
            [2.0, 0.0, 3.0],
            [1.0, 1.0, 1.0],
        ];
        let x: Vec<Vec<f64>> = pts.iter().map(|p| p.to_vec()).collect();
        let y: Vec<f64> = pts
            .iter()
            .map(|p| 3.0 * p[0] + 0.5 * p[1] - 2.0 * p[2])
            .collect();
        let b = least_squares(&x, &y).unwrap();
        for (got, want) in b.iter().zip([3.0, 0.5, -2.0]) {
            assert!((got - want).abs() < 1e-9, "{b:?}");
        }
        // a dependent column cannot be solved
        let dep: Vec<Vec<f64>> = pts.iter().map(|p| vec![p[0], 2.0 * p[0]]).collect();
        assert!(least_squares(&dep, &y).is_none());
    }

    #[test]
    fn fit_recovers_the_constants_that_generated_the_cases() {
        let mut board = Board::built_in("icebreaker").unwrap();
        board.fit.logic_per_board = 500;
        // cases built from known constants: 1000 per junction, 20 per lane bit, 700 per
        // 16×16 LUT multiplier; flip-flops 400 + 4 per lane bit + 90 per LUT multiplier
        let cases: Vec<Case> = [
            (2.0, 32.0, 0.0),
            (2.0, 48.0, 0.0),
            (3.0, 72.0, 16.0),
            (2.0, 60.0, 8.0),
        ]
        .iter()
        .enumerate()
        .map(|(i, &(j, s, m))| Case {
            name: format!("c{i}"),
            terms: Terms {
                junctions: j,
                lane_bits: s,
                lut_multipliers: m,
                lut_multiplier_units: m,
            },
            logic: 500.0 + 1000.0 * j + 20.0 * s + 700.0 * m,
            flip_flops: 400.0 + 4.0 * s + 90.0 * m,
        })
        .collect();
        let (f, lpm) = fit(&cases, &board).unwrap();
        assert_eq!(
            (f.logic_per_junction, f.logic_per_lane_bit, lpm),
            (1000, 20, 700)
        );
        assert_eq!(
            (f.ff_per_board, f.ff_per_lane_bit, f.ff_per_lut_multiplier),
            (400, 4, 90)
        );
        assert_eq!(f.logic_per_board, 500);
    }

    #[test]
    fn no_lut_multipliers_keeps_the_boards_multiplier_cost() {
        let board = Board::built_in("nexys4-ddr").unwrap();
        let cases: Vec<Case> = [(2.0, 48.0), (2.0, 60.0), (2.0, 72.0)]
            .iter()
            .map(|&(j, s)| Case {
                name: String::new(),
                terms: Terms {
                    junctions: j,
                    lane_bits: s,
                    lut_multipliers: 0.0,
                    lut_multiplier_units: 0.0,
                },
                logic: board.fit.logic_per_board as f64 + 800.0 * j + 30.0 * s,
                flip_flops: 100.0 + 2.0 * s,
            })
            .collect();
        let (f, lpm) = fit(&cases, &board).unwrap();
        assert_eq!(lpm, board.lut_per_multiplier);
        assert_eq!((f.logic_per_junction, f.logic_per_lane_bit), (800, 30));
        assert_eq!(f.ff_per_lut_multiplier, board.fit.ff_per_lut_multiplier);
        assert!(fit(&cases[..2], &board).is_err());
    }
}
