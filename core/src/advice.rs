//! What can be known from a spec alone about how well it will learn: the choices the
//! learning-quality grid (docs/quality) measured to lose accuracy against float. `edgeflow
//! spec check` prints them; none makes a spec invalid.

use crate::fixed::{Activation, FfProducts, OutputDelta, ReluGate};
use crate::rounding::Rounding;
use crate::spec::Spec;

/// One piece of advice: the field it concerns and what to expect and do.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Advice {
    pub field: String,
    pub message: String,
}

impl Spec {
    /// Every choice in this spec that is known to cost accuracy, with what to do instead.
    pub fn learning_advice(&self) -> Vec<Advice> {
        let mut out = Vec::new();
        let mut say = |field: &str, message: String| {
            out.push(Advice {
                field: field.into(),
                message,
            })
        };
        let f = self.format();
        if f.width <= 8 {
            say(
                "fixed.width",
                format!(
                    "{}-bit values learn markedly worse than float, and deep networks may not \
                     learn at all; 10 bits or more come within about two points of it on the learning-quality grid",
                    f.width
                ),
            );
        }
        if self.rounding() == Rounding::Nearest
            && self.activation == Activation::Sigmoid
            && f.width <= 12
        {
            say(
                "rounding",
                "nearest rounding at 12 bits or fewer drops updates smaller than half a step of \
                 the format, and sigmoid networks stall several points below float; \
                 \"stochastic\" (the default for sigmoid) keeps them"
                    .into(),
            );
        }
        if self.output_delta == OutputDelta::Plain {
            say(
                "output_delta",
                "\"plain\" keeps pushing outputs already clipped at the sigmoid table's end, \
                 which drives weights and biases to the edge of their range; \"clipped\" is the \
                 default"
                    .into(),
            );
        }
        if self.activation == Activation::Relu && self.relu_gate == ReluGate::Plain {
            say(
                "relu_gate",
                "\"plain\" lets neurons saturated at the format's maximum keep growing their \
                 weights; deep ReLU networks stop learning; \"clipped\" is the default"
                    .into(),
            );
        }
        if self.activation == Activation::Relu && self.ff_products == FfProducts::Saturated {
            say(
                "ff_products",
                "\"saturated\" clips each product of a large ReLU activation and weight before \
                 the neuron's sum, so the sum loses how far it was out of range; deeper ReLU \
                 networks fall several points below float; \"rounded\" is the default"
                    .into(),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::spec::Spec;

    fn spec(extra: &str, width: u32, act: &str) -> Spec {
        let (ib, fb) = (2, width - 3);
        let t = format!(
            "name='a'\nlayers=[8,4,2]\nfan_out=[2,1]\nz=[2,2]\nactivation='{act}'\nlearning_rate_shift=2\n{extra}\n[fixed]\nwidth={width}\nint_bits={ib}\nfrac_bits={fb}\n[pattern]\nkind='type1'\n"
        );
        Spec::from_toml_str(&t, "a").unwrap()
    }

    fn fields(s: &Spec) -> Vec<String> {
        s.learning_advice().into_iter().map(|a| a.field).collect()
    }

    #[test]
    fn the_defaults_at_ten_bits_or_more_need_no_advice() {
        for w in [10, 12, 16] {
            for act in ["sigmoid", "relu"] {
                assert!(fields(&spec("", w, act)).is_empty(), "{act} {w}");
            }
        }
    }

    #[test]
    fn each_costly_choice_is_named() {
        assert_eq!(fields(&spec("", 8, "relu")), ["fixed.width"]);
        assert_eq!(
            fields(&spec("rounding='nearest'", 12, "sigmoid")),
            ["rounding"]
        );
        assert!(fields(&spec("rounding='nearest'", 16, "sigmoid")).is_empty());
        assert_eq!(
            fields(&spec("output_delta='plain'", 16, "sigmoid")),
            ["output_delta"]
        );
        assert_eq!(
            fields(&spec("relu_gate='plain'", 16, "relu")),
            ["relu_gate"]
        );
        assert!(fields(&spec("relu_gate='plain'", 16, "sigmoid")).is_empty());
        assert_eq!(
            fields(&spec("ff_products='saturated'", 12, "relu")),
            ["ff_products"]
        );
        assert!(fields(&spec("ff_products='saturated'", 12, "sigmoid")).is_empty());
    }
}
