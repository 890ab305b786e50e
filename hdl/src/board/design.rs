//! What the flow builds: the network of a spec, or a stand-in with the same host-link ports
//! (for testing the flow on its own). Verilog of the bare design and of a board top around it.

use crate::board_top::{clock_source, clocks_per_bit, ClockError};
use crate::boards::constraints_with;
use crate::boards::BoardInfo;
use crate::echo_standin::EchoStandIn;
use crate::echo_top::EchoBoardTop;
use crate::ice40_pll::ClockSource;
use crate::linked_top::{link_port_pins, linked_verilog, LinkedDesign};
use crate::network::Network;
use crate::network_top::{NetworkBoardTop, ResidentBoardTop};
use crate::sdram_top::ResidentSdramBoardTop;
use crate::with_memory::{ResidentOnChip, ResidentSdram};
use edgeflow_core::Spec;
use rust_hdl::prelude::*;

#[derive(Clone, Debug)]
pub enum Inner {
    Network(Spec),
    /// The network with its data set resident in the board's memory (resident.rs).
    Resident(Spec),
    /// The echo stand-in (answers each word plus one).
    Echo,
    /// One board of a linked chain (link/linked_board.rs), with its link pins.
    Linked(Box<LinkedDesign>),
}

impl Inner {
    /// The most multipliers the design may put in DSP cells (its spec's `dsp_multipliers`).
    pub fn dsp_multipliers(&self) -> Option<usize> {
        match self {
            Inner::Network(s) | Inner::Resident(s) => s.dsp_multipliers,
            Inner::Linked(d) => d.spec.dsp_multipliers,
            Inner::Echo => None,
        }
    }

    /// The spec whose network (or part of it) the design is.
    pub fn spec(&self) -> Option<&Spec> {
        match self {
            Inner::Network(s) | Inner::Resident(s) => Some(s),
            Inner::Linked(d) => Some(&d.spec),
            Inner::Echo => None,
        }
    }

    pub fn name(&self) -> String {
        match self {
            Inner::Network(s) => s.name.clone(),
            Inner::Resident(s) => format!("{}-resident", s.name),
            Inner::Linked(d) => format!("{}-stage{}", d.spec.name, d.stage + 1),
            Inner::Echo => "echo-standin".into(),
        }
    }

    /// The design as built for board `b`: with registered reads where the board asks for
    /// them (`BoardInfo::registered_reads`), and the deep pipeline where it asks for that.
    pub fn for_board(self, b: &BoardInfo) -> Inner {
        match self {
            Inner::Network(mut s) => {
                s.registered_reads |= b.registered_reads;
                s.deep_pipeline |= b.deep_pipeline;
                Inner::Network(s)
            }
            Inner::Resident(mut s) => {
                s.registered_reads |= b.registered_reads;
                s.deep_pipeline |= b.deep_pipeline;
                Inner::Resident(s)
            }
            // a linked design's spec is the one its chain was scheduled with, built for
            // its board already
            Inner::Linked(d) => Inner::Linked(d),
            Inner::Echo => Inner::Echo,
        }
    }

    /// The constraint file of the board top around the design on `b` (with a linked
    /// board's link pins) and its extension.
    pub fn constraints(&self, b: &BoardInfo) -> Result<(String, &'static str), DesignError> {
        let extra = match self {
            Inner::Linked(d) => link_port_pins(b, d.has_prev(), d.has_next())
                .map_err(|message| DesignError::Linked { message })?,
            Inner::Resident(_) => b.sdram.map(|s| s.pins()).unwrap_or_default(),
            _ => vec![],
        };
        Ok(constraints_with(b, &extra))
    }
}

/// Why a design's Verilog cannot be generated.
#[derive(Debug, thiserror::Error)]
pub enum DesignError {
    #[error("{spec}: a resident design is built for a board (its data memory is the board's)")]
    ResidentNeedsBoard { spec: String },
    #[error(transparent)]
    Clock(#[from] ClockError),
    #[error(transparent)]
    Board(#[from] crate::boards::BoardError),
    #[error("{message}")]
    Linked { message: String },
}

/// Verilog of the design alone, top module `top` with the host-link ports.
pub fn inner_verilog(inner: &Inner) -> Result<String, DesignError> {
    match inner {
        Inner::Echo => {
            let mut e = EchoStandIn::default();
            e.connect_all();
            Ok(generate_verilog(&e))
        }
        Inner::Network(spec) => Ok(crate::network::verilog(spec)),
        Inner::Resident(spec) => Err(DesignError::ResidentNeedsBoard {
            spec: spec.name.clone(),
        }),
        Inner::Linked(d) => {
            linked_verilog(d, None).map_err(|message| DesignError::Linked { message })
        }
    }
}

/// A board top around the design: Verilog, the clock the design runs at, UART clocks per bit.
pub struct BoardTopVerilog {
    pub verilog: String,
    pub mhz: f64,
    pub clocks_per_bit: u16,
    pub source: ClockSource,
    /// The top has the board's SDRAM pins (a resident design on a board with SDRAM).
    pub sdram: bool,
}

pub fn board_top_verilog(
    inner: &Inner,
    b: &BoardInfo,
    want_mhz: f64,
    baud: u32,
) -> Result<BoardTopVerilog, DesignError> {
    let (source, mhz) = clock_source(b, want_mhz)?;
    let cpb = clocks_per_bit(mhz, baud)?;
    let sdram = matches!(inner, Inner::Resident(_)) && b.sdram.is_some();
    let verilog = match inner {
        Inner::Echo => {
            let mut t = EchoBoardTop::new(
                EchoStandIn::default(),
                source.clone(),
                cpb,
                b.led_active_low,
            );
            t.connect_all();
            generate_verilog(&t)
        }
        Inner::Network(spec) => {
            let mut t =
                NetworkBoardTop::new(Network::new(spec), source.clone(), cpb, b.led_active_low);
            t.connect_all();
            generate_verilog_unchecked(&t)
        }
        Inner::Resident(spec) => {
            let (kind, words) = crate::data_memory::for_board(b)?;
            if sdram {
                let net = ResidentSdram::new(spec, mhz);
                let mut t = ResidentSdramBoardTop::new(net, source.clone(), cpb, b.led_active_low);
                t.connect_all();
                generate_verilog_unchecked(&t)
            } else {
                let net = ResidentOnChip::new(spec, kind, words);
                let mut t = ResidentBoardTop::new(net, source.clone(), cpb, b.led_active_low);
                t.connect_all();
                generate_verilog_unchecked(&t)
            }
        }
        Inner::Linked(d) => {
            link_port_pins(b, d.has_prev(), d.has_next())
                .map_err(|message| DesignError::Linked { message })?;
            linked_verilog(d, Some((source.clone(), cpb, b.led_active_low)))
                .map_err(|message| DesignError::Linked { message })?
        }
    };
    Ok(BoardTopVerilog {
        verilog,
        mhz,
        clocks_per_bit: cpb,
        source,
        sdram,
    })
}
