#!/usr/bin/env python3
r"""ONNX backend conformance suite for Orchid.

Regenerate the report and the runtime gate (after faster kernels land) with
one command, from the source tree:

    .venv/bin/python tests/conformance/run_conformance.py --orchid build/orchid \
        --with-fission --with-runtime --with-fused --update-expected fused   # or fission,runtime,fused

(`--update-expected` alone rewrites the lists of every mode that ran.)

Runs `orchid check model.onnx --test-dir <test>` on every test folder of the
ONNX backend test data (node, pytorch-converted, pytorch-operator, simple; the
weightless stubs under real/ are skipped), classifies each test as pass / fail /
unsupported / error, and writes docs/conformance.md.

Modes: the primary mode is the reference interpreter on the imported graph
(`orchid check --interpreter`, the oracle), gated by expected_pass.txt. Extra
modes run every test again, each in its own column of the report and with its
own gate:
  --with-fission  `orchid check --fission` (the reference interpreter on the
                  graph after fission into primitives); expected_pass_fission.txt
  --with-runtime  `orchid check --no-fusion` (the baseline program on the CPU
                  runtime, one kernel thread per test since --jobs runs tests
                  in parallel); expected_pass_runtime.txt
  --with-fused    `orchid check --no-profile` (the orchestrated program with
                  generated fused kernels); expected_pass_fused.txt. Kernel
                  libraries and costs go to --cache-dir.
The report lists, per extra mode, the tests that pass on the interpreter but not
in that mode. --fission or --runtime alone run only that mode (gated by its own
list, writing no report unless --report is given).

Regression gate: --check-expected exits 1 if a test of an expected-pass list
no longer passes or is no longer found in the test data, if a test crashes,
hangs or hits an internal error (listed or not), or, in the runtime modes, if a
listed test starts to run a reference kernel (the interpreter standing in for
a missing native kernel; `orchid check` prints the implementations that ran)
without being listed in reference_fallback_<mode>.txt. --update-expected
[MODE,...] rewrites the lists of the given modes (interpreter, fission,
runtime, fused; default: every mode that ran), keeping entries outside the
run. The last line printed is `N passed, M failed` (N = tests passing now in
the primary mode, M = failures of all modes under --check-expected, else 0).
Exit status: 0, 1 on a failure, 2 on bad usage or without the test data.

Needs Python 3 and the `onnx` package (only to list the operators of each
model): the project's .venv has it (scripts/setup).
"""

import argparse
import concurrent.futures
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
DEFAULT_DATA_DIR = "/usr/share/libonnx-testdata/data"
DEFAULT_SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
DEFAULT_EXPECTED = os.path.join(HERE, "expected_pass.txt")
DEFAULT_EXPECTED_FISSION = os.path.join(HERE, "expected_pass_fission.txt")
DEFAULT_EXPECTED_RUNTIME = os.path.join(HERE, "expected_pass_runtime.txt")
DEFAULT_EXPECTED_FUSED = os.path.join(HERE, "expected_pass_fused.txt")
# Runtime modes: the listed tests allowed to run a reference kernel (the
# interpreter standing in for a missing native kernel). A listed test that
# gains one fails the gate: passing on the interpreter proves nothing about
# native kernels.
DEFAULT_FALLBACK_RUNTIME = os.path.join(HERE, "reference_fallback_runtime.txt")
DEFAULT_FALLBACK_FUSED = os.path.join(HERE, "reference_fallback_fused.txt")
DEFAULT_REPORT = os.path.join(SOURCE_DIR, "docs", "conformance.md")
REGENERATE_COMMAND = (".venv/bin/python tests/conformance/run_conformance.py "
                      "--orchid build/orchid --report docs/conformance.md")


class Mode:
    """One way of running `orchid check` on a test."""

    def __init__(self, name, args, column, expected, description, lost_title, fallback=None):
        self.name = name                # --NAME, --with-NAME, --expected-NAME
        self.args = args                # extra `orchid check` arguments
        self.column = column            # report column title
        self.expected = expected        # default expected-pass list
        self.description = description  # Markdown, for the report and the list header
        self.lost_title = lost_title    # report section: pass on the interpreter only
        self.fallback = fallback        # runtime modes: tests allowed a reference kernel


MODES = {
    "interpreter": Mode(
        "interpreter", ["--interpreter"], "Pass", DEFAULT_EXPECTED,
        "`orchid check --interpreter` (the reference interpreter on the imported graph)", None),
    "fission": Mode(
        "fission", ["--fission"], "Pass with fission", DEFAULT_EXPECTED_FISSION,
        "`orchid check --fission` (the reference interpreter on the graph after fission "
        "into primitives)",
        "Passing on the interpreter but not with fission"),
    # One kernel thread per process: --jobs already runs nproc tests at once.
    "runtime": Mode(
        "runtime", ["--threads", "1", "--no-fusion"], "Pass on runtime", DEFAULT_EXPECTED_RUNTIME,
        "`orchid check --no-fusion` (the baseline program, one kernel per primitive, on the CPU "
        "runtime, `--threads 1`)",
        "Passing on the interpreter but not on the runtime", DEFAULT_FALLBACK_RUNTIME),
    # Orchestrated with analytical costs (profiling every test would time
    # thousands of kernels); generated kernels are compiled and run.
    "fused": Mode(
        "fused", ["--threads", "1", "--no-profile"], "Pass fused", DEFAULT_EXPECTED_FUSED,
        "`orchid check --no-profile` (the orchestrated program: fused generated kernels chosen by "
        "the BLP on analytical costs, `--threads 1`)",
        "Passing on the interpreter but not fused", DEFAULT_FALLBACK_FUSED),
}
PRIMARY_MODE = "interpreter"
EXTRA_MODES = ["fission", "runtime", "fused"]  # --with-NAME; report columns in this order

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
        self.kernels = None     # runtime modes: kernels run per data set (max), from `ran N kernels`
        self.implementations = set()  # runtime modes: Kernel::implementation() names that ran
        self.specialized = False      # runtime modes: an input was imported as a constant
        self.mode = MODES[PRIMARY_MODE]
        self.twins = {}         # extra mode name -> the same test in that mode (a Test)

    @property
    def uses_reference(self):
        return "reference" in self.implementations

    @property
    def folded(self):
        """Ran on the runtime without a single kernel: the importer folded the
        whole test to constants with the interpreter."""
        return self.kernels == 0

    @property
    def label(self):
        """The key, marked with the mode unless it is the primary one (for the log)."""
        return self.key + ("" if self.mode.name == PRIMARY_MODE else f" [{self.mode.name}]")


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


def twin(test, mode):
    """A fresh Test for the same folder, to hold the result in another mode."""
    other = Test(test.suite, test.name, test.folder)
    other.ops = test.ops
    other.mode = mode
    return other


RAN_RE = re.compile(r"^  ran (\d+) kernels?(?:: ([^;]*))?(; specialized on \d+ inputs?)?$")


def read_ran_lines(test, stdout):
    """What `orchid check` on the runtime says it ran, per data set."""
    for line in stdout.splitlines():
        m = RAN_RE.match(line)
        if not m:
            continue
        test.kernels = max(test.kernels or 0, int(m.group(1)))
        for item in (m.group(2) or "").split(", "):
            if item:
                test.implementations.add(item.rsplit(" ", 1)[0])
        test.specialized |= bool(m.group(3))


def run_test(test, orchid, timeout):
    cmd = [orchid, "check", os.path.join(test.folder, "model.onnx"), "--test-dir", test.folder]
    cmd += test.mode.args
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        test.seconds = time.monotonic() - start
        test.status, test.reason = "error", f"timeout after {timeout:g} s"
        return test
    test.seconds = time.monotonic() - start
    read_ran_lines(test, proc.stdout)
    rc = proc.returncode
    if rc == 0 and test.mode.fallback and test.kernels is None:
        test.status = "error"
        test.reason = "`orchid check` on the runtime printed no 'ran N kernels' line"
        return test
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
    primary = tests[0].mode
    extras = [MODES[name] for name in EXTRA_MODES if any(name in t.twins for t in tests)]
    extra_columns = "".join(f" {m.column} |" for m in extras)
    extra_align = "---:|" * len(extras)

    def passes(group, mode):
        return sum(1 for t in group if mode.name in t.twins and t.twins[mode.name].status == "pass")

    def extra_cells(group, bold=False):
        mark = "**" if bold else ""
        return "".join(f" {mark}{passes(group, m)}{mark} |" for m in extras)

    def rel(p):
        return os.path.relpath(p, SOURCE_DIR)

    out = []
    w = out.append
    w("# ONNX backend conformance")
    w("")
    w("Generated by the `conformance` CTest test; do not edit. Regenerate with:")
    w("")
    w("```")
    w(REGENERATE_COMMAND + ("" if primary.name == PRIMARY_MODE else f" --{primary.name}")
      + "".join(f" --with-{m.name}" for m in extras))
    w("```")
    w("")
    gates = [f"`{rel(m.expected)}`" for m in [primary] + extras]
    gate_list = gates[0] if len(gates) == 1 else ", ".join(gates[:-1]) + " and " + gates[-1]
    w(f"(or `ctest --test-dir build -R '^conformance$'`, which also checks {gate_list}).")
    w("")
    w(f"Test data: `{DEFAULT_DATA_DIR}` (ONNX 1.12 backend tests); the weightless "
      "`real/` stubs are skipped. Each test runs `orchid check model.onnx --test-dir "
      "<test>` with ONNX's tolerance (rtol 1e-3, atol 1e-7; no test folder of this "
      f"version sets its own). The statuses below are those of {primary.description}, "
      f"gated by `{rel(primary.expected)}`.")
    w("")
    w("- **pass**: every data set matches; **fail**: a mismatch (exit 1);")
    w("- **unsupported**: orchid rejects the model for a feature it does not support "
      "(operator, element type, sequence/optional value);")
    w("- **error**: any other error, crash or timeout.")
    for m in extras:
        w(f"- **{m.column.lower()}**: passes with {m.description}; gated by "
          f"`{rel(m.expected)}`.")
    w("")
    w("## Summary")
    w("")
    w(f"| Suite | Pass |{extra_columns} Fail | Unsupported | Error | Total |")
    w(f"|---|---:|{extra_align}---:|---:|---:|---:|")
    totals = defaultdict(int)
    for suite in suites:
        counts = defaultdict(int)
        for t in by_suite[suite]:
            counts[t.status] += 1
        for s in STATUSES:
            totals[s] += counts[s]
        w(f"| {suite} | {counts['pass']} |{extra_cells(by_suite[suite])} {counts['fail']} | "
          f"{counts['unsupported']} | {counts['error']} | {len(by_suite[suite])} |")
    w(f"| **all** | **{totals['pass']}** |{extra_cells(tests, bold=True)} **{totals['fail']}** | "
      f"**{totals['unsupported']}** | **{totals['error']}** | **{len(tests)}** |")
    w("")

    everything = tests + [tw for t in tests for tw in t.twins.values()]
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

    for m in extras:
        write_lost_section(w, tests, m)
    for m in extras:
        if m.fallback:
            write_coverage_section(w, tests, m)

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
    w(f"| Operator | Pass |{extra_columns} Total | Fail | Unsupported | Error | Blamed |")
    w(f"|---|---:|{extra_align}---:|---:|---:|---:|---:|")
    per_op = defaultdict(lambda: defaultdict(int))
    for t in tests:
        for op in t.ops:
            per_op[op][t.status] += 1
            per_op[op]["total"] += 1
            for name, other in t.twins.items():
                if other.status == "pass":
                    per_op[op]["pass " + name] += 1
        for op in t.blamed_ops:
            per_op[op]["blamed"] += 1
    for op in sorted(per_op):
        c = per_op[op]
        cells = "".join(f" {c['pass ' + m.name]} |" for m in extras)
        w(f"| {op} | {c['pass']} |{cells} {c['total']} | {c['fail']} | {c['unsupported']} | "
          f"{c['error']} | {c['blamed']} |")
    w("")

    w("## Passing tests")
    w("")
    w(f"See `{rel(primary.expected)}` ({totals['pass']} tests).")
    for m in extras:
        w(f"See `{rel(m.expected)}` for those passing in the {m.name} mode "
          f"({passes(tests, m)} tests).")
    text = "\n".join(out) + "\n"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def write_coverage_section(w, tests, mode):
    """What the passing tests of a runtime mode exercised: native kernels only,
    a reference kernel for part of the graph, or nothing at all (folded to
    constants at import, where the interpreter computed everything)."""
    passing = [t.twins[mode.name] for t in tests if mode.name in t.twins
               and t.twins[mode.name].status == "pass"]
    reference = sorted((t for t in passing if t.uses_reference), key=lambda t: t.key)
    folded = sorted((t for t in passing if t.folded), key=lambda t: t.key)
    native = [t for t in passing if not t.uses_reference and not t.folded]
    specialized = sum(1 for t in passing if t.specialized)
    w(f"## What ran in the {mode.name} mode")
    w("")
    w(f"Of the {len(passing)} tests passing in this mode, {len(native)} ran native kernels only, "
      f"{len(reference)} ran a reference kernel (the interpreter standing in for a missing native "
      f"kernel; allowed by `{os.path.relpath(mode.fallback, SOURCE_DIR)}`) and {len(folded)} ran "
      "no kernel at all: the importer folded them to constants, so they test the interpreter, "
      f"not the runtime. {specialized} were imported with an input's value specialized into "
      "the graph (an operator needed it to know its output shape).")
    w("")
    for title, group in (("Reference kernels", reference), ("Folded at import", folded)):
        if group:
            w(f"{title} ({len(group)}): " + ", ".join(f"`{t.key}`" for t in group))
            w("")


def write_lost_section(w, tests, mode):
    """Tests that pass in the primary mode but not in `mode`: that mode's work
    list (fission rules, runtime kernels)."""
    w(f"## {mode.lost_title}")
    w("")
    lost = sorted((t for t in tests if t.status == "pass" and mode.name in t.twins
                   and t.twins[mode.name].status != "pass"), key=lambda t: t.key)
    if not lost:
        w("None.")
        w("")
        return
    w(f"{len(lost)} tests.")
    w("")
    w(f"| Test | Status ({mode.name}) | Operators | Reason |")
    w("|---|---|---|---|")
    for t in lost:
        other = t.twins[mode.name]
        w(f"| `{t.key}` | {other.status} | {md_escape(', '.join(t.ops))} | {md_escape(other.reason)} |")
    w("")


# --------------------------------------------------------------------------
# Expected-pass list

def read_expected(path):
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {l.strip() for l in f if l.strip() and not l.startswith("#")}


def write_expected(path, keys, mode, fallback=False):
    with open(path, "w") as f:
        if fallback:
            header = (f"Conformance tests that pass with {mode.description.replace('`', '')} "
                      "while a reference kernel (the interpreter standing in for a missing native "
                      "kernel) runs part of them. The `conformance` CTest test fails if a test of "
                      f"{os.path.basename(mode.expected)} not listed here starts to need one. "
                      f"Rewritten with --update-expected {mode.name}.")
            for line in textwrap.wrap(header, 78):
                f.write("# " + line + "\n")
        elif mode.name == PRIMARY_MODE:
            f.write("# Conformance tests that pass; the `conformance` CTest test fails if one\n"
                    "# stops passing. Rewrite with run_conformance.py --update-expected.\n")
        else:
            header = (f"Conformance tests that pass with {mode.description.replace('`', '')}; "
                      "the `conformance` CTest test fails if one stops passing. Rewrite with "
                      f"run_conformance.py --with-{mode.name} --update-expected {mode.name} "
                      "(see the top of run_conformance.py).")
            for line in textwrap.wrap(header, 78):
                f.write("# " + line + "\n")
        for key in sorted(keys):
            f.write(key + "\n")


# --------------------------------------------------------------------------

def run_all(jobs, orchid, args):
    """Runs the tests (each in its own mode) in a thread pool."""
    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(run_test, t, orchid, args.timeout) for t in jobs]
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


def in_scope(key, suites, pattern):
    """Whether a listed test belongs to this run (its suite ran, --filter matches)."""
    return key.split("/", 1)[0] in suites and (not pattern or bool(pattern.search(key)))


def print_list(title, keys, status_of=None):
    if not keys:
        return
    print(f"\n{title}:")
    for key in keys:
        t = status_of.get(key) if status_of else None
        print(f"  {key}" + (f": {t.status}" + (f" ({t.reason})" if t.reason else "") if t else ""))


def gate(tests, mode, expected_path, update, suites, pattern):
    """Prints the newly passing tests and the failures against the mode's
    lists; rewrites them with `update`. A failure is a listed test that no
    longer passes, is no longer found in the test data, or (runtime modes) now
    runs a reference kernel without being listed as allowed to. Returns
    (passing keys, failure keys)."""
    passing = {t.key for t in tests if t.status == "pass"}
    ran = {t.key for t in tests}
    status_of = {t.key: t for t in tests}
    expected = read_expected(expected_path)
    regressions = sorted((expected & ran) - passing)
    missing = sorted(k for k in expected - ran if in_scope(k, suites, pattern))
    newly = sorted(passing - expected)
    print_list(f"{mode.name}: {len(newly)} newly passing (not in {os.path.basename(expected_path)})", newly)
    print_list(f"{mode.name}: {len(regressions)} REGRESSIONS (in {os.path.basename(expected_path)}, "
               "no longer passing)", regressions, status_of)
    print_list(f"{mode.name}: {len(missing)} MISSING (in {os.path.basename(expected_path)}, not in "
               "the test data)", missing)
    failures = regressions + missing
    fallbacks = set()
    if mode.fallback:
        allowed = read_expected(mode.fallback)
        fallbacks = {t.key for t in tests if t.status == "pass" and t.uses_reference}
        gained = sorted((fallbacks & expected) - allowed)
        print_list(f"{mode.name}: {len(gained)} NEW REFERENCE-KERNEL FALLBACKS (passing, but a "
                   f"reference kernel ran; not in {os.path.basename(mode.fallback)})", gained)
        failures += gained
        cured = sorted((allowed - fallbacks) & ran)
        print_list(f"{mode.name}: {len(cured)} no longer run a reference kernel (in "
                   f"{os.path.basename(mode.fallback)})", cured)
    if update:
        # Entries outside this run (other suites, --filter) are kept.
        write_expected(expected_path, (expected - ran) | passing, mode)
        print(f"Updated {expected_path}")
        if mode.fallback:
            write_expected(mode.fallback, (read_expected(mode.fallback) - ran) | fallbacks, mode,
                           fallback=True)
            print(f"Updated {mode.fallback}")
    return passing, failures


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
    # Compiling pytorch-converted/test_MaxPool2d_stride_padding_dilation for the
    # runtime (9600 kernels) takes over 2 minutes on a loaded 2-core machine.
    parser.add_argument("--timeout", type=float, default=300, help="seconds per test "
                        "(default: %(default)s)")
    parser.add_argument("--report", help=f"Markdown report to write (default: {DEFAULT_REPORT} "
                        "for a full run)")
    parser.add_argument("--no-report", action="store_true")
    parser.add_argument("--expected", help="the primary mode's expected-pass list (default: "
                        "expected_pass.txt, or that of the mode given by --fission / --runtime)")
    parser.add_argument("--check-expected", action="store_true",
                        help="exit 1 if a test of an expected-pass list no longer passes")
    parser.add_argument("--update-expected", nargs="?", const="all", metavar="MODE,...",
                        help="rewrite the expected-pass lists of these modes (interpreter, "
                        "fission, runtime; default: every mode that ran) with the tests that "
                        "pass now")
    single = parser.add_mutually_exclusive_group()
    for name in EXTRA_MODES:
        m = MODES[name]
        single.add_argument(f"--{name}", action="store_true",
                            help=f"run only {m.description} (no default report)")
    for name in EXTRA_MODES:
        m = MODES[name]
        parser.add_argument(f"--with-{name}", action="store_true",
                            help=f"also run every test with {m.description}; the report gains "
                            f"a '{m.column}' column")
        parser.add_argument(f"--expected-{name}", default=m.expected,
                            help=f"with --with-{name}: that mode's expected-pass list "
                            "(default: %(default)s)")
    parser.add_argument("--cache-dir", default=None,
                        help="ORCHID_CACHE_DIR for the tests (default: orchid-cache beside the orchid binary)")
    parser.add_argument("--verbose", "-v", action="store_true", help="print every test's result")
    args = parser.parse_args()

    primary = MODES[PRIMARY_MODE]
    for name in EXTRA_MODES:
        if getattr(args, name):
            primary = MODES[name]
    extras = [MODES[name] for name in EXTRA_MODES if getattr(args, f"with_{name}")]
    if primary.name != PRIMARY_MODE and extras:
        fatal(f"--{primary.name} runs one mode only; it excludes --with-*")
    if args.expected is None:
        args.expected = primary.expected
    expected_paths = {primary.name: args.expected}
    for m in extras:
        expected_paths[m.name] = getattr(args, f"expected_{m.name}")
    if args.update_expected is None:
        update = set()
    elif args.update_expected == "all":
        update = set(expected_paths)
    else:
        update = {n for n in args.update_expected.split(",") if n}
        for n in sorted(update - set(expected_paths)):
            fatal(f"--update-expected {n}: not a mode of this run "
                  f"(modes run: {', '.join(expected_paths)})")

    try:
        # Not just `import onnx`: Debian's libonnx-testdata puts a bare onnx/
        # folder into /usr/lib/python3/dist-packages, which imports as an
        # empty namespace package.
        from onnx import load  # noqa: F401
    except ImportError:
        fatal(f"needs the onnx Python package; {sys.executable} has none "
              "(run scripts/setup: it installs onnx into .venv)")
    orchid = os.path.abspath(args.orchid)
    os.environ["ORCHID_CACHE_DIR"] = os.path.abspath(
        args.cache_dir or os.path.join(os.path.dirname(orchid), "orchid-cache"))
    if not os.access(orchid, os.X_OK):
        fatal(f"{orchid}: not an executable (build the orchid target)")

    if not os.path.isdir(args.data_dir):
        fatal(f"{args.data_dir}: no ONNX test data (scripts/setup installs Debian's libonnx-testdata)")
    suites = [s for s in args.suites.split(",") if s]
    pattern = re.compile(args.filter) if args.filter else None
    tests = discover(args.data_dir, suites, pattern)
    if not tests:
        fatal("no tests selected")
    for t in tests:
        t.ops = model_ops(os.path.join(t.folder, "model.onnx"))
        t.mode = primary
        for m in extras:
            t.twins[m.name] = twin(t, m)
    jobs = tests + [tw for t in tests for tw in t.twins.values()]

    start = time.monotonic()
    modes = [primary.name] + [m.name for m in extras]
    print(f"Running {len(tests)} conformance tests in {len(modes)} mode(s) "
          f"({', '.join(modes)}) with {args.jobs} jobs...", flush=True)
    run_all(jobs, orchid, args)
    elapsed = time.monotonic() - start

    print_summary(tests, suites, label=f"{primary.name:12s} ")
    for m in extras:
        print_summary([t.twins[m.name] for t in tests], suites, label=f"{m.name:12s} ")
    print(f"Wall time: {elapsed:.1f} s")
    slowest = sorted(jobs, key=lambda t: -t.seconds)[:5]
    print("Slowest: " + ", ".join(f"{t.label} {t.seconds:.1f}s" for t in slowest))

    crashes = sorted((t for t in jobs if is_crash(t)), key=lambda t: t.label)
    if crashes:
        print(f"\n{len(crashes)} CRASHES / TIMEOUTS (bugs):")
        for t in crashes:
            print(f"  {t.label}: {t.reason}")

    report = args.report
    if report is None and not args.filter and not args.no_report and primary.name == PRIMARY_MODE:
        report = DEFAULT_REPORT
    if report and not args.no_report:
        write_report(report, tests, suites)
        print(f"Wrote {report}")

    # Failures as (mode, test) pairs: a listed test that crashes counts once.
    passing, failures = gate(tests, primary, args.expected, primary.name in update, suites, pattern)
    failed = {(primary.name, key) for key in failures}
    for m in extras:
        m_passing, m_failures = gate([t.twins[m.name] for t in tests], m, expected_paths[m.name],
                                     m.name in update, suites, pattern)
        print(f"{m.name}: {len(m_passing)} passed, {len(m_failures) if args.check_expected else 0} failed")
        failed |= {(m.name, key) for key in m_failures}
    # A crash, hang or internal error is a bug wherever it happens, listed or not.
    failed |= {(t.mode.name, t.key) for t in crashes}
    if not args.check_expected:
        failed = set()
    print(f"{len(passing)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
