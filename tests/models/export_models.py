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

# Fresh BatchNorm layers are identities; the zoo's exporter gives them random
# statistics, and so do these tests.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "bench"))
from zoo.export import randomize_batchnorm  # noqa: E402

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


class ConvBnSiLU(nn.Module):
    """YOLOv5's Conv: Conv2d (no bias) + BatchNorm2d + SiLU."""

    def __init__(self, cin, cout, k=1, s=1, p=None):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, s, k // 2 if p is None else p, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    def __init__(self, c, shortcut=True):
        super().__init__()
        self.cv1 = ConvBnSiLU(c, c, 1)
        self.cv2 = ConvBnSiLU(c, c, 3)
        self.add = shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C3(nn.Module):
    """CSP bottleneck with three convs: two 1x1 branches, n bottlenecks on one,
    Concat, a 1x1 conv."""

    def __init__(self, cin, cout, n=1, shortcut=True):
        super().__init__()
        c = cout // 2
        self.cv1 = ConvBnSiLU(cin, c, 1)
        self.cv2 = ConvBnSiLU(cin, c, 1)
        self.m = nn.Sequential(*[Bottleneck(c, shortcut) for _ in range(n)])
        self.cv3 = ConvBnSiLU(2 * c, cout, 1)

    def forward(self, x):
        return self.cv3(torch.cat([self.m(self.cv1(x)), self.cv2(x)], 1))


class SPPF(nn.Module):
    """Spatial pyramid pooling, fast: MaxPool 5x5/1/2 three times, Concat."""

    def __init__(self, cin, cout):
        super().__init__()
        c = cin // 2
        self.cv1 = ConvBnSiLU(cin, c, 1)
        self.m = nn.MaxPool2d(5, 1, 2)
        self.cv2 = ConvBnSiLU(4 * c, cout, 1)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.m(x)
        y2 = self.m(y1)
        return self.cv2(torch.cat([x, y1, y2, self.m(y2)], 1))


class YoloDetector(nn.Module):
    """A YOLOv5n-like detector: CSP backbone, SPPF, FPN neck (nearest 2x
    Upsample + Concat), 1x1 detection heads at strides 8 and 16, 3 anchors,
    80 classes. Input (batch, 3, 256, 256); output (batch, 3840, 85): per anchor
    box the raw (x, y, w, h, objectness, 80 class) logits in YOLO's layout
    (3 * (32*32 + 16*16) boxes). YOLO's final sigmoid is left out: on these
    small random-weight logits it would squash every output to 0.5 +- 0.05 and
    hide errors from the comparison (SiLU exercises Sigmoid anyway)."""

    def __init__(self, classes=80, anchors=3):
        super().__init__()
        self.na, self.no = anchors, classes + 5
        self.stem = nn.Sequential(
            ConvBnSiLU(3, 16, 6, 2, 2),                    # 128x128
            ConvBnSiLU(16, 32, 3, 2), C3(32, 32, 1),       # 64x64
            ConvBnSiLU(32, 64, 3, 2), C3(64, 64, 2))       # 32x32: P3
        self.down4 = nn.Sequential(ConvBnSiLU(64, 128, 3, 2), C3(128, 128, 3))          # 16x16: P4
        self.down5 = nn.Sequential(ConvBnSiLU(128, 256, 3, 2), C3(256, 256, 1),
                                   SPPF(256, 256))                                       # 8x8: P5
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.lat5 = ConvBnSiLU(256, 128, 1)
        self.csp4 = C3(256, 128, 1, shortcut=False)
        self.lat4 = ConvBnSiLU(128, 64, 1)
        self.csp3 = C3(128, 64, 1, shortcut=False)
        self.heads = nn.ModuleList([nn.Conv2d(64, anchors * self.no, 1), nn.Conv2d(128, anchors * self.no, 1)])

    def forward(self, x):
        p3 = self.stem(x)
        p4 = self.down4(p3)
        p5 = self.down5(p4)
        n4 = self.csp4(torch.cat([self.up(self.lat5(p5)), p4], 1))
        n3 = self.csp3(torch.cat([self.up(self.lat4(n4)), p3], 1))
        outputs = []
        for head, feature in zip(self.heads, (n3, n4)):
            y = head(feature)
            b, _, h, w = y.shape
            y = y.view(b, self.na, self.no, h, w).permute(0, 1, 3, 4, 2).contiguous()
            outputs.append(y.view(b, -1, self.no))
        return torch.cat(outputs, 1)


def yolo_detector():
    return YoloDetector(), (1, 3, 256, 256)


class ReflectConv(nn.Sequential):
    """ReflectionPad2d(k // 2) + Conv2d, optionally after a nearest 2x Upsample."""

    def __init__(self, cin, cout, k, stride=1, upsample=False):
        layers = [nn.Upsample(scale_factor=2, mode="nearest")] if upsample else []
        super().__init__(*layers, nn.ReflectionPad2d(k // 2), nn.Conv2d(cin, cout, k, stride))


class ResidualBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.body = nn.Sequential(ReflectConv(c, c, 3), nn.InstanceNorm2d(c, affine=True), nn.ReLU(),
                                  ReflectConv(c, c, 3), nn.InstanceNorm2d(c, affine=True))

    def forward(self, x):
        return x + self.body(x)


class StyleTransfer(nn.Module):
    """Johnson et al.'s fast-neural-style transformer net (as in PyTorch's
    examples): reflection-padded convs, InstanceNorm (affine), ReLU, two
    stride-2 downsamplings, 5 residual blocks, two nearest 2x Upsample + conv
    upsamplings. Image (batch, 3, 224, 224) -> image (batch, 3, 224, 224)."""

    def __init__(self):
        super().__init__()

        def block(cin, cout, k, stride=1, upsample=False):
            return [ReflectConv(cin, cout, k, stride, upsample), nn.InstanceNorm2d(cout, affine=True), nn.ReLU()]

        self.net = nn.Sequential(
            *block(3, 32, 9), *block(32, 64, 3, 2), *block(64, 128, 3, 2),
            *[ResidualBlock(128) for _ in range(5)],
            *block(128, 64, 3, upsample=True), *block(64, 32, 3, upsample=True),
            ReflectConv(32, 3, 9))
        # Fresh affine InstanceNorm is scale 1 / shift 0: randomize it, like BatchNorm.
        for m in self.modules():
            if isinstance(m, nn.InstanceNorm2d):
                with torch.no_grad():
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.2, 0.2)

    def forward(self, x):
        return self.net(x)


def style_transfer():
    return StyleTransfer(), (1, 3, 224, 224)


MODELS = {
    "resnet18": resnet18,
    "transformer_encoder": transformer_encoder,
    "dcgan_generator": dcgan_generator,
    "mobilenet_v2": mobilenet_v2,
    "yolo_detector": yolo_detector,
    "style_transfer": style_transfer,
}


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
