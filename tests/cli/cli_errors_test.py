#!/usr/bin/env python3
"""Bad input to the orchid CLI: each case must exit with status exactly 2 and
print one message that starts with `orchid: error:` and names the file / node /
operator and what was expected. Never an internal error, abort or crash.

Usage: cli_errors_test.py ORCHID_BINARY     (VERBOSE=1 prints every message)
The bad models and tensor files are built here, in a temporary folder, with
the onnx Python package.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ORCHID = sys.argv[1] if len(sys.argv) > 1 else "orchid"
FAILURES = []


def save_model(path, nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


def fvalue(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def save_tensor(path, array, name=""):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())
    return path


def expect_error(case, args, *fragments):
    """Runs orchid with `args`; checks status 2, one clear message, fragments."""
    proc = subprocess.run([ORCHID] + args, capture_output=True, text=True, timeout=120)
    err = proc.stderr
    problems = []
    if proc.returncode < 0:
        problems.append(f"killed by signal {-proc.returncode}")
    elif proc.returncode != 2:
        problems.append(f"exit status {proc.returncode}, expected 2")
    error_lines = [line for line in err.splitlines() if line.startswith("orchid: error:")]
    if len(error_lines) != 1 or not err.lstrip().startswith(("orchid: error:", "note:")):
        problems.append("expected exactly one line starting with 'orchid: error:'")
    for bad in ("internal error", "terminate called", "Aborted", "Segmentation", "AddressSanitizer"):
        if bad in err:
            problems.append(f"stderr mentions '{bad}'")
    for fragment in fragments:
        if fragment not in err:
            problems.append(f"message lacks '{fragment}'")
    status = "ok  " if not problems else "FAIL"
    print(f"{status} {case}")
    if os.environ.get("VERBOSE"):
        print("     " + err.strip().replace("\n", "\n     "))
    if problems:
        print("     command: " + " ".join([ORCHID] + args))
        print("     problems: " + "; ".join(problems))
        print("     stderr: " + err.strip().replace("\n", "\n             "))
        FAILURES.append(case)


def relu_model(d):
    return save_model(os.path.join(d, "relu.onnx"), [helper.make_node("Relu", ["x"], ["y"], name="relu")],
                      [fvalue("x", [2, 3])], [fvalue("y", [2, 3])])


def conv_model(d):
    """A real model of a few KB: Conv with a 8x3x3x3 weight."""
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
    return save_model(os.path.join(d, "conv.onnx"), [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1")],
                      [fvalue("x", [1, 3, 8, 8])], [fvalue("y", [1, 8, 6, 6])], [w])


def file_cases(d):
    relu = relu_model(d)
    expect_error("missing model file", ["run", os.path.join(d, "missing.onnx")], "missing.onnx", "no such file")
    expect_error("model path is a folder", ["run", d], d, "is a folder")
    empty = os.path.join(d, "empty.onnx")
    open(empty, "wb").close()
    expect_error("empty model file", ["run", empty], "empty.onnx", "no graph")
    data = open(conv_model(d), "rb").read()
    truncated = os.path.join(d, "truncated.onnx")
    with open(truncated, "wb") as f:
        f.write(data[: len(data) // 2])
    expect_error("truncated model", ["run", truncated], "truncated.onnx", "corrupt or truncated")
    expect_error("truncated model (check)", ["check", truncated], "truncated.onnx", "corrupt or truncated")
    rng = np.random.default_rng(7)
    random_bytes = os.path.join(d, "random.onnx")
    with open(random_bytes, "wb") as f:
        f.write(rng.integers(0, 256, 4096, dtype=np.uint8).tobytes())
    expect_error("random bytes", ["run", random_bytes], "random.onnx")
    test_dir = os.path.join(d, "test_dir")
    os.makedirs(os.path.join(test_dir, "test_data_set_0"))
    save_tensor(os.path.join(test_dir, "test_data_set_0", "input_0.pb"), np.ones((2, 3), np.float32))
    expect_error("random bytes (check)", ["check", random_bytes, "--test-dir", test_dir], "random.onnx")
    return relu


def graph_cases(d):
    x, y = fvalue("x", [2]), fvalue("y", [2])
    unknown = save_model(os.path.join(d, "unknown_ops.onnx"), [
        helper.make_node("FrobnicateA", ["x"], ["a"], name="first"),
        helper.make_node("Relu", ["a"], ["b"], name="fine"),
        helper.make_node("FrobnicateB", ["b"], ["c"], name="second"),
        helper.make_node("FrobnicateA", ["c"], ["y"], name="third"),
    ], [x], [y])
    expect_error("two unknown operators on three nodes", ["run", unknown], "unknown_ops.onnx",
                 "unsupported operators", "FrobnicateA (nodes 'first', 'third')", "FrobnicateB (node 'second')")
    expect_error("unknown operators (check)", ["check", unknown], "FrobnicateA", "FrobnicateB")
    domain = save_model(os.path.join(d, "domain.onnx"),
                        [helper.make_node("Foo", ["x"], ["y"], name="foo", domain="com.example")], [x], [y])
    expect_error("unknown domain", ["run", domain], "domain.onnx", "com.example.Foo", "'foo'")
    undefined = save_model(os.path.join(d, "undefined.onnx"),
                           [helper.make_node("Add", ["x", "ghost"], ["y"], name="adder")], [x], [y])
    expect_error("node reads an undefined value", ["run", undefined], "undefined.onnx", "node 'adder' (Add)",
                 "'ghost'")
    duplicate = save_model(os.path.join(d, "duplicate.onnx"), [
        helper.make_node("Relu", ["x"], ["y"], name="r1"),
        helper.make_node("Neg", ["x"], ["y"], name="r2"),
    ], [x], [y])
    expect_error("duplicate value names", ["run", duplicate], "duplicate.onnx", "'y'", "defined twice",
                 "node 'r2' (Neg)")
    orphan = save_model(os.path.join(d, "orphan.onnx"), [helper.make_node("Relu", ["x"], ["y"], name="r")],
                        [x], [y, fvalue("z", [2])])
    expect_error("graph output nobody computes", ["run", orphan], "orphan.onnx", "graph output 'z'",
                 "not computed")


def initializer_cases(d):
    x, y = fvalue("x", [2, 3]), fvalue("y", [2, 3])
    add = [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    w = numpy_helper.from_array(np.zeros((2, 3), np.float32), "w")
    w.raw_data = bytes(20)
    raw = save_model(os.path.join(d, "raw.onnx"), add, [x], [y], [w])
    expect_error("raw_data size does not match shape", ["run", raw], "raw.onnx", "initializer 'w'", "20 bytes",
                 "need 24")

    def external(name, location):
        t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2, 3])
        t.data_location = TensorProto.EXTERNAL
        entry = t.external_data.add()
        entry.key, entry.value = "location", location
        return save_model(os.path.join(d, name), add, [x], [y], [t])

    expect_error("external data file missing", ["run", external("ext_missing.onnx", "nowhere.bin")],
                 "ext_missing.onnx", "initializer 'w'", "nowhere.bin")
    with open(os.path.join(d, "short.bin"), "wb") as f:
        f.write(bytes(10))
    expect_error("external data file too short", ["run", external("ext_short.onnx", "short.bin")],
                 "ext_short.onnx", "initializer 'w'", "short.bin", "too short")
    expect_error("external data path escapes with ..", ["run", external("ext_escape.onnx", "../etc/passwd")],
                 "ext_escape.onnx", "initializer 'w'", "'../etc/passwd'", "inside the model's folder")


def tensor_file_cases(d, relu):
    good = save_tensor(os.path.join(d, "good.pb"), np.ones((2, 3), np.float32), "x")
    wrong_dtype = save_tensor(os.path.join(d, "int.pb"), np.ones((2, 3), np.int64), "x")
    expect_error("input file of wrong dtype", ["run", relu, "--input", "x=" + wrong_dtype], "int.pb", "'x'",
                 "float32", "int64")
    wrong_shape = save_tensor(os.path.join(d, "shape.pb"), np.ones((3, 2), np.float32), "x")
    expect_error("input file of wrong shape", ["run", relu, "--input", "x=" + wrong_shape], "shape.pb", "'x'",
                 "2x3", "3x2")
    expect_error("--input naming a nonexistent input", ["run", relu, "--input", "nope=" + good], "nope",
                 "no input", "'x'")
    expect_error("--input naming an intermediate value", ["run", relu, "--input", "x=" + good, "--input",
                                                          "y=" + good], "'y'", "no input")
    corrupt = os.path.join(d, "corrupt.pb")
    with open(corrupt, "wb") as f:
        f.write(b"\xff\xff\xff\xff\x0f garbage")
    expect_error("corrupt .pb tensor file", ["run", relu, "--input", "x=" + corrupt], "corrupt.pb",
                 "corrupt or truncated")
    data = open(save_tensor(os.path.join(d, "big.pb"), np.ones((64, 64), np.float32)), "rb").read()
    truncated = os.path.join(d, "truncated.pb")
    with open(truncated, "wb") as f:
        f.write(data[: len(data) // 2])
    expect_error("truncated .pb tensor file", ["run", relu, "--input", "x=" + truncated], "truncated.pb")
    expect_error("missing .pb tensor file", ["run", relu, "--input", "x=" + os.path.join(d, "nope.pb")],
                 "nope.pb")
    expect_error("--input without '='", ["run", relu, "--input", good], "--input", "NAME=FILE.pb")
    expect_error("missing input value", ["run", relu], "relu.onnx", "'x'", "--input")
    expect_error("--output-dir is a file", ["run", relu, "--input", "x=" + good, "--output-dir", good],
                 "--output-dir", "good.pb")
    for spec, fragment in (("x=2by3", "'2by3'"), ("x=2x-3", "'-3'"), ("=2x3", "NAME="), ("x", "NAME="),
                           ("x=2x", "''")):
        expect_error(f"bad --shape syntax '{spec}'", ["run", relu, "--random-inputs", "--shape", spec],
                     "--shape", fragment)
    expect_error("no subcommand", [], "subcommand is required")
    expect_error("unknown subcommand", ["frobnicate"], "unknown subcommand 'frobnicate'", "run")
    expect_error("run without a model", ["run"], "model is required")
    expect_error("--seed that is not a number", ["run", relu, "--random-inputs", "--seed", "abc"], "--seed", "abc")
    expect_error("--shape of wrong rank", ["run", relu, "--random-inputs", "--shape", "x=2x3x4"], "relu.onnx",
                 "'x'", "rank 3", "rank 2")


def inference_cases(d):
    reshape = save_model(os.path.join(d, "reshape.onnx"),
                         [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
                         [fvalue("x", [2, 3]), helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
                         [fvalue("y", [3, 2])])
    expect_error("Reshape shape not known at load time", ["run", reshape, "--random-inputs"], "reshape.onnx",
                 "node 'reshape' (Reshape)", "must be known when the model is loaded")
    w = numpy_helper.from_array(np.zeros((4, 3, 3), np.float32), "w")
    conv = save_model(os.path.join(d, "conv_rank.onnx"), [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1")],
                      [fvalue("x", [1, 3, 8, 8])], [fvalue("y", [1, 4, 6, 6])], [w])
    expect_error("Conv weight of wrong rank", ["run", conv, "--random-inputs"], "conv_rank.onnx",
                 "node 'conv1' (Conv)", "1x3x8x8", "4x3x3")


def main():
    with tempfile.TemporaryDirectory(prefix="orchid_cli_errors_") as d:
        relu = file_cases(d)
        graph_cases(d)
        initializer_cases(d)
        tensor_file_cases(d, relu)
        inference_cases(d)
    if FAILURES:
        print(f"\n{len(FAILURES)} case(s) failed: " + ", ".join(FAILURES))
        return 1
    print("\nall CLI error cases passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
