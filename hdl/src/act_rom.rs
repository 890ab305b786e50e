//! Activation look-up ROM: σ and σ′ of a saturated pre-activation, contents generated from
//! `edgeflow_core::fixed::ActivationTable` (the only place the sigmoid is evaluated); ReLU is
//! a comparison and σ′ its gate.

use crate::fixed::{b16, s16};
use edgeflow_core::fixed::{activate, Activation, ActivationTable};
use rust_hdl::core::prelude::*;

/// Verilog function `act_<name>(h) -> {σ, σ′}` (32 bits: σ in the high half).
pub fn verilog_function(name: &str, act: Activation, t: &ActivationTable) -> String {
    match act {
        Activation::Relu => format!(
            "
function [31:0] act_{name};
    input signed [15:0] h;
    begin
        if (h > 0) act_{name} = {{h, 16'd1}};
        else act_{name} = 32'd0;
    end
endfunction
"
        ),
        Activation::Sigmoid => {
            let drop = t.drop_bits();
            let bits = t.index_bits;
            let mut cases = String::new();
            for i in 0..t.sigma.len() {
                cases += &format!(
                    "        {bits}'d{i}: act_{name} = {{16'h{:04x}, 16'h{:04x}}};\n",
                    t.sigma[i] as u16, t.sigma_prime[i] as u16
                );
            }
            format!(
                "
function [31:0] act_{name};
    input signed [15:0] h;
    reg [{hb}:0] idx;
    reg signed [15:0] hs;
    begin
        hs = h >>> {drop};
        idx = hs[{hb}:0] ^ {half};
        case (idx)
{cases}        default: act_{name} = 32'd0;
        endcase
    end
endfunction
",
                hb = bits - 1,
                half = format!("{bits}'d{}", 1u32 << (bits - 1)),
            )
        }
    }
}

/// The ROM as a block (combinational, like a LUT ROM; the junction inlines the same function).
#[derive(LogicBlock)]
pub struct ActivationRom {
    pub h: Signal<In, Bits<16>>,
    pub a: Signal<Out, Bits<16>>,
    pub sp: Signal<Out, Bits<16>>,
    _act: Activation,
    _table: ActivationTable,
}

impl ActivationRom {
    pub fn new(act: Activation, table: ActivationTable) -> Self {
        ActivationRom {
            h: Default::default(),
            a: Default::default(),
            sp: Default::default(),
            _act: act,
            _table: table,
        }
    }
}

impl Logic for ActivationRom {
    fn update(&mut self) {
        let (a, sp) = activate(self._act, &self._table, s16(self.h.val()));
        self.a.next = b16(a);
        self.sp.next = b16(sp);
    }
    fn connect(&mut self) {
        self.a.connect();
        self.sp.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "{}\nalways @(*) begin\n    a = act_rom(h) >> 16;\n    sp = act_rom(h);\nend\n",
            verilog_function("rom", self._act, &self._table)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{settle, yosys_check};
    use edgeflow_core::fixed::Format;

    #[test]
    fn rom_matches_the_table_for_every_input() {
        for (act, f) in [
            (Activation::Sigmoid, Format::new(2, 7)),
            (Activation::Relu, Format::new(2, 7)),
            (Activation::Sigmoid, Format::new(3, 4)),
        ] {
            let t = ActivationTable::sigmoid(f);
            let mut rom = ActivationRom::new(act, t.clone());
            rom.connect_all();
            for h in f.min()..=f.max() {
                rom.h.next = b16(h);
                settle(&mut rom);
                assert_eq!(
                    (s16(rom.a.val()), s16(rom.sp.val())),
                    activate(act, &t, h),
                    "h = {h}"
                );
            }
        }
    }

    #[test]
    fn rom_verilog_is_clean() {
        let f = Format::new(2, 7);
        yosys_check(
            &ActivationRom::new(Activation::Sigmoid, ActivationTable::sigmoid(f)),
            "act_rom_sigmoid",
        );
        yosys_check(
            &ActivationRom::new(Activation::Relu, ActivationTable::sigmoid(f)),
            "act_rom_relu",
        );
    }
}
