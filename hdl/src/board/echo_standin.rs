//! A stand-in for the network with the host-link ports: it answers every word with the word
//! plus one, through a one-word register. It lets the UART, board tops, Verilator harness and
//! FPGA flow be tested on their own, independent of the network's datapath.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct EchoStandIn {
    pub clock: Signal<In, Clock>,
    pub in_data: Signal<In, Bits<16>>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub out_data: Signal<Out, Bits<16>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    held: DFF<Bits<16>>,
    full: DFF<Bit>,
}

impl Logic for EchoStandIn {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, held, full);
        self.out_data.next = self.held.q.val();
        self.out_valid.next = self.full.q.val();
        // Takes a word when empty or when the held word leaves on this clock.
        self.in_ready.next = !self.full.q.val() | self.out_ready.val();
        if self.full.q.val() & self.out_ready.val() {
            self.full.d.next = false;
        }
        if self.in_valid.val() & (!self.full.q.val() | self.out_ready.val()) {
            self.held.d.next = self.in_data.val() + 1;
            self.full.d.next = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host_stream::run_words;

    #[test]
    fn answers_each_word_plus_one_under_back_pressure() {
        let words: Vec<u16> = vec![1, 2, 0xFFFF, 0x1234, 7];
        let mut uut = EchoStandIn::default();
        uut.connect_all();
        let (out, _clocks) = run_words(&mut uut, &words, words.len(), 3, 10_000).unwrap();
        let want: Vec<u16> = words.iter().map(|w| w.wrapping_add(1)).collect();
        assert_eq!(out, want);
    }
}

impl crate::host_stream::HostLinkPorts for EchoStandIn {
    crate::host_link_ports_impl!();
}
