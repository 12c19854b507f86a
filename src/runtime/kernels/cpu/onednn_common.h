// What the oneDNN kernels share: the CPU engine, the NativeLayout kind of
// oneDNN memory descriptors (kernels that read and write them recognize each
// other's tensors by it), and row-major descriptors of the runtime's buffers.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <optional>
#include <vector>

#include "runtime/kernel.h"

namespace orchid::runtime::cpu::onednn {

dnnl::engine& cpu_engine();

// NativeLayout::kind of oneDNN memory descriptors; NativeLayout::desc holds a
// dnnl::memory::desc.
inline constexpr const char* kOneDnnLayout = "onednn";

NativeLayout native_layout(const dnnl::memory::desc& md);
// The descriptor of a oneDNN native layout (layout.kind must be kOneDnnLayout).
const dnnl::memory::desc& layout_desc(const NativeLayout& layout);

// A dense row-major float32 descriptor of `dims`.
dnnl::memory::desc plain_f32(const dnnl::memory::dims& dims);

// A dense oneDNN layout (no padding, no offset) seen as a row-major tensor
// of its physical dimensions: each logical dimension's outer part in memory
// order, then the inner blocks (nChw8c, [1, 32, 52, 52]: extents
// [1, 4, 52, 52, 8], logical dims [0, 1, 2, 3, 1]).
struct PhysicalView {
  std::vector<int64_t> extents;  // outermost first
  std::vector<int> logical;      // per physical dimension: the logical one it steps
  // The physical dimension of logical dimension `d`'s outer part.
  size_t outer_of(int d) const;
};
std::optional<PhysicalView> physical_view(const dnnl::memory::desc& md);

}  // namespace orchid::runtime::cpu::onednn
