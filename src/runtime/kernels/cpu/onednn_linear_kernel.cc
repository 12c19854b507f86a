// The oneDNN kernel of a Conv / ConvTranspose / MatMul group: one primitive
// with the group's epilogues as bias and post-ops, created once with its
// constant weights reordered once to the layout the primitive prefers.
//
// Activation layout. Conv and deconvolution let oneDNN pick the src/dst
// layout (format_tag::any; it picks nhwc-like acdb for brgconv) and reorder
// from/to the runtime's NCHW buffers in the kernel, which beat plain nchw at
// every ResNet-18 shape. oneDNN 2.6, float32, batch 1, conv + ReLU, ms per
// call including the reorders, best of 7-15 runs of 5 on 2 cores shared with
// other builds (so only the ratios mean much):
//
//   shape                       1 thread: nchw   any+reorder   2 threads: nchw   any+reorder
//   64x56x56 -> 64, 3x3                2.98        2.11                1.59         1.03
//   128x28x28 -> 128, 3x3              2.73        2.00                1.32         0.99
//   256x14x14 -> 256, 3x3              2.48        1.87                1.34         0.95
//   512x7x7 -> 512, 3x3                2.41        1.90                1.46         0.85
//   stem 3x224x224 -> 64, 7x7 s2       3.83        2.40                1.89         1.14
//   (nhwc + reorders measured the same as any + reorders, within 3%.)
//
// MatMul keeps plain row-major src/dst (its preferred layout anyway).
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <unordered_map>

#include "runtime/kernels/cpu/onednn_linear_kernel.h"

#include "runtime/kernels/cpu/linear_epilogue.h"
#include "runtime/kernels/cpu/onednn_common.h"
#include "runtime/shared_constants.h"
#include "support/error.h"
#include "support/parallel.h"

namespace orchid::runtime::cpu::onednn {

namespace {

using dnnl::memory;
using dims = memory::dims;
using dt = memory::data_type;
using tag = memory::format_tag;

memory::desc plain(const dims& d) { return plain_f32(d); }
memory::desc any(const dims& d) { return memory::desc(d, dt::f32, tag::any); }

// A memory whose data pointer is set per call to an argument buffer.
struct Bound {
  memory mem;
  int input = -1;  // index into KernelArgs::inputs
  int arg = 0;     // the primitive argument it feeds (DNNL_ARG_*), 0 for runtime weights
};

// The (last) epilogue with a runtime tensor operand, -1 if none.
int runtime_operand(const LinearSpec& spec) {
  int last = -1;
  for (size_t i = 0; i < spec.epilogues.size(); ++i) {
    if (spec.epilogues[i].kind == EpilogueKind::Binary && spec.epilogues[i].tensor != kNoValue) last = int(i);
  }
  return last;
}

class LinearKernel : public Kernel {
 public:
  LinearKernel(const Graph& graph, const KernelGroup& group, const LinearSpec& spec, bool residual_as_sum)
      : spec_(spec), bias_(graph, group, spec), stream_(cpu_engine()) {
    const LinearAnchor& a = spec.anchor;
    split_transcendental_tail();
    x_input_ = int(input_slot(group, a.x));
    const bool has_bias = bias_.present();
    const bool constant_weights = graph.value(a.w).is_constant();
    const memory::desc weights_md =
        constant_weights ? any(a.weights) : memory::desc(a.weights, dt::f32, a.weights_strides);
    const memory::desc bias_md = has_bias ? plain(bias_dims()) : memory::desc();
    const bool matmul = a.kind == LinearKind::MatMul;
    memory::desc src_md = matmul ? plain(a.src) : any(a.src);
    memory::desc dst_md = matmul ? plain(a.dst) : any(a.dst);
    // Grouped convs (not depthwise) channels-last, the layout oneDNN's
    // brgconv keeps their 1x1 neighbours in. Left to choose, oneDNN 2.6 ran
    // them blocked by 16 channels (jit:avx512_core), and every 1x1 ->
    // grouped -> 1x1 block of RegNet-X reordered twice: 0.5 ms of its 8.8 at
    // 1 thread, 0.9 of 5.1 at 2. The same jit kernel runs channels-last as
    // fast; the model ran in 7.8 and 4.6 ms.
    const bool channels_last = !matmul && a.src.size() == 4 && a.groups > 1 && a.groups != a.src[1];
    if (channels_last) {
      create_primitive(channels_last_f32(a.src), weights_md, bias_md, channels_last_f32(a.dst), dnnl::primitive_attr());
      const bool slow = name_.find("gemm") != std::string::npos || name_.find("ref") != std::string::npos;
      if (!slow) src_md = channels_last_f32(a.src), dst_md = channels_last_f32(a.dst);  // else as oneDNN chooses
    }
    // With a runtime binary operand oneDNN 2.6 will not pick layouts for a
    // fast implementation itself (it fell to gemm:jit, 13.0 ms instead of
    // 2.0 ms, for a 64x56x56 3x3 conv + residual Add + ReLU): fix src, dst and
    // the operand to the layouts it picks without post-ops; the operand is
    // reordered into dst's layout per call.
    memory::desc tensor_md = plain(a.dst);
    if (!matmul && has_tensor_operand()) {
      create_primitive(src_md, weights_md, bias_md, dst_md, dnnl::primitive_attr());
      src_md = src_md_;
      dst_md = tensor_md = dst_md_;
    }
    if (residual_as_sum) {
      ORCHID_CHECK(residual_sum_applies(spec_)) << "kernel '" << group.name << "': no residual to add as a sum";
      sum_epilogue_ = runtime_operand(spec_);  // post_ops makes it oneDNN's sum
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(post_ops(tensor_md));
    create_primitive(src_md, weights_md, bias_md, dst_md, attr);
    // Where no fast implementation takes the operand in those layouts,
    // oneDNN 2.6 falls to gemm:jit in them, and its channels-last binary
    // post-op reads the operand wrongly (a 15x1 conv + residual Add on
    // 64x32x32 was off by 1.5, GCN's global convolution): gemm:jit in plain
    // NCHW is correct (the model and conformance tests run it).
    if (!matmul && has_tensor_operand() && name_.find("gemm") != std::string::npos && src_md != plain(a.src)) {
      src_md = plain(a.src);
      dst_md = tensor_md = plain(a.dst);
      attr.set_post_ops(post_ops(tensor_md));
      create_primitive(src_md, weights_md, bias_md, dst_md, attr);
    }
    bind_activations();
    bind_weights(graph, group, constant_weights);
    bind_post_op_operands(group);
    if (sum_epilogue_ >= 0) {
      sum_input_ = int(input_slot(group, spec_.epilogues[size_t(sum_epilogue_)].tensor));
      bind_sum_operand(plain(spec_.anchor.dst));
    }
    if (has_bias) args_[DNNL_ARG_BIAS] = memory(bias_md, cpu_engine(), bias_.data());
  }

  void run(const KernelArgs& args) override {
    for (Bound& b : bound_) b.mem.set_data_handle(const_cast<void*>(args.inputs[size_t(b.input)]));
    bias_.bind(args);
    if (weights_reorder_) weights_reorder_.execute(stream_, user_weights_, args_[DNNL_ARG_WEIGHTS]);
    for (size_t k = 0; k < input_reorders_.size(); ++k) {
      Reorder& r = input_reorders_[k];
      r.to.set_data_handle(conversion_buffer(1 + k, r.to.get_desc().get_size()));
      r.op.execute(stream_, r.from, r.to);
    }
    if (dst_reorder_) {
      args_[DNNL_ARG_DST].set_data_handle(conversion_buffer(0, dst_md_.get_size()));
    }
    user_dst_.set_data_handle(args.outputs[0]);
    if (sum_input_ >= 0) copy_sum_operand(args.inputs[size_t(sum_input_)]);
    primitive_.execute(stream_, args_);
    if (!transcendental_tail_.empty()) {
      stream_.wait();
      apply_transcendental_tail(static_cast<float*>(args_[DNNL_ARG_DST].get_data_handle()));
    }
    if (dst_reorder_) dst_reorder_.execute(stream_, args_[DNNL_ARG_DST], user_dst_);
    stream_.wait();
  }

  std::string implementation() const override { return name_; }
  // Constant weights, reordered once (runtime weights, bound to
  // user_weights_, are not the kernel's).
  std::vector<std::span<const std::byte>> weight_buffers() const override {
    if (user_weights_) return {};
    return {memory_bytes(args_.at(DNNL_ARG_WEIGHTS))};
  }

  // Constant weights, biases and post-op constants are copied at
  // construction; only the inputs bound to memories (or a runtime bias) are
  // read when the kernel runs.
  // Native layouts (runtime/kernel.h): a conv writes its dst in the layout
  // the primitive computes in, and reads src / tensor operands in any oneDNN
  // layout of the right dims, so chains of convs skip the reorders to and
  // from NCHW between them.
  std::optional<NativeLayout> native_output_layout(size_t output) const override {
    if (output != 0 || !dst_reorder_) return std::nullopt;
    return native_layout(dst_md_);
  }

  void use_native_output(size_t output) override {
    ORCHID_CHECK(output == 0 && dst_reorder_) << "no native layout for output " << output;
    args_[DNNL_ARG_DST] = memory(dst_md_, cpu_engine(), DNNL_MEMORY_NONE);
    user_dst_ = args_[DNNL_ARG_DST];
    dst_reorder_ = dnnl::reorder();
  }

  // A reader that computes in another oneDNN layout of dst's dims (a
  // channels-last Transpose relabeling nhwc) gets it through the dst
  // reorder, as a row-major reader would, unless the primitive computes in it.
  bool can_write_output_as(size_t output, const NativeLayout& layout) const override {
    return output == 0 && dst_reorder_ && spec_.anchor.kind != LinearKind::MatMul && layout.kind == kOneDnnLayout &&
           layout_desc(layout).dims() == dst_md_.dims();
  }

  void write_output_as(size_t output, const NativeLayout& layout) override {
    ORCHID_CHECK(can_write_output_as(output, layout)) << "output " << output << " cannot take the layout";
    const memory::desc& md = layout_desc(layout);
    if (md == dst_md_) return use_native_output(output);
    user_dst_ = memory(md, cpu_engine(), DNNL_MEMORY_NONE);
    dst_reorder_ = dnnl::reorder(args_[DNNL_ARG_DST], user_dst_);
  }

  bool can_read_input_as(size_t input, const NativeLayout& layout) const override {
    if (layout.kind != kOneDnnLayout) return false;
    const memory::desc& md = layout_desc(layout);
    bool any = false;
    if (int(input) == sum_input_) {
      if (md.dims() != sum_given_.get_desc().dims()) return false;
      any = true;
    }
    for (const Bound& b : bound_) {
      if (size_t(b.input) != input) continue;
      if (b.arg == 0 || md.dims() != b.mem.get_desc().dims()) return false;
      any = true;
    }
    return any;
  }

  std::optional<NativeLayout> native_input_layout(size_t input) const override {
    for (const Bound& b : bound_) {
      if (size_t(b.input) != input || b.arg != DNNL_ARG_SRC) continue;
      const memory::desc wanted = pd_.query_md(dnnl::query::exec_arg_md, b.arg);
      if (wanted == b.mem.get_desc()) return std::nullopt;
      return native_layout(wanted);
    }
    return std::nullopt;
  }

  void read_input_as(size_t input, const NativeLayout& layout) override {
    ORCHID_CHECK(can_read_input_as(input, layout)) << "input " << input << " cannot take the layout";
    const memory::desc& md = layout_desc(layout);
    for (Bound& b : bound_) {
      if (size_t(b.input) == input) bind_input(b, md);
    }
    if (int(input) == sum_input_) bind_sum_operand(md);
  }

  bool reads_input_at_run(size_t input) const override {
    if (bias_.reads_input(input) || int(input) == sum_input_) return true;
    for (const Bound& b : bound_) {
      if (size_t(b.input) == input) return true;
    }
    return false;
  }

 private:
  bool has_tensor_operand() const { return runtime_operand(spec_) >= 0; }

  // A last run of eltwise epilogues holding a SiLU, Sigmoid, GELU or Mish
  // is applied by the kernel to dst after the primitive, while dst is in
  // cache (simd_math.h's reciprocal, fast_math's erf), instead of as oneDNN
  // post-ops: oneDNN 2.6's swish injector divides, and took 0.085 ms of a 64 -> 64 1x1 conv at
  // 52x52 (0.15 ms without it). Applied by the kernel, the whole conv took
  // 0.22 ms instead of 0.23-0.24; a 64-channel depthwise 3x3 at 52x52 + SiLU
  // 0.118 instead of 0.130-0.141; 32 -> 32 1x1 at 104x104 (1.4 MB) 0.31-0.33
  // instead of 0.35-0.37, and the 2.8 MB output of 64 channels there was
  // still no slower (at 1 and 2 threads). Outputs over kTailBytes a
  // thread keep the post-ops: four 128-channel depthwise convs + GELU at
  // 128x128 (8 MB each) took 17.7-19.6 ms so, 14.1-16.0 with post-ops.
  static constexpr int64_t kTailBytes = int64_t(2) << 20;

  // The eltwise post-ops oneDNN 2.6 computes slowly (a division, or erf).
  static bool slow_post_op(dnnl::algorithm alg) {
    using dnnl::algorithm;
    switch (alg) {
      case algorithm::eltwise_swish:
      case algorithm::eltwise_logistic:
      case algorithm::eltwise_gelu_erf:
      case algorithm::eltwise_gelu_tanh:
      case algorithm::eltwise_mish:
        return true;
      default:
        return false;
    }
  }

  void split_transcendental_tail() {
    std::vector<Epilogue>& all = spec_.epilogues;
    size_t first = all.size();
    while (first > 0 && all[first - 1].kind == EpilogueKind::Eltwise && epilogue_supported(all[first - 1])) --first;
    const bool slow = std::any_of(all.begin() + std::ptrdiff_t(first), all.end(),
                                  [](const Epilogue& e) { return slow_post_op(e.algorithm); });
    int64_t bytes = int64_t(sizeof(float));
    for (int64_t d : spec_.anchor.dst) bytes *= d;
    if (!slow || bytes > kTailBytes * std::max(1, num_threads())) return;
    std::vector<Epilogue> tail(all.begin() + std::ptrdiff_t(first), all.end());
    // The pass covers dst's channel padding too (blocked layouts), which
    // must stay 0: a tail that moves 0 (a Sigmoid) only where the channels
    // fill whole blocks.
    float zero = 0.f;
    for (const Epilogue& e : tail) apply_eltwise(e, &zero, 1);
    if (zero != 0.f && spec_.anchor.kind != LinearKind::MatMul && spec_.anchor.channels % 16 != 0) return;
    transcendental_tail_ = std::move(tail);
    all.resize(first);
  }

  // transcendental_tail_ on dst in the primitive's layout, every element.
  void apply_transcendental_tail(float* dst) const {
    const int64_t n = int64_t(dst_md_.get_size() / sizeof(float));
    constexpr int64_t kChunk = 4096;
    parallel_for((n + kChunk - 1) / kChunk, 16, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        float* y = dst + c * kChunk;
        const int64_t m = std::min(kChunk, n - c * kChunk);
        for (const Epilogue& e : transcendental_tail_) apply_eltwise(e, y, m);
      }
    });
  }

  // The epilogues other than bias, in node order; runtime binary operands
  // described by `tensor_md`, constant ones plain.
  dnnl::post_ops post_ops(const memory::desc& tensor_md) const {
    dnnl::post_ops ops;
    for (const Epilogue& e : spec_.epilogues) {
      if (e.kind == EpilogueKind::Eltwise) ops.append_eltwise(1.f, e.algorithm, e.alpha, e.beta);
      if (e.kind == EpilogueKind::Binary && &e - spec_.epilogues.data() == sum_epilogue_) {
        ops.append_sum(1.f);
      } else if (e.kind == EpilogueKind::Binary) {
        ops.append_binary(e.algorithm, e.tensor != kNoValue ? tensor_md : plain(e.broadcast));
      }
    }
    return ops;
  }

  // The residual as it arrives (`given`), copied or reordered into dst's layout.
  void bind_sum_operand(const memory::desc& given) {
    sum_given_ = memory(given, cpu_engine(), DNNL_MEMORY_NONE);
    sum_reorder_ = dnnl::reorder(sum_given_, args_[DNNL_ARG_DST]);  // (a copy where the layouts agree)
  }

  void copy_sum_operand(const void* residual) {
    sum_given_.set_data_handle(const_cast<void*>(residual));
    sum_reorder_.execute(stream_, {{DNNL_ARG_FROM, sum_given_}, {DNNL_ARG_TO, args_[DNNL_ARG_DST]}});
  }

  // Binary operands: owned copies of constants; runtime tensors bound to
  // their argument buffer, through a per-call reorder when the primitive
  // wants another layout.
  void bind_post_op_operands(const KernelGroup& group) {
    int index = 0;
    for (const Epilogue& e : spec_.epilogues) {
      if (e.kind == EpilogueKind::Bias) continue;
      const int arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(index++) | DNNL_ARG_SRC_1;
      if (e.kind != EpilogueKind::Binary || &e - spec_.epilogues.data() == sum_epilogue_) continue;
      if (e.tensor == kNoValue) {
        binary_constants_.push_back(e.values);
        args_[arg] = memory(plain(e.broadcast), cpu_engine(), binary_constants_.back().data());
        continue;
      }
      bound_.push_back({memory(), int(input_slot(group, e.tensor)), arg});
      bind_input(bound_.back(), plain(spec_.anchor.dst));
    }
  }

  // Conv bias is [OC]; matmul's broadcasts like dst: [1, ..., 1, N].
  dims bias_dims() const {
    const LinearAnchor& a = spec_.anchor;
    if (a.kind != LinearKind::MatMul) return {a.channels};
    dims d(a.dst.size(), 1);
    d.back() = a.dst.back();
    return d;
  }

  template <typename Op>
  void finish(const typename Op::desc& desc, const dnnl::primitive_attr& attr, const char* name) {
    typename Op::primitive_desc pd(desc, attr, cpu_engine());
    pd_ = pd;
    src_md_ = pd.src_desc();
    weights_md_ = pd.weights_desc();
    dst_md_ = pd.dst_desc();
    primitive_ = Op(pd);
    name_ = std::string("onednn ") + name + " (" + pd.impl_info_str() + ")";
  }

  // Creates the primitive (and pd_, src_md_, weights_md_, dst_md_).
  void create_primitive(const memory::desc& src, const memory::desc& weights, const memory::desc& bias,
                        const memory::desc& dst, const dnnl::primitive_attr& attr) {
    const LinearAnchor& a = spec_.anchor;
    constexpr auto inference = dnnl::prop_kind::forward_inference;
    switch (a.kind) {
      case LinearKind::Conv:
        finish<dnnl::convolution_forward>({inference, dnnl::algorithm::convolution_direct, src, weights, bias, dst,
                                           a.strides, a.dilations, a.pad_l, a.pad_r},
                                          attr, "conv");
        break;
      case LinearKind::ConvTranspose:
        finish<dnnl::deconvolution_forward>({inference, dnnl::algorithm::deconvolution_direct, src, weights, bias,
                                             dst, a.strides, a.dilations, a.pad_l, a.pad_r},
                                            attr, "deconv");
        break;
      case LinearKind::MatMul:
        finish<dnnl::matmul>({src, weights, bias, dst}, attr, "matmul");
        break;
    }
  }

  // src/dst: the runtime's row-major buffers, reordered when the primitive
  // chose another layout.
  void bind_activations() {
    const LinearAnchor& a = spec_.anchor;
    user_dst_ = memory(plain(a.dst), cpu_engine(), DNNL_MEMORY_NONE);
    bound_.push_back({memory(), x_input_, DNNL_ARG_SRC});
    bind_input(bound_.back(), plain(a.src));
    if (dst_md_ != user_dst_.get_desc()) {
      args_[DNNL_ARG_DST] = memory(dst_md_, cpu_engine(), DNNL_MEMORY_NONE);
      dst_reorder_ = dnnl::reorder(args_[DNNL_ARG_DST], user_dst_);
    } else {
      args_[DNNL_ARG_DST] = user_dst_;
    }
  }

  // Points the bound input at a memory of layout `given` over its argument
  // buffer, feeding the primitive argument directly when the primitive wants
  // that layout and through a per-call reorder otherwise.
  void bind_input(Bound& b, const memory::desc& given) {
    b.mem = memory(given, cpu_engine(), DNNL_MEMORY_NONE);
    input_reorders_.erase(std::remove_if(input_reorders_.begin(), input_reorders_.end(),
                                         [&](const Reorder& r) { return r.arg == b.arg; }),
                          input_reorders_.end());
    const memory::desc wanted = pd_.query_md(dnnl::query::exec_arg_md, b.arg);
    if (wanted == given) {
      args_[b.arg] = b.mem;
      return;
    }
    args_[b.arg] = memory(wanted, cpu_engine(), DNNL_MEMORY_NONE);
    input_reorders_.push_back({dnnl::reorder(b.mem, args_[b.arg]), b.mem, args_[b.arg], b.arg});
  }

  // Constant weights in the primitive's layout: reordered once, and shared
  // with the kernels (of this executable or of others sharing its constants,
  // runtime/shared_constants.h) that want the same weights in the same layout.
  memory packed_weights(const Graph& graph, const memory::desc& user_md) {
    struct Packed {
      memory::desc md;
      memory mem;
    };
    const auto make = [&] {
      void* data = const_cast<void*>(graph.value(spec_.anchor.w).constant->raw());
      memory user(user_md, cpu_engine(), data);
      memory packed(weights_md_, cpu_engine());
      dnnl::reorder(user, packed).execute(stream_, user, packed);
      stream_.wait();
      return std::make_shared<const Packed>(Packed{weights_md_, packed});
    };
    // The key names the layout; the descriptor itself is compared on a hit.
    std::string kind = "onednn weights " + std::to_string(weights_md_.get_size());
    for (int64_t d : weights_md_.dims()) kind += " " + std::to_string(d);
    std::shared_ptr<const Packed> shared = shared_derived<Packed>(spec_.anchor.w, kind, make);
    if (!(shared->md == weights_md_)) shared = make();
    return shared->mem;
  }

  // Constant weights are reordered here, once; runtime weights are read in
  // their ONNX layout (or reordered per call if the primitive insists).
  void bind_weights(const Graph& graph, const KernelGroup& group, bool constant_weights) {
    const LinearAnchor& a = spec_.anchor;
    const memory::desc user_md(a.weights, dt::f32, a.weights_strides);
    if (constant_weights) {
      args_[DNNL_ARG_WEIGHTS] = packed_weights(graph, user_md);
      return;
    }
    user_weights_ = memory(user_md, cpu_engine(), DNNL_MEMORY_NONE);
    bound_.push_back({user_weights_, int(input_slot(group, a.w)), 0});
    if (weights_md_ == user_md) {
      args_[DNNL_ARG_WEIGHTS] = user_weights_;
      return;
    }
    args_[DNNL_ARG_WEIGHTS] = memory(weights_md_, cpu_engine());
    weights_reorder_ = dnnl::reorder(user_weights_, args_[DNNL_ARG_WEIGHTS]);
  }

  LinearSpec spec_;
  LinearBias bias_;  // bound to the primitive's bias argument when present
  dnnl::stream stream_;
  dnnl::primitive primitive_;
  dnnl::primitive_desc_base pd_;
  std::string name_;
  memory::desc src_md_, weights_md_, dst_md_;
  std::unordered_map<int, memory> args_;
  // Memories over argument buffers; their handles are refreshed every call.
  std::vector<Bound> bound_;
  memory user_dst_, user_weights_;
  dnnl::reorder dst_reorder_, weights_reorder_;
  struct Reorder {
    dnnl::reorder op;
    memory from, to;
    int arg;
  };
  std::vector<Reorder> input_reorders_;  // activations and runtime post-op operands, per call
  int x_input_ = -1;
  std::vector<std::vector<float>> binary_constants_;
  std::vector<Epilogue> transcendental_tail_;  // applied by the kernel after the primitive
  int sum_epilogue_ = -1;  // the epilogue applied as oneDNN's sum (kResidualSumVariant), -1 if none
  int sum_input_ = -1;     // its operand's input
  memory sum_given_;       // the operand in the layout it arrives in
  dnnl::reorder sum_reorder_;  // into dst's layout (a copy where they agree)
};

}  // namespace

bool residual_sum_applies(const LinearSpec& spec) {
  if (spec.anchor.kind != LinearKind::Conv) return false;
  int operands = 0, added = 0;
  for (const Epilogue& e : spec.epilogues) {
    if (e.kind != EpilogueKind::Binary || e.tensor == kNoValue) continue;
    ++operands;
    added += e.algorithm == dnnl::algorithm::binary_add;  // (a runtime operand has dst's type)
  }
  return operands == 1 && added == 1;
}

std::unique_ptr<Kernel> build_linear_kernel(const Graph& graph, const KernelGroup& group, const LinearSpec& spec,
                                            bool residual_as_sum) {
  return std::make_unique<LinearKernel>(graph, group, spec, residual_as_sum);
}

}  // namespace orchid::runtime::cpu::onednn
