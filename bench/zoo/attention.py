"""Transformers: ViT-S/16 and a BERT-style encoder (common references), and a Longformer-style
encoder with banded sliding-window attention (in OLLIE's evaluation: G2BMM / GBMM).

Attention is written out (MatMul, scale, Softmax, MatMul; Gather for the bands), not through
nn.MultiheadAttention, so the exported graph shows every primitive.
"""
import torch
from torch import nn

from . import model


class SelfAttention(nn.Module):
    """Dense multi-head self-attention: Linear to q, k, v, per head softmax(q k^T / sqrt(d)) v, output Linear."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (torch.matmul(q, k.transpose(-2, -1)) * self.scale).softmax(dim=-1)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, n, c)
        return self.proj(out)


class Mlp(nn.Module):
    """Transformer feed-forward: Linear, GELU (erf), Linear."""

    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


# ---------------------------------------------------------------------------------------------------
# ViT


class PreNormBlock(nn.Module):
    """ViT encoder block: x + Attn(LN(x)), then x + MLP(LN(x))."""

    def __init__(self, dim, heads, mlp_ratio=4):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = SelfAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = Mlp(dim, dim * mlp_ratio)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class VisionTransformer(nn.Module):
    """ViT (Dosovitskiy et al.): 16x16 patch Conv, class token, learned position embedding,
    pre-norm blocks, final LayerNorm, Linear head on the class token."""

    def __init__(self, image=224, patch=16, dim=384, depth=12, heads=6, classes=1000):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, patch)
        n = (image // patch) ** 2
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        self.blocks = nn.Sequential(*[PreNormBlock(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


@model("vit_small", "common", "ViT-S/16 (384 wide, 12 blocks, 6 heads), image 1x3x224x224", quick=True)
def vit_small():
    return VisionTransformer(), [(1, 3, 224, 224)]


# ---------------------------------------------------------------------------------------------------
# BERT


class PostNormLayer(nn.Module):
    """Post-norm encoder layer (BERT, RoBERTa, Longformer): LN(x + Attn(x)), then LN(x + FFN(x))."""

    def __init__(self, dim, attn, ffn, eps):
        super().__init__()
        self.attn = attn
        self.norm1 = nn.LayerNorm(dim, eps=eps)
        self.ffn = Mlp(dim, ffn)
        self.norm2 = nn.LayerNorm(dim, eps=eps)

    def forward(self, x):
        x = self.norm1(x + self.attn(x))
        return self.norm2(x + self.ffn(x))


class BertEncoder(nn.Module):
    """BERT-base-style encoder: token embedding (Gather on int64 ids) + position and token-type
    embeddings, LayerNorm, post-norm layers; returns the hidden states (1, seq, hidden)."""

    def __init__(self, vocab=30522, seq=128, dim=768, heads=12, ffn=3072, layers=4):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(1, seq, dim) * 0.02)  # positions 0..seq-1, all used
        self.token_type = nn.Parameter(torch.randn(1, 1, dim) * 0.02)  # token type 0 everywhere
        self.norm = nn.LayerNorm(dim, eps=1e-12)
        self.layers = nn.Sequential(*[PostNormLayer(dim, SelfAttention(dim, heads), ffn, 1e-12) for _ in range(layers)])

    def forward(self, ids):
        x = self.norm(self.tok(ids) + self.pos + self.token_type)
        return self.layers(x)


@model("bert", "common", "BERT-base-style encoder, 4 layers (hidden 768, 12 heads, FFN 3072), "
       "token ids 1x128 int64", input_names=("input_ids",), quick=True)
def bert():
    return BertEncoder(), [(1, 128)], [torch.int64]


# ---------------------------------------------------------------------------------------------------
# Longformer


class SlidingWindowAttention(nn.Module):
    """Longformer's local attention as banded products: query i attends keys i + dilation * j,
    j in [-w, w] (2w+1 keys). Scores are a G2BMM, S[h, i, j] = sum_c Q[h, i, c] K[h, i + dil*(j-w), c]:
    K is zero-padded along the sequence and its windows gathered with a constant (n, 2w+1) index
    tensor, then a batched MatMul of (1 x d) by (d x 2w+1) per query. Out-of-sequence keys get -1e4
    (a constant additive mask over the band only). The output is a GBMM, O[h, i, :] = sum_j
    P[h, i, j] V[h, i + dil*(j-w), :], the same gather on V then a batched MatMul. No n x n tensor."""

    def __init__(self, dim, heads, seq, window, dilation=1):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = self.head_dim ** -0.5
        self.pad = window * dilation
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)
        offsets = torch.arange(-window, window + 1) * dilation  # (2w+1)
        pos = torch.arange(seq).unsqueeze(1) + offsets  # (n, 2w+1) key positions
        self.register_buffer("index", pos + self.pad, persistent=False)  # into the padded sequence
        self.register_buffer("mask", ((pos < 0) | (pos >= seq)).float() * -1e4, persistent=False)

    def forward(self, x):
        b, n, c = x.shape
        h, d = self.heads, self.head_dim
        q = self.q(x).reshape(b, n, h, d).transpose(1, 2)  # (B, h, n, d)
        k = self.k(x).reshape(b, n, h, d).transpose(1, 2)
        v = self.v(x).reshape(b, n, h, d).transpose(1, 2)
        k = nn.functional.pad(k, (0, 0, self.pad, self.pad))  # (B, h, n + 2 pad, d)
        v = nn.functional.pad(v, (0, 0, self.pad, self.pad))
        kw = k[:, :, self.index]  # Gather: (B, h, n, 2w+1, d)
        vw = v[:, :, self.index]
        s = torch.matmul(q.unsqueeze(3), kw.transpose(-1, -2)).squeeze(3)  # G2BMM: (B, h, n, 2w+1)
        p = (s * self.scale + self.mask).softmax(dim=-1)
        out = torch.matmul(p.unsqueeze(3), vw).squeeze(3)  # GBMM: (B, h, n, d)
        return self.proj(out.transpose(1, 2).reshape(b, n, c))


class Longformer(nn.Module):
    """Longformer-style encoder on float embeddings (1, seq, hidden): local sliding-window attention
    only (no global tokens); the second layer's window is dilated by 2, as in Longformer's upper layers."""

    def __init__(self, seq=1024, dim=512, heads=8, window=64, dilations=(1, 2), ffn=2048):
        super().__init__()
        self.layers = nn.Sequential(*[PostNormLayer(dim, SlidingWindowAttention(dim, heads, seq, window, d), ffn, 1e-5)
                                      for d in dilations])

    def forward(self, x):
        return self.layers(x)


@model("longformer", "OLLIE", "Longformer-style encoder, 2 layers (hidden 512, 8 heads, FFN 2048), banded "
       "attention window 2x64+1 (dilation 1, then 2) via gather + batched MatMul, embeddings 1x1024x512")
def longformer():
    return Longformer(), [(1, 1024, 512)]


# ---------------------------------------------------------------------------------------------------
# GPT


class CausalSelfAttention(SelfAttention):
    """Dense self-attention where query i sees keys 0..i only (nanoGPT / GPT-2): the scores above the
    diagonal are set to -inf by a constant lower-triangular mask before the softmax."""

    def __init__(self, dim, heads, seq):
        super().__init__(dim, heads)
        self.register_buffer("causal", torch.tril(torch.ones(seq, seq, dtype=torch.bool)), persistent=False)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        scores = scores.masked_fill(~self.causal[:n, :n], float("-inf"))
        out = torch.matmul(scores.softmax(dim=-1), v).transpose(1, 2).reshape(b, n, c)
        return self.proj(out)


class GptBlock(PreNormBlock):
    """GPT-2 block: x + CausalAttn(LN(x)), then x + MLP(LN(x)), GELU in its tanh form."""

    def __init__(self, dim, heads, seq):
        super().__init__(dim, heads)
        self.norm1 = nn.LayerNorm(dim, eps=1e-5)
        self.norm2 = nn.LayerNorm(dim, eps=1e-5)
        self.attn = CausalSelfAttention(dim, heads, seq)
        self.mlp.act = nn.GELU(approximate="tanh")


class GptDecoder(nn.Module):
    """GPT-2-style causal decoder over token ids (1, seq): token and learned position embeddings,
    pre-norm causal blocks, final LayerNorm, an LM head tied to the token embedding; returns the
    logits (1, seq, vocab)."""

    def __init__(self, vocab=8192, seq=256, dim=512, heads=8, layers=6):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(1, seq, dim) * 0.02)
        self.blocks = nn.Sequential(*[GptBlock(dim, heads, seq) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim, eps=1e-5)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, ids):
        x = self.blocks(self.tok(ids) + self.pos)
        return self.head(self.norm(x))


@model("gpt_decoder", "common", "GPT-2-style causal decoder, 6 layers (hidden 512, 8 heads, FFN 2048), "
       "tied LM head over 8192 tokens, token ids 1x256 int64", input_names=("input_ids",))
def gpt_decoder():
    return GptDecoder(), [(1, 256)], [torch.int64]
