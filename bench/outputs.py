"""Test data and output comparison shared by bench/run and bench/peer_bench.py.

A model's test data is ONNX's layout (written by bench/zoo/export.py through
tests/models/make_test_data.py): DIR/test_data_set_0/input_<k>.pb and
output_<k>.pb, the outputs ONNX Runtime computed for those inputs.
"""
import glob
import os

import numpy as np
import onnx
from onnx import numpy_helper

# An engine's outputs agree with the oracle's when the largest absolute
# difference is at most this fraction of the largest |expected| value of that
# output: scale-free, so it means the same for logits and for images, and far
# above float32 summation-order noise (1e-6..1e-5) while a wrong element is
# off by the order of the values themselves.
MAX_NORMALIZED_ERROR = 1e-3


def read_tensor(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return tensor.name, numpy_helper.to_array(tensor)


def numbered(folder, prefix):
    files = glob.glob(os.path.join(folder, f"{prefix}_*.pb"))
    return sorted(files, key=lambda p: int(os.path.basename(p)[len(prefix) + 1:-3]))


def test_data(model_dir):
    """(inputs as [(name, path, array)], expected outputs as [array]) of test_data_set_0."""
    folder = os.path.join(model_dir, "test_data_set_0")
    inputs = [(read_tensor(p)[0], p, read_tensor(p)[1]) for p in numbered(folder, "input")]
    expected = [read_tensor(p)[1] for p in numbered(folder, "output")]
    if not inputs or not expected:
        raise FileNotFoundError(f"{folder}: no input_*.pb / output_*.pb test data")
    return inputs, expected


def compare(actual, expected):
    """{"max_abs_error", "max_error" (normalized, worst output), "ok"} of two output lists."""
    if len(actual) != len(expected):
        return {"max_abs_error": float("inf"), "max_error": float("inf"), "ok": False,
                "why": f"{len(actual)} outputs, expected {len(expected)}"}
    max_abs, max_norm = 0.0, 0.0
    for k, (a, e) in enumerate(zip(actual, expected)):
        a, e = np.asarray(a), np.asarray(e)
        if a.shape != e.shape:
            return {"max_abs_error": float("inf"), "max_error": float("inf"), "ok": False,
                    "why": f"output {k} has shape {a.shape}, expected {e.shape}"}
        if e.size == 0:
            continue
        diff = float(np.max(np.abs(a.astype(np.float64) - e.astype(np.float64))))
        if not np.isfinite(diff):
            diff = float("inf")
        scale = max(float(np.max(np.abs(e.astype(np.float64)))), 1e-30)
        max_abs, max_norm = max(max_abs, diff), max(max_norm, diff / scale)
    return {"max_abs_error": max_abs, "max_error": max_norm, "ok": max_norm <= MAX_NORMALIZED_ERROR}
