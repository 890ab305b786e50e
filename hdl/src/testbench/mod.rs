//! The RTL testbench: the rust-hdl datapath (one board, or a chain of stages) clocked in
//! rust-hdl's simulation through its host link, and compared against the reference model
//! (edgeflow-reference).

pub mod error;
pub mod linked_boards;
pub mod linked_chain;
pub mod linked_verilator;
pub mod rtl;
pub mod rtl_stage;
