#!/usr/bin/env python3
"""Every zoo kernel against its own roofline bound (issue 13's instrument).

    bench/kernel_efficiency.py [--models a,b] [--threads 2] [--runs 20]
                               [--zoo DIR] [--work DIR] [--top 20] [--json FILE]

For each model of bench/zoo (exported on demand, as bench/run does): compile
it with profiling (`orchid compile --threads T`, one cost/kernel cache for
the whole run under --work), then `orchid bench DIR --json` for each
kernel's mean time and work. A kernel's bound is its flops at the measured
GEMM peak or its bytes (inputs and outputs, once) at the measured
bandwidth, whichever takes longer; the peaks are those `orchid bench`
reports (kept in the cost cache per machine and thread count).

Prints, in Markdown: the --top kernels that lose the most absolute time to
their bounds, and per implementation class the kernels' count, time, summed
bound, time-weighted share of the bound (sum of bounds / sum of times) and
median share. Nothing is compared with other engines here (bench/run does).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)

import zoo  # noqa: E402
from zoo import export as zoo_export  # noqa: E402


def orchid(args, *command):
    proc = subprocess.run([args.orchid, *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"orchid {' '.join(command)}: exit {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    return proc.stdout


def model_kernels(args, name):
    model = zoo_export.export(name, args.zoo)
    artifact = os.path.join(args.work, f"{name}-t{args.threads}")
    cache = os.path.join(args.work, "cache")
    orchid(args, "compile", model, "-o", artifact, "--threads", str(args.threads), "--cache-dir", cache)
    out = orchid(args, "bench", artifact, "--threads", str(args.threads), "--runs", str(args.runs), "--json",
                 "--cache-dir", cache)
    result = json.loads(out.strip().splitlines()[-1])
    for k in result["kernel_list"]:
        k["model"] = name
    return result


def implementation_class(kernel):
    return kernel["implementation"].split(" (")[0]


def worst_table(kernels, top):
    kernels = sorted(kernels, key=lambda k: -(k["ms"] - k["bound_ms"]))[:top]
    lines = ["| model | kernel | implementation | limit | ms | bound ms | share of bound | ms above |",
             "|---|---|---|---|---:|---:|---:|---:|"]
    for k in kernels:
        ops = k["ops"] if len(k["ops"]) <= 48 else k["ops"][:45] + "..."
        lines.append(f"| {k['model']} | {ops} | {k['implementation']} | {k['limit']} | {k['ms']:.3f} | "
                     f"{k['bound_ms']:.3f} | {100 * k['bound_share']:.0f}% | {k['ms'] - k['bound_ms']:.3f} |")
    return "\n".join(lines) + "\n"


def class_table(kernels):
    classes = {}
    for k in kernels:
        classes.setdefault(implementation_class(k), []).append(k)
    lines = ["| implementation | kernels | ms | bound ms | sum bound / sum time | median share |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, ks in sorted(classes.items(), key=lambda item: -sum(k["ms"] for k in item[1])):
        ms, bound = sum(k["ms"] for k in ks), sum(k["bound_ms"] for k in ks)
        lines.append(f"| {name} | {len(ks)} | {ms:.2f} | {bound:.2f} | {100 * bound / ms if ms else 0:.0f}% | "
                     f"{100 * statistics.median(k['bound_share'] for k in ks):.0f}% |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", help="comma-separated zoo models (default: all)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--zoo", default=os.path.join(ROOT, "build", "zoo"))
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "kernel-efficiency"))
    parser.add_argument("--orchid", default=os.path.join(ROOT, "build", "orchid"))
    parser.add_argument("--json", help="write every kernel's numbers here")
    args = parser.parse_args()
    for family in zoo.FAMILIES:
        __import__("zoo." + family)
    names = args.models.split(",") if args.models else list(zoo.MODELS)
    unknown = [n for n in names if n not in zoo.MODELS]
    if unknown:
        parser.error(f"unknown models {unknown}; the zoo has {sorted(zoo.MODELS)}")
    kernels, peaks, failures = [], None, {}
    for name in names:
        try:
            result = model_kernels(args, name)
        except RuntimeError as e:
            failures[name] = str(e)
            print(f"{name}: {e}", file=sys.stderr)
            continue
        peaks = result["peaks"]
        kernels += result["kernel_list"]
        print(f"{name}: {result['median_ms']:.3f} ms, kernels {sum(k['ms'] for k in result['kernel_list']):.3f} ms, "
              f"bounds {result['bound_ms']:.3f} ms", file=sys.stderr, flush=True)
    if not kernels:
        sys.exit("no model could be measured")
    print(f"Peaks at {args.threads} threads: bandwidth {peaks['bytes_per_second'] / 1e9:.1f} GB/s, GEMM "
          f"{peaks['flops_per_second'] / 1e9:.0f} GFLOP/s. Command: `bench/kernel_efficiency.py "
          f"{' '.join(sys.argv[1:])}`\n")
    print(worst_table(kernels, args.top))
    print(class_table(kernels))
    for name, error in failures.items():
        print(f"- {name}: not measured ({error.splitlines()[0] if error else ''})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"peaks": peaks, "threads": args.threads, "kernels": kernels, "failures": failures}, f, indent=1)


if __name__ == "__main__":
    main()
