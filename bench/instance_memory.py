"""Memory of a model's instance pool (docs/results.md, issue 16): resident
memory after compiling, after the first run (the first instance), and after
8 threads x 20 concurrent runs (8 instances).

    PYTHONPATH=build/python .venv/bin/python bench/instance_memory.py MODEL.onnx
"""

import sys
import threading

import numpy as np

import orchid


def rss_mb():
    with open("/proc/self/status") as status:
        return int(next(line for line in status if line.startswith("VmRSS")).split()[1]) / 1024


def main(path):
    model = orchid.compile(path, threads=1, progress=False)
    compiled = rss_mb()
    feeds = {i.name: np.zeros(i.shape, i.dtype) for i in model.inputs}
    model.run(feeds)
    first = rss_mb()
    threads = [threading.Thread(target=lambda: [model.run(feeds) for _ in range(20)]) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    pooled = rss_mb()
    n = model._native.instances
    print(f"{path}: after compile {compiled:.0f} MB, first instance +{first - compiled:.0f} MB, "
          f"{n} instances {pooled:.0f} MB (+{(pooled - first) / max(1, n - 1):.0f} MB each further)")


if __name__ == "__main__":
    main(sys.argv[1])
