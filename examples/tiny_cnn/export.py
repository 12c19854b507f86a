#!/usr/bin/env python3
"""Exports examples/tiny_cnn: a small CNN shipped with Orchid, with test data.

    .venv/bin/python examples/tiny_cnn/export.py

Writes model.onnx (seeded random weights, opset 17, input "input" 1x3x32x32,
output "logits" 1x10) next to this script, and test_data_set_0/ with a seeded
random input and ONNX Runtime's output for it (tests/models/make_test_data.py).
Then `build/orchid check examples/tiny_cnn/model.onnx --test-dir examples/tiny_cnn`
compares Orchid with ONNX Runtime. Rerunning reproduces the committed files.
"""
import os
import subprocess
import sys

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


class TinyCnn(nn.Module):
    def __init__(self, classes=10):
        super().__init__()

        def block(cin, cout):
            return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

        self.features = nn.Sequential(
            *block(3, 8), nn.MaxPool2d(2),    # 16x16
            *block(8, 16), nn.MaxPool2d(2),   # 8x8
            *block(16, 16),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.classifier = nn.Linear(16, classes)

    def forward(self, x):
        return self.classifier(self.features(x))


def main():
    torch.manual_seed(0)
    model = TinyCnn()
    for m in model.modules():  # fresh BatchNorms are identities: randomize them
        if isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    model.eval()
    path = os.path.join(HERE, "model.onnx")
    # PRESERVE keeps BatchNormalization nodes (EVAL would fold them into Conv).
    torch.onnx.export(model, torch.randn(1, 3, 32, 32), path, opset_version=17,
                      input_names=["input"], output_names=["logits"],
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=True)
    print(f"{path}: exported")
    subprocess.run([sys.executable, os.path.join(REPO, "tests", "models", "make_test_data.py"), path, HERE,
                    "--seed", "0"], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
