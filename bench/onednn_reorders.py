#!/usr/bin/env python3
"""The layout conversions oneDNN makes inside a compiled artifact's kernels.

    bench/onednn_reorders.py ARTIFACT [--threads 1] [--runs 5] [--orchid build/orchid] [--top 12]

The layout model prices conversions between row-major tensors and oneDNN's
"native" ones, but counts every oneDNN layout as one native form: a conv
that computes blocked by 16 channels next to one that computes
channels-last converts inside its kernel, unpriced (RegNet-X lost 0.5 ms of
8.8 so, at 1 thread, before its grouped convs went channels-last). This
runs `orchid bench ARTIFACT` under ONEDNN_VERBOSE=1 and prints, per run,
the time of the reorders of activations (tensors of batch 1; weights are
reordered once, when kernels are built) and of the primitives, and the
reorders that take the most time, by tensor and by the layouts they
convert between (acdb is NHWC, abcd NCHW, aBcd16b nChw16c).
"""
import argparse
import collections
import os
import subprocess


def verbose_lines(orchid, artifact, threads, runs):
    env = dict(os.environ, ONEDNN_VERBOSE="1")
    out = subprocess.run([orchid, "bench", artifact, "--threads", str(threads), "--runs", str(runs)],
                         capture_output=True, text=True, check=True, env=env).stdout
    # onednn_verbose,exec,cpu,PRIMITIVE,IMPLEMENTATION,PROP,MEMORY DESCS,...,PROBLEM,MS
    return [line.split(",") for line in out.splitlines() if line.startswith("onednn_verbose,exec,")]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("artifact")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--orchid", default=os.path.join(os.path.dirname(__file__), "..", "build", "orchid"))
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    lines = verbose_lines(args.orchid, args.artifact, args.threads, args.runs)
    if not lines:
        print("no oneDNN primitive ran")
        return
    # Runs executed: how often the most frequent non-reorder primitive problem ran, over how often it occurs per run
    # is unknown, so count the executions of the first primitive line's problem (each occurs once per run, or the
    # plan repeats it: then per-run figures are per occurrence of that problem).
    first = next((l for l in lines if l[3] != "reorder"), lines[0])
    runs = sum(1 for l in lines if l[3] == first[3] and l[-2] == first[-2] and l[4] == first[4]) or 1
    reorders = collections.Counter()
    reorder_ms = 0.0
    primitive_ms = 0.0
    for l in lines:
        ms = float(l[-1])
        if l[3] != "reorder":
            primitive_ms += ms
            continue
        if not l[-2].startswith("1x"):
            continue  # weights: once, when the kernel is built
        formats = " -> ".join(part.split(":")[3] for part in l[6].split() if part.count(":") >= 3)
        reorders[(l[-2], formats)] += ms
        reorder_ms += ms
    print(f"{runs} runs: activation reorders {reorder_ms / runs:.3f} ms per run, "
          f"other primitives {primitive_ms / runs:.3f} ms per run")
    for (shape, formats), ms in reorders.most_common(args.top):
        print(f"  {ms / runs:8.3f} ms  {shape:>20}  {formats}")


if __name__ == "__main__":
    main()
