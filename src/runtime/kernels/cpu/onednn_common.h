// What the oneDNN kernels share: the CPU engine, the NativeLayout kind of
// oneDNN memory descriptors (kernels that read and write them recognize each
// other's tensors by it), and row-major descriptors of the runtime's buffers.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/kernels/cpu/layout_strided_copy.h"

namespace orchid::runtime::cpu::onednn {

dnnl::engine& cpu_engine();

// NativeLayout::kind of oneDNN memory descriptors; NativeLayout::desc holds a
// dnnl::memory::desc.
inline constexpr const char* kOneDnnLayout = "onednn";

NativeLayout native_layout(const dnnl::memory::desc& md);
// The descriptor of a oneDNN native layout (layout.kind must be kOneDnnLayout).
const dnnl::memory::desc& layout_desc(const NativeLayout& layout);

// Buffers for the layout conversions inside kernels (a src reordered from
// NCHW, a dst before its reorder to NCHW). Kernels of one thread run one at a
// time, so they share one buffer per role instead of each holding its own:
// role 0 is the dst, role 1 + k the k-th reordered input. Grown on demand.
std::byte* conversion_buffer(size_t role, size_t bytes);

// A dense row-major float32 descriptor of `dims`.
dnnl::memory::desc plain_f32(const dnnl::memory::dims& dims);
// A channels-last float32 descriptor of 3-D to 5-D `dims` (nwc, nhwc, ndhwc).
dnnl::memory::desc channels_last_f32(const dnnl::memory::dims& dims);

// The bytes of a memory's buffer (Kernel::weight_buffers of packed weights).
std::span<const std::byte> memory_bytes(const dnnl::memory& m);

// The copy of a tensor in layout `from` into the box of layout `to` that
// starts at `offset` (per logical dimension; empty: at the origin) and has
// `from`'s logical shape: a reorder (or a Concat's part) as the layout
// library's strided copy, its loops in the order `to` is written. Both
// layouts dense, without padding, at most one inner block per dimension;
// along each dimension one layout's block divides the other's, and the box
// starts and ends on the larger block's edges. nullopt otherwise.
std::optional<StridedCopy> layout_copy(const dnnl::memory::desc& from, const dnnl::memory::desc& to,
                                       const std::vector<int64_t>& offset = {});
// The same for a tensor of `shape` read through a strided view of a buffer
// (a Slice of a Slice of a row-major tensor).
std::optional<StridedCopy> view_copy(const Shape& shape, const StridedView& from, const dnnl::memory::desc& to,
                                     const std::vector<int64_t>& offset = {});

}  // namespace orchid::runtime::cpu::onednn
