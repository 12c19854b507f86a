// Token maps turned into images and back, as Transposes between
// channels-last and channels-first images: a constant-free rewrite run
// before fission, exact (it only changes the order of two layout steps).
//
// Vision transformers with convolutions between their token blocks
// (SegFormer's Mix-FFN, patch embeddings) write
//
//   image  = Reshape(Transpose(t, perm 0,2,1), [N, C, h, w])     t [N, L, C]
//   tokens = Transpose(Reshape(x, [N, C, L]), perm 0,2,1)          x [N, C, h, w]
//
// Reshaping first and transposing last (or the other way round) gives
//
//   image  = Transpose(Reshape(t, [N, h, w, C]), perm 0,3,1,2)
//   tokens = Reshape(Transpose(x, perm 0,2,3,1), [N, L, C])
//
// whose Transposes go between a row-major channels-last image and a
// channels-first one: the same bytes as the channels-first image in the
// channels-last layout a convolution computes in. The runtime then makes
// them relabelings instead of copies (layout.cc's channels-last
// Transposes), and orchestration prices them so (CandidateRules::relabels).
#pragma once

#include "ir/graph.h"

namespace orchid::fission {

// Both rewrites wherever the inner node's output is read once (and is no
// graph output), for any number of spatial axes.
Graph token_maps_as_images(const Graph& graph);

}  // namespace orchid::fission
