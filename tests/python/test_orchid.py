"""The Python package (python/orchid): compile, run, save/load, report, the
onnxruntime-style session, errors, progress and concurrent runs. Run by
scripts/test with PYTHONPATH pointing at the build tree's package."""

import os
import threading

import numpy as np
import onnx
import onnxruntime
import pytest

import orchid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY_CNN = os.path.join(ROOT, "examples", "tiny_cnn", "model.onnx")


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def model(cache_dir):
    return orchid.compile(TINY_CNN, threads=2, cache_dir=cache_dir, progress=False)


def random_input(seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)


def ort_outputs(x):
    session = onnxruntime.InferenceSession(TINY_CNN, providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: x})


def test_compiled_model_matches_onnx_runtime(model):
    x = random_input(1)
    name = model.inputs[0].name
    outputs = model.run({name: x})
    expected = ort_outputs(x)
    assert len(outputs) == len(expected) == 1
    assert outputs[0].dtype == np.float32 and outputs[0].shape == expected[0].shape
    np.testing.assert_allclose(outputs[0], expected[0], rtol=1e-4, atol=1e-5)
    assert model.outputs[0].shape == (1, 10)
    assert model.summary["kernels"] > 0


def test_compiles_an_onnx_model_proto(cache_dir):
    proto = onnx.load(TINY_CNN)
    from_proto = orchid.compile(proto, threads=1, cache_dir=cache_dir, progress=False)
    x = random_input(2)
    np.testing.assert_allclose(from_proto.run({from_proto.inputs[0].name: x})[0], ort_outputs(x)[0],
                               rtol=1e-4, atol=1e-5)


def test_one_line_switch_from_onnxruntime(cache_dir):
    """The same script body with onnxruntime.InferenceSession or orchid.InferenceSession."""
    def script(session):
        name = session.get_inputs()[0].name
        return session.run(None, {name: random_input(3)})[0]

    ort = script(onnxruntime.InferenceSession(TINY_CNN, providers=["CPUExecutionProvider"]))
    ours = script(orchid.InferenceSession(TINY_CNN, providers=["CPUExecutionProvider"], cache_dir=cache_dir))
    np.testing.assert_allclose(ours, ort, rtol=1e-4, atol=1e-5)
    session = orchid.InferenceSession(TINY_CNN, cache_dir=cache_dir)
    assert session.get_inputs()[0].type == "tensor(float)"
    assert session.get_inputs()[0].shape == [1, 3, 32, 32]
    out_name = session.get_outputs()[0].name
    assert len(session.run([out_name], {session.get_inputs()[0].name: random_input(3)})) == 1


def test_save_and_load_give_the_same_outputs(model, tmp_path):
    model.save(tmp_path / "tiny.orchid")
    loaded = orchid.load(tmp_path / "tiny.orchid", threads=2)
    x = random_input(4)
    name = model.inputs[0].name
    np.testing.assert_array_equal(loaded.run({name: x})[0], model.run({name: x})[0])
    session = orchid.InferenceSession(str(tmp_path / "tiny.orchid"))  # a saved folder works too
    np.testing.assert_array_equal(session.run(None, {name: x})[0], model.run({name: x})[0])


def test_derivation_is_on_by_default_within_its_budget(tmp_path):
    """derive=True by default; derive_budget=0 derives nothing (every kind left to a larger budget);
    derive=False records no derivation. Outputs match ONNX Runtime either way."""
    import json
    x = random_input(5)
    records = {}
    for label, kwargs in [("default", {}), ("no budget", {"derive_budget": 0}), ("off", {"derive": False})]:
        compiled = orchid.compile(TINY_CNN, threads=1, cache_dir=str(tmp_path / ("cache " + label)),
                                  progress=False, profile=False, **kwargs)  # own caches: decisions are kept
        np.testing.assert_allclose(compiled.run({compiled.inputs[0].name: x})[0], ort_outputs(x)[0],
                                   rtol=1e-4, atol=1e-5)
        compiled.save(tmp_path / label)
        with open(tmp_path / label / "plan.json") as f:
            records[label] = json.load(f).get("derivation")
    assert records["default"] and records["default"]["records"], records["default"]
    kinds = len(records["default"]["records"])
    assert records["no budget"]["over_budget"] == kinds, records["no budget"]
    assert not records["off"], records["off"]


def test_non_contiguous_and_keyword_feeds(model):
    x = random_input(5)
    strided = np.asfortranarray(x)
    name = model.inputs[0].name
    np.testing.assert_array_equal(model.run({name: strided})[0], model.run(**{name: x})[0])


def test_errors_are_orchid_errors_with_the_cli_messages(model):
    with pytest.raises(orchid.Error, match="no/such/model.onnx"):
        orchid.compile("/no/such/model.onnx", progress=False)
    with pytest.raises(orchid.Error, match="no/such/folder"):
        orchid.load("/no/such/folder")
    name = model.inputs[0].name
    with pytest.raises(orchid.Error, match=name):
        model.run({name: random_input().astype(np.float64)})
    with pytest.raises(orchid.Error, match="'nope'"):
        model.run({"nope": random_input()})
    with pytest.raises(orchid.Error, match=name):
        model.run({})
    with pytest.raises(TypeError):
        orchid.compile(42)


def test_progress_reports_the_compile_stages(tmp_path):
    stages = []
    orchid.compile(TINY_CNN, threads=1, cache_dir=str(tmp_path / "fresh"),
                   progress=lambda stage, done, total, eta: stages.append(stage))
    assert "profiling" in stages or "candidates" in stages, stages


def test_threads_run_one_model_at_once(model):
    """8 Python threads x 100 runs: the GIL is released and every output is the run alone's."""
    name = model.inputs[0].name
    inputs = [random_input(100 + t) for t in range(8)]
    alone = [model.run({name: x})[0] for x in inputs]
    mismatches = [0] * 8

    def worker(t):
        for _ in range(100):
            mismatches[t] += not np.array_equal(model.run({name: inputs[t]})[0], alone[t])

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert mismatches == [0] * 8
    assert 1 <= model._native.instances <= 8


def test_report_writes_a_self_contained_page(model, tmp_path):
    path = tmp_path / "report.html"
    model.report(path, runs=3)
    page = path.read_text()
    assert "<svg" in page and "</html>" in page
    assert "http://" not in page.replace("http://www.w3.org", "")  # nothing fetched from the network
