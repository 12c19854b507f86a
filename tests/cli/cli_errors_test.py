#!/usr/bin/env python3
"""Bad input to the orchid CLI: each case must exit with status exactly 2 and
print one message that starts with `orchid: error:` and names the file / node /
operator and what was expected. Never an internal error, abort or crash.
A few positive cases (exit 0) check the round trip `orchid compile` -> `orchid
run DIR` against the reference interpreter, so that the artifact cases above
them start from a valid artifact.

Usage: cli_errors_test.py ORCHID_BINARY     (VERBOSE=1 prints every message)
The bad models and tensor files are built here, in a temporary folder, with
the onnx Python package.
"""
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

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


def expect_ok(case, args, *check):
    """Runs orchid with `args`; checks status 0 and a clean stderr, then calls
    each `check` (raising AssertionError on a problem). Returns the process."""
    proc = subprocess.run([ORCHID] + args, capture_output=True, text=True, timeout=120)
    problems = []
    if proc.returncode < 0:
        problems.append(f"killed by signal {-proc.returncode}")
    elif proc.returncode != 0:
        problems.append(f"exit status {proc.returncode}, expected 0")
    for bad in ("error", "terminate called", "Aborted", "Segmentation", "AddressSanitizer"):
        if bad in proc.stderr:
            problems.append(f"stderr mentions '{bad}'")
    if not problems:
        problems += run_checks(check)
    status = "ok  " if not problems else "FAIL"
    print(f"{status} {case}")
    if problems:
        print("     command: " + " ".join([ORCHID] + args))
        print("     problems: " + "; ".join(problems))
        print("     stderr: " + proc.stderr.strip().replace("\n", "\n             "))
        FAILURES.append(case)
    return proc


def run_checks(checks):
    problems = []
    for fn in checks:
        try:
            fn()
        except AssertionError as e:
            problems.append(" ".join(str(e).split()) or "check failed")
    return problems


def expect_true(case, *check):
    """A check on the files earlier cases wrote (no orchid run)."""
    problems = run_checks(check)
    print(f"{'ok  ' if not problems else 'FAIL'} {case}")
    if problems:
        print("     problems: " + "; ".join(problems))
        FAILURES.append(case)


def load_output(folder, k=0):
    path = os.path.join(folder, f"output_{k}.pb")
    assert os.path.isfile(path), f"no {path}"
    return numpy_helper.to_array(onnx.load_tensor(path))


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
    tests = os.path.join(d, "tests")
    os.makedirs(os.path.join(tests, "test_data_set_0"), exist_ok=True)
    expect_error("check: model path is a folder", ["check", d, "--test-dir", tests], d, "is a folder")
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
    future = save_model(os.path.join(d, "opset99.onnx"), [helper.make_node("Relu", ["x"], ["y"], name="r")],
                        [x], [y], opset=99)
    expect_error("opset newer than implemented", ["run", future], "opset99.onnx", "opset 99", "opsets 1 to 18")
    negative = save_model(os.path.join(d, "negative_dim.onnx"), [helper.make_node("Relu", ["x"], ["y"], name="r")],
                          [fvalue("x", [2, -1])], [y])
    expect_error("negative input dimension", ["run", negative], "negative_dim.onnx", "input 'x'",
                 "dimension 1 as -1")


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


def artifact_cases(d):
    """`orchid compile` / `run DIR` / `bench DIR`: a good artifact round trip
    first (exit 0), then broken artifacts and bad flag combinations."""
    conv = conv_model(d)
    art = os.path.join(d, "conv_art")
    # For the thread count the in-memory compile below uses: a plan is chosen
    # by costs measured per thread count (a conv's oneDNN and direct kernels
    # round differently), and with the same one both compiles read the same
    # measurements from the cache, so they choose the same plan.
    expect_ok("compile a model", ["compile", conv, "-o", art, "-q", "--threads", "1"],
              lambda: assert_files(art, "plan.json", "weights.bin"))
    x = save_tensor(os.path.join(d, "conv_x.pb"),
                    np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32), "x")
    out_art, out_mem, out_ref = (os.path.join(d, name) for name in ("out_art", "out_mem", "out_ref"))
    expect_ok("run the artifact", ["run", art, "--input", "x=" + x, "--output-dir", out_art,
                                   "--threads", "1"])
    expect_ok("run the ONNX model compiled in memory", ["run", conv, "--input", "x=" + x,
                                                        "--output-dir", out_mem, "--threads", "1"])
    expect_ok("run the ONNX model on the interpreter", ["run", conv, "--interpreter", "--input", "x=" + x,
                                                        "--output-dir", out_ref])

    def same_as_in_memory():
        a, b = load_output(out_art), load_output(out_mem)
        np.testing.assert_array_equal(a, b, err_msg="artifact vs in-memory compile")

    def close_to_interpreter():
        a, ref = load_output(out_art), load_output(out_ref)
        assert a.dtype == ref.dtype and a.shape == ref.shape, f"{a.dtype}{a.shape} vs {ref.dtype}{ref.shape}"
        np.testing.assert_allclose(a, ref, rtol=1e-5, atol=1e-6, err_msg="artifact vs interpreter")

    expect_true("artifact output equals the in-memory compile", same_as_in_memory)
    expect_true("artifact output matches the interpreter", close_to_interpreter)

    def bench_json():
        last = proc.stdout.strip().splitlines()[-1]
        result = json.loads(last)
        assert "median_ms" in result and "arena_bytes" in result, f"bench --json last line: {last}"
        work = result.get("work", {})
        assert 0 < work.get("linear_flops", 0) <= work.get("flops", 0), f"bench --json work: {work}"
        assert work.get("min_bytes", 0) > 0, f"bench --json work: {work}"
        kernels = result.get("kernel_list", [])
        assert len(kernels) == result["kernels"], f"kernel_list has {len(kernels)} of {result['kernels']} kernels"
        peaks = result["peaks"]
        for k in kernels:  # each kernel's bound is its own work at the peaks
            expected = 1e3 * max(k["flops"] / peaks["flops_per_second"], k["bytes"] / peaks["bytes_per_second"])
            assert k["bytes"] > 0 and abs(k["bound_ms"] - expected) <= 1e-9 + 1e-9 * expected, f"kernel {k}"
            assert k["limit"] in ("memory", "compute") and k["ms"] >= 0, f"kernel {k}"
        assert abs(result["bound_ms"] - sum(k["bound_ms"] for k in kernels)) <= 1e-9 + 1e-9 * result["bound_ms"]

    proc = expect_ok("bench the artifact", ["bench", art, "--runs", "1", "--warmup", "0", "--threads", "1",
                                            "--json"])
    if proc.returncode == 0:
        expect_true("bench --json prints JSON on the last line", bench_json)

    def machine_json():
        result = json.loads(machine.stdout.strip().splitlines()[-1])
        assert result["flops_per_second"] > 1e8 and result["bytes_per_second"] > 1e8, f"machine --json: {result}"

    machine = expect_ok("measure the machine's peaks", ["machine", "--threads", "1", "--json"])
    if machine.returncode == 0:
        expect_true("machine --json prints positive peaks on the last line", machine_json)

    derive_cases(d, conv, x, out_ref)

    def broken_copy(name):
        folder = os.path.join(d, name)
        shutil.copytree(art, folder)
        return folder

    not_artifact = os.path.join(d, "not_an_artifact")
    os.makedirs(not_artifact)
    save_tensor(os.path.join(not_artifact, "input_0.pb"), np.ones((2, 3), np.float32))
    expect_error("run a folder without plan.json", ["run", not_artifact], "not_an_artifact", "folder", "plan.json")
    bad_json = broken_copy("bad_json")
    with open(os.path.join(bad_json, "plan.json"), "w") as f:
        f.write('{ "format": "orchid-program", not json')
    expect_error("plan.json that is not JSON", ["run", bad_json, "--random-inputs"], "bad_json", "plan.json",
                 "JSON")
    other_version = broken_copy("other_version")
    plan_path = os.path.join(other_version, "plan.json")
    with open(plan_path) as f:
        plan = f.read()
    parsed = json.loads(plan)
    expect_true("plan.json has format_version and orchid_version",
                lambda: assert_keys(parsed, "format_version", "orchid_version"))
    parsed["orchid_version"] = "0.0.0-other"
    with open(plan_path, "w") as f:
        json.dump(parsed, f)
    expect_error("plan.json of another orchid_version", ["run", other_version, "--random-inputs"],
                 "other_version", "0.0.0-other", "compile the model again")
    expect_error("plan.json of another orchid_version (bench)", ["bench", other_version, "--runs", "1"],
                 "other_version", "compile the model again")
    truncated = broken_copy("truncated_weights")
    weights = os.path.join(truncated, "weights.bin")
    with open(weights, "r+b") as f:
        f.truncate(os.path.getsize(weights) // 2)
    expect_error("weights.bin truncated", ["run", truncated, "--random-inputs"], "truncated_weights", "weights.bin", "truncated")
    # An artifact is code: a kernels.so changed after compile is refused.
    chain = save_model(os.path.join(d, "chain.onnx"), [
        helper.make_node("Sigmoid", ["x"], ["s"], name="s"),
        helper.make_node("Mul", ["x", "s"], ["m"], name="m"),
        helper.make_node("Tanh", ["m"], ["y"], name="t"),
    ], [fvalue("x", [64, 64])], [fvalue("y", [64, 64])])
    chain_art = os.path.join(d, "chain_art")
    # A cache of its own: analytical costs only, which always fuse this chain.
    expect_ok("compile a fusable chain", ["compile", chain, "-o", chain_art, "--no-profile",
                                          "--cache-dir", os.path.join(d, "chain_cache")])
    expect_true("the chain's artifact ships a generated kernels.so",
                lambda: assert_files(chain_art, "kernels.so"))
    if os.path.exists(os.path.join(chain_art, "kernels.so")):
        with open(os.path.join(chain_art, "kernels.so"), "ab") as f:
            f.write(b"tampered")
        expect_error("kernels.so changed after compile", ["run", chain_art, "--random-inputs"], "kernels.so",
                     "changed since it was built")
    # No working compiler: library kernels only, with a warning, and the right answer.
    no_cc_art = os.path.join(d, "no_compiler_art")
    env = dict(os.environ, ORCHID_KERNEL_CXX="/nonexistent/g++")
    no_cc = subprocess.run([ORCHID, "compile", chain, "-o", no_cc_art, "--no-profile", "--cache-dir",
                            os.path.join(d, "no_cc_cache")], capture_output=True, text=True, env=env, timeout=120)

    def compiled_without_generated_kernels():
        assert no_cc.returncode == 0, f"exit {no_cc.returncode}: {no_cc.stderr}"
        assert "warning: the C++ compiler /nonexistent/g++ does not run" in no_cc.stderr, no_cc.stderr
        assert not os.path.exists(os.path.join(no_cc_art, "kernels.so")), "a kernels.so without a compiler"
    expect_true("compile without a working compiler: library kernels, a warning", compiled_without_generated_kernels)
    no_cc_check = subprocess.run([ORCHID, "check", chain, "--no-profile", "--cache-dir",
                                  os.path.join(d, "no_cc_cache")], capture_output=True, text=True, env=env,
                                 timeout=120)

    def checked_without_generated_kernels():
        assert no_cc_check.returncode == 0 and "PASS" in no_cc_check.stdout, no_cc_check.stdout + no_cc_check.stderr
        assert "generated" not in no_cc_check.stdout, no_cc_check.stdout  # the `ran` line
    expect_true("check without a working compiler: right, no generated kernel", checked_without_generated_kernels)
    expect_error("compile without -o", ["compile", conv], "--output")
    a_file = os.path.join(d, "regular_file")
    open(a_file, "w").close()
    expect_error("compile -o onto a regular file", ["compile", conv, "-o", a_file], "regular_file")
    output_fault_cases(d, conv)
    expect_error("bench --runs 0", ["bench", conv, "--runs", "0"], "--runs")
    expect_error("check --fission --interpreter", ["check", conv, "--fission", "--interpreter"], "--fission",
                 "--interpreter")
    expect_error("run an artifact with --interpreter", ["run", art, "--interpreter", "--random-inputs"],
                 "conv_art", "--interpreter")
    expect_error("run an artifact with --shape", ["run", art, "--shape", "x=1x2", "--random-inputs"], "conv_art",
                 "--shape")


def derive_cases(d, conv, x, out_ref):
    """Derivation (on by default): the compiled plan records what derivation
    did, `explain` shows it, the outputs still match the interpreter, and
    --no-derive / --no-fusion compile without it."""
    art = os.path.join(d, "conv_derived")
    expect_ok("compile (derivation on by default)", ["compile", conv, "-o", art, "-q", "--threads", "1"])
    out = os.path.join(d, "out_derived")
    expect_ok("run the derived artifact", ["run", art, "--input", "x=" + x, "--output-dir", out, "--threads", "1"])
    expect_true("the derived artifact's output matches the interpreter",
                lambda: np.testing.assert_allclose(load_output(out), load_output(out_ref), rtol=1e-4, atol=1e-5))

    def derivation_record():
        with open(os.path.join(art, "plan.json")) as f:
            d = json.load(f)["derivation"]
        assert len(d["records"]) == 1, d
        r = d["records"][0]
        assert r["op"] == "Conv" and r["nodes"] == ["conv1"], r
        assert r["alternatives"] > 0 and r["search"]["states"] > 0, r
        # Measured forms (the estimate may rule all out for so small a conv) have times and steps.
        assert all(f["ms"] > 0 and f["derivation"] for f in r["measured"]), r
        # Forms measured within 1.1x of the original go to the BLP beside it; "applied": the plan uses one.
        assert r["offered"] == (r["derived_ms"] > 0 and r["derived_ms"] <= 1.1 * r["original_ms"]), r
        assert r["offered"] or not r["applied"], r

    expect_true("plan.json records the derivation of conv1", derivation_record)
    shown = expect_ok("explain the derived artifact", ["explain", art])
    expect_true("explain names the primitive and reports the search",
                lambda: (assert_in("conv1", shown.stdout), assert_in("states expanded", shown.stdout)))
    for flag in ["--no-derive", "--no-fusion"]:
        plain = os.path.join(d, "conv_plain" + flag.replace("-", "_"))
        expect_ok(f"compile with {flag}", ["compile", conv, "-o", plain, "-q", flag, "--threads", "1", "--no-profile"])
        shown = expect_ok(f"explain an artifact compiled with {flag}", ["explain", plain])
        expect_true(f"explain says the {flag} artifact was compiled without derivation",
                    lambda: assert_in("without derivation", shown.stdout))
    for flags in [["--derive", "--no-derive"], ["--derive", "--no-fusion"]]:
        expect_error(f"compile with {' '.join(flags)}", ["compile", conv, "-o", os.path.join(d, "conflict"), *flags],
                     flags[1], "excludes")

    def explain_json():
        report = json.loads(explained.stdout.strip().splitlines()[-1])
        r = report["records"][0]
        assert r["alternatives"] > 0 and r["search"]["dedup_hits"] > 0, r

    explained = expect_ok("explain a model (analytical costs)", ["explain", conv, "--json", "--no-profile"])
    if explained.returncode == 0:
        expect_true("explain --json reports the search", explain_json)
    expect_error("explain a missing model", ["explain", os.path.join(d, "missing.onnx")], "missing.onnx")


def output_fault_cases(d, conv):
    """Writing an artifact: all of it or nothing, and the old one survives a failure."""
    busy = os.path.join(d, "someone_elses_folder")
    os.makedirs(busy)
    open(os.path.join(busy, "notes.txt"), "w").close()
    expect_error("compile -o onto a folder that is not an artifact", ["compile", conv, "-o", busy],
                 "someone_elses_folder", "not an Orchid artifact")
    expect_error("compile -o under a read-only file system", ["compile", conv, "-o", "/proc/orchid_artifact"],
                 "/proc/orchid_artifact", "cannot create the output folder")
    big = save_model(os.path.join(d, "big.onnx"), [helper.make_node("Conv", ["x", "w"], ["y"], name="conv")],
                     [fvalue("x", [1, 64, 8, 8])], [fvalue("y", [1, 256, 6, 6])],
                     [numpy_helper.from_array(np.ones((256, 64, 3, 3), np.float32), "w")])
    art = os.path.join(d, "big_art")
    expect_ok("compile a 590 KB model", ["compile", big, "-o", art, "--no-fusion"])
    expect_ok("compile again over its artifact", ["compile", big, "-o", art, "--no-fusion"],
              lambda: assert_files(art, "plan.json", "weights.bin"))
    before = open(os.path.join(art, "plan.json")).read()

    def disk_full():  # files over 64 KB cannot be written, as on a full disk
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))
    full = subprocess.run([ORCHID, "compile", big, "-o", art, "--no-fusion", "--no-profile"], capture_output=True,
                          text=True, preexec_fn=disk_full, timeout=120)

    def clean_failure():
        assert full.returncode == 2, f"exit {full.returncode}: {full.stderr}"
        assert "weights.bin" in full.stderr and "cannot write" in full.stderr, full.stderr
        assert open(os.path.join(art, "plan.json")).read() == before, "the old artifact changed"
        leftovers = [f for f in os.listdir(d) if ".partial-" in f or ".old-" in f]
        assert not leftovers, f"left behind: {leftovers}"
    expect_true("a full disk: exit 2 naming the file, the old artifact intact, nothing left", clean_failure)
    expect_ok("the old artifact still runs", ["run", art, "--random-inputs"])
    memory_limit_cases(d, big)

    # kill -9 at several moments of a compile: the cache stays usable.
    cache = os.path.join(d, "kill_cache")
    chain = os.path.join(d, "chain.onnx")
    for delay in (0.05, 0.2, 0.5, 1.0):
        proc = subprocess.Popen([ORCHID, "compile", chain, "-o", os.path.join(d, "killed_art"), "--cache-dir", cache],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.kill()
        proc.wait()
    expect_ok("compile after kill -9 during compiles", ["compile", chain, "-o", os.path.join(d, "after_kill"),
                                                        "--cache-dir", cache])
    expect_ok("check after kill -9 during compiles", ["check", chain, "--cache-dir", cache])


def memory_limit_cases(d, big):
    """Refused before allocating, naming the largest tensor."""
    huge = save_model(os.path.join(d, "huge.onnx"), [helper.make_node("Relu", ["x"], ["y"], name="relu")],
                      [fvalue("x", [1, 3, 60000, 60000])], [fvalue("y", [1, 3, 60000, 60000])])
    env = dict(os.environ, ORCHID_MEMORY_LIMIT="8G")
    for command in (["run", huge, "--random-inputs"], ["check", huge], ["compile", huge, "-o", os.path.join(d, "h")]):
        proc = subprocess.run([ORCHID] + command, capture_output=True, text=True, env=env, timeout=60)

        def refused(proc=proc):
            assert proc.returncode == 2, f"exit {proc.returncode}: {proc.stderr}"
            for part in ("'x'", "40.23 GB", "memory limit of 8.00 GB", "ORCHID_MEMORY_LIMIT"):
                assert part in proc.stderr, f"{part} not in: {proc.stderr}"
        expect_true(f"a 40 GB input under an 8 GB limit ({command[0]})", refused)
    # A model that fits tensor by tensor but not as a whole: weights 576 KB, with
    # its input and output 628 KB, limit 600 KB.
    small = dict(os.environ, ORCHID_MEMORY_LIMIT="600K")
    proc = subprocess.run([ORCHID, "run", big, "--random-inputs", "--no-fusion"], capture_output=True, text=True,
                          env=small, timeout=60)

    def program_refused():
        assert proc.returncode == 2 and "inputs, weights and outputs" in proc.stderr and "'w'" in proc.stderr, \
            f"exit {proc.returncode}: {proc.stderr}"
    expect_true("a model over the limit as a whole", program_refused)
    bad = subprocess.run([ORCHID, "run", big, "--random-inputs"], capture_output=True, text=True,
                         env=dict(os.environ, ORCHID_MEMORY_LIMIT="lots"), timeout=60)
    expect_true("a malformed ORCHID_MEMORY_LIMIT", lambda: assert_in("ORCHID_MEMORY_LIMIT is 'lots'", bad.stderr))


def assert_in(needle, text):
    assert needle in text, f"'{needle}' not in output:\n{text}"


def assert_keys(obj, *keys):
    for key in keys:
        assert key in obj, f"no '{key}' in plan.json"


def assert_files(folder, *names):
    for name in names:
        assert os.path.isfile(os.path.join(folder, name)), f"no {name} in {folder}"


def main():
    with tempfile.TemporaryDirectory(prefix="orchid_cli_errors_") as d:
        relu = file_cases(d)
        graph_cases(d)
        initializer_cases(d)
        tensor_file_cases(d, relu)
        inference_cases(d)
        artifact_cases(d)
    if FAILURES:
        print(f"\n{len(FAILURES)} case(s) failed: " + ", ".join(FAILURES))
        return 1
    print("\nall CLI error cases passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
