// CPU kernels for OLLIE's banded batched matmuls G2BMM and GBMM (float32;
// semantics in reference/ops/banded.h). The registry's factory is
// make_banded_kernel (registry.h); the loops are exposed for tests and
// micro benchmarks.
#pragma once

#include <vector>

#include "reference/ops/banded.h"

namespace orchid::runtime::cpu {

// C[Bt, M, 2W+1] = G2BMM(A[Bt, M, K], B[Bt, N, K]). `scratch` holds B
// transposed between calls (resized as needed). Parallel over Bt * M rows on
// the process pool (support/parallel.h).
void g2bmm_f32(const reference::BandedDims& dims, const float* a, const float* b, float* c,
               std::vector<float>& scratch);
// C[Bt, M, K] = GBMM(A[Bt, M, 2W+1], B[Bt, N, K]).
void gbmm_f32(const reference::BandedDims& dims, const float* a, const float* b, float* c);

}  // namespace orchid::runtime::cpu
