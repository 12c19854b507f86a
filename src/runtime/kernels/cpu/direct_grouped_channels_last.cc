// Grouped convolutions whose groups have whole vectors of output channels
// (RegNet's groups of 16: 16 -> 16 channels, 3x3, stride 1 or 2), channels-last
// in and out (direct_channels_last.h): any kernel, stride, dilation and
// padding. oneDNN 2.6 runs them blocked by 16 channels at a third of the
// GEMM peak (RegNet-X's 112 -> 56 stride-2 layer: 0.47 ms, bound 0.15).
//
// A tile is up to 14 consecutive output pixels (of one row, or of several:
// they are counted over the whole plane) by one vector of 16 output
// channels of one group: for each tap, each of the group's input channels
// is one weight vector times the 14 pixels' values broadcast. The
// pixels' addresses are set per tap for all groups, a pixel in the padding
// pointing at zeros (a tap row entirely in the padding is skipped), so the
// borders cost what the interior does. The weights are packed [group][tap][input
// channel][output channels of the group]. A task is a tile's pixels for
// every group.
#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "runtime/kernels/cpu/direct_channels_last.h"
#include "runtime/kernels/cpu/simd.h"
#include "support/parallel.h"

namespace orchid::runtime::cpu::direct {

namespace {

using onednn::LinearSpec;
using simd::kLanes;
using simd::load;
using simd::splat;
using simd::store;
using simd::Vec;

constexpr int64_t kMaxPixels = 14;  // pixels of a tile: 14 accumulators

// One vector of output channels of R pixels: c[r] = bias + sum over taps and
// input channels of pixel[tap][r][channel + ci] w[tap][ci] (w rows `stride`
// apart per input channel), the taps whose pixels[tap] is empty skipped;
// rows (<= R) of them stored, pixel rows ldc apart. steps[tap]: see
// set_pixels.
template <int R, bool Relu, int Depth>
void tile(const float* const* pixels, const int64_t* steps, int64_t taps, int64_t channel, int64_t runtime_depth,
          const float* w, int64_t stride, const float* bias, float* c, int64_t ldc, int64_t rows) {
  constexpr int H = R / 2;
  const int64_t depth = Depth ? Depth : runtime_depth;
  Vec acc[R];
  const Vec b = load(bias);
  for (int r = 0; r < R; ++r) acc[r] = b;
  for (int64_t t = 0; t < taps; ++t) {
    const float* const* p = pixels + t * R;
    if (!p[0]) continue;
    const float* wt = w + t * depth * stride;
    if (const int64_t step = steps[t]) {
      // Each half evenly spaced (a row, or two rows of half a tile): two
      // pointers walk them, rather than R pointers the registers cannot hold.
      for (int64_t ci = 0; ci < depth; ++ci) {
        const Vec wv = load(wt + ci * stride);
        const float* q0 = p[0] + channel + ci;
        const float* q1 = p[H] + channel + ci;
        for (int r = 0; r < H; ++r, q0 += step, q1 += step) {
          acc[r] += splat(*q0) * wv;
          acc[H + r] += splat(*q1) * wv;
        }
      }
      continue;
    }
    for (int64_t ci = 0; ci < depth; ++ci) {
      const Vec wv = load(wt + ci * stride);
      for (int r = 0; r < R; ++r) acc[r] += splat(p[r][channel + ci]) * wv;
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    Vec v = acc[r];
    if (Relu) v = v > 0.f ? v : 0.f;
    store(c + r * ldc, v);
  }
}

using TileFn = void (*)(const float* const*, const int64_t*, int64_t, int64_t, int64_t, const float*, int64_t,
                        const float*, float*, int64_t, int64_t);
// [16 input channels per group (the sums unrolled) or any][with ReLU]
constexpr TileFn kTiles[2][2] = {{tile<kMaxPixels, false, 0>, tile<kMaxPixels, true, 0>},
                                 {tile<kMaxPixels, false, 16>, tile<kMaxPixels, true, 16>}};

class ChannelsLastGroupedKernel : public ChannelsLastConvKernel {
 public:
  ChannelsLastGroupedKernel(const Graph& graph, const KernelGroup& group, const LinearSpec& spec, const ConvShape& s)
      : ChannelsLastConvKernel(graph, group, spec, s, [](const ChannelBlockedLayout& l, const ConvShape& shape) {
          return l.channels_last(shape.cin);
        }) {
    cin_g_ = s_.cin / s_.groups, cout_g_ = s_.cout / s_.groups, taps_ = s_.kh * s_.kw;
    // ONNX's [cout][cin_g][kh][kw] as [group][tap][ci][cout_g].
    const std::vector<float> w = onednn::constant_values(*graph.value(spec.anchor.w).constant);
    packed_ = aligned_floats(storage_, s_.cout * cin_g_ * taps_);
    for (int64_t o = 0; o < s_.cout; ++o) {
      const int64_t g = o / cout_g_, j = o % cout_g_;
      for (int64_t ci = 0; ci < cin_g_; ++ci) {
        for (int64_t t = 0; t < taps_; ++t) {
          packed_[((g * taps_ + t) * cin_g_ + ci) * cout_g_ + j] = w[size_t((o * cin_g_ + ci) * taps_ + t)];
        }
      }
    }
    zeros_.assign(size_t(s_.cin), 0.f);
  }

  std::string implementation() const override { return "direct grouped conv (channels-last)"; }
  std::vector<std::span<const std::byte>> weight_buffers() const override {
    return {std::as_bytes(std::span(packed_, size_t(s_.cout * cin_g_ * taps_)))};
  }

 private:
  void compute(const float* x, const ChannelBlockedLayout& in, float* out) override {
    const bool whole_rows = epilogue_.without_channel_constants();  // (operands channels-last, as the output)
    const int64_t plane = s_.oh * s_.ow, tiles = (plane + kMaxPixels - 1) / kMaxPixels;
    const int64_t tile_flops = kMaxPixels * s_.cout * cin_g_ * taps_;
    parallel_for(s_.n * tiles, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, tile_flops)),
                 [&](int64_t begin, int64_t end) {
                   std::vector<const float*> pixels(size_t(taps_ * kMaxPixels));
                   std::vector<int64_t> steps(static_cast<size_t>(taps_));
                   for (int64_t task = begin; task < end; ++task) {
                     const int64_t n = task / tiles, q0 = task % tiles * kMaxPixels;
                     compute_tile(x, in, n, q0, std::min(kMaxPixels, plane - q0), out, pixels, steps, whole_rows);
                   }
                 });
  }

  // Output pixels [q0, q0 + rows) of image n (flat over its rows), every channel.
  void compute_tile(const float* x, const ChannelBlockedLayout& in, int64_t n, int64_t q0, int64_t rows, float* out,
                    std::vector<const float*>& pixels, std::vector<int64_t>& steps, bool whole_rows) const {
    set_pixels(x + in.offset + n * in.sn, in, q0, rows, pixels, steps);
    const int64_t first = n * s_.oh * s_.ow + q0;  // the tile's first pixel in the output
    float* y = out + first * s_.cout;
    for (int64_t g = 0; g < s_.groups; ++g) {
      const float* w = packed_ + g * taps_ * cin_g_ * cout_g_;
      for (int64_t v = 0; v < cout_g_; v += kLanes) {
        const int64_t c0 = g * cout_g_ + v;
        kTiles[cin_g_ == 16][relu_](pixels.data(), steps.data(), taps_, g * cin_g_, cin_g_, w + v, cout_g_, epilogue_.biases() + c0, y + c0,
                      s_.cout, rows);
      }
    }
    if (epilogue_.only_bias() || relu_) return;
    if (whole_rows) {
      epilogue_.apply(y, first * s_.cout, 0, rows * s_.cout);
      return;
    }
    for (int64_t r = 0; r < rows; ++r) {
      epilogue_.apply_columns(y + r * s_.cout, (first + r) * s_.cout, 0, s_.cout);
    }
  }

  // tap_pixels's pointers, the tap's first one null when all of them are
  // padding. steps[tap]: the distance between consecutive pixels when each
  // half of the tile is evenly spaced by it, else 0.
  void set_pixels(const float* image, const ChannelBlockedLayout& in, int64_t q0, int64_t rows,
                  std::vector<const float*>& pixels, std::vector<int64_t>& steps) const {
    tap_pixels(s_, image, in.sw, zeros_.data(), q0, rows, kMaxPixels, pixels.data());
    constexpr int64_t kHalf = kMaxPixels / 2;
    for (int64_t t = 0; t < taps_; ++t) {
      const float** p = pixels.data() + t * kMaxPixels;
      bool any = false;
      for (int64_t r = 0; r < kMaxPixels; ++r) any = any || p[r] != zeros_.data();
      const int64_t step = p[1] - p[0];
      bool even = step > 0;
      for (int64_t r = 1; r < kMaxPixels && even; ++r) even = r == kHalf || p[r] - p[r - 1] == step;
      steps[size_t(t)] = even ? step : 0;
      if (!any) p[0] = nullptr;
    }
  }

  int64_t cin_g_ = 0, cout_g_ = 0, taps_ = 0;
  std::vector<float> storage_;
  float* packed_ = nullptr;  // the weights [group][tap][ci][cout_g], in storage_
  std::vector<float> zeros_;
};

}  // namespace

bool channels_last_grouped_shape(const ConvShape& s) {
  return s.groups > 1 && s.cin % s.groups == 0 && s.cout % s.groups == 0 && s.cout / s.groups % kLanes == 0;
}

std::unique_ptr<Kernel> make_channels_last_grouped(const Graph& graph, const KernelGroup& group, const LinearSpec& spec,
                                                   const ConvShape& s) {
  return std::make_unique<ChannelsLastGroupedKernel>(graph, group, spec, s);
}

}  // namespace orchid::runtime::cpu::direct
