//! Static timing analysis over nextpnr's post-route SDF, with the iCE40 UltraPlus multipliers
//! timed as what they are.
//!
//! nextpnr-ice40 times every SB_MAC16 port as a register port, whether or not the cell's
//! registers are used: for a combinational multiplier (all `*_REG` off, `CLK` tied low) the
//! path into the multiplier ends at its input and the path out starts at its output, each
//! reported against a phantom clock (the constant net on `CLK`), and the multiply itself,
//! up to 9 ns on the UP5K, is timed nowhere. Its Fmax is then a figure for a circuit that
//! does not exist. This walks the same post-route delays nextpnr writes (cells and
//! interconnect, slowest corner) and puts back the combinational multiplier's own arcs from
//! the icestorm timing database, so `register → multiplier → register` is one path again.
//!
//! nextpnr-ecp5 has no such gap: its SDF carries a combinational MULT18X18D's multiply as
//! IOPATH arcs (input to product, about 4 ns at speed grade 6) and its own Fmax includes them
//! (the tests show both), so the same walk with `DspModel::Nextpnr` and no SB_MAC16s is the
//! honest figure there, and paths through a MULT18X18D are marked as through a multiplier.
//!
//! Clock-tree delays are left out, as nextpnr's own Fmax leaves them out; with
//! `DspModel::Nextpnr` the analysis therefore reproduces nextpnr's figure, which is how the tests
//! check it.

use anyhow::{anyhow, bail, Context, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Which registers of one SB_MAC16 are on (from the netlist's parameters).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MacRegisters {
    /// Input groups held in the cell's input registers (`'A'`, `'B'`, `'C'`, `'D'`).
    pub inputs: Vec<char>,
    /// A pipeline or output register is on: the cell's ports then are register ports.
    pub internal: bool,
}

impl MacRegisters {
    fn combinational(&self) -> bool {
        self.inputs.is_empty() && !self.internal
    }
}

/// How the SB_MAC16 cells are timed; `macs` gives each cell's registers by SDF instance name.
#[derive(Clone, Debug)]
pub enum DspModel {
    /// nextpnr's view: a cell with every register off has its `CLK` on a constant, so its
    /// paths belong to no clock and are not constrained; other cells' ports are register
    /// ports. Only for checking this analysis against nextpnr.
    Nextpnr { macs: HashMap<String, MacRegisters> },
    /// The multiplier as it is: arcs `(input pin, output pin, ps)` of the timing database
    /// from every input not held in a register to every output; a registered input group
    /// launches at the clock through the same arcs (the register's own clock-to-out, a
    /// fraction of a ns, is not in the database and is left out). Cells with a pipeline or
    /// output register keep nextpnr's register ports, but a setup check at an input that is
    /// not held in an input register carries the multiply's slowest arc from that input, and
    /// a registered input group's way through the multiply to the output register is a path
    /// of its own.
    Multiplier {
        arcs: Vec<(String, String, f64)>,
        macs: HashMap<String, MacRegisters>,
    },
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct StaResult {
    pub fmax_mhz: f64,
    /// The clock period the worst path needs (a half-cycle path counts twice), ns.
    pub period_ns: f64,
    /// The worst path: (`cell/pin`, arrival ns) from launch to capture.
    pub critical_path: Vec<(String, f64)>,
    /// Launch and capture edges of the worst path ("posedge"/"negedge").
    pub launch: &'static str,
    pub capture: &'static str,
    /// Paths that pass through a combinational multiplier: the worst such period, ns.
    pub worst_through_multiplier_ns: Option<f64>,
    /// The slowest endpoints (`cell/pin`, period ns, launch edge, through a multiplier),
    /// slowest first, at most 400: what to fix next after the critical path.
    pub worst_endpoints: Vec<(String, f64, &'static str, bool)>,
}

/// A parsed s-expression of the SDF.
#[derive(Debug)]
enum Sx {
    Atom(String),
    List(Vec<Sx>),
}

fn tokenize_sdf(text: &str) -> Result<Sx> {
    let mut stack: Vec<Vec<Sx>> = vec![vec![]];
    let mut atom = String::new();
    let mut chars = text.chars().peekable();
    let flush = |atom: &mut String, stack: &mut Vec<Vec<Sx>>| {
        if !atom.is_empty() {
            stack
                .last_mut()
                .unwrap()
                .push(Sx::Atom(std::mem::take(atom)));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                // an escaped character belongs to the name (`\$`, `\/`, `\.`)
                atom.push('\\');
                if let Some(n) = chars.next() {
                    atom.push(n);
                }
            }
            '"' => {
                flush(&mut atom, &mut stack);
                let mut s = String::new();
                for n in chars.by_ref() {
                    if n == '"' {
                        break;
                    }
                    s.push(n);
                }
                stack.last_mut().unwrap().push(Sx::Atom(s));
            }
            '(' => {
                flush(&mut atom, &mut stack);
                stack.push(vec![]);
            }
            ')' => {
                flush(&mut atom, &mut stack);
                let l = stack
                    .pop()
                    .ok_or_else(|| anyhow!("unbalanced ')' in SDF"))?;
                stack
                    .last_mut()
                    .ok_or_else(|| anyhow!("unbalanced ')' in SDF"))?
                    .push(Sx::List(l));
            }
            c if c.is_whitespace() => flush(&mut atom, &mut stack),
            c => atom.push(c),
        }
    }
    let mut top = stack
        .pop()
        .filter(|_| stack.is_empty())
        .ok_or_else(|| anyhow!("unbalanced '(' in SDF"))?;
    if top.len() != 1 {
        bail!("SDF is not one DELAYFILE expression");
    }
    Ok(top.remove(0))
}

impl Sx {
    fn list(&self) -> &[Sx] {
        match self {
            Sx::List(l) => l,
            Sx::Atom(_) => &[],
        }
    }
    fn head(&self) -> Option<&str> {
        match self.list().first() {
            Some(Sx::Atom(a)) => Some(a),
            _ => None,
        }
    }
    fn atom(&self) -> Option<&str> {
        match self {
            Sx::Atom(a) => Some(a),
            _ => None,
        }
    }
    fn find(&self, key: &str) -> impl Iterator<Item = &Sx> {
        let key = key.to_string();
        self.list().iter().filter(move |x| x.head() == Some(&key))
    }
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            if let Some(n) = it.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `inst/pin` of an INTERCONNECT end: split at the last unescaped `/`.
fn split_pin(s: &str) -> (String, String) {
    let b = s.as_bytes();
    let mut cut = None;
    for i in 0..b.len() {
        if b[i] == b'/' && (i == 0 || b[i - 1] != b'\\') {
            cut = Some(i);
        }
    }
    match cut {
        Some(i) => (unescape(&s[..i]), s[i + 1..].to_string()),
        None => (String::new(), s.to_string()),
    }
}

/// The slowest value of `(min:typ:max)` triples (rise and fall), in ps.
fn slowest(xs: &[Sx]) -> f64 {
    let mut m: f64 = 0.0;
    for x in xs {
        let parts: Vec<&str> = x.list().iter().filter_map(|a| a.atom()).collect();
        for p in parts {
            for v in p.split(':') {
                if let Ok(f) = v.parse::<f64>() {
                    m = m.max(f);
                }
            }
        }
    }
    m
}

/// A pin reference of a timing check or IOPATH: `PIN` or `(posedge PIN)`.
fn edge_pin(x: &Sx) -> (Option<bool>, String) {
    match x {
        Sx::Atom(a) => (None, a.clone()),
        Sx::List(l) => {
            let e = l.first().and_then(|h| h.atom()).map(|h| h == "negedge");
            let p = l.get(1).and_then(|p| p.atom()).unwrap_or("").to_string();
            (e, p)
        }
    }
}

#[derive(Default)]
struct Graph {
    id: HashMap<String, usize>,
    name: Vec<String>,
    arcs: Vec<Vec<(usize, f64)>>,
    /// (node, capture negedge, setup ps)
    checks: Vec<(usize, bool, f64)>,
    through_mul: Vec<bool>,
}

impl Graph {
    fn node(&mut self, inst: &str, pin: &str) -> usize {
        let key = format!("{inst}/{pin}");
        if let Some(&i) = self.id.get(&key) {
            return i;
        }
        let i = self.name.len();
        self.id.insert(key.clone(), i);
        self.name.push(key);
        self.arcs.push(vec![]);
        self.through_mul.push(false);
        i
    }
}

const LAUNCH_POS: usize = 0;
const LAUNCH_NEG: usize = 1;

/// Analyse an SDF written by nextpnr.
pub fn analyse(sdf: &str, dsp: &DspModel) -> Result<StaResult> {
    let top = tokenize_sdf(sdf)?;
    if top.head() != Some("DELAYFILE") {
        bail!("not an SDF file (no DELAYFILE)");
    }
    // ps per unit; nextpnr writes 1ps
    let scale = match top
        .find("TIMESCALE")
        .next()
        .and_then(|t| t.list().get(1))
        .and_then(|a| a.atom())
    {
        Some("1ps") | None => 1.0,
        Some("1ns") => 1000.0,
        Some(other) => bail!("SDF TIMESCALE {other} is not handled (1ps or 1ns)"),
    };
    let mut g = Graph::default();
    g.node("", "<posedge launch>");
    g.node("", "<negedge launch>");
    let (macs, arcs) = match dsp {
        DspModel::Nextpnr { macs } => (macs, None),
        DspModel::Multiplier { macs, arcs } => (macs, Some(arcs)),
    };
    for cell in top.find("CELL") {
        let ctype = cell
            .find("CELLTYPE")
            .next()
            .and_then(|c| c.list().get(1))
            .and_then(|a| a.atom())
            .unwrap_or("");
        let inst = unescape(
            cell.find("INSTANCE")
                .next()
                .and_then(|c| c.list().get(1))
                .and_then(|a| a.atom())
                .unwrap_or(""),
        );
        // clock pins of this cell and the edge they capture and launch on
        let mut clock_edge: HashMap<String, bool> = HashMap::new();
        let mut checks = vec![];
        for tc in cell.find("TIMINGCHECK") {
            for c in tc.list().iter().skip(1) {
                if !matches!(c.head(), Some("SETUPHOLD") | Some("SETUP")) {
                    continue;
                }
                let l = c.list();
                let (_, dpin) = edge_pin(&l[1]);
                let (cneg, cpin) = edge_pin(&l[2]);
                let neg = cneg.unwrap_or(false);
                clock_edge.insert(cpin, neg);
                checks.push((dpin, neg, slowest(&l[3..4]) * scale));
            }
        }
        let mac = (ctype == "ICESTORM_DSP").then(|| macs.get(&inst).cloned().unwrap_or_default());
        if let (Some(m), Some(arcs)) = (mac.as_ref().filter(|m| m.internal), arcs) {
            // An output register: its outputs launch at the clock as the SDF says, but an
            // input not held in an input register reaches that register through the multiply,
            // so its setup check carries the multiply's slowest arc from that pin; a
            // registered input group reaches it through the multiply inside the cell.
            let registered = |pin: &str| {
                m.inputs
                    .iter()
                    .any(|c| pin.starts_with(*c) && pin[1..].starts_with('_'))
            };
            let slowest_from = |pin: &str| {
                arcs.iter()
                    .filter(|(i, _, _)| i == pin)
                    .map(|a| a.2)
                    .fold(None, |m: Option<f64>, d| Some(m.map_or(d, |m| m.max(d))))
            };
            let mut through = vec![];
            let checks = checks
                .into_iter()
                .map(|(dpin, neg, s)| match slowest_from(&dpin) {
                    Some(d) if !registered(&dpin) => {
                        through.push(dpin.clone());
                        (dpin, neg, s + d)
                    }
                    _ => (dpin, neg, s),
                })
                .collect();
            let internal = arcs
                .iter()
                .filter(|(i, _, _)| registered(i))
                .map(|a| a.2)
                .fold(0.0, f64::max);
            if internal > 0.0 {
                let n = g.node(&inst, "(input register → multiply → output register)");
                g.arcs[LAUNCH_POS].push((n, internal));
                g.checks.push((n, false, 0.0));
                g.through_mul[n] = true;
            }
            for pin in through {
                let n = g.node(&inst, &pin);
                g.through_mul[n] = true;
            }
            add_cell_delays(&mut g, cell, &inst, checks, &clock_edge, scale);
            continue;
        }
        let mac = mac.filter(|m| !m.internal);
        if let Some(m) = mac {
            let Some(arcs) = arcs else {
                if m.combinational() {
                    continue;
                }
                // the SDF's register ports are nextpnr's view of a cell with a clock
                add_cell_delays(&mut g, cell, &inst, checks, &clock_edge, scale);
                continue;
            };
            let registered = |pin: &str| {
                m.inputs
                    .iter()
                    .any(|c| pin.starts_with(*c) && pin[1..].starts_with('_'))
            };
            for (dpin, neg, s) in checks {
                if registered(&dpin) {
                    let n = g.node(&inst, &dpin);
                    g.checks.push((n, neg, s));
                }
            }
            for (i, o, d) in arcs {
                let b = g.node(&inst, o);
                let a = if registered(i) {
                    LAUNCH_POS
                } else {
                    g.node(&inst, i)
                };
                g.arcs[a].push((b, *d));
                g.through_mul[b] = true;
            }
            continue;
        }
        if ctype == "MULT18X18D" {
            mark_multiplier_outputs(&mut g, cell, &inst);
        }
        add_cell_delays(&mut g, cell, &inst, checks, &clock_edge, scale);
    }
    propagate(&g)
}

/// nextpnr-ecp5 writes a combinational MULT18X18D's multiply as IOPATH arcs and times them
/// itself; the outputs of those arcs are marked so paths through them are reported as paths
/// through a multiplier.
fn mark_multiplier_outputs(g: &mut Graph, cell: &Sx, inst: &str) {
    for d in cell.find("DELAY") {
        for abs in d.list().iter().skip(1) {
            for io in abs.find("IOPATH") {
                if let Some(to) = io.list().get(2).and_then(|a| a.atom()) {
                    let n = g.node(inst, to);
                    g.through_mul[n] = true;
                }
            }
        }
    }
}

/// A cell's setup checks, its launches from clock pins and its combinational arcs, and the
/// interconnect it lists (the top cell lists all of it).
fn add_cell_delays(
    g: &mut Graph,
    cell: &Sx,
    inst: &str,
    checks: Vec<(String, bool, f64)>,
    clock_edge: &HashMap<String, bool>,
    scale: f64,
) {
    for (dpin, neg, s) in checks {
        let n = g.node(inst, &dpin);
        g.checks.push((n, neg, s));
    }
    for d in cell.find("DELAY") {
        for abs in d
            .list()
            .iter()
            .filter(|x| matches!(x.head(), Some("ABSOLUTE") | Some("INCREMENT")))
        {
            for io in abs.find("IOPATH") {
                let l = io.list();
                if l.len() < 3 {
                    continue;
                }
                let (e, from) = edge_pin(&l[1]);
                let to = l[2].atom().unwrap_or("").to_string();
                let delay = slowest(&l[3..]) * scale;
                let is_clock = e.is_some()
                    || clock_edge.contains_key(&from)
                    || matches!(
                        from.as_str(),
                        "CLK" | "RCLK" | "WCLK" | "INPUT_CLK" | "OUTPUT_CLK"
                    );
                let t = g.node(inst, &to);
                if is_clock {
                    let neg = e.unwrap_or_else(|| clock_edge.get(&from).copied().unwrap_or(false));
                    let src = if neg { LAUNCH_NEG } else { LAUNCH_POS };
                    g.arcs[src].push((t, delay));
                } else {
                    let f = g.node(inst, &from);
                    g.arcs[f].push((t, delay));
                }
            }
            for ic in abs.find("INTERCONNECT") {
                let l = ic.list();
                if l.len() < 4 {
                    continue;
                }
                let (si, sp) = split_pin(l[1].atom().unwrap_or(""));
                let (di, dp) = split_pin(l[2].atom().unwrap_or(""));
                let delay = slowest(&l[3..]) * scale;
                let (a, b) = (g.node(&si, &sp), g.node(&di, &dp));
                g.arcs[a].push((b, delay));
            }
        }
    }
}

fn propagate(g: &Graph) -> Result<StaResult> {
    let n = g.name.len();
    let mut indeg = vec![0usize; n];
    for a in &g.arcs {
        for &(t, _) in a {
            indeg[t] += 1;
        }
    }
    // arrival per launch edge, with the predecessor for the path report
    let mut arr = vec![[f64::NEG_INFINITY; 2]; n];
    let mut pred = vec![[usize::MAX; 2]; n];
    let mut mul = vec![[false; 2]; n];
    arr[LAUNCH_POS][LAUNCH_POS] = 0.0;
    arr[LAUNCH_NEG][LAUNCH_NEG] = 0.0;
    let mut queue: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut done = 0;
    while let Some(u) = queue.pop() {
        done += 1;
        for &(v, d) in &g.arcs[u] {
            for e in 0..2 {
                if arr[u][e] > f64::NEG_INFINITY && arr[u][e] + d > arr[v][e] {
                    arr[v][e] = arr[u][e] + d;
                    pred[v][e] = u;
                    mul[v][e] = mul[u][e] || g.through_mul[v];
                }
            }
            indeg[v] -= 1;
            if indeg[v] == 0 {
                queue.push(v);
            }
        }
    }
    if done < n {
        bail!(
            "the timing graph has a combinational loop ({} nodes on or behind it)",
            n - done
        );
    }
    let mut worst: Option<(f64, usize, usize, bool)> = None;
    let mut ends = vec![];
    let mut worst_mul: Option<f64> = None;
    for &(node, cneg, setup) in &g.checks {
        for e in 0..2 {
            if arr[node][e] == f64::NEG_INFINITY {
                continue;
            }
            let half = (e == LAUNCH_NEG) != cneg;
            let period = (arr[node][e] + setup) * if half { 2.0 } else { 1.0 };
            if worst.map_or(true, |w| period > w.0) {
                worst = Some((period, node, e, cneg));
            }
            ends.push((
                g.name[node].clone(),
                period / 1000.0,
                if e == LAUNCH_NEG {
                    "negedge"
                } else {
                    "posedge"
                },
                mul[node][e],
            ));
            if mul[node][e] && worst_mul.map_or(true, |w| period > w) {
                worst_mul = Some(period);
            }
        }
    }
    let Some((period, end, e, cneg)) = worst else {
        bail!("the SDF has no register-to-register path")
    };
    ends.sort_by(|a, b| b.1.total_cmp(&a.1));
    // a pin has a check per data edge: one entry per pin
    let mut seen = std::collections::HashSet::new();
    ends.retain(|e| seen.insert(e.0.clone()));
    ends.truncate(400);
    let mut path = vec![];
    let mut u = end;
    while u != usize::MAX && u != LAUNCH_POS && u != LAUNCH_NEG {
        path.push((g.name[u].clone(), arr[u][e] / 1000.0));
        u = pred[u][e];
    }
    path.reverse();
    Ok(StaResult {
        fmax_mhz: 1e6 / period,
        period_ns: period / 1000.0,
        critical_path: path,
        launch: if e == LAUNCH_NEG {
            "negedge"
        } else {
            "posedge"
        },
        capture: if cneg { "negedge" } else { "posedge" },
        worst_through_multiplier_ns: worst_mul.map(|p| p / 1000.0),
        worst_endpoints: ends,
    })
}

/// Where the icestorm timing database of a device may be: Debian's package, then icestorm's
/// own install prefix, then `$EDGEFLOW_ICESTORM_TIMINGS`.
pub fn timing_db(device: &str) -> Result<PathBuf> {
    let file = format!("timings_{device}.txt");
    let mut cands: Vec<PathBuf> = vec![];
    if let Some(p) = std::env::var_os("EDGEFLOW_ICESTORM_TIMINGS") {
        cands.push(PathBuf::from(p));
    }
    for d in [
        "/usr/share/fpga-icestorm/chipdb",
        "/usr/local/share/icebox",
        "/usr/share/icebox",
    ] {
        cands.push(Path::new(d).join(&file));
    }
    cands.into_iter().find(|p| p.is_file()).ok_or_else(|| {
        anyhow!(
            "the icestorm timing database {file} was not found (looked in \
             /usr/share/fpga-icestorm/chipdb, /usr/local/share/icebox, /usr/share/icebox); install \
             the Debian package `fpga-icestorm-chipdb`, or point EDGEFLOW_ICESTORM_TIMINGS at the \
             file"
        )
    })
}

/// The arcs of one cell of an icestorm timing database (`CELL name`, then `IOPATH in out
/// min:typ:max min:typ:max` lines), pins renamed as nextpnr's SDF names them (`A[3]` → `A_3`),
/// slowest corner, ps.
pub fn cell_arcs(db: &str, cell: &str) -> Result<Vec<(String, String, f64)>> {
    let mut arcs = vec![];
    let mut inside = false;
    for line in db.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.first() == Some(&"CELL") {
            inside = w.get(1) == Some(&cell);
            continue;
        }
        if inside && w.first() == Some(&"IOPATH") && w.len() >= 5 {
            let pin = |p: &str| p.replace('[', "_").replace(']', "");
            let d = w[3..5]
                .iter()
                .flat_map(|t| t.split(':'))
                .filter_map(|v| v.parse::<f64>().ok())
                .fold(0.0, f64::max);
            arcs.push((pin(w[1]), pin(w[2]), d));
        }
    }
    if arcs.is_empty() {
        bail!("the timing database has no arcs for cell {cell}");
    }
    Ok(arcs)
}

/// The registers of every SB_MAC16 of a yosys JSON netlist, by the name nextpnr's SDF gives
/// the cell (`<cell>_DSP`).
pub fn mac_registers(netlist_json: &str) -> Result<HashMap<String, MacRegisters>> {
    let v: serde_json::Value = serde_json::from_str(netlist_json).context("netlist is not JSON")?;
    let mut out = HashMap::new();
    for m in v["modules"]
        .as_object()
        .into_iter()
        .flat_map(|m| m.values())
    {
        for (name, c) in m["cells"].as_object().into_iter().flat_map(|c| c.iter()) {
            if c["type"] != "SB_MAC16" {
                continue;
            }
            let p = &c["parameters"];
            let on = |k: &str| p[k].as_str().map_or(false, |s| s.contains('1'));
            // output select 01 is the accumulator register
            let out_reg = |k: &str| p[k].as_str().map_or(false, |s| s.ends_with("01"));
            let internal = [
                "TOP_8x8_MULT_REG",
                "BOT_8x8_MULT_REG",
                "PIPELINE_16x16_MULT_REG1",
                "PIPELINE_16x16_MULT_REG2",
            ]
            .iter()
            .any(|r| on(r))
                || out_reg("TOPOUTPUT_SELECT")
                || out_reg("BOTOUTPUT_SELECT");
            let inputs = ['A', 'B', 'C', 'D']
                .into_iter()
                .filter(|g| on(&format!("{g}_REG")))
                .collect();
            out.insert(format!("{name}_DSP"), MacRegisters { inputs, internal });
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "sta_tests.rs"]
mod tests;
