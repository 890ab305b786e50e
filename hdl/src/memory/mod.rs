//! The memories: banked weight RAM, the copy memories of activations and σ′, the delta
//! memory, and the resident data memory of a board top.

pub mod banked_ram;
pub mod copy_memory;
pub mod data_memory;
pub mod delta_memory;
