"""EfficientViT-B1 (Cai et al., "EfficientViT: multi-scale linear attention for high-resolution dense
prediction", MIT Han lab; in Korch's evaluation at 2048x2048).

Written from the paper and the reference implementation (mit-han-lab/efficientvit, B1: widths
16/32/64/128/256, depths 1/2/3/3/4, head dim 16): a conv stem with DSConv, MBConv stages, then
EfficientViT blocks pairing lightweight multi-scale ReLU linear attention with an MBConv, Hardswish
activations, and the B1 classification head.
"""
import torch
from torch import nn
import torch.nn.functional as F

from . import model


def conv_bn_act(in_ch, out_ch, kernel=1, stride=1, groups=1, bias=False, norm=True, act=True):
    """Conv (same padding), optional BatchNorm, optional Hardswish."""
    layers = [nn.Conv2d(in_ch, out_ch, kernel, stride, kernel // 2, groups=groups, bias=bias)]
    if norm:
        layers.append(nn.BatchNorm2d(out_ch))
    if act:
        layers.append(nn.Hardswish())
    return nn.Sequential(*layers)


class DSConv(nn.Module):
    """Depthwise-separable conv: 3x3 depthwise Conv + BN + Hardswish, 1x1 Conv + BN (residual added by the caller)."""

    def __init__(self, in_ch, out_ch, stride=1):
        super().__init__()
        self.depth_conv = conv_bn_act(in_ch, in_ch, 3, stride, groups=in_ch)
        self.point_conv = conv_bn_act(in_ch, out_ch, 1, act=False)

    def forward(self, x):
        return self.point_conv(self.depth_conv(x))


class MBConv(nn.Module):
    """Inverted residual (MobileNetV2-style): 1x1 expand + Hardswish, 3x3 depthwise (stride) + Hardswish,
    1x1 project + BN. With fewer_norm (stages 3-4) the first two convs have a bias and no BatchNorm."""

    def __init__(self, in_ch, out_ch, stride=1, expand=4, fewer_norm=False):
        super().__init__()
        mid = in_ch * expand
        self.inverted_conv = conv_bn_act(in_ch, mid, 1, bias=fewer_norm, norm=not fewer_norm)
        self.depth_conv = conv_bn_act(mid, mid, 3, stride, groups=mid, bias=fewer_norm, norm=not fewer_norm)
        self.point_conv = conv_bn_act(mid, out_ch, 1, act=False)

    def forward(self, x):
        return self.point_conv(self.depth_conv(self.inverted_conv(x)))


class Residual(nn.Module):
    """x + f(x)."""

    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, x):
        return x + self.f(x)


class LiteMLA(nn.Module):
    """Lightweight multi-scale linear attention. A 1x1 Conv makes q, k, v; a multi-scale branch
    aggregates nearby tokens (5x5 depthwise Conv, then grouped 1x1 Conv, groups = 3 x heads) and is
    concatenated as extra heads. Per head, with the ReLU kernel: out = (V' K^T) Q, where V' is V padded
    with a row of ones so the last row of the product is the normalizer; out = rows / (last row + eps).
    Cost is linear in the number of tokens. A 1x1 Conv + BN projects the heads back."""

    def __init__(self, in_ch, out_ch, head_dim=16, scales=(5,), eps=1e-15):
        super().__init__()
        heads = in_ch // head_dim
        total = heads * head_dim
        self.dim = head_dim
        self.eps = eps
        self.qkv = nn.Conv2d(in_ch, 3 * total, 1, bias=False)
        self.aggreg = nn.ModuleList([
            nn.Sequential(nn.Conv2d(3 * total, 3 * total, s, padding=s // 2, groups=3 * total, bias=False),
                          nn.Conv2d(3 * total, 3 * total, 1, groups=3 * heads, bias=False))
            for s in scales])
        self.proj = conv_bn_act(total * (1 + len(scales)), out_ch, 1, act=False)

    def forward(self, x):
        b, _, h, w = x.shape
        qkv = self.qkv(x)
        qkv = torch.cat([qkv] + [op(qkv) for op in self.aggreg], dim=1)
        qkv = qkv.reshape(b, -1, 3 * self.dim, h * w)  # (B, heads', 3d, N)
        q = F.relu(qkv[:, :, 0:self.dim])
        k = F.relu(qkv[:, :, self.dim:2 * self.dim])
        v = qkv[:, :, 2 * self.dim:]
        v = F.pad(v, (0, 0, 0, 1), mode="constant", value=1.0)  # (B, heads', d+1, N)
        vk = torch.matmul(v, k.transpose(-1, -2))  # (B, heads', d+1, d)
        out = torch.matmul(vk, q)  # (B, heads', d+1, N)
        out = out[:, :, :-1] / (out[:, :, -1:] + self.eps)
        return self.proj(out.reshape(b, -1, h, w))


class EfficientViTBlock(nn.Module):
    """Context module (LiteMLA, residual) then local module (MBConv, expand 4, fewer_norm, residual)."""

    def __init__(self, ch, head_dim=16, expand=4):
        super().__init__()
        self.context = Residual(LiteMLA(ch, ch, head_dim))
        self.local = Residual(MBConv(ch, ch, 1, expand, fewer_norm=True))

    def forward(self, x):
        return self.local(self.context(x))


class EfficientViTB1(nn.Module):
    """EfficientViT-B1 backbone (stem: 3x3/2 Conv + DSConv; stages 1-2: MBConv; stages 3-4: MBConv
    downsample then EfficientViT blocks) and classification head (1x1 Conv 1536, global average pool,
    Linear 1600 + LayerNorm + Hardswish, Linear to the classes)."""

    def __init__(self, widths=(16, 32, 64, 128, 256), depths=(1, 2, 3, 3, 4), head_dim=16, classes=1000):
        super().__init__()
        layers = [conv_bn_act(3, widths[0], 3, 2)]
        layers += [Residual(DSConv(widths[0], widths[0])) for _ in range(depths[0])]
        ch = widths[0]
        for w, d in zip(widths[1:3], depths[1:3]):
            for i in range(d):
                if i == 0:
                    layers.append(MBConv(ch, w, 2, 4))
                else:
                    layers.append(Residual(MBConv(w, w, 1, 4)))
                ch = w
        for w, d in zip(widths[3:], depths[3:]):
            layers.append(MBConv(ch, w, 2, 4, fewer_norm=True))
            ch = w
            layers += [EfficientViTBlock(w, head_dim) for _ in range(d)]
        self.backbone = nn.Sequential(*layers)
        self.head_conv = conv_bn_act(ch, 1536, 1)
        self.head_fc = nn.Sequential(nn.Linear(1536, 1600, bias=False), nn.LayerNorm(1600), nn.Hardswish())
        self.classifier = nn.Linear(1600, classes)

    def forward(self, x):
        x = self.head_conv(self.backbone(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.classifier(self.head_fc(x))


@model("efficientvit", "Korch", "EfficientViT-B1 (multi-scale ReLU linear attention, classification head), "
       "image 1x3x512x512 (Korch used 2048x2048)")
def efficientvit():
    return EfficientViTB1(), [(1, 3, 512, 512)]
