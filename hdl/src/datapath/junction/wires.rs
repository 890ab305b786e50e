//! The junction's wiring, written once: the simulation, `connect()` and the Verilog
//! (crate::wiring).

use super::words::{BpWord, RdWord, UpWord};
use super::Junction;
use crate::params::JunctionParams;
use crate::wiring::Wires;
use crate::{at, to};
use rust_hdl::core::prelude::*;

impl Junction {
    /// The junction's connections (`in_lanes` extra input lanes, `left` groups on the left
    /// port): the simulation, `connect()` and the Verilog.
    pub(super) fn wire<W: Wires<Self>>(
        p: &JunctionParams,
        in_lanes: usize,
        left: usize,
        w: &mut W,
    ) {
        let (z, g, deep) = (p.z, p.groups, p.deep_pipeline);
        let clock = at!(w, clock);
        // sequencer and interleaver
        w.set(to!(seq.clock), clock.clone());
        w.set(to!(seq.adv), at!(w, adv));
        w.set(to!(seq.last), at!(w, last));
        w.set(to!(seq.step), at!(w, step));
        w.set(to!(seq.k), at!(w, k));
        w.set(to!(seq.restart), at!(w, restart));
        w.set(to!(seq.ff_en), at!(w, ff_en));
        w.set(to!(seq.bp_en), at!(w, bp_en));
        w.set(to!(seq.h_sel), at!(w, h_sel));
        w.set(to!(seq.h_addr), at!(w, h_addr));
        w.set(to!(agen.clock), clock.clone());
        w.set(to!(agen.adv), at!(w, adv));
        w.set(to!(agen.last), at!(w, last));
        // Read stage: what the memories give for clock k and that clock's control; with
        // registered reads it passes `rdp` and the arithmetic below runs at k + 1
        let rd = RdWord { z, g };
        let zero16 = w.lit(0, "16'd0");
        let mut src_w = vec![zero16.clone(); rd.count()];
        for l in 0..z {
            src_w[rd.w(l)] = at!(w, wmem.rdata[l]);
            src_w[rd.a(l)] = at!(w, amem.rd_data[l]);
            src_w[rd.u(l)] = at!(w, amem.rd_data[z + l]);
            src_w[rd.left(l)] = at!(w, agen.left[l]);
        }
        src_w[rd.k()] = at!(w, k);
        src_w[rd.row()] = at!(w, seq.row);
        for q in 0..g {
            src_w[rd.bias(q)] = at!(w, bmem.rdata[q]);
            if p.is_last() {
                // the output delta, sign-extended to a sum
                let o = at!(w, omem[0].rd_data[q]);
                src_w[rd.acc_hi(q)] = w.sign_fill16(&o);
                src_w[rd.acc_lo(q)] = o;
                src_w[rd.sp(q)] = zero16.clone();
            } else {
                let acc = at!(w, right[q].q_acc);
                src_w[rd.acc_lo(q)] = w.bits(&acc, 0, 15);
                src_w[rd.acc_hi(q)] = w.bits(&acc, 16, 31);
                src_w[rd.sp(q)] = at!(w, right[q].q_sp);
            }
        }
        let (run_bp, last_sub) = (at!(w, seq.run_bp), at!(w, seq.last_sub));
        let bp_clear = w.and(&run_bp, &last_sub);
        let src_b = [
            at!(w, seq.run_ff),
            at!(w, seq.first),
            last_sub,
            run_bp,
            bp_clear.clone(),
        ];
        w.set(to!(rdp.clock), clock.clone());
        let (mut dw, db): (Vec<W::V>, Vec<W::V>) = if p.registered_reads {
            for (i, b) in src_b.iter().enumerate() {
                w.set(to!(rdp.bit_in[i]), b.clone());
            }
            for (i, x) in src_w.iter().enumerate() {
                w.set(to!(rdp.word_in[i]), x.clone());
            }
            (
                (0..rd.count()).map(|i| at!(w, rdp.word[i])).collect(),
                (0..RdWord::BITS).map(|i| at!(w, rdp.bit[i])).collect(),
            )
        } else {
            (src_w, src_b.iter().map(|b| w.paren(b)).collect())
        };
        // sums from a delta memory that reads on the clock edge are already a clock late
        if p.registered_sums_right {
            for q in 0..g {
                let acc = at!(w, right[q].q_acc);
                dw[rd.acc_lo(q)] = w.bits(&acc, 0, 15);
                dw[rd.acc_hi(q)] = w.bits(&acc, 16, 31);
            }
        }
        // BP/UP pipeline registers: BP's deltas at clock k, the contributions and updates
        // of clock k's edges at k + 1 (a clock later with registered reads)
        let bw = BpWord { z, g };
        w.set(to!(bpp.clock), clock.clone());
        w.set(to!(bpp.bit_in[0]), db[RdWord::RUN_BP].clone());
        w.set(to!(bpp.bit_in[1]), db[RdWord::ROW_DONE].clone());
        w.set(to!(bpp.word_in[BpWord::K]), dw[rd.k()].clone());
        w.set(to!(bpp.word_in[BpWord::ROW]), dw[rd.row()].clone());
        for q in 0..g {
            w.set(to!(bpp.word_in[bw.d(q)]), at!(w, bp.delta[q]));
            w.set(to!(bpp.word_in[bw.bias(q)]), dw[rd.bias(q)].clone());
        }
        // with the deep pipeline the deltas come out of BP's own register
        let dq: Vec<W::V> = (0..g)
            .map(|q| {
                if deep {
                    at!(w, bp.delta[q])
                } else {
                    at!(w, bpp.word[bw.d(q)])
                }
            })
            .collect();
        for q in 0..g {
            w.set(to!(bp.dq[q]), dq[q].clone());
        }
        for l in 0..z {
            w.set(to!(bpp.word_in[bw.w(l)]), dw[rd.w(l)].clone());
            w.set(to!(bpp.word_in[bw.a(l)]), dw[rd.u(l)].clone());
            w.set(to!(bpp.word_in[bw.left(l)]), dw[rd.left(l)].clone());
        }
        // write-back stage of the weights and contributions: with the deep pipeline a
        // clock after `bpp`, through `upp`
        let uw = UpWord { z };
        w.set(to!(upp.clock), clock.clone());
        w.set(to!(bp.clock), clock.clone());
        w.set(to!(up.clock), clock.clone());
        let (wb_run, wb_k, wb_w, wb_left): (_, _, Vec<_>, Vec<_>) = if deep {
            w.set(to!(upp.bit_in[0]), at!(w, bpp.bit[0]));
            w.set(to!(upp.word_in[UpWord::K]), at!(w, bpp.word[BpWord::K]));
            for l in 0..z {
                w.set(to!(upp.word_in[uw.w(l)]), at!(w, bpp.word[bw.w(l)]));
                w.set(to!(upp.word_in[uw.left(l)]), at!(w, bpp.word[bw.left(l)]));
            }
            (
                at!(w, upp.bit[0]),
                at!(w, upp.word[UpWord::K]),
                (0..z).map(|l| at!(w, upp.word[uw.w(l)])).collect(),
                (0..z).map(|l| at!(w, upp.word[uw.left(l)])).collect(),
            )
        } else {
            (
                at!(w, bpp.bit[0]),
                at!(w, bpp.word[BpWord::K]),
                (0..z).map(|l| at!(w, bpp.word[bw.w(l)])).collect(),
                (0..z).map(|l| at!(w, bpp.word[bw.left(l)])).collect(),
            )
        };
        // the host's writes: through `hwp` with the deep pipeline
        w.set(to!(hwp.clock), clock.clone());
        let [w_sel, w_we, w_bias, w_bank, w_addr, w_data] = if deep {
            w.set(to!(hwp.bit_in[0]), at!(w, h_sel));
            w.set(to!(hwp.bit_in[1]), at!(w, h_we));
            w.set(to!(hwp.bit_in[2]), at!(w, h_bias));
            w.set(to!(hwp.word_in[0]), at!(w, h_bank));
            w.set(to!(hwp.word_in[1]), at!(w, h_addr));
            w.set(to!(hwp.word_in[2]), at!(w, h_wdata));
            [
                at!(w, hwp.bit[0]),
                at!(w, hwp.bit[1]),
                at!(w, hwp.bit[2]),
                at!(w, hwp.word[0]),
                at!(w, hwp.word[1]),
                at!(w, hwp.word[2]),
            ]
        } else {
            [
                at!(w, h_sel),
                at!(w, h_we),
                at!(w, h_bias),
                at!(w, h_bank),
                at!(w, h_addr),
                at!(w, h_wdata),
            ]
        };
        // weight and bias memories: one write port per bank, UP's value or the host's
        w.set(to!(wmem.clock), clock.clone());
        w.set(to!(wmem.raddr), at!(w, seq.waddr));
        w.set(to!(wmem.rok), at!(w, seq.w_ok));
        w.set(to!(wwp.clock), clock.clone());
        let w_row = w.mux(&w_sel, &w_addr, &wb_k);
        if deep {
            w.set(to!(wwp.word_in[0]), w_row.clone());
        }
        let host = w.and(&w_sel, &w_we);
        let host_w = w.and(&host, &w.not(&w_bias));
        for l in 0..z {
            let we = w.or(&wb_run, &w.paren(&w.and(&host_w, &w.eq16(&w_bank, l))));
            let data = w.mux(&w_sel, &w_data, &at!(w, up.new_w[l]));
            if deep {
                w.set(to!(wwp.bit_in[l]), we);
                w.set(to!(wwp.word_in[1 + l]), data);
                w.set(to!(wmem.we[l]), at!(w, wwp.bit[l]));
                w.set(to!(wmem.waddr[l]), at!(w, wwp.word[0]));
                w.set(to!(wmem.wdata[l]), at!(w, wwp.word[1 + l]));
            } else {
                w.set(to!(wmem.we[l]), we);
                w.set(to!(wmem.waddr[l]), w_row.clone());
                w.set(to!(wmem.wdata[l]), data);
            }
        }
        w.set(to!(bmem.clock), clock.clone());
        w.set(to!(bmem.raddr), at!(w, seq.baddr));
        w.set(to!(bmem.rok), at!(w, seq.b_ok));
        // right neuron `row·g + q`: the one group `q` finishes at this row
        let row = at!(w, seq.row);
        let r: Vec<W::V> = (0..g).map(|q| w.times_plus16(&row, g, q)).collect();
        w.set(to!(bwp.clock), clock.clone());
        let addr = w.mux(&w_sel, &w_addr, &at!(w, bpp.word[BpWord::ROW]));
        if deep {
            w.set(to!(bwp.word_in[0]), addr.clone());
            w.set(to!(bwp.bit_in[g]), w_sel.clone());
        }
        let host_b = w.and(&host, &w_bias);
        for q in 0..g {
            let we = w.or(
                &at!(w, bpp.bit[1]),
                &w.paren(&w.and(&host_b, &w.eq16(&w_bank, q))),
            );
            if deep {
                // the update's operands wait in `bwp`, the arithmetic comes after it
                w.set(to!(bwp.bit_in[q]), we);
                let bias = w.mux(&w_sel, &w_data, &at!(w, bpp.word[bw.bias(q)]));
                w.set(to!(bwp.word_in[1 + q]), bias);
                w.set(to!(bwp.word_in[1 + g + q]), at!(w, bp.delta[q]));
                w.set(to!(bmem.we[q]), at!(w, bwp.bit[q]));
                w.set(to!(bmem.waddr[q]), at!(w, bwp.word[0]));
                let data = w.mux(
                    &at!(w, bwp.bit[g]),
                    &at!(w, bwp.word[1 + q]),
                    &at!(w, up.new_b[q]),
                );
                w.set(to!(bmem.wdata[q]), data);
            } else {
                w.set(to!(bmem.we[q]), we);
                w.set(to!(bmem.waddr[q]), addr.clone());
                let data = w.mux(&w_sel, &w_data, &at!(w, up.new_b[q]));
                w.set(to!(bmem.wdata[q]), data);
            }
        }
        // left activations: FF reads copy a_ff, UP copy a_up, at the interleaver's neurons
        w.set(to!(amem.clock), clock.clone());
        for l in 0..z {
            w.set(to!(amem.rd_copy[l]), at!(w, seq.a_ff));
            w.set(to!(amem.rd_addr[l]), at!(w, agen.left[l]));
            w.set(to!(amem.rd_copy[z + l]), at!(w, seq.a_up));
            w.set(to!(amem.rd_addr[z + l]), at!(w, agen.left[l]));
        }
        if p.is_first() {
            w.set(to!(amem.wr_en[0]), at!(w, in_we));
            w.set(to!(amem.wr_copy[0]), at!(w, in_copy));
            w.set(to!(amem.wr_addr[0]), at!(w, in_addr));
            w.set(to!(amem.wr_data[0]), at!(w, in_data));
            for k in 1..=in_lanes {
                w.set(to!(amem.wr_en[k]), at!(w, in_lane_we[k - 1]));
                w.set(to!(amem.wr_copy[k]), at!(w, in_copy));
                w.set(to!(amem.wr_addr[k]), w.plus16(&at!(w, in_addr), k));
                w.set(to!(amem.wr_data[k]), at!(w, in_lane_data[k - 1]));
            }
        } else {
            w.set(to!(smem[0].clock), clock.clone());
            w.set(to!(dmem[0].clock), clock.clone());
            w.set(to!(dmem[0].parity), at!(w, parity));
            for q in 0..left {
                w.set(to!(amem.wr_en[q]), at!(w, left[q].w_en));
                let copy = if p.left_copy_in {
                    at!(w, in_copy)
                } else {
                    at!(w, seq.a_w)
                };
                w.set(to!(amem.wr_copy[q]), copy);
                w.set(to!(amem.wr_addr[q]), at!(w, left[q].w_addr));
                w.set(to!(amem.wr_data[q]), at!(w, left[q].w_a));
                w.set(to!(smem[0].rd_copy[q]), at!(w, seq.s_r));
                w.set(to!(smem[0].rd_addr[q]), at!(w, left[q].q_addr));
                w.set(to!(smem[0].wr_en[q]), at!(w, left[q].w_en));
                w.set(to!(smem[0].wr_copy[q]), at!(w, seq.s_w));
                w.set(to!(smem[0].wr_addr[q]), at!(w, left[q].w_addr));
                w.set(to!(smem[0].wr_data[q]), at!(w, left[q].w_sp));
                w.set(to!(left[q].q_sp), at!(w, smem[0].rd_data[q]));
                w.set(to!(dmem[0].rd_addr[q]), at!(w, left[q].q_addr));
                w.set(to!(dmem[0].rd_clear[q]), at!(w, left[q].q_clear));
                w.set(to!(left[q].q_acc), at!(w, dmem[0].rd_data[q]));
            }
            for l in 0..z {
                w.set(to!(dmem[0].acc_en[l]), wb_run.clone());
                w.set(to!(dmem[0].acc_addr[l]), wb_left[l].clone());
                // the address the write-back's left neuron takes next (the delta memory
                // reads ahead)
                let next = if deep {
                    at!(w, bpp.word[bw.left(l)])
                } else {
                    dw[rd.left(l)].clone()
                };
                w.set(to!(dmem[0].acc_next[l]), next);
                w.set(to!(dmem[0].acc_add[l]), at!(w, bp.contrib[l]));
            }
        }
        // FF
        w.set(to!(ff.clock), clock.clone());
        w.set(to!(ff.label), at!(w, label));
        w.set(to!(ff.run), db[RdWord::RUN_FF].clone());
        w.set(to!(ff.first), db[RdWord::FIRST].clone());
        w.set(to!(ff.last_sub), db[RdWord::LAST_SUB].clone());
        // BP and UP share the weight read with FF; the contributions and the updates take
        // the registered operands
        for l in 0..z {
            w.set(to!(ff.w[l]), dw[rd.w(l)].clone());
            w.set(to!(ff.a[l]), dw[rd.a(l)].clone());
            w.set(to!(bp.w[l]), at!(w, bpp.word[bw.w(l)]));
            w.set(to!(up.w[l]), wb_w[l].clone());
            w.set(to!(up.a[l]), at!(w, bpp.word[bw.a(l)]));
        }
        for q in 0..g {
            w.set(to!(ff.bias[q]), dw[rd.bias(q)].clone());
            w.set(to!(ff.r[q]), w.times_plus16(&dw[rd.row()], g, q));
            w.set(
                to!(bp.acc[q]),
                w.concat16(&dw[rd.acc_hi(q)], &dw[rd.acc_lo(q)]),
            );
            w.set(to!(bp.sp[q]), dw[rd.sp(q)].clone());
            w.set(to!(up.d[q]), dq[q].clone());
            if deep {
                w.set(to!(up.bias[q]), at!(w, bwp.word[1 + q]));
                w.set(to!(up.bd[q]), at!(w, bwp.word[1 + g + q]));
            } else {
                w.set(to!(up.bias[q]), at!(w, bpp.word[bw.bias(q)]));
                w.set(to!(up.bd[q]), dq[q].clone());
            }
        }
        // stochastic rounding: the lanes step with every update clock and restart when the
        // host writes the weights; a bias takes the word of its neuron's last lane
        w.set(to!(rng.clock), clock.clone());
        if p.stochastic() {
            w.set(to!(rng.advance), at!(w, bpp.bit[0]));
            w.set(to!(rng.restart), host.clone());
            for l in 0..z {
                w.set(to!(up.word[l]), at!(w, rng.word[l]));
            }
            let lpg = p.lanes_per_group;
            for q in 0..g {
                let word = w.bits(&at!(w, rng.word[q * lpg + lpg - 1]), 0, 15);
                if deep {
                    w.set(to!(bwp.word_in[1 + 2 * g + q]), word);
                    w.set(to!(up.bias_word[q]), at!(w, bwp.word[1 + 2 * g + q]));
                } else {
                    w.set(to!(up.bias_word[q]), word);
                }
            }
        } else {
            w.set(to!(rng.advance), w.lit(0, "1'b0"));
            w.set(to!(rng.restart), w.lit(0, "1'b0"));
        }
        // output deltas (last junction): FF writes buffer `parity`, BP reads the other
        if p.is_last() {
            let (parity, one16) = (at!(w, parity), w.lit(1, "16'd1"));
            w.set(to!(omem[0].clock), clock.clone());
            for q in 0..g {
                w.set(to!(omem[0].rd_copy[q]), w.mux(&parity, &zero16, &one16));
                w.set(to!(omem[0].rd_addr[q]), r[q].clone());
                w.set(to!(omem[0].wr_en[q]), at!(w, ff.done));
                w.set(to!(omem[0].wr_copy[q]), w.mux(&parity, &one16, &zero16));
                w.set(to!(omem[0].wr_addr[q]), at!(w, ff.r_out[q]));
                w.set(to!(omem[0].wr_data[q]), at!(w, ff.out_delta[q]));
            }
        } else {
            for q in 0..g {
                w.set(to!(right[q].w_en), at!(w, ff.done));
                w.set(to!(right[q].w_addr), at!(w, ff.r_out[q]));
                w.set(to!(right[q].w_a), at!(w, ff.act[q]));
                w.set(to!(right[q].w_sp), at!(w, ff.sp[q]));
                w.set(to!(right[q].q_addr), r[q].clone());
                w.set(to!(right[q].q_clear), bp_clear.clone());
            }
        }
        w.set(to!(pred), at!(w, ff.pred));
        // the host reads bank `h_bank` of the weights or the biases
        let h_bias = at!(w, h_bias);
        let banks = (0..z.max(g))
            .map(|b| {
                let bv = if b < g {
                    at!(w, bmem.rdata[b])
                } else {
                    zero16.clone()
                };
                let wv = if b < z {
                    at!(w, wmem.rdata[b])
                } else {
                    zero16.clone()
                };
                w.mux(&h_bias, &bv, &wv)
            })
            .collect();
        w.case(to!(h_rdata), at!(w, h_bank), banks, zero16);
    }
}
