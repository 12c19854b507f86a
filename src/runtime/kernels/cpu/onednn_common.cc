#include "runtime/kernels/cpu/onednn_common.h"

#include <algorithm>
#include <numeric>

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

size_t PhysicalView::outer_of(int d) const {
  return size_t(std::find(logical.begin(), logical.end(), d) - logical.begin());
}

std::optional<PhysicalView> physical_view(const dnnl::memory::desc& md) {
  const dnnl_memory_desc_t& c = md.data;
  if (c.format_kind != dnnl_blocked || c.offset0 != 0) return std::nullopt;
  const int n = c.ndims;
  const dnnl_blocking_desc_t& blocking = c.format_desc.blocking;
  std::vector<int64_t> inner(size_t(n), 1);  // per logical dimension: its inner blocks' product
  for (int b = 0; b < blocking.inner_nblks; ++b) inner[size_t(blocking.inner_idxs[b])] *= blocking.inner_blks[b];
  for (int d = 0; d < n; ++d) {
    if (c.padded_dims[d] != c.dims[d] || c.dims[d] % inner[size_t(d)] != 0) return std::nullopt;
  }
  // Outer parts by stride, largest first (ties in logical order).
  std::vector<int> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return blocking.strides[a] > blocking.strides[b]; });
  PhysicalView view;
  for (int d : order) {
    view.extents.push_back(c.dims[d] / inner[size_t(d)]);
    view.logical.push_back(d);
  }
  for (int b = 0; b < blocking.inner_nblks; ++b) {
    view.extents.push_back(blocking.inner_blks[b]);
    view.logical.push_back(blocking.inner_idxs[b]);
  }
  // Dense: each outer part's stride is the product of everything inside it.
  int64_t size = 1;
  for (size_t k = view.extents.size(); k-- > 0;) {
    if (k < size_t(n) && view.extents[k] > 1 && blocking.strides[view.logical[k]] != size) return std::nullopt;
    size *= view.extents[k];
  }
  return view;
}

}  // namespace orchid::runtime::cpu::onednn
