#!/usr/bin/env python3
"""Times a model in ONNX Runtime: the peer that Orchid's runtime is measured against.

    ort_bench.py MODEL.onnx [--threads N] [--runs N] [--warmup N] [--seed S] [--json]

Run with the repo's venv (.venv/bin/python: onnxruntime, numpy). The session
is ONNX Runtime's CPU provider at its best settings for one inference stream:
every graph optimization on (ORT_ENABLE_ALL: constant folding, Conv+BN and
other fusions, layout transforms), --threads intra-op threads, one inter-op
thread, sequential execution.

Inputs are seeded random tensors of the model's declared shapes (a symbolic
dimension, e.g. "batch", is 1) and dtypes: floats standard normal, integers
in [0, 10), booleans fair coins. After --warmup untimed runs, each of --runs
calls of session.run is timed on its own with time.perf_counter.

Prints median_ms and min_ms; with --json, the last line is one JSON object
{"median_ms", "min_ms", "runs", "threads", "model"}. Exit status 2 when the
model file is missing or cannot be loaded.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import onnxruntime as ort

DTYPES = {"float": np.float32, "double": np.float64, "float16": np.float16, "int64": np.int64,
          "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_}


def random_feeds(session, seed):
    rng = np.random.default_rng(seed)
    feeds = {}
    for arg in session.get_inputs():
        inner = arg.type[len("tensor("):-1]  # "tensor(float)" -> "float"
        if inner not in DTYPES:
            raise ValueError(f"input {arg.name}: type {arg.type} not supported")
        dtype = DTYPES[inner]
        shape = [d if isinstance(d, int) and d >= 0 else 1 for d in arg.shape]  # symbolic/unknown -> 1
        if np.issubdtype(dtype, np.floating):
            feeds[arg.name] = rng.standard_normal(shape).astype(dtype)
        elif dtype == np.bool_:
            feeds[arg.name] = rng.integers(0, 2, shape).astype(np.bool_)
        else:
            feeds[arg.name] = rng.integers(0, 10, shape).astype(dtype)
    return feeds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads (default 1)")
    parser.add_argument("--runs", type=int, default=20, help="timed runs (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    args = parser.parse_args()
    if args.threads < 1 or args.runs < 1 or args.warmup < 0:
        parser.error("--threads and --runs must be >= 1, --warmup >= 0")
    if not os.path.isfile(args.model):
        print(f"ort_bench: {args.model}: no such file", file=sys.stderr)
        return 2

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    try:
        session = ort.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
        feeds = random_feeds(session, args.seed)
    except Exception as e:  # onnxruntime raises its own exception types
        print(f"ort_bench: {args.model}: {e}", file=sys.stderr)
        return 2

    for _ in range(args.warmup):
        session.run(None, feeds)
    times_ms = []
    for _ in range(args.runs):
        start = time.perf_counter()
        session.run(None, feeds)
        times_ms.append((time.perf_counter() - start) * 1e3)

    median_ms, min_ms = statistics.median(times_ms), min(times_ms)
    print(f"{args.model}: onnxruntime {ort.__version__}, {args.threads} thread(s), {args.runs} runs: "
          f"median_ms {median_ms:.3f}  min_ms {min_ms:.3f}")
    if args.json:
        print(json.dumps({"median_ms": round(median_ms, 4), "min_ms": round(min_ms, 4), "runs": args.runs,
                          "threads": args.threads, "model": args.model}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
