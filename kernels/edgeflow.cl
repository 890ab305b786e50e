// edgeflow OpenCL kernels: the junction-pipelined FF / BP / UP datapath of one *stage*
// (a contiguous junction range [j0, j1) of the network), bit for bit the arithmetic of
// core/src/fixed.rs and the schedule of sim/src/reference.rs.
//
// Written the way FPGA OpenCL flows want them: single-work-item (launch with global size 1),
// persistent over a whole window of block cycles / a whole chunk of samples per launch, every
// piece of pipeline state (weights, biases, the stochastic-rounding lane streams, the
// per-sample ring of activations, σ′ and deltas) living in device buffers that survive across launches. Edges are in right-neuron-major order
// and either z | fi or fi | z, so the edge loops nest as neuron × clock × lane: a neuron's fi
// edges are fi/z clocks of z lanes, or (fi < z) fi of the z lanes of a clock it shares with
// z/fi - 1 neighbours. The innermost loop is the lane loop an FPGA compiler unrolls z-wide; the
// clash-free pattern makes the left-neuron reads of one clock hit different banks. (The lane
// count is run-time data here, so that one program serves every spec; an FPGA build would fix
// it per bitstream.)
//
// The program does not depend on the spec: sizes, offsets and the schedule arrive in `cfg`
// (layout: opencl/src/layout.rs), so one binary serves every network.
//
// Values are stored as `short` (the format is at most 16 bits wide) and computed in `int`:
// a 16x16 product is at most 2^30 in magnitude, adding the rounding rnd keeps it below 2^31,
// and a neuron's sum of its rounded products plus a bias stays below 2^31 (the spec
// validation bounds layer sizes, and fan-ins where FF products are not saturated), so `int`
// is exact everywhere the contract says "wide".

// The cfg layout (C_* stage fields, J_* junction-record fields) is generated from
// opencl/src/layout.rs and put in front of this file.

inline int sat(int x, int lo, int hi) { return x < lo ? lo : (x > hi ? hi : x); }

// Step 1: exact product, + 2^(frac-1), arithmetic shift, saturate.
inline int mulq(int a, int b, int frac, int rnd, int lo, int hi) {
  return sat((a * b + rnd) >> frac, lo, hi);
}

// Step 3: η = 2^-shift with the same rounding (in range by construction).
inline int eta(int x, int shift, int rnd) { return (x + rnd) >> shift; }

// FF of one junction for one sample: right activations (and σ′) from left activations.
// Products are clamped to [plo, phi]: the format's range, or INT_MIN..INT_MAX when only the
// sum saturates (step 2).
void ff(__global const int *jr, __global const short *w, __global const short *bias,
        __global const ushort *left, __global const short *tsig, __global const short *tsp,
        __global const short *al, __global short *ar, __global short *spr, int frac, int rnd,
        int lo, int hi, int plo, int phi, int drop, int ibits) {
  const int nr = jr[J_NR], fi = jr[J_FI], act = jr[J_ACT];
  const int woff = jr[J_WOFF], boff = jr[J_BOFF];
  const int mid = 1 << (ibits - 1);
  // A neuron's fi edges take `cpn` clocks of `lanes` lanes (z | fi: fi/z clocks of z lanes;
  // fi | z: one clock shared with z/fi - 1 other neurons).
  const int lanes = min(jr[J_Z], fi), cpn = fi / lanes;
  for (int q = 0; q < nr; ++q) {
    int acc = bias[boff + q];
    for (int c = 0; c < cpn; ++c) {
      const int e0 = woff + q * fi + c * lanes;
      for (int l = 0; l < lanes; ++l) {  // the lanes of one clock: z different banks
        acc += mulq(w[e0 + l], al[left[e0 + l]], frac, rnd, plo, phi);
      }
    }
    const int h = sat(acc, lo, hi);
    int a, sp;
    if (act == 0) {
      const int idx = jr[J_TAB] + (h >> drop) + mid;
      a = tsig[idx];
      sp = tsp[idx];
    } else {
      a = h > 0 ? h : 0;
      sp = (h > 0 && !(act == 2 && h == hi)) ? 1 : 0;  // act 2: the gate shuts when clipped
    }
    ar[q] = (short)a;
    spr[q] = (short)sp;
  }
}

// The stochastic-rounding stream of a lane (core/src/rounding.rs): xorshift32 (13, 17, 5),
// stepped once before each update; the new word is returned.
inline uint next_word(__global uint *g) {
  uint x = *g;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  *g = x;
  return x;
}

// Step 4 under stochastic rounding: n = frac + shift <= 30, so |δ·a| + r < 2^31.
inline int update_stochastic(int w, int d, int a, int n, uint word, int lo, int hi) {
  const int r = n == 0 ? 0 : (int)(word >> (32 - n));
  return sat(w - sat((d * a + r) >> n, lo, hi), lo, hi);
}

// Step 7: hidden delta from σ′ (or the ReLU gate) and the saturated back-propagated sum.
inline int hidden_delta(int act, int sp, int sum, int frac, int rnd, int lo, int hi) {
  return act == 0 ? mulq(sp, sum, frac, rnd, lo, hi) : (sp != 0 ? sum : 0);
}

// One training window: block cycles [t0, t1) of the stage. In each block cycle, junction by
// junction, FF of the sample it holds then BP+UP of the sample it holds, exactly the order of
// the reference model. Boundary buffers are indexed by sample minus their base:
//   a_in  : activations of layer j0 (the inputs when j0 = 0), read by FF_j0;
//   d_in  : back-propagated sums of layer j1 (saturated, before σ′), read by BP_{j1-1} when
//           the stage does not end with the output layer; σ′ of layer j1 is this stage's own;
//   a_out : activations of layer j1 written by FF_{j1-1} (unless j1 = L);
//   d_out : back-propagated sums of layer j0 written by BP_j0 (unless j0 = 0).
__kernel void train_window(__global short *w, __global short *bias,
                           __global const ushort *left, __global const short *tsig,
                           __global const short *tsp, __global const int *cfg,
                           __global short *ring, __global int *acc, __global uint *streams,
                           __global const short *a_in, __global const int *labels,
                           __global const short *d_in, __global short *a_out,
                           __global short *d_out, int t0, int t1, int a_in_base,
                           int d_in_base, int a_out_base, int d_out_base) {
  const int nj = cfg[C_NJ], frac = cfg[C_FRAC], lo = cfg[C_VMIN], hi = cfg[C_VMAX];
  const int plo = cfg[C_FF_SAT] ? lo : INT_MIN, phi = cfg[C_FF_SAT] ? hi : INT_MAX;
  const int shift = cfg[C_SHIFT], drop = cfg[C_DROP], ibits = cfg[C_IBITS];
  const int depth = cfg[C_DEPTH], stride = cfg[C_STRIDE], samples = cfg[C_SAMPLES];
  const int last = cfg[C_LAST], hidden = cfg[C_HIDDEN], one = cfg[C_ONE];
  const int stochastic = cfg[C_ROUNDING];
  const int rnd = frac > 0 ? 1 << (frac - 1) : 0;
  const int srnd = shift > 0 ? 1 << (shift - 1) : 0;
  const int n_j0 = cfg[C_JUNC + J_NL];
  const int n_j1 = cfg[C_JUNC + (nj - 1) * C_JSIZE + J_NR];

  for (int t = t0; t < t1; ++t) {
    for (int r = 0; r < nj; ++r) {
      __global const int *jr = cfg + C_JUNC + r * C_JSIZE;
      const int nl = jr[J_NL], nr = jr[J_NR], fi = jr[J_FI];
      const int woff = jr[J_WOFF], boff = jr[J_BOFF];

      // ---- FF_j(n), n = t - F_j ----
      const int nf = t - jr[J_FF];
      if (nf >= 0 && nf < samples) {
        __global short *slot = ring + (nf % depth) * stride;
        if (r == 0) {
          __global const short *src = a_in + (nf - a_in_base) * n_j0;
          for (int k = 0; k < nl; ++k) slot[jr[J_AL] + k] = src[k];
        }
        ff(jr, w, bias, left, tsig, tsp, slot + jr[J_AL], slot + jr[J_AR], slot + jr[J_SPR],
           frac, rnd, lo, hi, plo, phi, drop, ibits);
        if (r == nj - 1) {
          if (last) {
            // Step 6: output delta a - y with y = saturate(1.0) at the label, 0 where the
            // output sits at the sigmoid table's end on its target's side (clipped rule).
            const int lab = labels[nf];
            for (int q = 0; q < nr; ++q) {
              const int a = slot[jr[J_AR] + q];
              const int y = q == lab ? one : 0;
              const int stop = a == (q == lab ? cfg[C_OUT_LAST] : cfg[C_OUT_FIRST]);
              slot[jr[J_DR] + q] = (short)(stop ? 0 : sat(a - y, lo, hi));
            }
          } else {
            __global short *dst = a_out + (nf - a_out_base) * n_j1;
            for (int q = 0; q < nr; ++q) dst[q] = slot[jr[J_AR] + q];
          }
        }
      }

      // ---- BP_j(n) and UP_j(n), n = t - B_j ----
      const int nb = t - jr[J_BP];
      if (nb >= 0 && nb < samples) {
        __global short *slot = ring + (nb % depth) * stride;
        __global short *d = slot + jr[J_DR];
        if (r == nj - 1 && !last) {
          // Boundary: the downstream stage sent the sum; σ′ of layer j1 is ours.
          __global const short *src = d_in + (nb - d_in_base) * n_j1;
          for (int q = 0; q < nr; ++q)
            d[q] = (short)hidden_delta(hidden, slot[jr[J_SPR] + q], src[q], frac, rnd, lo, hi);
        }
        __global const short *al = slot + jr[J_AL];
        // BP_1 (the network's first junction) is not needed.
        const int back = !(r == 0 && cfg[C_FIRST]);
        if (back)
          for (int k = 0; k < nl; ++k) acc[k] = 0;
        const int z = jr[J_Z], lanes = min(z, fi), cpn = fi / lanes;
        __global uint *gen = streams + jr[J_LOFF];
        for (int q = 0; q < nr; ++q) {
          const int dq = d[q];
          // Edge q·fi + c·lanes + l is in lane (q mod z/lanes)·lanes + l: l itself when z | fi,
          // the neuron's share of the clock when fi | z.
          const int lane0 = (q % (z / lanes)) * lanes;
          uint last = 0;  // the word of the neuron's last edge: its bias's random bits
          for (int c = 0; c < cpn; ++c) {
            const int e0 = woff + q * fi + c * lanes;
            for (int l = 0; l < lanes; ++l) {  // lanes: each reads (BP: read-modify-writes) its own bank
              const int e = e0 + l;
              const int k = left[e];
              const int we = w[e];
              // BP reads the weight before UP writes it.
              if (back) acc[k] += mulq(we, dq, frac, rnd, lo, hi);
              if (stochastic) {
                const uint word = next_word(gen + lane0 + l);
                if (c == cpn - 1 && l == lanes - 1) last = word;
                w[e] = (short)update_stochastic(we, dq, al[k], frac + shift, word, lo, hi);
              } else {
                w[e] = (short)sat(we - eta(mulq(dq, al[k], frac, rnd, lo, hi), shift, srnd), lo, hi);
              }
            }
          }
          const int b = bias[boff + q];
          const int u = stochastic ? (dq + (int)(last & ((1u << shift) - 1))) >> shift
                                   : eta(dq, shift, srnd);
          bias[boff + q] = (short)sat(b - u, lo, hi);
        }
        if (back) {
          if (r > 0) {
            __global short *dl = slot + jr[J_DL];
            __global const short *spl = slot + jr[J_SPL];
            for (int k = 0; k < nl; ++k)
              dl[k] = (short)hidden_delta(hidden, spl[k], sat(acc[k], lo, hi), frac, rnd, lo, hi);
          } else {
            __global short *dst = d_out + (nb - d_out_base) * n_j0;
            for (int k = 0; k < nl; ++k) dst[k] = (short)sat(acc[k], lo, hi);
          }
        }
      }
    }
  }
}

// Inference of `count` samples through the stage with the current weights (FF alone):
// activations of layer j0 in, activations of layer j1 out. `tmp` holds two layers' worth of
// ping-pong activations and one of σ′ (unused by inference but written by FF).
__kernel void infer_chunk(__global const short *w, __global const short *bias,
                          __global const ushort *left, __global const short *tsig,
                          __global const short *tsp, __global const int *cfg,
                          __global short *tmp, int widest, __global const short *a_in,
                          __global short *a_out, int count) {
  const int nj = cfg[C_NJ], frac = cfg[C_FRAC], lo = cfg[C_VMIN], hi = cfg[C_VMAX];
  const int plo = cfg[C_FF_SAT] ? lo : INT_MIN, phi = cfg[C_FF_SAT] ? hi : INT_MAX;
  const int drop = cfg[C_DROP], ibits = cfg[C_IBITS];
  const int rnd = frac > 0 ? 1 << (frac - 1) : 0;
  const int n_j0 = cfg[C_JUNC + J_NL];
  const int n_j1 = cfg[C_JUNC + (nj - 1) * C_JSIZE + J_NR];
  __global short *sp = tmp + 2 * widest;
  for (int n = 0; n < count; ++n) {
    __global const short *cur = a_in + n * n_j0;
    for (int r = 0; r < nj; ++r) {
      __global const int *jr = cfg + C_JUNC + r * C_JSIZE;
      __global short *out = r == nj - 1 ? a_out + n * n_j1 : tmp + (r & 1) * widest;
      ff(jr, w, bias, left, tsig, tsp, cur, out, sp, frac, rnd, lo, hi, plo, phi, drop, ibits);
      cur = out;
    }
  }
}
