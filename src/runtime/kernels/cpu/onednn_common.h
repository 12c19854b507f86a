// What the oneDNN kernels share: the CPU engine, the NativeLayout kind of
// oneDNN memory descriptors (kernels that read and write them recognize each
// other's tensors by it), and row-major descriptors of the runtime's buffers.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>

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

}  // namespace orchid::runtime::cpu::onednn
