#!/usr/bin/env python3
"""Run an exported edgeflow model with onnxruntime, and the same network with NumPy alone.

    edgeflow train --spec specs/digits.toml --epochs 20 --out digits.model
    edgeflow export --model digits.model -o digits.onnx
    edgeflow export --model digits.model -o digits.npz
    python3 docs/export_example.py digits.onnx digits.npz data/digits.csv.gz --full-scale 16

DATA is a CSV (optionally gzipped) with the label in the last column. --full-scale divides
every value first, as edgeflow does for the bundled digits (16) and MNIST (255); a CSV of
your own has none. With --bit-exact FILE (the CSV of `edgeflow infer -o FILE`) it also
counts how often ONNX agrees with edgeflow's bit-exact predictions. Needs numpy and
onnxruntime (pip install numpy onnxruntime).
"""

import argparse
import gzip
import json
import re

import numpy as np
import onnxruntime as ort


def load_csv(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rows = np.loadtxt(f, delimiter=",", ndmin=2)
    return rows[:, :-1], rows[:, -1].astype(int)


def scale(x, npz):
    """The model's scaling: each feature to [0, 1] by its stored min and max, clipped."""
    lo, hi = npz["scale_min"], npz["scale_max"]
    span = np.where(hi > lo, hi - lo, 1.0)
    out = np.clip((x - lo) / span, 0.0, 1.0)
    out[:, hi <= lo] = 0.0  # a feature constant in training carries nothing
    return out


def pad(x, width):
    """Zero-pad the features to the network's input width (layers[0])."""
    return np.pad(x, ((0, 0), (0, width - x.shape[1])))


def input_grid(x, npz):
    """The network's inputs as edgeflow encodes them: rounded to input_bits, half up."""
    width, _, frac = (int(v) for v in npz["format"])
    bits = int(npz["input_bits"])
    q = np.floor(np.clip(x, 0.0, 1.0) * 2 ** (bits - 1) + 0.5)
    if bits - 1 <= frac:
        raw = q * 2 ** (frac - bits + 1)
    else:
        raw = np.floor(q / 2 ** (bits - 1 - frac) + 0.5)
    return np.minimum(raw, 2 ** (width - 1) - 1) / 2**frac


def float_network(a, npz):
    """The dequantized network in float64: weight<n> is right x left, zero off the pattern."""
    width, _, frac = (int(v) for v in npz["format"])
    lo, hi = -(2 ** (width - 1)) / 2**frac, (2 ** (width - 1) - 1) / 2**frac
    spec = bytes(npz["spec"]).decode()
    hidden = re.search(r'^activation\s*=\s*"(\w+)"', spec, re.M).group(1)
    functions = {
        "sigmoid": lambda h: 1.0 / (1.0 + np.exp(-h)),
        "relu": lambda h: np.maximum(h, 0.0),
        "tanh": np.tanh,
    }
    junctions = len(npz["layers"]) - 1
    for n in range(1, junctions + 1):
        # the sum saturates at the format's limits, as in the fixed-point network
        h = np.clip(a @ npz[f"weight{n}"].astype(np.float64).T + npz[f"bias{n}"], lo, hi)
        a = functions[hidden if n < junctions else "sigmoid"](h)
    return a


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("onnx")
    p.add_argument("npz")
    p.add_argument("data")
    p.add_argument("--full-scale", type=float, default=None)
    p.add_argument("--bit-exact", help="predictions CSV written by `edgeflow infer -o`")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args()

    npz = np.load(args.npz)
    x, labels = load_csv(args.data)
    if args.full_scale:
        x = x / args.full_scale
    x = pad(scale(x, npz), int(npz["layers"][0])).astype(np.float32)

    session = ort.InferenceSession(args.onnx)
    scores, onnx_class = session.run(["scores", "class"], {"input": x})
    float_class = float_network(input_grid(x.astype(np.float64), npz), npz).argmax(axis=1)

    report = {
        "samples": len(labels),
        "onnx_accuracy": float(np.mean(onnx_class == labels)),
        "onnx_agrees_with_float": float(np.mean(onnx_class == float_class)),
    }
    if args.bit_exact:
        bit_exact = np.loadtxt(args.bit_exact, delimiter=",", skiprows=1, dtype=int)[:, 1]
        report["onnx_agrees_with_bit_exact"] = float(np.mean(onnx_class == bit_exact))
    if args.json:
        print(json.dumps(report))
    else:
        for k, v in report.items():
            print(f"{k}: {v:.4f}" if isinstance(v, float) else f"{k}: {v}")


if __name__ == "__main__":
    main()
