// Depthwise convolutions channels-last (direct_channels_last.h): one input
// channel per output channel, whole vectors of channels, any kernel,
// stride, dilation and padding. oneDNN's depthwise kernel (brdgmm_dw) is at
// its bound without post-ops, but applies a GELU or SiLU post-op at 0.5-0.75
// ns per element (SegFormer's 128-channel 3x3 at 128x128 + GELU: 2.4-2.8 ms
// where its bytes need 1.15); here the epilogue runs on each tile while it
// is in L1, with Orchid's vectorized activations. The BLP chooses between
// the two by measurement.
//
// A tile is up to 4 consecutive output pixels (counted over the plane) by
// every channel, 4 vectors of 16 channels at a time: for each tap, the
// weight vectors times the pixels' input vectors. The pixels' addresses
// are set once per tile and tap, a pixel in the padding pointing at zeros.
// The weights are packed [channel vector][tap][16]. Four 128-channel 3x3
// convs + GELU at 128x128 (8 MB each) take 14.0-14.6 ms, oneDNN's 14.1-14.5
// (8 pixels x 2 vectors: 16.3-16.4; 14 x 1: 18.8-19.3; 2 x 8: 13.8-14.1, but
// channel counts under 128 then fall to one vector); 64 channels at 52x52 +
// SiLU 0.124-0.136 ms a conv, oneDNN's 0.118-0.119. The GELU (fast_math's
// erf, both of its polynomials for every lane) is about a fifth of it.
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
using simd::store;
using simd::Vec;

constexpr int64_t kMaxPixels = 4;  // pixels of a tile
constexpr int kVectors = 4;         // channel vectors of a tile: 16 accumulators

// V channel vectors (channels [c0, c0 + 16 V)) of R pixels: c[r] = bias +
// sum over taps of pixels[tap][r][c0..] w[tap]; rows (<= R) of them stored,
// pixels ldc apart. A pixel's V vectors are consecutive: reading whole runs
// of cache lines keeps the hardware prefetchers on (one vector of 14
// pixels per tile had read 14 lines 512 bytes apart per tap, and stalled).
template <int R, int V, bool Relu>
void tile(const float* const* pixels, int64_t taps, int64_t c0, const float* w, const float* bias, float* c,
          int64_t ldc, int64_t rows) {
  Vec acc[R][V];
  for (int v = 0; v < V; ++v) {
    const Vec b = load(bias + v * kLanes);
    for (int r = 0; r < R; ++r) acc[r][v] = b;
  }
  for (int64_t t = 0; t < taps; ++t) {
    const float* const* p = pixels + t * R;
    Vec wv[V];
    for (int v = 0; v < V; ++v) wv[v] = load(w + (v * taps + t) * kLanes);
    for (int r = 0; r < R; ++r) {
      const float* q = p[r] + c0;
      for (int v = 0; v < V; ++v) acc[r][v] += load(q + v * kLanes) * wv[v];
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int v = 0; v < V; ++v) {
      Vec x = acc[r][v];
      if (Relu) x = x > 0.f ? x : 0.f;
      store(c + r * ldc + v * kLanes, x);
    }
  }
}

class ChannelsLastDepthwiseKernel : public ChannelsLastConvKernel {
 public:
  ChannelsLastDepthwiseKernel(const Graph& graph, const KernelGroup& group, const LinearSpec& spec,
                              const ConvShape& s)
      : ChannelsLastConvKernel(graph, group, spec, s, [](const ChannelBlockedLayout& l, const ConvShape& shape) {
          return l.channels_last(shape.cin);
        }) {
    taps_ = s_.kh * s_.kw;
    // ONNX's [c][1][kh][kw] as [c / 16][tap][c % 16].
    const std::vector<float> w = onednn::constant_values(*graph.value(spec.anchor.w).constant);
    packed_ = aligned_floats(storage_, s_.cout * taps_);
    for (int64_t c = 0; c < s_.cout; ++c) {
      for (int64_t t = 0; t < taps_; ++t) {
        packed_[(c / kLanes * taps_ + t) * kLanes + c % kLanes] = w[size_t(c * taps_ + t)];
      }
    }
    zeros_.assign(size_t(s_.cin), 0.f);
  }

  std::string implementation() const override { return "direct depthwise conv (channels-last)"; }
  std::vector<std::span<const std::byte>> weight_buffers() const override {
    return {std::as_bytes(std::span(packed_, size_t(s_.cout * taps_)))};
  }

 private:
  void compute(const float* x, const ChannelBlockedLayout& in, float* out) override {
    const bool whole_rows = epilogue_.without_channel_constants();  // (operands channels-last, as the output)
    const int64_t plane = s_.oh * s_.ow, tiles = (plane + kMaxPixels - 1) / kMaxPixels;
    const int64_t tile_work = kMaxPixels * s_.cout * taps_;
    parallel_for(s_.n * tiles, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, tile_work)),
                 [&](int64_t begin, int64_t end) {
                   std::vector<const float*> pixels(size_t(taps_ * kMaxPixels));
                   for (int64_t task = begin; task < end; ++task) {
                     const int64_t n = task / tiles, q0 = task % tiles * kMaxPixels;
                     compute_tile(x, in, n, q0, std::min(kMaxPixels, plane - q0), out, pixels, whole_rows);
                   }
                 });
  }

  // Output pixels [q0, q0 + rows) of image n (flat over its rows), every channel.
  void compute_tile(const float* x, const ChannelBlockedLayout& in, int64_t n, int64_t q0, int64_t rows, float* out,
                    std::vector<const float*>& pixels, bool whole_rows) const {
    tap_pixels(s_, x + in.offset + n * in.sn, in.sw, zeros_.data(), q0, rows, kMaxPixels, pixels.data());
    const int64_t first = n * s_.oh * s_.ow + q0;  // the tile's first pixel in the output
    float* y = out + first * s_.cout;
    int64_t c0 = 0;
    for (; c0 + kVectors * kLanes <= s_.cout; c0 += kVectors * kLanes) {
      (relu_ ? tile<kMaxPixels, kVectors, true> : tile<kMaxPixels, kVectors, false>)(
          pixels.data(), taps_, c0, packed_ + c0 * taps_, epilogue_.biases() + c0, y + c0, s_.cout, rows);
    }
    for (; c0 < s_.cout; c0 += kLanes) {
      (relu_ ? tile<kMaxPixels, 1, true> : tile<kMaxPixels, 1, false>)(
          pixels.data(), taps_, c0, packed_ + c0 * taps_, epilogue_.biases() + c0, y + c0, s_.cout, rows);
    }
    if (epilogue_.only_bias() || relu_) return;
    if (whole_rows) {
      epilogue_.apply(y, first * s_.cout, 0, rows * s_.cout);
      return;
    }
    for (int64_t r = 0; r < rows; ++r) epilogue_.apply_columns(y + r * s_.cout, (first + r) * s_.cout, 0, s_.cout);
  }

  int64_t taps_ = 0;
  std::vector<float> storage_;
  float* packed_ = nullptr;  // the weights [c / 16][tap][16], in storage_
  std::vector<float> zeros_;
};

}  // namespace

bool channels_last_depthwise_shape(const ConvShape& s) {
  return s.groups > 1 && s.groups == s.cin && s.cout == s.cin && s.cin % kLanes == 0;
}

std::unique_ptr<Kernel> make_channels_last_depthwise(const Graph& graph, const KernelGroup& group,
                                                     const LinearSpec& spec, const ConvShape& s) {
  return std::make_unique<ChannelsLastDepthwiseKernel>(graph, group, spec, s);
}

}  // namespace orchid::runtime::cpu::direct
