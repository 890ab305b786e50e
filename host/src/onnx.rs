//! An ONNX model of a trained network: the messages of `onnx.proto` that a feed-forward graph
//! needs (field numbers as published there), encoded with prost, and the graph itself.
//!
//! The graph computes in float what the fixed-point network computes: the input rounded to
//! the network's input grid (`Format::quantize_input`), then per junction a dense
//! `MatMul` with the dequantized weights (zero off the pattern), the bias, the sum saturated
//! at the format's limits, and the activation (the spec's for hidden layers, sigmoid for the
//! output layer).

use edgeflow_core::matrices::DenseJunction;
use edgeflow_core::Spec;
use prost::Message;

/// The ONNX IR version written (ONNX 1.10, supported by every current runtime).
const IR_VERSION: i64 = 8;
/// The default domain's operator set: every operator used has had its current form since 13.
pub const OPSET: i64 = 13;
const FLOAT: i32 = 1;
const ATTRIBUTE_INT: i32 = 2;

#[derive(Clone, PartialEq, Message)]
pub struct ModelProto {
    #[prost(int64, tag = "1")]
    pub ir_version: i64,
    #[prost(string, tag = "2")]
    pub producer_name: String,
    #[prost(string, tag = "3")]
    pub producer_version: String,
    #[prost(string, tag = "6")]
    pub doc_string: String,
    #[prost(message, optional, tag = "7")]
    pub graph: Option<GraphProto>,
    #[prost(message, repeated, tag = "8")]
    pub opset_import: Vec<OperatorSetIdProto>,
    #[prost(message, repeated, tag = "14")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct OperatorSetIdProto {
    #[prost(string, tag = "1")]
    pub domain: String,
    #[prost(int64, tag = "2")]
    pub version: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct StringStringEntryProto {
    #[prost(string, tag = "1")]
    pub key: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

#[derive(Clone, PartialEq, Message)]
pub struct GraphProto {
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<NodeProto>,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(message, repeated, tag = "5")]
    pub initializer: Vec<TensorProto>,
    #[prost(string, tag = "10")]
    pub doc_string: String,
    #[prost(message, repeated, tag = "11")]
    pub input: Vec<ValueInfoProto>,
    #[prost(message, repeated, tag = "12")]
    pub output: Vec<ValueInfoProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct NodeProto {
    #[prost(string, repeated, tag = "1")]
    pub input: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    pub output: Vec<String>,
    #[prost(string, tag = "3")]
    pub name: String,
    #[prost(string, tag = "4")]
    pub op_type: String,
    #[prost(message, repeated, tag = "5")]
    pub attribute: Vec<AttributeProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct AttributeProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(int64, tag = "3")]
    pub i: i64,
    #[prost(int32, tag = "20")]
    pub r#type: i32,
}

#[derive(Clone, PartialEq, Message)]
pub struct TensorProto {
    #[prost(int64, repeated, tag = "1")]
    pub dims: Vec<i64>,
    #[prost(int32, tag = "2")]
    pub data_type: i32,
    #[prost(float, repeated, tag = "4")]
    pub float_data: Vec<f32>,
    #[prost(string, tag = "8")]
    pub name: String,
}

#[derive(Clone, PartialEq, Message)]
pub struct ValueInfoProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub r#type: Option<TypeProto>,
    #[prost(string, tag = "3")]
    pub doc_string: String,
}

#[derive(Clone, PartialEq, Message)]
pub struct TypeProto {
    #[prost(message, optional, tag = "1")]
    pub tensor_type: Option<TensorTypeProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TensorTypeProto {
    #[prost(int32, tag = "1")]
    pub elem_type: i32,
    #[prost(message, optional, tag = "2")]
    pub shape: Option<TensorShapeProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TensorShapeProto {
    #[prost(message, repeated, tag = "1")]
    pub dim: Vec<Dimension>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Dimension {
    #[prost(oneof = "DimValue", tags = "1, 2")]
    pub value: Option<DimValue>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum DimValue {
    #[prost(int64, tag = "1")]
    Value(i64),
    #[prost(string, tag = "2")]
    Param(String),
}

/// Element type INT64, for the predicted class.
const INT64: i32 = 7;

fn value_info(name: &str, elem_type: i32, dims: Vec<DimValue>, doc: &str) -> ValueInfoProto {
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            tensor_type: Some(TensorTypeProto {
                elem_type,
                shape: Some(TensorShapeProto {
                    dim: dims
                        .into_iter()
                        .map(|d| Dimension { value: Some(d) })
                        .collect(),
                }),
            }),
        }),
        doc_string: doc.into(),
    }
}

/// Nodes and constants as the graph grows.
#[derive(Default)]
struct Builder {
    nodes: Vec<NodeProto>,
    constants: Vec<TensorProto>,
}

impl Builder {
    fn constant(&mut self, name: &str, dims: &[usize], data: Vec<f32>) -> String {
        self.constants.push(TensorProto {
            dims: dims.iter().map(|&d| d as i64).collect(),
            data_type: FLOAT,
            float_data: data,
            name: name.into(),
        });
        name.into()
    }

    fn scalar(&mut self, name: &str, v: f32) -> String {
        self.constant(name, &[], vec![v])
    }

    fn node(&mut self, op: &str, inputs: &[&str], output: &str) -> String {
        self.nodes.push(NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![output.into()],
            name: output.into(),
            op_type: op.into(),
            attribute: Vec::new(),
        });
        output.into()
    }
}

/// Input and output names of the exported graph.
pub const INPUT: &str = "input";
pub const SCORES: &str = "scores";
pub const CLASS: &str = "class";

/// The ONNX model of `spec`'s network with the weights `dense`, with `metadata` as the
/// model's metadata properties.
pub fn network(spec: &Spec, dense: &[DenseJunction], metadata: &[(String, String)]) -> Vec<u8> {
    let f = spec.format();
    let mut b = Builder::default();
    // The input grid, exactly as Format::quantize_input: q = ⌊clip(x)·2^(bits−1) + ½⌋, then
    // into the format (shifted, or rounded half up when the format has fewer fraction bits)
    // and saturated. Every step is exact in f32 for formats up to 16 bits.
    let bits = spec.input_bits();
    let steps = (1u64 << (bits - 1)) as f32;
    let (zero, one, half) = (
        b.scalar("zero", 0.0),
        b.scalar("one", 1.0),
        b.scalar("half", 0.5),
    );
    let x = b.node("Clip", &[INPUT, &zero, &one], "input_clipped");
    let st = b.scalar("input_steps", steps);
    let x = b.node("Mul", &[&x, &st], "input_scaled");
    let x = b.node("Add", &[&x, &half], "input_half");
    let mut raw = b.node("Floor", &[&x], "input_code");
    if bits - 1 > f.frac_bits {
        let down = b.scalar("input_shift", 0.5f32.powi((bits - 1 - f.frac_bits) as i32));
        let x = b.node("Mul", &[&raw, &down], "input_shifted");
        let x = b.node("Add", &[&x, &half], "input_shifted_half");
        raw = b.node("Floor", &[&x], "input_raw");
    } else if bits - 1 < f.frac_bits {
        let up = b.scalar("input_shift", (1u64 << (f.frac_bits - (bits - 1))) as f32);
        raw = b.node("Mul", &[&raw, &up], "input_raw");
    }
    let top = b.scalar("format_max_raw", f.max() as f32);
    let raw = b.node("Min", &[&raw, &top], "input_saturated");
    let lsb = b.scalar("format_lsb", 0.5f32.powi(f.frac_bits as i32));
    let mut a = b.node("Mul", &[&raw, &lsb], "layer0");
    let lo = b.scalar("format_min", f.to_f64(f.min()) as f32);
    let hi = b.scalar("format_max", f.to_f64(f.max()) as f32);
    let last = dense.len();
    for (j, d) in dense.iter().enumerate() {
        let n = j + 1;
        // MatMul takes [left, right]: the transpose of the row-per-right-neuron matrix.
        let mut wt = vec![0f32; d.rows * d.cols];
        for r in 0..d.rows {
            for c in 0..d.cols {
                wt[c * d.rows + r] = f.to_f64(d.weight[r * d.cols + c]) as f32;
            }
        }
        let w = b.constant(&format!("weight{n}"), &[d.cols, d.rows], wt);
        let bias: Vec<f32> = d.bias.iter().map(|&v| f.to_f64(v) as f32).collect();
        let bias = b.constant(&format!("bias{n}"), &[d.rows], bias);
        let m = b.node("MatMul", &[&a, &w], &format!("matmul{n}"));
        let h = b.node("Add", &[&m, &bias], &format!("sum{n}"));
        // the fixed-point sum saturates at the format's limits before the activation
        let h = b.node("Clip", &[&h, &lo, &hi], &format!("preactivation{n}"));
        let act = spec.activation_of_layer(n).onnx_op();
        let out = if n == last {
            SCORES.to_string()
        } else {
            format!("layer{n}")
        };
        a = b.node(act, &[&h], &out);
    }
    b.node("ArgMax", &[SCORES], CLASS);
    let argmax = b.nodes.last_mut().expect("just added");
    for (name, i) in [("axis", 1), ("keepdims", 0)] {
        argmax.attribute.push(AttributeProto {
            name: name.into(),
            i,
            r#type: ATTRIBUTE_INT,
        });
    }
    let batch = || DimValue::Param("N".into());
    let outputs = *spec.layers.last().unwrap() as i64;
    let graph = GraphProto {
        node: b.nodes,
        name: spec.name.clone(),
        initializer: b.constants,
        doc_string: format!(
            "edgeflow network '{}': the trained fixed-point weights as float, sparse pattern as zeros",
            spec.name
        ),
        input: vec![value_info(
            INPUT,
            FLOAT,
            vec![batch(), DimValue::Value(spec.layers[0] as i64)],
            "one row per sample: the features after the model's scaling, in [0, 1] (clipped), zero-padded to layers[0]",
        )],
        output: vec![
            value_info(
                SCORES,
                FLOAT,
                vec![batch(), DimValue::Value(outputs)],
                "the output layer's sigmoid activations",
            ),
            value_info(
                CLASS,
                INT64,
                vec![batch()],
                "the predicted class: the first index of the largest score",
            ),
        ],
    };
    ModelProto {
        ir_version: IR_VERSION,
        producer_name: "edgeflow".into(),
        producer_version: env!("CARGO_PKG_VERSION").into(),
        doc_string: String::new(),
        graph: Some(graph),
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: OPSET,
        }],
        metadata_props: metadata
            .iter()
            .map(|(k, v)| StringStringEntryProto {
                key: k.clone(),
                value: v.clone(),
            })
            .collect(),
    }
    .encode_to_vec()
}
