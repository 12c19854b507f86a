#!/usr/bin/env python3
"""Two or more orchid binaries timing the same compiled artifact.

    bench/compare_binaries.py ARTIFACT BINARY BINARY... [--threads 1]
                              [--runs 10] [--rounds 2] [--top 12]

A kernel's code lives in the binary (the artifact holds the plan, the
weights and the generated kernels), so an old binary (a copy kept from an
earlier commit) and a new one running the same artifact compare the kernel
code alone, with the plan held fixed. Each round runs every binary once,
`orchid bench ARTIFACT --threads T --runs R --json`, in turn (interleaved:
the machine is shared and drifts). Prints each binary's run medians per
round, then the --top kernels by the first binary's time with each
binary's per-kernel minimum over the rounds and the kernel's bound.
"""
import argparse
import json
import subprocess
import sys


def bench(binary, artifact, threads, runs):
    out = subprocess.run([binary, "bench", artifact, "--threads", str(threads), "--runs", str(runs), "--json"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("artifact")
    parser.add_argument("binaries", nargs="+")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    if len(args.binaries) < 2:
        sys.exit("compare_binaries: give at least two binaries")
    results = {b: [] for b in args.binaries}
    for _ in range(args.rounds):
        for b in args.binaries:
            results[b].append(bench(b, args.artifact, args.threads, args.runs))
    for b in args.binaries:
        print(f"{b}: run medians {[round(r['median_ms'], 2) for r in results[b]]} ms")
    first = results[args.binaries[0]][-1]["kernel_list"]
    order = sorted(range(len(first)), key=lambda i: -first[i]["ms"])[:args.top]
    print(f"\n{'kernel':40s} {'implementation':32s} {'bound':>8s} " + " ".join(f"{'#' + str(n):>8s}"
                                                                            for n in range(len(args.binaries))))
    for i in order:
        k = first[i]
        times = [min(r["kernel_list"][i]["ms"] for r in results[b]) for b in args.binaries]
        print(f"{k['name'][:40]:40s} {k['implementation'][:32]:32s} {k['bound_ms']:8.3f} "
              + " ".join(f"{t:8.3f}" for t in times))


if __name__ == "__main__":
    main()
