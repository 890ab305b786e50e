//! A composite block's connections, written once. A composite (junction, network, stage)
//! describes its wiring in one function, generic over [`Wires`]: a list of assignments
//! `child input (or own output) = value`, where a value is a signal or a small expression of
//! signals. Run with [`Sim`] the description is the simulation's `update`, with [`Connect`]
//! it marks every driven signal, with [`Text`] it prints the Verilog (one `always @(*)`
//! block), so a change of wiring is one edit. The description is monomorphized for each, so
//! the simulation runs it as fast as hand-written assignments.
//!
//! Signals are named by their path in the block, as rust-hdl names them in the Verilog:
//! `at!(w, wmem.rdata[l])` is the value of `wmem$rdata$3` for `l = 3`, `to!(seq.adv)` the
//! input `seq$adv`. Values are carried as `u64`; [`Word`] converts to and from the signal's
//! type, and expressions keep the width their Verilog has (16-bit sums wrap at 16 bits).

use rust_hdl::core::prelude::*;
use std::fmt::Write;

/// A signal's value as a `u64` and back.
pub trait Word: Copy {
    fn to_word(self) -> u64;
    fn from_word(v: u64) -> Self;
}

impl Word for bool {
    fn to_word(self) -> u64 {
        self as u64
    }
    fn from_word(v: u64) -> bool {
        v & 1 != 0
    }
}

impl Word for Clock {
    fn to_word(self) -> u64 {
        self.clk as u64
    }
    fn from_word(v: u64) -> Clock {
        Clock { clk: v & 1 != 0 }
    }
}

impl<const N: usize> Word for Bits<N> {
    fn to_word(self) -> u64 {
        self.to_u64()
    }
    fn from_word(v: u64) -> Bits<N> {
        Bits::from(v & mask(N))
    }
}

fn mask(bits: usize) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// A signal the composite drives (a child's input or its own output): how to set it, how to
/// mark it driven, and its Verilog name. Made by [`to!`].
pub struct Dst<P, C, N> {
    pub put: P,
    pub connect: C,
    pub name: N,
}

/// What a wiring description is run as. `V` is a value on the wires: its number in
/// simulation, its Verilog text when printing, nothing when connecting.
pub trait Wires<B> {
    type V: Clone;

    /// A value from its number (simulation) and its text (Verilog); each mode calls one.
    fn make(&self, value: impl FnOnce() -> u64, text: impl FnOnce() -> String) -> Self::V;
    /// The number of a value (0 when not simulating).
    fn num(&self, v: &Self::V) -> u64;
    /// The text of a value (empty when not printing).
    fn text<'a>(&self, v: &'a Self::V) -> &'a str;
    /// A signal's value: `get` reads it in simulation, `name` is its Verilog.
    fn sig<T: Word>(&self, get: impl FnOnce(&B) -> T, name: impl FnOnce() -> String) -> Self::V;
    /// `dst = v`
    fn set<T: Word, P, C, N>(&mut self, dst: Dst<P, C, N>, v: Self::V)
    where
        P: FnOnce(&mut B, T),
        C: FnOnce(&mut B),
        N: FnOnce() -> String;
    /// `dst = arms[sel]`, or `default` when `sel` is past the arms (a Verilog `case`).
    fn case<T: Word, P, C, N>(
        &mut self,
        dst: Dst<P, C, N>,
        sel: Self::V,
        arms: Vec<Self::V>,
        default: Self::V,
    ) where
        P: FnOnce(&mut B, T),
        C: FnOnce(&mut B),
        N: FnOnce() -> String;

    /// A constant `v`, written `text` in the Verilog (`1'b0`, `16'd0`).
    fn lit(&self, v: u64, text: &str) -> Self::V {
        self.make(|| v, || text.to_string())
    }
    /// `a && b`
    fn and(&self, a: &Self::V, b: &Self::V) -> Self::V {
        self.make(
            || (self.num(a) != 0 && self.num(b) != 0) as u64,
            || format!("{} && {}", self.text(a), self.text(b)),
        )
    }
    /// `a || b`
    fn or(&self, a: &Self::V, b: &Self::V) -> Self::V {
        self.make(
            || (self.num(a) != 0 || self.num(b) != 0) as u64,
            || format!("{} || {}", self.text(a), self.text(b)),
        )
    }
    /// `!a`
    fn not(&self, a: &Self::V) -> Self::V {
        self.make(
            || (self.num(a) == 0) as u64,
            || format!("!{}", self.text(a)),
        )
    }
    /// `(a)`
    fn paren(&self, a: &Self::V) -> Self::V {
        self.make(|| self.num(a), || format!("({})", self.text(a)))
    }
    /// `(a == 16'dn)`
    fn eq16(&self, a: &Self::V, n: usize) -> Self::V {
        self.make(
            || (self.num(a) == n as u64) as u64,
            || format!("({} == 16'd{n})", self.text(a)),
        )
    }
    /// `(a > b)`
    fn gt(&self, a: &Self::V, b: &Self::V) -> Self::V {
        self.make(
            || (self.num(a) > self.num(b)) as u64,
            || format!("({} > {})", self.text(a), self.text(b)),
        )
    }
    /// `a + 16'dk`, 16 bits wide.
    fn plus16(&self, a: &Self::V, k: usize) -> Self::V {
        self.make(
            || self.num(a).wrapping_add(k as u64) & 0xffff,
            || format!("{} + 16'd{k}", self.text(a)),
        )
    }
    /// `a + b`, 16 bits wide.
    fn add16(&self, a: &Self::V, b: &Self::V) -> Self::V {
        self.make(
            || self.num(a).wrapping_add(self.num(b)) & 0xffff,
            || format!("{} + {}", self.text(a), self.text(b)),
        )
    }
    /// `(a & 16'dm)`: the bits of a value below an exact width.
    fn mask16(&self, a: &Self::V, m: u64) -> Self::V {
        self.make(
            || self.num(a) & m,
            || format!("({} & 16'd{m})", self.text(a)),
        )
    }
    /// `a - 16'dk`, 16 bits wide.
    fn minus16(&self, a: &Self::V, k: usize) -> Self::V {
        self.make(
            || self.num(a).wrapping_sub(k as u64) & 0xffff,
            || format!("{} - 16'd{k}", self.text(a)),
        )
    }
    /// `(a * 16'dm + 16'dk)`, 16 bits wide.
    fn times_plus16(&self, a: &Self::V, m: usize, k: usize) -> Self::V {
        self.make(
            || self.num(a).wrapping_mul(m as u64).wrapping_add(k as u64) & 0xffff,
            || format!("({} * 16'd{m} + 16'd{k})", self.text(a)),
        )
    }
    /// `a[hi:lo]`
    fn bits(&self, a: &Self::V, lo: usize, hi: usize) -> Self::V {
        self.make(
            || (self.num(a) >> lo) & mask(hi + 1 - lo),
            || format!("{}[{hi}:{lo}]", self.text(a)),
        )
    }
    /// `{16{a[15]}}`: the sign of a 16-bit value, as the high half of its 32-bit extension.
    fn sign_fill16(&self, a: &Self::V) -> Self::V {
        self.make(
            || {
                if self.num(a) & 0x8000 != 0 {
                    0xffff
                } else {
                    0
                }
            },
            || format!("{{16{{{}[15]}}}}", self.text(a)),
        )
    }
    /// `{hi, lo}` of two 16-bit halves.
    fn concat16(&self, hi: &Self::V, lo: &Self::V) -> Self::V {
        self.make(
            || self.num(hi) << 16 | self.num(lo),
            || format!("{{{}, {}}}", self.text(hi), self.text(lo)),
        )
    }
    /// `c ? a : b`
    fn mux(&self, c: &Self::V, a: &Self::V, b: &Self::V) -> Self::V {
        self.make(
            || {
                if self.num(c) != 0 {
                    self.num(a)
                } else {
                    self.num(b)
                }
            },
            || format!("{} ? {} : {}", self.text(c), self.text(a), self.text(b)),
        )
    }
    /// `name(a)`: a Verilog function of the value, `f` in simulation.
    fn call(&self, name: &str, a: &Self::V, f: impl FnOnce(u64) -> u64) -> Self::V {
        self.make(|| f(self.num(a)), || format!("{name}({})", self.text(a)))
    }
}

/// The simulation: every assignment on the block's signals, now.
pub struct Sim<'a, B>(pub &'a mut B);

impl<B> Wires<B> for Sim<'_, B> {
    type V = u64;
    fn make(&self, value: impl FnOnce() -> u64, _: impl FnOnce() -> String) -> u64 {
        value()
    }
    fn num(&self, v: &u64) -> u64 {
        *v
    }
    fn text<'a>(&self, _: &'a u64) -> &'a str {
        ""
    }
    fn sig<T: Word>(&self, get: impl FnOnce(&B) -> T, _: impl FnOnce() -> String) -> u64 {
        get(self.0).to_word()
    }
    fn set<T: Word, P, C, N>(&mut self, dst: Dst<P, C, N>, v: u64)
    where
        P: FnOnce(&mut B, T),
        C: FnOnce(&mut B),
        N: FnOnce() -> String,
    {
        (dst.put)(self.0, T::from_word(v))
    }
    fn case<T: Word, P, C, N>(&mut self, dst: Dst<P, C, N>, sel: u64, arms: Vec<u64>, default: u64)
    where
        P: FnOnce(&mut B, T),
        C: FnOnce(&mut B),
        N: FnOnce() -> String,
    {
        let v = arms.get(sel as usize).copied().unwrap_or(default);
        (dst.put)(self.0, T::from_word(v))
    }
}

/// `connect()`: marks every driven signal.
pub struct Connect<'a, B>(pub &'a mut B);

impl<B> Wires<B> for Connect<'_, B> {
    type V = ();
    fn make(&self, _: impl FnOnce() -> u64, _: impl FnOnce() -> String) {}
    fn num(&self, _: &()) -> u64 {
        0
    }
    fn text<'a>(&self, _: &'a ()) -> &'a str {
        ""
    }
    fn sig<T: Word>(&self, _: impl FnOnce(&B) -> T, _: impl FnOnce() -> String) {}
    fn set<T: Word, P, C, N>(&mut self, dst: Dst<P, C, N>, _: ())
    where
        P: FnOnce(&mut B, T),
        C: FnOnce(&mut B),
        N: FnOnce() -> String,
    {
        (dst.connect)(self.0)
    }
    fn case<T: Word, P, C, N>(&mut self, dst: Dst<P, C, N>, _: (), _: Vec<()>, _: ())
    where
        P: FnOnce(&mut B, T),
        C: FnOnce(&mut B),
        N: FnOnce() -> String,
    {
        (dst.connect)(self.0)
    }
}

/// The Verilog: the assignments of one `always @(*)` block ([`Text::finish`]).
#[derive(Default)]
pub struct Text(String);

impl Text {
    pub fn finish(self) -> String {
        if self.0.is_empty() {
            return String::new();
        }
        format!("always @(*) begin\n{}end\n", self.0)
    }

    /// The composite's Verilog: `functions` (Verilog functions its expressions call), then
    /// the always block.
    pub fn verilog(self, functions: &str) -> Verilog {
        Verilog::Custom(format!("{functions}{}", self.finish()))
    }
}

impl<B> Wires<B> for Text {
    type V = String;
    fn make(&self, _: impl FnOnce() -> u64, text: impl FnOnce() -> String) -> String {
        text()
    }
    fn num(&self, _: &String) -> u64 {
        0
    }
    fn text<'a>(&self, v: &'a String) -> &'a str {
        v
    }
    fn sig<T: Word>(&self, _: impl FnOnce(&B) -> T, name: impl FnOnce() -> String) -> String {
        name()
    }
    fn set<T: Word, P, C, N>(&mut self, dst: Dst<P, C, N>, v: String)
    where
        P: FnOnce(&mut B, T),
        C: FnOnce(&mut B),
        N: FnOnce() -> String,
    {
        let _ = writeln!(self.0, "    {} = {v};", (dst.name)());
    }
    fn case<T: Word, P, C, N>(
        &mut self,
        dst: Dst<P, C, N>,
        sel: String,
        arms: Vec<String>,
        default: String,
    ) where
        P: FnOnce(&mut B, T),
        C: FnOnce(&mut B),
        N: FnOnce() -> String,
    {
        let name = (dst.name)();
        let _ = writeln!(self.0, "    case ({sel})");
        for (i, a) in arms.iter().enumerate() {
            let _ = writeln!(self.0, "        16'd{i}: {name} = {a};");
        }
        let _ = writeln!(self.0, "        default: {name} = {default};");
        self.0 += "    endcase\n";
    }
}

/// The Verilog name of a signal path: segments joined by `$`, indices as numbers.
#[doc(hidden)]
pub fn path_name(segs: &[(&str, Option<usize>)]) -> String {
    let mut n = String::new();
    for (s, i) in segs {
        if !n.is_empty() {
            n.push('$');
        }
        n.push_str(s);
        if let Some(i) = i {
            let _ = write!(n, "${i}");
        }
    }
    n
}

/// The value of the signal at a path of `Self` (`at!(w, wmem.rdata[l])`), in the wiring `w`.
#[macro_export]
macro_rules! at {
    ($w:expr, $($seg:ident $([$i:expr])?).+) => {
        $crate::wiring::Wires::<Self>::sig(
            &*$w,
            |b: &Self| b.$($seg $([$i])?).+.val(),
            || $crate::wiring::path_name(&[$((stringify!($seg), None $(.or(Some($i)))?)),+]),
        )
    };
}

/// The signal at a path of `Self` that the composite drives (`to!(seq.adv)`).
#[macro_export]
macro_rules! to {
    ($($seg:ident $([$i:expr])?).+) => {
        $crate::wiring::Dst {
            put: |b: &mut Self, v| b.$($seg $([$i])?).+.next = v,
            connect: |b: &mut Self| b.$($seg $([$i])?).+.connect(),
            name: || $crate::wiring::path_name(&[$((stringify!($seg), None $(.or(Some($i)))?)),+]),
        }
    };
}
