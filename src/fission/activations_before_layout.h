// Activations moved before the layout steps between a convolution and them:
// a constant-free rewrite run before fission, exact (an elementwise map with
// scalar constants commutes with any Transpose or Reshape).
//
// A convolution whose output is laid out again before its activation
// (SegFormer's Mix-FFN: Conv -> Transpose to channels-last -> Reshape to
// tokens -> GELU, once token_images.h has run) leaves the activation to a
// kernel of its own, a full pass over the tensor. Applied to the
// convolution's output instead, the activation is the conv's epilogue
// (a oneDNN post-op), and the layout steps follow:
//
//   F(L_k(...L_1(Conv(x))))  =  L_k(...L_1(F(Conv(x))))
//
// for F a region of elementwise operators whose other operands are scalar
// constants (GELU's Div, Erf, Add, Mul, Mul) and L_i Transposes and Reshapes.
#pragma once

#include "ir/graph.h"

namespace orchid::fission {

// The rewrite wherever a Conv's output reaches such a region through one or
// more Transposes and Reshapes, each value on the way read once (and no
// graph output), and the region's only value read elsewhere is its last.
Graph activations_before_layout(const Graph& graph);

}  // namespace orchid::fission
