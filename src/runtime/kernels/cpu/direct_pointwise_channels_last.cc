// The pointwise (1x1, stride 1, one group) convolution with pixels as the
// rows of the GEMM: Y [pixels, cout] = X [pixels, cin] W [cin, cout], the
// output written channels-last (oneDNN's acdb), the variant "direct
// channels-last" (direct_conv.h). It is the form for small planes with many
// channels (RegNet's 400 -> 400 at 7x7: 49 pixels), where the NCHW form's
// 64-pixel column tiles are three quarters full and have no parallelism,
// and oneDNN 2.6's brgconv runs at half the GEMM peak.
//
// The register tile is 7 pixels by 4 vectors of 16 output channels (28
// accumulators; 7 divides the planes of 7, 14, 28, 56 and 112 pixels a side).
// The weights are packed once as column panels [cout / 64][cin][64]; the
// pixels are read where they are, in whatever layout the input arrives
// (NCHW, channels-last or blocked by channels: strided broadcasts; packing
// them first cost half as much as the GEMM at 64 channels). Pixel blocks
// stay inside one image. A task is one panel for a range of pixel blocks, so a
// panel (cin x 256 B) is read from memory once and then from cache, and
// while it works a task prefetches the next panel: a layer's
// weights are not in cache when it runs (400 x 400 at 7x7: 0.18 ms with
// them coming from memory unprefetched, 0.12 prefetched, 0.11 with them in
// cache). Epilogues run on each pixel's row segment while it is in cache,
// or, when they treat all channels alike and one panel holds them all, on a
// task's rows at once. A runtime operand of the output's shape (a residual
// Add) is read channels-last like the output: in place when it arrives so,
// else converted first.
// Row-major (NCHW) outputs are computed channels-last into a buffer and
// then transposed (layout_strided_copy.h); the BLP prices that against
// the native output.
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "runtime/kernels/cpu/direct_conv.h"
#include "runtime/kernels/cpu/direct_internal.h"
#include "runtime/kernels/cpu/layout_strided_copy.h"
#include "runtime/kernels/cpu/linear_epilogue.h"
#include "runtime/kernels/cpu/onednn_common.h"
#include "runtime/kernels/cpu/simd.h"
#include "support/error.h"
#include "support/parallel.h"

namespace orchid::runtime::cpu {

namespace direct {

namespace {

using onednn::LinearSpec;
using simd::kLanes;
using simd::load;
using simd::splat;
using simd::Vec;

constexpr int64_t kPixels = 7;                    // rows of the register tile
constexpr int64_t kPanelVectors = 4;              // vectors of the register tile
constexpr int64_t kPanel = kPanelVectors * kLanes;  // output channels per weight panel
constexpr int64_t kLine = 64;                     // bytes per cache line

// Where element (n, c, h, w) of a 4-D tensor lies in a oneDNN layout with
// dense planes (h sh = h w sw) and at most one inner block, on the channels:
// offset + n sn + (c / block) sc + (h w + w) sw + c % block. As read by a
// tile: channel k of a pixel at k / block sc + k % block channel, where
// NCHW and NHWC are one block of all channels a channel stride apart.
struct ChannelBlockedLayout {
  int64_t sn = 0, sc = 0, sw = 0, block = 1, channel = 1, offset = 0;
};

std::optional<ChannelBlockedLayout> channel_blocked(const dnnl::memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.ndims != 4 || d.data_type != dnnl_f32 || d.format_kind != dnnl_blocked) return std::nullopt;
  const dnnl_blocking_desc_t& b = d.format_desc.blocking;
  if (b.strides[2] != b.strides[3] * d.dims[3]) return std::nullopt;  // planes not dense
  ChannelBlockedLayout layout{b.strides[0], b.strides[1], b.strides[3], 1, 1, d.offset0};
  if (b.inner_nblks == 1 && b.inner_idxs[0] == 1) {
    layout.block = b.inner_blks[0];  // blocked: consecutive channels within a block
  } else if (b.inner_nblks == 0) {
    layout.block = d.dims[1], layout.channel = b.strides[1];  // plain: one block, channels sc apart
  } else {
    return std::nullopt;
  }
  return layout;
}

dnnl::memory::desc channels_last_desc(const ConvShape& s) {
  return dnnl::memory::desc({s.n, s.cout, s.oh, s.ow}, dnnl::memory::data_type::f32,
                            dnnl::memory::format_tag::nhwc);
}

// Where a tile's pixels are read: pixel r, channel k of the block at a + r
// pixel + k / block * block_stride + k % block * channel (block: the
// layout's channel block, or all channels).
struct PixelRows {
  const float* a;
  int64_t pixel, channel, block, block_stride;
};

// rows (<= R) pixels' output channels [0, V vectors) of a panel: c[r][j] =
// bias[j] + sum_k a[r][k] w[k][j], pixel rows ldc apart, the last vector
// `last` lanes wide; prefetching `lines` (at most 2 depth) lines from `next`
// on the way, two per step of the sum; with Relu, max(c, 0).
template <int R, int V, bool Relu>
void tile(const PixelRows& x, const float* w, int64_t depth, const float* bias, float* c, int64_t ldc, int64_t rows,
          int64_t last, const char* next, int64_t lines) {
  Vec acc[R][V];
  for (int v = 0; v < V; ++v) {
    const Vec b = load(bias + v * kLanes);
    for (int r = 0; r < R; ++r) acc[r][v] = b;
  }
  int64_t row[R];  // past the last pixel: the last one again (computed, not stored)
  for (int r = 0; r < R; ++r) row[r] = std::min<int64_t>(r, rows - 1) * x.pixel;
  const auto step = [&](int64_t k, const float* ak) {
    Vec wv[V];
    for (int v = 0; v < V; ++v) wv[v] = load(w + k * kPanel + v * kLanes);
    for (int r = 0; r < R; ++r) {
      const Vec ar = splat(ak[row[r]]);
      for (int v = 0; v < V; ++v) acc[r][v] += ar * wv[v];
    }
  };
  const int64_t prefetching = (lines + 1) / 2;  // the steps that prefetch two lines each
  for (int64_t k0 = 0; k0 < depth; k0 += x.block) {
    const float* ak = x.a + k0 / x.block * x.block_stride;
    const int64_t k1 = std::min(depth, k0 + x.block), kp = std::clamp(prefetching, k0, k1);
    int64_t k = k0;
    for (; k < kp; ++k, ak += x.channel) {
      __builtin_prefetch(next + 2 * k * kLine, 0, 2);
      __builtin_prefetch(next + (2 * k + 1) * kLine, 0, 2);
      step(k, ak);
    }
#pragma GCC unroll 2
    for (; k < k1; ++k, ak += x.channel) step(k, ak);
  }
  if (Relu) {
    for (int r = 0; r < R; ++r) {
      for (int v = 0; v < V; ++v) acc[r][v] = acc[r][v] > 0.f ? acc[r][v] : 0.f;
    }
  }
  const __mmask16 tail = __mmask16((1u << last) - 1u);
  for (int64_t r = 0; r < rows; ++r) {
    float* cr = c + r * ldc;
    for (int v = 0; v + 1 < V; ++v) simd::store(cr + v * kLanes, acc[r][v]);
    _mm512_mask_storeu_ps(cr + (V - 1) * kLanes, tail, __m512(acc[r][V - 1]));
  }
}

using TileFn = void (*)(const PixelRows&, const float*, int64_t, const float*, float*, int64_t, int64_t, int64_t,
                        const char*, int64_t);
// [with ReLU][vectors - 1]
constexpr TileFn kTiles[2][kPanelVectors] = {
    {tile<kPixels, 1, false>, tile<kPixels, 2, false>, tile<kPixels, 3, false>, tile<kPixels, 4, false>},
    {tile<kPixels, 1, true>, tile<kPixels, 2, true>, tile<kPixels, 3, true>, tile<kPixels, 4, true>}};

// Whether the epilogues after the bias are one ReLU (the tile applies it).
bool only_relu(const LinearSpec& spec) {
  int relus = 0, others = 0;
  for (const onednn::Epilogue& e : spec.epilogues) {
    if (e.kind == onednn::EpilogueKind::Bias) continue;
    const bool relu = e.kind == onednn::EpilogueKind::Eltwise && e.algorithm == dnnl::algorithm::eltwise_relu &&
                      e.alpha == 0.f;
    relus += relu, others += !relu;
  }
  return relus == 1 && others == 0;
}

class ChannelsLastPointwiseKernel : public Kernel {
 public:
  ChannelsLastPointwiseKernel(const Graph& graph, const KernelGroup& group, const LinearSpec& spec,
                              const ConvShape& s)
      : s_(s), epilogue_(graph, group, spec), out_md_(channels_last_desc(s)) {
    x_input_ = int(input_slot(group, spec.anchor.x));
    relu_ = only_relu(spec);
    const dnnl::memory::desc row_major = onednn::plain_f32({s_.n, s_.cout, s_.oh, s_.ow});
    for (size_t input : epilogue_.tensor_inputs()) operands_.push_back({input, onednn::layout_copy(row_major, out_md_)});
    plane_ = s_.ih * s_.iw;
    pixels_ = s_.n * plane_;
    image_blocks_ = (plane_ + kPixels - 1) / kPixels;
    blocks_ = s_.n * image_blocks_;
    panels_ = (s_.cout + kPanel - 1) / kPanel;
    // ONNX's weights [cout][cin] as panels [cout / 64][cin][64], zero-padded.
    const std::vector<float> w = onednn::constant_values(*graph.value(spec.anchor.w).constant);
    // (64-byte aligned: a vector load across two cache lines costs two)
    panels_storage_.assign(size_t(panels_ * s_.cin * kPanel + kLanes), 0.f);
    packed_ = panels_storage_.data() + (kLanes - reinterpret_cast<uintptr_t>(panels_storage_.data()) / 4 % kLanes) % kLanes;
    for (int64_t o = 0; o < s_.cout; ++o) {
      float* column = packed_ + o / kPanel * s_.cin * kPanel + o % kPanel;
      for (int64_t k = 0; k < s_.cin; ++k) column[k * kPanel] = w[size_t(o * s_.cin + k)];
    }
    in_ = *channel_blocked(onednn::plain_f32({s_.n, s_.cin, s_.ih, s_.iw}));
    row_major_out_ = coalesce(dense_output_copy({s_.n, s_.cout, s_.oh, s_.ow}, {plane_ * s_.cout, 1, s_.ow * s_.cout, s_.cout}));
    // A task: one panel for a range of pixel blocks (a chunk), chunk after
    // chunk, so a thread's tasks are its chunks' panels in turn; with one
    // thread, every block in one chunk (each panel streams from memory once).
    const int64_t threads = num_threads();
    const int64_t wanted = threads > 1 ? 2 * threads : 1;
    chunk_ = std::max<int64_t>(1, (blocks_ + wanted - 1) / wanted);
    chunks_ = (blocks_ + chunk_ - 1) / chunk_;
  }

  void run(const KernelArgs& args) override {
    const float* x = static_cast<const float*>(args.inputs[size_t(x_input_)]);
    float* y = static_cast<float*>(args.outputs[0]);
    epilogue_.bind(args);
    const size_t out_bytes = size_t(pixels_ * s_.cout) * sizeof(float);
    for (size_t k = 0; k < operands_.size(); ++k) {
      const Operand& o = operands_[k];
      if (!o.to_channels_last) continue;  // in place
      float* copy = reinterpret_cast<float*>(onednn::conversion_buffer(2 + k, out_bytes));
      run_strided_copy(*o.to_channels_last, sizeof(float), args.inputs[o.input], copy);
      epilogue_.rebind_tensor(o.input, copy);
    }
    float* out = native_out_ ? y : reinterpret_cast<float*>(onednn::conversion_buffer(0, out_bytes));
    bias_.assign(size_t(panels_ * kPanel), 0.f);
    std::copy(epilogue_.biases(), epilogue_.biases() + s_.cout, bias_.begin());
    // The epilogue over a task's rows at once, or per pixel and panel.
    const bool whole_rows = panels_ == 1 && epilogue_.channel_independent();
    const int64_t panel_lines = s_.cin * kPanel * int64_t(sizeof(float)) / kLine;
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, chunk_ * kPixels * s_.cin * kPanel));
    parallel_for(panels_ * chunks_, grain, [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        const int64_t chunk = task / panels_, panel = task % panels_;
        const int64_t c0 = panel * kPanel, width = std::min(kPanel, s_.cout - c0);
        const int64_t vectors = (width + kLanes - 1) / kLanes, last = width - (vectors - 1) * kLanes;
        const float* weights = packed_ + panel * s_.cin * kPanel;
        // (the next panel, which the thread's next task reads)
        const char* next = reinterpret_cast<const char*>(weights + s_.cin * kPanel);
        int64_t lines = panel + 1 < panels_ ? panel_lines : 0;
        const int64_t b0 = chunk * chunk_, b1 = std::min(blocks_, b0 + chunk_);
        const int64_t per_block = std::min((lines + b1 - b0 - 1) / (b1 - b0), 2 * s_.cin);
        int64_t q0 = -1, q1 = 0;  // the task's rows
        for (int64_t b = b0; b < b1; ++b) {
          const int64_t image = b / image_blocks_, p0 = b % image_blocks_ * kPixels;
          const int64_t rows = std::min(kPixels, plane_ - p0), q = image * plane_ + p0;
          float* c = out + q * s_.cout + c0;
          const int64_t now = std::min(lines, per_block);
          const PixelRows a{x + in_.offset + image * in_.sn + p0 * in_.sw, in_.sw, in_.channel, in_.block,
                            in_.sc};
          kTiles[relu_][vectors - 1](a, weights, s_.cin, bias_.data() + c0, c, s_.cout, rows, last, next, now);
          next += now * kLine, lines -= now;
          if (q0 < 0) q0 = q;
          q1 = q + rows;
          if (epilogue_.only_bias() || relu_ || whole_rows) continue;
          for (int64_t r = 0; r < rows; ++r) {
            epilogue_.apply_columns(c + r * s_.cout, (q + r) * s_.cout + c0, c0, width);
          }
        }
        if (whole_rows && !epilogue_.only_bias() && !relu_) epilogue_.apply(out + q0 * s_.cout, 0, 0, (q1 - q0) * s_.cout);
      }
    });
    if (!native_out_) run_strided_copy(row_major_out_, sizeof(float), out, y);
  }

  std::string implementation() const override { return "direct pointwise conv (channels-last)"; }
  std::vector<std::span<const std::byte>> weight_buffers() const override {
    return {std::as_bytes(std::span(packed_, size_t(panels_ * s_.cin * kPanel)))};
  }
  bool reads_input_at_run(size_t input) const override {
    return int(input) == x_input_ || epilogue_.reads_input(input);
  }

  // The output is written channels-last when the tensor lives so; row-major
  // (through a transpose) otherwise.
  std::optional<NativeLayout> native_output_layout(size_t output) const override {
    if (output != 0 || native_out_) return std::nullopt;
    return onednn::native_layout(out_md_);
  }
  void use_native_output(size_t output) override {
    ORCHID_CHECK(output == 0 && !native_out_) << "no native layout for output " << output;
    native_out_ = true;
  }
  // The input is read where it is, in any layout of dense planes and at most one
  // channel block.
  // Operands of the epilogue: in any layout the layout copy converts to
  // channels-last.
  bool can_read_input_as(size_t input, const NativeLayout& layout) const override {
    if (layout.kind != onednn::kOneDnnLayout) return false;
    const dnnl::memory::desc& md = onednn::layout_desc(layout);
    if (int(input) == x_input_) {
      return md.dims() == dnnl::memory::dims{s_.n, s_.cin, s_.ih, s_.iw} && channel_blocked(md).has_value();
    }
    return operand(input) && md.dims() == out_md_.dims() && (md == out_md_ || onednn::layout_copy(md, out_md_));
  }
  std::optional<NativeLayout> native_input_layout(size_t input) const override {
    if (operand(input)) return onednn::native_layout(out_md_);
    if (int(input) != x_input_) return std::nullopt;
    return onednn::native_layout(dnnl::memory::desc({s_.n, s_.cin, s_.ih, s_.iw}, dnnl::memory::data_type::f32,
                                                    dnnl::memory::format_tag::nhwc));
  }
  void read_input_as(size_t input, const NativeLayout& layout) override {
    ORCHID_CHECK(can_read_input_as(input, layout)) << "input " << input << " cannot take the layout";
    const dnnl::memory::desc& md = onednn::layout_desc(layout);
    if (int(input) == x_input_) {
      in_ = *channel_blocked(md);
      return;
    }
    operand(input)->to_channels_last = md == out_md_ ? std::nullopt : onednn::layout_copy(md, out_md_);
  }

 private:
  // A runtime operand of the epilogue, and how it becomes channels-last
  // (nullopt: it is).
  struct Operand {
    size_t input;
    std::optional<StridedCopy> to_channels_last;
  };
  Operand* operand(size_t input) {
    for (Operand& o : operands_) {
      if (o.input == input) return &o;
    }
    return nullptr;
  }
  const Operand* operand(size_t input) const { return const_cast<ChannelsLastPointwiseKernel*>(this)->operand(input); }

  ConvShape s_;
  LinearEpilogue epilogue_;
  dnnl::memory::desc out_md_;
  int x_input_ = -1;
  int64_t plane_ = 0, pixels_ = 0, image_blocks_ = 0, blocks_ = 0, panels_ = 0, chunk_ = 1, chunks_ = 1;
  std::vector<float> panels_storage_;
  float* packed_ = nullptr;  // the weights [panels][cin][kPanel], in panels_storage_
  std::vector<float> bias_;         // padded to whole panels
  ChannelBlockedLayout in_;
  StridedCopy row_major_out_;  // channels-last -> NCHW
  bool native_out_ = false;
  bool relu_ = false;  // the epilogue is one ReLU, in the tile
  std::vector<Operand> operands_;
};

}  // namespace

}  // namespace direct

bool channels_last_pointwise_supported(const Graph& graph, const onednn::LinearSpec& spec) {
  if (!direct_conv_supported(graph, spec) || spec.anchor.kind != onednn::LinearKind::Conv) return false;
  const direct::ConvShape s = direct::conv_shape(graph, spec.anchor);
  const bool one_by_one = s.kh == 1 && s.kw == 1 && s.ph == 0 && s.pw == 0 && s.oh == s.ih && s.ow == s.iw;
  if (s.groups != 1 || !one_by_one || s.sh != 1 || s.sw != 1) return false;
  // Runtime operands (a residual) have the output's shape.
  return std::all_of(spec.epilogues.begin(), spec.epilogues.end(), [&](const onednn::Epilogue& e) {
    return e.tensor == kNoValue || graph.type(e.tensor).shape == Shape{s.n, s.cout, s.oh, s.ow};
  });
}

std::unique_ptr<Kernel> make_channels_last_pointwise_kernel(const Graph& graph, const KernelGroup& group,
                                                            const onednn::LinearSpec& spec) {
  if (!channels_last_pointwise_supported(graph, spec)) return nullptr;
  return std::make_unique<direct::ChannelsLastPointwiseKernel>(graph, group, spec,
                                                               direct::conv_shape(graph, spec.anchor));
}

}  // namespace orchid::runtime::cpu
