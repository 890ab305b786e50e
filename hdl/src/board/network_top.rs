//! The network on a board: the board top around `Network`, and its host-link ports for the
//! shared stream driver.

use crate::network::Network;
use rust_hdl::prelude::*;

crate::board_top!(NetworkBoardTop, Network);
crate::board_top!(ResidentBoardTop, crate::with_memory::ResidentOnChip);

impl crate::host_stream::HostLinkPorts for Network {
    crate::host_link_ports_impl!();
}
