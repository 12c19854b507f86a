"""An onnxruntime script moved to Orchid with one changed line, checked
against ONNX Runtime, then run from 8 threads x 100 runs at once.

    .venv/bin/python examples/python/switch_from_onnxruntime.py MODEL.onnx [--threads N]
"""

import argparse
import sys
import threading
import time

import numpy as np
import onnxruntime

import orchid


def feeds_for(session, seed=0):
    rng = np.random.default_rng(seed)
    types = {"tensor(float)": np.float32, "tensor(int64)": np.int64, "tensor(int32)": np.int32,
             "tensor(bool)": np.bool_}
    feeds = {}
    for arg in session.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in arg.shape]
        dtype = types[arg.type]
        feeds[arg.name] = (rng.uniform(-1, 1, shape) if dtype == np.float32 else rng.integers(0, 4, shape)).astype(dtype)
    return feeds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, default=1, help="threads per run (default 1)")
    args = parser.parse_args()

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = args.threads
    # The onnxruntime script ...
    ort = onnxruntime.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    # ... and the same line with orchid: the rest of the script is unchanged.
    start = time.perf_counter()
    session = orchid.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    print(f"compiled {args.model} in {time.perf_counter() - start:.1f} s: {session.model.summary['kernels']} kernels")

    feeds = feeds_for(ort)
    expected = ort.run(None, feeds)
    got = session.run(None, feeds)
    worst = 0.0
    for e, g in zip(expected, got):
        scale = max(float(np.max(np.abs(e))), 1e-30)
        worst = max(worst, float(np.max(np.abs(e.astype(np.float64) - g))) / scale)
        assert e.shape == g.shape and e.dtype == g.dtype, (e.shape, g.shape, e.dtype, g.dtype)
    print(f"outputs vs ONNX Runtime: max |difference| / output scale = {worst:.2e}")

    inputs = [feeds_for(ort, seed) for seed in range(8)]
    alone = [session.run(None, f) for f in inputs]
    mismatches = [0] * 8

    def worker(t):
        for _ in range(100):
            outs = session.run(None, inputs[t])
            mismatches[t] += any(not np.array_equal(a, b) for a, b in zip(outs, alone[t]))

    start = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start
    print(f"8 threads x 100 runs in {seconds:.1f} s on {session.model._native.instances} instances: "
          f"{sum(mismatches)} runs differ from the single-threaded run")
    return 0 if worst <= 1e-5 and sum(mismatches) == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
