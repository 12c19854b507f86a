#!/usr/bin/env python3
"""Exports the PyTorch models of Orchid's model tests to ONNX.

    export_models.py OUT_DIR [--only NAME] [--force]

Writes OUT_DIR/<name>/model.onnx for every model below (seeded random weights,
eval mode, opset 17). A model whose file exists is skipped unless --force.
Needs torch and torchvision (Debian's python3-torch, seen by the repo's .venv).

Every model has a dynamic batch axis named "batch", so that the importer has to
bind a symbolic dimension from the test inputs.
"""
import argparse
import os
import sys

import torch
from torch import nn

OPSET = 17
SEED = 0


def resnet18():
    import torchvision
    return torchvision.models.resnet18(weights=None), (1, 3, 224, 224)


def mobilenet_v2():
    import torchvision
    return torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)


class TransformerEncoder(nn.Module):
    """Two pre-norm encoder layers and one post-norm layer (LayerNorm both
    ways), GELU feed-forward, a final LayerNorm; input (batch, 16, 64)."""

    def __init__(self, d_model=64, heads=4, ff=128):
        super().__init__()

        def layers(norm_first, count):
            layer = nn.TransformerEncoderLayer(d_model, heads, ff, dropout=0.0, activation="gelu",
                                               batch_first=True, norm_first=norm_first)
            return nn.TransformerEncoder(layer, count, enable_nested_tensor=False)

        self.pre_norm = layers(True, 2)
        self.post_norm = layers(False, 1)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x):
        return self.norm(self.post_norm(self.pre_norm(x)))


def transformer_encoder():
    return TransformerEncoder(), (1, 16, 64)


class DcganGenerator(nn.Module):
    """DCGAN generator: latent (batch, 100, 1, 1) -> image (batch, 3, 64, 64)."""

    def __init__(self, latent=100, width=32):
        super().__init__()

        def up(cin, cout, stride, padding):
            return [nn.ConvTranspose2d(cin, cout, 4, stride, padding, bias=False), nn.BatchNorm2d(cout),
                    nn.ReLU(True)]

        self.net = nn.Sequential(
            *up(latent, width * 8, 1, 0),     # 4x4
            *up(width * 8, width * 4, 2, 1),  # 8x8
            *up(width * 4, width * 2, 2, 1),  # 16x16
            *up(width * 2, width, 2, 1),      # 32x32
            nn.ConvTranspose2d(width, 3, 4, 2, 1, bias=False),  # 64x64
            nn.Tanh())

    def forward(self, z):
        return self.net(z)


def dcgan_generator():
    return DcganGenerator(), (1, 100, 1, 1)


MODELS = {
    "resnet18": resnet18,
    "transformer_encoder": transformer_encoder,
    "dcgan_generator": dcgan_generator,
    "mobilenet_v2": mobilenet_v2,
}


def randomize_batchnorm(model):
    # Fresh BatchNorm layers have mean 0 / var 1 / weight 1 / bias 0, which
    # would make them identities and test nothing: give them random statistics.
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            with torch.no_grad():
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)


def export(name, out_dir, force=False):
    path = os.path.join(out_dir, name, "model.onnx")
    if os.path.exists(path) and not force:
        print(f"{path}: exists, skipped")
        return path
    torch.manual_seed(SEED)
    model, shape = MODELS[name]()
    randomize_batchnorm(model)
    model.eval()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    # Not under torch.no_grad(): with grad enabled, nn.TransformerEncoderLayer
    # skips its fused fast path (aten::_transformer_encoder_layer_fwd, which has
    # no ONNX export) and traces the plain LayerNorm/MatMul/Softmax ops.
    # TrainingMode.PRESERVE exports the eval-mode model as is; the default
    # (EVAL) would fold BatchNorm into the preceding Conv, and the model tests
    # should exercise BatchNormalization too.
    torch.onnx.export(model, torch.randn(*shape), tmp, opset_version=OPSET,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=True)
    os.replace(tmp, path)  # atomic: a concurrent run never sees half a file
    print(f"{path}: exported ({name}, input {'x'.join(map(str, shape))}, opset {OPSET})")
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("--only", choices=sorted(MODELS), help="export this model only")
    parser.add_argument("--force", action="store_true", help="re-export even when the file exists")
    args = parser.parse_args()
    for name in [args.only] if args.only else MODELS:
        export(name, args.out_dir, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
