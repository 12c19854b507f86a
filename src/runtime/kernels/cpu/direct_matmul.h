// Orchid's own kernel for matrix products of few rows by a constant matrix:
// Y [M, N] = X [M, K] B [K, N] with M small (a recurrent layer's h R^T per
// step, a decoder's projections at batch 1), where oneDNN 2.6's brgemm
// matmul runs a 1 MB GEMV in 31-42 us against the 9 us its bytes take from
// L2 on this machine. B is packed once into column panels, each [K][64]
// contiguous, so a panel streams through the cache in order; threads take
// fixed ranges of panels, so at every call each thread reads the part of B
// its own L2 kept from the call before. The group's epilogues run on each
// row's panel while it is in registers' reach.
//
// Also batched products by a transposed runtime operand (q k^T, the
// Transpose computed in the kernel as its prologue) with few rows per batch
// item: each output element a dot product of two contiguous rows.
//
// It is the "direct" variant of such a MatMul group (KernelGroup::variant),
// offered beside oneDNN's and chosen by measurement.
#pragma once

#include <memory>

#include "runtime/kernel.h"
#include "runtime/kernels/cpu/onednn_linear_spec.h"

namespace orchid::runtime::cpu {

// Rows of X (its leading dimensions folded) up to which the kernel is offered.
inline constexpr int64_t kDirectMatMulMaxRows = 16;

// Whether the direct kernel computes this group: a float32 MatMul, at most
// kDirectMatMulMaxRows rows of the first operand (per batch item), whose
// second operand is a constant matrix (no batch) or a Transpose prologue's
// [batch..., n, k] runtime value (equal batch dimensions), with supported
// epilogues.
bool direct_matmul_supported(const Graph& graph, const onednn::LinearSpec& spec);

// The kernel ("direct matmul (few rows)", "(dot rows)"); nullptr when direct_matmul_supported is false.
std::unique_ptr<Kernel> make_direct_matmul_kernel(const Graph& graph, const KernelGroup& group,
                                                  const onednn::LinearSpec& spec);

}  // namespace orchid::runtime::cpu
