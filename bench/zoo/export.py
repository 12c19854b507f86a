#!/usr/bin/env python3
"""Exports the zoo's models to ONNX, on demand, with test data from ONNX Runtime.

    bench/zoo/export.py OUT_DIR [--only a,b,...] [--force] [--no-test-data]
    bench/zoo/export.py --list [--json]

Writes OUT_DIR/<name>/model.onnx (seeded random weights, eval mode, opset 17,
static shapes: batch 1) and OUT_DIR/<name>/test_data_set_0 (seeded random
inputs and ONNX Runtime's outputs, written by tests/models/make_test_data.py:
the oracle that `orchid check` and bench/run compare with). A model whose
files exist is skipped unless --force. Needs torch and torchvision (Debian's
python3-torch, seen by the repo's .venv): run with .venv/bin/python.
"""
import argparse
import json
import os
import subprocess
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))

import zoo  # noqa: E402

OPSET = 17
SEED = 0


def randomize_batchnorm(module):
    # Fresh BatchNorm layers are identities (mean 0, var 1, weight 1, bias 0):
    # give them random statistics so the exported graph computes something.
    import torch
    from torch import nn
    for m in module.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            with torch.no_grad():
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)


def example_inputs(shapes, dtypes):
    import torch
    inputs = []
    for shape, dtype in zip(shapes, dtypes):
        if dtype.is_floating_point:
            inputs.append(torch.randn(*shape, dtype=dtype))
        else:
            inputs.append(torch.randint(0, 10, shape, dtype=dtype))
    return inputs


def export_onnx(entry, path):
    import torch
    torch.manual_seed(SEED)
    built = entry.build()
    module, shapes = built[0], built[1]
    dtypes = built[2] if len(built) > 2 else [torch.float32] * len(shapes)
    randomize_batchnorm(module)
    module.eval()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    # TrainingMode.PRESERVE keeps BatchNormalization nodes (the default would
    # fold them into the Conv): the optimizer should see the model as written.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="It is recommended that constant folding")
        torch.onnx.export(module, tuple(example_inputs(shapes, dtypes)), tmp, opset_version=OPSET,
                          input_names=entry.input_names, training=torch.onnx.TrainingMode.PRESERVE,
                          do_constant_folding=True)
    import onnx
    onnx.checker.check_model(tmp)
    os.replace(tmp, path)  # atomic: a concurrent run never sees half a file
    print(f"{path}: exported ({entry.name}: {entry.description}; opset {OPSET})", flush=True)


def write_test_data(path, folder):
    subprocess.run([sys.executable, os.path.join(ROOT, "tests", "models", "make_test_data.py"), path, folder,
                    "--seed", str(SEED)], check=True)


def export(name, out_dir, force=False, test_data=True):
    """Exports one model (and its test data); returns the model's path."""
    entry = zoo.load_all()[name]
    folder = os.path.join(out_dir, name)
    path = os.path.join(folder, "model.onnx")
    if force or not os.path.exists(path):
        export_onnx(entry, path)
        force = True
    if test_data and (force or not os.path.exists(os.path.join(folder, "test_data_set_0", "input_0.pb"))):
        write_test_data(path, folder)
    return path


def main():
    models = zoo.load_all()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", nargs="?")
    parser.add_argument("--only", help="comma-separated model names (default: all)")
    parser.add_argument("--force", action="store_true", help="re-export even when the files exist")
    parser.add_argument("--no-test-data", action="store_true", help="do not write test_data_set_0")
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    parser.add_argument("--json", action="store_true", help="with --list: as JSON")
    args = parser.parse_args()
    if args.list:
        rows = [{"name": m.name, "source": m.source, "description": m.description, "quick": m.quick}
                for m in models.values()]
        if args.json:
            print(json.dumps(rows, indent=1))
        else:
            for r in rows:
                print(f"{r['name']:<16} {r['source']:<7} {'quick ' if r['quick'] else '      '}{r['description']}")
        return 0
    if not args.out_dir:
        parser.error("OUT_DIR is required (or --list)")
    names = args.only.split(",") if args.only else list(models)
    unknown = [n for n in names if n not in models]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(models)}")
    for name in names:
        export(name, args.out_dir, args.force, not args.no_test_data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
