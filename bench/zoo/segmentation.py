"""SegFormer-B0 (Xie et al., 2021; in Korch's evaluation): MiT-b0 encoder and all-MLP decoder.

Written from the paper and the reference implementation (NVlabs/SegFormer), with
the attention spelled out as MatMul / Softmax so the exported graph shows every
primitive: overlapping patch embeddings, efficient self-attention with spatial
reduction, Mix-FFN (3x3 depthwise conv between the two linears), LayerNorm.
"""
import torch
from torch import nn
import torch.nn.functional as F

from . import model


class OverlapPatchEmbed(nn.Module):
    """Overlapping patch embedding: a strided Conv (7x7/4 in stage 1, 3x3/2 after), then LayerNorm over channels.

    Returns tokens (B, H*W, C) and the new spatial size."""

    def __init__(self, in_ch, dim, kernel, stride):
        super().__init__()
        self.proj = nn.Conv2d(in_ch, dim, kernel, stride, kernel // 2)
        self.norm = nn.LayerNorm(dim, eps=1e-6)

    def forward(self, x):
        x = self.proj(x)
        _, _, h, w = x.shape
        x = x.flatten(2).transpose(1, 2)
        return self.norm(x), h, w


class EfficientSelfAttention(nn.Module):
    """SegFormer's efficient self-attention: queries at full resolution; keys and values from a
    sequence shrunk by a strided Conv (kernel = stride = sr ratio) and LayerNorm, cutting the
    attention cost by sr^2. Attention written out: MatMul, scale, Softmax, MatMul."""

    def __init__(self, dim, heads, sr):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = self.head_dim ** -0.5
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * dim)
        self.proj = nn.Linear(dim, dim)
        self.sr_ratio = sr
        if sr > 1:
            self.sr = nn.Conv2d(dim, dim, sr, sr)
            self.norm = nn.LayerNorm(dim, eps=1e-6)

    def forward(self, x, h, w):
        b, n, c = x.shape
        q = self.q(x).reshape(b, n, self.heads, self.head_dim).permute(0, 2, 1, 3)
        if self.sr_ratio > 1:
            y = x.transpose(1, 2).reshape(b, c, h, w)
            y = self.sr(y).reshape(b, c, -1).transpose(1, 2)
            y = self.norm(y)
        else:
            y = x
        kv = self.kv(y).reshape(b, -1, 2, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        k, v = kv[0], kv[1]
        attn = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, n, c)
        return self.proj(out)


class MixFFN(nn.Module):
    """Mix-FFN: Linear (x4), 3x3 depthwise Conv on the token grid (gives positional information), GELU, Linear."""

    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.dwconv = nn.Conv2d(hidden, hidden, 3, 1, 1, groups=hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x, h, w):
        x = self.fc1(x)
        b, n, c = x.shape
        x = self.dwconv(x.transpose(1, 2).reshape(b, c, h, w)).flatten(2).transpose(1, 2)
        return self.fc2(self.act(x))


class MiTBlock(nn.Module):
    """Mix Transformer block: pre-norm efficient self-attention and pre-norm Mix-FFN, each with a residual."""

    def __init__(self, dim, heads, sr, mlp_ratio=4):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = EfficientSelfAttention(dim, heads, sr)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = MixFFN(dim, dim * mlp_ratio)

    def forward(self, x, h, w):
        x = x + self.attn(self.norm1(x), h, w)
        return x + self.mlp(self.norm2(x), h, w)


class MiTStage(nn.Module):
    """One encoder stage: patch embedding, blocks, final LayerNorm; returns the feature map (B, C, H, W)."""

    def __init__(self, in_ch, dim, kernel, stride, depth, heads, sr):
        super().__init__()
        self.embed = OverlapPatchEmbed(in_ch, dim, kernel, stride)
        self.blocks = nn.ModuleList([MiTBlock(dim, heads, sr) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)

    def forward(self, x):
        x, h, w = self.embed(x)
        for blk in self.blocks:
            x = blk(x, h, w)
        x = self.norm(x)
        b, n, c = x.shape
        return x.transpose(1, 2).reshape(b, c, h, w)


class SegFormerHead(nn.Module):
    """All-MLP decoder: a Linear per stage to a common width, bilinear upsample to 1/4 resolution,
    concat, 1x1 Conv + BatchNorm + ReLU fuse, 1x1 Conv classifier."""

    def __init__(self, in_dims, embed_dim, classes):
        super().__init__()
        self.linears = nn.ModuleList([nn.Linear(d, embed_dim) for d in in_dims])
        self.fuse = nn.Sequential(nn.Conv2d(embed_dim * len(in_dims), embed_dim, 1, bias=False),
                                  nn.BatchNorm2d(embed_dim), nn.ReLU())
        self.classifier = nn.Conv2d(embed_dim, classes, 1)

    def forward(self, feats):
        size = feats[0].shape[2:]
        outs = []
        for f, lin in zip(feats, self.linears):
            b, c, h, w = f.shape
            y = lin(f.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, -1, h, w)
            if (h, w) != tuple(size):
                y = F.interpolate(y, size=size, mode="bilinear", align_corners=False)
            outs.append(y)
        y = self.fuse(torch.cat(outs[::-1], dim=1))
        return self.classifier(y)


class SegFormer(nn.Module):
    """SegFormer: the four-stage MiT encoder (strides 4/8/16/32) and the all-MLP decoder; output logits at 1/4."""

    def __init__(self, dims=(32, 64, 160, 256), depths=(2, 2, 2, 2), heads=(1, 2, 5, 8), srs=(8, 4, 2, 1),
                 embed_dim=256, classes=150):
        super().__init__()
        stages = []
        in_ch = 3
        for i in range(4):
            kernel, stride = (7, 4) if i == 0 else (3, 2)
            stages.append(MiTStage(in_ch, dims[i], kernel, stride, depths[i], heads[i], srs[i]))
            in_ch = dims[i]
        self.stages = nn.ModuleList(stages)
        self.head = SegFormerHead(dims, embed_dim, classes)

    def forward(self, x):
        feats = []
        for stage in self.stages:
            x = stage(x)
            feats.append(x)
        return self.head(feats)


@model("segformer_b0", "Korch", "SegFormer-B0 (MiT-b0 encoder, all-MLP decoder, 150 classes), image 1x3x512x512")
def segformer_b0():
    return SegFormer(), [(1, 3, 512, 512)]
