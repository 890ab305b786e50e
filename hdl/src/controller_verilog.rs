//! Verilog of the controller (see controller.rs).
use crate::controller::CtrlParams;

pub fn verilog(_p: &CtrlParams) -> String {
    String::new()
}
