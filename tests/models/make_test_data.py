#!/usr/bin/env python3
"""Writes ONNX test data for a model, with ONNX Runtime as the oracle.

    make_test_data.py MODEL.onnx DIR [--seed S] [--shape name=dims]... [--sets N]

Draws seeded random inputs (numpy), runs the model in ONNX Runtime on the CPU
and writes DIR/test_data_set_<i>/input_<k>.pb and output_<k>.pb (ONNX
TensorProto files, named after the model's inputs and outputs), the layout
that `orchid check MODEL --test-dir DIR` reads.

ONNX Runtime runs with every graph optimization OFF (ORT_DISABLE_ALL), so the
oracle computes the graph as written, operator by operator, without fused
kernels (fused LayerNorm/GELU/attention, Conv+BN folding) whose rounding
differs from the unfused graph Orchid is checked against.

Input shapes: a dimension the model names symbolically (e.g. "batch") takes
its value from --shape when given (--shape input=2x3x224x224 sets a whole
input), and 1 otherwise. Float inputs are standard normal, integer inputs
uniform in [0, 10), booleans fair coins.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper
import onnxruntime as ort


def parse_shapes(specs):
    shapes = {}
    for spec in specs:
        name, sep, dims = spec.rpartition("=")
        if not sep or not name:
            sys.exit(f"make_test_data: --shape {spec!r}: expected name=d0xd1x...")
        try:
            shapes[name] = [int(d) for d in dims.split("x")] if dims else []
        except ValueError:
            sys.exit(f"make_test_data: --shape {spec!r}: dimensions must be integers")
    return shapes


def input_shape(value_info, shapes):
    if value_info.name in shapes:
        return shapes[value_info.name]
    dims = []
    for d in value_info.type.tensor_type.shape.dim:
        if d.HasField("dim_value"):
            dims.append(d.dim_value)
        elif d.dim_param in shapes:  # --shape batch=N binds a symbolic dim by name
            if len(shapes[d.dim_param]) != 1:
                sys.exit(f"make_test_data: --shape {d.dim_param}=...: a symbolic dim takes one value")
            dims.append(shapes[d.dim_param][0])
        else:
            dims.append(1)
    return dims


def random_input(rng, dtype, shape):
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    return rng.integers(0, 10, shape).astype(dtype)


def graph_inputs(model):
    # Initializers listed as graph inputs (old exporters) are not fed.
    initializers = {init.name for init in model.graph.initializer}
    return [vi for vi in model.graph.input if vi.name not in initializers]


def write_tensor(path, array, name):
    tensor = numpy_helper.from_array(np.ascontiguousarray(array), name)
    with open(path, "wb") as f:
        f.write(tensor.SerializeToString())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("dir")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shape", action="append", default=[], metavar="NAME=DIMS",
                        help="shape of an input (input=1x3x224x224) or value of a symbolic dim (batch=2)")
    parser.add_argument("--sets", type=int, default=1, help="number of test_data_set_* folders")
    args = parser.parse_args()

    shapes = parse_shapes(args.shape)
    model = onnx.load(args.model, load_external_data=False)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1  # deterministic reductions, and the test machines are small
    session = ort.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    dtypes = {i.name: ort_dtype(i.type) for i in session.get_inputs()}

    rng = np.random.default_rng(args.seed)
    for s in range(args.sets):
        out = os.path.join(args.dir, f"test_data_set_{s}")
        os.makedirs(out, exist_ok=True)
        feeds = {}
        for k, vi in enumerate(graph_inputs(model)):
            feeds[vi.name] = random_input(rng, dtypes[vi.name], input_shape(vi, shapes))
            write_tensor(os.path.join(out, f"input_{k}.pb"), feeds[vi.name], vi.name)
        results = session.run(None, feeds)
        for k, (meta, value) in enumerate(zip(session.get_outputs(), results)):
            write_tensor(os.path.join(out, f"output_{k}.pb"), value, meta.name)
        described = ", ".join(f"{n} {'x'.join(map(str, v.shape))}" for n, v in feeds.items())
        print(f"{out}: inputs {described}; {len(results)} outputs from onnxruntime {ort.__version__}")
    return 0


def ort_dtype(type_string):
    # onnxruntime describes input types as "tensor(float)" etc.
    names = {"float": np.float32, "double": np.float64, "float16": np.float16, "int64": np.int64,
             "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_}
    inner = type_string[len("tensor("):-1]
    if inner not in names:
        sys.exit(f"make_test_data: input type {type_string} not supported")
    return np.dtype(names[inner]).type


if __name__ == "__main__":
    sys.exit(main())
