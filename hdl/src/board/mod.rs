//! Board tops: the network or a stand-in wrapped with its clock (PLL, MMCM or divider),
//! power-on hold and UART host link, the boards they are built for (boards/*.toml), and
//! what the flow builds.

pub mod board_top;
pub mod boards;
pub mod design;
pub mod echo_standin;
pub mod echo_top;
pub mod ecp5_pll;
pub mod ice40_pll;
pub mod linked_top;
pub mod network_top;
pub mod pty_bridge;
pub mod sdram_top;
pub mod verilator_uart;
