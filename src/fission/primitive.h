// Korch's primitives: the small operator set that fission reduces every model
// to. A primitive is an operator of the default ONNX domain, in Orchid's
// canonical form, whose shape-deciding inputs (Reshape's shape, Slice's
// starts, ReduceSum's axes, ...) are constants. Using ONNX operators as the
// primitive vocabulary keeps one shape inference, one reference
// implementation and one conformance suite for both levels.
//
// Classes (DESIGN.md):
//  - Elementwise: unary math (Exp, Log, Sqrt, Erf, Tanh, Sigmoid, Relu, ...),
//    binary arithmetic/comparison/logic with broadcasting (Add, Mul, Max, Less,
//    ...), Where, Cast.
//  - Reduce: ReduceSum, ReduceMax, ReduceMin, ReduceProd; ArgMax, ArgMin;
//    CumSum (a scan along one axis).
//  - Layout: pure data movement — Transpose, Reshape, Slice, Concat, Pad
//    (constant mode), Expand, Gather (with constant indices this is an index
//    map: Resize, Tile, DepthToSpace, ... become Gathers).
//  - Linear: MatMul (batched, broadcasting), Conv (any stride, dilation,
//    padding, groups; bias allowed), ConvTranspose (kept whole until
//    derivation rewrites it), and the banded matmuls G2BMM and GBMM of the
//    "ai.orchid" domain (reference/ops/banded.h) that derivation instantiates
//    (the only primitives outside the default domain).
//  - Opaque: operators whose output size or control depends on data, or that
//    no primitive chain expresses exactly and cheaply (NonMaxSuppression,
//    TopK, NonZero, ...). They stay whole and run as one kernel of their own.
#pragma once

#include <optional>
#include <string>

#include "ir/graph.h"
#include "ir/op_traits.h"

namespace orchid::fission {

// The classes above (ir/op_traits.h keeps each primitive's class and other facts).
using orchid::PrimitiveKind;

const char* primitive_kind_name(PrimitiveKind kind);

// The node's class when it is a primitive (its shape-deciding inputs are
// constants in `graph`); nullopt when fission must rewrite it.
std::optional<PrimitiveKind> primitive_kind(const Node& node, const Graph& graph);

}  // namespace orchid::fission
