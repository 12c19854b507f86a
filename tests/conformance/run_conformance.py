#!/usr/bin/python3
"""ONNX backend conformance suite for Orchid.

Runs `orchid check model.onnx --test-dir <test>` on every test folder of the
ONNX backend test data (node, pytorch-converted, pytorch-operator, simple; the
weightless stubs under real/ are skipped), classifies each test as pass / fail /
unsupported / error, and writes docs/conformance.md.

Regression gate: --check-expected compares with tests/conformance/expected_pass.txt
and exits 1 if a listed test no longer passes; --update-expected rewrites the
list.

Fission: --fission runs every test with `orchid check --fission` instead (the
graph after fission into primitives), gated by expected_pass_fission.txt and
writing no report unless --report is given. --with-fission runs both modes:
the default mode as above, plus the fission mode gated by --expected-fission
(expected_pass_fission.txt); the report then gains "pass with fission"
columns and a list of the tests that pass only without fission. The last line printed is `N passed, M failed` (N = tests passing now,
M = regressions under --check-expected, else 0). Exit status: 0, 1 on a
regression, 77 (skip) without the test data, 2 on bad usage.

Needs Python 3 and the `onnx` package (only to list the operators of each
model); Debian's python3-onnx under /usr/bin/python3 will do.
"""

import argparse
import concurrent.futures
import os
import re
import signal
import subprocess
import sys
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
DEFAULT_DATA_DIR = "/usr/share/libonnx-testdata/data"
DEFAULT_SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
DEFAULT_EXPECTED = os.path.join(HERE, "expected_pass.txt")
DEFAULT_EXPECTED_FISSION = os.path.join(HERE, "expected_pass_fission.txt")
DEFAULT_REPORT = os.path.join(SOURCE_DIR, "docs", "conformance.md")
REGENERATE_COMMAND = ("/usr/bin/python3 tests/conformance/run_conformance.py "
                      "--orchid build/orchid --report docs/conformance.md")

SKIP_EXIT = 77  # CTest's SKIP_RETURN_CODE
STATUSES = ["pass", "fail", "unsupported", "error"]
CATEGORIES = ["string", "sequence", "optional", "training", "random", "control flow",
              "quantized", "other"]

# Operators that decide the unsupported category when the error names them.
CONTROL_FLOW_OPS = {"If", "Loop", "Scan"}
RANDOM_OPS = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike",
              "Bernoulli", "Multinomial"}
QUANTIZED_OPS = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv",
                 "QLinearMatMul", "ConvInteger", "MatMulInteger"}
STRING_OPS = {"StringNormalizer", "RegexFullMatch", "StringConcat", "StringSplit"}
TRAINING_OPS = {"Gradient", "Adagrad", "Adam", "Momentum"}


# Tests whose data or model is wrong in this ONNX version (1.12): listed in
# the report with the explanation, still counted by their real status.
KNOWN_DATA_PROBLEMS = {
    "node/test_cast_FLOAT_to_BFLOAT16":
        "the expected output truncates float to bfloat16; ONNX >= 1.14 (and Orchid) round "
        "to nearest even, which differs by 1 ulp (4e-3 relative) > rtol",
    "node/test_castlike_BFLOAT16_to_FLOAT":
        "the model declares input 'like' as 3x4 but the test data holds shape [1]",
    "node/test_castlike_BFLOAT16_to_FLOAT_expanded":
        "the model declares input 'like' as 3x4 but the test data holds shape [1]",
    "node/test_castlike_FLOAT_to_BFLOAT16":
        "the model declares input 'like' as 3x4 but the test data holds shape [1]",
    "node/test_castlike_FLOAT_to_BFLOAT16_expanded":
        "the model declares input 'like' as 3x4 but the test data holds shape [1]",
}


# --------------------------------------------------------------------------
# Discovery

class Test:
    def __init__(self, suite, name, folder):
        self.suite = suite
        self.name = name
        self.folder = folder
        self.key = f"{suite}/{name}"
        self.ops = []           # sorted operator names used (subgraphs included)
        self.status = None      # pass / fail / unsupported / error
        self.category = None    # for unsupported
        self.blamed_ops = []    # operators the error names (unsupported)
        self.reason = ""        # one line
        self.seconds = 0.0
        self.fission = None     # the same test under `orchid check --fission` (a Test)
        self.fission_mode = False  # this Test is run with --fission

    @property
    def label(self):
        """The key, marked when the test ran with --fission (for the log)."""
        return self.key + (" [fission]" if self.fission_mode else "")


def fatal(message):
    print(f"run_conformance: {message}", file=sys.stderr)
    sys.exit(2)


def op_label(node):
    domain = node.domain
    if domain in ("", "ai.onnx"):
        return node.op_type
    return f"{domain}.{node.op_type}"


def collect_ops(graph, ops):
    import onnx
    for node in graph.node:
        ops.add(op_label(node))
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                collect_ops(attr.g, ops)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    collect_ops(g, ops)


def model_ops(path):
    import onnx
    try:
        model = onnx.load(path, load_external_data=False)
    except Exception as e:  # noqa: BLE001 - an unreadable model is reported, not fatal
        return [f"<unreadable: {type(e).__name__}>"]
    ops = set()
    collect_ops(model.graph, ops)
    return sorted(ops)


def discover(data_dir, suites, pattern):
    tests = []
    for suite in suites:
        suite_dir = os.path.join(data_dir, suite)
        if not os.path.isdir(suite_dir):
            fatal(f"no suite folder {suite_dir}")
        for name in sorted(os.listdir(suite_dir)):
            folder = os.path.join(suite_dir, name)
            if not os.path.isfile(os.path.join(folder, "model.onnx")):
                continue  # real/-style stubs: data.json without a model
            test = Test(suite, name, folder)
            if pattern and not pattern.search(test.key):
                continue
            tests.append(test)
    return tests


# --------------------------------------------------------------------------
# Running and classification

def signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def one_line(text, limit=200):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def error_message(stderr, folder):
    """The orchid error from stderr: the 'orchid: error:' line and its indented
    continuation lines, joined, with the test folder's path removed."""
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"orchid: (?:internal )?error: ?(.*)", line)
        if m:
            parts = [m.group(1)]
            for more in lines[i + 1:]:
                if not more.startswith(" "):
                    break
                parts.append(more.strip())
            message = " ".join(p for p in parts if p)
            break
    else:
        message = next((l for l in reversed(lines) if l.strip()), "")
    message = message.replace(folder + "/", "").replace(folder, "<test>")
    return one_line(message)


UNSUPPORTED_OP_RE = re.compile(r"unsupported operators?:?\s*(.*)", re.IGNORECASE)


def is_sequence_op(op):
    return "Sequence" in op


def unsupported_category(message, test):
    """Returns (category, blamed operators) when the message says the test
    needs something Orchid does not support, else None."""
    lower = message.lower()
    m = UNSUPPORTED_OP_RE.search(message)
    if not (m or "unsupported" in lower or "not supported" in lower):
        return None
    named = []
    if m:
        # "If (node #0) Loop (nodes #1, #2)": the names before each parenthesis.
        for name in re.findall(r"([A-Za-z_][\w.]*)\s*\(", m.group(1)):
            if name not in named and name not in ("node", "nodes"):
                named.append(name)
    if not named:
        # "node 'Dropout_0' (Dropout): training mode is not supported"
        named = sorted(set(re.findall(r"node (?:'[^']*'|#\d+) \(([A-Za-z_][\w.]*)\)", message)))
    short = {b.split(".")[-1] for b in named}

    if "preview.training" in lower or "training mode" in lower or short & TRAINING_OPS:
        category = "training"
    elif "sequence" in lower or any(is_sequence_op(b) for b in short):
        category = "sequence"
    elif "optional" in lower or any(b.startswith("Optional") for b in short):
        category = "optional"
    elif "string" in lower or short & STRING_OPS:
        category = "string"
    elif short & RANDOM_OPS:
        category = "random"
    elif short & CONTROL_FLOW_OPS:
        category = "control flow"
    elif short & QUANTIZED_OPS or "quantiz" in lower:
        category = "quantized"
    else:
        category = "other"

    if not named:
        # An element type or value kind: blame the test's operators of that
        # kind, else all of them.
        related = {
            "sequence": [op for op in test.ops if is_sequence_op(op)],
            "optional": [op for op in test.ops if op.startswith("Optional")],
            "string": [op for op in test.ops if op in STRING_OPS or op in ("Cast", "CastLike")],
        }.get(category, [])
        named = related or list(test.ops)
    return category, named


def fission_twin(test):
    """A fresh Test for the same folder, to hold the --fission result."""
    twin = Test(test.suite, test.name, test.folder)
    twin.ops = test.ops
    twin.fission_mode = True
    return twin


def run_test(test, orchid, timeout, fission=False):
    cmd = [orchid, "check", os.path.join(test.folder, "model.onnx"), "--test-dir", test.folder]
    if fission:
        cmd.append("--fission")
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        test.seconds = time.monotonic() - start
        test.status, test.reason = "error", f"timeout after {timeout:g} s"
        return test
    test.seconds = time.monotonic() - start
    rc = proc.returncode
    if rc == 0:
        test.status = "pass"
        return test
    if rc == 1:
        test.status = "fail"
        failing = [l for l in proc.stdout.splitlines() if ": FAIL" in l]
        test.reason = one_line(failing[0]) if failing else one_line(proc.stdout or proc.stderr)
        return test
    if rc < 0:
        test.status = "error"
        test.reason = f"crash ({signal_name(-rc)})"
        detail = error_message(proc.stderr, test.folder)
        if detail:
            test.reason += ": " + detail
        return test
    message = error_message(proc.stderr, test.folder)
    if rc == 2:
        category = unsupported_category(message, test)
        if category:
            test.status = "unsupported"
            test.category, test.blamed_ops = category
            test.reason = message
            return test
        test.status, test.reason = "error", message
        return test
    test.status = "error"
    if rc == 3:  # orchid's catch-all for exceptions that are not orchid::Error
        test.reason = "internal error (exit 3)" + (": " + message if message else "")
    else:
        test.reason = f"crash (exit {rc})" + (": " + message if message else "")
    return test


def is_crash(test):
    return test.status == "error" and test.reason.startswith(("crash", "timeout", "internal error"))


# --------------------------------------------------------------------------
# Report

def md_escape(text):
    return text.replace("|", "\\|")


def write_report(path, tests, suites):
    by_suite = defaultdict(list)
    for t in tests:
        by_suite[t.suite].append(t)
    with_fission = any(t.fission for t in tests)
    fission_column = " Pass with fission |" if with_fission else ""
    fission_align = "---:|" if with_fission else ""

    def fission_pass(group):
        return f" {sum(1 for t in group if t.fission and t.fission.status == 'pass')} |" if with_fission else ""

    out = []
    w = out.append
    w("# ONNX backend conformance")
    w("")
    w("Generated by the `conformance` CTest test; do not edit. Regenerate with:")
    w("")
    w("```")
    w(REGENERATE_COMMAND + (" --with-fission" if with_fission else ""))
    w("```")
    w("")
    w("(or `ctest --test-dir build -R '^conformance$'`, which also checks "
      "`tests/conformance/expected_pass.txt`"
      + (" and `tests/conformance/expected_pass_fission.txt`" if with_fission else "") + ").")
    w("")
    w(f"Test data: `{DEFAULT_DATA_DIR}` (ONNX 1.12 backend tests); the weightless "
      "`real/` stubs are skipped. Each test runs `orchid check model.onnx --test-dir "
      "<test>` with ONNX's tolerance (rtol 1e-3, atol 1e-7; no test folder of this "
      "version sets its own).")
    w("")
    w("- **pass**: every data set matches; **fail**: a mismatch (exit 1);")
    w("- **unsupported**: orchid rejects the model for a feature it does not support "
      "(operator, element type, sequence/optional value);")
    w("- **error**: any other error, crash or timeout.")
    if with_fission:
        w("- **pass with fission**: passes with `orchid check --fission` (the graph "
          "after fission into primitives); gated by "
          "`tests/conformance/expected_pass_fission.txt`.")
    w("")
    w("## Summary")
    w("")
    w(f"| Suite | Pass |{fission_column} Fail | Unsupported | Error | Total |")
    w(f"|---|---:|{fission_align}---:|---:|---:|---:|")
    totals = defaultdict(int)
    for suite in suites:
        counts = defaultdict(int)
        for t in by_suite[suite]:
            counts[t.status] += 1
        for s in STATUSES:
            totals[s] += counts[s]
        w(f"| {suite} | {counts['pass']} |{fission_pass(by_suite[suite])} {counts['fail']} | "
          f"{counts['unsupported']} | {counts['error']} | {len(by_suite[suite])} |")
    all_fission = f" **{fission_pass(tests).strip(' |')}** |" if with_fission else ""
    w(f"| **all** | **{totals['pass']}** |{all_fission} **{totals['fail']}** | "
      f"**{totals['unsupported']}** | **{totals['error']}** | **{len(tests)}** |")
    w("")

    everything = tests + [t.fission for t in tests if t.fission]
    crashes = sorted((t for t in everything if is_crash(t)), key=lambda t: t.label)
    w("## Crashes and timeouts")
    w("")
    if crashes:
        w("These are bugs: orchid must report an error, not crash or hang.")
        w("")
        for t in crashes:
            w(f"- `{t.label}`: {md_escape(t.reason)}")
    else:
        w("None.")
    w("")

    w("## Failing and erroring tests")
    w("")
    bad = sorted((t for t in tests if t.status in ("fail", "error")), key=lambda t: t.key)
    if bad:
        w("| Test | Status | Operators | Reason |")
        w("|---|---|---|---|")
        for t in bad:
            w(f"| `{t.key}` | {t.status} | {md_escape(', '.join(t.ops))} | {md_escape(t.reason)} |")
    else:
        w("None.")
    w("")

    known = sorted((t for t in tests if t.key in KNOWN_DATA_PROBLEMS), key=lambda t: t.key)
    if known:
        w("### Known problems of the test data (ONNX 1.12)")
        w("")
        for t in known:
            w(f"- `{t.key}` ({t.status}): {KNOWN_DATA_PROBLEMS[t.key]}")
        w("")

    if with_fission:
        write_fission_section(w, tests)

    w("## Unsupported tests")
    w("")
    w("Sequence, optional, string, training and random operators, control flow and "
      "quantized operators may stay unsupported; `other` is work still to do.")
    w("")
    unsupported = [t for t in tests if t.status == "unsupported"]
    w("| Category | Tests | Operators |")
    w("|---|---:|---|")
    for cat in CATEGORIES:
        group = [t for t in unsupported if t.category == cat]
        if not group:
            continue
        ops = sorted({op for t in group for op in t.blamed_ops})
        w(f"| {cat} | {len(group)} | {md_escape(', '.join(ops)) or '-'} |")
    w("")
    for cat in CATEGORIES:
        group = sorted((t for t in unsupported if t.category == cat), key=lambda t: t.key)
        if not group:
            continue
        w(f"### {cat} ({len(group)})")
        w("")
        for t in group:
            w(f"- `{t.key}`: {md_escape(t.reason)}")
        w("")

    w("## Per operator")
    w("")
    w("Each test counts once for every operator its model uses (subgraphs included), so "
      "`_expanded` tests count for the operators of the expansion. *Blamed* counts the "
      "unsupported tests whose error names the operator (or, when the error names none, "
      "that use it).")
    w("")
    w(f"| Operator | Pass |{fission_column} Total | Fail | Unsupported | Error | Blamed |")
    w(f"|---|---:|{fission_align}---:|---:|---:|---:|---:|")
    per_op = defaultdict(lambda: defaultdict(int))
    for t in tests:
        for op in t.ops:
            per_op[op][t.status] += 1
            per_op[op]["total"] += 1
            if t.fission and t.fission.status == "pass":
                per_op[op]["fission"] += 1
        for op in t.blamed_ops:
            per_op[op]["blamed"] += 1
    for op in sorted(per_op):
        c = per_op[op]
        fission_cell = f" {c['fission']} |" if with_fission else ""
        w(f"| {op} | {c['pass']} |{fission_cell} {c['total']} | {c['fail']} | {c['unsupported']} | "
          f"{c['error']} | {c['blamed']} |")
    w("")

    w("## Passing tests")
    w("")
    w("See `tests/conformance/expected_pass.txt` "
      f"({totals['pass']} tests).")
    if with_fission:
        fission_total = fission_pass(tests).strip(" |")
        w("See `tests/conformance/expected_pass_fission.txt` for those passing with fission "
          f"({fission_total} tests).")
    text = "\n".join(out) + "\n"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def write_fission_section(w, tests):
    """Tests that pass without fission but not with it: the fission rules'
    work list."""
    w("## Passing only without fission")
    w("")
    lost = sorted((t for t in tests if t.status == "pass" and t.fission
                   and t.fission.status != "pass"), key=lambda t: t.key)
    if not lost:
        w("None.")
        w("")
        return
    w("| Test | Status with fission | Operators | Reason |")
    w("|---|---|---|---|")
    for t in lost:
        f = t.fission
        w(f"| `{t.key}` | {f.status} | {md_escape(', '.join(t.ops))} | {md_escape(f.reason)} |")
    w("")


# --------------------------------------------------------------------------
# Expected-pass list

def read_expected(path):
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {l.strip() for l in f if l.strip() and not l.startswith("#")}


def write_expected(path, keys, fission=False):
    with open(path, "w") as f:
        if fission:
            f.write("# Conformance tests that pass with `orchid check --fission`; the `conformance`\n"
                    "# CTest test fails if one stops passing. Rewrite with\n"
                    "# run_conformance.py --fission --update-expected.\n")
        else:
            f.write("# Conformance tests that pass; the `conformance` CTest test fails if one\n"
                    "# stops passing. Rewrite with run_conformance.py --update-expected.\n")
        for key in sorted(keys):
            f.write(key + "\n")


# --------------------------------------------------------------------------

def run_all(jobs, orchid, args):
    """Runs the (test, fission mode) pairs in a thread pool."""
    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(run_test, t, orchid, args.timeout, fission) for t, fission in jobs]
        for future in concurrent.futures.as_completed(futures):
            t = future.result()
            done += 1
            if args.verbose or is_crash(t):
                print(f"[{done}/{len(jobs)}] {t.label}: {t.status.upper()}"
                      + (f" ({t.reason})" if t.reason else ""), flush=True)


def print_summary(tests, suites, label=""):
    for suite in suites:
        group = [t for t in tests if t.suite == suite]
        if not group:
            continue
        c = defaultdict(int)
        for t in group:
            c[t.status] += 1
        print(f"{label}{suite:18s} pass {c['pass']:4d}  fail {c['fail']:4d}  unsupported "
              f"{c['unsupported']:4d}  error {c['error']:4d}  / {len(group)}")


def gate(tests, expected_path, update, fission=False):
    """Prints the newly passing tests and the regressions against the list;
    rewrites it with `update`. Returns (passing keys, regressions)."""
    passing = {t.key for t in tests if t.status == "pass"}
    ran = {t.key for t in tests}
    expected = read_expected(expected_path)
    regressions = sorted((expected & ran) - passing)
    newly = sorted(passing - expected)
    if newly:
        print(f"\n{len(newly)} newly passing (not in {os.path.basename(expected_path)}):")
        for key in newly:
            print(f"  {key}")
    if regressions:
        status_of = {t.key: t for t in tests}
        print(f"\n{len(regressions)} REGRESSIONS (in {os.path.basename(expected_path)}, "
              "no longer passing):")
        for key in regressions:
            t = status_of[key]
            print(f"  {key}: {t.status}" + (f" ({t.reason})" if t.reason else ""))
    if update:
        # Entries outside this run (other suites, --filter) are kept.
        write_expected(expected_path, (expected - ran) | passing, fission)
        print(f"Updated {expected_path}")
    return passing, regressions


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--orchid", default=os.path.join(SOURCE_DIR, "build", "orchid"),
                        help="the orchid executable (default: build/orchid)")
    parser.add_argument("--data-dir", default=DEFAULT_DATA_DIR, help="ONNX backend test data")
    parser.add_argument("--suites", default=",".join(DEFAULT_SUITES),
                        help="comma-separated suites (default: %(default)s)")
    parser.add_argument("--filter", help="regex on suite/test: run only the tests it matches "
                        "(the report is then not written unless --report is given)")
    parser.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=120, help="seconds per test")
    parser.add_argument("--report", help=f"Markdown report to write (default: {DEFAULT_REPORT} "
                        "for a full run)")
    parser.add_argument("--no-report", action="store_true")
    parser.add_argument("--expected", help="expected-pass list (default: expected_pass.txt, "
                        "or expected_pass_fission.txt with --fission)")
    parser.add_argument("--check-expected", action="store_true",
                        help="exit 1 if a test of the expected-pass list no longer passes")
    parser.add_argument("--update-expected", action="store_true",
                        help="rewrite the expected-pass list(s) with the tests that pass now")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--fission", action="store_true",
                      help="run `orchid check --fission` only (no default report)")
    mode.add_argument("--with-fission", action="store_true",
                      help="run every test without and with --fission; the report gains "
                      "pass-with-fission columns")
    parser.add_argument("--expected-fission", default=DEFAULT_EXPECTED_FISSION,
                        help="with --with-fission: the fission mode's expected-pass list "
                        "(default: %(default)s)")
    parser.add_argument("--verbose", "-v", action="store_true", help="print every test's result")
    args = parser.parse_args()
    if args.expected is None:
        args.expected = DEFAULT_EXPECTED_FISSION if args.fission else DEFAULT_EXPECTED

    try:
        import onnx  # noqa: F401
    except ImportError:
        fatal("needs the onnx Python package (python3-onnx); "
                 f"{sys.executable} has none")
    orchid = os.path.abspath(args.orchid)
    if not os.access(orchid, os.X_OK):
        fatal(f"{orchid}: not an executable (build the orchid target)")

    if not os.path.isdir(args.data_dir):
        print(f"run_conformance: {args.data_dir}: no ONNX test data (install libonnx-testdata); "
              "skipping")
        return SKIP_EXIT
    suites = [s for s in args.suites.split(",") if s]
    pattern = re.compile(args.filter) if args.filter else None
    tests = discover(args.data_dir, suites, pattern)
    if not tests:
        fatal("no tests selected")
    for t in tests:
        t.ops = model_ops(os.path.join(t.folder, "model.onnx"))
        if args.with_fission:
            t.fission = fission_twin(t)
    # --fission alone: the tests themselves run in fission mode.
    jobs = [(t, args.fission) for t in tests] + [(t.fission, True) for t in tests if t.fission]

    start = time.monotonic()
    mode_note = (" with --fission" if args.fission else
                 " without and with --fission" if args.with_fission else "")
    runs = f"{len(tests)} conformance tests{mode_note}"
    print(f"Running {runs} with {args.jobs} jobs...", flush=True)
    run_all(jobs, orchid, args)
    elapsed = time.monotonic() - start

    print_summary(tests, suites)
    if args.with_fission:
        print_summary([t.fission for t in tests], suites, label="fission ")
    print(f"Wall time: {elapsed:.1f} s")
    everything = tests + [t.fission for t in tests if t.fission]
    slowest = sorted(everything, key=lambda t: -t.seconds)[:5]
    print("Slowest: " + ", ".join(f"{t.label} {t.seconds:.1f}s" for t in slowest))

    crashes = sorted((t for t in everything if is_crash(t)), key=lambda t: t.key)
    if crashes:
        print(f"\n{len(crashes)} CRASHES / TIMEOUTS (bugs):")
        for t in crashes:
            print(f"  {t.label}: {t.reason}")

    report = args.report
    if report is None and not args.filter and not args.no_report and not args.fission:
        report = DEFAULT_REPORT
    if report and not args.no_report:
        write_report(report, tests, suites)
        print(f"Wrote {report}")

    passing, regressions = gate(tests, args.expected, args.update_expected, args.fission)
    failed = len(regressions) if args.check_expected else 0
    if args.with_fission:
        fission_tests = [t.fission for t in tests]
        fission_passing, fission_regressions = gate(fission_tests, args.expected_fission,
                                                    args.update_expected, fission=True)
        fission_failed = len(fission_regressions) if args.check_expected else 0
        print(f"fission: {len(fission_passing)} passed, {fission_failed} failed")
        failed += fission_failed
    print(f"{len(passing)} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
