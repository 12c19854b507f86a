#include "runtime/kernels/cpu/onednn_common.h"

#include "runtime/kernels/cpu/onednn_linear_spec.h"
#include "support/error.h"

namespace orchid::runtime::cpu::onednn {

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

NativeLayout native_layout(const dnnl::memory::desc& md) {
  return NativeLayout{kOneDnnLayout, std::make_shared<dnnl::memory::desc>(md), md.get_size()};
}

const dnnl::memory::desc& layout_desc(const NativeLayout& layout) {
  ORCHID_CHECK(layout.kind == kOneDnnLayout) << "not a oneDNN layout: " << layout.kind;
  return *std::static_pointer_cast<const dnnl::memory::desc>(layout.desc);
}

dnnl::memory::desc plain_f32(const dnnl::memory::dims& dims) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, dense_strides(dims));
}

}  // namespace orchid::runtime::cpu::onednn
