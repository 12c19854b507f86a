// ConvTranspose (2-D, one group) split by output phase, each phase an
// implicit GEMM like the dense direct conv's: output (oy, ox) = (ay + sh r,
// ax + sw c) receives the taps ky with (ay + ph - ky dh) divisible by sh,
// from input row r + ty(ky), ty = (ay + ph - ky dh) / sh (and likewise for
// columns), so phase (ay, ax) is a small conv of the input with those taps:
// K = cin x its taps, each (ci, ky, kx) a B row that is the zero-padded
// input plane shifted by a constant. No column buffer (GEMM + col2im wrote
// and read cout kh kw floats per input position) and no scattered adds.
// Each phase's flat result is interleaved into the output (stride sw), then
// the epilogue runs per channel plane.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/kernels/cpu/direct_gemm.h"
#include "runtime/kernels/cpu/direct_internal.h"
#include "runtime/kernels/cpu/linear_epilogue.h"
#include "support/parallel.h"

namespace orchid::runtime::cpu::direct {

namespace {

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

struct Phase {
  int64_t ay = 0, ax = 0;     // its first output row and column
  int64_t rows = 0, cols = 0;  // its output rows and columns
  int64_t flat = 0;           // its flattened length: (rows - 1) QW + cols
  PackedWeights weights;      // [cout][cin x taps]
  std::vector<int64_t> tap_offset;  // per (ci, tap): the B row's start in the padded planes
  std::vector<float> out;           // its GEMM's result, [cout][flat]
};

class ConvTransposeKernel : public Kernel {
 public:
  ConvTransposeKernel(const Graph& graph, const KernelGroup& group, const onednn::LinearSpec& spec)
      : epilogue_(graph, group, spec) {
    const onednn::LinearAnchor& a = spec.anchor;
    const Shape& w = graph.type(a.w).shape;  // [cin, cout, kh, kw]
    s_.n = a.src[0], s_.cin = a.src[1], s_.ih = a.src[2], s_.iw = a.src[3];
    s_.cout = a.dst[1], s_.oh = a.dst[2], s_.ow = a.dst[3];
    s_.kh = w[2], s_.kw = w[3];
    s_.sh = a.strides[0], s_.sw = a.strides[1];
    s_.dh = a.dilations[0] + 1, s_.dw = a.dilations[1] + 1;
    s_.ph = a.pad_l[0], s_.pw = a.pad_l[1];
    x_input_ = int(input_slot(group, a.x));
    plan(onednn::constant_values(*graph.value(a.w).constant));
  }

  void run(const KernelArgs& args) override {
    const float* x = static_cast<const float*>(args.inputs[size_t(x_input_)]);
    float* y = static_cast<float*>(args.outputs[0]);
    epilogue_.bind(args);
    padded_.resize(size_t(s_.cin * qh_ * qw_));
    const int64_t plane = s_.oh * s_.ow;
    for (int64_t n = 0; n < s_.n; ++n) {
      pad_planes(x + n * s_.cin * s_.ih * s_.iw, s_.cin, s_.ih, s_.iw, top_, left_, qh_, qw_, padded_.data());
      for (Phase& phase : phases_) multiply(phase);
      float* yn = y + n * s_.cout * plane;
      parallel_for(s_.cout, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, plane)), [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
          for (const Phase& phase : phases_) interleave(phase, c, yn + c * plane);
          epilogue_.apply(yn + c * plane, (n * s_.cout + c) * plane, c, plane);
        }
      });
    }
  }

  std::string implementation() const override { return "direct deconv (phases)"; }
  bool reads_input_at_run(size_t input) const override {
    return int(input) == x_input_ || epilogue_.reads_input(input);
  }

 private:
  // The phases, their taps, the padding that keeps every read inside.
  void plan(const std::vector<float>& w) {
    struct Taps {
      std::vector<int64_t> k, shift;  // tap and its input shift
    };
    auto taps = [](int64_t a, int64_t p, int64_t k, int64_t d, int64_t s) {
      Taps t;
      for (int64_t i = 0; i < k; ++i) {
        const int64_t num = a + p - i * d;
        if (num - floor_div(num, s) * s == 0) t.k.push_back(i), t.shift.push_back(floor_div(num, s));
      }
      return t;
    };
    int64_t top = 0, left = 0, bottom = 0, right = 0;  // padding around the input plane
    std::vector<std::pair<Taps, Taps>> phase_taps;
    for (int64_t ay = 0; ay < std::min(s_.sh, s_.oh); ++ay) {
      for (int64_t ax = 0; ax < std::min(s_.sw, s_.ow); ++ax) {
        Phase phase;
        phase.ay = ay, phase.ax = ax;
        phase.rows = (s_.oh - ay + s_.sh - 1) / s_.sh;
        phase.cols = (s_.ow - ax + s_.sw - 1) / s_.sw;
        Taps ty = taps(ay, s_.ph, s_.kh, s_.dh, s_.sh), tx = taps(ax, s_.pw, s_.kw, s_.dw, s_.sw);
        for (int64_t t : ty.shift) top = std::max(top, -t), bottom = std::max(bottom, phase.rows - 1 + t - (s_.ih - 1));
        for (int64_t t : tx.shift) left = std::max(left, -t), right = std::max(right, phase.cols - 1 + t - (s_.iw - 1));
        phases_.push_back(std::move(phase));
        phase_taps.emplace_back(std::move(ty), std::move(tx));
      }
    }
    top_ = top, left_ = left;
    qh_ = s_.ih + top + bottom;
    qw_ = s_.iw + left + right;
    for (size_t i = 0; i < phases_.size(); ++i) {
      Phase& phase = phases_[i];
      const auto& [ty, tx] = phase_taps[i];
      phase.flat = (phase.rows - 1) * qw_ + phase.cols;
      const int64_t depth = s_.cin * int64_t(ty.k.size() * tx.k.size());
      std::vector<float> a(size_t(s_.cout * depth));
      for (int64_t co = 0; co < s_.cout; ++co) {
        int64_t k = 0;
        for (int64_t ci = 0; ci < s_.cin; ++ci) {
          for (size_t y = 0; y < ty.k.size(); ++y) {
            for (size_t x = 0; x < tx.k.size(); ++x, ++k) {
              a[size_t(co * depth + k)] = w[size_t(((ci * s_.cout + co) * s_.kh + ty.k[y]) * s_.kw + tx.k[x])];
            }
          }
        }
      }
      for (int64_t ci = 0; ci < s_.cin; ++ci) {
        for (int64_t sy : ty.shift) {
          for (int64_t sx : tx.shift) phase.tap_offset.push_back(ci * qh_ * qw_ + (sy + top) * qw_ + sx + left);
        }
      }
      phase.weights = PackedWeights(a.data(), s_.cout, depth);
      phase.out.resize(size_t(s_.cout * phase.flat));
    }
  }

  // The phase's GEMM over column panels of its flattened output.
  void multiply(Phase& phase) {
    float* out = phase.out.data();
    const int64_t panels = (phase.flat + kCols - 1) / kCols;
    const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, kCols * s_.cout * phase.weights.depth()));
    parallel_for(panels, grain, [&](int64_t begin, int64_t end) {
      thread_local std::vector<const float*> rows;
      rows.resize(phase.tap_offset.size());
      for (int64_t panel = begin; panel < end; ++panel) {
        const int64_t j = panel * kCols;
        for (size_t k = 0; k < rows.size(); ++k) rows[k] = padded_.data() + phase.tap_offset[k] + j;
        phase.weights.multiply(rows.data(), std::min(kCols, phase.flat - j), out + j, phase.flat, 0, s_.cout,
                               epilogue_.biases());
      }
    });
  }

  // The phase's outputs of channel c into its places of the output plane.
  void interleave(const Phase& phase, int64_t c, float* out) const {
    const float* src = phase.out.data() + c * phase.flat;
    for (int64_t r = 0; r < phase.rows; ++r) {
      float* row = out + (phase.ay + r * s_.sh) * s_.ow + phase.ax;
      const float* from = src + r * qw_;
      if (s_.sw == 1) {
        std::memcpy(row, from, size_t(phase.cols) * 4);
      } else {
        for (int64_t col = 0; col < phase.cols; ++col) row[col * s_.sw] = from[col];
      }
    }
  }

  ConvShape s_;
  LinearEpilogue epilogue_;
  int x_input_ = -1;
  std::vector<Phase> phases_;
  int64_t qh_ = 0, qw_ = 0, top_ = 0, left_ = 0;
  std::vector<float> padded_;
};

}  // namespace

std::unique_ptr<Kernel> make_conv_transpose(const Graph& graph, const KernelGroup& group,
                                            const onednn::LinearSpec& spec) {
  return std::make_unique<ConvTransposeKernel>(graph, group, spec);
}

}  // namespace orchid::runtime::cpu::direct
