"""Orchid's model zoo: the evaluation models of Korch and OLLIE, plus common ones.

Each model is a PyTorch module with seeded random weights, built by a function
registered with @model below and exported to ONNX on demand by
bench/zoo/export.py. One file per family (classic.py, style.py, detection.py,
...); importing the package imports them all, which fills MODELS.
"""
import dataclasses
import importlib
from typing import Callable, Dict, List, Tuple


@dataclasses.dataclass
class ZooModel:
    name: str
    source: str  # "Korch", "OLLIE" or "common": whose evaluation it comes from
    description: str  # one line: what it is and its input
    build: Callable  # () -> (torch.nn.Module, [input shape, ...]) or (module, [shape, ...], [dtype, ...])
    input_names: List[str]
    quick: bool  # part of bench/run --quick


MODELS: Dict[str, ZooModel] = {}

FAMILIES = ["classic", "style", "detection", "segmentation", "efficientvit", "gans", "super_resolution", "gcn",
            "csrnet", "attention", "unet", "recurrent"]


def model(name, source, description, input_names=("input",), quick=False):
    """Registers a builder: @model("resnet18", "OLLIE", "ResNet-18, 1x3x224x224")."""
    def register(build):
        if name in MODELS:
            raise ValueError(f"zoo model {name!r} registered twice")
        MODELS[name] = ZooModel(name, source, description, build, list(input_names), quick)
        return build
    return register


def load_all():
    for family in FAMILIES:
        try:
            importlib.import_module(f"{__name__}.{family}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{family}":
                raise
    return MODELS
