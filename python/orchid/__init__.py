"""Orchid: a tensor program optimizer for ONNX models.

    import orchid
    model = orchid.compile("model.onnx", threads=2)      # or an onnx.ModelProto
    outputs = model.run({"input": x})                     # numpy in, numpy out
    model.save("model.orchid"); model = orchid.load("model.orchid")
    model.report("report.html")                           # the plan, as one HTML page

Code written for ONNX Runtime switches with one line:

    session = orchid.InferenceSession("model.onnx")   # was onnxruntime.InferenceSession(...)
    outputs = session.run(None, {"input": x})

Errors in the model or the inputs raise orchid.Error (with the CLI's
messages); a bug in Orchid raises orchid.InternalError. Any number of Python
threads may call run() on one model at once (the GIL is released).
"""

import os
import sys
import time
from collections import namedtuple

import numpy as np

from . import _orchid
from ._orchid import Error, InternalError

__all__ = ["compile", "load", "Model", "InferenceSession", "Error", "InternalError", "TensorInfo"]

TensorInfo = namedtuple("TensorInfo", ["name", "dtype", "shape"])


class _ProgressBar:
    """One line on stderr, rewritten in place: 'profiling [#####.....] 12/40, about 8 s left'."""

    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self.shown = False

    def __call__(self, stage, done, total, eta_seconds):
        line = f"orchid: {stage}"
        if total > 0:
            filled = int(20 * done / total)
            line += f" [{'#' * filled}{'.' * (20 - filled)}] {done}/{total}"
        if eta_seconds >= 0:
            line += f", about {eta_seconds:.0f} s left"
        self.stream.write("\r\033[K" + line)
        self.stream.flush()
        self.shown = True

    def close(self):
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _progress_callback(progress):
    if progress is True:
        return _ProgressBar() if sys.stderr is not None and sys.stderr.isatty() else None
    if progress in (False, None):
        return None
    if callable(progress):
        return progress
    raise TypeError("progress: expected True, False or a callable(stage, done, total, eta_seconds)")


class Model:
    """A compiled model: run(feeds) -> outputs, save(dir), report(path)."""

    def __init__(self, native):
        self._native = native

    @property
    def inputs(self):
        return [TensorInfo(i["name"], np.dtype(_numpy_dtype(i["dtype"])), tuple(i["shape"])) for i in self._native.inputs]

    @property
    def outputs(self):
        return [TensorInfo(o["name"], np.dtype(_numpy_dtype(o["dtype"])), tuple(o["shape"])) for o in self._native.outputs]

    @property
    def threads(self):
        return self._native.threads

    @threads.setter
    def threads(self, n):
        self._native.threads = n

    @property
    def summary(self):
        """What compiling found and chose: kernels, primitives, the BLP's record as text."""
        return self._native.summary

    def run(self, feeds=None, **named):
        """Runs on a dict {input name: array} (or keyword arguments); returns the outputs in order."""
        feeds = dict(feeds or {}, **named)
        arrays = {name: np.ascontiguousarray(value) for name, value in feeds.items()}
        return self._native.run(arrays)

    def save(self, path):
        """Writes the compiled model to a folder that orchid.load (and `orchid run`) reads."""
        self._native.save(os.fspath(path))

    def report(self, path, runs=20, compare_no_fusion=True):
        """Times the model and writes a self-contained HTML page of its plan."""
        self._native.report(os.fspath(path), runs, compare_no_fusion)

    def __repr__(self):
        names = ", ".join(i.name for i in self.inputs)
        return f"<orchid.Model inputs=[{names}] kernels={self.summary['kernels']} threads={self.threads}>"


_NUMPY_DTYPES = {"float32": "float32", "float64": "float64", "float16": "float16", "int8": "int8", "int16": "int16",
                 "int32": "int32", "int64": "int64", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32",
                 "uint64": "uint64", "bool": "bool", "bfloat16": "uint16"}


def _numpy_dtype(name):
    return _NUMPY_DTYPES.get(name, name)


def compile(model, threads=0, derive=True, fusion=True, profile=True, cache_dir=None, input_shapes=None,
            progress=True, max_instances=0, derive_budget=20.0):
    """Compiles an ONNX model: a file path, serialized bytes, or an onnx.ModelProto.

    threads: what the kernels are timed and run with (0: all cores); derive: OLLIE's derivation,
    chosen by the plan with fusion (derive_budget: its seconds per compile, the operators
    furthest above their roofline bound first; decisions kept in the cache are free); fusion=False: one kernel per primitive, no derivation; profile=False: no timing, the cost model decides;
    input_shapes: {name: shape} for symbolic dimensions; progress: a bar on stderr when it is a
    terminal (True), none (False), or a callable(stage, done, total, eta_seconds).
    """
    callback = _progress_callback(progress)
    args = dict(threads=threads, fusion=fusion, profile=profile, derive=derive, derive_budget=float(derive_budget),
                cache_dir=cache_dir or "",
                input_shapes={k: list(v) for k, v in (input_shapes or {}).items()}, progress=callback,
                max_instances=max_instances)
    try:
        if isinstance(model, (str, os.PathLike)):
            return Model(_orchid.compile(os.fspath(model), **args))
        if isinstance(model, (bytes, bytearray)):
            return Model(_orchid.compile_bytes(bytes(model), "<model bytes>", **args))
        if hasattr(model, "SerializeToString"):
            name = getattr(getattr(model, "graph", None), "name", "") or "<onnx.ModelProto>"
            return Model(_orchid.compile_bytes(model.SerializeToString(), name, **args))
        raise TypeError(f"orchid.compile: expected a path, bytes or an onnx.ModelProto, not {type(model).__name__}")
    finally:
        if isinstance(callback, _ProgressBar):
            callback.close()


def load(path, threads=0, max_instances=0):
    """Loads a folder written by Model.save or `orchid compile`."""
    return Model(_orchid.load(os.fspath(path), threads, max_instances))


_ORT_TYPES = {"float32": "tensor(float)", "float64": "tensor(double)", "float16": "tensor(float16)",
              "int8": "tensor(int8)", "int16": "tensor(int16)", "int32": "tensor(int32)", "int64": "tensor(int64)",
              "uint8": "tensor(uint8)", "uint16": "tensor(uint16)", "uint32": "tensor(uint32)",
              "uint64": "tensor(uint64)", "bool": "tensor(bool)", "bfloat16": "tensor(bfloat16)"}

NodeArg = namedtuple("NodeArg", ["name", "shape", "type"])


class InferenceSession:
    """onnxruntime.InferenceSession's interface on an Orchid model: replace
    `onnxruntime.InferenceSession(path, ...)` with `orchid.InferenceSession(path, ...)`.

    path_or_bytes: an ONNX file, its bytes, or a folder written by Model.save. sess_options and
    providers are accepted and ignored (Orchid runs on the CPU); keyword arguments go to
    orchid.compile (threads, derive, ...). sess_options.intra_op_num_threads, when set, is the
    thread count.
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **compile_args):
        threads = compile_args.pop("threads", 0)
        threads = getattr(sess_options, "intra_op_num_threads", 0) or threads
        source = path_or_bytes
        if isinstance(source, (str, os.PathLike)) and os.path.isdir(source):
            self._model = load(source, threads=threads)
        else:
            self._model = compile(source, threads=threads, **compile_args)

    @property
    def model(self):
        return self._model

    def get_inputs(self):
        return [NodeArg(i.name, list(i.shape), _ORT_TYPES.get(str(i.dtype), str(i.dtype))) for i in self._model.inputs]

    def get_outputs(self):
        return [NodeArg(o.name, list(o.shape), _ORT_TYPES.get(str(o.dtype), str(o.dtype)))
                for o in self._model.outputs]

    def get_providers(self):
        return ["OrchidCPU"]

    def run(self, output_names, input_feed, run_options=None):
        outputs = self._model.run(input_feed)
        if not output_names:
            return outputs
        index = {o.name: k for k, o in enumerate(self._model.outputs)}
        missing = [n for n in output_names if n not in index]
        if missing:
            raise Error(f"the model has no output named {missing[0]!r} (its outputs: {', '.join(index)})")
        return [outputs[index[n]] for n in output_names]
