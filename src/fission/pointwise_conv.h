// Constant rewrites of pointwise (1x1) Convs, run before fission after
// BatchNorm folding, each exact in real arithmetic.
//
// conv_before_upsampling moves a pointwise Conv over a channel Concat of
// upsampled tensors before the upsampling. Two identities:
//
//   Conv1x1(Concat(a_1, ..., a_n), W, b) = sum_i Conv1x1(a_i, W_i, b_i)
//     (W_i: W's input channels of a_i; the bias in one term only)
//   Conv1x1(Resize(x), W_i) = Resize(Conv1x1(x, W_i))
//     (a 1x1 Conv mixes channels at each pixel, a Resize mixes pixels within
//     each channel; a bias passes through a linear or nearest Resize, whose
//     weights sum to 1)
//
// SegFormer's all-MLP decoder is the case: four feature maps at 1/4 to 1/32
// resolution, bilinearly upsampled to 1/4, concatenated (1024 channels) and
// fused by a 1x1 Conv to 256 channels. Run per branch at its own resolution,
// the Conv's 4.3 G multiply-adds become 1.5 G, and the 64 MB Concat is never
// written.
#pragma once

#include "ir/graph.h"

namespace orchid::fission {

// For every Conv with a 1x1 kernel, stride 1, no pads, one group, a constant
// float weight (and a constant bias or none) whose input is a Concat along
// channels read by nothing else: the Conv split per Concat input and summed,
// each part run before its input's Resize where that Resize upsamples (mode
// nearest or linear, not tf_crop_and_resize, no antialias, spatial axes only,
// read only by the Concat). Applied where the multiply-adds of the Convs and
// Resizes fall to 3/4 or less; other nodes are copied unchanged.
Graph conv_before_upsampling(const Graph& graph);

// For every Conv as above (1x1, stride 1, no pads, one group, constant
// weight W [M, C, 1...] and bias or none) whose input is a token-major
// linear map moved to channels-first,
//   Reshape(Transpose(MatMul(X, A) [+ a]))   A: constant [K, C], a: [C]
// (the Transpose takes the last axis to axis 1, the Reshape keeps axes 0 and
// 1, each value read once): the two maps as one,
//   Reshape(Transpose(MatMul(X, A W^T) [+ W a + b]))
// computed in double. Applied where it saves multiply-adds (K M < K C + C M:
// SegFormer's decoder MLPs, 32..256 -> 256 channels, then its fuse Conv's
// 256 -> 256 parts). Other nodes are copied unchanged.
Graph fold_linear_into_pointwise_conv(const Graph& graph);

// For every Conv as above whose input is a channels-last tensor y
// [N, spatial..., C] made channels-first, Transpose(perm 0, r-1, 1, ...,
// r-2), then passed through unary elementwise operators (Relu), each value
// read once, with no more output channels M than C: the product
// channels-last and its result made channels-first,
//   Transpose(MatMul(unary(y), W^T [C, M]) [+ b]),
// which moves M channels instead of C through a Transpose and runs as a
// GEMM (SegFormer's classifier, 256 -> 150 channels at 128x128, after
// channels_last_sum.h). Other nodes are copied unchanged.
Graph pointwise_conv_channels_last(const Graph& graph);

}  // namespace orchid::fission
