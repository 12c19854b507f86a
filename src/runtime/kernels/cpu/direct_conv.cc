#include "runtime/kernels/cpu/direct_conv.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/kernels/cpu/direct_gemm.h"
#include "runtime/kernels/cpu/direct_internal.h"
#include "runtime/kernels/cpu/linear_epilogue.h"
#include "runtime/kernels/cpu/simd.h"
#include "support/error.h"
#include "support/parallel.h"

namespace orchid::runtime::cpu {

namespace direct {

using onednn::LinearAnchor;
using onednn::LinearSpec;

using simd::kLanes;
using simd::load;
using simd::splat;
using simd::store;
using simd::Vec;

ConvShape conv_shape(const Graph& graph, const LinearAnchor& a) {
  const Shape& x = graph.type(a.x).shape;
  const Shape& w = graph.type(a.w).shape;
  ConvShape s;
  s.n = x[0], s.cin = x[1], s.ih = x[2], s.iw = x[3];
  s.cout = w[0], s.kh = w[2], s.kw = w[3];
  s.oh = a.dst[2], s.ow = a.dst[3];
  s.groups = a.groups;
  s.sh = a.strides[0], s.sw = a.strides[1];
  s.dh = a.dilations[0] + 1, s.dw = a.dilations[1] + 1;
  s.ph = a.pad_l[0], s.pw = a.pad_l[1];
  return s;
}

namespace {

// ---------------------------------------------------------------------------
// Depthwise, per output plane (batch item, channel), as one vectorized run
// over a flattened plane. The input plane, zero-padded, is split into its
// sh x sw phases: phase (a, b) holds rows a, a + sh, ... and columns b, b +
// sw, ... of the padded plane, each phase QH x QW. Output (oy, ox) of tap
// (ky, kx) reads phase ((ky dh) mod sh, (kx dw) mod sw) at (oy + ky dh / sh,
// ox + kx dw / sw): in a flattened phase, output index j = oy QW + ox reads
// j + a constant offset per tap. So every output is computed by the same
// loop over j (the columns from ow to QW of each row are computed and
// dropped), with no bounds tests. Without padding and stride the phase is the
// input plane itself, and with QW == ow the run writes the output directly.
// Large planes of stride 1 and "same" width skip the copies: the run goes
// over the unpadded input (output i reads input i + offset(tap)) in the
// rows where every tap row is inside, and the columns whose taps wrapped
// across a row's edge are computed again with each tap tested (1.4x faster
// than the copies at 128x128).
// The epilogue runs over the complete plane while it is in cache.
class DepthwiseConvKernel : public Kernel {
 public:
  DepthwiseConvKernel(const Graph& graph, const KernelGroup& group, const LinearSpec& spec, const ConvShape& s)
      : s_(s), weights_(onednn::constant_values(*graph.value(spec.anchor.w).constant)), epilogue_(graph, group, spec) {
    x_input_ = int(input_slot(group, spec.anchor.x));
    const int64_t shift_y = (s_.kh - 1) * s_.dh / s_.sh, shift_x = (s_.kw - 1) * s_.dw / s_.sw;
    qh_ = s_.oh + shift_y;
    qw_ = s_.ow + shift_x;
    for (int64_t ky = 0; ky < s_.kh; ++ky) {
      for (int64_t kx = 0; kx < s_.kw; ++kx) {
        const int64_t phase = (ky * s_.dh % s_.sh) * s_.sw + kx * s_.dw % s_.sw;
        tap_offset_.push_back(phase * qh_ * qw_ + (ky * s_.dh / s_.sh) * qw_ + kx * s_.dw / s_.sw);
      }
    }
    // The input plane is its own only phase when nothing is padded or strided.
    in_place_ = s_.sh == 1 && s_.sw == 1 && s_.ph == 0 && s_.pw == 0 && qw_ == s_.iw && qh_ <= s_.ih;
    unpadded_ = !in_place_ && s_.sh == 1 && s_.sw == 1 && s_.ow == s_.iw && s_.ow >= kUnpaddedWidth;
    if (unpadded_) plan_unpadded();
    by_two_ = s_.sh == 2 && s_.sw == 2 && s_.dh == 1 && s_.dw == 1;
    if (by_two_) {
      wide_ = (s_.ow + 4 * kLanes - 1) / (4 * kLanes) * (4 * kLanes);
      half_ = wide_ + s_.kw / 2 + 1;
    }
  }

  void run(const KernelArgs& args) override {
    const float* x = static_cast<const float*>(args.inputs[size_t(x_input_)]);
    float* y = static_cast<float*>(args.outputs[0]);
    epilogue_.bind(args);
    const int64_t planes = s_.n * s_.cout;
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, s_.oh * s_.ow * s_.kh * s_.kw));
    parallel_for(planes, grain, [&](int64_t begin, int64_t end) {
      thread_local Scratch scratch;
      for (int64_t plane = begin; plane < end; ++plane) compute_plane(x, y, plane, scratch);
    });
  }

  std::string implementation() const override { return "direct depthwise conv"; }
  std::vector<std::span<const std::byte>> weight_buffers() const override {
    return {std::as_bytes(std::span(weights_))};
  }
  bool reads_input_at_run(size_t input) const override {
    return int(input) == x_input_ || epilogue_.reads_input(input);
  }

 private:
  struct Scratch {
    std::vector<float> phases, out, even, odd;
    std::vector<const float*> taps;
    std::vector<float> padded, halves;  // stride 2: a padded input row; rows deinterleaved
    std::vector<int64_t> row_in_slot;
  };

  static constexpr int64_t kUnpaddedWidth = 100;

  void compute_plane(const float* x, float* y, int64_t plane, Scratch& scratch) const {
    const int64_t n = plane / s_.cout, c = plane % s_.cout;
    const int64_t ci = c / (s_.cout / s_.cin);
    const float* in = x + (n * s_.cin + ci) * s_.ih * s_.iw;
    if (unpadded_) return compute_unpadded(in, y, plane, scratch);
    if (by_two_) return compute_by_two(in, y, plane, scratch);
    const float* phases = in_place_ ? in : split_phases(in, scratch);
    scratch.taps.clear();
    for (int64_t off : tap_offset_) scratch.taps.push_back(phases + off);
    const int64_t out_plane = plane * s_.oh * s_.ow;
    float* out = y + out_plane;
    const bool direct = qw_ == s_.ow;
    // Into scratch, from phases of our own (with a vector of slack), the run
    // ends on a whole vector: no scalar tail.
    int64_t end = (s_.oh - 1) * qw_ + s_.ow;
    if (!direct && !in_place_) end = (end + kLanes - 1) / kLanes * kLanes;
    if (!direct) scratch.out.resize(size_t(std::max(s_.oh * qw_, end)));
    float* run = direct ? out : scratch.out.data();
    run_taps(run, scratch.taps.data(), weights_.data() + c * s_.kh * s_.kw, scratch.taps.size(), epilogue_.bias(c),
             0, end);
    if (!direct) {
      for (int64_t oy = 0; oy < s_.oh; ++oy) std::memcpy(out + oy * s_.ow, run + oy * qw_, size_t(s_.ow) * 4);
    }
    epilogue_.apply(out, out_plane, c, s_.oh * s_.ow);
  }

  // Stride 2 both ways, no dilation: output rows in order, each input row
  // deinterleaved once into its even and odd padded columns (a few KB, in
  // L1, kept while later output rows still read it). Output (oy, ox) of tap
  // (ky, kx) reads padded row 2 oy + ky at even[ox + kx / 2] for even kx,
  // odd[ox + kx / 2] for odd kx. The plane is read once, where the phases'
  // copies (split_phases_by_two) wrote it all again first: YOLOX-Nano's
  // 16-channel 208x208 stride-2 conv + SiLU took 0.39 ms so at 1 thread,
  // 0.29 by rows (ONNX Runtime's: 0.19). The taps' loop is run_taps's
  // with the tap pointers computed in place: run_taps over a per-row list
  // of them took 0.31-0.32 ms.
  void compute_by_two(const float* in, float* y, int64_t plane, Scratch& scratch) const {
    const int64_t c = plane % s_.cout;
    const float* w = weights_.data() + c * s_.kh * s_.kw;
    const float bias = epilogue_.bias(c);
    const int64_t slots = s_.kh + 2;  // any kh consecutive rows in distinct slots
    scratch.halves.resize(size_t(slots * 2 * half_));
    scratch.row_in_slot.assign(size_t(slots), -1);
    scratch.padded.resize(size_t(2 * half_));
    scratch.out.resize(size_t(wide_));
    scratch.taps.resize(size_t(s_.kh));
    const int64_t out_plane = plane * s_.oh * s_.ow;
    float* out = y + out_plane;
    for (int64_t oy = 0; oy < s_.oh; ++oy) {
      for (int64_t ky = 0; ky < s_.kh; ++ky) scratch.taps[size_t(ky)] = padded_row_halves(in, 2 * oy + ky, scratch);
      float* row = scratch.out.data();
      for (int64_t ox = 0; ox < wide_; ox += 4 * kLanes) {
        Vec a0 = splat(bias), a1 = a0, a2 = a0, a3 = a0;
        for (int64_t ky = 0; ky < s_.kh; ++ky) {
          const float* even = scratch.taps[size_t(ky)];
          if (!even) continue;
          for (int64_t kx = 0; kx < s_.kw; ++kx) {
            const Vec wk = splat(w[ky * s_.kw + kx]);
            const float* src = even + (kx % 2) * half_ + ox + kx / 2;
            a0 += wk * load(src);
            a1 += wk * load(src + kLanes);
            a2 += wk * load(src + 2 * kLanes);
            a3 += wk * load(src + 3 * kLanes);
          }
        }
        store(row + ox, a0);
        store(row + ox + kLanes, a1);
        store(row + ox + 2 * kLanes, a2);
        store(row + ox + 3 * kLanes, a3);
      }
      std::memcpy(out + oy * s_.ow, row, size_t(s_.ow) * sizeof(float));
    }
    epilogue_.apply(out, out_plane, c, s_.oh * s_.ow);
  }

  // Padded row r's even columns, its odd ones half_ floats after them;
  // nullptr for a row of the padding.
  const float* padded_row_halves(const float* in, int64_t r, Scratch& scratch) const {
    const int64_t iy = r - s_.ph;
    if (iy < 0 || iy >= s_.ih) return nullptr;
    const int64_t slot = r % (s_.kh + 2);
    float* halves = scratch.halves.data() + slot * 2 * half_;
    if (scratch.row_in_slot[size_t(slot)] == r) return halves;
    scratch.row_in_slot[size_t(slot)] = r;
    float* padded = scratch.padded.data();
    const int64_t width = 2 * half_;
    const int64_t first = std::min(s_.pw, width), count = std::clamp<int64_t>(width - s_.pw, 0, s_.iw);
    std::fill(padded, padded + first, 0.f);
    std::memcpy(padded + first, in + iy * s_.iw, size_t(count) * sizeof(float));
    std::fill(padded + first + count, padded + width, 0.f);
    deinterleave(padded, width, halves, halves + half_);
    return halves;
  }

  // Stride 1, output as wide as the input: the run over the unpadded plane.
  void plan_unpadded() {
    row_lo_ = std::min(s_.oh, s_.ph);
    row_hi_ = std::max(row_lo_, std::min(s_.oh, s_.ih - (s_.kh - 1) * s_.dh + s_.ph));
    int64_t lowest = 0, highest = 0;
    lo_ = 0, hi_ = s_.ow;
    for (int64_t kx = 0; kx < s_.kw; ++kx) {
      const int64_t off = kx * s_.dw - s_.pw;
      lo_ = std::max(lo_, -off);
      hi_ = std::min(hi_, s_.iw - off);
    }
    hi_ = std::max(hi_, lo_);
    for (int64_t ky = 0; ky < s_.kh; ++ky) {
      for (int64_t kx = 0; kx < s_.kw; ++kx) {
        const int64_t off = (ky * s_.dh - s_.ph) * s_.iw + kx * s_.dw - s_.pw;
        unpadded_offset_.push_back(off);
        lowest = std::min(lowest, off);
        highest = std::max(highest, off);
      }
    }
    // Within those rows, the elements whose every read is inside the plane.
    run_begin_ = std::max(row_lo_ * s_.ow, -lowest);
    run_end_ = std::max(run_begin_, std::min(row_hi_ * s_.ow, s_.ih * s_.iw - highest));
  }

  void compute_unpadded(const float* in, float* y, int64_t plane, Scratch& scratch) const {
    const int64_t c = plane % s_.cout;
    const float* w = weights_.data() + c * s_.kh * s_.kw;
    const int64_t out_plane = plane * s_.oh * s_.ow;
    float* out = y + out_plane;
    const float bias = epilogue_.bias(c);
    scratch.taps.clear();
    for (int64_t off : unpadded_offset_) scratch.taps.push_back(in + off);
    run_taps(out, scratch.taps.data(), w, scratch.taps.size(), bias, run_begin_, run_end_);
    for (int64_t oy = 0; oy < s_.oh; ++oy) {
      float* row = out + oy * s_.ow;
      // What the run got wrong (taps across the row's edges) or left out.
      const int64_t first = std::clamp(run_begin_ - oy * s_.ow, int64_t(0), s_.ow);
      const int64_t last = std::clamp(run_end_ - oy * s_.ow, first, s_.ow);
      if (first == last) {
        border(row, in, w, oy, bias, 0, s_.ow);
      } else {
        border(row, in, w, oy, bias, 0, std::max(first, std::min(lo_, last)));
        border(row, in, w, oy, bias, std::min(last, std::max(hi_, first)), s_.ow);
      }
    }
    epilogue_.apply(out, out_plane, c, s_.oh * s_.ow);
  }

  // Columns [begin, end) of output row oy, each tap tested.
  void border(float* row, const float* in, const float* w, int64_t oy, float bias, int64_t begin,
              int64_t end) const {
    for (int64_t ox = begin; ox < end; ++ox) {
      float a = bias;
      for (int64_t ky = 0; ky < s_.kh; ++ky) {
        const int64_t iy = oy * s_.sh + ky * s_.dh - s_.ph;
        if (iy < 0 || iy >= s_.ih) continue;
        for (int64_t kx = 0; kx < s_.kw; ++kx) {
          const int64_t ix = ox * s_.sw + kx * s_.dw - s_.pw;
          if (ix >= 0 && ix < s_.iw) a += w[ky * s_.kw + kx] * in[iy * s_.iw + ix];
        }
      }
      row[ox] = a;
    }
  }

  // The padded plane's sh x sw phases, each QH x QW (zeros outside the input).
  const float* split_phases(const float* in, Scratch& scratch) const {
    std::vector<float>& phases = scratch.phases;
    phases.resize(size_t(s_.sh * s_.sw * qh_ * qw_ + kLanes));
    if (s_.sw == 2) return split_phases_by_two(in, scratch);
    float* dst = phases.data();
    for (int64_t a = 0; a < s_.sh; ++a) {
      for (int64_t b = 0; b < s_.sw; ++b) {
        // Columns c with input column c sw + b - pw in [0, iw): [c0, c1).
        const int64_t c0 = std::min(qw_, std::max<int64_t>(0, (s_.pw - b + s_.sw - 1) / s_.sw));
        const int64_t c1 = std::max(c0, std::min(qw_, (s_.iw + s_.pw - b + s_.sw - 1) / s_.sw));
        for (int64_t r = 0; r < qh_; ++r, dst += qw_) {
          const int64_t iy = r * s_.sh + a - s_.ph;
          phase_row(dst, iy >= 0 && iy < s_.ih, c0, c1, [&](float* out) {
            const float* src = in + iy * s_.iw + c0 * s_.sw + b - s_.pw;
            if (s_.sw == 1) {
              std::memcpy(out, src, size_t(c1 - c0) * 4);
            } else {
              for (int64_t c = 0; c < c1 - c0; ++c) out[c] = src[c * s_.sw];
            }
          });
        }
      }
    }
    return phases.data();
  }

  // The same for column stride 2: each input row is split into its even and
  // odd columns once, by vector shuffles (the general strided copy was most
  // of a stride-2 conv's time on 256x256 planes), then copied to its phases.
  const float* split_phases_by_two(const float* in, Scratch& scratch) const {
    const int64_t half = (s_.iw + 1) / 2;
    scratch.even.resize(size_t(half));
    scratch.odd.resize(size_t(half));
    for (int64_t r = 0; r < qh_; ++r) {  // input rows in order
      for (int64_t a = 0; a < s_.sh; ++a) {
        const int64_t iy = r * s_.sh + a - s_.ph;
        if (iy >= 0 && iy < s_.ih) deinterleave(in + iy * s_.iw, s_.iw, scratch.even.data(), scratch.odd.data());
        for (int64_t b = 0; b < 2; ++b) {
          float* dst = scratch.phases.data() + ((a * 2 + b) * qh_ + r) * qw_;
          // Input column 2c + q, q = b - pw: even[c + t] for q = 2t, odd[c + t] for q = 2t + 1.
          const int64_t q = b - s_.pw;
          const int64_t t = q >= 0 ? q / 2 : -((-q + 1) / 2);
          const float* half_row = q - 2 * t == 0 ? scratch.even.data() : scratch.odd.data();
          const int64_t count = q - 2 * t == 0 ? half : s_.iw / 2;  // even or odd columns in the row
          const int64_t c0 = std::clamp<int64_t>(-t, 0, qw_), c1 = std::clamp<int64_t>(count - t, c0, qw_);
          phase_row(dst, iy >= 0 && iy < s_.ih, c0, c1,
                    [&](float* out) { std::memcpy(out, half_row + c0 + t, size_t(c1 - c0) * 4); });
        }
      }
    }
    return scratch.phases.data();
  }

  // One row of a phase: zeros outside columns [c0, c1), which `copy`
  // fills (given the row at c0); all zeros for a row outside the input.
  template <typename Copy>
  void phase_row(float* dst, bool inside, int64_t c0, int64_t c1, Copy copy) const {
    if (!inside || c0 == c1) {
      std::fill(dst, dst + qw_, 0.f);
      return;
    }
    std::fill(dst, dst + c0, 0.f);
    copy(dst + c0);
    std::fill(dst + c1, dst + qw_, 0.f);
  }

  // even[j] = row[2j], odd[j] = row[2j + 1].
  static void deinterleave(const float* row, int64_t n, float* even, float* odd) {
    int64_t j = 0;
    for (; 2 * j + 2 * kLanes <= n; j += kLanes) {
      const Vec lo = load(row + 2 * j), hi = load(row + 2 * j + kLanes);
      store(even + j, __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30));
      store(odd + j, __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31));
    }
    for (; 2 * j < n; ++j) {
      even[j] = row[2 * j];
      if (2 * j + 1 < n) odd[j] = row[2 * j + 1];
    }
  }

  // out[i] = bias + sum_k wt[k] t[k][i] for i in [begin, end).
  static void run_taps(float* out, const float* const* t, const float* wt, size_t count, float bias, int64_t begin,
                       int64_t end) {
    int64_t i = begin;
    for (; i + 4 * kLanes <= end; i += 4 * kLanes) {
      Vec a0 = splat(bias), a1 = a0, a2 = a0, a3 = a0;
      for (size_t k = 0; k < count; ++k) {
        const Vec wk = splat(wt[k]);
        const float* src = t[k] + i;
        a0 += wk * load(src);
        a1 += wk * load(src + kLanes);
        a2 += wk * load(src + 2 * kLanes);
        a3 += wk * load(src + 3 * kLanes);
      }
      store(out + i, a0);
      store(out + i + kLanes, a1);
      store(out + i + 2 * kLanes, a2);
      store(out + i + 3 * kLanes, a3);
    }
    for (; i + kLanes <= end; i += kLanes) {
      Vec a = splat(bias);
      for (size_t k = 0; k < count; ++k) a += splat(wt[k]) * load(t[k] + i);
      store(out + i, a);
    }
    for (; i < end; ++i) {
      float a = bias;
      for (size_t k = 0; k < count; ++k) a += wt[k] * t[k][i];
      out[i] = a;
    }
  }

  ConvShape s_;
  std::vector<float> weights_;
  LinearEpilogue epilogue_;
  int x_input_ = -1;
  int64_t qh_ = 0, qw_ = 0;          // a phase's rows and columns
  std::vector<int64_t> tap_offset_;  // per tap (ky, kx): where it reads, from the output index
  bool in_place_ = false;
  bool by_two_ = false;        // stride 2, no dilation: compute_by_two
  int64_t wide_ = 0, half_ = 0;  // its output rows rounded up to 4 vectors; a deinterleaved half row
  // The unpadded run: its rows, interior columns, range and tap offsets.
  bool unpadded_ = false;
  int64_t row_lo_ = 0, row_hi_ = 0, lo_ = 0, hi_ = 0, run_begin_ = 0, run_end_ = 0;
  std::vector<int64_t> unpadded_offset_;
};

}  // namespace

std::unique_ptr<Kernel> make_depthwise(const Graph& graph, const KernelGroup& group, const LinearSpec& spec,
                                       const ConvShape& s) {
  return std::make_unique<DepthwiseConvKernel>(graph, group, spec, s);
}

namespace {

// Which direct kernel computes a conv of this shape, if any.
enum class Form { None, Depthwise, Pointwise, Dense };

// Dense convs with longer sums are left to oneDNN (its blocked GEMM wins
// there, and measuring a slow alternative costs compile time).
constexpr int64_t kMaxDenseDepth = 2048;

// One input channel is both depthwise and dense; as a GEMM the input plane
// is prepared once for all output channels (depthwise: once per channel).
// Grouped convs (several channels per group) are dense per group.
Form form_of(const ConvShape& s) {
  const bool depthwise = s.groups == s.cin && s.cout % s.cin == 0;
  if (s.sh != 1 || s.sw != 1 || (depthwise && s.cin > 1)) return depthwise ? Form::Depthwise : Form::None;
  const bool one_by_one = s.kh == 1 && s.kw == 1 && s.ph == 0 && s.pw == 0 && s.oh == s.ih && s.ow == s.iw;
  if (s.groups == 1 && one_by_one) return Form::Pointwise;
  if (s.cin % s.groups == 0 && s.cout % s.groups == 0 && s.cin / s.groups * s.kh * s.kw <= kMaxDenseDepth) {
    return Form::Dense;
  }
  return depthwise ? Form::Depthwise : Form::None;
}

}  // namespace

}  // namespace direct

namespace direct {

bool operands_supported(const Graph& graph, const onednn::LinearSpec& spec) {
  const onednn::LinearAnchor& a = spec.anchor;
  if (a.kind == onednn::LinearKind::MatMul || a.src.size() != 4 || !graph.value(a.w).is_constant()) return false;
  if (!graph.value(a.w).constant->defined() || graph.type(a.w).rank() != 4) return false;
  if (spec.out_type.dtype != DType::Float32 || graph.type(a.x).dtype != DType::Float32) return false;
  return std::all_of(spec.epilogues.begin(), spec.epilogues.end(), epilogue_supported);
}

}  // namespace direct

bool direct_conv_supported(const Graph& graph, const onednn::LinearSpec& spec) {
  const onednn::LinearAnchor& a = spec.anchor;
  if (!direct::operands_supported(graph, spec)) return false;
  if (a.kind == onednn::LinearKind::ConvTranspose) {
    // One group, a phase's sum at most as long as a dense conv's, and at
    // least a register tile of output channels (FSRCNN's 56 -> 1 at 256x256
    // ran 65 ms, GEMM + col2im 7).
    const Shape& w = graph.type(a.w).shape;
    const int64_t taps = (w[2] + a.strides[0] - 1) / a.strides[0] * ((w[3] + a.strides[1] - 1) / a.strides[1]);
    return a.groups == 1 && a.src[1] * taps <= direct::kMaxDenseDepth && a.dst[1] >= direct::kRows;
  }
  return direct::form_of(direct::conv_shape(graph, a)) != direct::Form::None;
}

std::unique_ptr<Kernel> make_direct_conv_kernel(const Graph& graph, const KernelGroup& group,
                                                const onednn::LinearSpec& spec) {
  if (!direct_conv_supported(graph, spec)) return nullptr;
  if (spec.anchor.kind == onednn::LinearKind::ConvTranspose) return direct::make_conv_transpose(graph, group, spec);
  const direct::ConvShape s = direct::conv_shape(graph, spec.anchor);
  switch (direct::form_of(s)) {
    case direct::Form::Depthwise: return direct::make_depthwise(graph, group, spec, s);
    case direct::Form::Pointwise: return direct::make_pointwise(graph, group, spec, s);
    case direct::Form::Dense: return direct::make_dense(graph, group, spec, s);
    case direct::Form::None: break;
  }
  return nullptr;
}

}  // namespace orchid::runtime::cpu
