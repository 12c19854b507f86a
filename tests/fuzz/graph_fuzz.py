#!/usr/bin/env python3
"""Differential fuzzing of whole graphs: random valid ONNX graphs
(graph_gen.py), each compiled by Orchid in every mode and thread count and
compared with the reference interpreter on random inputs (`orchid check
MODEL --seed N`, which runs the interpreter on the imported graph as the
oracle).

    graph_fuzz.py --orchid build/orchid --seeds 0:100            # a batch
    graph_fuzz.py --orchid build/orchid --seeds 0:10000 --save tests/fuzz/regressions
    graph_fuzz.py --orchid build/orchid --replay tests/fuzz/regressions

Modes (all by default): nofusion (`--no-fusion`, one kernel per primitive),
fused (the orchestrated program: fused generated kernels chosen by the BLP on
measured costs), derive (`--derive`: derived forms of Conv / MatMul where
they measure faster); each at --threads 1 and 2. A finding is any run that
does not pass: a mismatch (exit 1), a rejected valid graph (exit 2), an
internal error (exit 3), a crash or a timeout. Each finding is reduced (fewer
outputs, nodes bypassed, subgraphs cut into inputs, while it still fails the
same way) and, with --save DIR, written there as <name>.onnx with
<name>.json (the configuration that fails and the message); --replay DIR
runs every saved graph in its configuration (the regression test).

Tolerance: ONNX's backend-test rtol 1e-3, with atol 1e-5 (the model tests'
bound) instead of ONNX's 1e-7. Random graphs make values near zero out of
O(1) quantities (a LogSumExp of about 0, a difference of sums); there the
interpreter (double accumulators, exact exp) and a float32 kernel (blocked
sums, exp within a few ulp) legitimately differ by 1e-6 .. 5e-6 absolute,
which an elementwise relative test cannot tell from a bug. Seed 1048's
Log(|LogSumExp| + 1) at 2.2e-4, off by 3.4e-6, was the first such case.

Exit status: 0 no findings, 1 findings, 2 bad usage.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time

import onnx
from onnx import helper, shape_inference

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graph_gen  # noqa: E402

MODES = {
    "nofusion": ["--no-fusion"],
    "fused": [],
    "derive": ["--derive"],
}
RTOL, ATOL = "1e-3", "1e-5"
TIMEOUT = 300


class Config:
    def __init__(self, mode, threads):
        self.mode, self.threads = mode, threads

    @property
    def label(self):
        return f"{self.mode}/{self.threads}t"

    def args(self):
        return MODES[self.mode] + ["--threads", str(self.threads)]


def run_check(orchid, model_path, config, input_seed, cache_dir):
    """(verdict, message): verdict is pass, mismatch, rejected, internal, crash or timeout."""
    cmd = [orchid, "check", model_path, "--seed", str(input_seed), "--rtol", RTOL, "--atol", ATOL,
           "--cache-dir", cache_dir] + config.args()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              errors="replace", timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return "timeout", f"no answer after {TIMEOUT} s"
    out = (proc.stdout + proc.stderr).strip().splitlines()
    text = " | ".join(l for l in out if ": FAIL" in l or l.startswith("orchid:"))[:600] or " | ".join(out[-3:])[:600]
    verdict = {0: "pass", 1: "mismatch", 2: "rejected", 3: "internal"}.get(proc.returncode, "crash")
    if proc.returncode < 0:
        text = f"signal {-proc.returncode}: {text}"
    return verdict, text


# ---------------------------------------------------------------------------
# Reduction

def prune(model):
    """Drops nodes, initializers and inputs that no output needs."""
    graph = model.graph
    needed = {o.name for o in graph.output}
    keep = []
    for node in reversed(graph.node):
        if any(o in needed for o in node.output):
            keep.append(node)
            needed.update(i for i in node.input if i)
    keep.reverse()
    del graph.node[:]
    graph.node.extend(keep)
    inits = [i for i in graph.initializer if i.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(inits)
    inputs = [i for i in graph.input if i.name in needed]
    del graph.input[:]
    graph.input.extend(inputs)
    return model


def value_types(model):
    inferred = shape_inference.infer_shapes(model, strict_mode=True)
    types = {v.name: v.type for v in list(inferred.graph.value_info) + list(inferred.graph.input)
             + list(inferred.graph.output)}
    return types


def candidates(model):
    """Smaller variants of `model`, most aggressive first."""
    graph = model.graph
    if len(graph.output) > 1:
        for k in range(len(graph.output)):
            m = onnx.ModelProto()
            m.CopyFrom(model)
            keep = m.graph.output[k]
            del m.graph.output[:]
            m.graph.output.append(keep)
            yield prune(m)
    types = value_types(model)
    produced = {o for n in graph.node for o in n.output}
    # Cut: a computed input of a node becomes a graph input.
    for node_index in range(len(graph.node)):
        for name in graph.node[node_index].input:
            if name in produced and name in types:
                m = onnx.ModelProto()
                m.CopyFrom(model)
                m.graph.input.append(helper.make_value_info(name, types[name]))
                for n in list(m.graph.node):
                    if name in n.output:
                        # The producer's other outputs lose it too: rename this one away.
                        n.output[list(n.output).index(name)] = name + "_cut"
                try:
                    yield prune(m)
                except Exception:  # noqa: BLE001 - a variant that breaks the graph is skipped
                    continue
    # Bypass: a node whose output has the type of one of its inputs is skipped.
    for node_index in range(len(graph.node)):
        node = graph.node[node_index]
        if len(node.output) != 1 or node.output[0] not in types:
            continue
        for name in node.input:
            if name and types.get(name) == types[node.output[0]]:
                m = onnx.ModelProto()
                m.CopyFrom(model)
                out = m.graph.node[node_index].output[0]
                del m.graph.node[node_index]
                for n in m.graph.node:
                    for i, x in enumerate(n.input):
                        if x == out:
                            n.input[i] = name
                for o in m.graph.output:
                    if o.name == out:
                        o.name = name
                if len({o.name for o in m.graph.output}) == len(m.graph.output):
                    yield prune(m)
                break


def valid(model):
    try:
        onnx.checker.check_model(model, full_check=True)
        return True
    except Exception:  # noqa: BLE001
        return False


def reduce_finding(orchid, model, config, verdict, input_seed, cache_dir, work):
    """The smallest variant found that still fails with the same verdict."""
    path = os.path.join(work, "reduce.onnx")

    def still_fails(m):
        if not valid(m) or not m.graph.node:
            return None
        onnx.save(m, path)
        v, message = run_check(orchid, path, config, input_seed, cache_dir)
        return message if v == verdict else None

    best, message = model, None
    progress = True
    while progress:
        progress = False
        for variant in candidates(best):
            if len(variant.graph.node) >= len(best.graph.node) and len(variant.graph.output) >= len(best.graph.output):
                continue
            found = still_fails(variant)
            if found is not None:
                best, message, progress = variant, found, True
                break
    return best, message


# ---------------------------------------------------------------------------

def fuzz_one(orchid, seed, configs, cache_dir, work):
    model = graph_gen.generate(seed)
    path = os.path.join(work, f"seed_{seed}.onnx")
    onnx.save(model, path)
    results = []
    for config in configs:
        verdict, message = run_check(orchid, path, config, seed, cache_dir)
        results.append((config, verdict, message))
    return seed, model, results


def save_finding(save_dir, name, model, config, verdict, message, seed):
    os.makedirs(save_dir, exist_ok=True)
    onnx.save(model, os.path.join(save_dir, name + ".onnx"))
    with open(os.path.join(save_dir, name + ".json"), "w") as f:
        json.dump({"mode": config.mode, "threads": config.threads, "input_seed": seed, "verdict": verdict,
                   "message": message, "nodes": len(model.graph.node)}, f, indent=1)
        f.write("\n")


def replay(args, cache_dir):
    names = sorted(f[:-5] for f in os.listdir(args.replay) if f.endswith(".json"))
    failures = 0
    for name in names:
        with open(os.path.join(args.replay, name + ".json")) as f:
            meta = json.load(f)
        config = Config(meta["mode"], meta["threads"])
        verdict, message = run_check(args.orchid, os.path.join(args.replay, name + ".onnx"), config,
                                     meta["input_seed"], cache_dir)
        print(f"{name} [{config.label}]: {verdict}" + ("" if verdict == "pass" else f" ({message})"))
        failures += verdict != "pass"
    print(f"{len(names)} regression graphs, {failures} failing")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--orchid", required=True)
    parser.add_argument("--seeds", default="0:20", help="A:B, the graphs' seeds (default %(default)s)")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated (default %(default)s)")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default %(default)s)")
    parser.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--save", help="write reduced findings into this folder")
    parser.add_argument("--no-reduce", action="store_true")
    parser.add_argument("--replay", help="run the saved regression graphs of this folder")
    parser.add_argument("--cache-dir", help="Orchid's cache (default: a temporary folder)")
    parser.add_argument("--log", help="append one JSON line per graph here")
    args = parser.parse_args()
    args.orchid = os.path.abspath(args.orchid)
    if not os.access(args.orchid, os.X_OK):
        print(f"graph_fuzz: {args.orchid}: not an executable", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="orchid_graph_fuzz.") as work:
        cache_dir = args.cache_dir or os.path.join(work, "cache")
        if args.replay:
            return replay(args, cache_dir)
        try:
            first, last = (int(x) for x in args.seeds.split(":"))
            modes = [m for m in args.modes.split(",") if m]
            configs = [Config(m, int(t)) for m in modes for t in args.threads.split(",")]
            for m in modes:
                if m not in MODES:
                    raise ValueError(f"unknown mode {m} (known: {', '.join(MODES)})")
        except ValueError as e:
            print(f"graph_fuzz: {e}", file=sys.stderr)
            return 2
        start = time.monotonic()
        findings = []
        counts = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(fuzz_one, args.orchid, seed, configs, cache_dir, work)
                       for seed in range(first, last)]
            for future in concurrent.futures.as_completed(futures):
                seed, model, results = future.result()
                for config, verdict, message in results:
                    counts[verdict] = counts.get(verdict, 0) + 1
                    if verdict != "pass":
                        findings.append((seed, model, config, verdict, message))
                        print(f"seed {seed} [{config.label}]: {verdict.upper()} ({message})", flush=True)
                if args.log:
                    with open(args.log, "a") as f:
                        f.write(json.dumps({"seed": seed, "nodes": len(model.graph.node),
                                            "results": {c.label: v for c, v, _ in results}}) + "\n")
        graphs = last - first
        print(f"{graphs} graphs x {len(configs)} configurations ({', '.join(c.label for c in configs)}) "
              f"in {time.monotonic() - start:.0f} s: " + ", ".join(f"{v} {n}" for v, n in sorted(counts.items())))
        # One reduction per graph and verdict: its other configurations usually fail alike.
        reduced = set()
        for seed, model, config, verdict, message in sorted(findings, key=lambda f: f[0]):
            if args.no_reduce or (seed, verdict) in reduced:
                continue
            reduced.add((seed, verdict))
            small, small_message = reduce_finding(args.orchid, model, config, verdict, seed, cache_dir, work)
            print(f"seed {seed} [{config.label}] {verdict}: reduced {len(model.graph.node)} -> "
                  f"{len(small.graph.node)} nodes ({', '.join(n.op_type for n in small.graph.node)})")
            if args.save:
                save_finding(args.save, f"seed_{seed}_{config.mode}_{config.threads}t", small, config, verdict,
                             small_message or message, seed)
        return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
