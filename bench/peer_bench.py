#!/usr/bin/env python3
"""Times a model in a peer inference engine, and checks its outputs.

    peer_bench.py MODEL.onnx [--peer onnxruntime|openvino|tvm] [--threads N] [--runs N]
                  [--warmup N] [--test-dir DIR] [--json]

Peers, each at its best settings for one inference stream on --threads cores:
  onnxruntime  CPU provider, every graph optimization (ORT_ENABLE_ALL), N
               intra-op threads, one inter-op thread, sequential execution.
  openvino     CPU plugin, LATENCY hint, one stream, N inference threads
               (installed by `scripts/setup --bench`).
  tvm          Apache TVM's default build: Relax ONNX frontend, tvm.compile
               for LLVM and this CPU, no tuning, TVM_NUM_THREADS=N
               (installed by `scripts/setup --bench`).

Inputs are those of DIR/test_data_set_0 when --test-dir is given (and the
outputs are compared with its expected ones: bench/outputs.py), else seeded
random tensors of the declared shapes. After --warmup untimed runs, each of
--runs runs is timed on its own with time.perf_counter.

Prints median_ms and min_ms; with --json the last line is one JSON object
{"median_ms", "min_ms", "runs", "threads", "peer", "version", "check"}.
Exit status: 2 when the model cannot be loaded or run (the message says
why), 3 when the peer is not installed.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import outputs  # noqa: E402

DTYPES = {"float": np.float32, "double": np.float64, "float16": np.float16, "int64": np.int64,
          "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_}


class PeerMissing(Exception):
    pass


def random_feeds(model_path, seed):
    import onnx
    model = onnx.load(model_path, load_external_data=False)
    initializers = {init.name for init in model.graph.initializer}
    rng = np.random.default_rng(seed)
    feeds = {}
    for vi in model.graph.input:
        if vi.name in initializers:
            continue
        tensor_type = vi.type.tensor_type
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)
        shape = [d.dim_value if d.HasField("dim_value") else 1 for d in tensor_type.shape.dim]
        if np.issubdtype(dtype, np.floating):
            feeds[vi.name] = rng.standard_normal(shape).astype(dtype)
        elif dtype == np.bool_:
            feeds[vi.name] = rng.integers(0, 2, shape).astype(np.bool_)
        else:
            feeds[vi.name] = rng.integers(0, 10, shape).astype(dtype)
    return feeds


def onnxruntime_peer(model_path, threads):
    try:
        import onnxruntime as ort
    except ImportError as e:
        raise PeerMissing(f"onnxruntime is not installed ({e}); run scripts/setup") from e
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    return (lambda feeds: session.run(None, feeds)), ort.__version__


def openvino_peer(model_path, threads):
    try:
        import openvino as ov
    except ImportError as e:
        raise PeerMissing("openvino is not installed (scripts/setup --bench installs it)") from e
    core = ov.Core()
    compiled = core.compile_model(model_path, "CPU", {"PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": "1", "INFERENCE_PRECISION_HINT": "f32",
                                                      "INFERENCE_NUM_THREADS": str(threads)})
    request = compiled.create_infer_request()
    names = [port.get_any_name() for port in compiled.outputs]

    def run(feeds):
        result = request.infer(feeds)
        return [np.array(result[compiled.output(name)]) for name in names]
    return run, ov.get_version()


def host_target(tvm):
    # This machine's CPU by name ("mcpu": "native" is refused by TVM's LLVM).
    from tvm.target import codegen
    return tvm.target.Target({"kind": "llvm", "mtriple": codegen.llvm_get_system_triple(),
                              "mcpu": codegen.llvm_get_system_cpu()})


def tvm_peer(model_path, threads):
    os.environ["TVM_NUM_THREADS"] = str(threads)  # before tvm starts its thread pool
    try:
        import tvm
        from tvm import relax
        from tvm.relax.frontend.onnx import from_onnx
    except ImportError as e:
        raise PeerMissing(f"Apache TVM is not installed or does not load ({e}); scripts/setup --bench") from e
    import onnx
    module = from_onnx(onnx.load(model_path), keep_params_in_input=False)
    module = relax.transform.DecomposeOpsForInference()(module)
    executable = tvm.compile(module, target=host_target(tvm))
    machine = relax.VirtualMachine(executable, tvm.cpu())
    input_names = [vi.name for vi in onnx.load(model_path, load_external_data=False).graph.input]

    def run(feeds):
        result = machine["main"](*[tvm.runtime.tensor(feeds[name], tvm.cpu()) for name in input_names if name in feeds])
        items = [result] if hasattr(result, "numpy") else list(result)
        return [item.numpy() for item in items]
    return run, tvm.__version__


PEERS = {"onnxruntime": onnxruntime_peer, "openvino": openvino_peer, "tvm": tvm_peer}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--peer", choices=sorted(PEERS), default="onnxruntime")
    parser.add_argument("--threads", type=int, default=1, help="threads (default 1)")
    parser.add_argument("--runs", type=int, default=20, help="timed runs (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (without --test-dir)")
    parser.add_argument("--test-dir", help="take the inputs from DIR/test_data_set_0 and check the outputs")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    args = parser.parse_args()
    if args.threads < 1 or args.runs < 1 or args.warmup < 0:
        parser.error("--threads and --runs must be >= 1, --warmup >= 0")
    if not os.path.isfile(args.model):
        print(f"peer_bench: {args.model}: no such file", file=sys.stderr)
        return 2
    try:
        run, version = PEERS[args.peer](args.model, args.threads)
        expected = None
        if args.test_dir:
            inputs, expected = outputs.test_data(args.test_dir)
            feeds = {name: array for name, _, array in inputs}
        else:
            feeds = random_feeds(args.model, args.seed)
        results = run(feeds)
    except PeerMissing as e:
        print(f"peer_bench: {e}", file=sys.stderr)
        return 3
    except Exception as e:  # each peer raises its own exception types
        first_line = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"peer_bench: {args.peer} cannot run {args.model}: {first_line}", file=sys.stderr)
        return 2
    check = outputs.compare(results, expected) if expected is not None else None

    for _ in range(args.warmup):
        run(feeds)
    times_ms = []
    for _ in range(args.runs):
        start = time.perf_counter()
        run(feeds)
        times_ms.append((time.perf_counter() - start) * 1e3)

    median_ms, min_ms = statistics.median(times_ms), min(times_ms)
    checked = "" if check is None else f"  max_error {check['max_error']:.2g} ({'ok' if check['ok'] else 'WRONG'})"
    print(f"{args.model}: {args.peer} {version}, {args.threads} thread(s), {args.runs} runs: "
          f"median_ms {median_ms:.3f}  min_ms {min_ms:.3f}{checked}")
    if args.json:
        print(json.dumps({"median_ms": round(median_ms, 4), "min_ms": round(min_ms, 4), "runs": args.runs,
                          "threads": args.threads, "model": args.model, "peer": args.peer, "version": version,
                          "check": check}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
