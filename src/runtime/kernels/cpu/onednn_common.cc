#include "runtime/kernels/cpu/onednn_common.h"

#include <algorithm>
#include <array>
#include <cstdlib>

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

std::byte* conversion_buffer(size_t role, size_t bytes) {
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  thread_local std::vector<std::unique_ptr<std::byte, Free>> buffers;
  thread_local std::vector<size_t> sizes;
  if (role >= buffers.size()) {
    buffers.resize(role + 1);
    sizes.resize(role + 1, 0);
  }
  if (sizes[role] < bytes) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    buffers[role].reset(static_cast<std::byte*>(std::aligned_alloc(64, rounded)));
    ORCHID_CHECK(buffers[role]) << "out of memory for a " << bytes << "-byte conversion buffer";
    sizes[role] = bytes;
  }
  return buffers[role].get();
}

dnnl::memory::desc plain_f32(const dnnl::memory::dims& dims) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, dense_strides(dims));
}

dnnl::memory::desc channels_last_f32(const dnnl::memory::dims& dims) {
  using tag = dnnl::memory::format_tag;
  const tag t = dims.size() == 3 ? tag::nwc : dims.size() == 5 ? tag::ndhwc : tag::nhwc;
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, t);
}

std::span<const std::byte> memory_bytes(const dnnl::memory& m) {
  return {static_cast<const std::byte*>(m.get_data_handle()), m.get_desc().get_size()};
}

namespace {

// How a dense layout addresses logical dimension d: index i lands at
// (i / block) * outer + (i % block) * inner.
struct DimAddressing {
  int64_t outer = 0;
  int64_t block = 1;
  int64_t inner = 0;
};

std::optional<std::vector<DimAddressing>> addressing(const dnnl::memory::desc& md) {
  const dnnl_memory_desc_t& c = md.data;
  if (c.format_kind != dnnl_blocked || c.offset0 != 0) return std::nullopt;
  const dnnl_blocking_desc_t& blocking = c.format_desc.blocking;
  std::vector<DimAddressing> dims(size_t(c.ndims));
  for (int d = 0; d < c.ndims; ++d) {
    if (c.padded_dims[d] != c.dims[d]) return std::nullopt;
    dims[size_t(d)].outer = blocking.strides[d];
  }
  int64_t inner_stride = 1;
  for (int b = blocking.inner_nblks; b-- > 0;) {
    DimAddressing& dim = dims[size_t(blocking.inner_idxs[b])];
    if (dim.block != 1) return std::nullopt;  // two blocks of one dimension
    dim.block = blocking.inner_blks[b];
    dim.inner = inner_stride;
    inner_stride *= blocking.inner_blks[b];
  }
  return dims;
}

// The strides of the loops (outer, middle, inner) of sizes (extent / big,
// big / small, small) that walk one dimension, in a layout whose block is
// `small` or `big`.
std::array<int64_t, 3> loop_strides(const DimAddressing& dim, int64_t small, int64_t big) {
  if (dim.block == big) return {dim.outer, small * dim.inner, dim.inner};
  return {(big / small) * dim.outer, dim.outer, dim.inner};
}

}  // namespace

namespace {

// The copy of elements addressed by `in` (from `in_base`), of `extents`,
// into the box of layout `to` at `offset`.
std::optional<StridedCopy> copy_into(const std::vector<DimAddressing>& in, int64_t in_base,
                                     const dnnl::memory::dims& extents, const dnnl::memory::desc& to,
                                     const std::vector<int64_t>& offset) {
  const std::optional<std::vector<DimAddressing>> out = addressing(to);
  if (!out || in.size() != out->size() || extents.size() != in.size()) return std::nullopt;
  const dnnl::memory::dims box_space = to.dims();
  StridedCopy copy;
  copy.in_base = in_base;
  for (size_t d = 0; d < in.size(); ++d) {
    const DimAddressing &a = in[d], &b = (*out)[d];
    const int64_t small = std::min(a.block, b.block), big = std::max(a.block, b.block);
    const int64_t start = offset.empty() ? 0 : offset[d];
    if (big % small != 0 || extents[d] % big != 0 || start % big != 0 || start + extents[d] > box_space[d]) {
      return std::nullopt;
    }
    copy.out_base += (start / b.block) * b.outer;
    const std::array<int64_t, 3> sa = loop_strides(a, small, big), sb = loop_strides(b, small, big);
    const std::array<int64_t, 3> sizes = {extents[d] / big, big / small, small};
    for (size_t l = 0; l < 3; ++l) copy.dims.push_back({sizes[l], sa[l], sb[l]});
  }
  // Write the output in order: its largest strides outermost.
  std::stable_sort(copy.dims.begin(), copy.dims.end(),
                   [](const CopyDim& x, const CopyDim& y) { return x.out_stride > y.out_stride; });
  return coalesce(std::move(copy));
}

}  // namespace

std::optional<StridedCopy> layout_copy(const dnnl::memory::desc& from, const dnnl::memory::desc& to,
                                       const std::vector<int64_t>& offset) {
  const std::optional<std::vector<DimAddressing>> in = addressing(from);
  if (!in) return std::nullopt;
  return copy_into(*in, 0, from.dims(), to, offset);
}

std::optional<StridedCopy> view_copy(const Shape& shape, const StridedView& from, const dnnl::memory::desc& to,
                                     const std::vector<int64_t>& offset) {
  if (from.strides.size() != shape.size()) return std::nullopt;
  std::vector<DimAddressing> in;
  for (int64_t stride : from.strides) in.push_back({stride, 1, 0});
  return copy_into(in, from.base, dnnl::memory::dims(shape.begin(), shape.end()), to, offset);
}

}  // namespace orchid::runtime::cpu::onednn
