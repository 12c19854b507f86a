// ConvTranspose with kernel = stride (s_h x s_w taps, no padding, dilation or
// output padding): the taps never overlap, so every input pixel writes its
// own s_h x s_w block of output pixels,
//   y[n, s_h h + i, s_w w + j, co] = b[co] + sum_ci x[n, h, w, ci] W[ci, co, i, j].
// In channels-last layout, for fixed (n, h, i) the output row s_h h + i is
// the product X[n, h] [W x Cin] times B_i [Cin x s_w Cout], B_i[ci][j Cout + co]
// = W[ci, co, i, j], stored densely. So the whole layer is one batched matmul
//   src [N H, 1, W, Cin] x weights [1, s_h, Cin, s_w Cout] -> dst [N H, s_h, W, s_w Cout],
// src the NHWC input and dst the NHWC output byte for byte, with the bias
// repeated s_w times and the eltwise epilogues as post-ops.
//
// oneDNN 2.6 runs it as brgemm matmul. U-Net's four layers, 1 thread, ms,
// median of 50 (this kernel's matmul alone / the GEMM + col2im kernel in the
// model / the direct phase kernel alone / bound):
//   32 -> 16, 128x128:  0.42 / 1.43 / 0.81 / 0.32
//   64 -> 32, 64x64:    0.35 / 0.72 / -    / 0.32
//   128 -> 64, 32x32:   0.33 / 0.56 / -    / 0.32
//   256 -> 128, 16x16:  0.33 / 0.5  / -    / 0.32
// It reads and writes NHWC natively (layout negotiation, runtime/kernel.h),
// and converts NCHW (or any other oneDNN layout) itself otherwise.
#include "runtime/kernels/cpu/deconv_matmul.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/kernels/cpu/onednn_common.h"
#include "support/error.h"

namespace orchid::runtime::cpu {

namespace {

using dnnl::memory;
using dims = memory::dims;
using dt = memory::data_type;
using tag = memory::format_tag;

// The layer's sizes, when the group is one this kernel computes.
struct Geometry {
  int64_t n = 0, cin = 0, cout = 0, h = 0, w = 0, sh = 0, sw = 0;
};

std::optional<Geometry> geometry(const Graph& graph, const onednn::LinearSpec& spec) {
  const onednn::LinearAnchor& a = spec.anchor;
  if (a.kind != onednn::LinearKind::ConvTranspose || a.groups != 1 || a.src.size() != 4) return std::nullopt;
  if (!graph.value(a.w).is_constant()) return std::nullopt;
  const Shape& w = graph.type(a.w).shape;  // [cin, cout, kh, kw]
  Geometry g{a.src[0], a.src[1], a.dst[1], a.src[2], a.src[3], a.strides[0], a.strides[1]};
  const bool no_overlap = w.size() == 4 && w[2] == g.sh && w[3] == g.sw && w[1] == g.cout;
  const bool plain = std::all_of(a.dilations.begin(), a.dilations.end(), [](int64_t d) { return d == 0; }) &&
                     std::all_of(a.pad_l.begin(), a.pad_l.end(), [](int64_t p) { return p == 0; }) &&
                     std::all_of(a.pad_r.begin(), a.pad_r.end(), [](int64_t p) { return p == 0; });
  if (!no_overlap || !plain || a.dst[2] != g.h * g.sh || a.dst[3] != g.w * g.sw) return std::nullopt;
  for (const onednn::Epilogue& e : spec.epilogues) {
    if (e.kind == onednn::EpilogueKind::Binary) return std::nullopt;
  }
  return g;
}


// A tensor between a runtime buffer in layout `given` and the NHWC buffer
// the matmul reads or writes: the same bytes, or a reorder per call.
struct Side {
  memory::desc given;
  memory user, ours;  // over the argument buffer, over the matmul's buffer
  dnnl::reorder convert;
  bool converts() const { return bool(convert); }
};

class DeconvMatmulKernel : public Kernel {
 public:
  DeconvMatmulKernel(const Graph& graph, const KernelGroup& group, const onednn::LinearSpec& spec, const Geometry& g)
      : g_(g), bias_(graph, group, spec), stream_(onednn::cpu_engine()) {
    x_input_ = input_slot(group, spec.anchor.x);
    in_nhwc_ = onednn::channels_last_f32({g.n, g.cin, g.h, g.w});
    out_nhwc_ = onednn::channels_last_f32({g.n, g.cout, g.h * g.sh, g.w * g.sw});
    const int64_t row = g.sw * g.cout;
    const memory::desc src({g.n * g.h, 1, g.w, g.cin}, dt::f32, tag::abcd);
    const memory::desc dst({g.n * g.h, g.sh, g.w, row}, dt::f32, tag::abcd);
    const memory::desc bias({1, 1, 1, row}, dt::f32, tag::abcd);
    const memory::desc weights_any({1, g.sh, g.cin, row}, dt::f32, tag::any);
    dnnl::post_ops ops;
    for (const onednn::Epilogue& e : spec.epilogues) {
      if (e.kind == onednn::EpilogueKind::Eltwise) ops.append_eltwise(1.f, e.algorithm, e.alpha, e.beta);
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    const dnnl::matmul::primitive_desc pd({src, weights_any, bias, dst}, attr, onednn::cpu_engine());
    primitive_ = dnnl::matmul(pd);
    name_ = std::string("onednn deconv as matmul (") + pd.impl_info_str() + ")";
    pack_weights(graph, spec, pd.weights_desc());
    tiled_bias_.assign(size_t(row), 0.f);
    args_[DNNL_ARG_BIAS] = memory(bias, onednn::cpu_engine(), tiled_bias_.data());
    args_[DNNL_ARG_SRC] = memory(src, onednn::cpu_engine(), DNNL_MEMORY_NONE);
    args_[DNNL_ARG_DST] = memory(dst, onednn::cpu_engine(), DNNL_MEMORY_NONE);
    bind(in_, onednn::plain_f32({g.n, g.cin, g.h, g.w}), in_nhwc_, true);
    bind(out_, onednn::plain_f32({g.n, g.cout, g.h * g.sh, g.w * g.sw}), out_nhwc_, false);
  }

  void run(const KernelArgs& args) override {
    bias_.bind(args);
    for (int64_t j = 0; j < g_.sw; ++j) std::copy_n(bias_.data(), g_.cout, tiled_bias_.data() + j * g_.cout);
    void* x = const_cast<void*>(args.inputs[x_input_]);
    if (in_.converts()) {
      in_.user.set_data_handle(x);
      in_.ours.set_data_handle(onednn::conversion_buffer(1, in_nhwc_.get_size()));
      in_.convert.execute(stream_, in_.user, in_.ours);
      x = in_.ours.get_data_handle();
    }
    void* y = args.outputs[0];
    if (out_.converts()) y = onednn::conversion_buffer(0, out_nhwc_.get_size());
    args_[DNNL_ARG_SRC].set_data_handle(x);
    args_[DNNL_ARG_DST].set_data_handle(y);
    primitive_.execute(stream_, args_);
    if (out_.converts()) {
      out_.ours.set_data_handle(y);
      out_.user.set_data_handle(args.outputs[0]);
      out_.convert.execute(stream_, out_.ours, out_.user);
    }
    stream_.wait();
  }

  std::string implementation() const override { return name_; }
  std::vector<std::span<const std::byte>> weight_buffers() const override {
    return {onednn::memory_bytes(args_.at(DNNL_ARG_WEIGHTS))};
  }

  bool reads_input_at_run(size_t input) const override { return input == x_input_ || bias_.reads_input(input); }

  std::optional<NativeLayout> native_output_layout(size_t output) const override {
    if (output != 0 || !out_.converts()) return std::nullopt;
    return onednn::native_layout(out_nhwc_);
  }

  void use_native_output(size_t output) override {
    ORCHID_CHECK(output == 0) << "no native layout for output " << output;
    bind(out_, out_nhwc_, out_nhwc_, false);
  }

  bool can_read_input_as(size_t input, const NativeLayout& layout) const override {
    return input == x_input_ && layout.kind == onednn::kOneDnnLayout &&
           onednn::layout_desc(layout).dims() == in_nhwc_.dims();
  }

  std::optional<NativeLayout> native_input_layout(size_t input) const override {
    if (input != x_input_ || !in_.converts()) return std::nullopt;
    return onednn::native_layout(in_nhwc_);
  }

  void read_input_as(size_t input, const NativeLayout& layout) override {
    ORCHID_CHECK(can_read_input_as(input, layout)) << "input " << input << " cannot take the layout";
    bind(in_, onednn::layout_desc(layout), in_nhwc_, true);
  }

 private:
  // `side` in layout `given`, converted to or from `wanted` (NHWC) per call
  // unless they are the same.
  static void bind(Side& side, const memory::desc& given, const memory::desc& wanted, bool input) {
    side.given = given;
    side.convert = dnnl::reorder();
    if (given == wanted) return;
    side.user = memory(given, onednn::cpu_engine(), DNNL_MEMORY_NONE);
    side.ours = memory(wanted, onednn::cpu_engine(), DNNL_MEMORY_NONE);
    side.convert = input ? dnnl::reorder(side.user, side.ours) : dnnl::reorder(side.ours, side.user);
  }

  // B[i][ci][j cout + co] = W[ci][co][i][j], reordered to the primitive's layout.
  void pack_weights(const Graph& graph, const onednn::LinearSpec& spec, const memory::desc& wanted) {
    const std::vector<float> w = onednn::constant_values(*graph.value(spec.anchor.w).constant);
    const int64_t row = g_.sw * g_.cout;
    std::vector<float> b(size_t(g_.sh * g_.cin * row));
    for (int64_t i = 0; i < g_.sh; ++i) {
      for (int64_t ci = 0; ci < g_.cin; ++ci) {
        for (int64_t j = 0; j < g_.sw; ++j) {
          for (int64_t co = 0; co < g_.cout; ++co) {
            b[size_t((i * g_.cin + ci) * row + j * g_.cout + co)] =
                w[size_t(((ci * g_.cout + co) * g_.sh + i) * g_.sw + j)];
          }
        }
      }
    }
    memory user(memory::desc({1, g_.sh, g_.cin, row}, dt::f32, tag::abcd), onednn::cpu_engine(), b.data());
    args_[DNNL_ARG_WEIGHTS] = memory(wanted, onednn::cpu_engine());
    dnnl::reorder(user, args_[DNNL_ARG_WEIGHTS]).execute(stream_, user, args_[DNNL_ARG_WEIGHTS]);
    stream_.wait();
  }

  Geometry g_;
  onednn::LinearBias bias_;
  dnnl::stream stream_;
  dnnl::primitive primitive_;
  std::string name_;
  std::unordered_map<int, memory> args_;
  std::vector<float> tiled_bias_;
  memory::desc in_nhwc_, out_nhwc_;
  Side in_, out_;
  size_t x_input_ = 0;
};

}  // namespace

std::unique_ptr<Kernel> make_deconv_matmul_kernel(const Graph& graph, const KernelGroup& group,
                                                  const onednn::LinearSpec& spec) {
  const std::optional<Geometry> g = geometry(graph, spec);
  if (!g) return nullptr;
  try {
    return std::make_unique<DeconvMatmulKernel>(graph, group, spec, *g);
  } catch (const dnnl::error&) {
    return nullptr;  // no oneDNN implementation: the other kernels take it
  }
}

bool deconv_matmul_applies(const Graph& graph, const onednn::LinearSpec& spec) {
  return geometry(graph, spec).has_value();
}

}  // namespace orchid::runtime::cpu
