//! `edgeflow fit`: the fastest designs of a spec's network that the cost model fits on one
//! board (fit_search.rs), as a ranked table; the chosen one's spec written with only its
//! hardware choices changed; with `--verify` the real flow's word on them (flow/fit.rs).

use crate::fit_search::{candidate, search, Candidate, Search};
use crate::flow::fit::{verify, Verification};
use crate::report::{emit, Format};
use crate::util::write_atomic;
use anyhow::{anyhow, bail, Context, Result};
use edgeflow_core::Spec;
use edgeflow_planner::Board;
use serde::Serialize;
use std::fmt;
use std::path::PathBuf;

pub struct FitArgs {
    pub spec: PathBuf,
    pub board: String,
    pub out: Option<PathBuf>,
    pub verify: bool,
    pub freq: Option<f64>,
    pub top: usize,
    pub seed: u32,
    /// Overrides the spec's `dsp_multipliers` for every design searched.
    pub dsp_multipliers: Option<usize>,
    pub json: bool,
}

/// `edgeflow fit`'s report.
#[derive(Serialize)]
struct Fitted {
    spec: String,
    board: String,
    part: String,
    clock_mhz: f64,
    /// At most this many multipliers in DSP cells in every design (absent: as many as the
    /// part has).
    dsp_multipliers: Option<usize>,
    /// The spec's own choices on the board, and their rank when they fit and are not beaten.
    input: Candidate,
    input_rank: Option<usize>,
    /// When the spec's own choices fit but are not ranked: the ranked design that beats them.
    input_beaten_by: Option<Beaten>,
    search: Search,
    /// Designs that fit, of which `candidates` are the first.
    fitting: usize,
    candidates: Vec<Candidate>,
    /// The rank of the design written or verified.
    chosen: Option<usize>,
    written: Option<String>,
    verify: Option<Verification>,
}

#[derive(Serialize)]
struct Beaten {
    rank: usize,
    z: Vec<usize>,
}

fn pipeline(c: &Candidate) -> &'static str {
    match (c.registered_reads, c.deep_pipeline) {
        (false, false) => "-",
        (true, false) => "rr",
        (false, true) => "dp",
        (true, true) => "rr+dp",
    }
}

fn z_text(z: &[usize]) -> String {
    format!("{z:?}")
}

fn options_text(s: &Search) -> String {
    s.z_options
        .iter()
        .enumerate()
        .map(|(j, o)| {
            let v: Vec<String> = o.iter().map(|z| z.to_string()).collect();
            format!("junction {}: {{{}}}", j + 1, v.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

impl fmt::Display for Fitted {
    fn fmt(&self, w: &mut fmt::Formatter) -> fmt::Result {
        writeln!(
            w,
            "{} on {} ({}) at {:.2} MHz: the fastest designs the cost model fits",
            self.spec, self.board, self.part, self.clock_mhz
        )?;
        if let Some(n) = self.dsp_multipliers {
            writeln!(w, "at most {n} multipliers in DSP cells, the rest in logic")?;
        }
        writeln!(
            w,
            "{:>4}  {:<12} {:<8} {:>7} {:>11} {:>13} {:>13} {:>14}  verdict",
            "rank", "z", "pipeline", "clocks", "samples/s", "logic", "DSP", "RAM blocks"
        )?;
        for c in &self.candidates {
            let u = &c.usage;
            writeln!(
                w,
                "{:>4}  {:<12} {:<8} {:>7} {:>11.0} {:>13} {:>13} {:>14}  {}",
                c.rank,
                z_text(&c.z),
                pipeline(c),
                c.block_cycle_clocks,
                c.samples_per_second,
                format!("{} {:.0}%", u.logic, c.logic_percent),
                format!("{}/{} {:.0}%", u.dsp, u.dsp_available, c.dsp_percent),
                format!(
                    "{}/{} {:.0}%",
                    u.ram_blocks, u.ram_blocks_available, c.ram_blocks_percent
                ),
                c.verdict
            )?;
        }
        let s = &self.search;
        let i = &self.input;
        let place = self
            .input_rank
            .map(|r| format!("rank {r}"))
            .unwrap_or_else(|| match &self.input_beaten_by {
                Some(b) => format!(
                    "not ranked: rank {} (z = {}) is as fast with no more of any resource",
                    b.rank,
                    z_text(&b.z)
                ),
                None => i.verdict.clone(),
            });
        writeln!(
            w,
            "the spec's own z = {}: {} clocks, {:.0} samples/s: {place}",
            z_text(&i.z),
            i.block_cycle_clocks,
            i.samples_per_second
        )?;
        writeln!(
            w,
            "searched: z of {}; {} combinations{}; {} on the speed frontier, {} fit, {} dominated",
            options_text(s),
            s.combinations,
            if s.pipeline_free {
                " with registered reads and the deep pipeline each on or off"
            } else {
                ""
            },
            s.considered,
            self.fitting,
            s.dominated
        )?;
        if !s.pipeline_free {
            writeln!(
                w,
                "registered reads and the deep pipeline: {} builds them (pipeline rr+dp)",
                self.board
            )?;
        }
        if let Some(n) = &s.next_faster {
            writeln!(
                w,
                "next faster: z = {} ({}), {} clocks, {:.0} samples/s: {}",
                z_text(&n.z),
                pipeline(n),
                n.block_cycle_clocks,
                n.samples_per_second,
                n.verdict
            )?;
        }
        if let Some(v) = &self.verify {
            writeln!(w, "verify ({}): tried {}", v.flow, v.tried)?;
            for a in &v.attempts {
                writeln!(w, "  rank {} z = {}: {}", a.rank, z_text(&a.z), a.outcome)?;
            }
            if let Some(x) = &v.verified {
                writeln!(
                    w,
                    "verified: rank {}, z = {}: Fmax {:.2} MHz at {:.2} MHz, timing {} ({})",
                    x.rank,
                    z_text(&x.z),
                    x.fmax_mhz,
                    x.clock_mhz,
                    if x.timing_met { "met" } else { "NOT met" },
                    x.fmax_kind
                )?;
                writeln!(
                    w,
                    "{:<6} {:<26} {:>10} {:>10} {:>10}",
                    "", "", "predicted", "used", "available"
                )?;
                for r in &x.resources {
                    let p = r.predicted.map_or("-".into(), |p| p.to_string());
                    writeln!(
                        w,
                        "{:<6} {:<26} {:>10} {:>10} {:>10}",
                        r.resource, r.kind, p, r.used, r.available
                    )?;
                }
                let placed: Vec<String> = x
                    .placed
                    .iter()
                    .map(|(cell, used, avail)| format!("{cell} {used}/{avail}"))
                    .collect();
                if !placed.is_empty() {
                    writeln!(w, "placed by nextpnr: {}", placed.join(", "))?;
                }
            }
        }
        if let (Some(p), Some(r)) = (&self.written, self.chosen) {
            writeln!(w, "wrote {p} (rank {r})")?;
        }
        Ok(())
    }
}

pub fn fit_cmd(a: FitArgs) -> Result<()> {
    let b = edgeflow_hdl::boards::board(&a.board).map_err(|e| anyhow!("--board: {e}"))?;
    let board = Board::resolve(&a.board).map_err(|e| anyhow!("--board: {e}"))?;
    let from = Spec::load(&a.spec)?;
    let mut spec = from.clone();
    if let Some(n) = a.dsp_multipliers {
        spec.dsp_multipliers = Some(n);
    }
    let text = std::fs::read_to_string(&a.spec)
        .with_context(|| format!("cannot read {}", a.spec.display()))?;
    // the clock the board top makes of the one asked for, as `edgeflow bitstream` builds it
    let want = crate::flow::check::clock_mhz(b, a.freq)?;
    let (_, mhz) = edgeflow_hdl::board_top::clock_source(b, want)?;
    let source = a.spec.display().to_string();
    let input = candidate(spec.clone(), b, &board, mhz)?;
    let s = search(&spec, b, &board, mhz)?;
    if s.ranked.is_empty() {
        let smallest = s.next_faster.as_ref().unwrap_or(&input);
        bail!(
            "{source}: no design of this network fits {} by the cost model: even the smallest, z = {}, {}. Use a smaller network (fewer or smaller layers, a smaller fan-out, a narrower format) or a larger board",
            b.name,
            z_text(&smallest.z),
            smallest.verdict.replacen("DOES NOT FIT", "does not fit", 1)
        );
    }
    let shown: Vec<Candidate> = s.ranked.iter().take(a.top).cloned().collect();
    let verification = match a.verify {
        true => Some(verify(&shown, b, &board, mhz, a.seed)?),
        false => None,
    };
    let chosen = match &verification {
        Some(v) => v
            .verified
            .as_ref()
            .and_then(|x| shown.iter().find(|c| c.rank == x.rank)),
        None => shown.first(),
    };
    let mut written = None;
    if let (Some(out), Some(c)) = (&a.out, chosen) {
        let how = format!(
            "`edgeflow fit --spec {source} --board {}{}{}{}`",
            b.name,
            a.freq.map(|f| format!(" --freq {f}")).unwrap_or_default(),
            a.dsp_multipliers
                .map(|n| format!(" --dsp-multipliers {n}"))
                .unwrap_or_default(),
            if a.verify { " --verify" } else { "" }
        );
        let new = edited(&text, &from, &c.spec, &how, a.verify, b.name)?;
        let check = Spec::from_toml_str(&new, &out.display().to_string())?;
        if check != c.spec {
            bail!("the edited spec does not read back as the chosen design; nothing written");
        }
        write_atomic(out, new.as_bytes())?;
        written = Some(out.display().to_string());
    }
    let fitting = s.ranked.len();
    let input_rank = s
        .ranked
        .iter()
        .find(|c| c.z == input.z && pipeline(c) == pipeline(&input))
        .map(|c| c.rank);
    let input_beaten_by = s
        .ranked
        .iter()
        .find(|c| input.fits && input_rank.is_none() && crate::fit_search::beats(c, &input))
        .map(|c| Beaten {
            rank: c.rank,
            z: c.z.clone(),
        });
    let r = Fitted {
        spec: spec.name.clone(),
        board: b.name.to_string(),
        part: board.part.clone(),
        clock_mhz: mhz,
        dsp_multipliers: spec.dsp_multipliers,
        input,
        input_rank,
        input_beaten_by,
        search: s,
        fitting,
        chosen: chosen.map(|c| c.rank),
        candidates: shown,
        written,
        verify: verification,
    };
    emit(&r, Format::json(a.json));
    if let Some(v) = r.verify.as_ref().filter(|v| v.verified.is_none()) {
        // the best Fmax of a design that fit, and the fastest clock the board makes below it
        let fmax = v
            .attempts
            .iter()
            .filter_map(|t| t.fmax_mhz)
            .fold(None, |m: Option<f64>, f| Some(m.map_or(f, |m| m.max(f))));
        let slower = fmax
            .and_then(|f| edgeflow_hdl::board_top::fastest_clock_at_most(b, f))
            .map(|f| {
                format!(
                    "a design fit with Fmax {:.2} MHz: try --freq {}, ",
                    fmax.unwrap_or(0.0),
                    (f * 1000.0).ceil() / 1000.0
                )
            })
            .unwrap_or_default();
        bail!(
            "none of the {} designs tried fits {} and meets timing at {mhz:.2} MHz in the real flow{}; {slower}more designs with --top, another --seed, or a smaller network",
            v.tried,
            b.name,
            if a.out.is_some() {
                " (nothing written)"
            } else {
                ""
            }
        );
    }
    Ok(())
}

/// The spec's TOML with only the hardware choices that differ from `from` set to `to`'s,
/// each line's comment saying so, and a header naming the command (comments, order and
/// everything else kept).
fn edited(
    text: &str,
    from: &Spec,
    to: &Spec,
    how: &str,
    verified: bool,
    board: &str,
) -> Result<String> {
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| anyhow!("the spec's TOML cannot be edited: {e}"))?;
    let why = format!("# chosen by edgeflow fit for {board}");
    if to.z != from.z {
        let arr: toml_edit::Array = to.z.iter().map(|&z| z as i64).collect();
        let was = format!("{why} (the input had {:?})", from.z);
        set(&mut doc, "z", toml_edit::Value::Array(arr), &was);
    }
    for (key, old, new) in [
        (
            "registered_reads",
            from.registered_reads,
            to.registered_reads,
        ),
        ("deep_pipeline", from.deep_pipeline, to.deep_pipeline),
    ] {
        if old != new {
            set(&mut doc, key, toml_edit::Value::from(new), &why);
        }
    }
    if let (Some(n), true) = (
        to.dsp_multipliers,
        to.dsp_multipliers != from.dsp_multipliers,
    ) {
        set(
            &mut doc,
            "dsp_multipliers",
            toml_edit::Value::from(n as i64),
            &why,
        );
    }
    let z: Vec<String> = to.z.iter().map(|z| z.to_string()).collect();
    let by = match verified {
        true => "and meets timing in the real flow",
        false => "by the cost model",
    };
    Ok(format!(
        "# Written by {how}:\n# the input's network, with the hardware choices of its fastest design that\n# fits {board} {by} (z = [{}]).\n{doc}",
        z.join(", ")
    ))
}

/// Sets `key` of the top table to `v`, keeping the spacing before the value and putting
/// `comment` after it.
fn set(doc: &mut toml_edit::DocumentMut, key: &str, mut v: toml_edit::Value, comment: &str) {
    v.decor_mut().set_suffix(format!("  {comment}"));
    match doc.get_mut(key).and_then(|i| i.as_value_mut()) {
        Some(old) => {
            if let Some(p) = old.decor().prefix().cloned() {
                v.decor_mut().set_prefix(p);
            }
            *old = v;
        }
        None => {
            v.decor_mut().set_prefix(" ");
            doc.insert(key, toml_edit::Item::Value(v));
        }
    }
}
