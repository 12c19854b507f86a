#!/usr/bin/env python3
"""bench/run on the zoo's InfoGAN generator, one round: checks the report.

    bench_harness_test.py ORCHID WORK_DIR
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    orchid, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    report, raw = os.path.join(work, "report.md"), os.path.join(work, "raw.json")
    command = [sys.executable, os.path.join(ROOT, "bench", "run"), "--models", "infogan", "--threads", "1",
               "--rounds", "2", "--runs", "2", "--orchid", orchid, "--zoo", os.path.join(work, "zoo"),
               "--work", os.path.join(work, "artifacts"), "--out", report, "--json", raw]
    subprocess.run(command, check=True)
    with open(raw) as f:
        result = json.load(f)
    (row,) = result["rows"]
    problems = []

    def expect(condition, what):
        if not condition:
            problems.append(what)

    expect(row["model"] == "infogan" and row["threads"] == 1, f"row is {row['model']} at {row['threads']} threads")
    expect("orchid_error" not in row, f"orchid failed: {row.get('orchid_error')}")
    for key in ("check", "check_no_fusion"):
        check = row.get(key, {})
        expect(check.get("ok") and check["max_error"] < 1e-3, f"{key}: {check}")
    ort = row["peers"].get("onnxruntime", {})
    expect(ort.get("check", {}).get("ok"), f"ONNX Runtime's own check: {ort.get('check')}")
    for key, values in (("orchid_rounds", row.get("orchid_rounds")), ("no_fusion_rounds", row.get("no_fusion_rounds")),
                        ("onnxruntime rounds", ort.get("rounds"))):
        expect(values and len(values) == 2 and all(v > 0 for v in values), f"{key}: {values}")
    work = row.get("work", {})
    expect(0 < work.get("linear_flops", 0) <= work.get("flops", 0) and work.get("min_bytes", 0) > 0,
           f"work: {work}")
    peaks = result["peaks"]["1"]
    expect(peaks["flops_per_second"] > 0 and peaks["bytes_per_second"] > 0, f"peaks: {peaks}")
    expected_bound = 1e3 * max(work["flops"] / peaks["flops_per_second"], work["min_bytes"] / peaks["bytes_per_second"])
    expect(abs(row.get("bound_ms", 0) - expected_bound) <= 1e-9 * expected_bound, f"bound_ms {row.get('bound_ms')}")
    expect(abs(row["speedup"] - ort["ms"] / row["orchid_ms"]) < 1e-12, "speedup is ONNX Runtime / Orchid")
    with open(report) as f:
        text = f.read()
    expect("| infogan | 1 |" in text and "Geometric mean at 1 thread" in text, "report lacks the infogan row")
    # --replot measures nothing; a run compared with itself moved by 0%.
    compared = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "run"), "--orchid", orchid, "--replot", raw,
                               "--compare", raw], check=True, capture_output=True, text=True).stdout
    expect("infogan threads=1" in compared and "largest change 0.0%" in compared, f"--compare printed: {compared}")
    for problem in problems:
        print(f"FAIL {problem}")
    print("bench harness: " + ("ok" if not problems else f"{len(problems)} problem(s)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
