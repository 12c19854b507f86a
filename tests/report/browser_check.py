#!/usr/bin/env python3
"""Checks an Orchid report page in a real browser (Debian's chromium, headless).

    python browser_check.py REPORT.html SCREENSHOT.png

Loads the page with the network cut off, lets its script run, and fails
(exit status 1, saying why) unless the DOM after the script has
data-rendered="ok" on <body>, no data-errors, and an inline <svg> with graph
nodes, and unless chromium logged no console errors (uncaught exceptions,
failed loads). Then it takes a 1400x1000 screenshot of the page and keeps it
at SCREENSHOT.png.
"""

import argparse
import html.parser
import os
import re
import subprocess
import sys
import tempfile

# Every host name resolves to nothing: a page that fetches anything logs a
# failed load instead of quietly reaching the network.
COMMON_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND",
]
# A console line whose message says something went wrong.
CONSOLE_LINE = re.compile(r":CONSOLE[:(]")
CONSOLE_ERROR = re.compile(r":(ERROR|FATAL):CONSOLE|Uncaught|Error|error|Failed|Refused|net::ERR_")


class PageFacts(html.parser.HTMLParser):
    """What the check needs from the dumped DOM."""

    def __init__(self):
        super().__init__()
        self.body_attrs = None
        self.svg_depth = 0
        self.svgs = 0
        self.svg_nodes = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "body" and self.body_attrs is None:
            self.body_attrs = attrs
        elif tag == "svg":
            self.svgs += 1
            self.svg_depth += 1
        elif tag == "g" and self.svg_depth and "node" in (attrs.get("class") or "").split():
            self.svg_nodes += 1

    def handle_endtag(self, tag):
        if tag == "svg" and self.svg_depth:
            self.svg_depth -= 1


def run_chromium(chromium, page_url, extra, timeout):
    with tempfile.TemporaryDirectory(prefix="orchid-browser-check-") as profile:
        command = [chromium, *COMMON_FLAGS, f"--user-data-dir={profile}", *extra, page_url]
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except FileNotFoundError:
            sys.exit(f"FAIL: {chromium} not found: install Debian's chromium (apt-get install chromium)")
        except subprocess.TimeoutExpired:
            sys.exit(f"FAIL: chromium did not finish within {timeout} s on {page_url}")


def dom_problems(dom):
    facts = PageFacts()
    facts.feed(dom)
    problems = []
    body = facts.body_attrs or {}
    if facts.body_attrs is None:
        problems.append("the dumped DOM has no <body>")
    if "data-errors" in body:
        problems.append(f"the page's script recorded errors (data-errors): {body['data-errors']}")
    if body.get("data-rendered") != "ok":
        problems.append(f"<body> has data-rendered={body.get('data-rendered')!r}, not 'ok': the script did not finish")
    if facts.svgs == 0:
        problems.append("no inline <svg> (the plan graph) in the page")
    elif facts.svg_nodes == 0:
        problems.append("the <svg> has no graph nodes (<g class=\"node\">)")
    return problems


def console_errors(stderr):
    return [line for line in stderr.splitlines() if CONSOLE_LINE.search(line) and CONSOLE_ERROR.search(line)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", help="the report page (HTML)")
    parser.add_argument("screenshot", help="where to write the screenshot (PNG)")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    parser.add_argument("--timeout", type=float, default=120, help="seconds per chromium run")
    args = parser.parse_args()
    if not os.path.isfile(args.report):
        sys.exit(f"FAIL: {args.report}: no such file")
    url = "file://" + os.path.abspath(args.report)

    dumped = run_chromium(args.chromium, url,
                          ["--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000", "--dump-dom"],
                          args.timeout)
    if dumped.returncode != 0:
        sys.exit(f"FAIL: chromium --dump-dom exited with {dumped.returncode}:\n{dumped.stderr[-4000:]}")
    problems = dom_problems(dumped.stdout)
    problems += [f"console error: {line}" for line in console_errors(dumped.stderr)]

    screenshot = os.path.abspath(args.screenshot)
    shot = run_chromium(args.chromium, url,
                        ["--virtual-time-budget=10000", "--window-size=1400,1000", f"--screenshot={screenshot}"],
                        args.timeout)
    if shot.returncode != 0 or not os.path.isfile(screenshot) or os.path.getsize(screenshot) == 0:
        problems.append(f"no screenshot written to {screenshot} (chromium exited with {shot.returncode})")

    if problems:
        print(f"FAIL: {args.report}:", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print(f"ok: {args.report} rendered in chromium; screenshot {screenshot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
