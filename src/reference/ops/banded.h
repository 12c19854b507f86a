// OLLIE's banded batched matmuls, operators of the "ai.orchid" domain that
// derivation instantiates (never imported from ONNX models):
//   G2BMM(A[Bt, M, K], B[Bt, N, K]) -> C[Bt, M, 2W+1]
//     C[b, m, w] = Sum_k A[b, m, k] * B[b, m + d*(w - W), k]
//   GBMM(A[Bt, M, 2W+1], B[Bt, N, K]) -> C[Bt, M, K]
//     C[b, m, k] = Sum_w A[b, m, w] * B[b, m + d*(w - W), k]
// with attributes width = W >= 0 and dilation = d >= 1 (default 1). Rows of
// B outside [0, N) read as zero. The shape rules live here so that the
// reference, the primitive expression and the CPU kernel agree on them.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace orchid::reference {

inline constexpr const char* kOrchidDomain = "ai.orchid";

// Whether `node` is ai.orchid G2BMM or GBMM.
bool is_banded_op(const Node& node);

struct BandedDims {
  bool g2bmm = true;  // false: GBMM
  int64_t batch = 0, m = 0, n = 0;
  int64_t k = 0;  // the length of B's rows (and of A's rows for G2BMM)
  int64_t width = 0, dilation = 1;
  int64_t band() const { return 2 * width + 1; }
};

// The operand dimensions of a banded node with input shapes `a` and `b`;
// orchid::Error (without the node's name, which callers add) when the ranks,
// shapes or attributes are wrong.
BandedDims banded_dims(const Node& node, const Shape& a, const Shape& b);

}  // namespace orchid::reference
