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
// Layouts, the transpose to NCHW and residual operands:
// direct_channels_last.h.
#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "runtime/kernels/cpu/direct_channels_last.h"
#include "runtime/kernels/cpu/simd.h"
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
  for (int64_t r = 0; r < rows; ++r) {
    float* cr = c + r * ldc;
    for (int v = 0; v + 1 < V; ++v) simd::store(cr + v * kLanes, acc[r][v]);
    simd::store_first(cr + (V - 1) * kLanes, acc[r][V - 1], last);
  }
}

using TileFn = void (*)(const PixelRows&, const float*, int64_t, const float*, float*, int64_t, int64_t, int64_t,
                        const char*, int64_t);
// [with ReLU][vectors - 1]
constexpr TileFn kTiles[2][kPanelVectors] = {
    {tile<kPixels, 1, false>, tile<kPixels, 2, false>, tile<kPixels, 3, false>, tile<kPixels, 4, false>},
    {tile<kPixels, 1, true>, tile<kPixels, 2, true>, tile<kPixels, 3, true>, tile<kPixels, 4, true>}};

class ChannelsLastPointwiseKernel : public ChannelsLastConvKernel {
 public:
  ChannelsLastPointwiseKernel(const Graph& graph, const KernelGroup& group, const LinearSpec& spec,
                              const ConvShape& s)
      : ChannelsLastConvKernel(graph, group, spec, s, [](const ChannelBlockedLayout&, const ConvShape&) {
          return true;  // any layout: strided broadcasts
        }) {
    plane_ = s_.ih * s_.iw;
    image_blocks_ = (plane_ + kPixels - 1) / kPixels;
    blocks_ = s_.n * image_blocks_;
    panels_ = (s_.cout + kPanel - 1) / kPanel;
    // ONNX's weights [cout][cin] as panels [cout / 64][cin][64], zero-padded.
    const std::vector<float> w = onednn::constant_values(*graph.value(spec.anchor.w).constant);
    packed_ = aligned_floats(panels_storage_, panels_ * s_.cin * kPanel);
    for (int64_t o = 0; o < s_.cout; ++o) {
      float* column = packed_ + o / kPanel * s_.cin * kPanel + o % kPanel;
      for (int64_t k = 0; k < s_.cin; ++k) column[k * kPanel] = w[size_t(o * s_.cin + k)];
    }
    // A task: one panel for a range of pixel blocks (a chunk), chunk after
    // chunk, so a thread's tasks are its chunks' panels in turn; with one
    // thread, every block in one chunk (each panel streams from memory once).
    const int64_t threads = num_threads();
    const int64_t wanted = threads > 1 ? 2 * threads : 1;
    chunk_ = std::max<int64_t>(1, (blocks_ + wanted - 1) / wanted);
    chunks_ = (blocks_ + chunk_ - 1) / chunk_;
  }

  std::string implementation() const override { return "direct pointwise conv (channels-last)"; }
  std::vector<std::span<const std::byte>> weight_buffers() const override {
    return {std::as_bytes(std::span(packed_, size_t(panels_ * s_.cin * kPanel)))};
  }

 private:
  void compute(const float* x, const ChannelBlockedLayout& in, float* out) override {
    bias_.assign(size_t(panels_ * kPanel), 0.f);
    std::copy(epilogue_.biases(), epilogue_.biases() + s_.cout, bias_.begin());
    // The epilogue on each tile while it is in cache: over the tile's rows at
    // once (one panel), or per pixel and panel.
    // (Runtime operands are channels-last as the output: EfficientViT's
    // 128 -> 32 at 128x128 + residual Add took 1.97 ms with the Add applied
    // per pixel, 1.91 so.)
    const bool whole_rows = panels_ == 1 && epilogue_.without_channel_constants();
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
        for (int64_t b = b0; b < b1; ++b) {
          const int64_t image = b / image_blocks_, p0 = b % image_blocks_ * kPixels;
          const int64_t rows = std::min(kPixels, plane_ - p0), q = image * plane_ + p0;
          float* c = out + q * s_.cout + c0;
          const int64_t now = std::min(lines, per_block);
          const PixelRows a{x + in.offset + image * in.sn + p0 * in.sw, in.sw, in.channel, in.block,
                            in.sc};
          kTiles[relu_][vectors - 1](a, weights, s_.cin, bias_.data() + c0, c, s_.cout, rows, last, next, now);
          next += now * kLine, lines -= now;
          if (epilogue_.only_bias() || relu_) continue;
          if (whole_rows) {
            epilogue_.apply(c, q * s_.cout, 0, rows * s_.cout);
            continue;
          }
          for (int64_t r = 0; r < rows; ++r) {
            epilogue_.apply_columns(c + r * s_.cout, (q + r) * s_.cout + c0, c0, width);
          }
        }
      }
    });
  }

  int64_t plane_ = 0, image_blocks_ = 0, blocks_ = 0, panels_ = 0, chunk_ = 1, chunks_ = 1;
  std::vector<float> panels_storage_;
  float* packed_ = nullptr;  // the weights [panels][cin][kPanel], in panels_storage_
  std::vector<float> bias_;         // padded to whole panels
};

}  // namespace

bool channels_last_pointwise_shape(const ConvShape& s) {
  const bool one_by_one = s.kh == 1 && s.kw == 1 && s.ph == 0 && s.pw == 0 && s.oh == s.ih && s.ow == s.iw;
  return s.groups == 1 && one_by_one && s.sh == 1 && s.sw == 1;
}

std::unique_ptr<Kernel> make_channels_last_pointwise(const Graph& graph, const KernelGroup& group,
                                                     const LinearSpec& spec, const ConvShape& s) {
  return std::make_unique<ChannelsLastPointwiseKernel>(graph, group, spec, s);
}

}  // namespace direct

}  // namespace orchid::runtime::cpu
