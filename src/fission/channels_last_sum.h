// Sums of token maps computed channels-last: a constant-free rewrite run
// before fission, exact (it only reorders where the data is laid out).
//
// Vision transformers' heads turn token-major maps [N, L, C] into images
// with Transpose(perm 0,2,1) + Reshape [N, C, h, w], upsample them and sum
// them (SegFormer's decoder, after pointwise_conv.h: four such maps, 16x16
// to 128x128, C = 256). Channels-first, every bilinear tap is a gather along
// the innermost axis; channels-last, a tap is a row of C contiguous floats
// scaled by one weight, and one Transpose at the end replaces one per map:
//
//   sum_k Resize_k(Reshape(Transpose(t_k)))
//     = Transpose(sum_k Resize'_k(Reshape'(t_k)))
//
// with Reshape' to [N, h, w, C], Resize'_k the same resize over the permuted
// axes, and the last Transpose to [N, C, H, W].
#pragma once

#include "ir/graph.h"

namespace orchid::fission {

// For every tree of Adds (same shape, no broadcasting, each read once) whose
// leaves are all token maps made channels-first — Reshape(Transpose(t)) with
// t [N, L, C], perm [0, 2, 1], shape [N, C, spatial...], optionally under a
// Resize of the spatial axes (constant scales or sizes over all axes, no
// roi, no `axes`), each read once: the sum channels-last and one Transpose.
// Other nodes are copied unchanged.
Graph sum_token_maps_channels_last(const Graph& graph);

}  // namespace orchid::fission
