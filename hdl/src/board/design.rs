//! What the flow builds: the network of a spec, or a stand-in with the same host-link ports
//! (for testing the flow on its own). Verilog of the bare design and of a board top around it.

use crate::board_top::{clock_source, clocks_per_bit, ClockError};
use crate::boards::BoardInfo;
use crate::echo_standin::EchoStandIn;
use crate::echo_top::EchoBoardTop;
use crate::ice40_pll::ClockSource;
use crate::network::Network;
use crate::network_top::{NetworkBoardTop, ResidentBoardTop};
use crate::resident::ResidentNetwork;
use edgeflow_core::Spec;
use rust_hdl::prelude::*;

#[derive(Clone, Debug)]
pub enum Inner {
    Network(Spec),
    /// The network with its data set resident in the board's memory (resident.rs).
    Resident(Spec),
    /// The echo stand-in (answers each word plus one).
    Echo,
}

impl Inner {
    /// The most multipliers the design may put in DSP cells (its spec's `dsp_multipliers`).
    pub fn dsp_multipliers(&self) -> Option<usize> {
        match self {
            Inner::Network(s) | Inner::Resident(s) => s.dsp_multipliers,
            Inner::Echo => None,
        }
    }

    pub fn name(&self) -> String {
        match self {
            Inner::Network(s) => s.name.clone(),
            Inner::Resident(s) => format!("{}-resident", s.name),
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
            Inner::Echo => Inner::Echo,
        }
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
    }
}

/// A board top around the design: Verilog, the clock the design runs at, UART clocks per bit.
pub struct BoardTopVerilog {
    pub verilog: String,
    pub mhz: f64,
    pub clocks_per_bit: u16,
    pub source: ClockSource,
}

pub fn board_top_verilog(
    inner: &Inner,
    b: &BoardInfo,
    want_mhz: f64,
    baud: u32,
) -> Result<BoardTopVerilog, DesignError> {
    let (source, mhz) = clock_source(b, want_mhz)?;
    let cpb = clocks_per_bit(mhz, baud)?;
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
            let net = ResidentNetwork::new(spec, kind, words);
            let mut t = ResidentBoardTop::new(net, source.clone(), cpb, b.led_active_low);
            t.connect_all();
            generate_verilog_unchecked(&t)
        }
    };
    Ok(BoardTopVerilog {
        verilog,
        mhz,
        clocks_per_bit: cpb,
        source,
    })
}
