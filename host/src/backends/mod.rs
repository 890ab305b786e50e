//! Every backend in one table: its name, what it computes, which commands can use it, what
//! it needs, its help line and how it opens. `--backend` and `--backends` are parsed against
//! this table, their help and errors list its names, and every command opens its backend
//! through it: a new backend is one entry in [`BACKENDS`].

mod engine;

use crate::board::{reference::ReferenceBoard, Board};
use anyhow::{anyhow, bail, Result};
use edgeflow_core::Spec;
pub use engine::{sparse_edge_ops, Engine, FloatNet};
use std::fmt;

/// What a command does with a backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    /// `train --backend`: train from the spec's initial state or a model.
    Train,
    /// `eval --backend`: infer with a saved (fixed-point) model.
    Eval,
    /// `bench --backends`: timed training and inference.
    Bench,
    /// `train --plan --backend`: the plan's boards as a pipeline of stages.
    Plan,
    /// `train --resident --backend`: a board top that keeps the data set on chip.
    Resident,
}

impl Use {
    fn command(self) -> &'static str {
        match self {
            Use::Train => "train",
            Use::Eval => "eval",
            Use::Bench => "bench",
            Use::Plan => "train --plan",
            Use::Resident => "train --resident",
        }
    }
}

/// What a backend computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The reference model's bits, on any hardware.
    BitExact,
    /// A floating-point network, for comparison of accuracy and speed.
    Float,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::BitExact => "bit-exact",
            Kind::Float => "float",
        }
    }
}

/// What a backend needs besides this host's CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    Cpu,
    OpenCl,
    /// A program on PATH.
    Tool(&'static str),
    /// A board on a serial port.
    Board,
}

/// How a backend is opened beyond the spec: the knobs some backends take.
#[derive(Clone, Debug)]
pub struct Options {
    /// The staleness to train with (a saved model's or a plan's); `None`: the spec's own.
    pub staleness: Option<Vec<usize>>,
    /// Samples per SGD step of the mini-batch baseline.
    pub batch: usize,
    /// Threads of a backend that can use several (the reference, dense-minibatch); `None`:
    /// its own default.
    pub threads: Option<usize>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            staleness: None,
            batch: 32,
            threads: None,
        }
    }
}

impl Options {
    fn staleness(&self, spec: &Spec) -> Vec<usize> {
        self.staleness
            .clone()
            .unwrap_or_else(|| spec.default_staleness())
    }
}

/// One entry of the table.
pub struct Backend {
    pub name: &'static str,
    /// What may follow `name:` and whether it must (`opencl[:DEVICE]`, `serial:PORT[@BAUD]`).
    pub arg: Option<(&'static str, bool)>,
    pub kind: Kind,
    pub uses: &'static [Use],
    pub needs: Needs,
    /// One of the CPU references: `bench` always measures the float ones, lists them first,
    /// gives their rate in CPU time too, and trains them itself for `--to-accuracy`.
    pub cpu_reference: bool,
    /// Whether it trains on several threads (`--threads`).
    pub threads: bool,
    pub help: &'static str,
    /// What it cannot do and why, said when a command refuses it.
    pub limits: &'static str,
    pub open: fn(&Spec, Option<&str>, &Options) -> Result<Engine>,
    /// How it runs a plan's stages as a chain of boards (`train --plan`), if it can.
    pub pipeline: Option<fn(&Pipeline) -> Result<(Box<dyn Board>, Timings)>>,
}

/// What a backend needs to run a plan: its stages (first and last junction, 0-based) and
/// the links between them.
pub struct Pipeline<'a> {
    pub spec: &'a Spec,
    pub stages: &'a [(usize, usize)],
    pub link_delay: &'a [usize],
    pub plan: &'a edgeflow_planner::report::PlanFile,
    /// How errors name the plan (its file).
    pub plan_name: &'a str,
    /// What followed the backend's `:`.
    pub arg: Option<&'a str>,
}

/// What each stage of a pipeline measured while it ran.
pub type Timings = std::sync::Arc<std::sync::Mutex<Vec<crate::multiboard::StageTiming>>>;

impl Backend {
    /// How `--help` writes the name: `opencl[:DEVICE]`, `serial:PORT[@BAUD]`.
    pub fn usage(&self) -> String {
        match self.arg {
            None => self.name.into(),
            Some((a, true)) => format!("{}:{a}", self.name),
            Some((a, false)) => format!("{}[:{a}]", self.name),
        }
    }

    pub fn can(&self, u: Use) -> bool {
        self.uses.contains(&u)
    }
}

use Use::*;

pub static BACKENDS: &[Backend] = &[
    Backend {
        name: "reference",
        arg: None,
        kind: Kind::BitExact,
        uses: &[Train, Eval, Bench, Plan],
        needs: Needs::Cpu,
        cpu_reference: true,
        threads: true,
        help: "the bit-exact reference model (a plan: one thread per board)",
        limits: "",
        open: |spec, _, o| {
            let b = ReferenceBoard::new(spec, o.staleness(spec))?.with_threads(o.threads);
            Ok(Engine::Board(Box::new(b)))
        },
        pipeline: Some(crate::plan_cmd::reference_pipeline),
    },
    Backend {
        name: "float",
        arg: None,
        kind: Kind::Float,
        uses: &[Train, Bench],
        needs: Needs::Cpu,
        cpu_reference: true,
        threads: false,
        help: "f64 SGD on the same sparse network, for accuracy comparison",
        limits: "float SGD has no fixed-point state: it cannot run a saved model, save one or train a plan",
        open: |spec, _, _| Ok(Engine::float(edgeflow_reference::FloatReference::new(spec))),
        pipeline: None,
    },
    Backend {
        name: "sparse-f32",
        arg: None,
        kind: Kind::Float,
        uses: &[Bench],
        needs: Needs::Cpu,
        cpu_reference: true,
        threads: true,
        help: "f32 SGD on the same sparse network, the fast CPU baseline (--threads above 1: Hogwild!)",
        limits: "it is a speed baseline for bench",
        open: |spec, _, o| {
            let net = edgeflow_reference::SparseF32::new(spec).with_threads(o.threads.unwrap_or(1));
            Ok(Engine::float(net))
        },
        pipeline: None,
    },
    Backend {
        name: "dense",
        arg: None,
        kind: Kind::Float,
        uses: &[Bench],
        needs: Needs::Cpu,
        cpu_reference: true,
        threads: false,
        help: "the fully connected f32 network of the same layer sizes, batch 1",
        limits: "it is another network, a speed baseline for bench",
        open: |spec, _, _| Ok(Engine::float(edgeflow_reference::DenseReference::new(spec))),
        pipeline: None,
    },
    Backend {
        name: "dense-minibatch",
        arg: None,
        kind: Kind::Float,
        uses: &[Bench],
        needs: Needs::Cpu,
        cpu_reference: true,
        threads: true,
        help: "the dense network with mini-batch SGD on a GEMM (--batch, --threads)",
        limits: "it is another network, a speed baseline for bench",
        open: |spec, _, o| {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let m = edgeflow_reference::DenseMiniBatch::new(spec, o.batch, o.threads.unwrap_or(cores));
            Ok(Engine::float(m))
        },
        pipeline: None,
    },
    Backend {
        name: "opencl",
        arg: Some(("DEVICE", false)),
        kind: Kind::BitExact,
        uses: &[Train, Eval, Bench, Plan],
        needs: Needs::OpenCl,
        cpu_reference: false,
        threads: false,
        help: "the OpenCL kernels on a device (see `edgeflow devices`; a plan: stage i on device i)",
        limits: "",
        open: |spec, dev, o| {
            let b = crate::board::opencl::OpenClBoard::new(spec, o.staleness(spec), dev)?;
            Ok(Engine::Board(Box::new(b)))
        },
        pipeline: Some(crate::plan_cmd::opencl_pipeline),
    },
    Backend {
        name: "rtl",
        arg: None,
        kind: Kind::BitExact,
        uses: &[Train, Eval, Bench, Plan],
        needs: Needs::Cpu,
        cpu_reference: false,
        threads: false,
        help: "the RTL in rust-hdl simulation (a plan: one simulated stage per board)",
        limits: "",
        open: |spec, _, _| {
            let b = crate::board::rtl::RtlBoard::new(spec)?;
            Ok(Engine::Board(Box::new(b)))
        },
        pipeline: Some(crate::plan_cmd::rtl_pipeline),
    },
    Backend {
        name: "verilator",
        arg: None,
        kind: Kind::BitExact,
        uses: &[Train, Eval, Bench, Resident],
        needs: Needs::Tool("verilator"),
        cpu_reference: false,
        threads: false,
        help: "the emitted Verilog, compiled by Verilator",
        limits: "",
        open: |spec, _, _| Ok(Engine::Board(Box::new(crate::board::verilator::open(spec)?))),
        pipeline: None,
    },
    Backend {
        name: "serial",
        arg: Some(("PORT[@BAUD]", true)),
        kind: Kind::BitExact,
        uses: &[Train, Eval, Bench, Resident],
        needs: Needs::Board,
        cpu_reference: false,
        threads: false,
        help: "a board on a serial port, e.g. serial:/dev/ttyUSB1@3000000",
        limits: "",
        open: |spec, port, _| {
            let s = format!("serial:{}", port.unwrap_or_default());
            let (port, baud) = crate::board::serial::parse_backend(&s).ok_or_else(|| {
                anyhow!("bad serial backend '{s}'; use serial:/dev/ttyUSB1 or serial:/dev/ttyUSB1@BAUD")
            })?;
            let link = crate::board::serial::open(&port, baud)?;
            let b = crate::board::hostlink::HostLinkBoard::with_initial_state(spec, link)?;
            Ok(Engine::Board(Box::new(b)))
        },
        pipeline: None,
    },
];

/// A backend as given on the command line: its entry and what followed the `:`.
#[derive(Clone)]
pub struct Choice {
    pub backend: &'static Backend,
    pub arg: Option<String>,
}

impl fmt::Debug for Choice {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for Choice {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match &self.arg {
            Some(a) => write!(f, "{}:{a}", self.backend.name),
            None => f.write_str(self.backend.name),
        }
    }
}

impl PartialEq for Choice {
    fn eq(&self, o: &Choice) -> bool {
        self.to_string() == o.to_string()
    }
}

impl Choice {
    pub fn name(&self) -> &'static str {
        self.backend.name
    }

    pub fn kind(&self) -> Kind {
        self.backend.kind
    }

    pub fn open(&self, spec: &Spec, o: &Options) -> Result<Engine> {
        Ok(match (self.backend.open)(spec, self.arg.as_deref(), o)? {
            Engine::Float(_, net) => Engine::Float(self.backend.name, net),
            board => board,
        })
    }

    /// Opens a backend that must be a board (`eval` loads a saved state into it).
    pub fn open_board(&self, spec: &Spec, o: &Options) -> Result<Box<dyn Board>> {
        match self.open(spec, o)? {
            Engine::Board(b) => Ok(b),
            Engine::Float(..) => bail!("{self} is not a board"),
        }
    }

    /// Refuses a backend `u` cannot use, naming the ones it can.
    pub fn check(&self, flag: &str, u: Use) -> Result<&Self> {
        if self.backend.can(u) {
            return Ok(self);
        }
        let why = match self.backend.limits {
            "" => String::new(),
            l => format!(" ({l})"),
        };
        bail!(
            "{flag} {self}: edgeflow {} runs on backend {}, not '{}'{why}",
            u.command(),
            names(u),
            self.backend.name
        )
    }
}

/// The names `u` can use, as `--help` and the errors list them.
pub fn names(u: Use) -> String {
    let v: Vec<String> = BACKENDS
        .iter()
        .filter(|b| b.can(u))
        .map(Backend::usage)
        .collect();
    match v.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => v.join(""),
    }
}

/// Every name in the table, for an unknown one's error.
fn all_names() -> String {
    let v: Vec<String> = BACKENDS.iter().map(Backend::usage).collect();
    let (last, rest) = v.split_last().expect("the table has entries");
    format!("{} and {last}", rest.join(", "))
}

pub fn find(name: &str) -> Option<&'static Backend> {
    BACKENDS.iter().find(|b| b.name == name)
}

/// `NAME` or `NAME:ARG`, checked against the table.
pub fn parse(s: &str) -> Result<Choice> {
    let s = s.trim();
    let (name, arg) = match s.split_once(':') {
        Some((n, a)) => (n, Some(a)),
        None => (s, None),
    };
    let Some(backend) = find(name) else {
        bail!("unknown backend '{s}'; the backends are {}", all_names());
    };
    match (backend.arg, arg) {
        (None, Some(_)) => bail!("backend '{s}': {name} takes nothing after a ':'"),
        (Some((what, true)), None | Some("")) => {
            bail!("backend '{s}': name the {what}: {}", backend.usage())
        }
        (Some((what, _)), Some("")) => {
            bail!(
                "backend '{s}': the ':' names no {}; drop it or name one",
                what.to_lowercase()
            )
        }
        _ => {}
    }
    Ok(Choice {
        backend,
        arg: arg.map(str::to_string),
    })
}

/// A clap parser for a `--backend` that some of `uses` can take (the command checks which
/// one it runs with [`Choice::check`]).
pub fn parser(uses: &'static [Use]) -> impl Fn(&str) -> Result<Choice, String> + Clone {
    move |s: &str| {
        let c = parse(s).map_err(|e| e.to_string())?;
        match uses.iter().find(|&&u| c.backend.can(u)) {
            Some(_) => Ok(c),
            None => Err(c.check("--backend", uses[0]).unwrap_err().to_string()),
        }
    }
}

/// `--backend`'s help: what each backend a command with `uses` can take computes.
pub fn help(what: &str, uses: &[Use]) -> String {
    let lines: Vec<String> = BACKENDS
        .iter()
        .filter(|b| uses.iter().any(|&u| b.can(u)))
        .map(|b| {
            let only: Vec<&str> = uses
                .iter()
                .filter(|&&u| b.can(u))
                .map(|u| u.command())
                .collect();
            let only = if uses.len() > 1 && only.len() < uses.len() {
                format!(" [{}]", only.join(", "))
            } else {
                String::new()
            };
            format!("  {}: {}{only}", b.usage(), b.help)
        })
        .collect();
    format!("{what}\n{}", lines.join("\n"))
}

/// The CPU references that are float networks: `bench` measures them on every run.
pub fn float_baselines() -> impl Iterator<Item = &'static Backend> {
    BACKENDS
        .iter()
        .filter(|b| b.cpu_reference && b.kind == Kind::Float)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back_to_its_entry() {
        for b in BACKENDS {
            let given = match b.arg {
                Some(_) => format!("{}:x", b.name),
                None => b.name.to_string(),
            };
            let c = parse(&given).unwrap();
            assert!(std::ptr::eq(c.backend, b), "{given}");
            assert_eq!(c.to_string(), given);
        }
        assert_eq!(parse("opencl").unwrap().arg, None);
        assert_eq!(parse("opencl:1").unwrap().arg.as_deref(), Some("1"));
        let e = |s: &str| parse(s).unwrap_err().to_string();
        assert!(e("nope").contains("unknown backend 'nope'; the backends are reference, float,"));
        assert!(
            e("serial").contains("serial:PORT[@BAUD]"),
            "{}",
            e("serial")
        );
        assert!(e("rtl:3").contains("takes nothing after a ':'"));
        assert!(e("opencl:").contains("names no device"));
    }

    /// A backend that runs plans has a pipeline, and only such a backend.
    #[test]
    fn the_table_is_consistent() {
        for b in BACKENDS {
            assert_eq!(b.can(Use::Plan), b.pipeline.is_some(), "{}", b.name);
            assert_eq!(b.kind == Kind::Float, !b.limits.is_empty(), "{}", b.name);
            assert!(!b.help.is_empty() && !b.uses.is_empty(), "{}", b.name);
        }
        let names: Vec<&str> = BACKENDS.iter().map(|b| b.name).collect();
        let mut unique = names.clone();
        unique.dedup();
        assert_eq!(names, unique);
    }

    #[test]
    fn commands_take_what_their_use_allows() {
        let eval = parser(&[Use::Eval]);
        assert!(eval("rtl").is_ok());
        let refused = eval("float").unwrap_err();
        assert!(refused.starts_with("--backend float: edgeflow eval runs on backend reference, opencl[:DEVICE], rtl, verilator or serial:PORT[@BAUD], not 'float'"), "{refused}");
        assert!(parser(&[Use::Bench])("dense-minibatch").is_ok());
        assert!(parser(&[Use::Train, Use::Resident])("dense").is_err());
        let plan = parse("verilator").unwrap();
        assert!(plan.check("--backend", Use::Plan).is_err());
        assert_eq!(names(Use::Plan), "reference, opencl[:DEVICE] or rtl");
        let float: Vec<&str> = float_baselines().map(|b| b.name).collect();
        assert_eq!(float, ["float", "sparse-f32", "dense", "dense-minibatch"]);
    }

    #[test]
    fn a_float_backend_opens_with_its_name() {
        let spec = edgeflow_core::Spec::load(&crate::default_spec_path()).unwrap();
        for name in ["float", "sparse-f32", "dense"] {
            let e = parse(name)
                .unwrap()
                .open(&spec, &Options::default())
                .unwrap();
            assert!(matches!(e, Engine::Float(n, _) if n == name));
        }
        let r = parse("reference")
            .unwrap()
            .open(&spec, &Options::default())
            .unwrap();
        assert!(matches!(r, Engine::Board(_)));
    }
}
