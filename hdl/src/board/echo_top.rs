//! The echo stand-in on a board: the whole board path (PLL, power-on hold, UART, word
//! bridge) without the network, for the FPGA flow and serial transport tests.

use crate::echo_standin::EchoStandIn;
use rust_hdl::prelude::*;

crate::board_top!(EchoBoardTop, EchoStandIn);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ice40_pll::ClockSource;
    use crate::sim_util::tick;
    use crate::uart_frames::{frame, payload, units};
    use crate::uart_link::{bytes_to_words, words_to_bytes};
    use crate::uart_rx::serialize_bytes;
    use crate::uart_tx::deserialize_line;

    #[test]
    fn words_go_through_the_board_top_over_the_uart() {
        let cpb = 4;
        let mut top = EchoBoardTop::new(EchoStandIn::default(), ClockSource::Direct, cpb, true);
        top.connect_all();
        let words = [0x0001u16, 0xBEEF, 0xFFFF];
        let mut line = vec![true; 30];
        line.extend(serialize_bytes(
            &words_to_bytes(&frame(&words)),
            cpb as usize,
        ));
        line.extend(vec![true; 1500]);
        let mut tx = vec![];
        for level in line {
            top.uart_rx.next = level;
            tick(&mut top, |t| &mut t.clk_osc);
            tx.push(top.uart_tx.val());
            // LED is active low: off (high) while no error.
            assert!(top.led_error.val());
        }
        let back = bytes_to_words(&deserialize_line(&tx, cpb as usize));
        let units = units(&back).unwrap();
        assert_eq!(payload(&units), (vec![0x0002, 0xBEF0, 0x0000], 1, 0));
    }

    #[test]
    fn verilog_has_the_board_ports() {
        let mut top = EchoBoardTop::new(EchoStandIn::default(), ClockSource::Direct, 104, true);
        top.connect_all();
        let v = generate_verilog(&top);
        for p in crate::boards::TOP_PORTS {
            assert!(v.contains(p), "{p}");
        }
    }
}
